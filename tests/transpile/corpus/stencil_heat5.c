/* One explicit heat step on a 2-D grid: the 5-point Laplacian through the
 * stencil DSL's neighbour reads. */
#include <ringkernel/dsl_stencil.h>

RK_KERNEL void heat5(const float *t, float *next, float alpha, rk_grid_pos p) {
    float c = t[rk_pos_idx(p)];
    float lap = rk_north(p, t) + rk_south(p, t) + rk_east(p, t) + rk_west(p, t) - 4.0f * c;
    next[rk_pos_idx(p)] = c + alpha * lap;
}
