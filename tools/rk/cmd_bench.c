/* rk bench: runs benchmark groups and prints one report (table or JSON)
 * that names the device, date, commit and build type. */
#include <stdio.h>
#include <string.h>

#include "bench_report.h"
#include "cli.h"
#include "commands.h"
#include "showcase_cli.h"

typedef struct bench_group {
    const char *name;
    int (*run)(const bench_config *cfg, bench_report *rep, bool requested);
    const char *summary;
} bench_group;

static const bench_group groups[] = {
    {"queue", bench_group_queue, "lock-free SPSC queue between two threads"},
    {"kernel", bench_group_kernel, "ring kernel: host send -> handler -> host receive"},
    {"cuda", bench_group_cuda, "CUDA device layer and ring kernels (needs a GPU)"},
    {"transpile", bench_group_transpile, "the DSL transpiler"},
    {"k2k", bench_group_k2k, "4-stage chain: K2K channels vs the host relaying (ratio)"},
};
enum { GROUP_COUNT = sizeof groups / sizeof groups[0] };

static void host_cpu_name(char *out, size_t size) {
    const rk_backend *cpu = NULL;
    rk_device_info info;
    snprintf(out, size, "unknown");
    if (rk_backend_find("cpu", &cpu) == RK_OK && rk_backend_device_info(cpu, 0, &info) == RK_OK) {
        int n = snprintf(out, size, "%s", info.name);
        if (n >= 0 && (size_t)n < size) snprintf(out + n, size - (size_t)n, " (%u cores)", info.multiprocessors);
    }
}

/* Combines group exit codes: a failure beats "unavailable", which beats success. */
static int worse(int a, int b) {
    if (a == RK_EXIT_FAILURE || b == RK_EXIT_FAILURE) return RK_EXIT_FAILURE;
    return a != RK_EXIT_OK ? a : b;
}

int rk_cmd_bench(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "seed-table") == 0) return rk_bench_seed_table_cmd(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "soak") == 0) return rk_bench_soak_cmd(argc - 1, argv + 1); /* bench_soak.c */
    bench_config cfg = {0};
    const cli_opt opts[] = {
        {"json", 0, CLI_FLAG, &cfg.json, NULL, "print one JSON object instead of a table", 0, 0},
        {"backend", 'b', CLI_STRING, &cfg.backend, "NAME", "backend for the kernel group (default: cpu, or RK_BACKEND)", 0, 0},
        {"messages", 'n', CLI_UINT, &cfg.messages, "N", "messages per throughput benchmark (default: each one's own)", 0, 1e12},
        {"quick", 0, CLI_FLAG, &cfg.quick, NULL, "small counts: checks that everything runs; figures mean little", 0, 0},
        {"pairs", 0, CLI_UINT, &cfg.pairs, "N", "queue, kernel: measure each row and its floor N times in turn and report the median pair (default 1)", 1, 15},
        {"cpus", 0, CLI_STRING, &cfg.cpus, "auto|none|A,B", "queue, kernel (cpu): the two CPUs each row's two threads and its floor's run on (default auto: two of different cores)", 0, 0},
        {"handler", 0, CLI_STRING, &cfg.handler_file, "FILE", "kernel group: measure this DSL handler file instead", 0, 0},
        {"handler-name", 0, CLI_STRING, &cfg.handler_name, "NAME", "with --handler: which RK_HANDLER (default: the first)", 0, 0},
        {"requests", 0, CLI_STRING, &cfg.requests_file, "FILE", "with --handler: raw requests to send in turn (default: a counter)", 0, 0},
    };
    const cli_command_spec spec = {
        .name = "bench",
        .synopsis = "[queue|kernel|cuda|transpile|all ...] [options]",
        .summary = "Runs benchmark groups (default: all that this build has; groups whose device\n"
                   "is missing are skipped) and prints the figures with the device, date, commit\n"
                   "and build type. Groups:\n"
                   "  queue      lock-free SPSC queue between two threads\n"
                   "  kernel     ring kernel: host send -> handler -> host receive, in batches\n"
                   "             and one message at a time (round trip p50/p99)\n"
                   "  cuda       CUDA device layer and ring kernels (needs a GPU)\n"
                   "  transpile  the DSL transpiler\n"
                   "'kernel --handler FILE.c' measures your own DSL handler instead: batches,\n"
                   "round trips and rk_kernel_call from 1 and 4 threads (docs/applications.md).\n"
                   "Exits 1 if a benchmark fails or gives wrong results, 77 if a group that was\n"
                   "asked for by name cannot run here. 'rk bench seed-table --help' describes the\n"
                   "persistent-vs-traditional table on the wave showcase.",
        .opts = opts,
        .opt_count = sizeof opts / sizeof opts[0],
        .max_positional = GROUP_COUNT + 1,
    };
    const char *words[GROUP_COUNT + 1];
    size_t nwords = 0;
    switch (cli_parse(&spec, argc, argv, words, &nwords)) {
    case CLI_PARSE_HELP: return RK_EXIT_OK;
    case CLI_PARSE_ERROR: return RK_EXIT_USAGE;
    case CLI_PARSE_OK: break;
    }

    bool selected[GROUP_COUNT] = {false}, requested[GROUP_COUNT] = {false};
    for (size_t w = 0; w < nwords; w++) {
        bool known = false;
        for (size_t g = 0; g < GROUP_COUNT; g++) {
            if (strcmp(words[w], "all") == 0 || strcmp(words[w], groups[g].name) == 0) {
                selected[g] = true;
                requested[g] = strcmp(words[w], "all") != 0;
                known = true;
            }
        }
        if (!known)
            return cli_usage_error("bench", "unknown group '%s' (queue, kernel, cuda, transpile, k2k or all)", words[w]);
    }
    if ((cfg.handler_name || cfg.requests_file) && !cfg.handler_file)
        return cli_usage_error("bench", "--handler-name and --requests go with --handler FILE");
    if (cfg.handler_file) {
        /* The user's handler is a kernel-group measurement: only that group runs. */
        for (size_t g = 0; g < GROUP_COUNT; g++) {
            if (selected[g] && strcmp(groups[g].name, "kernel") != 0)
                return cli_usage_error("bench", "--handler measures the kernel group only (not '%s')", groups[g].name);
            selected[g] = requested[g] = strcmp(groups[g].name, "kernel") == 0;
        }
    } else if (nwords == 0) {
        for (size_t g = 0; g < GROUP_COUNT; g++) selected[g] = true;
    }

    bench_report rep;
    memset(&rep, 0, sizeof rep);
    host_cpu_name(rep.host_cpu, sizeof rep.host_cpu);
    char date[64];
    cli_utc_timestamp(date, sizeof date);

    int rc = RK_EXIT_OK;
    for (size_t g = 0; g < GROUP_COUNT; g++)
        if (selected[g]) rc = worse(rc, groups[g].run(&cfg, &rep, requested[g]));

    /* A report with nothing in it (the one group asked for could not run) is noise. */
    if (rep.count == 0 && rc != RK_EXIT_OK) {
        bench_report_free(&rep);
        return rc;
    }
    if (cfg.json)
        bench_report_print_json(&rep, date);
    else
        bench_report_print_table(&rep, date);
    bench_report_free(&rep);
    return rc;
}
