/* Regression (found by the random generator): unsigned arithmetic on
 * constants that wraps, as hash code is written, must wrap as in C; the
 * WGSL output kept it a constant expression, which WGSL refuses when it
 * overflows ("969 << 31 cannot be represented as u32"). */
#include <ringkernel/dsl.h>

#define FNV_PRIME 16777619u

RK_KERNEL void const_wrap(const unsigned *in, unsigned *out, int n) {
    int i = block_idx_x() * block_dim_x() + thread_idx_x();
    if (i >= n) return;
    unsigned seed = 2166136261u * FNV_PRIME;
    unsigned top = 969u << 31;
    out[i] = (in[i] ^ seed) * FNV_PRIME + top + (unsigned)(-1) * 3u;
}
