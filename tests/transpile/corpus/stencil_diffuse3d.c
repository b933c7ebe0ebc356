/* A 7-point 3-D diffusion step on an int grid (fixed point): neighbours
 * through rk_up/rk_down and the four in-plane directions. */
#include <ringkernel/dsl_stencil.h>

RK_KERNEL void diffuse3d(const int *u, int *out, int shift, rk_grid_pos p) {
    int c = u[rk_pos_idx(p)];
    int sum = rk_west(p, u) + rk_east(p, u) + rk_north(p, u) + rk_south(p, u) + rk_up(p, u) + rk_down(p, u);
    out[rk_pos_idx(p)] = c + ((sum - 6 * c) >> shift);
}
