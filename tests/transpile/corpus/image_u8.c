/* 8-bit grayscale: contrast stretch with saturation, then a threshold mask. */
#include <ringkernel/dsl.h>

RK_KERNEL void image_u8(const uint8_t *in, uint8_t *out, uint8_t *mask, int lo, int hi, int n) {
    int i = block_idx_x() * block_dim_x() + thread_idx_x();
    if (i >= n) return;
    int v = in[i];
    int s = (v - lo) * 255 / (hi - lo);
    if (s < 0) s = 0;
    else if (s > 255) s = 255;
    out[i] = (uint8_t)s;
    mask[i] = (uint8_t)(s > 127 ? 0xff : 0);
}
