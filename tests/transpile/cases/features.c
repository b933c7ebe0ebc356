/* Golden case: most of the C subset in one global kernel and its helpers. */
#include <ringkernel/dsl.h>
#include <stdbool.h>

#define COUNT 4
#define SQUARE(x) ((x) * (x))

typedef struct Particle {
    float pos[3];
    float mass;
    int32_t kind;
    uint8_t flags;
    double energy;
} Particle;

struct Stats {
    int32_t counts[COUNT];
    uint64_t total;
    float max_energy;
};

enum { KIND_GAS, KIND_DUST = 4, KIND_ROCK };

static const float weights[COUNT] = {0.5f, 0.25f, 0.125f, 0.125f};
static const int primes[] = {2, 3, 5, 7, 11};

_Static_assert(sizeof(Particle) == 32, "Particle is 32 bytes on the host");

RK_DEVICE float dot3(const float *a, const float *b) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static int classify(const Particle *p) {
    switch (p->kind) {
    case KIND_GAS:
        return 0;
    case KIND_DUST:
    case KIND_ROCK: {
        int heavy = p->mass > 1.0f;
        return 1 + heavy;
    }
    default:
        break;
    }
    return 3;
}

RK_KERNEL void features(Particle *particles, struct Stats *stats, float *out, int n) {
    RK_SHARED float partial[256];
    int tid = thread_idx_x();
    int i = block_idx_x() * block_dim_x() + tid;
    float value = 0.0f;
    if (i < n) {
        Particle *p = particles + i;
        value = sqrtf(dot3(p->pos, p->pos)) * weights[i % COUNT];
        int bucket = classify(p);
        atomic_add_i32(&stats->counts[bucket], 1);
        atomic_add_u64(&stats->total, (uint64_t)primes[bucket]);
        p->energy += 0.5 * p->mass * SQUARE((double)value);
        p->flags |= (uint8_t)(1u << (bucket & 7));
    }
    partial[tid] = value;
    sync_threads();
    for (int stride = block_dim_x() / 2; stride > 0; stride >>= 1) {
        if (tid < stride) partial[tid] += partial[tid + stride];
        sync_threads();
    }
    bool leader = tid == 0;
    if (leader) {
        float sum = partial[0];
        int new = (int)sum, class = new % 3, this = -class;
        unsigned steps = 0;
        while (sum > 1.0f && steps < 100u) {
            sum *= 0.5f;
            ++steps;
        }
        do {
            steps--;
        } while (steps > 50u);
        out[block_idx_x()] = sum + (float)(new + class + this) + (steps > 10u ? 1.0f : -1.0f);
    }
    float warp_sum = value;
    for (int offset = 16; offset > 0; offset /= 2) warp_sum += shfl_down_f32(warp_sum, offset);
    if (lane_id() == 0 && i < n) atomic_add_f32(&out[n + tid / 32], warp_sum);
    float *scratch = (float *)dynamic_shared();
    scratch[tid] = fmaxf(fabsf(value), 1e-3f) + (float)sizeof(struct Stats) + (float)_Alignof(Particle);
}
