/* A 3x3 binomial blur (weights 1 2 1 / 2 4 2 / 1 2 1, over 16) with rk_at. */
#include <ringkernel/dsl_stencil.h>

RK_KERNEL void blur9(const float *img, float *out, rk_grid_pos p) {
    float corners = rk_at(p, img, -1, -1) + rk_at(p, img, 1, -1) + rk_at(p, img, -1, 1) + rk_at(p, img, 1, 1);
    float edges = rk_at(p, img, 0, -1) + rk_at(p, img, 0, 1) + rk_at(p, img, -1, 0) + rk_at(p, img, 1, 0);
    out[rk_pos_idx(p)] = (corners + 2.0f * edges + 4.0f * rk_at(p, img, 0, 0)) * 0.0625f;
}
