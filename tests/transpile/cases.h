/* The sources every transpiler test runs over: the examples and a few cases
 * that cover the rest of the subset. Each has a golden output in golden/. */
#ifndef RK_TEST_TRANSPILE_CASES_H
#define RK_TEST_TRANSPILE_CASES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringkernel/transpile.h"
#include "support/read_file.h"

typedef struct tp_case {
    const char *name;   /* golden/<name>.cu */
    const char *source; /* relative to the source tree */
    rk_transpile_kind kind;
    uint32_t tile[3];
    uint32_t halo;
} tp_case;

static const tp_case tp_cases[] = {
    {"vector_scale", "examples/kernels/vector_scale.c", RK_TRANSPILE_GLOBAL, {0, 0, 0}, 0},
    {"laplacian", "examples/kernels/laplacian.c", RK_TRANSPILE_STENCIL, {0, 0, 0}, 0},
    {"laplacian_8x4_halo2", "examples/kernels/laplacian.c", RK_TRANSPILE_STENCIL, {8, 4, 0}, 2},
    {"heat3d", "examples/kernels/heat3d.c", RK_TRANSPILE_STENCIL, {0, 0, 0}, 0},
    {"heat3d_16x8x4", "examples/kernels/heat3d.c", RK_TRANSPILE_STENCIL, {16, 8, 4}, 0},
    {"poly_handler", "examples/kernels/poly_handler.c", RK_TRANSPILE_HANDLER, {0, 0, 0}, 0},
    {"features", "tests/transpile/cases/features.c", RK_TRANSPILE_GLOBAL, {0, 0, 0}, 0},
    {"blur", "tests/transpile/cases/blur.c", RK_TRANSPILE_STENCIL, {0, 0, 0}, 0},
    {"reduce", "tests/transpile/cases/reduce.c", RK_TRANSPILE_GLOBAL, {0, 0, 0}, 0},
    {"grid_phases", "tests/transpile/cases/grid_phases.c", RK_TRANSPILE_GLOBAL, {0, 0, 0}, 0},
    {"tagged_words", "tests/transpile/cases/tagged_words.c", RK_TRANSPILE_GLOBAL, {0, 0, 0}, 0},
    {"meaning", "tests/transpile/cases/meaning.c", RK_TRANSPILE_GLOBAL, {0, 0, 0}, 0},
    {"dsl_builtins", "tests/transpile/cases/dsl_builtins.c", RK_TRANSPILE_GLOBAL, {0, 0, 0}, 0},
    {"uniform_barriers", "tests/transpile/cases/uniform_barriers.c", RK_TRANSPILE_GLOBAL, {0, 0, 0}, 0},
    {"struct_params", "tests/transpile/corpus/struct_params.c", RK_TRANSPILE_GLOBAL, {0, 0, 0}, 0},
};
enum { TP_CASE_COUNT = sizeof tp_cases / sizeof tp_cases[0] };

static inline char *tp_case_path(const char *relative) {
    size_t n = strlen(RK_SOURCE_DIR) + strlen(relative) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", RK_SOURCE_DIR, relative);
    return p;
}

/* Transpiles a case; prints the diagnostics and returns NULL on failure. */
static inline rk_transpile_result *tp_case_transpile(const tp_case *c) {
    char *path = tp_case_path(c->source);
    rk_transpile_desc d = {.path = path, .target = RK_TARGET_CUDA, .kind = c->kind};
    memcpy(d.stencil.tile, c->tile, sizeof d.stencil.tile);
    d.stencil.halo = c->halo;
    rk_transpile_result *r = NULL;
    rk_status s = rk_transpile(&d, &r);
    free(path);
    if (s != RK_OK) {
        fprintf(stderr, "%s: rk_transpile: %s\n%s\n", c->name, rk_status_name(s), rk_last_error());
        rk_transpile_result_destroy(r);
        return NULL;
    }
    return r;
}

#endif
