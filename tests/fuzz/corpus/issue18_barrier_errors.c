#include <ringkernel/dsl.h>
RK_KERNEL void k(int *out, int n) {
    RK_SHARED int s[64];
    int t = thread_idx_x();
    s[t] = t;
    if (t < 32) {
        sync_threads();
    }
    int lim = t * 2;
    for (int i = 0; i < lim; i++) { sync_threads(); }
    if (out[0] > 3) sync_threads();
    if (t == 5) return;
    sync_threads();
    out[t] = s[t] + n;
}
RK_DEVICE void helper_sync(void) { sync_threads(); }
RK_KERNEL void k2(const int *in, int *out) {
    int t = thread_idx_x();
    while (1) { if (in[t] > 0) break; helper_sync(); }
    for (int s = block_dim_x() / 2; s > 0; s >>= 1) { if (t < s) out[t] += out[t + s]; sync_threads(); }
    if (in[0] > 2) sync_threads();
    int v = t > 3 ? atomic_add_i32(out, 1) : 0;
    (void)v;
}
