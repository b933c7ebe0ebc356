/* Kernels whose meaning a transpiler once changed without an error (issue 21):
 * each runs on the CPU backend and, transpiled, on WebGPU
 * (tests/webgpu/test_webgpu_transpiled.c) and compiles with NVRTC. One
 * thread per element; out[i] holds what C says thread i computes. */
#include <ringkernel/dsl.h>

/* A statement after an if / else-if chain (CUDA once dropped it). */
RK_KERNEL void else_if_tail(const int *v, int *out, int n) {
    int i = block_idx_x() * block_dim_x() + thread_idx_x();
    if (i >= n) return;
    int d = 0;
    if (v[i] > 1)
        d = 1;
    else if (v[i] > 0)
        d = 2;
    else if (v[i] > -5)
        d = 3;
    out[i] = d * 10;
    out[i] += 1;
}

RK_DEVICE int bump(int *calls) {
    *calls += 1;
    return 1;
}

RK_DEVICE void split(int *lo, int *hi, int v) {
    *lo = v & 0xff;
    *hi = v >> 8;
}

typedef struct Pair {
    int lo, hi;
} Pair;

/* Side effects inside ?:, && and || happen only when C evaluates them
 * (WGSL's select() evaluates both arms). counts[0..4] count the effects. */
RK_KERNEL void side_effects(const int *v, int *out, int *counts, int n) {
    int i = block_idx_x() * block_dim_x() + thread_idx_x();
    if (i >= n) return;
    int x = v[i];
    int slot = x > 0 ? atomic_add_i32(&counts[0], 1) : -1;
    int both = (x & 1) && atomic_add_i32(&counts[1], 1) >= 0;
    int calls = 0;
    int either = (x & 2) || bump(&calls);
    atomic_add_i32(&counts[2], calls);
    int nested = 1 + (x > 3 ? (x > 6 ? atomic_add_i32(&counts[3], 1) * 0 + 7 : 5) : 2);
    int k = 0;
    x > 5 ? k++ : atomic_add_i32(&counts[4], 1);
    Pair p = {0, 0};
    if (x > 2 && (split(&p.lo, &p.hi, x * 300), p.lo >= 0)) k += 2;
    out[i] = (slot >= 0 ? 1 : 0) + 2 * both + 4 * either + 8 * nested + 128 * k + 1024 * (p.hi & 0xf);
}

RK_DEVICE int order(int *a, int *b) {
    if (*a <= *b) return 0;
    int t = *a;
    *a = *b;
    *b = t;
    return 1;
}

/* Two pointers into one local passed to a helper inside an if condition
 * (WGSL's alias rule needs copies, which once were made only at statement
 * level). */
RK_KERNEL void alias_in_condition(const int *v, int *out, int n) {
    int i = block_idx_x() * block_dim_x() + thread_idx_x();
    if (i >= n) return;
    Pair q = {v[i], 50 - v[i]};
    int swapped = 0;
    if (order(&q.lo, &q.hi)) swapped = 1;
    out[i] = q.lo * 1000 + q.hi + 1000000 * swapped;
}

/* A lock-free set: each value claims one slot with a strong compare-and-swap
 * (WGSL's weak one may fail spuriously). table[] starts at -1. */
RK_KERNEL void cas_insert(const int *v, int *table, int *claimed, int n, int size) {
    int i = block_idx_x() * block_dim_x() + thread_idx_x();
    if (i >= n) return;
    int key = v[i];
    int h = (int)(((unsigned)key * 2654435761u) % (unsigned)size);
    for (int probe = 0; probe < size; probe++) {
        int old = atomic_cas_i32(&table[h], -1, key);
        if (old == -1) {
            atomic_add_i32(&claimed[0], 1);
            break;
        }
        if (old == key) break;
        h = (h + 1) % size;
    }
}
/* NaN and infinity tests, which WGSL implementations may fold away, and
 * constants that fold to infinity or NaN (an invalid WGSL module if written
 * as constant expressions). */
RK_KERNEL void nan_tests(const float *f, int *out, int n) {
    int i = block_idx_x() * block_dim_x() + thread_idx_x();
    if (i >= n) return;
    float x = f[i];
    float big = INFINITY;
    int r = 0;
    if (x != x) r |= 1;
    if (isnan(x)) r |= 2;
    if (isinf(x)) r |= 4;
    if (isfinite(x)) r |= 8;
    if (x == big) r |= 16;
    if (x == -INFINITY) r |= 32;
    if (!(x == x)) r |= 64;
    if (x == 1.0f / 0.0f) r |= 128;
    if (x == -(1e30f * 1e30f)) r |= 256;
    float q = 0.0f * INFINITY;
    if (isnan(q) && isnan(NAN)) r |= 512;
    out[i] = r;
}
