/* Barriers in control flow that is uniform in the kernel's meaning, as a
 * CUDA programmer writes it (issue 18): loops bounded by block_dim_x() (also
 * through a helper), by grid_dim_x(), a scalar parameter and a read-only
 * buffer; an early return on the block index; a helper holding a barrier.
 * Every target takes it: WGSL compiles it (block_dim_*() are override
 * constants, uniform to its analysis). */
#include <ringkernel/dsl.h>

#define MAX_BLOCK 256

RK_DEVICE int half(int v) { return v / 2; }
RK_DEVICE void wait_all(void) { sync_threads(); }

RK_KERNEL void uniform_barriers(int *out, const int *len, int n) {
    RK_SHARED int part[MAX_BLOCK];
    int t = thread_idx_x();
    part[t] = t;
    if (t == 0) out[0] = 1;
    sync_threads();
    for (int s = half(block_dim_x()); s > 0; s >>= 1) {
        if (t < s) part[t] += part[t + s];
        wait_all();
    }
    for (int i = 0; i < n * grid_dim_x() + len[0]; i++) sync_threads();
    if (block_idx_x() > 2) return;
    sync_threads();
    out[t + 1] = part[t] + block_dim_x() * block_dim_y();
}
