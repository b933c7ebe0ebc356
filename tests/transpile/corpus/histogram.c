/* A 16-bin histogram of byte values (stored as ints) with global atomics. */
#include <ringkernel/dsl.h>

RK_KERNEL void histogram(const int *values, unsigned *bins, int n) {
    int i = block_idx_x() * block_dim_x() + thread_idx_x();
    if (i >= n) return;
    int v = values[i];
    if (v < 0 || v > 255) return; /* not a byte: ignored */
    atomic_add_u32(&bins[v >> 4], 1u);
}
