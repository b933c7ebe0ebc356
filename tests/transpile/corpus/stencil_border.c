/* Position-dependent stencil: border cells, the centre column and inner
 * cells get different rules, chosen by an else-if chain on the grid
 * position; a cross of radius 2 (halo 2) inside. */
#include <ringkernel/dsl_stencil.h>

RK_KERNEL void border(const int *in, int *out, int bias, rk_grid_pos p) {
    int x = rk_pos_x(p), y = rk_pos_y(p);
    int v;
    if (x == 0 || y == 0 || x == rk_pos_nx(p) - 1 || y == rk_pos_ny(p) - 1) {
        v = -1;
    } else if (x == rk_pos_nx(p) / 2) {
        v = rk_at(p, in, 0, -2) + rk_at(p, in, 0, 2);
    } else {
        v = rk_at(p, in, -2, 0) + rk_at(p, in, 2, 0) + rk_at(p, in, 0, -1) + rk_at(p, in, 0, 1) + bias;
    }
    out[rk_pos_idx(p)] = v;
}
