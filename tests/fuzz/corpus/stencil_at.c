#include <ringkernel/dsl_stencil.h>
#define R 2
RK_KERNEL void blur(const double *in, double *out, rk_grid_pos p, double w) {
    double s = rk_at(p, in, -R, 0) + rk_at(p, in, R, 0) + rk_at(p, in, 0, -R) + rk_at(p, in, 0, R);
    if (rk_pos_x(p) == 0 || rk_pos_y(p) == rk_pos_ny(p) - 1) s = 0.0;
    out[rk_pos_idx(p)] = w * s + rk_at(p, in, 1, -1);
}
