/* Double precision: y = a * x + y, and each block's sum of squares of the
 * result by a shared-memory tree. */
#include <ringkernel/dsl.h>

RK_KERNEL void double_axpy(double a, const double *x, double *y, double *block_sq, int n) {
    RK_SHARED double sq[64];
    int tid = thread_idx_x();
    int i = block_idx_x() * 64 + tid;
    double v = 0.0;
    if (i < n) {
        v = a * x[i] + y[i];
        y[i] = v;
    }
    sq[tid] = v * v;
    sync_threads();
    for (int s = 32; s > 0; s /= 2) {
        if (tid < s) sq[tid] += sq[tid + s];
        sync_threads();
    }
    if (tid == 0) block_sq[block_idx_x()] = sq[0];
}
