/* One explicit Euler step for particles stored as separate arrays, bouncing
 * off the walls of the unit box; bounces are counted per wall. */
#include <ringkernel/dsl.h>

RK_KERNEL void particles_soa(float *x, float *y, float *vx, float *vy, unsigned *bounces, float dt, float gravity,
                             int n) {
    int i = block_idx_x() * block_dim_x() + thread_idx_x();
    if (i >= n) return;
    float nvy = vy[i] - gravity * dt;
    float nx = x[i] + vx[i] * dt;
    float ny = y[i] + nvy * dt;
    int wall = -1;
    if (nx < 0.0f) {
        nx = -nx;
        vx[i] = -vx[i];
        wall = 0;
    } else if (nx > 1.0f) {
        nx = 2.0f - nx;
        vx[i] = -vx[i];
        wall = 1;
    } else if (ny < 0.0f) {
        ny = -ny;
        nvy = -nvy * 0.5f;
        wall = 2;
    }
    x[i] = nx;
    y[i] = ny;
    vy[i] = nvy;
    if (wall >= 0) atomic_add_u32(&bounces[wall], 1u);
}
