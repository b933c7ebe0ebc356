/* rk bench kernel, many-client rows: 1, 2, 4, 8 and 16 threads calling one
 * kernel with rk_kernel_call, each timing its own calls, beside a raw
 * send + receive row from one thread on the same kind of kernel in the same
 * run. Per-client p50/p99 are over every call of every client; the rate is
 * all calls over the wall time. On a machine with fewer cores than threads
 * the figures are contended: compare each row with the raw one. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_report.h"
#include "cli.h"
#include "ringkernel/ringkernel.h"

enum { MAX_CLIENTS = 16, CALLS = 40000, QUICK_CALLS = 4000, WARMUP = 200 };

/* The same text runs on every backend. */
static const char echo_source[] =
    "typedef struct Req { uint32_t client; uint32_t seq; uint32_t a; uint32_t b; } Req;\n"
    "typedef struct Resp { uint32_t client; uint32_t seq; uint32_t sum; uint32_t pad; } Resp;\n"
    "typedef struct State { uint32_t unused; } State;\n"
    "RK_HANDLER int echo(const Req *req, Resp *resp, State *state) {\n"
    "    resp->client = req->client;\n"
    "    resp->seq = req->seq;\n"
    "    resp->sum = req->a + req->b;\n"
    "    return 0;\n"
    "}\n";

typedef struct req { uint32_t client, seq, a, b; } req;
typedef struct resp { uint32_t client, seq, sum, pad; } resp;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static bool reply_ok(const req *q, const resp *r) {
    return r->client == q->client && r->seq == q->seq && r->sum == q->a + q->b;
}

typedef struct client {
    rk_kernel *k;
    uint32_t index, calls;
    uint64_t *samples; /* ns per call */
    uint64_t errors;
    rk_status status;
    _Atomic int *go; /* 0: wait, 1: run, -1: give up */
} client;

static void *client_main(void *arg) {
    client *c = arg;
    int go;
    while ((go = atomic_load(c->go)) == 0) sched_yield();
    if (go < 0) return NULL;
    for (uint32_t i = 0; i < c->calls + WARMUP; i++) {
        req q = {.client = c->index, .seq = i, .a = i * 3u, .b = c->index};
        resp r;
        uint64_t t0 = now_ns();
        rk_status s = rk_kernel_call(c->k, &q, sizeof q, &r, sizeof r, NULL, 10000000000u);
        uint64_t t1 = now_ns();
        if (s != RK_OK) {
            c->status = s;
            return NULL;
        }
        c->errors += !reply_ok(&q, &r);
        if (i >= WARMUP) c->samples[i - WARMUP] = t1 - t0;
    }
    return NULL;
}

static rk_status launch(rk_runtime *rt, rk_kernel **k) {
    rk_kernel_desc d = {
        .name = "bench-clients",
        .handler_source = echo_source,
        .handler_name = "echo",
        .message_size = sizeof(req),
        .reply_size = sizeof(resp),
        .queue_capacity = 256,
    };
    rk_status s = rk_kernel_launch(rt, &d, k);
    if (s == RK_OK) s = rk_kernel_activate(*k);
    return s;
}

static void fill_percentiles(bench_row *row, uint64_t *samples, size_t n) {
    qsort(samples, n, sizeof *samples, compare_u64);
    row->p50_us = (double)samples[n / 2] / 1e3;
    row->p99_us = (double)samples[n * 99 / 100] / 1e3;
}

/* One thread, rk_kernel_send then rk_kernel_receive: the path calls are
 * measured against. */
static rk_status raw_row(rk_runtime *rt, uint32_t calls, bench_row *row) {
    rk_kernel *k = NULL;
    rk_status s = launch(rt, &k);
    uint64_t *samples = calloc(calls, sizeof *samples);
    if (!samples && s == RK_OK) s = RK_OUT_OF_MEMORY;
    uint64_t start = 0, errors = 0;
    for (uint32_t i = 0; s == RK_OK && i < calls + WARMUP; i++) {
        if (i == WARMUP) start = now_ns();
        req q = {.client = 0, .seq = i, .a = i * 3u, .b = 0};
        resp r;
        uint64_t t0 = now_ns();
        s = rk_kernel_send(k, &q, sizeof q, 10000000000u, NULL);
        if (s == RK_OK) s = rk_kernel_receive(k, &r, sizeof r, NULL, 10000000000u);
        if (s == RK_OK && i >= WARMUP) samples[i - WARMUP] = now_ns() - t0;
        errors += s == RK_OK && !reply_ok(&q, &r);
    }
    if (s == RK_OK) {
        row->seconds = (double)(now_ns() - start) / 1e9;
        row->messages = calls;
        row->rate = (double)calls / row->seconds;
        row->errors = errors;
        fill_percentiles(row, samples, calls);
    }
    free(samples);
    if (k) rk_kernel_destroy(k);
    return s;
}

static rk_status clients_row(rk_runtime *rt, uint32_t threads, uint32_t total, bench_row *row) {
    rk_kernel *k = NULL;
    rk_status s = launch(rt, &k);
    if (s != RK_OK) return s;
    uint32_t per = total / threads;
    client clients[MAX_CLIENTS];
    memset(clients, 0, sizeof clients);
    uint64_t *samples = calloc((size_t)per * threads, sizeof *samples);
    _Atomic int go = 0;
    pthread_t tids[MAX_CLIENTS];
    uint32_t started = 0;
    for (; samples && started < threads; started++) {
        client *c = &clients[started];
        *c = (client){.k = k, .index = started, .calls = per, .samples = samples + (size_t)started * per, .go = &go};
        if (pthread_create(&tids[started], NULL, client_main, c) != 0) break;
    }
    if (started < threads) s = samples ? RK_IO_ERROR : RK_OUT_OF_MEMORY;
    atomic_store(&go, s == RK_OK ? 1 : -1);
    uint64_t t0 = now_ns();
    for (uint32_t t = 0; t < started; t++) pthread_join(tids[t], NULL);
    uint64_t wall = now_ns() - t0; /* includes each client's warm-up calls */
    uint64_t errors = 0;
    for (uint32_t t = 0; t < threads; t++) {
        errors += clients[t].errors;
        if (clients[t].status != RK_OK) s = clients[t].status;
    }
    if (s == RK_OK) {
        row->messages = (uint64_t)per * threads;
        row->seconds = (double)wall / 1e9;
        row->rate = (double)(per + WARMUP) * threads / row->seconds;
        row->errors = errors;
        fill_percentiles(row, samples, (size_t)per * threads);
        rk_kernel_stats st;
        if (rk_kernel_stats_get(k, &st) == RK_OK && st.latency_samples)
            snprintf(row->note, sizeof row->note, "kernel stats: p50 %.1f us, p99 %.1f us (sampled)",
                     (double)st.latency_p50_ns / 1e3, (double)st.latency_p99_ns / 1e3);
    }
    free(samples);
    rk_kernel_destroy(k);
    return s;
}

int bench_clients_rows(const bench_config *cfg, bench_report *rep, rk_runtime *rt, const char *backend) {
    uint32_t total = cfg->messages ? (uint32_t)cfg->messages : cfg->quick ? QUICK_CALLS : CALLS;
    if (total < MAX_CLIENTS) total = MAX_CLIENTS;
    int rc = RK_EXIT_OK;
    bench_row raw = bench_row_make("kernel", "raw send+receive, 1 thread, 16 B");
    snprintf(raw.backend, sizeof raw.backend, "%s", backend);
    bench_note(cfg, "kernel: %s", raw.name);
    rk_status s = raw_row(rt, total, &raw);
    if (s != RK_OK) {
        cli_report_status("bench", raw.name, s);
        return RK_EXIT_FAILURE;
    }
    if (!bench_report_add(rep, &raw)) return RK_EXIT_FAILURE;
    if (raw.errors) rc = RK_EXIT_FAILURE;
    static const uint32_t counts[] = {1, 2, 4, 8, 16};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "rk_kernel_call, %u client thread%s, 16 B", counts[i], counts[i] > 1 ? "s" : "");
        bench_row row = bench_row_make("kernel", name);
        snprintf(row.backend, sizeof row.backend, "%s", backend);
        bench_note(cfg, "kernel: %s", name);
        s = clients_row(rt, counts[i], total, &row);
        if (s != RK_OK) {
            cli_report_status("bench", name, s);
            rc = RK_EXIT_FAILURE;
            continue;
        }
        char ratio[64];
        snprintf(ratio, sizeof ratio, "%sp50 %.2fx raw", row.note[0] ? "; " : "", row.p50_us / raw.p50_us);
        strncat(row.note, ratio, sizeof row.note - strlen(row.note) - 1);
        if (!bench_report_add(rep, &row)) return RK_EXIT_FAILURE;
        if (row.errors) rc = RK_EXIT_FAILURE;
    }
    return rc;
}
