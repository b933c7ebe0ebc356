/* Regression (issue 21): && and || evaluate their right side only when
 * needed, also when it has a side effect (an atomic, a call). On WGSL an
 * assignment or ++ inside && / || is refused (test_diagnostics.c). */
#include <ringkernel/dsl.h>

RK_DEVICE int count_and_test(int *counter, int v) {
    *counter += 1;
    return v > 50;
}

RK_KERNEL void logical_effects(const int *v, int *flags, int *and_calls, int *or_calls, int n) {
    int i = block_idx_x() * block_dim_x() + thread_idx_x();
    if (i >= n) return;
    int local_or = 0;
    int a = v[i] > 0 && atomic_add_i32(and_calls, 1) >= 0 && v[i] > 50;
    int b = v[i] > 0 || count_and_test(&local_or, -v[i]);
    int pre = 0;
    int c = v[i] > 90 || (count_and_test(&pre, -v[i] - 40) && v[i] < -90);
    if (local_or) atomic_add_i32(or_calls, local_or);
    flags[i] = a + 2 * b + 4 * c + 8 * pre;
}
