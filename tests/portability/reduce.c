/* Reductions as a CUDA programmer writes them, for any block of up to 256
 * threads: a shared-memory tree whose loop is bounded by block_dim_x(), and a
 * grid-stride max that uses grid_dim_x(). */
#include <ringkernel/dsl.h>

#define MAX_BLOCK 256

RK_KERNEL void block_sum(const int *in, int *block_sums, int *total, int n) {
    RK_SHARED int part[MAX_BLOCK];
    int t = thread_idx_x();
    int i = block_idx_x() * block_dim_x() + t;
    part[t] = i < n ? in[i] : 0;
    sync_threads();
    for (int s = block_dim_x() / 2; s > 0; s >>= 1) {
        if (t < s) part[t] += part[t + s];
        sync_threads();
    }
    if (t == 0) {
        block_sums[block_idx_x()] = part[0];
        atomic_add_i32(total, part[0]);
    }
}

RK_KERNEL void grid_max(const float *in, float *block_max, int n) {
    RK_SHARED float best[MAX_BLOCK];
    int t = thread_idx_x();
    float m = -1.0e30f;
    for (int i = block_idx_x() * block_dim_x() + t; i < n; i += block_dim_x() * grid_dim_x())
        m = fmaxf(m, in[i]);
    best[t] = m;
    sync_threads();
    for (int s = block_dim_x() / 2; s > 0; s >>= 1) {
        if (t < s) best[t] = fmaxf(best[t], best[t + s]);
        sync_threads();
    }
    if (t == 0) block_max[block_idx_x()] = best[0];
}
