/* Integer corner cases, element by element: signed division and remainder
 * (truncating toward zero) with negative operands and INT_MIN, arithmetic
 * right shifts, unsigned wrap-around, bit counts, float<->int conversions
 * that truncate, and comparisons mixing signed and unsigned. */
#include <ringkernel/dsl.h>

#define OUTS 8

RK_KERNEL void int_ops(const int *a, const int *b, int *out, unsigned *uout, int n) {
    int i = block_idx_x() * block_dim_x() + thread_idx_x();
    if (i >= n) return;
    int x = a[i], y = b[i]; /* y != 0, and never INT_MIN / -1 */
    unsigned ux = (unsigned)x, uy = (unsigned)y;
    out[i * OUTS + 0] = x / y;
    out[i * OUTS + 1] = x % y;
    out[i * OUTS + 2] = x >> (y & 31);
    out[i * OUTS + 3] = (int)((unsigned)min_i32(x, y) - (unsigned)max_i32(x / 2, y / 2));
    out[i * OUTS + 4] = (int)(ux * uy + 0x9e3779b9u);
    out[i * OUTS + 5] = popcount_u32(ux) + 100 * clz_u32(uy | 1u);
    out[i * OUTS + 6] = ctz_u32(ux | 0x80000000u) + (ffs_u32(uy) << 8);
    out[i * OUTS + 7] = (int)((float)(x >> 8) * 0.5f) + abs_i32(y >> 1);
    uout[i * OUTS + 0] = ux / uy;
    uout[i * OUTS + 1] = ux % uy;
    uout[i * OUTS + 2] = ux >> (uy & 31u);
    uout[i * OUTS + 3] = ux << (uy & 31u);
    uout[i * OUTS + 4] = (unsigned)(x < y) | (unsigned)(ux < uy) << 1 | (unsigned)(x == -1) << 2;
    uout[i * OUTS + 5] = ~ux ^ (uy >> 3);
    uout[i * OUTS + 6] = (ux - uy) * 3u;
    uout[i * OUTS + 7] = max_u32(ux, uy) - min_u32(ux, uy);
}
