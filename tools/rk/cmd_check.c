/* rk check: is a DSL source in the one dialect every backend runs? Runs the
 * transpiler for every target with an emitter (CUDA and WGSL), as
 * rk_kernel_launch does for a DSL handler, and prints what each refuses.
 *
 *   rk check FILE... [-I DIR]... [-D NAME[=VALUE]]...
 *
 * A source that uses features only the CPU backend has so far (K2K
 * channels) passes, as it does at launch, with a note saying so.
 *
 * Exit codes: 0 every file passes every target, 1 some target refuses
 * something (or a file cannot be read), 2 usage error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "handler_file.h"

static const rk_transpile_target targets[] = {RK_TARGET_CUDA, RK_TARGET_WGSL};
enum { TARGETS = sizeof targets / sizeof targets[0], MAX_FILES = 256 };

static void usage(FILE *f) {
    fputs("usage: rk check FILE... [-I DIR]... [-D NAME[=VALUE]]...\n"
          "\n"
          "Checks DSL kernel and handler sources against every transpiler target (cuda, wgsl),\n"
          "the checks rk_kernel_launch applies to a DSL handler on every backend. Each file is\n"
          "read as a handler file is: after <ringkernel/dsl.h>, its directory searched by\n"
          "#include \"...\". Problems are printed like a compiler's, once per target that\n"
          "refuses them.\n"
          "\n"
          "exit status: 0 all pass, 1 a target refuses something or a file is unreadable,\n"
          "2 usage error\n",
          f);
}

/* 0 when every target takes the file. */
static int check_file(const char *path, const handler_options *o) {
    char *text = handler_read("check", path);
    if (!text) return 1;
    rk_transpile_result *res[TARGETS] = {NULL};
    bool failed[TARGETS];
    int bad = 0;
    for (size_t t = 0; t < TARGETS; t++) {
        rk_status s = handler_transpile(path, text, o, targets[t], &res[t]);
        failed[t] = s != RK_OK;
        if (failed[t] && !res[t]) fprintf(stderr, "%s: %s: %s\n", path, rk_status_name(s), rk_last_error());
        bad += failed[t];
    }
    for (size_t t = 0; t < TARGETS; t++) {
        if (!failed[t] || !res[t]) continue;
        const char *text_t = rk_transpile_diagnostics_text(res[t]);
        /* Said by an earlier target already: name both instead of repeating. */
        bool same_as_earlier = false;
        for (size_t e = 0; e < t; e++)
            if (failed[e] && res[e] && strcmp(rk_transpile_diagnostics_text(res[e]), text_t) == 0) same_as_earlier = true;
        if (same_as_earlier) {
            fprintf(stderr, "%s: the %s target refuses the same\n", path, rk_transpile_target_name(targets[t]));
            continue;
        }
        fprintf(stderr, "%s: the %s target refuses it:\n%s", path, rk_transpile_target_name(targets[t]), text_t);
    }
    if (!bad) {
        size_t n = rk_transpile_kernel_count(res[0]);
        printf("%s: ok for cuda and wgsl (%zu entry point%s)\n", path, n, n == 1 ? "" : "s");
    }
    for (size_t t = 0; t < TARGETS; t++) rk_transpile_result_destroy(res[t]);
    free(text);
    return bad ? 1 : 0;
}

int rk_cmd_check(int argc, char **argv) {
    handler_options o;
    memset(&o, 0, sizeof o);
    const char *files[MAX_FILES];
    size_t nfiles = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return RK_EXIT_OK;
        }
        int taken = handler_option("check", argc, argv, &i, &o);
        if (taken < 0) return RK_EXIT_USAGE;
        if (taken) continue;
        if (argv[i][0] == '-') return cli_usage_error("check", "unknown option '%s'", argv[i]);
        if (nfiles == MAX_FILES) return cli_usage_error("check", "more than %d files", MAX_FILES);
        files[nfiles++] = argv[i];
    }
    if (!nfiles) return cli_usage_error("check", "no FILE given");
    int failed = 0;
    for (size_t f = 0; f < nfiles; f++) failed |= check_file(files[f], &o);
    return failed ? RK_EXIT_FAILURE : RK_EXIT_OK;
}
