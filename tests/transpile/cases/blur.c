/* Golden case: a stencil over two inputs, a radius-2 cross in double
 * precision, a helper function and edge tests through the grid position. */
#include <ringkernel/dsl_stencil.h>

#define R 2

static double weight(int d) { return 1.0 / (double)(1 + d * d); }

RK_KERNEL void blur(const double *a, const double *b, double *out, double mix, rk_grid_pos p) {
    double near = rk_at(p, a, -1, 0) + rk_at(p, a, 1, 0) + rk_at(p, a, 0, -1) + rk_at(p, a, 0, 1);
    double far = rk_at(p, a, -R, 0) + rk_at(p, a, R, 0) + rk_at(p, a, 0, -R) + rk_at(p, a, 0, R);
    double s = weight(1) * near + weight(R) * far;
    int x = rk_pos_x(p), y = rk_pos_y(p);
    double edge = (x == 0 || y == 0 || x == rk_pos_nx(p) - 1 || y == rk_pos_ny(p) - 1) ? 1.0 : 0.0;
    out[rk_pos_idx(p)] = (1.0 - mix) * s + mix * (rk_north(p, b) - rk_south(p, b)) + edge;
}
