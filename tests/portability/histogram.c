/* A 64-bin histogram privatized in shared memory (cleared and flushed in
 * loops strided by the block), a grid-stride loop over the data, and the
 * smallest and largest value through atomic min and max. */
#include <ringkernel/dsl.h>

#define BINS 64

RK_KERNEL void histogram(const int *data, unsigned *bins, int *range, int n) {
    RK_SHARED unsigned local[BINS];
    for (int b = thread_idx_x(); b < BINS; b += block_dim_x()) local[b] = 0u;
    sync_threads();
    int lo = 2147483647, hi = -2147483647 - 1;
    for (int i = block_idx_x() * block_dim_x() + thread_idx_x(); i < n; i += block_dim_x() * grid_dim_x()) {
        int v = data[i];
        atomic_add_u32(&local[(unsigned)v % BINS], 1u);
        lo = min_i32(lo, v);
        hi = max_i32(hi, v);
    }
    atomic_min_i32(&range[0], lo);
    atomic_max_i32(&range[1], hi);
    sync_threads();
    for (int b = thread_idx_x(); b < BINS; b += block_dim_x())
        if (local[b] != 0u) atomic_add_u32(&bins[b], local[b]);
}
