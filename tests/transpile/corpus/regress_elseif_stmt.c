/* Regression (issue 21): statements after an if / else-if chain in the same
 * block were dropped from the CUDA output. */
#include <ringkernel/dsl.h>

RK_KERNEL void elseif_stmt(const int *in, int *out, int *after, int n) {
    int i = block_idx_x() * block_dim_x() + thread_idx_x();
    if (i >= n) return;
    int v = in[i];
    int d = 0;
    if (v > 10) d = 1;
    else if (v > 0) d = 2;
    out[i] = d;
    if (v < -10) {
        d = 3;
    } else if (v < 0) {
        d = 4;
    } else {
        d += 10;
    }
    after[i] = d;
}
