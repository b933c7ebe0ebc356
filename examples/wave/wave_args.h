/* What the wave's host code (wave_sim.c) and its kernels (wave_kernels.c,
 * compiled behind this file) share: the size of an impulse and the
 * payloads of the commands, the same structs on both sides. */
#ifndef WAVE_ARGS_H
#define WAVE_ARGS_H

#define WAVE_BUMP_RADIUS 3 /* an impulse moves the cells closer than this + 1 */
#define WAVE_BUMP_WIDTH (2 * WAVE_BUMP_RADIUS + 1)

/* An impulse at (x, y) (WAVE_INJECT), or the cell to read (WAVE_QUERY,
 * amplitude unused). */
typedef struct wave_cell_args {
    int x, y;
    float amplitude;
} wave_cell_args;

/* A scalar's new value: c^2 (WAVE_SET_C2) or the damping (WAVE_SET_DAMPING). */
typedef struct wave_value_args {
    float value;
} wave_value_args;

#endif
