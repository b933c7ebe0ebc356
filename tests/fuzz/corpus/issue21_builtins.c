/* The DSL builtins added for issue 21, on every target: run on the CPU
 * backend and, transpiled, on WebGPU (tests/webgpu/test_webgpu_transpiled.c,
 * against a C reference) and compiled by NVRTC. One thread per element. */
#include <ringkernel/dsl.h>

/* Integer helpers and bit counts of u[i]; out has 12 words per element. */
RK_KERNEL void int_builtins(const uint32_t *u, int *out, int n) {
    int i = block_idx_x() * block_dim_x() + thread_idx_x();
    if (i >= n) return;
    uint32_t x = u[i];
    int s = (int)x;
    int *o = out + 12 * i;
    o[0] = abs_i32(s);
    o[1] = min_i32(s, 7);
    o[2] = max_i32(s, -7);
    o[3] = (int)min_u32(x, 1000u);
    o[4] = (int)max_u32(x, 1000u);
    o[5] = popcount_u32(x);
    o[6] = clz_u32(x);
    o[7] = ctz_u32(x);
    o[8] = ffs_u32(x);
    o[9] = (int)float_as_uint(uint_as_float(x)) == s;
    o[10] = float_as_int(int_as_float(s)) == s;
    o[11] = (int)float_as_uint((float)(s & 0xffff));
}

/* Float helpers of f[i]; out has 6 floats per element. */
RK_KERNEL void float_builtins(const float *f, float *out, int n) {
    int i = block_idx_x() * block_dim_x() + thread_idx_x();
    if (i >= n) return;
    float x = f[i];
    float *o = out + 6 * i;
    o[0] = rsqrtf(fabsf(x) + 1.0f);
    o[1] = ldexpf(x, i % 7 - 3);
    o[2] = isfinite(x) ? (float)lrintf(x * 10.0f) : 0.0f; /* lrintf of inf or NaN is undefined */
    o[3] = RK_PI_F * x;
    o[4] = (float)(M_PI * 2.0) + x;
    o[5] = (float)(isnan(x) + 2 * isinf(x) + 4 * isfinite(x));
}

/* Unsigned atomic min/max/exchange and the 32-bit atomic load: acc[0] is the
 * minimum, acc[1] the maximum, acc[2] the last exchanged value (any), acc[3]
 * counts the loads that saw a value at least the first element. */
RK_KERNEL void unsigned_atomics(const uint32_t *u, uint32_t *acc, int n) {
    int i = block_idx_x() * block_dim_x() + thread_idx_x();
    if (i >= n) return;
    atomic_min_u32(&acc[0], u[i]);
    atomic_max_u32(&acc[1], u[i]);
    uint32_t before = atomic_exch_u32(&acc[2], u[i]);
    (void)before;
    if (atomic_load_u32(&acc[1]) >= u[0]) atomic_add_u32(&acc[3], 1u);
}

/* A kernel with a fixed block (CUDA launch bounds, WGSL workgroup size): out[t]
 * = the block's size and the thread's place in it, for the one block. */
RK_KERNEL RK_BLOCK_SIZE(32, 2, 1) void block_sized(int *out) {
    int t = thread_idx_y() * block_dim_x() + thread_idx_x();
    out[t] = block_dim_x() * block_dim_y() * 1000 + t;
}
