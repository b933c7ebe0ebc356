/* An inclusive prefix sum of any length: a Hillis-Steele scan in each block
 * (as many steps as the block has threads), then each block adds the totals
 * of the blocks before it. */
#include <ringkernel/dsl.h>

#define MAX_BLOCK 256

RK_KERNEL void block_scan(const int *in, int *out, int *block_totals, int n) {
    RK_SHARED int buf[MAX_BLOCK];
    int t = thread_idx_x();
    int i = block_idx_x() * block_dim_x() + t;
    buf[t] = i < n ? in[i] : 0;
    sync_threads();
    for (int offset = 1; offset < block_dim_x(); offset *= 2) {
        int v = 0;
        if (t >= offset) v = buf[t - offset];
        sync_threads();
        buf[t] += v;
        sync_threads();
    }
    if (i < n) out[i] = buf[t];
    if (t == block_dim_x() - 1) block_totals[block_idx_x()] = buf[t];
}

RK_KERNEL void add_block_offsets(int *out, const int *block_totals, int n) {
    RK_SHARED int offset[1];
    int t = thread_idx_x();
    if (t == 0) {
        int sum = 0;
        for (int b = 0; b < block_idx_x(); b++) sum += block_totals[b];
        offset[0] = sum;
    }
    sync_threads();
    int i = block_idx_x() * block_dim_x() + t;
    if (i < n) out[i] += offset[0];
}
