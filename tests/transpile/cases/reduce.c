/* Golden case: a block reduction with shared memory, a barrier, warp
 * shuffles, a warp barrier and an atomic. Launch with a block of a multiple of 32 threads. */
#include <ringkernel/dsl.h>
#include <limits.h>

RK_KERNEL void reduce(const int *in, int *block_sums, int *max_out, int n) {
    RK_SHARED int warp_sums[32];
    int tid = thread_idx_x();
    int i = block_idx_x() * block_dim_x() + tid;
    int v = i < n ? in[i] : 0;
    int m = i < n ? in[i] : INT_MIN;
    for (int offset = 16; offset > 0; offset >>= 1) {
        v += shfl_down_i32(v, offset);
        int other = shfl_down_i32(m, offset);
        m = other > m ? other : m;
    }
    sync_warp();
    if (lane_id() == 0) {
        warp_sums[tid / warp_size()] = v;
        atomic_max_i32(max_out, m);
    }
    sync_threads();
    if (tid == 0) {
        int total = 0;
        for (int w = 0; w < (block_dim_x() + 31) / 32; w++) total += warp_sums[w];
        block_sums[block_idx_x()] = total;
    }
}
