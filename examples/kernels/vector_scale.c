/* The spec's first example: scale a vector in place.
 * On the CPU this is plain C; `rk transpile --target cuda` makes it a CUDA kernel. */
#include <ringkernel/dsl.h>

RK_KERNEL void vector_scale(float *data, float scale, int n) {
    int idx = block_idx_x() * block_dim_x() + thread_idx_x();
    if (idx >= n) return;
    data[idx] = data[idx] * scale;
}
