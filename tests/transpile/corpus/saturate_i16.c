/* 16-bit audio samples: gain in Q8 fixed point with saturation, and the
 * peak per block in shared memory. */
#include <ringkernel/dsl.h>

RK_KERNEL void saturate_i16(const int16_t *in, int16_t *out, uint16_t *peak, int gain_q8, int n) {
    RK_SHARED int top[64];
    int tid = thread_idx_x();
    int i = block_idx_x() * 64 + tid;
    int v = 0;
    if (i < n) {
        v = (in[i] * gain_q8) >> 8;
        if (v > 32767) v = 32767;
        else if (v < -32768) v = -32768;
        out[i] = (int16_t)v;
    }
    top[tid] = v < 0 ? -v : v;
    sync_threads();
    for (int s = 32; s > 0; s /= 2) {
        if (tid < s && top[tid + s] > top[tid]) top[tid] = top[tid + s];
        sync_threads();
    }
    if (tid == 0) peak[block_idx_x()] = (uint16_t)(top[0] > 65535 ? 65535 : top[0]);
}
