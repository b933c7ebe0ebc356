/* rk demo pipeline: a chain of ring kernels connected by K2K channels;
 * messages stream through and every one is checked at the sink. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "k2k_pipeline.h"

int rk_demo_pipeline(int argc, char **argv) {
    const char *backend = NULL;
    uint64_t stages = 4, messages = 1000000, queue = 4096;
    bool relay = false;
    const cli_opt opts[] = {
        {"backend", 'b', CLI_STRING, &backend, "NAME", "cpu, cuda, webgpu, ... (default: RK_BACKEND, else the best)", 0, 0},
        {"stages", 0, CLI_UINT, &stages, "N", "kernels in the chain, 1 .. 16 (default 4)", 1, 16},
        {"messages", 'n', CLI_UINT, &messages, "N", "messages to send (default 1000000)", 1, 1e12},
        {"queue", 0, CLI_UINT, &queue, "N", "queue and channel capacity, a power of two (default 4096)", 2, 1048576},
        {"relay", 0, CLI_FLAG, &relay, NULL, "no channels: the host relays each message between the kernels", 0, 0},
    };
    const cli_command_spec spec = {
        .name = "demo pipeline",
        .synopsis = "[options]",
        .summary = "Launches a chain of ring kernels (examples/handlers/pipeline_handler.c): each\n"
                   "stage marks a message and emits it to the next over a K2K channel; the last\n"
                   "answers the host, which checks that every message passed every stage once,\n"
                   "in order. Exits 1 on a wrong or missing message, 77 if the backend is\n"
                   "unavailable or has no channels.",
        .opts = opts,
        .opt_count = sizeof opts / sizeof opts[0],
    };
    switch (cli_parse(&spec, argc, argv, NULL, NULL)) {
    case CLI_PARSE_HELP: return RK_EXIT_OK;
    case CLI_PARSE_ERROR: return RK_EXIT_USAGE;
    case CLI_PARSE_OK: break;
    }
    if (stages < 1 || stages > PIPE_MAX_STAGES) return cli_usage_error("demo pipeline", "--stages must be 1 .. 16");
    if (queue < 2 || queue > (1u << 20) || (queue & (queue - 1)))
        return cli_usage_error("demo pipeline", "--queue must be a power of two, 2 .. 1048576");
    rk_runtime *rt = NULL;
    rk_runtime_desc d = {.backend = backend};
    rk_status s = rk_runtime_create(&d, &rt);
    if (s != RK_OK) {
        cli_report_status("demo pipeline", "cannot use the backend", s);
        return cli_exit_for_selection(s);
    }
    pipeline p;
    s = pipeline_open(&p, rt, (unsigned)stages, relay, (uint32_t)queue);
    if (s != RK_OK) {
        cli_report_status("demo pipeline", "cannot build the chain", s);
        rk_runtime_destroy(rt);
        return s == RK_UNSUPPORTED ? RK_EXIT_UNAVAILABLE : RK_EXIT_FAILURE;
    }
    printf("rk demo pipeline: %llu kernels on %s, %s, %llu messages of %zu bytes\n", (unsigned long long)stages,
           rk_runtime_backend_name(rt), relay ? "relayed by the host" : "connected by K2K channels",
           (unsigned long long)messages, sizeof(pipe_msg));
    pipe_result r;
    s = pipeline_stream(&p, messages, 256, &r);
    pipeline_close(&p);
    rk_runtime_destroy(rt);
    if (s != RK_OK) cli_report_status("demo pipeline", "streaming", s);
    printf("  messages     %llu arrived, %llu wrong, %llu missing\n", (unsigned long long)r.messages,
           (unsigned long long)r.wrong, (unsigned long long)r.missing);
    printf("  rate         %.3f M msg/s through %llu stages (%.2f s)\n",
           r.seconds > 0 ? (double)r.messages / r.seconds / 1e6 : 0.0, (unsigned long long)stages, r.seconds);
    return s == RK_OK && r.wrong == 0 && r.missing == 0 ? RK_EXIT_OK : RK_EXIT_FAILURE;
}
