#include <ringkernel/dsl.h>
#include <stdbool.h>
typedef struct pair { int a; long b; } pair;
enum color { RED, GREEN = 5, BLUE };
static const float table[4] = {1.0f, 2.5f, -3.0f, INFINITY};
RK_DEVICE int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }
RK_KERNEL void stmts(int *out, const pair *in, unsigned n) {
    RK_SHARED int cache[64];
    unsigned i = (unsigned)(block_idx_x() * block_dim_x() + thread_idx_x());
    cache[thread_idx_x() & 63] = (int)i;
    sync_threads();
    bool ok = i < n;
    int acc = 0;
    for (int k = 0, j = 3; k < 4 && ok; k++, j--) { acc += (int)table[k] * j; if (k == 2) continue; }
    do { acc ^= 1; } while (acc < 0);
    while (acc > 100) { acc >>= 1; if (acc == 7) break; }
    switch (acc % 3) {
    case RED: acc += BLUE; break;
    case 1: { int t = 2; acc *= t; } break;
    default: acc = -acc;
    }
    if (ok) out[i] = clampi(acc + cache[0], -1000, 1000) + (int)in[i].b + (int)sizeof(pair) + atomic_add_i32(out, 1);
    float v = shfl_down_f32((float)acc, 16) + sqrtf(2.0f) + (float)fabs(-1.0);
    if (warp_any(v > 0.0f)) out[0] = (int)warp_ballot(1) + lane_id();
}
