/* rk demo: launches a persistent ring kernel whose handler is DSL source
 * (examples/handlers/demo_handler.c) on the best backend, streams messages
 * through it for a few seconds, checks every reply, and reports the rate and
 * the one-at-a-time round-trip latency. Exit 1 on any wrong or missing reply. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "demo_protocol.h"
#include "output.h"
#include "progress.h"

#define MS ((uint64_t)1000000)
#define SECOND ((uint64_t)1000000000)

enum {
    SEEN_BITS = 1 << 20,     /* duplicate detection window; > any number in flight */
    PROBES_PER_CYCLE = 8,    /* one-at-a-time round trips after each drained burst */
    MAX_PROBES = 1 << 20,
    MAX_REPORTED_ERRORS = 5,
};

typedef struct demo_options {
    const char *backend;
    const char *mode;
    double seconds;
    uint64_t messages;
    uint64_t batch;
    uint64_t queue;
    uint64_t workers;
    bool json;
    bool quiet;
} demo_options;

typedef struct demo_run {
    rk_kernel *kernel;
    const demo_options *opt;
    uint64_t base_id;        /* the kernel's id for seq 0 */
    bool have_base;
    uint64_t sent, verified; /* messages accepted by the kernel; replies that checked out */
    uint64_t wrong, handler_errors, lost;
    uint8_t *seen;           /* bit per seq (mod SEEN_BITS): reply outstanding */
    demo_request *requests;
    demo_reply *replies;
    rk_reply_info *infos;
    uint64_t *rtt_ns;
    size_t rtt_count;
    uint64_t start_ns;
    bool failed;             /* the kernel or the host loop gave up */
    progress_line progress;
} demo_run;

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig) {
    (void)sig;
    interrupted = 1;
}

static void report_wrong(demo_run *r, const char *fmt, const char *detail) {
    if (r->wrong + r->handler_errors + r->lost <= MAX_REPORTED_ERRORS) {
        progress_finish(&r->progress);
        fprintf(stderr, fmt, detail);
        fputc('\n', stderr);
    }
}

static void mark_sent(demo_run *r, uint64_t seq) {
    r->seen[(seq % SEEN_BITS) / 8] |= (uint8_t)(1u << (seq % 8));
}

/* Checks one reply: it must answer a message that is outstanding, and its
 * content must be what the handler computes for that message. */
static void check_reply(demo_run *r, const demo_reply *reply, const rk_reply_info *info) {
    char why[160];
    uint64_t seq = info->id - r->base_id;
    uint8_t bit = (uint8_t)(1u << (seq % 8));
    uint8_t *slot = &r->seen[(seq % SEEN_BITS) / 8];
    if (info->id < r->base_id || seq >= r->sent || !(*slot & bit)) {
        r->wrong++;
        snprintf(why, sizeof why, "reply with id %llu answers no outstanding message (duplicate or invented)",
                 (unsigned long long)info->id);
        report_wrong(r, "rk demo: %s", why);
        return;
    }
    *slot &= (uint8_t)~bit;
    if (info->status != 0) {
        r->handler_errors++;
        snprintf(why, sizeof why, "message %llu: handler returned %d", (unsigned long long)seq, (int)info->status);
        report_wrong(r, "rk demo: %s", why);
    } else if (!demo_check_reply(seq, reply, why, sizeof why)) {
        r->wrong++;
        report_wrong(r, "rk demo: wrong reply: %s", why);
    } else {
        r->verified++;
    }
}

/* Sends up to count messages starting at seq r->sent, without waiting. */
static rk_status send_some(demo_run *r, size_t count, size_t *accepted) {
    for (size_t i = 0; i < count; i++) demo_make_request(r->sent + i, &r->requests[i]);
    uint64_t first_id = 0;
    rk_status s = rk_kernel_send_batch(r->kernel, r->requests, sizeof(demo_request), count, RK_NO_WAIT, accepted,
                                       &first_id);
    if (s == RK_TIMEOUT || s == RK_WOULD_BLOCK) s = RK_OK;
    if (s != RK_OK || *accepted == 0) return s;
    if (!r->have_base) {
        r->base_id = first_id;
        r->have_base = true;
    } else if (first_id != r->base_id + r->sent) {
        fprintf(stderr, "rk demo: the kernel numbered message %llu as id %llu, expected %llu\n",
                (unsigned long long)r->sent, (unsigned long long)first_id,
                (unsigned long long)(r->base_id + r->sent));
        return RK_INTERNAL;
    }
    for (size_t i = 0; i < *accepted; i++) mark_sent(r, r->sent + i);
    r->sent += *accepted;
    return RK_OK;
}

/* Takes whatever replies are there (waiting up to timeout for the first). */
static rk_status receive_some(demo_run *r, uint64_t timeout_ns, size_t *got) {
    rk_status s = rk_kernel_receive_batch(r->kernel, r->replies, sizeof(demo_reply), r->infos, r->opt->batch,
                                          timeout_ns, got);
    if (s == RK_TIMEOUT || s == RK_WOULD_BLOCK) {
        *got = 0;
        return RK_OK;
    }
    if (s != RK_OK) return s;
    for (size_t i = 0; i < *got; i++) check_reply(r, &r->replies[i], &r->infos[i]);
    return RK_OK;
}

static uint64_t outstanding(const demo_run *r) {
    return r->sent - (r->verified + r->wrong + r->handler_errors);
}

static bool time_is_up(const demo_run *r, uint64_t now) {
    if (interrupted) return true;
    if (r->opt->messages && r->sent >= r->opt->messages) return true;
    return now - r->start_ns >= (uint64_t)(r->opt->seconds * 1e9);
}

static void show_progress(demo_run *r, uint64_t now) {
    if (!progress_due(&r->progress, now)) return;
    double secs = (double)(now - r->start_ns) / 1e9;
    char rate[32], p50[32] = "-";
    cli_format_count(secs > 0 ? (double)r->verified / secs : 0, rate, sizeof rate);
    if (r->rtt_count) {
        uint64_t *copy = malloc(r->rtt_count * sizeof *copy);
        if (copy) {
            memcpy(copy, r->rtt_ns, r->rtt_count * sizeof *copy);
            cli_format_duration_ns(cli_percentile_u64(copy, r->rtt_count, 50), p50, sizeof p50);
            free(copy);
        }
    }
    progress_print(&r->progress, now, "  %5.1f s  %12llu replies verified  %9s msg/s  round trip p50 %-9s  errors %llu",
                   secs, (unsigned long long)r->verified, rate, p50,
                   (unsigned long long)(r->wrong + r->handler_errors + r->lost));
}

/* A burst: keeps up to the queue's capacity in flight until the burst size
 * is sent or time is up, then waits for every reply. */
static rk_status run_burst(demo_run *r, uint64_t burst) {
    uint64_t target = r->sent + burst;
    uint64_t last_progress_ns = cli_now_ns();
    for (;;) {
        uint64_t now = cli_now_ns();
        bool may_send = r->sent < target && !time_is_up(r, now);
        size_t accepted = 0, got = 0;
        if (may_send) {
            uint64_t room = r->opt->queue - outstanding(r);
            uint64_t want = target - r->sent;
            if (r->opt->messages && r->opt->messages - r->sent < want) want = r->opt->messages - r->sent;
            if (want > room) want = room;
            if (want > r->opt->batch) want = r->opt->batch;
            if (want) {
                rk_status s = send_some(r, (size_t)want, &accepted);
                if (s != RK_OK) return s;
            }
        } else if (outstanding(r) == 0) {
            return RK_OK;
        }
        /* Nothing to send: block briefly for replies instead of spinning. */
        rk_status s = receive_some(r, accepted ? RK_NO_WAIT : MS, &got);
        if (s != RK_OK) return s;
        if (got || accepted) last_progress_ns = now;
        if (now - last_progress_ns > 5 * SECOND) {
            r->lost += outstanding(r);
            fprintf(stderr, "rk demo: no reply for 5 s with %llu messages outstanding\n",
                    (unsigned long long)outstanding(r));
            return RK_HUNG;
        }
        show_progress(r, now);
    }
}

/* One message at a time, the queue otherwise empty: the round trip a single
 * request sees. */
static rk_status run_probes(demo_run *r, int count) {
    for (int i = 0; i < count && r->rtt_count < MAX_PROBES; i++) {
        uint64_t t0 = cli_now_ns();
        demo_make_request(r->sent, &r->requests[0]);
        uint64_t id = 0;
        rk_status s = rk_kernel_send(r->kernel, &r->requests[0], sizeof(demo_request), SECOND, &id);
        if (s != RK_OK) return s;
        if (!r->have_base) {
            r->base_id = id;
            r->have_base = true;
        }
        mark_sent(r, r->sent);
        r->sent++;
        s = rk_kernel_receive(r->kernel, &r->replies[0], sizeof(demo_reply), &r->infos[0], 5 * SECOND);
        uint64_t t1 = cli_now_ns();
        if (s == RK_TIMEOUT) {
            r->lost++;
            fprintf(stderr, "rk demo: no reply to a single message within 5 s\n");
            return RK_HUNG;
        }
        if (s != RK_OK) return s;
        check_reply(r, &r->replies[0], &r->infos[0]);
        r->rtt_ns[r->rtt_count++] = t1 - t0;
    }
    return RK_OK;
}

static rk_status run_loop(demo_run *r) {
    /* Bursts grow until one takes about 20 ms, so probes are spread evenly. */
    uint64_t burst = 1024;
    for (;;) {
        uint64_t t0 = cli_now_ns();
        rk_status s = run_burst(r, burst);
        if (s != RK_OK) return s;
        uint64_t took = cli_now_ns() - t0;
        if (took < 20 * MS && burst < (1u << 24)) burst *= 2;
        if (time_is_up(r, cli_now_ns())) break;
        int probes = PROBES_PER_CYCLE;
        if (r->opt->messages && r->opt->messages - r->sent < (uint64_t)probes) probes = (int)(r->opt->messages - r->sent);
        s = run_probes(r, probes);
        if (s != RK_OK) return s;
        if (time_is_up(r, cli_now_ns())) break;
    }
    return RK_OK;
}

static bool parse_mode(const char *name, rk_exec_mode *mode) {
    static const struct {
        const char *name;
        rk_exec_mode mode;
    } modes[] = {{"default", RK_MODE_DEFAULT},
                 {"persistent", RK_MODE_PERSISTENT},
                 {"traditional", RK_MODE_TRADITIONAL},
                 {"graph", RK_MODE_GRAPH}};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        if (strcmp(name, modes[i].name) == 0) {
            *mode = modes[i].mode;
            return true;
        }
    }
    return false;
}

typedef struct demo_summary {
    char device[320];
    char backend[48];
    const char *mode;
    uint64_t workers;
    double seconds;
    double rate;
    double p50_ns, p99_ns;
    uint64_t probes;
    uint64_t errors;
    rk_kernel_stats stats;
} demo_summary;

static void print_summary_text(const demo_run *r, const demo_summary *s) {
    char rate[32], p50[32], p99[32];
    cli_format_count(s->rate, rate, sizeof rate);
    cli_format_duration_ns(s->p50_ns, p50, sizeof p50);
    cli_format_duration_ns(s->p99_ns, p99, sizeof p99);
    printf("\nrk demo summary\n");
    printf("  backend      %s  %s\n", s->backend, s->device);
    printf("  kernel       %s mode, %llu launch%s, handler %s() from %s\n", s->mode,
           (unsigned long long)s->stats.launches, s->stats.launches == 1 ? "" : "es", DEMO_HANDLER_NAME,
           DEMO_HANDLER_PATH);
    printf("  messages     %llu sent, %llu replies verified, %llu processed by the kernel\n",
           (unsigned long long)r->sent, (unsigned long long)r->verified,
           (unsigned long long)s->stats.messages_processed);
    printf("  rate         %s msg/s over %.2f s\n", rate, s->seconds);
    if (s->probes)
        printf("  round trip   p50 %s, p99 %s (%llu single-message probes between bursts)\n", p50, p99,
               (unsigned long long)s->probes);
    else
        printf("  round trip   no probes completed\n");
    printf("  errors       %llu", (unsigned long long)s->errors);
    if (s->errors)
        printf(" (%llu wrong replies, %llu handler errors, %llu missing, %llu counted by the kernel)",
               (unsigned long long)r->wrong, (unsigned long long)r->handler_errors, (unsigned long long)r->lost,
               (unsigned long long)s->stats.errors_encountered);
    printf("\n");
}

static void print_summary_json(const demo_run *r, const demo_summary *s) {
    json_writer j;
    json_init(&j, stdout);
    json_object_begin(&j);
    json_field_string(&j, "backend", s->backend);
    json_field_string(&j, "device", s->device);
    json_field_string(&j, "mode", s->mode);
    json_field_u64(&j, "launches", s->stats.launches);
    json_field_string(&j, "handler", DEMO_HANDLER_PATH);
    json_field_u64(&j, "messages_sent", r->sent);
    json_field_u64(&j, "replies_verified", r->verified);
    json_field_u64(&j, "messages_processed", s->stats.messages_processed);
    json_field_double(&j, "seconds", s->seconds);
    json_field_double(&j, "messages_per_second", s->rate);
    json_field_u64(&j, "probes", s->probes);
    json_field_double(&j, "round_trip_p50_ns", s->probes ? s->p50_ns : NAN);
    json_field_double(&j, "round_trip_p99_ns", s->probes ? s->p99_ns : NAN);
    json_field_u64(&j, "wrong_replies", r->wrong);
    json_field_u64(&j, "handler_errors", r->handler_errors);
    json_field_u64(&j, "missing_replies", r->lost);
    json_field_u64(&j, "kernel_errors", s->stats.errors_encountered);
    json_field_u64(&j, "errors", s->errors);
    json_object_end(&j);
    json_finish(&j);
}

static int alloc_run(demo_run *r) {
    size_t batch = (size_t)r->opt->batch;
    r->seen = calloc(SEEN_BITS / 8, 1);
    r->requests = calloc(batch, sizeof *r->requests);
    r->replies = calloc(batch, sizeof *r->replies);
    r->infos = calloc(batch, sizeof *r->infos);
    r->rtt_ns = calloc(MAX_PROBES, sizeof *r->rtt_ns);
    return r->seen && r->requests && r->replies && r->infos && r->rtt_ns;
}

static void free_run(demo_run *r) {
    free(r->seen);
    free(r->requests);
    free(r->replies);
    free(r->infos);
    free(r->rtt_ns);
}

/* Terminates the kernel (it drains what it accepted) and checks the
 * replies that come back after the loop stopped. */
static rk_status finish_kernel(demo_run *r) {
    rk_status s = rk_kernel_terminate(r->kernel, 10 * SECOND);
    if (s != RK_OK) return s;
    while (outstanding(r) > 0) {
        size_t got = 0;
        rk_status rs = receive_some(r, 100 * MS, &got);
        if (rs != RK_OK) return rs;
        if (got == 0) break;
    }
    r->lost += outstanding(r);
    return RK_OK;
}

int rk_cmd_demo(int argc, char **argv) {
    demo_options opt = {.seconds = 3.0, .batch = 256, .queue = 4096, .mode = "default"};
    const cli_opt opts[] = {
        {"backend", 'b', CLI_STRING, &opt.backend, "NAME", "cpu, cuda, cuda:1, webgpu, ... (default: RK_BACKEND, else the best)"},
        {"seconds", 's', CLI_DOUBLE, &opt.seconds, "S", "how long to send messages (default 3)"},
        {"messages", 'n', CLI_UINT, &opt.messages, "N", "stop after N messages (default: no limit)"},
        {"batch", 0, CLI_UINT, &opt.batch, "N", "messages per send/receive call (default 256)"},
        {"queue", 0, CLI_UINT, &opt.queue, "N", "queue capacity, a power of two (default 4096)"},
        {"mode", 0, CLI_STRING, &opt.mode, "MODE", "default (persistent where the backend has it), persistent,\n"
         "                             traditional or graph"},
        {"workers", 0, CLI_UINT, &opt.workers, "N", "CPU worker threads / GPU blocks (default: backend's choice)"},
        {"json", 0, CLI_FLAG, &opt.json, NULL, "print the summary as JSON (no progress line)"},
        {"quiet", 'q', CLI_FLAG, &opt.quiet, NULL, "no progress line"},
    };
    const cli_command_spec spec = {
        .name = "demo",
        .synopsis = "[options]",
        .summary = "Launches a ring kernel whose handler is the DSL source " DEMO_HANDLER_PATH "\n"
                   "on the best available backend (or the one named), sends it messages in\n"
                   "bursts for a few seconds with single-message round-trip probes in between,\n"
                   "checks every reply, and prints the rate and round-trip p50/p99.\n"
                   "Exits 1 if any reply is wrong or missing, 77 if the backend is unavailable.",
        .opts = opts,
        .opt_count = sizeof opts / sizeof opts[0],
    };
    switch (cli_parse(&spec, argc, argv, NULL, NULL)) {
    case CLI_PARSE_HELP: return RK_EXIT_OK;
    case CLI_PARSE_ERROR: return RK_EXIT_USAGE;
    case CLI_PARSE_OK: break;
    }
    rk_exec_mode mode;
    if (!parse_mode(opt.mode, &mode)) return cli_usage_error("demo", "--mode: unknown mode '%s'", opt.mode);
    if (opt.batch == 0 || opt.batch > 65536) return cli_usage_error("demo", "--batch must be 1 .. 65536");
    if (opt.queue == 0 || opt.queue > SEEN_BITS / 2)
        return cli_usage_error("demo", "--queue must be 1 .. %d", SEEN_BITS / 2);
    if (opt.workers > 65536) return cli_usage_error("demo", "--workers must be at most 65536");
    if (opt.batch > opt.queue) opt.batch = opt.queue;

    rk_runtime *rt = NULL;
    rk_runtime_desc rdesc = {.backend = opt.backend};
    rk_status s = rk_runtime_create(&rdesc, &rt);
    if (s != RK_OK) {
        cli_report_status("demo", "cannot use the backend", s);
        return cli_exit_for_selection(s);
    }

    demo_summary sum = {.mode = opt.mode, .workers = opt.workers};
    rk_device_info info;
    memset(&info, 0, sizeof info);
    rk_context_device_info(rk_runtime_context(rt), &info);
    snprintf(sum.backend, sizeof sum.backend, "%s", rk_runtime_backend_name(rt));
    snprintf(sum.device, sizeof sum.device, "%s", info.name);

    rk_kernel_desc kdesc = {
        .name = "demo",
        .handler_source = rk_demo_handler_source,
        .handler_name = DEMO_HANDLER_NAME,
        .message_size = sizeof(demo_request),
        .reply_size = sizeof(demo_reply),
        .queue_capacity = (uint32_t)opt.queue,
        .mode = mode,
        .workers = (uint32_t)opt.workers,
    };
    rk_kernel *kernel = NULL;
    s = rk_kernel_launch(rt, &kdesc, &kernel);
    if (s != RK_OK) {
        cli_report_status("demo", "launching the ring kernel failed", s);
        rk_runtime_destroy(rt);
        return s == RK_BAD_CAPACITY || s == RK_INVALID_ARGUMENT ? RK_EXIT_USAGE
               : s == RK_UNSUPPORTED                              ? RK_EXIT_UNAVAILABLE
                                                                  : RK_EXIT_FAILURE;
    }

    demo_run run = {.kernel = kernel, .opt = &opt};
    int exit_code = RK_EXIT_OK;
    if (!alloc_run(&run)) {
        fprintf(stderr, "rk demo: out of memory\n");
        exit_code = RK_EXIT_FAILURE;
        goto out;
    }
    progress_init(&run.progress, stdout, !opt.json && !opt.quiet);
    if (!opt.json)
        printf("rk demo: ring kernel on %s (%s), %s mode, %s queues of %llu x %zu-byte messages\n", sum.backend,
               sum.device, opt.mode, "lock-free", (unsigned long long)opt.queue, sizeof(demo_request));
    fflush(stdout);

    struct sigaction sa = {.sa_handler = on_interrupt}, old_sa;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_sa);

    s = rk_kernel_activate(kernel);
    run.start_ns = cli_now_ns();
    if (s == RK_OK) s = run_loop(&run);
    uint64_t end_ns = cli_now_ns();
    if (s != RK_OK && s != RK_HUNG) cli_report_status("demo", "message loop", s);
    rk_status fs = finish_kernel(&run);
    if (fs != RK_OK) cli_report_status("demo", "terminating the kernel", fs);
    progress_finish(&run.progress);
    sigaction(SIGINT, &old_sa, NULL);

    rk_kernel_stats_get(kernel, &sum.stats);
    sum.seconds = (double)(end_ns - run.start_ns) / 1e9;
    sum.rate = sum.seconds > 0 ? (double)run.verified / sum.seconds : 0;
    sum.probes = run.rtt_count;
    sum.p50_ns = cli_percentile_u64(run.rtt_ns, run.rtt_count, 50);
    sum.p99_ns = cli_percentile_u64(run.rtt_ns, run.rtt_count, 99);
    /* Handler errors show up both in replies and in the kernel's counter:
     * count each once, plus any the kernel saw that no reply reported. */
    uint64_t kernel_only = sum.stats.errors_encountered > run.handler_errors
                               ? sum.stats.errors_encountered - run.handler_errors
                               : 0;
    sum.errors = run.wrong + run.handler_errors + run.lost + kernel_only;
    if (opt.json)
        print_summary_json(&run, &sum);
    else
        print_summary_text(&run, &sum);
    if (s != RK_OK || fs != RK_OK || sum.errors || run.verified != run.sent) exit_code = RK_EXIT_FAILURE;

out:
    rk_kernel_destroy(kernel);
    rk_runtime_destroy(rt);
    free_run(&run);
    return exit_code;
}
