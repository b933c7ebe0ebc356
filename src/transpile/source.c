/* Source files: reading, line splicing, #include search and the built-in
 * headers that let kernels `#include <ringkernel/dsl.h>` with no compiler or
 * library headers installed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp.h"

/* The transpiler's own view of the headers kernels include. The DSL markers
 * become reserved keywords the parser knows; the DSL functions are builtins
 * (builtins.def), so the headers only declare types and macros. */
static const char DSL_H[] =
    "#pragma once\n"
    "#include <stdint.h>\n"
    "#include <stddef.h>\n"
    "#include <math.h>\n"
    "#define RINGKERNEL_DSL_H 1\n"
    "#define RK_DSL_TRANSPILER 1\n"
    "#define RK_KERNEL __rk_kernel\n"
    "#define RK_HANDLER __rk_handler\n"
    "#define RK_DEVICE __rk_device\n"
    "#define RK_SHARED __rk_shared\n"
    "#define RK_RESTRICT restrict\n"
    "#define RK_STATIC_ASSERT(c, m) _Static_assert(c, m)\n"
    "#define RK_BLOCK_SIZE(x, y, z) __rk_block_size(x, y, z)\n"
    "#define RK_PI 3.14159265358979323846\n"
    "#define RK_PI_F 3.14159265358979323846f\n";

static const char DSL_STENCIL_H[] =
    "#pragma once\n"
    "#include <ringkernel/dsl.h>\n"
    "#define RINGKERNEL_DSL_STENCIL_H 1\n"
    "typedef __rk_grid_pos rk_grid_pos;\n";

static const char STDINT_H[] =
    "#pragma once\n"
    "typedef signed char int8_t;\n"
    "typedef unsigned char uint8_t;\n"
    "typedef short int16_t;\n"
    "typedef unsigned short uint16_t;\n"
    "typedef int int32_t;\n"
    "typedef unsigned int uint32_t;\n"
    "typedef long int64_t;\n"
    "typedef unsigned long uint64_t;\n"
    "typedef long intptr_t;\n"
    "typedef unsigned long uintptr_t;\n"
    "#define INT8_MIN (-128)\n"
    "#define INT8_MAX 127\n"
    "#define UINT8_MAX 255\n"
    "#define INT16_MIN (-32768)\n"
    "#define INT16_MAX 32767\n"
    "#define UINT16_MAX 65535\n"
    "#define INT32_MIN (-2147483647 - 1)\n"
    "#define INT32_MAX 2147483647\n"
    "#define UINT32_MAX 4294967295U\n"
    "#define INT64_MIN (-9223372036854775807L - 1)\n"
    "#define INT64_MAX 9223372036854775807L\n"
    "#define UINT64_MAX 18446744073709551615UL\n";

static const char STDDEF_H[] =
    "#pragma once\n"
    "typedef unsigned long size_t;\n"
    "typedef long ptrdiff_t;\n"
    "#define NULL ((void *)0)\n"
    "#define offsetof(type, member) __builtin_offsetof(type, member)\n";

static const char STDBOOL_H[] =
    "#pragma once\n"
    "#define bool _Bool\n"
    "#define true 1\n"
    "#define false 0\n"
    "#define __bool_true_false_are_defined 1\n";

static const char MATH_H[] =
    "#pragma once\n"
    "#define INFINITY __rk_inff()\n"
    "#define NAN __rk_nanf()\n"
    "#define HUGE_VALF __rk_inff()\n"
    "#define HUGE_VAL __rk_inf()\n"
    "#define M_PI 3.14159265358979323846\n";

static const char FLOAT_H[] =
    "#pragma once\n"
    "#define FLT_MAX 3.40282347e+38F\n"
    "#define FLT_MIN 1.17549435e-38F\n"
    "#define FLT_EPSILON 1.19209290e-07F\n"
    "#define DBL_MAX 1.7976931348623157e+308\n"
    "#define DBL_MIN 2.2250738585072014e-308\n"
    "#define DBL_EPSILON 2.2204460492503131e-16\n";

static const char LIMITS_H[] =
    "#pragma once\n"
    "#define CHAR_BIT 8\n"
    "#define SCHAR_MIN (-128)\n"
    "#define SCHAR_MAX 127\n"
    "#define UCHAR_MAX 255\n"
    "#define CHAR_MIN SCHAR_MIN\n"
    "#define CHAR_MAX SCHAR_MAX\n"
    "#define SHRT_MIN (-32768)\n"
    "#define SHRT_MAX 32767\n"
    "#define USHRT_MAX 65535\n"
    "#define INT_MIN (-2147483647 - 1)\n"
    "#define INT_MAX 2147483647\n"
    "#define UINT_MAX 4294967295U\n"
    "#define LONG_MIN (-9223372036854775807L - 1)\n"
    "#define LONG_MAX 9223372036854775807L\n"
    "#define ULONG_MAX 18446744073709551615UL\n"
    "#define LLONG_MIN (-9223372036854775807LL - 1)\n"
    "#define LLONG_MAX 9223372036854775807LL\n"
    "#define ULLONG_MAX 18446744073709551615ULL\n";

static const struct {
    const char *name;
    const char *text;
    size_t size;
} builtin_headers[] = {
#define H_(n, t) {n, t, sizeof t - 1}
    H_("ringkernel/dsl.h", DSL_H),     H_("ringkernel/dsl_stencil.h", DSL_STENCIL_H),
    H_("stdint.h", STDINT_H),          H_("stddef.h", STDDEF_H),
    H_("stdbool.h", STDBOOL_H),        H_("math.h", MATH_H),
    H_("float.h", FLOAT_H),            H_("limits.h", LIMITS_H),
#undef H_
};

/* Removes backslash-newline pairs. The newlines are put back after the
 * logical line so later lines keep their numbers. */
static char *splice_lines(tp_ctx *ctx, const char *text, size_t size, size_t *out_size) {
    if (!memchr(text, '\\', size)) {
        *out_size = size;
        return rk__tp_strndup(ctx, text, size);
    }
    char *out = rk__tp_alloc(ctx, size + 2);
    size_t i = 0, j = 0;
    int pending = 0;
    while (i < size) {
        if (text[i] == '\\' && i + 1 < size && text[i + 1] == '\n') {
            i += 2;
            pending++;
        } else if (text[i] == '\\' && i + 2 < size && text[i + 1] == '\r' && text[i + 2] == '\n') {
            i += 3;
            pending++;
        } else if (text[i] == '\n') {
            out[j++] = '\n';
            i++;
            for (; pending > 0; pending--) out[j++] = '\n';
        } else {
            out[j++] = text[i++];
        }
    }
    for (; pending > 0; pending--) out[j++] = '\n';
    out[j] = '\0';
    *out_size = j;
    return out;
}

tp_file *rk__tp_new_file(tp_ctx *ctx, const char *name, const char *dir, const char *text, size_t size,
                         bool builtin) {
    tp_file *f = rk__tp_alloc(ctx, sizeof *f);
    f->name = rk__tp_strdup(ctx, name);
    f->dir = dir ? rk__tp_strdup(ctx, dir) : NULL;
    f->builtin = builtin;
    f->contents = splice_lines(ctx, text, size, &f->size);
    return f;
}

tp_file *rk__tp_builtin_header(tp_ctx *ctx, const char *name) {
    for (size_t i = 0; i < sizeof builtin_headers / sizeof builtin_headers[0]; i++) {
        if (strcmp(builtin_headers[i].name, name) != 0) continue;
        char key[64];
        snprintf(key, sizeof key, "<built-in>/%s", name);
        tp_file *f = rk__tp_map_get(&ctx->files, key, (int)strlen(key));
        if (f) return f;
        f = rk__tp_new_file(ctx, key, NULL, builtin_headers[i].text, builtin_headers[i].size, true);
        const char *k = rk__tp_strdup(ctx, key);
        rk__tp_map_put(ctx, &ctx->files, k, (int)strlen(k), f);
        return f;
    }
    return NULL;
}

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static const char *dir_of(tp_ctx *ctx, const char *path) {
    const char *slash = strrchr(path, '/');
    if (!slash) return ".";
    if (slash == path) return "/";
    return rk__tp_strndup(ctx, path, (size_t)(slash - path));
}

/* Reads a file from disk, once per compilation. */
static tp_file *load_file(tp_ctx *ctx, const char *path) {
    tp_file *cached = rk__tp_map_get(&ctx->files, path, (int)strlen(path));
    if (cached) return cached;
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    tp_buf b;
    rk__tp_buf_init(&b, ctx);
    char chunk[8192];
    size_t n;
    bool too_big = false;
    while ((n = fread(chunk, 1, sizeof chunk, fp)) > 0) {
        if (b.len + n > (16u << 20)) {
            too_big = true;
            break;
        }
        rk__tp_buf_putn(&b, chunk, n);
    }
    bool failed = ferror(fp) != 0;
    fclose(fp);
    if (failed || too_big) return NULL;
    if (memchr(b.data, '\0', b.len)) return NULL; /* a binary file, not source */
    tp_file *f = rk__tp_new_file(ctx, path, dir_of(ctx, path), b.data, b.len, false);
    const char *key = rk__tp_strdup(ctx, path);
    rk__tp_map_put(ctx, &ctx->files, key, (int)strlen(key), f);
    return f;
}

static tp_file *virtual_file(tp_ctx *ctx, const char *name) {
    const rk_transpile_desc *d = ctx->desc;
    for (size_t i = 0; i < d->file_count; i++) {
        if (!d->files[i].name || !d->files[i].contents || strcmp(d->files[i].name, name) != 0) continue;
        char *key = rk__tp_format(ctx, "<virtual>/%s", name);
        tp_file *f = rk__tp_map_get(&ctx->files, key, (int)strlen(key));
        if (f) return f;
        f = rk__tp_new_file(ctx, name, NULL, d->files[i].contents, strlen(d->files[i].contents), false);
        rk__tp_map_put(ctx, &ctx->files, key, (int)strlen(key), f);
        return f;
    }
    return NULL;
}

tp_file *rk__tp_find_include(tp_ctx *ctx, const char *name, bool angled, const tp_file *from) {
    /* The DSL headers are always the built-in ones, however they are named:
     * the real headers hold the CPU implementation, which is not kernel C. */
    if (ends_with(name, "/ringkernel/dsl.h")) return rk__tp_builtin_header(ctx, "ringkernel/dsl.h");
    if (ends_with(name, "/ringkernel/dsl_stencil.h"))
        return rk__tp_builtin_header(ctx, "ringkernel/dsl_stencil.h");
    tp_file *f = rk__tp_builtin_header(ctx, name);
    if (f) return f;
    f = virtual_file(ctx, name);
    if (f) return f;
    if (ctx->desc->no_file_system) return NULL;
    if (name[0] == '/') return load_file(ctx, name);
    if (!angled && from && from->dir) {
        f = load_file(ctx, rk__tp_format(ctx, "%s/%s", from->dir, name));
        if (f) return f;
    }
    for (size_t i = 0; i < ctx->desc->include_dir_count; i++) {
        const char *dir = ctx->desc->include_dirs[i];
        if (!dir) continue;
        f = load_file(ctx, rk__tp_format(ctx, "%s/%s", dir, name));
        if (f) return f;
    }
    return NULL;
}

tp_file *rk__tp_load_main(tp_ctx *ctx, const char *path) {
    errno = 0;
    tp_file *f = load_file(ctx, path);
    if (!f && errno == 0) errno = EINVAL;
    return f;
}
