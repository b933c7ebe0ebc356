/* A 3-D stencil: one explicit step of heat diffusion with the 7-point
 * Laplacian, out = in + alpha * (sum of the six neighbours - 6 * in).
 * rk_up/rk_down make it 3-D; transpiled with the default 8x8x8 tile, or
 * e.g. `rk transpile --tile 16x8x4 heat3d.c`. */
#include <ringkernel/dsl_stencil.h>

RK_KERNEL void heat3d(const float *in, float *out, float alpha, rk_grid_pos p) {
    float c = in[rk_pos_idx(p)];
    float sum = rk_west(p, in) + rk_east(p, in) + rk_north(p, in) + rk_south(p, in) + rk_down(p, in) + rk_up(p, in);
    out[rk_pos_idx(p)] = c + alpha * (sum - 6.0f * c);
}
