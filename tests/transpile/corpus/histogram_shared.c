/* A 32-bin histogram privatized per block: shared-memory bins, then one
 * global atomic per non-empty bin. */
#include <ringkernel/dsl.h>

#define BINS 32

RK_KERNEL void histogram_shared(const int *values, unsigned *bins, int n, int shift) {
    RK_SHARED unsigned local[BINS];
    int tid = thread_idx_x();
    if (tid < BINS) local[tid] = 0u;
    sync_threads();
    for (int i = block_idx_x() * block_dim_x() + tid; i < n; i += block_dim_x() * grid_dim_x()) {
        unsigned bin = ((unsigned)values[i] >> shift) & (BINS - 1);
        atomic_add_u32(&local[bin], 1u);
    }
    sync_threads();
    if (tid < BINS && local[tid] != 0u) atomic_add_u32(&bins[tid], local[tid]);
}
