/* A Jacobi sweep for the 2-D Poisson equation written as a plain global
 * kernel: 2-D thread indices, neighbours clamped by hand, and the residual
 * per row accumulated with atomics on fixed-point ints. */
#include <ringkernel/dsl.h>

RK_DEVICE int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

RK_KERNEL void jacobi(const float *u, const float *f, float *next, int *residual, int w, int h, float h2) {
    int x = block_idx_x() * block_dim_x() + thread_idx_x();
    int y = block_idx_y() * block_dim_y() + thread_idx_y();
    if (x >= w || y >= h) return;
    float n = u[clampi(y - 1, 0, h - 1) * w + x];
    float s = u[clampi(y + 1, 0, h - 1) * w + x];
    float west = u[y * w + clampi(x - 1, 0, w - 1)];
    float east = u[y * w + clampi(x + 1, 0, w - 1)];
    float v = 0.25f * (n + s + west + east - h2 * f[y * w + x]);
    next[y * w + x] = v;
    float r = v - u[y * w + x];
    atomic_add_i32(&residual[y], (int)(fabsf(r) * 256.0f));
}
