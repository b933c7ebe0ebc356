/* Regression (issue 21): a conditional expression whose arm has a side effect
 * (an atomic, a call, an assignment) must evaluate only the chosen arm; WGSL
 * used select(), which evaluates both. */
#include <ringkernel/dsl.h>

RK_DEVICE int bump(int *counter) { return atomic_add_i32(counter, 1) >= 0 ? 1 : 0; }

RK_KERNEL void ternary_atomic(const int *v, int *slot, int *count, int *calls, int n) {
    int i = block_idx_x() * block_dim_x() + thread_idx_x();
    if (i >= n) return;
    int s = v[i] > 0 ? atomic_add_i32(count, 1) * 0 + 1 : -1;
    int c = v[i] % 3 == 0 ? bump(calls) : 0;
    slot[i] = s + 10 * c;
}
