/* rk: the ringkernel command-line tool. Dispatches to one cmd_*.c per command. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"info", rk_cmd_info, "list backends, their devices, and why a backend is unavailable"},
    {"demo", rk_cmd_demo, "run a persistent ring kernel on the best backend and check every reply"},
    {"bench", rk_cmd_bench, "queue, actor, CUDA and transpiler benchmarks (table or --json)"},
    {"transpile", rk_cmd_transpile, "translate DSL C kernels to CUDA C, WGSL or MSL"},
    {"conformance", rk_cmd_conformance, "run the conformance suite on each backend: check x backend table"},
    {"check", rk_cmd_check, "check DSL sources against every target (the launch-time dialect check)"},
    {"header", rk_cmd_header, "write a host C header with a DSL handler's message types"},
};
enum { COMMAND_COUNT = sizeof commands / sizeof commands[0] };

static void print_usage(FILE *out) {
    fprintf(out,
            "usage: rk <command> [options]\n"
            "       rk <command> --help\n"
            "       rk --version\n\n"
            "ringkernel %s: GPU-native persistent actors on CUDA, WebGPU and the CPU (Metal: macOS only, not yet run on Apple hardware).\n\n"
            "commands:\n",
            rk_version());
    for (size_t i = 0; i < COMMAND_COUNT; i++) fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].summary);
    fprintf(out,
            "\nalso: rk demo wave (the steered wave simulation), rk demo pipeline (kernels in a chain),\n"
            "      rk bench seed-table (persistent vs traditional), rk bench k2k (kernel-to-kernel hops)\n"
            "\nenvironment:\n"
            "  RK_BACKEND            backend for automatic selection (cpu, cuda, cuda:1, webgpu, ...)\n"
            "  RK_CACHE_DIR          compiled-handler cache (default $XDG_CACHE_HOME/ringkernel)\n"
            "  CC                    C compiler the CPU backend compiles handlers with (default cc)\n"
            "  RK_CPU_THREADS        CPU backend worker threads; RK_CPU_SPIN_US: spin before sleeping\n"
            "  RK_CPU_WATCHDOG_MS    CPU handler without progress for this long: RK_HUNG (default 10000)\n"
            "  RK_CUDA_WATCHDOG_MS   the same for persistent CUDA kernels\n"
            "  RK_COMPILE_SECONDS, RK_COMPILE_MEMORY_MB   limits of one handler compile\n"
            "  RK_WEBGPU_LIB, RK_CUDA_LIBRARY, RK_NVRTC_LIBRARY   runtime libraries to load instead of the default\n"
            "\nexit codes: 0 success, 1 failure, 2 usage error, 77 requested backend unavailable,\n"
            "            130 interrupted (Ctrl-C)\n");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        print_usage(stderr);
        return RK_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0) {
        print_usage(stdout);
        return RK_EXIT_OK;
    }
    if (strcmp(name, "help") == 0) {
        if (argc < 3) {
            print_usage(stdout);
            return RK_EXIT_OK;
        }
        /* "rk help demo" is "rk demo --help". */
        for (size_t i = 0; i < COMMAND_COUNT; i++) {
            if (strcmp(argv[2], commands[i].name) == 0) {
                char *help_argv[] = {argv[2], "--help", NULL};
                return commands[i].run(2, help_argv);
            }
        }
        fprintf(stderr, "rk: no command '%s' (try 'rk --help')\n", argv[2]);
        return RK_EXIT_USAGE;
    }
    if (strcmp(name, "-V") == 0 || strcmp(name, "--version") == 0) {
        printf("rk %s (commit %s, %s build)\n", rk_version(), cli_git_describe(), cli_build_type());
        return RK_EXIT_OK;
    }
    for (size_t i = 0; i < COMMAND_COUNT; i++)
        if (strcmp(name, commands[i].name) == 0) return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "rk: unknown command '%s' (try 'rk --help')\n", name);
    return RK_EXIT_USAGE;
}
