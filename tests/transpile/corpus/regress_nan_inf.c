/* Regression (issue 21): x != x as a NaN test, and INFINITY in a kernel. */
#include <ringkernel/dsl.h>

RK_KERNEL void nan_inf(const float *in, float *out, int *kind, int n) {
    int i = block_idx_x() * block_dim_x() + thread_idx_x();
    if (i >= n) return;
    float x = in[i];
    int k;
    if (x != x) k = 0;
    else if (x == INFINITY) k = 1;
    else if (x == -INFINITY) k = 2;
    else k = 3;
    kind[i] = k;
    out[i] = k == 3 ? x : 0.0f;
}
