/* rk transpile: DSL C kernel source -> CUDA C, or another target the library
 * has an emitter for (the library's rk_transpile).
 *
 *   rk transpile [--target cuda|wgsl|msl] FILE.c [-o OUT] [-I DIR]... [-D NAME[=VALUE]]...
 *                [--kind auto|global|stencil|handler] [--tile WxH[xD]] [--halo N]
 *
 * Exit codes: 0 transpiled (warnings may be printed), 1 the source has
 * errors (printed like a compiler's) or a file could not be read or written,
 * 2 usage error. Options are parsed here rather than with cli_parse because
 * -I and -D repeat. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "ringkernel/transpile.h"

enum { EXIT_OK = 0, EXIT_DIAGNOSTICS = 1, EXIT_USAGE = 2, MAX_LIST = 256 };

static void usage(FILE *f) {
    fputs("usage: rk transpile [--target cuda|wgsl|msl] FILE.c [-o OUT] [-I DIR]... [-D NAME[=VALUE]]...\n"
          "                    [--kind auto|global|stencil|handler] [--tile WxH[xD]] [--halo N]\n"
          "\n"
          "Translates a kernel written in ringkernel's C subset (against <ringkernel/dsl.h>)\n"
          "into a GPU kernel language. FILE may be '-' for standard input. Errors are printed\n"
          "like a compiler's (file:line:col, the source line and a caret), all of them.\n"
          "\n"
          "options:\n"
          "  -t, --target NAME   output language: cuda (default), wgsl or msl; a target whose\n"
          "                      emitter is not in this build is a usage error\n"
          "  -o, --output FILE   write the result to FILE (default: standard output)\n"
          "  -I DIR              search DIR for #include files (repeatable)\n"
          "  -D NAME[=VALUE]     define a macro (repeatable)\n"
          "  -k, --kind KIND     require every entry point to be of KIND: global, stencil or\n"
          "                      handler (default auto: decided per function)\n"
          "      --tile WxH[xD]  stencil tile = launch block (default 16x16, or 8x8x8 in 3-D)\n"
          "      --halo N        stencil halo in cells (default: the largest offset used)\n"
          "  -q, --quiet         do not print the summary of entry points\n"
          "  -h, --help          show this help\n"
          "\n"
          "exit status: 0 success, 1 errors in the source or an unreadable file, 2 usage error\n",
          f);
}

static int usage_error(const char *fmt, const char *arg) {
    fprintf(stderr, "rk transpile: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(see rk transpile --help)\n");
    return EXIT_USAGE;
}

/* "16x16" or "8x8x4": each part 1..1024. */
static bool parse_tile(const char *s, uint32_t tile[3]) {
    tile[0] = tile[1] = tile[2] = 0;
    for (int i = 0; i < 3; i++) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(s, &end, 10);
        if (end == s || errno || v == 0 || v > 1024 || *s == '-' || *s == '+') return false;
        tile[i] = (uint32_t)v;
        if (*end == '\0') return i >= 1;
        if (*end != 'x' && *end != 'X') return false;
        s = end + 1;
    }
    return false;
}

static bool parse_kind(const char *s, rk_transpile_kind *kind) {
    static const struct {
        const char *name;
        rk_transpile_kind kind;
    } kinds[] = {{"auto", RK_TRANSPILE_AUTO},
                 {"global", RK_TRANSPILE_GLOBAL},
                 {"stencil", RK_TRANSPILE_STENCIL},
                 {"handler", RK_TRANSPILE_HANDLER}};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(s, kinds[i].name) == 0) {
            *kind = kinds[i].kind;
            return true;
        }
    return false;
}

static char *read_stream(FILE *f, size_t *size) {
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    if (!buf) return NULL;
    size_t n;
    while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (cap - len - 1 == 0) {
            char *bigger = realloc(buf, cap * 2);
            if (!bigger) {
                free(buf);
                return NULL;
            }
            buf = bigger;
            cap *= 2;
        }
    }
    buf[len] = '\0';
    *size = len;
    return buf;
}

/* Source text ends at its first NUL byte: say where it is rather than drop the rest. */
static bool report_nul(const char *text, size_t size, const char *name) {
    const char *nul = memchr(text, '\0', size);
    if (!nul) return false;
    int line = 1;
    const char *line_start = text;
    for (const char *p = text; p < nul; p++)
        if (*p == '\n') {
            line++;
            line_start = p + 1;
        }
    fprintf(stderr, "%s:%d:%d: error: a NUL byte in source text (is this a binary file?)\n", name, line,
            (int)(nul - line_start) + 1);
    return true;
}

static int write_output(const char *path, const char *text, size_t size) {
    FILE *f = path ? fopen(path, "wb") : stdout;
    if (!f) {
        fprintf(stderr, "rk transpile: cannot write '%s': %s\n", path, strerror(errno));
        return EXIT_DIAGNOSTICS;
    }
    bool ok = fwrite(text, 1, size, f) == size;
    if (path) ok = fclose(f) == 0 && ok;
    else ok = fflush(f) == 0 && ok;
    if (!ok) {
        fprintf(stderr, "rk transpile: writing '%s' failed: %s\n", path ? path : "<stdout>", strerror(errno));
        if (path) remove(path);
        return EXIT_DIAGNOSTICS;
    }
    return EXIT_OK;
}

static void print_summary(const rk_transpile_result *r) {
    for (size_t i = 0; i < rk_transpile_kernel_count(r); i++) {
        const rk_transpiled_kernel *k = rk_transpile_kernel(r, i);
        fprintf(stderr, "rk transpile: %s: %s", k->name, rk_transpile_kind_name(k->kind));
        if (k->kind == RK_TRANSPILE_STENCIL)
            fprintf(stderr, ", %u-D, block %ux%ux%u, halo %u, extra arguments nx, ny%s", k->dims, k->tile[0],
                    k->tile[1], k->tile[2], k->halo, k->dims == 3 ? ", nz" : "");
        if (k->kind == RK_TRANSPILE_HANDLER)
            fprintf(stderr, ", request %u B, reply %u B, state %u B", k->request_size, k->reply_size, k->state_size);
        fputc('\n', stderr);
    }
}

/* Handler files (examples/handlers/) are written to be read after
 * <ringkernel/dsl.h>, as rk_kernel_launch and rk check read them; given to
 * rk transpile as they are, their first error is a missing type. Say so. */
static void hint_handler_file(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return;
    char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    if (strstr(buf, "RK_HANDLER") && !strstr(buf, "<ringkernel/dsl"))
        fprintf(stderr,
                "rk transpile: %s has RK_HANDLER but does not include <ringkernel/dsl.h>: a handler file is read "
                "after it (as rk_kernel_launch and 'rk check %s' read it); add '#include <ringkernel/dsl.h>' to "
                "transpile it alone\n",
                path, path);
}

int rk_cmd_transpile(int argc, char **argv) {
    const char *includes[MAX_LIST], *defines[MAX_LIST];
    size_t include_count = 0, define_count = 0;
    const char *input = NULL, *output = NULL;
    rk_transpile_desc desc = {.target = RK_TARGET_CUDA};
    bool quiet = false;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        /* Options that take a value accept "-o X", "--output X" and "--output=X";
         * -I and -D also "-IDIR" and "-DNAME". */
        const char *value = NULL;
        const char *name = a;
        char namebuf[32];
        if (a[0] == '-' && a[1] == '-' && strchr(a, '=')) {
            size_t n = (size_t)(strchr(a, '=') - a);
            if (n >= sizeof namebuf) return usage_error("unknown option '%s'", a);
            memcpy(namebuf, a, n);
            namebuf[n] = '\0';
            name = namebuf;
            value = strchr(a, '=') + 1;
        }
#define TAKES(long_, short_) (strcmp(name, long_) == 0 || (short_[0] && strcmp(name, short_) == 0))
#define VALUE()                                                              \
    do {                                                                     \
        if (!value) {                                                        \
            if (i + 1 >= argc) return usage_error("'%s' needs a value", a); \
            value = argv[++i];                                               \
        }                                                                    \
    } while (0)
        if (TAKES("--help", "-h")) {
            usage(stdout);
            return EXIT_OK;
        } else if (TAKES("--quiet", "-q")) {
            quiet = true;
        } else if (TAKES("--target", "-t")) {
            VALUE();
            if (strcmp(value, "cuda") == 0)
                desc.target = RK_TARGET_CUDA;
            else if (strcmp(value, "wgsl") == 0)
                desc.target = RK_TARGET_WGSL;
            else if (strcmp(value, "msl") == 0)
                desc.target = RK_TARGET_MSL;
            else
                return usage_error("unknown target '%s' (cuda, wgsl or msl)", value);
        } else if (TAKES("--output", "-o")) {
            VALUE();
            output = value;
        } else if (TAKES("--kind", "-k")) {
            VALUE();
            if (!parse_kind(value, &desc.kind)) return usage_error("unknown kind '%s' (auto, global, stencil or handler)", value);
        } else if (TAKES("--tile", "")) {
            VALUE();
            if (!parse_tile(value, desc.stencil.tile)) return usage_error("--tile wants WxH or WxHxD (1..1024 each), not '%s'", value);
        } else if (TAKES("--halo", "")) {
            VALUE();
            char *end;
            errno = 0;
            unsigned long h = strtoul(value, &end, 10);
            if (end == value || *end || errno || h == 0 || h > 64 || *value == '-')
                return usage_error("--halo wants a number from 1 to 64, not '%s'", value);
            desc.stencil.halo = (uint32_t)h;
        } else if (strncmp(a, "-I", 2) == 0 || strcmp(name, "--include") == 0) {
            if (a[1] == 'I' && a[2]) value = a + 2;
            VALUE();
            if (include_count == MAX_LIST) return usage_error("too many -I options%s", "");
            includes[include_count++] = value;
        } else if (strncmp(a, "-D", 2) == 0 || strcmp(name, "--define") == 0) {
            if (a[1] == 'D' && a[2]) value = a + 2;
            VALUE();
            if (define_count == MAX_LIST) return usage_error("too many -D options%s", "");
            defines[define_count++] = value;
        } else if (a[0] == '-' && a[1] != '\0') {
            return usage_error("unknown option '%s'", a);
        } else {
            if (input) return usage_error("more than one input file ('%s')", a);
            input = a;
        }
#undef TAKES
#undef VALUE
    }
    if (!input) return usage_error("no input file%s", "");

    char *text = NULL;
    if (strcmp(input, "-") == 0) {
        size_t size = 0;
        text = read_stream(stdin, &size);
        if (!text) {
            fprintf(stderr, "rk transpile: cannot read standard input\n");
            return EXIT_DIAGNOSTICS;
        }
        if (report_nul(text, size, "<stdin>")) {
            free(text);
            return EXIT_DIAGNOSTICS;
        }
        desc.source = text;
        desc.path = "<stdin>";
    } else {
        desc.path = input;
    }
    desc.include_dirs = includes;
    desc.include_dir_count = include_count;
    desc.defines = defines;
    desc.define_count = define_count;

    rk_transpile_result *r = NULL;
    rk_status s = rk_transpile(&desc, &r);
    free(text);
    if (!r) {
        fprintf(stderr, "rk transpile: %s: %s\n", rk_status_name(s), rk_last_error());
        return s == RK_UNSUPPORTED ? EXIT_USAGE : EXIT_DIAGNOSTICS;
    }
    fputs(rk_transpile_diagnostics_text(r), stderr);
    if (s != RK_OK && strcmp(input, "-") != 0) hint_handler_file(input);
    int code = EXIT_DIAGNOSTICS;
    if (s == RK_OK) {
        size_t size;
        const char *out = rk_transpile_output(r, &size);
        code = write_output(output, out, size);
        if (code == EXIT_OK && !quiet) print_summary(r);
    }
    rk_transpile_result_destroy(r);
    return code;
}
