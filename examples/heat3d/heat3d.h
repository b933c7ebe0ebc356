/* A 3-D heat grid held on a ringkernel device: the second example of the
 * rk_sim API (ringkernel/sim.h), a different shape from the wave: planes
 * with up/down neighbours, an answer that adds up over bands, a global
 * command. This file and heat3d.c are all the host code a user writes; the
 * physics is heat3d_kernels.c. */
#ifndef HEAT3D_H
#define HEAT3D_H

#include "heat3d_args.h"
#include "ringkernel/sim.h"

enum { HEAT_ADD = 1, HEAT_QUERY = 2, HEAT_COUNT_HOT = 3, HEAT_SET_ALPHA = 4 };

typedef struct heat3d_config {
    const char *device;     /* NULL = "cpu" */
    rk_sim_pattern pattern;
    int nx, ny, nz;         /* 0 = 32 each */
    float alpha;            /* diffusion number, stable up to 1/6; 0 = 0.1 */
    uint32_t blocks, threads;
    uint32_t hang_timeout_ms;
} heat3d_config;

/* The DSL source (heat3d_kernels.c). */
const char *heat3d_source(void);
/* Fills *desc (and the tables it points to, in static storage) for cfg. */
void heat3d_describe(const heat3d_config *cfg, rk_sim_desc *desc);

/* The simulation and the grid's size, which the commands check cells against. */
typedef struct heat3d {
    rk_sim *sim;
    int nx, ny, nz;
} heat3d;

rk_status heat3d_create(const heat3d_config *cfg, heat3d *out);

/* Commands: a cell outside the grid is RK_OUT_OF_RANGE, nothing sent. */
rk_status heat3d_add(const heat3d *h, int x, int y, int z, float amount, rk_sim_ticket *ticket);
rk_status heat3d_query(const heat3d *h, int x, int y, int z, rk_sim_ticket *ticket);
rk_status heat3d_count_hot(const heat3d *h, int z_first, int z_count, float threshold, rk_sim_ticket *ticket);
rk_status heat3d_set_alpha(const heat3d *h, float alpha, rk_sim_ticket *ticket);

/* The reference: the same arithmetic on the host (a model for tests).
 * Steps the level cur into next, nx * ny * nz cells. */
void heat3d_host_step(const float *cur, float *next, int nx, int ny, int nz, float alpha);

#endif
