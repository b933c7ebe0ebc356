/* rk bench soak: many messages through several persistent ring kernels at
 * once, every reply checked exactly once and in content.
 *
 * One host thread per kernel sends batches of requests with random payload
 * lengths (and, now and then, single sends shorter than the slot), receives
 * and checks replies, pauses at random, and once in the run deactivates its
 * kernel and activates it again; at the end every kernel is terminated,
 * which drains what it accepted. The main thread prints a live progress
 * line and the final count of lost, duplicated and wrong replies. */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "commands.h"
#include "progress.h"
#include "soak_check.h"

enum { SOAK_BATCH = 256, SOAK_MAX_KERNELS = 64 };
static const uint64_t STALL_NS = 30ull * 1000000000u; /* no reply for this long: the rest are lost */

typedef struct soak_totals {
    uint64_t sent, received, duplicated, wrong, failed_replies, lost;
} soak_totals;

typedef struct soak_worker {
    rk_kernel *kernel;
    uint32_t index;
    uint64_t target;       /* messages to send */
    uint32_t window;       /* in flight at most */
    uint64_t seed;
    pthread_t thread;
    rk_status status;      /* the first failed call, else RK_OK */
    char failure[256];
    /* updated by the worker, read by the progress line */
    _Atomic uint64_t sent, received, errors;
    atomic_bool finished;
    soak_totals totals;    /* final, after join */
} soak_worker;

static volatile sig_atomic_t soak_interrupted;
static void on_interrupt(int sig) {
    (void)sig;
    soak_interrupted = 1;
}

static uint64_t next_random(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void fail(soak_worker *w, const char *what, rk_status s) {
    if (w->status != RK_OK) return;
    w->status = s;
    snprintf(w->failure, sizeof w->failure, "kernel %u: %s: %s: %s", w->index, what, rk_status_name(s), rk_last_error());
}

/* Checks n replies; returns how many were new. */
static uint64_t check_replies(soak_worker *w, soak_window *win, const soak_reply *r, const rk_reply_info *info,
                              size_t n, uint64_t sent) {
    uint64_t fresh = 0;
    for (size_t i = 0; i < n; i++) {
        if (info[i].status != 0) { /* a failed kernel's reply carries no payload */
            w->totals.failed_replies++;
            continue;
        }
        uint64_t seq = soak_window_seq(win, r[i].seq);
        switch (soak_window_mark(win, seq, sent)) {
        case SOAK_DUPLICATE: w->totals.duplicated++; continue;
        case SOAK_UNKNOWN: w->totals.wrong++; continue;
        case SOAK_NEW: break;
        }
        fresh++;
        if (!soak_reply_matches(w->index, seq, &r[i])) w->totals.wrong++;
    }
    return fresh;
}

static void pause_at_random(uint64_t *rng) {
    if (next_random(rng) % 4096 != 0) return;
    struct timespec ts = {0, (long)(next_random(rng) % 2000000)}; /* up to 2 ms */
    nanosleep(&ts, NULL);
}

static void *soak_thread(void *arg) {
    soak_worker *w = arg;
    soak_window win;
    soak_request *req = malloc(SOAK_BATCH * sizeof *req);
    soak_reply *rep = malloc(SOAK_BATCH * sizeof *rep);
    rk_reply_info *info = malloc(SOAK_BATCH * sizeof *info);
    if (!req || !rep || !info || !soak_window_init(&win, w->window * 2)) {
        fail(w, "allocating buffers", RK_OUT_OF_MEMORY);
        goto out;
    }
    uint64_t rng = w->seed | 1, next = 0, received = 0, last_reply_ns = cli_now_ns();
    bool toggled = false;
    while (received < w->target && w->status == RK_OK && !soak_interrupted) {
        /* Send what the window allows. */
        uint64_t room = w->window - (next - win.base), n = w->target - next;
        if (n > room) n = room;
        if (n > SOAK_BATCH) n = SOAK_BATCH;
        if (n && next_random(&rng) % 1024 == 0) { /* now and then, one request shorter than its slot */
            size_t used = soak_make_request(w->index, next, req);
            rk_status s = rk_kernel_send(w->kernel, req, used, 1000000, NULL);
            if (s == RK_OK) next++;
            else if (s != RK_TIMEOUT && s != RK_WOULD_BLOCK) fail(w, "send", s);
        } else if (n) {
            for (uint64_t i = 0; i < n; i++) soak_make_request(w->index, next + i, &req[i]);
            size_t sent = 0;
            rk_status s = rk_kernel_send_batch(w->kernel, req, sizeof *req, (size_t)n, 1000000, &sent, NULL);
            next += sent;
            if (s != RK_OK && s != RK_TIMEOUT && s != RK_WOULD_BLOCK) fail(w, "send batch", s);
        }
        atomic_store(&w->sent, next);
        /* Take the replies there are (wait a little when the window is full). */
        size_t got = 0;
        rk_status s = rk_kernel_receive_batch(w->kernel, rep, sizeof *rep, info, SOAK_BATCH, n ? 0 : 1000000, &got);
        if (s != RK_OK && s != RK_TIMEOUT && s != RK_WOULD_BLOCK) fail(w, "receive", s);
        uint64_t now = cli_now_ns();
        if (got) {
            received += check_replies(w, &win, rep, info, got, next);
            last_reply_ns = now;
            atomic_store(&w->received, received);
            atomic_store(&w->errors, w->totals.duplicated + w->totals.wrong + w->totals.failed_replies);
        } else if (next > received && now - last_reply_ns > STALL_NS) {
            break; /* what is still out is counted lost below */
        }
        if (!toggled && received >= w->target / 2) { /* once: inactive for a moment, then on again */
            toggled = true;
            rk_status ds = rk_kernel_deactivate(w->kernel);
            struct timespec ts = {0, 5000000};
            nanosleep(&ts, NULL);
            rk_status as = rk_kernel_activate(w->kernel);
            if (ds != RK_OK) fail(w, "deactivate", ds);
            if (as != RK_OK) fail(w, "activate", as);
        }
        pause_at_random(&rng);
    }
    /* Terminate drains what the kernel accepted; then take the rest. */
    rk_status ts = rk_kernel_terminate(w->kernel, 30ull * 1000000000u);
    if (ts != RK_OK) fail(w, "terminate", ts);
    for (;;) {
        size_t got = 0;
        rk_status s = rk_kernel_receive_batch(w->kernel, rep, sizeof *rep, info, SOAK_BATCH, 0, &got);
        if (s != RK_OK || got == 0) break;
        received += check_replies(w, &win, rep, info, got, next);
    }
    atomic_store(&w->received, received);
    w->totals.sent = next;
    w->totals.received = received;
    w->totals.lost = next - received;
out:
    atomic_store(&w->finished, true);
    soak_window_free(&win);
    free(req);
    free(rep);
    free(info);
    return NULL;
}

typedef struct soak_options {
    const char *backend;
    uint64_t messages, kernels, queue;
    bool quiet;
} soak_options;

static int soak_parse(int argc, char **argv, soak_options *o) {
    const cli_opt opts[] = {
        {"backend", 'b', CLI_STRING, &o->backend, "NAME", "cpu, cuda, webgpu, ... (default: RK_BACKEND, else the best)", 0, 0},
        {"messages", 'n', CLI_UINT, &o->messages, "N", "messages in all (default 1000000000)", 1, 1e13},
        {"kernels", 'k', CLI_UINT, &o->kernels, "N", "ring kernels at once, one host thread each (default 4)", 1, SOAK_MAX_KERNELS},
        {"queue", 0, CLI_UINT, &o->queue, "N", "queue capacity, a power of two (default 4096)", 2, 1 << 20},
        {"quiet", 'q', CLI_FLAG, &o->quiet, NULL, "no progress line", 0, 0},
    };
    const cli_command_spec spec = {
        .name = "bench soak",
        .synopsis = "[options]",
        .summary = "Pushes many messages through several persistent ring kernels at once: random\n"
                   "payload lengths up to the 256-byte slot, random pauses, one deactivate/activate\n"
                   "per kernel, a terminate at the end. Every reply is checked exactly once and in\n"
                   "content; prints a live progress line and the lost, duplicated and wrong counts.\n"
                   "Exits 1 if any message was lost, duplicated or wrong.",
        .opts = opts,
        .opt_count = sizeof opts / sizeof opts[0],
    };
    switch (cli_parse(&spec, argc, argv, NULL, NULL)) {
    case CLI_PARSE_HELP: return RK_EXIT_OK;
    case CLI_PARSE_ERROR: return RK_EXIT_USAGE;
    case CLI_PARSE_OK: break;
    }
    if (o->queue & (o->queue - 1)) return cli_usage_error("bench soak", "--queue %" PRIu64 " is not a power of two", o->queue);
    return -1;
}

static int soak_launch(const soak_options *o, rk_runtime **rt, soak_worker *w) {
    rk_runtime_desc rdesc = {.backend = o->backend};
    rk_status s = rk_runtime_create(&rdesc, rt);
    if (s != RK_OK) {
        cli_report_status("bench soak", "opening the backend", s);
        return cli_exit_for_selection(s);
    }
    for (uint64_t i = 0; i < o->kernels; i++) {
        rk_kernel_desc kd = {.name = "soak", .handler_source = rk_soak_handler_source, .handler_name = SOAK_HANDLER_NAME,
                             .message_size = sizeof(soak_request), .reply_size = sizeof(soak_reply),
                             .queue_capacity = (uint32_t)o->queue, .mode = RK_MODE_DEFAULT}; /* persistent where the backend has it */
        w[i].index = (uint32_t)i;
        w[i].target = o->messages / o->kernels + (i < o->messages % o->kernels);
        w[i].window = (uint32_t)o->queue;
        w[i].seed = 0x9e3779b97f4a7c15ull * (i + 1);
        s = rk_kernel_launch(*rt, &kd, &w[i].kernel);
        if (s == RK_OK) s = rk_kernel_activate(w[i].kernel);
        if (s != RK_OK) {
            cli_report_status("bench soak", "launching a ring kernel", s);
            return s == RK_UNSUPPORTED ? RK_EXIT_UNAVAILABLE : RK_EXIT_FAILURE;
        }
    }
    return -1;
}

static void soak_progress(soak_worker *w, uint64_t kernels, uint64_t total, bool quiet, uint64_t start_ns) {
    progress_line p;
    progress_init(&p, stdout, !quiet);
    for (;;) {
        uint64_t received = 0, errors = 0, done = 0;
        for (uint64_t i = 0; i < kernels; i++) {
            received += atomic_load(&w[i].received);
            errors += atomic_load(&w[i].errors);
            done += atomic_load(&w[i].finished);
        }
        uint64_t now = cli_now_ns();
        if (progress_due(&p, now)) {
            double s = (double)(now - start_ns) / 1e9;
            progress_print(&p, now, "soak: %" PRIu64 " of %" PRIu64 " replies checked (%.1f%%), %.2f M msg/s, %" PRIu64 " errors",
                           received, total, 100.0 * (double)received / (double)total, s > 0 ? (double)received / s / 1e6 : 0, errors);
        }
        if (done == kernels || soak_interrupted) break;
        struct timespec ts = {0, 50000000};
        nanosleep(&ts, NULL);
    }
    progress_finish(&p);
}

int rk_bench_soak_cmd(int argc, char **argv) {
    soak_options o = {.messages = 1000000000ull, .kernels = 4, .queue = 4096};
    int rc = soak_parse(argc, argv, &o);
    if (rc >= 0) return rc;
    soak_worker *w = calloc(o.kernels, sizeof *w);
    rk_runtime *rt = NULL;
    if (!w) return RK_EXIT_FAILURE;
    rc = soak_launch(&o, &rt, w);
    if (rc < 0) {
        char date[64];
        cli_utc_timestamp(date, sizeof date);
        printf("rk bench soak: %" PRIu64 " messages through %" PRIu64 " ring kernels on %s, queues of %" PRIu64 "\n"
               "  date %s, commit %s\n",
               o.messages, o.kernels, o.backend ? o.backend : "the best backend", o.queue, date, cli_git_describe());
        fflush(stdout);
        struct sigaction sa = {.sa_handler = on_interrupt}, old_sa;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, &old_sa);
        uint64_t start = cli_now_ns();
        for (uint64_t i = 0; i < o.kernels; i++) pthread_create(&w[i].thread, NULL, soak_thread, &w[i]);
        soak_progress(w, o.kernels, o.messages, o.quiet, start);
        soak_totals t = {0};
        bool failed = false;
        for (uint64_t i = 0; i < o.kernels; i++) {
            pthread_join(w[i].thread, NULL);
            t.sent += w[i].totals.sent, t.received += w[i].totals.received, t.lost += w[i].totals.lost;
            t.duplicated += w[i].totals.duplicated, t.wrong += w[i].totals.wrong;
            t.failed_replies += w[i].totals.failed_replies;
            if (w[i].status != RK_OK) {
                fprintf(stderr, "rk bench soak: %s\n", w[i].failure);
                failed = true;
            }
        }
        sigaction(SIGINT, &old_sa, NULL);
        double seconds = (double)(cli_now_ns() - start) / 1e9;
        printf("rk bench soak summary\n  sent %" PRIu64 ", checked %" PRIu64 " in %.1f s (%.2f M msg/s)\n"
               "  lost %" PRIu64 ", duplicated %" PRIu64 ", wrong %" PRIu64 ", failed replies %" PRIu64 "\n",
               t.sent, t.received, seconds, seconds > 0 ? (double)t.received / seconds / 1e6 : 0, t.lost, t.duplicated,
               t.wrong, t.failed_replies);
        bool clean = !failed && t.lost == 0 && t.duplicated == 0 && t.wrong == 0 && t.failed_replies == 0;
        rc = !clean ? RK_EXIT_FAILURE : soak_interrupted ? RK_EXIT_INTERRUPTED : RK_EXIT_OK;
    }
    for (uint64_t i = 0; i < o.kernels; i++)
        if (w[i].kernel) rk_kernel_destroy(w[i].kernel);
    free(w);
    if (rt) rk_runtime_destroy(rt);
    return rc;
}
