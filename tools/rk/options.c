/* Command-line option parsing shared by every rk command, and the help text
 * generated from the same option table so the two never disagree. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_usage_error(const char *command, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "rk %s: ", command);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(see 'rk %s --help')\n", command);
    return RK_EXIT_USAGE;
}

void cli_report_status(const char *command, const char *what, rk_status status) {
    const char *details = rk_last_error();
    fprintf(stderr, "rk %s: %s: %s%s%s\n", command, what, rk_status_name(status), details[0] ? ": " : "",
            details[0] ? details : rk_status_message(status));
}

int cli_exit_for_selection(rk_status status) {
    switch (status) {
    case RK_OK: return RK_EXIT_OK;
    case RK_BACKEND_UNAVAILABLE:
    case RK_NO_DEVICE: return RK_EXIT_UNAVAILABLE;
    case RK_UNKNOWN_BACKEND:
    case RK_INVALID_ARGUMENT: return RK_EXIT_USAGE;
    default: return RK_EXIT_FAILURE;
    }
}

void cli_print_help(const cli_command_spec *spec) {
    printf("usage: rk %s %s\n\n%s\n", spec->name, spec->synopsis, spec->summary);
    printf("\noptions:\n");
    for (size_t i = 0; i < spec->opt_count; i++) {
        const cli_opt *o = &spec->opts[i];
        char left[64];
        int n = snprintf(left, sizeof left, "%c%c%s--%s", o->short_name ? '-' : ' ', o->short_name ? o->short_name : ' ',
                         o->short_name ? ", " : "  ", o->name);
        if (o->kind != CLI_FLAG && n > 0 && (size_t)n < sizeof left)
            snprintf(left + n, sizeof left - (size_t)n, " %s", o->metavar ? o->metavar : "VALUE");
        printf("  %-26s %s\n", left, o->help);
    }
    printf("  %-26s %s\n", "-h, --help", "show this help and exit");
}

static const cli_opt *find_long(const cli_command_spec *spec, const char *name, size_t len) {
    for (size_t i = 0; i < spec->opt_count; i++)
        if (strlen(spec->opts[i].name) == len && strncmp(spec->opts[i].name, name, len) == 0) return &spec->opts[i];
    return NULL;
}

static const cli_opt *find_short(const cli_command_spec *spec, char c) {
    for (size_t i = 0; i < spec->opt_count; i++)
        if (spec->opts[i].short_name == c) return &spec->opts[i];
    return NULL;
}

static bool has_range(const cli_opt *o) { return o->min != 0 || o->max != 0; }

/* A usage error for a number that parsed but is outside the option's range. */
static bool out_of_range(const cli_command_spec *spec, const cli_opt *o, const char *value) {
    if (has_range(o))
        cli_usage_error(spec->name, "--%s: %s is out of range (%.15g to %.15g)", o->name, value, o->min, o->max);
    else
        cli_usage_error(spec->name, "--%s: %s is out of range for a non-negative %s", o->name, value,
                        o->kind == CLI_UINT ? "64-bit integer" : "number");
    return false;
}

/* Stores value into the option's variable; false (after printing why) if it
 * does not parse or is out of range. */
static bool store(const cli_command_spec *spec, const cli_opt *o, const char *value) {
    char *end = NULL;
    errno = 0;
    switch (o->kind) {
    case CLI_FLAG: *(bool *)o->out = true; return true;
    case CLI_STRING: *(const char **)o->out = value; return true;
    case CLI_UINT: {
        /* digits only: strtoull alone takes " -1" as 2^64 - 1 */
        if (value[0] < '0' || value[0] > '9') break;
        unsigned long long v = strtoull(value, &end, 10);
        if (*end) break;
        if (errno == ERANGE || (has_range(o) && ((double)v < o->min || (double)v > o->max)))
            return out_of_range(spec, o, value);
        *(uint64_t *)o->out = v;
        return true;
    }
    case CLI_DOUBLE: {
        /* decimal only: strtod also takes "0x1p3", "infinity" and "nan(...)" */
        if (value[strspn(value, "0123456789.eE+-")] != '\0') break;
        double v = strtod(value, &end);
        if (end == value || *end) break;
        if (!isfinite(v)) {
            cli_usage_error(spec->name, "--%s: '%s' is not a finite number", o->name, value);
            return false;
        }
        if (errno == ERANGE || v < 0 || (has_range(o) && (v < o->min || v > o->max))) return out_of_range(spec, o, value);
        *(double *)o->out = v;
        return true;
    }
    }
    cli_usage_error(spec->name, "--%s: '%s' is not a valid %s", o->name, value,
                    o->kind == CLI_UINT ? "non-negative integer" : "non-negative number");
    return false;
}

cli_parse_result cli_parse(const cli_command_spec *spec, int argc, char **argv, const char **positional,
                           size_t *positional_count) {
    size_t npos = 0;
    bool options_done = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const cli_opt *o = NULL;
        const char *value = NULL;
        if (!options_done && strcmp(arg, "--") == 0) {
            options_done = true;
            continue;
        }
        if (!options_done && (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0)) {
            cli_print_help(spec);
            return CLI_PARSE_HELP;
        }
        if (!options_done && arg[0] == '-' && arg[1] == '-') {
            const char *name = arg + 2;
            const char *eq = strchr(name, '=');
            o = find_long(spec, name, eq ? (size_t)(eq - name) : strlen(name));
            if (!o) {
                cli_usage_error(spec->name, "unknown option '%s'", arg);
                return CLI_PARSE_ERROR;
            }
            if (eq) {
                if (o->kind == CLI_FLAG) {
                    cli_usage_error(spec->name, "--%s takes no value", o->name);
                    return CLI_PARSE_ERROR;
                }
                value = eq + 1;
            }
        } else if (!options_done && arg[0] == '-' && arg[1] != '\0') {
            o = arg[2] == '\0' ? find_short(spec, arg[1]) : NULL;
            if (!o) {
                cli_usage_error(spec->name, "unknown option '%s'", arg);
                return CLI_PARSE_ERROR;
            }
        } else {
            if (npos >= spec->max_positional) {
                cli_usage_error(spec->name, "unexpected argument '%s'", arg);
                return CLI_PARSE_ERROR;
            }
            if (positional) positional[npos] = arg;
            npos++;
            continue;
        }
        if (o->kind != CLI_FLAG && !value) {
            if (i + 1 >= argc) {
                cli_usage_error(spec->name, "--%s needs a value (%s)", o->name, o->metavar ? o->metavar : "VALUE");
                return CLI_PARSE_ERROR;
            }
            value = argv[++i];
        }
        if (!store(spec, o, value)) return CLI_PARSE_ERROR;
    }
    if (positional_count) *positional_count = npos;
    return CLI_PARSE_OK;
}
