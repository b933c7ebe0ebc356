/* Regression (issue 21): two pointers into the same local passed to a helper
 * inside an if condition. */
#include <ringkernel/dsl.h>

typedef struct Pair {
    int lo;
    int hi;
} Pair;

RK_DEVICE int order(int *a, int *b) {
    if (*a <= *b) return 0;
    int t = *a;
    *a = *b;
    *b = t;
    return 1;
}

RK_KERNEL void two_pointers(const int *x, const int *y, int *out, int *swaps, int n) {
    int i = block_idx_x() * block_dim_x() + thread_idx_x();
    if (i >= n) return;
    Pair p;
    p.lo = x[i];
    p.hi = y[i];
    if (order(&p.lo, &p.hi)) swaps[i] = 1;
    out[2 * i] = p.lo;
    out[2 * i + 1] = p.hi;
}
