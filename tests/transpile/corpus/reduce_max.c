/* Largest value and its index per block (ties: the lower index), as a tree
 * over pairs in shared memory; the overall maximum with atomic_max. */
#include <ringkernel/dsl.h>

RK_KERNEL void reduce_max(const float *in, float *block_max, int *block_arg, int *max_bits, int n) {
    RK_SHARED float value[64];
    RK_SHARED int index[64];
    int tid = thread_idx_x();
    int i = block_idx_x() * 64 + tid;
    value[tid] = i < n ? in[i] : -1.0e30f;
    index[tid] = i < n ? i : -1;
    sync_threads();
    for (int s = 32; s > 0; s >>= 1) {
        if (tid < s) {
            float other = value[tid + s];
            if (other > value[tid] || (other == value[tid] && index[tid + s] < index[tid] && index[tid + s] >= 0)) {
                value[tid] = other;
                index[tid] = index[tid + s];
            }
        }
        sync_threads();
    }
    if (tid == 0) {
        block_max[block_idx_x()] = value[0];
        block_arg[block_idx_x()] = index[0];
        /* Non-negative floats order like their bit patterns. */
        if (value[0] >= 0.0f) atomic_max_i32(max_bits, (int)(value[0] * 1024.0f));
    }
}
