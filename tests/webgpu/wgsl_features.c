/* DSL source that exercises what the WGSL emitter translates: run on the CPU
 * backend and, transpiled, on WebGPU by test_webgpu_transpiled.c, which
 * compares the two. Only 32-bit types, as WGSL has. */
#include <ringkernel/dsl.h>

#define TABLE 4

typedef struct Particle {
    float pos[3];
    float mass;
    int32_t kind;
    uint32_t flags;
} Particle;

enum { KIND_GAS, KIND_DUST = 4, KIND_ROCK };

static const float weights[TABLE] = {0.5f, 0.25f, 0.125f, 0.125f};

RK_DEVICE float dot3(const float *a, const float *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* Writes through pointers to locals. */
RK_DEVICE void min_max(const float *v, int n, float *lo, float *hi) {
    *lo = v[0];
    *hi = v[0];
    for (int i = 1; i < n; i++) {
        if (v[i] < *lo) *lo = v[i];
        if (v[i] > *hi) *hi = v[i];
    }
}

/* The spread of six values (a pointer parameter taking a whole array). */
RK_DEVICE float spread6(const float *v) {
    float lo = v[0], hi = v[0];
    for (int i = 1; i < 6; i++) {
        lo = fminf(lo, v[i]);
        hi = fmaxf(hi, v[i]);
    }
    return hi - lo;
}

static int classify(int kind, float mass) {
    switch (kind) {
    case KIND_GAS:
        return 0;
    case KIND_DUST:
    case KIND_ROCK: {
        int heavy = mass > 1.0f; /* a comparison used as an int */
        return 1 + heavy;
    }
    default:
        break;
    }
    return 3;
}

/* One thread per particle; results in out[8 * i ..], per-class counts in
 * counts[0..3] (atomics), a block sum of |pos| in block_sums[block]. */
RK_KERNEL void features(Particle *particles, float *out, int *counts, float *block_sums, int n, uint32_t salt) {
    RK_SHARED float partial[64];
    int tid = thread_idx_x();
    int i = block_idx_x() * block_dim_x() + tid;
    float len = 0.0f;
    if (i < n) {
        Particle *p = particles + i;
        float v[3] = {p->pos[0], p->pos[1], p->pos[2]};
        len = sqrtf(dot3(v, v));
        float lo, hi;
        min_max(v, 3, &lo, &hi);
        int bucket = classify(p->kind, p->mass);
        atomic_add_i32(&counts[bucket], 1);
        p->flags |= 1u << (uint32_t)bucket;
        p->mass *= 2;              /* int converted to float */
        int trunc = (int)(v[0] * 3.0f);
        int q = trunc / 7, r = trunc % 7; /* C division truncates toward zero */
        uint32_t h = (uint32_t)i * 2654435761u ^ salt;
        h ^= h >> 15;
        int acc = 0;
        for (int a = 0, b = 10; a < b; a++, b--) acc += a * b;
        unsigned steps = 0;
        float s = len;
        while (s > 1.0f && steps < 100u) {
            s *= 0.5f;
            ++steps;
        }
        do {
            acc--;
        } while (acc > 60);
        acc += 0.75f; /* compound assignment through float, back to int */
        float *o = &out[8 * i];
        o[0] = len * weights[i % TABLE];
        o[1] = hi - lo;
        o[2] = (float)(q * 100 + r);
        o[3] = (float)(h & 0xffffu);
        o[4] = (float)acc + (float)steps;
        o[5] = (lo < 0.0f && !(hi < 0.0f)) ? fabsf(lo) : -1.0f;
        o[6] = floorf(v[1]) + fmodf(v[2], 2.0f) + fminf(v[0], v[1]);
        o[7] = (float)(KIND_ROCK + (trunc > 0) + (bucket == 2 || bucket == 3));
    }
    partial[tid] = len;
    sync_threads();
    for (int stride = 32; stride > 0; stride >>= 1) {
        if (tid < stride) partial[tid] += partial[tid + stride];
        sync_threads();
    }
    if (tid == 0) block_sums[block_idx_x()] = partial[0];
}

typedef struct FeatReq {
    uint32_t id;
    int32_t op;
    float x;
    float vals[6];
} FeatReq;

typedef struct FeatResp {
    uint32_t id;
    float result;
    uint32_t seen;
    uint32_t sum_ids;
} FeatResp;

typedef struct FeatState {
    uint32_t seen;
    uint32_t sum_ids;
    float last;
} FeatState;

/* Stateful: every reply carries the running count and id sum; op selects
 * what to compute; an unknown op is a handler error. */
RK_HANDLER int feature_handler(const FeatReq *req, FeatResp *resp, FeatState *state) {
    state->seen += 1;
    atomic_add_u32(&state->sum_ids, req->id);
    resp->id = req->id;
    resp->seen = state->seen;
    resp->sum_ids = state->sum_ids;
    switch (req->op) {
    case 0:
        resp->result = req->x * 2.0f + state->last;
        break;
    case 1:
        resp->result = spread6(req->vals);
        break;
    case 2: {
        float t = 0.0f;
        for (int k = 0; k < 6; k++) t += req->vals[k] * weights[k % TABLE];
        resp->result = t;
        break;
    }
    default:
        resp->result = 0.0f;
        return -3;
    }
    state->last = resp->result;
    return 0;
}

/* 64-bit integers (vec2<u32> in WGSL): every operation, signed and unsigned. */
typedef struct WideReq {
    uint64_t a, b;
    int64_t c;
    int32_t s;
    uint32_t k;
} WideReq;

typedef struct WideResp {
    uint64_t sum, prod, quot, rem, shl, shr;
    int64_t neg, sdiv, smod, sar, from_int;
    uint32_t lt, slt;
    float fa, fc;
} WideResp;

RK_HANDLER int wide_handler(const WideReq *req, WideResp *resp, void *state) {
    (void)state;
    uint64_t a = req->a, b = req->b | 1u;
    int64_t c = req->c;
    uint32_t k = req->k & 63u;
    resp->sum = a + b;
    resp->prod = a * b;
    resp->quot = a / b;
    resp->rem = a % b;
    resp->shl = a << k;
    resp->shr = a >> k;
    resp->neg = -c;
    int64_t d = (int64_t)req->s | 1;
    resp->sdiv = c / d;
    resp->smod = c % d;
    resp->sar = c >> k;
    resp->from_int = (int64_t)req->s * 3;
    resp->lt = a < b;
    resp->slt = c < (int64_t)req->s;
    resp->fa = (float)a;
    resp->fc = (float)c;
    uint64_t acc = 0;
    for (uint64_t i = 0; i < 5; i++) acc += i * a;
    resp->sum ^= acc;
    return 0;
}
