/* A 2-D wave simulation held on a ringkernel device, driven by commands
 * (inject an impulse, set a parameter, step, query a cell) through one of
 * two patterns with the same grid and the same results:
 *
 *   WAVE_PERSISTENT   one cooperative launch of wave_persistent for the
 *                     simulation's lifetime; a command is a few words in a
 *                     ring in host-mapped memory, a completion a word the
 *                     kernel writes back.
 *   WAVE_TRADITIONAL  per command, ordinary launches (wave_inject,
 *                     wave_step) and copies on one stream; completion is a
 *                     stream synchronize.
 *
 * Commands are asynchronous: each returns a ticket at once, and
 * wave_wait(ticket) returns when the simulation has applied it (and gives a
 * query's value). Every command sees the effect of every earlier one, in
 * both patterns. One host thread drives a simulation. The kernels are
 * examples/wave/wave_kernels.c and wave_persistent.c, compiled at run time
 * with rk_module_compile (the system C compiler on the CPU, NVRTC on CUDA).
 *
 * On CUDA, while a persistent simulation runs, loading or unloading a module
 * waits for it: creating another simulation on that GPU is refused then
 * (RK_BAD_STATE, create it first), and a destroyed simulation's module is
 * unloaded once the last persistent kernel there has stopped
 * (wave_registry.h). A persistent grid with a block on every multiprocessor
 * kept other kernels from starting on an H100, so the default leaves one
 * free (docs/showcase.md, limitations).
 */
#ifndef WAVE_SIM_H
#define WAVE_SIM_H

#include <stdint.h>

#include "ringkernel/device.h"

typedef enum wave_pattern { WAVE_PERSISTENT = 1, WAVE_TRADITIONAL = 2 } wave_pattern;

typedef struct wave_config {
    const char *device;   /* rk_select_device spec: "cpu", "cuda", "cuda:1"; NULL = "cpu" */
    wave_pattern pattern; /* 0 = WAVE_PERSISTENT */
    int nx, ny;           /* grid; 0 = 256 x 256 */
    float speed;          /* Courant number c dt/dx, in (0, 0.7071]; 0 = 0.5 */
    float damping;        /* per step, in [0, 1) */
    uint32_t blocks;      /* persistent: 0 = one per multiprocessor but one (CPU: per core but one), at
                           * least 2 (block 0 relays commands, each other block owns a band of rows);
                           * traditional step kernel: 0 = a thread per cell (CPU: a block per core) */
    uint32_t threads;     /* threads per block; 0 = 512 persistent / 256 traditional on GPUs, 32 on the CPU */
} wave_config;

typedef struct wave_sim wave_sim;
typedef uint64_t wave_ticket; /* 1, 2, 3, ... in submission order */

/* Compiles the kernels, allocates a zero field and, for the persistent
 * pattern, launches the kernel. RK_BAD_LAUNCH_CONFIG if the persistent grid
 * cannot be co-resident (ask for fewer blocks). With blocks = 0 the grid is
 * halved until the cooperative launch is accepted (a line on stderr says so;
 * wave_sim_get_info gives both figures), but on a GPU not below a quarter of
 * one block per multiprocessor: that means another kernel or context holds
 * the device, and creation fails with RK_BAD_LAUNCH_CONFIG. */
rk_status wave_sim_create(const wave_config *cfg, wave_sim **out);
/* Stops the kernel (persistent) and frees everything. NULL is fine. */
rk_status wave_sim_destroy(wave_sim *sim);

/* Commands. ticket may be NULL. Arguments are checked here: a cell outside
 * the grid, a speed over the stability limit or a damping outside [0, 1) is
 * RK_INVALID_ARGUMENT and nothing is sent. */
rk_status wave_inject(wave_sim *sim, int x, int y, float amplitude, wave_ticket *ticket);
rk_status wave_set_speed(wave_sim *sim, float speed, wave_ticket *ticket);
rk_status wave_set_damping(wave_sim *sim, float damping, wave_ticket *ticket);
rk_status wave_step(wave_sim *sim, uint32_t steps, wave_ticket *ticket);
rk_status wave_query(wave_sim *sim, int x, int y, wave_ticket *ticket);

/* Returns once the command `ticket` has been applied. Traditional: every
 * earlier command has been too. Persistent: a step, a fence and a stop
 * complete after every earlier command; an impulse and a query may
 * complete while bands of rows elsewhere still work on an earlier step
 * (the effect is the same: every later command sees the impulse, and the
 * answer reflects every earlier command).
 * For a query, *value (may be NULL) receives the cell's value; it
 * can be read until WAVE_RING_SLOTS later commands have been sent
 * (RK_OUT_OF_RANGE after that). RK_HUNG if the kernel makes no progress
 * for a minute. */
rk_status wave_wait(wave_sim *sim, wave_ticket ticket, float *value);
/* Waits for every command sent so far. */
rk_status wave_finish(wave_sim *sim);

/* Waits for every command, then copies the current time level (nx * ny
 * floats, row-major) and, if prev is not NULL, the one before it. */
rk_status wave_read_field(wave_sim *sim, float *cur, float *prev);

typedef struct wave_sim_info {
    wave_pattern pattern;
    int nx, ny;
    float speed, damping;     /* as last set */
    uint64_t steps;           /* time steps sent so far */
    uint32_t blocks, threads; /* the persistent grid, or the traditional step kernel's */
    uint32_t blocks_requested; /* persistent: the grid asked for, before halving to fit (= blocks if it fit) */
    char backend[16];
    char device[256];
    char driver[64];
} wave_sim_info;

void wave_sim_get_info(const wave_sim *sim, wave_sim_info *out);

/* Why the calling thread's last failing wave_* call failed (the library's
 * rk_last_error() text when the library refused). Never NULL. */
const char *wave_last_error(void);

const char *wave_pattern_name(wave_pattern pattern); /* "persistent", "traditional" */
/* "persistent" or "traditional"; false for anything else. */
int wave_pattern_parse(const char *name, wave_pattern *out);

/* The kernels' source as compiled (wave_protocol.h, wave_kernels.c, then
 * wave_persistent.c).
 * Static storage; for tools that compile it themselves (an NVRTC check). */
const char *wave_kernel_source(void);

/* Discrete energy of the leapfrog scheme for the two time levels (cur is
 * the newer): sum (cur - prev)^2 + c^2 sum over neighbour pairs of
 * (cur_i - cur_j)(prev_i - prev_j). Constant for damping 0 (up to rounding)
 * and falling for damping > 0. */
double wave_energy(const float *cur, const float *prev, int nx, int ny, float speed);

#endif
