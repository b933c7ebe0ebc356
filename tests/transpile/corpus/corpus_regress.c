/* Corpus cases: the regressions of issue 21's "Why" list, each the smallest
 * realistic kernel that showed the bug. */
#include <math.h>
#include <string.h>

#include "corpus.h"


enum { N = 777, GRID = (N + 63) / 64 };

static void elseif_setup(diff_program *p) {
    corpus_buffer(p, "in", DT_I32, N, corpus_ints(N, -30, 30), false);
    corpus_buffer(p, "out", DT_I32, N, NULL, true);
    corpus_buffer(p, "after", DT_I32, N, NULL, true);
    corpus_launch(p, "elseif_stmt", GRID, 64, 4, BUF(0), BUF(1), BUF(2), INT(N));
}
static void elseif_ref(const diff_program *p, void *e[]) {
    const int *in = IN(p, 0, int);
    int *out = e[1], *after = e[2];
    for (int i = 0; i < N; i++) {
        int v = in[i], d = v > 10 ? 1 : v > 0 ? 2 : 0;
        out[i] = d;
        after[i] = v < -10 ? 3 : v < 0 ? 4 : d + 10;
    }
}

static void ternary_setup(diff_program *p) {
    corpus_buffer(p, "v", DT_I32, N, corpus_ints(N, -100, 100), false);
    corpus_buffer(p, "slot", DT_I32, N, NULL, true);
    corpus_buffer(p, "count", DT_I32, 1, NULL, true);
    corpus_buffer(p, "calls", DT_I32, 1, NULL, true);
    corpus_launch(p, "ternary_atomic", GRID, 64, 5, BUF(0), BUF(1), BUF(2), BUF(3), INT(N));
}
static void ternary_ref(const diff_program *p, void *e[]) {
    const int *v = IN(p, 0, int);
    int *slot = e[1], *count = e[2], *calls = e[3];
    for (int i = 0; i < N; i++) {
        int s = v[i] > 0 ? 1 : -1, c = v[i] % 3 == 0, a = v[i] % 5 == 0, seventh = v[i] % 7 == 0;
        int b = seventh ? 1 : 5, inc = seventh, dec = seventh ? 5 : 4;
        *count += v[i] > 0;
        *calls += c;
        slot[i] = s + 10 * c + 100 * a + 1000 * (a && v[i] != 0) + 10000 * b + 100000 * (inc + 2 * dec);
    }
}

static void logical_setup(diff_program *p) {
    corpus_buffer(p, "v", DT_I32, N, corpus_ints(N, -100, 100), false);
    corpus_buffer(p, "flags", DT_I32, N, NULL, true);
    corpus_buffer(p, "and_calls", DT_I32, 1, NULL, true);
    corpus_buffer(p, "or_calls", DT_I32, 1, NULL, true);
    corpus_launch(p, "logical_effects", GRID, 64, 5, BUF(0), BUF(1), BUF(2), BUF(3), INT(N));
}
static void logical_ref(const diff_program *p, void *e[]) {
    const int *v = IN(p, 0, int);
    int *flags = e[1], *ands = e[2], *ors = e[3];
    for (int i = 0; i < N; i++) {
        int a = 0, b = 1;
        if (v[i] > 0) (*ands)++, a = v[i] > 50;
        if (!(v[i] > 0)) (*ors)++, b = -v[i] > 50;
        int pre = v[i] <= 90, c = v[i] > 90 || (-v[i] - 40 > 50 && v[i] < -90);
        flags[i] = a + 2 * b + 4 * c + 8 * pre;
    }
}

static void cas_setup(diff_program *p) {
    corpus_buffer(p, "v", DT_I32, N, corpus_ints(N, -100000, 100000), false);
    corpus_buffer(p, "maximum", DT_I32, 1, NULL, true);
    corpus_buffer(p, "capped", DT_I32, 1, NULL, true);
    corpus_launch(p, "cas_loop", GRID, 64, 5, BUF(0), BUF(1), BUF(2), INT(500), INT(N));
}
static void cas_ref(const diff_program *p, void *e[]) {
    const int *v = IN(p, 0, int);
    int *m = e[1], *c = e[2];
    for (int i = 0; i < N; i++)
        if (v[i] > *m) *m = v[i];
    *c = N < 500 ? N : 500;
}

static void nan_setup(diff_program *p) {
    float *in = corpus_floats(N, -5.0f, 5.0f);
    for (int i = 0; i < N; i += 7) in[i] = NAN;
    for (int i = 3; i < N; i += 11) in[i] = INFINITY;
    for (int i = 5; i < N; i += 13) in[i] = -INFINITY;
    corpus_buffer(p, "in", DT_F32, N, in, false);
    corpus_buffer(p, "out", DT_F32, N, NULL, true);
    corpus_buffer(p, "kind", DT_I32, N, NULL, true);
    corpus_launch(p, "nan_inf", GRID, 64, 4, BUF(0), BUF(1), BUF(2), INT(N));
}
static void nan_ref(const diff_program *p, void *e[]) {
    const float *in = IN(p, 0, float);
    float *out = e[1];
    int *kind = e[2];
    for (int i = 0; i < N; i++) {
        float x = in[i];
        kind[i] = isnan(x) ? 0 : x == INFINITY ? 1 : x == -INFINITY ? 2 : 3;
        out[i] = kind[i] == 3 ? x : 0.0f;
    }
}

enum { CELLS = 13 };
static void struct_setup(diff_program *p) {
    corpus_buffer(p, "v", DT_I32, N, corpus_ints(N, -1000, 1000), false);
    corpus_buffer(p, "cells", DT_I32, 2 * CELLS, NULL, true);
    corpus_launch(p, "struct_atomic", GRID, 64, 4, BUF(0), BUF(1), INT(CELLS), INT(N));
}
static void struct_ref(const diff_program *p, void *e[]) {
    const int *v = IN(p, 0, int);
    int *cells = e[1];
    for (int i = 0; i < N; i++) {
        int c = (v[i] < 0 ? -v[i] : v[i]) % CELLS;
        cells[2 * c]++;
        cells[2 * c + 1] += v[i];
    }
}

static void two_setup(diff_program *p) {
    corpus_buffer(p, "x", DT_I32, N, corpus_ints(N, -50, 50), false);
    corpus_buffer(p, "y", DT_I32, N, corpus_ints(N, -50, 50), false);
    corpus_buffer(p, "out", DT_I32, 2 * N, NULL, true);
    corpus_buffer(p, "swaps", DT_I32, N, NULL, true);
    corpus_launch(p, "two_pointers", GRID, 64, 5, BUF(0), BUF(1), BUF(2), BUF(3), INT(N));
}
static void two_ref(const diff_program *p, void *e[]) {
    const int *x = IN(p, 0, int), *y = IN(p, 1, int);
    int *out = e[2], *swaps = e[3];
    for (int i = 0; i < N; i++) {
        swaps[i] = x[i] > y[i];
        out[2 * i] = x[i] < y[i] ? x[i] : y[i];
        out[2 * i + 1] = x[i] < y[i] ? y[i] : x[i];
    }
}

static void wrap_setup(diff_program *p) {
    corpus_buffer(p, "in", DT_U32, N, corpus_ints(N, 0, 1 << 30), false);
    corpus_buffer(p, "out", DT_U32, N, NULL, true);
    corpus_launch(p, "const_wrap", GRID, 64, 3, BUF(0), BUF(1), INT(N));
}
static void wrap_ref(const diff_program *p, void *e[]) {
    const unsigned *in = IN(p, 0, unsigned);
    unsigned *out = e[1];
    for (int i = 0; i < N; i++) out[i] = (in[i] ^ (2166136261u * 16777619u)) * 16777619u + (969u << 31) + 0xffffffffu * 3u;
}

/* ---- regress_builtins.c: the builtins issue 21 added ---- */
static void builtins_setup(diff_program *p) {
    uint32_t *u = corpus_ints(N, INT32_MIN + 1, INT32_MAX); /* abs_i32(INT_MIN) is INT_MIN, C's abs undefined */
    const uint32_t special[] = {0u, 1u, 0xffffffffu, 0x80000001u, 0x7fffffffu, 16u, 1000u, 999u, 1001u};
    memcpy(u, special, sizeof special);
    float *f = corpus_floats(N, -1000.0f, 1000.0f);
    for (int i = 0; i < N; i += 17) f[i] = NAN;
    for (int i = 4; i < N; i += 19) f[i] = (i & 1) ? INFINITY : -INFINITY;
    f[1] = 0.25f, f[2] = 0.05f, f[3] = -2.5f; /* lrintf: 2.5 and -25 round to even */
    uint32_t *slots = corpus_alloc(N * sizeof *slots), *range = corpus_alloc(2 * sizeof *range);
    for (int i = 0; i < N; i++) slots[i] = 3u * (uint32_t)i + 1u;
    range[0] = 0xffffffffu, range[1] = 0u;
    corpus_buffer(p, "u", DT_U32, N, u, false);
    corpus_buffer(p, "bits", DT_I32, 10 * N, NULL, true);
    corpus_buffer(p, "f", DT_F32, N, f, false);
    corpus_buffer(p, "derived", DT_F32, 5 * N, NULL, true);
    corpus_buffer(p, "kind", DT_I32, N, NULL, true);
    corpus_buffer(p, "range", DT_U32, 2, range, true);
    corpus_buffer(p, "slots", DT_U32, N, slots, true);
    corpus_buffer(p, "old", DT_U32, N, NULL, true);
    /* rsqrtf is within 2 ULP on the GPUs; a GPU may fuse the multiply-add of derived[4] */
    p->buffers[3].ulp = 4;
    p->buffers[3].abs_tol = 1e-4;
    corpus_launch(p, "bit_tricks", GRID, 64, 3, BUF(0), BUF(1), INT(N));
    corpus_launch(p, "classify", GRID, 64, 4, BUF(2), BUF(3), BUF(4), INT(N));
    corpus_launch(p, "unsigned_atomics", GRID, 64, 5, BUF(0), BUF(5), BUF(6), BUF(7), INT(N));
}
static int ref_popcount(uint32_t x) {
    int c = 0;
    for (; x; x &= x - 1) c++;
    return c;
}
static int ref_clz(uint32_t x) {
    int c = 0;
    for (uint32_t bit = 0x80000000u; bit && !(x & bit); bit >>= 1) c++;
    return c;
}
static int ref_ctz(uint32_t x) {
    int c = 0;
    for (uint32_t bit = 1u; bit && !(x & bit); bit <<= 1) c++;
    return c;
}
static void builtins_ref(const diff_program *p, void *e[]) {
    const uint32_t *u = IN(p, 0, uint32_t);
    const float *f = IN(p, 2, float);
    int *bits = e[1], *kind = e[4];
    float *derived = e[3];
    uint32_t *range = e[5], *slots = e[6], *old = e[7];
    for (int i = 0; i < N; i++) {
        uint32_t x = u[i];
        int s = (int)x, *o = bits + 10 * i;
        o[0] = s < 0 ? -s : s;
        o[1] = (s < 7 ? s : 7) ^ (s > -7 ? s : -7);
        o[2] = (int)((x < 1000u ? x : 1000u) ^ (x > 1000u ? x : 1000u));
        o[3] = ref_popcount(x);
        o[4] = ref_clz(x);
        o[5] = ref_ctz(x);
        o[6] = x ? ref_ctz(x) + 1 : 0;
        float g = (float)(s % 4096);
        uint32_t gb;
        memcpy(&gb, &g, sizeof gb);
        o[7] = 1;
        o[8] = 1;
        o[9] = (int)(gb >> 23);

        float y = f[i], *d = derived + 5 * i;
        kind[i] = isnan(y) ? 1 : isinf(y) ? 2 : 4;
        if (kind[i] == 4) {
            d[0] = 1.0f / sqrtf(fabsf(y) + 1.0f);
            d[1] = ldexpf(y, i % 9 - 4);
            d[2] = (float)lrintf(y * 10.0f);
            d[3] = 3.14159265358979323846f * y;
            d[4] = (float)(3.14159265358979323846 * 2.0) + (float)(3.14159265358979323846 / 4.0) * y;
        }

        if (x < range[0]) range[0] = x;
        if (x > range[1]) range[1] = x;
        old[i] = slots[i];
        slots[i] = x;
    }
}

/* ---- struct_params.c: a struct by value (RK_ARG_STRUCT) ---- */
typedef struct Params {
    float dt, gravity;
    int n;
    unsigned seed;
    float bounds[2];
    long long step;
} Params;
static const Params params = {0.01f, 9.81f, N - 7, 0x9e3779b9u, {-1.0f, 1.0f}, 123456789012LL};
#define PARAMS DIFF_SCALAR(RK_ARG_STRUCT_OF(&params, "ffiuffl"))
static void struct_params_setup(diff_program *p) {
    corpus_buffer(p, "y", DT_F32, N, corpus_floats(N, -1.0f, 1.0f), true);
    corpus_buffer(p, "v", DT_F32, N, corpus_floats(N, -200.0f, 200.0f), true);
    corpus_buffer(p, "tags", DT_I32, N, NULL, true);
    corpus_buffer(p, "scaled", DT_F32, N, NULL, true);
    for (size_t b = 0; b < 4; b++) p->buffers[b].abs_tol = 1e-5; /* a GPU may fuse multiply-adds */
    corpus_launch(p, "integrate", GRID, 64, 4, PARAMS, BUF(0), BUF(1), BUF(2));
    corpus_launch(p, "rescale", GRID, 64, 4, BUF(0), PARAMS, BUF(3), FLT(3.0f));
}
static void struct_params_ref(const diff_program *p, void *e[]) {
    float *y = e[0], *v = e[1], *scaled = e[3];
    int *tags = e[2];
    (void)p;
    for (int i = 0; i < params.n; i++) {
        v[i] -= params.gravity * params.dt;
        y[i] += v[i] * params.dt;
        if (y[i] < params.bounds[0]) {
            y[i] = params.bounds[0];
            v[i] = -v[i];
        } else if (y[i] > params.bounds[1]) {
            y[i] = params.bounds[1];
            v[i] = -v[i];
        }
        tags[i] = (int)(params.step % 1000) + (int)((params.seed >> (i & 7)) & 7u);
        scaled[i] = (y[i] - params.bounds[0]) * 3.0f / (params.bounds[1] - params.bounds[0]);
    }
}

const corpus_case corpus_regress[] = {
    {"regress_elseif_stmt.c", elseif_setup, elseif_ref, false, NULL},
    {"regress_ternary_atomic.c", ternary_setup, ternary_ref, false, NULL},
    {"regress_logical_effects.c", logical_setup, logical_ref, false, NULL},
    {"regress_cas_loop.c", cas_setup, cas_ref, false, NULL},
    {"regress_nan_inf.c", nan_setup, nan_ref, false, NULL},
    {"regress_struct_atomic.c", struct_setup, struct_ref, true, NULL}, /* WGSL refuses it (tpfix ddf9e34) */
    {"regress_two_pointers.c", two_setup, two_ref, false, NULL},
    {"regress_const_wrap.c", wrap_setup, wrap_ref, false, NULL},
    {"struct_params.c", struct_params_setup, struct_params_ref, false, NULL},
    {"regress_builtins.c", builtins_setup, builtins_ref, false, NULL},
};
const size_t corpus_regress_count = sizeof corpus_regress / sizeof corpus_regress[0];
