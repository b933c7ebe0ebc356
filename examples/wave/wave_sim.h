/* A 2-D wave simulation held on a ringkernel device, driven by commands
 * (inject an impulse, set a parameter, step, query a cell): a thin layer
 * over the persistent-simulation API (ringkernel/sim.h), as
 * examples/heat3d is. The physics is examples/wave/wave_kernels.c, one DSL
 * source for every backend; this header and wave_sim.c are the host side.
 * The patterns are rk_sim's, with the same grid and the same results bit
 * for bit:
 *
 *   WAVE_PERSISTENT   one cooperative launch for the simulation's
 *                     lifetime; each block owns a band of rows; a command
 *                     is a few tagged words in a ring in host-mapped
 *                     memory (RK_SIM_PERSISTENT).
 *   WAVE_TRADITIONAL  launches per command on one stream (RK_SIM_TRADITIONAL).
 *   WAVE_GRAPH        the traditional launches replayed from launch graphs
 *                     (CUDA graphs); elsewhere it runs as WAVE_TRADITIONAL
 *                     (RK_SIM_GRAPH).
 *
 * Commands are asynchronous: each returns a ticket at once, and
 * wave_wait(ticket) returns when the simulation has applied it (and gives a
 * query's value). Every command sees the effect of every earlier one, in
 * every pattern. One host thread drives a simulation; several may be open
 * at once, on one device or several (rk_sim loads a module beside running
 * persistent kernels).
 */
#ifndef WAVE_SIM_H
#define WAVE_SIM_H

#include <stdint.h>

#include "ringkernel/sim.h"

typedef enum wave_pattern { WAVE_PERSISTENT = 1, WAVE_TRADITIONAL = 2, WAVE_GRAPH = 3 } wave_pattern;

typedef struct wave_config {
    const char *device;   /* rk_select_device spec: "cpu", "cuda", "cuda:1"; NULL = "cpu" */
    wave_pattern pattern; /* 0 = WAVE_PERSISTENT */
    int nx, ny;           /* grid; 0 = 256 x 256 */
    float speed;          /* Courant number c dt/dx, in (0, 0.7071]; 0 = 0.5 */
    float damping;        /* per step, in [0, 1) */
    uint32_t blocks;      /* bands of rows (persistent) or blocks per launch; 0 = the library's default
                           * (rk_sim_desc.blocks), never more than ny */
    uint32_t threads;     /* per block, a multiple of 32; 0 = 512 persistent on CUDA, else the library's
                           * default (256 on GPUs, 32 on the CPU) */
} wave_config;

typedef struct wave_sim wave_sim;
typedef rk_sim_ticket wave_ticket; /* increasing in submission order (rk_sim's tickets) */

/* Checks the configuration, compiles the kernels, allocates a zero field
 * and, persistent, launches the kernel (rk_sim_create: with blocks = 0 a
 * grid that cannot be co-resident is halved until it fits). */
rk_status wave_sim_create(const wave_config *cfg, wave_sim **out);
/* Completes the commands in flight, stops the kernel and frees everything
 * (rk_sim_destroy). NULL is fine. */
rk_status wave_sim_destroy(wave_sim *sim);

/* Commands. ticket may be NULL. Arguments are checked here: a cell outside
 * the grid, an amplitude that is not finite, a speed over the stability
 * limit or a damping outside [0, 1) is RK_INVALID_ARGUMENT and nothing is
 * sent. */
rk_status wave_inject(wave_sim *sim, int x, int y, float amplitude, wave_ticket *ticket);
rk_status wave_set_speed(wave_sim *sim, float speed, wave_ticket *ticket);
rk_status wave_set_damping(wave_sim *sim, float damping, wave_ticket *ticket);
rk_status wave_step(wave_sim *sim, uint32_t steps, wave_ticket *ticket);
rk_status wave_query(wave_sim *sim, int x, int y, wave_ticket *ticket);

/* Returns once the command `ticket` has been applied (rk_sim_wait). An
 * impulse and a query may complete while bands of rows elsewhere still
 * work on an earlier step; the effect is the same: every later command sees
 * the impulse, and the answer reflects every earlier command.
 * For a query, *value (may be NULL) receives the cell's value (0 for other
 * commands); it can be read until RK_SIM_RING_SLOTS later commands have
 * been sent (RK_OUT_OF_RANGE after that). RK_HUNG if the simulation makes
 * no progress for a minute. */
rk_status wave_wait(wave_sim *sim, wave_ticket ticket, float *value);
/* Waits for every command sent so far. */
rk_status wave_finish(wave_sim *sim);

/* After every command sent so far: copies the current time level (nx * ny
 * floats, row-major) and, if prev is not NULL, the one before it. */
rk_status wave_read_field(wave_sim *sim, float *cur, float *prev);

typedef struct wave_sim_info {
    wave_pattern pattern;     /* as asked for */
    int nx, ny;
    float speed, damping;     /* as last set */
    uint64_t steps;           /* time steps sent so far */
    uint32_t blocks, threads; /* the persistent grid (bands), or each launch's */
    uint32_t blocks_requested; /* = blocks (rk_sim reports only the grid it runs) */
    char backend[16];
    char device[256];
    char driver[64];
} wave_sim_info;

void wave_sim_get_info(const wave_sim *sim, wave_sim_info *out);

/* Why the calling thread's last failing wave_* call failed (the library's
 * rk_last_error() text when the library refused). Never NULL. */
const char *wave_last_error(void);

const char *wave_pattern_name(wave_pattern pattern); /* "persistent", "traditional", "graph" */
/* "persistent", "traditional" or "graph"; false for anything else. */
int wave_pattern_parse(const char *name, wave_pattern *out);

/* The full source rk_sim compiles for cfg (rk_sim_generate_source: the
 * generated declarations, wave_args.h and wave_kernels.c, the library's
 * kernels), for tools that compile it themselves (an NVRTC check). The
 * device is not opened: where it cannot be had here, the spec's backend
 * name ("cuda" of "cuda:1") decides the default threads. *out is malloc'd. */
rk_status wave_generate_source(const wave_config *cfg, char **out);

/* Discrete energy of the leapfrog scheme for the two time levels (cur is
 * the newer): sum (cur - prev)^2 + c^2 sum over neighbour pairs of
 * (cur_i - cur_j)(prev_i - prev_j). Constant for damping 0 (up to rounding)
 * and falling for damping > 0. */
double wave_energy(const float *cur, const float *prev, int nx, int ny, float speed);

#endif
