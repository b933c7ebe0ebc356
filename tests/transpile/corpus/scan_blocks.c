/* Inclusive prefix sum in two passes: a Hillis-Steele scan of each block in
 * double-buffered shared memory, then each block adds the totals of the
 * blocks before it. */
#include <ringkernel/dsl.h>

RK_KERNEL void scan_block(const int *in, int *out, int *block_totals, int n) {
    RK_SHARED int buf[2][64];
    int tid = thread_idx_x();
    int i = block_idx_x() * block_dim_x() + tid;
    int src = 0;
    buf[0][tid] = i < n ? in[i] : 0;
    sync_threads();
    for (int offset = 1; offset < 64; offset *= 2) {
        int v = buf[src][tid];
        if (tid >= offset) v += buf[src][tid - offset];
        buf[1 - src][tid] = v;
        src = 1 - src;
        sync_threads();
    }
    if (i < n) out[i] = buf[src][tid];
    if (tid == 63) block_totals[block_idx_x()] = buf[src][63];
}

RK_KERNEL void add_block_offsets(int *out, const int *block_totals, int n) {
    int b = block_idx_x();
    int i = b * block_dim_x() + thread_idx_x();
    int offset = 0;
    for (int k = 0; k < b; k++) offset += block_totals[k];
    if (i < n) out[i] += offset;
}
