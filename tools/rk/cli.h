/* What the rk command's files share: exit codes, option parsing, build facts
 * and small utilities. Output helpers (tables, JSON) are in output.h. */
#ifndef RK_TOOL_CLI_H
#define RK_TOOL_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ringkernel/ringkernel.h"

/* Exit codes scripts can rely on. */
enum {
    RK_EXIT_OK = 0,
    RK_EXIT_FAILURE = 1,     /* the command ran and something went wrong */
    RK_EXIT_USAGE = 2,       /* unknown command or option, bad option value */
    RK_EXIT_UNAVAILABLE = 77, /* the requested backend cannot run here */
    RK_EXIT_INTERRUPTED = 130 /* stopped by SIGINT (Ctrl-C), as shells report 128 + 2 */
};

/* ---- options (options.c) ----------------------------------------------- */

typedef enum cli_opt_kind {
    CLI_FLAG,   /* bool: present or not */
    CLI_STRING, /* const char *, points into argv */
    CLI_UINT,   /* uint64_t: decimal digits only */
    CLI_DOUBLE, /* double: finite, >= 0 */
} cli_opt_kind;

typedef struct cli_opt {
    const char *name;    /* long name without "--" */
    char short_name;     /* 0 for none */
    cli_opt_kind kind;
    void *out;           /* bool*, const char**, uint64_t* or double* */
    const char *metavar; /* "N", "NAME"; ignored for flags */
    const char *help;
    /* Numbers: the accepted range, both ends included; min = max = 0 means
     * any finite value >= 0. A value outside it is a usage error (exit 2). */
    double min, max;
} cli_opt;

typedef struct cli_command_spec {
    const char *name;      /* "demo" */
    const char *synopsis;  /* "[options]" or "[GROUP...] [options]" */
    const char *summary;   /* one paragraph shown by --help */
    const cli_opt *opts;
    size_t opt_count;
    size_t max_positional; /* extra words allowed after the command */
} cli_command_spec;

typedef enum cli_parse_result {
    CLI_PARSE_OK,    /* go on */
    CLI_PARSE_HELP,  /* --help was printed: exit 0 */
    CLI_PARSE_ERROR, /* a usage error was printed to stderr: exit 2 */
} cli_parse_result;

/* Parses argv[1..] ("--name value", "--name=value", "-x value", "-h",
 * "--help", "--" ends options). Positional words are moved, in order, to
 * positional[0..*positional_count). */
cli_parse_result cli_parse(const cli_command_spec *spec, int argc, char **argv, const char **positional,
                           size_t *positional_count);

void cli_print_help(const cli_command_spec *spec);

/* Prints "rk CMD: message" to stderr and returns RK_EXIT_USAGE. */
int cli_usage_error(const char *command, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints "rk CMD: what: STATUS_NAME: details" to stderr. */
void cli_report_status(const char *command, const char *what, rk_status status);

/* The exit code a failed backend selection deserves: 77 when the backend
 * exists but cannot run here, 2 when the name is wrong, else 1. */
int cli_exit_for_selection(rk_status status);

/* ---- build facts (build_info.c) ------------------------------------------ */

const char *cli_git_describe(void); /* `git describe --always --dirty` at configure time, or "unknown" */
const char *cli_build_type(void);   /* "Release", "RelWithDebInfo", ... */
const char *cli_compiler(void);     /* "GNU 12.2.0" */
const char *cli_sanitizers(void);   /* "" or "address,undefined" */

/* ---- small utilities (util.c) --------------------------------------------- */

uint64_t cli_now_ns(void);
/* "2026-11-21 23:59:01 UTC" */
void cli_utc_timestamp(char *out, size_t size);
/* "12.3 M", "850 k", "17" */
void cli_format_count(double value, char *out, size_t size);
/* "1.25 us", "3.4 ms", "850 ns" */
void cli_format_duration_ns(double ns, char *out, size_t size);
/* "7.8 GiB" */
void cli_format_bytes(uint64_t bytes, char *out, size_t size);
/* The p-th percentile (0..100) of n values, sorting them in place. */
double cli_percentile_u64(uint64_t *values, size_t n, double p);

#endif
