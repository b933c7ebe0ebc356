/* Particles as an array of structs: a velocity-Verlet-like step with a
 * spring to the origin; dead particles are skipped, fast ones are marked. */
#include <ringkernel/dsl.h>

typedef struct Particle {
    float pos[3];
    float vel[3];
    int alive;
    int hits;
} Particle;

RK_DEVICE float dot3(const float *a, const float *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

RK_KERNEL void particles_aos(Particle *ps, int *fast, float dt, float k, int n) {
    int i = block_idx_x() * block_dim_x() + thread_idx_x();
    if (i >= n) return;
    Particle *p = &ps[i];
    if (!p->alive) return;
    for (int d = 0; d < 3; d++) {
        p->vel[d] -= k * p->pos[d] * dt;
        p->pos[d] += p->vel[d] * dt;
    }
    if (dot3(p->vel, p->vel) > 4.0f) {
        p->hits++;
        atomic_add_i32(fast, 1);
    }
}
