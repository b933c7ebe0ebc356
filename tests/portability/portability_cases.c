/* The portability suite (issue 18): common kernel patterns written once and
 * launched with the blocks a CUDA programmer picks (128, 256, 16x16), each
 * compared with a plain C reference on every executor (CPU, CUDA output on
 * the host, WGSL on WebGPU, CUDA on a GPU). The kernels are the .c files
 * beside this one; transpile_diff_corpus --portability runs them. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"

enum { N = 5000 };

static uint32_t blocks_for(uint32_t n, uint32_t block) { return (n + block - 1) / block; }

/* ---- reduce.c ---- */
static void reduce_setup(diff_program *p, uint32_t block) {
    uint32_t grid = blocks_for(N, block);
    corpus_buffer(p, "in", DT_I32, N, corpus_ints(N, -1000, 1000), false);
    corpus_buffer(p, "block_sums", DT_I32, grid, NULL, true);
    corpus_buffer(p, "total", DT_I32, 1, NULL, true);
    corpus_buffer(p, "fin", DT_F32, N, corpus_floats(N, -50.0f, 50.0f), false);
    corpus_buffer(p, "block_max", DT_F32, 7, NULL, true);
    corpus_launch(p, "block_sum", grid, block, 4, BUF(0), BUF(1), BUF(2), INT(N));
    corpus_launch(p, "grid_max", 7, block, 3, BUF(3), BUF(4), INT(N));
}
static void reduce_ref(const diff_program *p, void *e[], uint32_t block) {
    const int *in = IN(p, 0, int);
    const float *fin = IN(p, 3, float);
    int *sums = e[1], *total = e[2];
    float *bmax = e[4];
    for (int i = 0; i < N; i++) sums[i / (int)block] += in[i], *total += in[i];
    for (int b = 0; b < 7; b++) {
        bmax[b] = -1.0e30f;
        for (int start = b * (int)block; start < N; start += 7 * (int)block)
            for (int i = start; i < start + (int)block && i < N; i++) bmax[b] = fmaxf(bmax[b], fin[i]);
    }
}
static void reduce_setup_128(diff_program *p) { reduce_setup(p, 128); }
static void reduce_setup_256(diff_program *p) { reduce_setup(p, 256); }
static void reduce_ref_128(const diff_program *p, void *e[]) { reduce_ref(p, e, 128); }
static void reduce_ref_256(const diff_program *p, void *e[]) { reduce_ref(p, e, 256); }

/* ---- scan.c ---- */
static void scan_setup(diff_program *p, uint32_t block) {
    uint32_t grid = blocks_for(N, block);
    corpus_buffer(p, "in", DT_I32, N, corpus_ints(N, -100, 100), false);
    corpus_buffer(p, "out", DT_I32, N, NULL, true);
    corpus_buffer(p, "block_totals", DT_I32, grid, NULL, true);
    corpus_launch(p, "block_scan", grid, block, 4, BUF(0), BUF(1), BUF(2), INT(N));
    corpus_launch(p, "add_block_offsets", grid, block, 3, BUF(1), BUF(2), INT(N));
}
static void scan_ref(const diff_program *p, void *e[], uint32_t block) {
    const int *in = IN(p, 0, int);
    int *out = e[1], *tot = e[2], run = 0;
    for (int i = 0; i < N; i++) {
        run += in[i];
        out[i] = run;
        tot[i / (int)block] += in[i];
    }
}
static void scan_setup_128(diff_program *p) { scan_setup(p, 128); }
static void scan_setup_256(diff_program *p) { scan_setup(p, 256); }
static void scan_ref_128(const diff_program *p, void *e[]) { scan_ref(p, e, 128); }
static void scan_ref_256(const diff_program *p, void *e[]) { scan_ref(p, e, 256); }

/* ---- matmul.c: 37 x 29 times 29 x 45, and a 37 x 45 transpose ---- */
enum { MM = 37, MK = 29, MN = 45 };
static void launch_2d(diff_program *p, uint32_t gx, uint32_t gy) {
    diff_launch *l = &p->launches[p->launch_count - 1];
    l->grid = (rk_dim3){gx, gy, 1};
    l->block = (rk_dim3){16, 16, 1};
}
static void matmul_setup(diff_program *p) {
    corpus_buffer(p, "a", DT_F32, MM * MK, corpus_floats(MM * MK, -1.0f, 1.0f), false);
    corpus_buffer(p, "b", DT_F32, MK * MN, corpus_floats(MK * MN, -1.0f, 1.0f), false);
    corpus_buffer(p, "c", DT_F32, MM * MN, NULL, true);
    corpus_buffer(p, "ct", DT_F32, MN * MM, NULL, true);
    p->buffers[2].abs_tol = 1e-5; /* a GPU may fuse multiply-adds */
    p->buffers[3].abs_tol = 1e-5;
    corpus_launch(p, "matmul", 1, 1, 6, BUF(0), BUF(1), BUF(2), INT(MM), INT(MN), INT(MK));
    launch_2d(p, blocks_for(MN, 16), blocks_for(MM, 16));
    corpus_launch(p, "transpose", 1, 1, 4, BUF(2), BUF(3), INT(MM), INT(MN));
    launch_2d(p, blocks_for(MN, 16), blocks_for(MM, 16));
}
static void matmul_ref(const diff_program *p, void *e[]) {
    const float *a = IN(p, 0, float), *b = IN(p, 1, float);
    float *c = e[2], *ct = e[3];
    for (int r = 0; r < MM; r++)
        for (int col = 0; col < MN; col++) {
            float acc = 0.0f;
            for (int j = 0; j < MK; j++) acc += a[r * MK + j] * b[j * MN + col];
            c[r * MN + col] = acc;
            ct[col * MM + r] = acc;
        }
}

/* ---- histogram.c ---- */
static void histogram_setup(diff_program *p, uint32_t block) {
    int *v = corpus_ints(N, -100000, 100000);
    v[17] = INT_MIN;
    v[4321] = INT_MAX;
    static const int32_t range0[2] = {INT_MAX, INT_MIN};
    corpus_buffer(p, "data", DT_I32, N, v, false);
    corpus_buffer(p, "bins", DT_U32, 64, NULL, true);
    corpus_buffer(p, "range", DT_I32, 2, range0, true);
    corpus_launch(p, "histogram", 5, block, 4, BUF(0), BUF(1), BUF(2), INT(N));
}
static void histogram_ref(const diff_program *p, void *e[]) {
    const int *v = IN(p, 0, int);
    unsigned *bins = e[1];
    int *range = e[2];
    for (int i = 0; i < N; i++) {
        bins[(unsigned)v[i] % 64u]++;
        if (v[i] < range[0]) range[0] = v[i];
        if (v[i] > range[1]) range[1] = v[i];
    }
}
static void histogram_setup_128(diff_program *p) { histogram_setup(p, 128); }
static void histogram_setup_256(diff_program *p) { histogram_setup(p, 256); }

/* ---- intops.c ---- */
enum { NI = 600, OUTS = 8 };
static void intops_setup(diff_program *p) {
    static const int32_t corner_a[] = {INT_MIN, INT_MAX, -1, 0, 1, -7, 7, INT_MIN + 1, -2, 123456789};
    static const int32_t corner_b[] = {1, -1, 7, -7, INT_MAX, INT_MIN, 3, -3, 31, -32};
    int32_t *a = corpus_ints(NI, INT_MIN + 1, INT_MAX - 1), *b = corpus_ints(NI, -70000, 70000);
    for (int i = 0; i < NI; i++) {
        if (i < 100) a[i] = corner_a[i % 10], b[i] = corner_b[i / 10];
        if (b[i] == 0) b[i] = 5;
        if (a[i] == INT_MIN && b[i] == -1) b[i] = 2;
    }
    corpus_buffer(p, "a", DT_I32, NI, a, false);
    corpus_buffer(p, "b", DT_I32, NI, b, false);
    corpus_buffer(p, "out", DT_I32, NI * OUTS, NULL, true);
    corpus_buffer(p, "uout", DT_U32, NI * OUTS, NULL, true);
    corpus_launch(p, "int_ops", blocks_for(NI, 128), 128, 5, BUF(0), BUF(1), BUF(2), BUF(3), INT(NI));
}
static int popcount(uint32_t v) { int c = 0; for (; v; v &= v - 1) c++; return c; }
static int clz(uint32_t v) { int c = 0; for (uint32_t m = 0x80000000u; m && !(v & m); m >>= 1) c++; return c; }
static int ctz(uint32_t v) { int c = 0; for (uint32_t m = 1u; m && !(v & m); m <<= 1) c++; return c; }
static void intops_ref(const diff_program *p, void *e[]) {
    const int *a = IN(p, 0, int), *b = IN(p, 1, int);
    int *out = e[2];
    unsigned *uout = e[3];
    for (int i = 0; i < NI; i++) {
        int x = a[i], y = b[i];
        unsigned ux = (unsigned)x, uy = (unsigned)y;
        int *o = out + i * OUTS;
        unsigned *u = uout + i * OUTS;
        o[0] = x / y;
        o[1] = x % y;
        o[2] = x >> (y & 31);
        o[3] = (int)((unsigned)(x < y ? x : y) - (unsigned)(x / 2 > y / 2 ? x / 2 : y / 2));
        o[4] = (int)(ux * uy + 0x9e3779b9u);
        o[5] = popcount(ux) + 100 * clz(uy | 1u);
        o[6] = ctz(ux | 0x80000000u) + ((uy ? ctz(uy) + 1 : 0) << 8);
        o[7] = (int)((float)(x >> 8) * 0.5f) + abs(y >> 1);
        u[0] = ux / uy;
        u[1] = ux % uy;
        u[2] = ux >> (uy & 31u);
        u[3] = ux << (uy & 31u);
        u[4] = (unsigned)(x < y) | (unsigned)(ux < uy) << 1 | (unsigned)(x == -1) << 2;
        u[5] = ~ux ^ (uy >> 3);
        u[6] = (ux - uy) * 3u;
        u[7] = (ux > uy ? ux : uy) - (ux < uy ? ux : uy);
    }
}

/* ---- math.c ---- */
enum { NM = 1000 };
static void math_setup(diff_program *p) {
    float *x = corpus_floats(NM, -4.0f, 4.0f);
    x[0] = 0.0f, x[1] = -0.0f, x[2] = 4.0f, x[3] = -4.0f, x[4] = 0.5f, x[5] = -2.5f;
    corpus_buffer(p, "x", DT_F32, NM, x, false);
    corpus_buffer(p, "exact", DT_F32, NM * OUTS, NULL, true);
    corpus_buffer(p, "approx", DT_F32, NM * OUTS, NULL, true);
    p->buffers[1].ulp = 3;       /* WGSL's sqrt is within 2.5 ULP */
    p->buffers[2].ulp = 64;      /* transcendental functions: Vulkan's exp and pow are within 3 + 2|x| ULP */
    p->buffers[2].abs_tol = 1e-3; /* sin, cos near zero: absolute error 2^-11 */
    corpus_launch(p, "math_ops", blocks_for(NM, 256), 256, 4, BUF(0), BUF(1), BUF(2), INT(NM));
}
static void math_ref(const diff_program *p, void *e[]) {
    const float *x = IN(p, 0, float);
    float *ex = e[1], *ap = e[2];
    for (int i = 0; i < NM; i++) {
        float v = x[i];
        float *o = ex + i * OUTS, *a = ap + i * OUTS;
        o[0] = floorf(v), o[1] = ceilf(v), o[2] = fabsf(v), o[3] = fminf(v, 0.5f), o[4] = fmaxf(v, -0.5f);
        o[5] = truncf(v * 3.0f), o[6] = sqrtf(fabsf(v)), o[7] = copysignf(2.0f, v);
        a[0] = expf(v), a[1] = logf(fabsf(v) + 1.0f), a[2] = sinf(v * 0.75f), a[3] = cosf(v * 0.75f);
        a[4] = tanhf(v), a[5] = atan2f(v, 1.5f), a[6] = powf(fabsf(v) + 0.5f, 1.5f);
        a[7] = 1.0f / sqrtf(fabsf(v) + 1.0f) + fmaf(v, v, 1.0f);
    }
}

const corpus_case corpus_portable[] = {
    {"portability/reduce.c", reduce_setup_128, reduce_ref_128, false, NULL},
    {"portability/reduce.c", reduce_setup_256, reduce_ref_256, false, NULL},
    {"portability/scan.c", scan_setup_128, scan_ref_128, false, NULL},
    {"portability/scan.c", scan_setup_256, scan_ref_256, false, NULL},
    {"portability/matmul.c", matmul_setup, matmul_ref, false, NULL},
    {"portability/histogram.c", histogram_setup_128, histogram_ref, false, NULL},
    {"portability/histogram.c", histogram_setup_256, histogram_ref, false, NULL},
    {"portability/intops.c", intops_setup, intops_ref, false, NULL},
    {"portability/math.c", math_setup, math_ref, false, NULL},
};
const size_t corpus_portable_count = sizeof corpus_portable / sizeof corpus_portable[0];
