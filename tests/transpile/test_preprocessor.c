/* The preprocessor: macros (object-like, function-like, #, ##, variadic,
 * self-reference), conditionals, #include (virtual files, the file system,
 * search order, #pragma once, depth limit), #error and #warning, -D, and the
 * built-in headers. Each case transpiles a small kernel and checks a line
 * of the generated CUDA or the diagnostics. */
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "ringkernel/transpile.h"

#define KERNEL_OPEN "#include <ringkernel/dsl.h>\nRK_KERNEL void k(long *d) {\n"
#define KERNEL_CLOSE "}\n"

static rk_transpile_result *run(const rk_transpile_desc *base, const char *source, rk_status want) {
    rk_transpile_desc d = *base;
    d.source = source;
    if (!d.path) d.path = "pp.c";
    rk_transpile_result *r = NULL;
    rk_status s = rk_transpile(&d, &r);
    CHECK(r != NULL);
    if (s != want) {
        fprintf(stderr, "status %s, expected %s\n--- source ---\n%s--- diagnostics ---\n%s--- output ---\n%s\n",
                rk_status_name(s), rk_status_name(want), source, rk_transpile_diagnostics_text(r),
                rk_transpile_output(r, NULL));
        exit(1);
    }
    return r;
}

static void expect_output(const rk_transpile_desc *base, const char *source, const char *needle) {
    rk_transpile_result *r = run(base, source, RK_OK);
    CHECK_STR_CONTAINS(rk_transpile_output(r, NULL), needle);
    rk_transpile_result_destroy(r);
}

static void expect_error(const rk_transpile_desc *base, const char *source, const char *needle) {
    rk_transpile_result *r = run(base, source, RK_PARSE_ERROR);
    CHECK_STR_CONTAINS(rk_transpile_diagnostics_text(r), needle);
    rk_transpile_result_destroy(r);
}

static const rk_transpile_desc sandbox = {.no_file_system = true};

static void macros(void) {
    expect_output(&sandbox,
                  "#define N 4\n#define TWICE(x) ((x) + (x))\n#define APPLY(f, v) f(v)\n" KERNEL_OPEN
                  "    d[0] = APPLY(TWICE, N * 2);\n" KERNEL_CLOSE,
                  "d[0] = 4 * 2 + 4 * 2;");
    /* ## builds names, # makes strings (only a static assertion can hold one). */
    expect_output(&sandbox,
                  "#define VAR(n) value_##n\n#define STR(x) #x\n" KERNEL_OPEN
                  "    long VAR(7) = 3;\n    _Static_assert(sizeof(long) == 8, STR(long is 8 \"bytes\"));\n"
                  "    d[0] = value_7;\n" KERNEL_CLOSE,
                  "static_assert(8ull == 8, \"long is 8 \\\"bytes\\\"\");");
    /* Variadic macros, empty __VA_ARGS__, and a GNU-style named variadic. */
    expect_output(&sandbox,
                  "#define SUM(first, ...) (first + __VA_ARGS__)\n#define FIRST(a, rest...) a\n"
                  "#define EMPTY(...) 5 __VA_ARGS__\n" KERNEL_OPEN
                  "    d[0] = SUM(1, 2, 3) + FIRST(9, 8, 7) + EMPTY();\n" KERNEL_CLOSE,
                  "d[0] = (1 + 2, 3) + 9 + 5;");
    /* A macro that names itself stops (the hide set), also through another. */
    expect_output(&sandbox,
                  KERNEL_OPEN "    long v = 1, A = 2;\n#define v v + 1\n#define A B\n#define B A\n    d[0] = v * A;\n" KERNEL_CLOSE,
                  "d[0] = v + 1 * A;");
    /* A function-like macro's name without ( is an ordinary identifier. */
    expect_output(&sandbox, "#define f(x) (x * 2)\n" KERNEL_OPEN "    long f = 3;\n    d[0] = f(f);\n" KERNEL_CLOSE,
                  "d[0] = f * 2;");
    /* __LINE__ is the line a logical line starts on (backslash-newline
     * splices the next physical line onto it). */
    expect_output(&sandbox, KERNEL_OPEN "    d[0] = \\\n  __LINE__ + __LINE__;\n    d[1] = __LINE__;\n" KERNEL_CLOSE,
                  "d[1] = 5;");
    /* #undef, and a # produced by an expansion is not a directive. */
    expect_output(&sandbox, "#define X 1\n#undef X\n#define HASH #\n" KERNEL_OPEN "    long X = 2;\n    d[0] = X;\n" KERNEL_CLOSE,
                  "d[0] = X;");
    expect_error(&sandbox, "#define F(a, a) a\n", "duplicate macro parameter 'a'");
    expect_error(&sandbox, "#define F(a) a\nF(1, 2)\n", "too many arguments to macro 'F'");
    expect_error(&sandbox, "#define F(a, b) a\nF(1)\n", "too few arguments to macro 'F'");
    expect_error(&sandbox, "#define P(a, b) a ## b\n" KERNEL_OPEN "    d[0] = P(+, /);\n" KERNEL_CLOSE,
                 "pasting \"+\" and \"/\" does not give a valid token");
    expect_error(&sandbox, "#define defined 1\n", "'defined' cannot be used as a macro name");
    /* Exponential expansion is cut off rather than exhausting memory. */
    expect_error(&sandbox,
                 "#define A0 x x\n#define A1 A0 A0\n#define A2 A1 A1\n#define A3 A2 A2\n#define A4 A3 A3\n"
                 "#define A5 A4 A4\n#define A6 A5 A5\n#define A7 A6 A6\n#define A8 A7 A7\n#define A9 A8 A8\n"
                 "#define B0 A9 A9\n#define B1 B0 B0\n#define B2 B1 B1\n#define B3 B2 B2\n#define B4 B3 B3\n"
                 "#define B5 B4 B4\n#define B6 B5 B5\n#define B7 B6 B6\n#define B8 B7 B7\n#define B9 B8 B8\nB9\n",
                 "macro expansion produces more than");
}

static void conditionals(void) {
    expect_output(&sandbox,
                  "#define LEVEL 3\n"
                  "#if LEVEL > 5\n#define R 1\n#elif LEVEL == 3 && defined(LEVEL) && !defined UNDEFINED_THING\n"
                  "#define R 2\n#else\n#define R 3\n#endif\n" KERNEL_OPEN "    d[0] = R;\n" KERNEL_CLOSE,
                  "d[0] = 2;");
    /* Arithmetic is in intmax_t/uintmax_t; -1 < 0u is false there. */
    expect_output(&sandbox,
                  "#if (1 << 40) > 0 && -1 < 0u\n#define R 1\n#elif (10 / 3 == 3) && (-7 % 3 == -1) && (0 ? 1 : 2) == 2\n"
                  "#define R 2\n#endif\n" KERNEL_OPEN "    d[0] = R;\n" KERNEL_CLOSE,
                  "d[0] = 2;");
    /* Skipped groups may hold anything, including nested conditionals. */
    expect_output(&sandbox,
                  "#ifdef NOT_DEFINED\n  don't @ $ \"unterminated\n#if 1\n#error never\n#endif\n#else\n#define R 5\n#endif\n"
                  "#ifndef R\n#define R 6\n#endif\n" KERNEL_OPEN "    d[0] = R;\n" KERNEL_CLOSE,
                  "d[0] = 5;");
    /* An identifier left after expansion is 0; character constants work. */
    expect_output(&sandbox, "#if UNKNOWN_NAME || 'A' != 65\n#define R 1\n#else\n#define R 2\n#endif\n" KERNEL_OPEN
                  "    d[0] = R;\n" KERNEL_CLOSE,
                  "d[0] = 2;");
    expect_error(&sandbox, "#if 1 / 0\n#endif\n", "division by zero in #if");
    expect_error(&sandbox, "#if 2 +\n#endif\n", "expected an expression in #if");
    expect_error(&sandbox, "#if 1.5\n#endif\n", "floating constant in #if");
    expect_error(&sandbox, "#endif\n", "#endif without #if");
    expect_error(&sandbox, "#else\n", "#else without #if");
    expect_error(&sandbox, "#if 1\n#else\n#else\n#endif\n", "#else after #else");
    expect_error(&sandbox, "#ifdef\n#endif\n", "#ifdef needs a macro name");
    expect_error(&sandbox, "#if 1\n", "unterminated conditional directive");
    expect_error(&sandbox, "#frobnicate\n", "invalid preprocessing directive #frobnicate");
    /* #error stops nothing else: later errors are reported too. */
    rk_transpile_result *r = run(&sandbox, "#error first problem\n#include \"nowhere.h\"\n", RK_PARSE_ERROR);
    CHECK_STR_CONTAINS(rk_transpile_diagnostics_text(r), "pp.c:1:2: error: #error first problem");
    CHECK_STR_CONTAINS(rk_transpile_diagnostics_text(r), "pp.c:2:2: error: 'nowhere.h' file not found");
    rk_transpile_result_destroy(r);
    r = run(&sandbox, "#warning careful here\n" KERNEL_OPEN "    d[0] = 1;\n" KERNEL_CLOSE, RK_OK);
    CHECK_STR_CONTAINS(rk_transpile_diagnostics_text(r), "pp.c:1:2: warning: #warning careful here");
    CHECK_EQ(rk_transpile_error_count(r), 0);
    rk_transpile_result_destroy(r);
}

static void defines(void) {
    const char *defs[] = {"WIDTH=16", "FAST", "EXPR=(2 + 3)"};
    rk_transpile_desc d = sandbox;
    d.defines = defs;
    d.define_count = 3;
    expect_output(&d, KERNEL_OPEN "#ifdef FAST\n    d[0] = WIDTH * EXPR + FAST;\n#endif\n" KERNEL_CLOSE,
                  "d[0] = 16 * (2 + 3) + 1;");
    /* Predefined macros. */
    expect_output(&sandbox, KERNEL_OPEN "    d[0] = __STDC_VERSION__ + __RK_TRANSPILER__ + RK_DSL_TRANSPILER;\n" KERNEL_CLOSE,
                  "d[0] = 201112ll + 1 + 1;");
}

static void includes(void) {
    const rk_transpile_file files[] = {
        {"config.h", "#pragma once\n#define SCALE 3\ntypedef struct cfg { long a; } cfg;\n"},
        {"guarded.h", "#ifndef GUARDED_H\n#define GUARDED_H\n#define GUARDED 7\n#endif\n"},
        {"nested/inner.h", "#include \"config.h\"\n#define INNER (SCALE + 1)\n"},
        {"self.h", "#include \"self.h\"\n"},
        {"open_if.h", "#if 1\n"},
    };
    rk_transpile_desc d = sandbox;
    d.files = files;
    d.file_count = sizeof files / sizeof files[0];
    /* #pragma once: config.h twice (and through inner.h) defines cfg once. */
    expect_output(&d,
                  "#include \"config.h\"\n#include <config.h>\n#include \"nested/inner.h\"\n#include \"guarded.h\"\n"
                  "#include \"guarded.h\"\n#define HDR \"config.h\"\n#include HDR\n" KERNEL_OPEN
                  "    cfg c = {SCALE};\n    d[0] = c.a + INNER + GUARDED;\n" KERNEL_CLOSE,
                  "d[0] = c.a + (3 + 1) + 7;");
    expect_error(&d, "#include \"self.h\"\n", "#include nested more than 64 levels deep");
    expect_error(&d, "#include \"open_if.h\"\n", "open_if.h:1:2: error: unterminated conditional directive");
    expect_error(&d, "#include\n", "expected \"FILENAME\" or <FILENAME> after #include");
    expect_error(&d, "#include <config.h\n", "expected '>' to close the #include name");
    /* The built-in headers need no file system. */
    expect_output(&sandbox,
                  "#include <stdint.h>\n#include <stddef.h>\n#include <stdbool.h>\n#include <limits.h>\n"
                  "#include <float.h>\n#include <math.h>\n" KERNEL_OPEN
                  "    uint64_t u = UINT32_MAX;\n    bool b = true;\n    size_t s = sizeof(int64_t);\n"
                  "    float f = FLT_MAX * (float)s + INFINITY;\n    d[0] = (long)(u + (uint64_t)INT_MAX + s) + b + (long)f;\n" KERNEL_CLOSE,
                  "float f = 3.40282347e+38F * (float)s + __int_as_float(0x7f800000);");
}

/* Files on disk: the including file's directory first for "...", then -I
 * directories in order; <...> skips the including file's directory. */
static void file_system(void) {
    char dir[] = "/tmp/rk_pp_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[512];
    struct {
        const char *name, *text;
    } files[] = {
        {"main.c", "#include \"local.h\"\n#include <found.h>\n" KERNEL_OPEN "    d[0] = LOCAL + FOUND;\n" KERNEL_CLOSE},
        {"local.h", "#define LOCAL 10\n"},
        {"inc1/found.h", "#define FOUND 100\n"},
        {"inc2/found.h", "#define FOUND 200\n"},
        {"inc1/local.h", "#define LOCAL 20\n"},
    };
    snprintf(path, sizeof path, "%s/inc1", dir);
    CHECK(mkdir(path, 0700) == 0);
    snprintf(path, sizeof path, "%s/inc2", dir);
    CHECK(mkdir(path, 0700) == 0);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i].name);
        FILE *f = fopen(path, "w");
        CHECK(f != NULL);
        fputs(files[i].text, f);
        fclose(f);
    }
    char inc1[512], inc2[512], main_path[512];
    snprintf(inc1, sizeof inc1, "%s/inc1", dir);
    snprintf(inc2, sizeof inc2, "%s/inc2", dir);
    snprintf(main_path, sizeof main_path, "%s/main.c", dir);
    const char *dirs[] = {inc1, inc2};
    rk_transpile_desc d = {.path = main_path, .include_dirs = dirs, .include_dir_count = 2};
    rk_transpile_result *r = NULL;
    CHECK_OK(rk_transpile(&d, &r));
    CHECK_STR_CONTAINS(rk_transpile_output(r, NULL), "d[0] = 10 + 100;");
    rk_transpile_result_destroy(r);
    /* With the file system off the same file is not even read. */
    d.no_file_system = true;
    CHECK_STATUS(rk_transpile(&d, &r), RK_IO_ERROR);
    CHECK_STR_CONTAINS(rk_transpile_diagnostics_text(r), "file system access is off");
    rk_transpile_result_destroy(r);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i].name);
        unlink(path);
    }
    rmdir(inc1);
    rmdir(inc2);
    rmdir(dir);
}

int main(void) {
    macros();
    conditionals();
    defines();
    includes();
    file_system();
    printf("preprocessor checks passed\n");
    return 0;
}
