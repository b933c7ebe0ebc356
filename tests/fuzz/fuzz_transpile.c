/* libFuzzer target: any bytes as kernel source must give a result or a
 * clean error, never a crash, hang, leak or sanitizer report.
 *
 * The input is the source text, transpiled for CUDA, WGSL and MSL. A hash of
 * it picks the kind and the stencil configuration, so one corpus covers all
 * of them. The file system is off:
 * #include finds the built-in headers and two virtual files. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringkernel/transpile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
static void check_one(const rk_transpile_desc *desc);

static const rk_transpile_file files[] = {
    {"common.h", "#pragma once\n#define SQ(x) ((x) * (x))\ntypedef struct { float x, y; } vec2;\n"},
    {"loop.h", "#include \"loop.h\"\n"}, /* includes itself: the depth limit stops it */
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 64 * 1024) return 0;
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < size; i++) h = (h ^ data[i]) * 16777619u;

    static const uint32_t tiles[][3] = {{0, 0, 0}, {8, 8, 0}, {4, 4, 4}, {32, 32, 0}};
    static const char *const defines[] = {"N=16", "USE_DOUBLE"};
    rk_transpile_desc d = {
        .source = text,
        .path = "fuzz.c",
        .files = files,
        .file_count = sizeof files / sizeof files[0],
        .defines = defines,
        .define_count = h & 1 ? 2 : 0,
        .no_file_system = true,
        .kind = (rk_transpile_kind)((h >> 1) % 4),
    };
    memcpy(d.stencil.tile, tiles[(h >> 3) % 4], sizeof d.stencil.tile);
    d.stencil.halo = (h >> 5) % 3;
    static const rk_transpile_target targets[] = {RK_TARGET_CUDA, RK_TARGET_WGSL, RK_TARGET_MSL};
    for (size_t t = 0; t < sizeof targets / sizeof targets[0]; t++) {
        d.target = targets[t];
        check_one(&d);
    }
    free(text);
    return 0;
}

/* What the API promises, checked on every input. */
static void check_one(const rk_transpile_desc *desc) {
    rk_transpile_desc d = *desc;
    rk_transpile_result *r = NULL;
    rk_status s = rk_transpile(&d, &r);
    if (!r) abort();
    size_t out_size = 0;
    const char *out = rk_transpile_output(r, &out_size);
    if (strlen(out) != out_size) abort();
    if (s == RK_OK && (out_size == 0 || rk_transpile_error_count(r) != 0)) abort();
    if (s == RK_PARSE_ERROR && (rk_transpile_error_count(r) == 0 || out_size != 0)) abort();
    if (s != RK_OK && s != RK_PARSE_ERROR) abort();
    for (size_t i = 0; i < rk_transpile_diagnostic_count(r); i++) {
        const rk_diagnostic *diag = rk_transpile_diagnostic(r, i);
        if (!diag || !diag->message || !diag->file) abort();
    }
    if (strlen(rk_transpile_diagnostics_text(r)) == 0 && rk_transpile_diagnostic_count(r) != 0) abort();
    rk_transpile_result_destroy(r);
}
