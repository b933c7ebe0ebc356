/* rk demo: launches a ring kernel whose handler is DSL source
 * (examples/handlers/demo_handler.c) on the best backend, streams messages
 * through it for a few seconds (demo_run.c), checks every reply, and reports
 * the rate and the one-at-a-time round-trip latency. Exit 1 on any wrong or
 * missing reply. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "showcase_cli.h"
#include "demo_run.h"
#include "k2k_pipeline.h"
#include "output.h"

static void on_interrupt(int sig) {
    (void)sig;
    demo_interrupted = 1;
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
    const char *pattern = strcmp(s->mode, "default") != 0 ? ""
                          : s->stats.launches == 1        ? " (persistent)"
                                                          : " (launched per batch of messages)";
    printf("  kernel       %s mode%s, %llu launch%s, handler %s() from %s\n", s->mode, pattern,
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

/* The public API does not say which pattern "default" became; the launch
 * count does: one launch is a persistent kernel. */
static const char *demo_mode_used(const demo_summary *s) {
    if (strcmp(s->mode, "default") != 0) return s->mode;
    return s->stats.launches == 1 ? "persistent" : "traditional";
}

static void print_summary_json(const demo_run *r, const demo_summary *s) {
    json_writer j;
    json_init(&j, stdout);
    json_object_begin(&j);
    char date[64];
    cli_utc_timestamp(date, sizeof date);
    json_field_string(&j, "tool", "rk demo");
    json_field_string(&j, "version", rk_version());
    json_field_string(&j, "commit", cli_git_describe());
    json_field_string(&j, "date", date);
    json_field_string(&j, "backend", s->backend);
    json_field_string(&j, "device", s->device);
    json_field_string(&j, "mode_requested", s->mode);
    json_field_string(&j, "mode", demo_mode_used(s));
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

static int exit_for_launch(rk_status s) {
    switch (s) {
    case RK_BAD_CAPACITY:
    case RK_INVALID_ARGUMENT: return RK_EXIT_USAGE;
    case RK_UNSUPPORTED: return RK_EXIT_UNAVAILABLE;
    default: return RK_EXIT_FAILURE;
    }
}

/* Opens spec's backend and launches the demo kernel there. *opened says
 * whether the backend itself could be used (so a failure is the launch's). */
static rk_status launch_on(const char *spec, const rk_kernel_desc *kdesc, rk_runtime **rt, rk_kernel **kernel,
                           bool *opened) {
    rk_runtime_desc rdesc = {.backend = spec};
    rk_status s = rk_runtime_create(&rdesc, rt);
    *opened = s == RK_OK;
    if (s != RK_OK) return s;
    s = rk_kernel_launch(*rt, kdesc, kernel);
    if (s != RK_OK) {
        rk_runtime_destroy(*rt);
        *rt = NULL;
    }
    return s;
}

/* The best backend that can run the demo. A backend named by --backend or
 * RK_BACKEND is used or refused; with automatic selection, a backend that
 * cannot run this handler or mode (RK_UNSUPPORTED) gives way to the next one
 * with a device, and the user is told why. Returns an exit code. */
static int launch_demo(const char *backend, const rk_kernel_desc *kdesc, rk_runtime **rt, rk_kernel **kernel) {
    const char *env = getenv("RK_BACKEND");
    bool named = backend || (env && *env && strcmp(env, "auto") != 0);
    bool opened = false;
    rk_status s = launch_on(backend, kdesc, rt, kernel, &opened);
    if (s == RK_OK) return RK_EXIT_OK;
    if (!opened) {
        cli_report_status("demo", "cannot use the backend", s);
        if (!backend && named) fprintf(stderr, "rk demo: the backend was named by RK_BACKEND=%s\n", env);
        return cli_exit_for_selection(s);
    }
    if (named || s != RK_UNSUPPORTED) {
        cli_report_status("demo", "launching the ring kernel failed", s);
        return exit_for_launch(s);
    }
    /* Which backend refused: the automatic choice. Try those after it. */
    char why[512];
    snprintf(why, sizeof why, "%s", rk_last_error());
    const rk_backend *refused = NULL;
    uint32_t device = 0;
    if (rk_select_device(NULL, &refused, &device) != RK_OK) return RK_EXIT_FAILURE;
    bool after = false;
    for (size_t i = 0; i < rk_backend_count(); i++) {
        const rk_backend *b = rk_backend_at(i);
        if (b == refused) {
            after = true;
            continue;
        }
        uint32_t count = 0;
        if (!after || rk_backend_device_count(b, &count) != RK_OK || count == 0) continue;
        fprintf(stderr, "rk demo: %s cannot run this kernel (%s); using %s\n", rk_backend_name(refused), why,
                rk_backend_name(b));
        s = launch_on(rk_backend_name(b), kdesc, rt, kernel, &opened);
        if (s == RK_OK) return RK_EXIT_OK;
        if (s != RK_UNSUPPORTED) break;
        snprintf(why, sizeof why, "%s", rk_last_error());
        refused = b;
    }
    cli_report_status("demo", "launching the ring kernel failed", s);
    return exit_for_launch(s);
}

int rk_cmd_demo(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "wave") == 0) return rk_demo_wave(argc - 1, argv + 1); /* demo_wave.c */
    if (argc > 1 && strcmp(argv[1], "pipeline") == 0) return rk_demo_pipeline(argc - 1, argv + 1); /* demo_pipeline.c */
    demo_options opt = {.seconds = 3.0, .batch = 256, .queue = 4096, .mode = "default"};
    const cli_opt opts[] = {
        {"backend", 'b', CLI_STRING, &opt.backend, "NAME", "cpu, cuda, cuda:1, webgpu, ... (default: RK_BACKEND, else the best)", 0, 0},
        {"seconds", 's', CLI_DOUBLE, &opt.seconds, "S", "how long to send messages (default 3)", 0.001, 31536000},
        {"messages", 'n', CLI_UINT, &opt.messages, "N", "stop after N messages (default: no limit)", 0, 0},
        {"batch", 0, CLI_UINT, &opt.batch, "N", "messages per send/receive call (default 256)", 1, 65536},
        {"queue", 0, CLI_UINT, &opt.queue, "N", "queue capacity, a power of two (default 4096)", 1, DEMO_SEEN_BITS / 2},
        {"mode", 0, CLI_STRING, &opt.mode, "MODE", "default (persistent where the backend has it), persistent,\n"
         "                             traditional or graph", 0, 0},
        {"workers", 0, CLI_UINT, &opt.workers, "N", "CPU worker threads / GPU blocks (default: backend's choice)", 0, 65536},
        {"json", 0, CLI_FLAG, &opt.json, NULL, "print the summary as JSON (no progress line)", 0, 0},
        {"quiet", 'q', CLI_FLAG, &opt.quiet, NULL, "no progress line", 0, 0},
    };
    const cli_command_spec spec = {
        .name = "demo",
        .synopsis = "[options]",
        .summary = "Launches a ring kernel whose handler is the DSL source " DEMO_HANDLER_PATH "\n"
                   "on the best available backend (or the one named), sends it messages in\n"
                   "bursts for a few seconds with single-message round-trip probes in between,\n"
                   "checks every reply, and prints the rate and round-trip p50/p99.\n"
                   "Exits 1 if any reply is wrong or missing, 77 if the backend is unavailable.\n"
                   "'rk demo wave --help' describes the 2-D wave showcase; 'rk demo pipeline --help'\n"
                   "a chain of kernels connected by K2K channels.",
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
    if (opt.batch > opt.queue) opt.batch = opt.queue;

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
    rk_runtime *rt = NULL;
    rk_kernel *kernel = NULL;
    int exit_code = launch_demo(opt.backend, &kdesc, &rt, &kernel);
    if (exit_code != RK_EXIT_OK) return exit_code;

    demo_summary sum = {.mode = opt.mode, .workers = opt.workers};
    rk_device_info info;
    memset(&info, 0, sizeof info);
    rk_context_device_info(rk_runtime_context(rt), &info);
    snprintf(sum.backend, sizeof sum.backend, "%s", rk_runtime_backend_name(rt));
    snprintf(sum.device, sizeof sum.device, "%s", info.name);

    demo_run run;
    if (!demo_run_init(&run, kernel, &opt)) {
        fprintf(stderr, "rk demo: out of memory\n");
        exit_code = RK_EXIT_FAILURE;
        goto out;
    }
    progress_init(&run.progress, stdout, !opt.json && !opt.quiet);
    if (!opt.json)
        printf("rk demo: ring kernel on %s (%s), %s mode, queues of %llu x %zu-byte messages\n", sum.backend,
               sum.device, opt.mode, (unsigned long long)opt.queue, sizeof(demo_request));
    fflush(stdout);

    struct sigaction sa = {.sa_handler = on_interrupt}, old_sa;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_sa);

    rk_status s = rk_kernel_activate(kernel);
    run.start_ns = cli_now_ns();
    run.progress.last_ns = run.start_ns;
    if (s == RK_OK) s = demo_run_loop(&run);
    uint64_t end_ns = cli_now_ns();
    if (s != RK_OK && s != RK_HUNG) cli_report_status("demo", "message loop", s);
    rk_status fs = demo_run_finish(&run);
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
    else if (demo_interrupted) exit_code = RK_EXIT_INTERRUPTED;
    demo_run_free(&run);

out:
    rk_kernel_destroy(kernel);
    rk_runtime_destroy(rt);
    return exit_code;
}
