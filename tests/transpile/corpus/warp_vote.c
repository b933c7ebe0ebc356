/* Warp-level primitives: a sum with shfl_down, a ballot of odd values and a
 * broadcast of lane 0's value. */
#include <ringkernel/dsl.h>

RK_KERNEL void warp_vote(const int *in, int *warp_sum, unsigned *odd_mask, int *first, int n) {
    int i = block_idx_x() * block_dim_x() + thread_idx_x();
    int v = i < n ? in[i] : 0;
    int sum = v;
    for (int offset = 16; offset > 0; offset /= 2) sum += shfl_down_i32(sum, offset);
    unsigned odd = warp_ballot(v & 1);
    int lead = shfl_i32(v, 0);
    int warp = i / 32;
    if (lane_id() == 0) {
        warp_sum[warp] = sum;
        odd_mask[warp] = odd;
    }
    if (i < n) first[i] = lead;
}
