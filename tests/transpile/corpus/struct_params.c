/* Simulation parameters passed to kernels by value as one struct (issue 21):
 * floats, ints, an array and a 64-bit member; the second kernel takes it
 * between two buffers and before a scalar. */
#include <ringkernel/dsl.h>

typedef struct Params {
    float dt;
    float gravity;
    int n;
    unsigned seed;
    float bounds[2];
    long long step;
} Params;

RK_KERNEL void integrate(Params p, float *y, float *v, int *tags) {
    int i = block_idx_x() * block_dim_x() + thread_idx_x();
    if (i >= p.n) return;
    v[i] -= p.gravity * p.dt;
    y[i] += v[i] * p.dt;
    if (y[i] < p.bounds[0]) {
        y[i] = p.bounds[0];
        v[i] = -v[i];
    } else if (y[i] > p.bounds[1]) {
        y[i] = p.bounds[1];
        v[i] = -v[i];
    }
    tags[i] = (int)(p.step % 1000) + (int)((p.seed >> (i & 7)) & 7u);
}

RK_KERNEL void rescale(const float *in, Params p, float *out, float k) {
    int i = block_idx_x() * block_dim_x() + thread_idx_x();
    if (i < p.n) out[i] = (in[i] - p.bounds[0]) * k / (p.bounds[1] - p.bounds[0]);
}
