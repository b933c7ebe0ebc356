/* Corpus cases: stencils (the stencil DSL in 2-D and 3-D, halo 1 and 2,
 * position-dependent rules) and a hand-written global-kernel stencil, at
 * grid sizes no tile divides. */
#include <math.h>

#include "corpus.h"


enum { NX = 37, NY = 21, NZ = 11 };

static int clampi(int v, int n) { return v < 0 ? 0 : v >= n ? n - 1 : v; }
/* The cell at (x + dx, y + dy, z + dz), clamp-to-edge (dsl_stencil.h's rule). */
static int at(int x, int y, int z, int dx, int dy, int dz, int nx, int ny, int nz) {
    return (clampi(z + dz, nz) * ny + clampi(y + dy, ny)) * nx + clampi(x + dx, nx);
}

static void stencil_launch(diff_program *p, const char *kernel, int nx, int ny, int nz, size_t argc, diff_arg a0,
                           diff_arg a1, diff_arg a2) {
    corpus_launch(p, kernel, 1, 1, argc, a0, a1, a2);
    diff_launch *l = &p->launches[p->launch_count - 1];
    l->cells[0] = nx, l->cells[1] = ny, l->cells[2] = nz;
}

static void heat5_setup(diff_program *p) {
    corpus_buffer(p, "t", DT_F32, NX * NY, corpus_floats(NX * NY, 0.0f, 100.0f), false);
    corpus_buffer(p, "next", DT_F32, NX * NY, NULL, true);
    p->buffers[1].ulp = 2; /* c + alpha * lap: fused on a GPU */
    stencil_launch(p, "heat5", NX, NY, 1, 3, BUF(0), BUF(1), FLT(0.2f));
}
static void heat5_ref(const diff_program *p, void *e[]) {
    const float *t = IN(p, 0, float);
    float *next = e[1];
    for (int y = 0; y < NY; y++)
        for (int x = 0; x < NX; x++) {
            float c = t[y * NX + x];
            float lap = t[at(x, y, 0, 0, -1, 0, NX, NY, 1)] + t[at(x, y, 0, 0, 1, 0, NX, NY, 1)] +
                        t[at(x, y, 0, 1, 0, 0, NX, NY, 1)] + t[at(x, y, 0, -1, 0, 0, NX, NY, 1)] - 4.0f * c;
            next[y * NX + x] = c + 0.2f * lap;
        }
}

static void blur9_setup(diff_program *p) {
    corpus_buffer(p, "img", DT_F32, NX * NY, corpus_floats(NX * NY, 0.0f, 1.0f), false);
    corpus_buffer(p, "out", DT_F32, NX * NY, NULL, true);
    stencil_launch(p, "blur9", NX, NY, 1, 2, BUF(0), BUF(1), BUF(1));
}
static void blur9_ref(const diff_program *p, void *e[]) {
    const float *g = IN(p, 0, float);
    float *out = e[1];
    for (int y = 0; y < NY; y++)
        for (int x = 0; x < NX; x++) {
#define G(dx, dy) g[at(x, y, 0, dx, dy, 0, NX, NY, 1)]
            float corners = G(-1, -1) + G(1, -1) + G(-1, 1) + G(1, 1);
            float edges = G(0, -1) + G(0, 1) + G(-1, 0) + G(1, 0);
            out[y * NX + x] = (corners + 2.0f * edges + 4.0f * G(0, 0)) * 0.0625f;
#undef G
        }
}

static void diffuse3d_setup(diff_program *p) {
    int n = NX * NY * NZ;
    corpus_buffer(p, "u", DT_I32, (size_t)n, corpus_ints((size_t)n, 0, 1 << 16), false);
    corpus_buffer(p, "out", DT_I32, (size_t)n, NULL, true);
    stencil_launch(p, "diffuse3d", NX, NY, NZ, 3, BUF(0), BUF(1), INT(3));
}
static void diffuse3d_ref(const diff_program *p, void *e[]) {
    const int *u = IN(p, 0, int);
    int *out = e[1];
    for (int z = 0; z < NZ; z++)
        for (int y = 0; y < NY; y++)
            for (int x = 0; x < NX; x++) {
                int c = u[(z * NY + y) * NX + x], sum = 0;
                static const int d[6][3] = {{-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}, {0, 0, 1}, {0, 0, -1}};
                for (int k = 0; k < 6; k++) sum += u[at(x, y, z, d[k][0], d[k][1], d[k][2], NX, NY, NZ)];
                out[(z * NY + y) * NX + x] = c + ((sum - 6 * c) >> 3);
            }
}

static void border_setup(diff_program *p) {
    corpus_buffer(p, "in", DT_I32, NX * NY, corpus_ints(NX * NY, -1000, 1000), false);
    corpus_buffer(p, "out", DT_I32, NX * NY, NULL, true);
    stencil_launch(p, "border", NX, NY, 1, 3, BUF(0), BUF(1), INT(7));
}
static void border_ref(const diff_program *p, void *e[]) {
    const int *in = IN(p, 0, int);
    int *out = e[1];
    for (int y = 0; y < NY; y++)
        for (int x = 0; x < NX; x++) {
#define I(dx, dy) in[at(x, y, 0, dx, dy, 0, NX, NY, 1)]
            int v;
            if (x == 0 || y == 0 || x == NX - 1 || y == NY - 1) v = -1;
            else if (x == NX / 2) v = I(0, -2) + I(0, 2);
            else v = I(-2, 0) + I(2, 0) + I(0, -1) + I(0, 1) + 7;
            out[y * NX + x] = v;
#undef I
        }
}

static void jacobi_setup(diff_program *p) {
    corpus_buffer(p, "u", DT_F32, NX * NY, corpus_floats(NX * NY, -1.0f, 1.0f), false);
    corpus_buffer(p, "f", DT_F32, NX * NY, corpus_floats(NX * NY, -1.0f, 1.0f), false);
    corpus_buffer(p, "next", DT_F32, NX * NY, NULL, true);
    corpus_buffer(p, "residual", DT_I32, NY, NULL, true);
    corpus_launch(p, "jacobi", 1, 1, 7, BUF(0), BUF(1), BUF(2), BUF(3), INT(NX), INT(NY), FLT(0.5f));
    p->launches[0].grid = (rk_dim3){(NX + 7) / 8, (NY + 7) / 8, 1};
    p->launches[0].block = (rk_dim3){8, 8, 1};
}
static void jacobi_ref(const diff_program *p, void *e[]) {
    const float *u = IN(p, 0, float), *f = IN(p, 1, float);
    float *next = e[2];
    int *res = e[3];
    for (int y = 0; y < NY; y++)
        for (int x = 0; x < NX; x++) {
            float v = 0.25f * (u[at(x, y, 0, 0, -1, 0, NX, NY, 1)] + u[at(x, y, 0, 0, 1, 0, NX, NY, 1)] +
                               u[at(x, y, 0, -1, 0, 0, NX, NY, 1)] + u[at(x, y, 0, 1, 0, 0, NX, NY, 1)] -
                               0.5f * f[y * NX + x]);
            next[y * NX + x] = v;
            res[y] += (int)(fabsf(v - u[y * NX + x]) * 256.0f);
        }
}

const corpus_case corpus_stencil[] = {
    {"stencil_heat5.c", heat5_setup, heat5_ref, false, NULL},
    {"stencil_blur9.c", blur9_setup, blur9_ref, false, NULL},
    {"stencil_diffuse3d.c", diffuse3d_setup, diffuse3d_ref, false, NULL},
    {"stencil_border.c", border_setup, border_ref, false, NULL},
    {"jacobi_global.c", jacobi_setup, jacobi_ref, false, NULL},
};
const size_t corpus_stencil_count = sizeof corpus_stencil / sizeof corpus_stencil[0];
