/* Regression (issue 21): && and || evaluate their right side only when
 * needed, also when it has a side effect. */
#include <ringkernel/dsl.h>

RK_DEVICE int count_and_test(int *counter, int v) {
    atomic_add_i32(counter, 1);
    return v > 50;
}

RK_KERNEL void logical_effects(const int *v, int *flags, int *and_calls, int *or_calls, int n) {
    int i = block_idx_x() * block_dim_x() + thread_idx_x();
    if (i >= n) return;
    int a = v[i] > 0 && count_and_test(and_calls, v[i]);
    int b = v[i] > 0 || count_and_test(or_calls, -v[i]);
    flags[i] = a + 2 * b;
}
