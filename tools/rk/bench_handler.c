/* rk bench kernel --handler FILE.c: the kernel group's measurements on the
 * user's own DSL handler. Rows: throughput in batches of 256 (msg/s and
 * bytes/s), round trip one at a time (p50/p99), and rk_kernel_call from 1
 * and 4 client threads (per-call p50/p99, total rate), with the kernel's
 * own sampled latency in the notes.
 *
 * Requests come from --requests FILE (raw requests, message_size bytes
 * each, used in turn: write them with any program, e.g. one that includes
 * the `rk header` of the handler), else request i is zero but for i in its
 * first (up to 8) bytes. Replies are not checked (the handler is the
 * user's); handler failures (negative returns) are counted in the notes. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_report.h"
#include "cli.h"
#include "handler_file.h"
#include "ringkernel/ringkernel.h"

enum { BATCH = 256, CLIENTS_MAX = 4 };

typedef struct handler_bench {
    const char *file, *name;
    uint32_t message_size, reply_size;
    unsigned char *requests; /* count requests of message_size bytes */
    size_t count;
} handler_bench;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static const void *request(const handler_bench *h, uint64_t i) {
    return h->requests + (size_t)(i % h->count) * h->message_size;
}

static int compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void percentiles(bench_row *row, uint64_t *ns, size_t n) {
    qsort(ns, n, sizeof *ns, compare_u64);
    row->p50_us = (double)ns[n / 2] / 1e3;
    row->p99_us = (double)ns[n * 99 / 100] / 1e3;
}

static rk_status launch(rk_runtime *rt, const handler_bench *h, rk_kernel **k) {
    rk_kernel_desc d = {.name = h->name, .handler_file = h->file, .handler_name = h->name, .queue_capacity = 4096};
    rk_status s = rk_kernel_launch(rt, &d, k);
    if (s == RK_OK) s = rk_kernel_activate(*k);
    return s;
}

/* Adds the kernel's sampled latency and handler failures to the note. */
static void note_stats(rk_kernel *k, bench_row *row, uint64_t failed) {
    rk_kernel_stats st;
    int n = 0;
    if (rk_kernel_stats_get(k, &st) == RK_OK && st.latency_samples)
        n = snprintf(row->note, sizeof row->note, "kernel stats p50 %.1f us, p99 %.1f us; ",
                     (double)st.latency_p50_ns / 1e3, (double)st.latency_p99_ns / 1e3);
    snprintf(row->note + n, sizeof row->note - (size_t)n, "%llu handler failures", (unsigned long long)failed);
}

static rk_status throughput(rk_runtime *rt, const handler_bench *h, uint64_t messages, bench_row *row) {
    rk_kernel *k = NULL;
    rk_status s = launch(rt, h, &k);
    unsigned char *out = malloc((size_t)BATCH * (h->reply_size ? h->reply_size : 1));
    unsigned char *in = malloc((size_t)BATCH * h->message_size);
    rk_reply_info *infos = malloc(BATCH * sizeof *infos);
    if (s == RK_OK && (!out || !in || !infos)) s = RK_OUT_OF_MEMORY;
    uint64_t sent = 0, got = 0, failed = 0, t0 = now_ns();
    while (s == RK_OK && got < messages) {
        size_t n = messages - sent < BATCH ? (size_t)(messages - sent) : BATCH, accepted = 0, received = 0;
        for (size_t i = 0; i < n; i++) memcpy(in + i * h->message_size, request(h, sent + i), h->message_size);
        if (n) s = rk_kernel_send_batch(k, in, h->message_size, n, RK_NO_WAIT, &accepted, NULL);
        if (s == RK_WOULD_BLOCK || s == RK_TIMEOUT) s = RK_OK;
        sent += accepted;
        if (s == RK_OK)
            s = rk_kernel_receive_batch(k, out, h->reply_size ? h->reply_size : 1, infos, BATCH,
                                        accepted ? RK_NO_WAIT : 10000000000u, &received);
        if (s == RK_WOULD_BLOCK) s = RK_OK;
        for (size_t i = 0; i < received; i++) failed += infos[i].status != 0;
        got += received;
    }
    if (s == RK_OK) {
        row->messages = got;
        row->seconds = (double)(now_ns() - t0) / 1e9;
        row->rate = (double)got / row->seconds;
        row->bytes_per_second = row->rate * h->message_size;
        note_stats(k, row, failed);
    }
    free(out), free(in), free(infos);
    if (k) rk_kernel_destroy(k);
    return s;
}

static rk_status round_trip(rk_runtime *rt, const handler_bench *h, uint64_t messages, bench_row *row) {
    rk_kernel *k = NULL;
    rk_status s = launch(rt, h, &k);
    uint64_t *ns = malloc(messages * sizeof *ns);
    unsigned char *out = malloc(h->reply_size ? h->reply_size : 1);
    if (s == RK_OK && (!ns || !out)) s = RK_OUT_OF_MEMORY;
    uint64_t failed = 0, t0 = now_ns();
    for (uint64_t i = 0; s == RK_OK && i < messages; i++) {
        rk_reply_info info;
        uint64_t t = now_ns();
        s = rk_kernel_send(k, request(h, i), h->message_size, 10000000000u, NULL);
        if (s == RK_OK) s = rk_kernel_receive(k, out, h->reply_size ? h->reply_size : 1, &info, 10000000000u);
        ns[i] = now_ns() - t;
        failed += s == RK_OK && info.status != 0;
    }
    if (s == RK_OK) {
        row->messages = messages;
        row->seconds = (double)(now_ns() - t0) / 1e9;
        row->rate = (double)messages / row->seconds;
        percentiles(row, ns, messages);
        note_stats(k, row, failed);
    }
    free(ns), free(out);
    if (k) rk_kernel_destroy(k);
    return s;
}

typedef struct caller {
    rk_kernel *k;
    const handler_bench *h;
    uint64_t first, calls, failed;
    uint64_t *ns;
    rk_status status;
    _Atomic int *go;
} caller;

static void *caller_main(void *arg) {
    caller *c = arg;
    unsigned char out[65536];
    while (atomic_load(c->go) == 0) sched_yield();
    for (uint64_t i = 0; i < c->calls && atomic_load(c->go) > 0; i++) {
        rk_reply_info info;
        uint64_t t = now_ns();
        rk_status s = rk_kernel_call(c->k, request(c->h, c->first + i), c->h->message_size, out, sizeof out, &info,
                                     10000000000u);
        c->ns[i] = now_ns() - t;
        if (s != RK_OK) {
            c->status = s;
            return NULL;
        }
        c->failed += info.status != 0;
    }
    return NULL;
}

static rk_status calls(rk_runtime *rt, const handler_bench *h, uint32_t threads, uint64_t total, bench_row *row) {
    rk_kernel *k = NULL;
    rk_status s = launch(rt, h, &k);
    if (s != RK_OK) return s;
    uint64_t per = total / threads;
    uint64_t *ns = malloc((size_t)(per * threads) * sizeof *ns);
    caller cs[CLIENTS_MAX];
    pthread_t tids[CLIENTS_MAX];
    _Atomic int go = 0;
    uint32_t started = 0;
    for (; ns && started < threads; started++) {
        cs[started] = (caller){.k = k, .h = h, .first = started * per, .calls = per, .ns = ns + started * per, .go = &go};
        if (pthread_create(&tids[started], NULL, caller_main, &cs[started]) != 0) break;
    }
    if (started < threads) s = ns ? RK_IO_ERROR : RK_OUT_OF_MEMORY;
    uint64_t t0 = now_ns();
    atomic_store(&go, s == RK_OK ? 1 : -1);
    for (uint32_t t = 0; t < started; t++) pthread_join(tids[t], NULL);
    uint64_t wall = now_ns() - t0, failed = 0;
    for (uint32_t t = 0; t < started; t++) {
        failed += cs[t].failed;
        if (cs[t].status != RK_OK) s = cs[t].status;
    }
    if (s == RK_OK) {
        row->messages = per * threads;
        row->seconds = (double)wall / 1e9;
        row->rate = (double)row->messages / row->seconds;
        percentiles(row, ns, (size_t)(per * threads));
        note_stats(k, row, failed);
    }
    free(ns);
    rk_kernel_destroy(k);
    return s;
}

/* The handler's name and sizes, read from the file as the launch reads it. */
static int inspect(handler_bench *h) {
    char *text = handler_read("bench", h->file);
    if (!text) return RK_EXIT_FAILURE;
    handler_options o;
    memset(&o, 0, sizeof o);
    rk_transpile_result *r = NULL;
    rk_status s = handler_transpile(h->file, text, &o, RK_TARGET_CUDA, &r);
    int rc = RK_EXIT_OK;
    const rk_transpiled_kernel *found = NULL;
    for (size_t i = 0; s == RK_OK && i < rk_transpile_kernel_count(r); i++) {
        const rk_transpiled_kernel *k = rk_transpile_kernel(r, i);
        if (k->kind == RK_TRANSPILE_HANDLER && !found && (!h->name || strcmp(k->name, h->name) == 0)) found = k;
    }
    if (s != RK_OK) {
        fprintf(stderr, "rk bench: %s", r ? rk_transpile_diagnostics_text(r) : rk_last_error());
        rc = RK_EXIT_FAILURE;
    } else if (!found) {
        fprintf(stderr, "rk bench: %s has no RK_HANDLER%s%s\n", h->file, h->name ? " named " : "", h->name ? h->name : "");
        rc = RK_EXIT_FAILURE;
    } else if (found->request_size == 0) {
        fprintf(stderr, "rk bench: handler '%s' takes a void * request: give it a request type to benchmark it\n",
                found->name);
        rc = RK_EXIT_FAILURE;
    } else {
        h->name = strdup(found->name);
        h->message_size = found->request_size;
        h->reply_size = found->reply_size;
        if (!h->name) rc = RK_EXIT_FAILURE;
    }
    rk_transpile_result_destroy(r);
    free(text);
    return rc;
}

/* Requests from the file, or the counting default. */
static int load_requests(handler_bench *h, const char *path) {
    if (!path) {
        h->count = 1024;
        h->requests = calloc(h->count, h->message_size);
        if (!h->requests) return RK_EXIT_FAILURE;
        for (uint64_t i = 0; i < h->count; i++)
            memcpy(h->requests + i * h->message_size, &i, h->message_size < 8 ? h->message_size : 8);
        return RK_EXIT_OK;
    }
    FILE *f = fopen(path, "rb");
    long size = -1;
    if (f && fseek(f, 0, SEEK_END) == 0) size = ftell(f);
    if (size <= 0 || size % h->message_size != 0) {
        fprintf(stderr, "rk bench: --requests %s: %s\n", path,
                !f ? "cannot open it" : "its size must be a non-zero multiple of the handler's request size");
        if (f) fclose(f);
        return RK_EXIT_FAILURE;
    }
    rewind(f);
    h->count = (size_t)size / h->message_size;
    h->requests = malloc((size_t)size);
    bool ok = h->requests && fread(h->requests, 1, (size_t)size, f) == (size_t)size;
    fclose(f);
    if (!ok) fprintf(stderr, "rk bench: --requests %s: cannot read it\n", path);
    return ok ? RK_EXIT_OK : RK_EXIT_FAILURE;
}

int bench_handler_rows(const bench_config *cfg, bench_report *rep, rk_runtime *rt, const char *backend) {
    handler_bench h = {.file = cfg->handler_file, .name = cfg->handler_name};
    int rc = inspect(&h);
    if (rc == RK_EXIT_OK) rc = load_requests(&h, cfg->requests_file);
    if (rc != RK_EXIT_OK) {
        free(h.requests);
        if (h.name != cfg->handler_name) free((char *)h.name);
        return rc;
    }
    uint64_t n = cfg->messages ? cfg->messages : cfg->quick ? 2000 : 200000;
    static const char *const kinds[] = {"batches of 256", "round trip, one at a time", "rk_kernel_call, 1 client thread",
                                        "rk_kernel_call, 4 client threads"};
    for (int i = 0; i < 4; i++) {
        bench_row row = bench_row_make("kernel", "");
        snprintf(row.name, sizeof row.name, "%.24s, %u B, %s", h.name, h.message_size, kinds[i]);
        snprintf(row.backend, sizeof row.backend, "%s", backend);
        bench_note(cfg, "kernel: %s", row.name);
        uint64_t latency_n = n / 10 ? n / 10 : n;
        rk_status s = i == 0 ? throughput(rt, &h, n, &row)
                      : i == 1 ? round_trip(rt, &h, latency_n, &row)
                               : calls(rt, &h, i == 2 ? 1 : 4, latency_n, &row);
        if (s != RK_OK) {
            cli_report_status("bench", row.name, s);
            rc = RK_EXIT_FAILURE;
            break;
        }
        if (!bench_report_add(rep, &row)) rc = RK_EXIT_FAILURE;
    }
    free(h.requests);
    if (h.name != cfg->handler_name) free((char *)h.name);
    return rc;
}
