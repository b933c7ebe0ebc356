/* Regression (issue 21): a conditional expression whose arm has a side effect
 * (an atomic, a call, an assignment, ++ or --) must evaluate only the chosen
 * arm; WGSL used select(), which evaluates both. */
#include <ringkernel/dsl.h>

RK_DEVICE int bump(int *hits) {
    *hits += 1;
    return 1;
}

RK_KERNEL void ternary_atomic(const int *v, int *slot, int *count, int *calls, int n) {
    int i = block_idx_x() * block_dim_x() + thread_idx_x();
    if (i >= n) return;
    int hits = 0, last = 0;
    int s = v[i] > 0 ? atomic_add_i32(count, 1) * 0 + 1 : -1;
    int c = v[i] % 3 == 0 ? bump(&hits) : 0;
    int a = v[i] % 5 == 0 ? (last = v[i]) : 7;
    int inc = 0, dec = 5;
    int b = v[i] % 7 == 0 ? ++inc : dec--;
    if (hits) atomic_add_i32(calls, hits);
    slot[i] = s + 10 * c + 100 * (a == 7 ? 0 : 1) + 1000 * (last != 0 ? 1 : 0) + 10000 * b + 100000 * (inc + 2 * dec);
}
