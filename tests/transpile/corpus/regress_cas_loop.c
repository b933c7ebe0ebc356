/* Regression (issue 21): a compare-and-swap loop must see the real outcome
 * of each atomic_cas (WGSL ignored .exchanged of a weak exchange). Here an
 * atomic maximum and a saturating counter written as CAS loops. */
#include <ringkernel/dsl.h>

RK_KERNEL void cas_loop(const int *v, int *maximum, int *capped, int cap, int n) {
    int i = block_idx_x() * block_dim_x() + thread_idx_x();
    if (i >= n) return;
    int old = *maximum;
    while (v[i] > old) {
        int seen = atomic_cas_i32(maximum, old, v[i]);
        if (seen == old) break;
        old = seen;
    }
    int c = *capped;
    for (;;) {
        if (c >= cap) break;
        int seen = atomic_cas_i32(capped, c, c + 1);
        if (seen == c) break;
        c = seen;
    }
}
