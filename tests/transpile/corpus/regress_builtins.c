/* Regression (issue 21): the builtins CUDA programmers reach for first, as a
 * user writes them: bit tricks on a sample's bits, a float classifier with
 * pi, rounding and scaling, and unsigned atomics in a kernel declared for
 * its block size. Each must mean the same on every target. */
#include <ringkernel/dsl.h>

/* Integer helpers and bit counts of u[i]; out has 10 words per element. */
RK_KERNEL void bit_tricks(const uint32_t *u, int *out, int n) {
    int i = block_idx_x() * block_dim_x() + thread_idx_x();
    if (i >= n) return;
    uint32_t x = u[i];
    int s = (int)x;
    int *o = out + 10 * i;
    o[0] = abs_i32(s);
    o[1] = min_i32(s, 7) ^ max_i32(s, -7); /* ^, not +: no overflow near INT_MIN */
    o[2] = (int)(min_u32(x, 1000u) ^ max_u32(x, 1000u));
    o[3] = popcount_u32(x);
    o[4] = clz_u32(x);
    o[5] = ctz_u32(x);
    o[6] = ffs_u32(x);
    /* flipping the sign through the bits, as fast-math code does */
    float f = (float)(s % 4096);
    o[7] = uint_as_float(float_as_uint(f) ^ 0x80000000u) == -f;
    o[8] = float_as_int(int_as_float(s)) == s;
    o[9] = (int)(float_as_uint(f) >> 23); /* sign and exponent */
}

/* A sample classifier: kind[i] is 1 for NaN, 2 for an infinity, 4 for a
 * finite value (isnan + 2 * isinf + 4 * isfinite); finite samples get their
 * derived values in out (5 floats each), the others zeros. */
RK_KERNEL void classify(const float *f, float *out, int *kind, int n) {
    int i = block_idx_x() * block_dim_x() + thread_idx_x();
    if (i >= n) return;
    float x = f[i];
    float *o = out + 5 * i;
    kind[i] = isnan(x) + 2 * isinf(x) + 4 * isfinite(x);
    if (!isfinite(x)) {
        o[0] = o[1] = o[2] = o[3] = o[4] = 0.0f;
        return;
    }
    o[0] = rsqrtf(fabsf(x) + 1.0f);
    o[1] = ldexpf(x, i % 9 - 4);
    o[2] = (float)lrintf(x * 10.0f);
    o[3] = RK_PI_F * x;
    o[4] = (float)(RK_PI * 2.0) + (float)(M_PI / 4.0) * x;
}

/* Unsigned atomics: range[0] the minimum, range[1] the maximum; each slot
 * takes the sample and gives its previous value back in old. */
RK_KERNEL RK_BLOCK_SIZE(64, 1, 1) void unsigned_atomics(const uint32_t *u, uint32_t *range, uint32_t *slots,
                                                        uint32_t *old, int n) {
    int i = block_idx_x() * block_dim_x() + thread_idx_x();
    if (i >= n) return;
    atomic_min_u32(&range[0], u[i]);
    atomic_max_u32(&range[1], u[i]);
    old[i] = atomic_exch_u32(&slots[i], u[i]);
}
