/* The stencil example sources, unchanged, as host C, and references for
 * them written without the DSL (clamp-to-edge by hand). */
#include "cpu_examples.h"

#include "laplacian.c"
#include "heat3d.c"
#include "../../tests/transpile/cases/blur.c"

void cpu_laplacian(const float *in, float *out, int nx, int ny) {
    rk_stencil_for_each(p, nx, ny, 1) laplacian(in, out, p);
}

void cpu_heat3d(const float *in, float *out, float alpha, int nx, int ny, int nz) {
    rk_stencil_for_each(p, nx, ny, nz) heat3d(in, out, alpha, p);
}

typedef struct blur_args {
    const double *a, *b;
    double *out;
    double mix;
} blur_args;

static void blur_cell(void *user, rk_grid_pos p) {
    blur_args *args = user;
    blur(args->a, args->b, args->out, args->mix, p);
}

void cpu_blur(const double *a, const double *b, double *out, double mix, int nx, int ny) {
    blur_args args = {a, b, out, mix};
    rk_stencil_run(nx, ny, 1, blur_cell, &args); /* the callback form of the driver */
}

/* ---- references --------------------------------------------------------- */

static int clampi(int v, int n) { return v < 0 ? 0 : v >= n ? n - 1 : v; }

void ref_laplacian(const float *in, float *out, int nx, int ny) {
    for (int y = 0; y < ny; y++)
        for (int x = 0; x < nx; x++) {
            float n = in[clampi(y - 1, ny) * nx + x], s = in[clampi(y + 1, ny) * nx + x];
            float e = in[y * nx + clampi(x + 1, nx)], w = in[y * nx + clampi(x - 1, nx)];
            out[y * nx + x] = n + s + e + w - 4.0f * in[y * nx + x];
        }
}

void ref_heat3d(const float *in, float *out, float alpha, int nx, int ny, int nz) {
#define AT(x, y, z) in[((size_t)clampi(z, nz) * ny + clampi(y, ny)) * nx + clampi(x, nx)]
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++) {
                float c = AT(x, y, z);
                float sum = AT(x - 1, y, z) + AT(x + 1, y, z) + AT(x, y - 1, z) + AT(x, y + 1, z) + AT(x, y, z - 1) +
                            AT(x, y, z + 1);
                out[((size_t)z * ny + y) * nx + x] = c + alpha * (sum - 6.0f * c);
            }
#undef AT
}

void ref_blur(const double *a, const double *b, double *out, double mix, int nx, int ny) {
#define A(x, y) a[clampi(y, ny) * nx + clampi(x, nx)]
#define B(x, y) b[clampi(y, ny) * nx + clampi(x, nx)]
    for (int y = 0; y < ny; y++)
        for (int x = 0; x < nx; x++) {
            double near = A(x - 1, y) + A(x + 1, y) + A(x, y - 1) + A(x, y + 1);
            double far = A(x - 2, y) + A(x + 2, y) + A(x, y - 2) + A(x, y + 2);
            double s = near / 2.0 + far / 5.0;
            double edge = (x == 0 || y == 0 || x == nx - 1 || y == ny - 1) ? 1.0 : 0.0;
            out[y * nx + x] = (1.0 - mix) * s + mix * (B(x, y - 1) - B(x, y + 1)) + edge;
        }
#undef A
#undef B
}
