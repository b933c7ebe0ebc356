/* The spec's stencil example: the 5-point Laplacian of a 2-D grid.
 *
 * A stencil kernel takes an rk_grid_pos and reads neighbours through it.
 * On the CPU, rk_stencil_run (dsl_stencil.h) calls it once per cell; the
 * transpiler turns it into a tiled CUDA kernel that loads each block's tile
 * and halo into shared memory. Cells outside the grid read as the nearest
 * edge cell (clamp-to-edge), on both. */
#include <ringkernel/dsl_stencil.h>

RK_KERNEL void laplacian(const float *input, float *output, rk_grid_pos p) {
    float lap = rk_north(p, input) + rk_south(p, input) + rk_east(p, input) + rk_west(p, input) -
                4.0f * input[rk_pos_idx(p)];
    output[rk_pos_idx(p)] = lap;
}
