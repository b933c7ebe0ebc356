/* Sum of an int array: a shared-memory tree in each block, then one atomic
 * per block into the total. */
#include <ringkernel/dsl.h>

#define BLOCK 64

RK_KERNEL void reduce_sum(const int *in, int *block_sums, int *total, int n) {
    RK_SHARED int partial[BLOCK];
    int tid = thread_idx_x();
    int i = block_idx_x() * block_dim_x() + tid;
    partial[tid] = i < n ? in[i] : 0;
    sync_threads();
    for (int stride = block_dim_x() / 2; stride > 0; stride /= 2) {
        if (tid < stride) partial[tid] += partial[tid + stride];
        sync_threads();
    }
    if (tid == 0) {
        block_sums[block_idx_x()] = partial[0];
        atomic_add_i32(total, partial[0]);
    }
}
