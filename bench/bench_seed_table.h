/* The spec's persistent-vs-traditional table, measured: one wave simulation
 * (examples/wave, on the rk_sim API), one grid and one meaning of every row
 * for both patterns.
 *
 *   inject            from the host's call until the running simulation has
 *                     applied the impulse (the command's completion word is
 *                     seen: written by the persistent kernel, or by the
 *                     command's launch), and the host's cost of the call alone
 *   single step       one time step, from the command until the host sees
 *                     it complete
 *   mixed workload    300 interleaved inject / step 1 / query operations,
 *                     first to last; "each waited": every operation's
 *                     completion is seen before the next is sent; "queries
 *                     waited": only queries (their answer is needed)
 *   batch             10,000 steps at once: traditional = 10,000 launches
 *                     back to back and one synchronize; persistent = one
 *                     command "step 10000"
 *   commands/frame    how many mixed-workload operations (each waited) fit
 *                     in a 16.7 ms frame
 *
 * Both patterns receive exactly the same command sequence, so the answers
 * of every query must agree; the result says whether they did. Timing only:
 * nothing here asserts on speed. Printing is the caller's (rk bench
 * seed-table).
 */
#ifndef RK_BENCH_SEED_TABLE_H
#define RK_BENCH_SEED_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "ringkernel/status.h"

typedef struct rk_seed_table_opts {
    const char *device;   /* rk_select_device spec; NULL = "cpu" */
    int size;             /* grid side; 0 = 256 on the CPU, 512 elsewhere */
    uint32_t repeats;     /* samples for the inject and step rows; 0 = 2000 (CPU) / 5000 */
    uint32_t mixed_repeats; /* 0 = 20 (CPU) / 50 */
    uint32_t batch_steps; /* 0 = 10000 */
    uint32_t batch_repeats; /* 0 = 3 (CPU) / 5 */
    bool quick;           /* a smoke run: few samples, 500-step batches */
    uint32_t blocks, threads; /* persistent grid (bands); 0 = the showcase's defaults (wave_sim.h) */
    /* Progress lines ("persistent: inject ..."); may be NULL. */
    void (*progress)(void *user, const char *line);
    void *user;
} rk_seed_table_opts;

typedef struct rk_seed_stat {
    double median_us, p99_us, mean_us, min_us;
    uint32_t samples;
} rk_seed_stat;

typedef struct rk_seed_pattern_result {
    rk_seed_stat inject;          /* call until applied */
    rk_seed_stat inject_call;     /* the call alone */
    rk_seed_stat step;
    rk_seed_stat mixed;           /* each waited; per run of mixed_ops */
    rk_seed_stat mixed_pipelined; /* queries waited */
    rk_seed_stat batch;           /* per batch of batch_steps */
    double commands_per_frame;    /* 16.667 ms / (mixed median / mixed_ops) */
    uint32_t blocks, threads;     /* persistent grid, or the step kernel's block */
} rk_seed_pattern_result;

typedef struct rk_seed_table_result {
    char backend[16], device[256], driver[64];
    int nx, ny;
    uint32_t mixed_ops, batch_steps;
    rk_seed_pattern_result persistent, traditional;
    uint64_t queries_compared, queries_differing;
    double max_field_difference;  /* |persistent - traditional| over the final field */
} rk_seed_table_result;

/* Runs both patterns one after the other. On failure the reason is in
 * rk_bench_seed_table_error(); RK_BACKEND_UNAVAILABLE / RK_NO_DEVICE when
 * the device cannot be had. */
rk_status rk_bench_seed_table(const rk_seed_table_opts *opts, rk_seed_table_result *out);
const char *rk_bench_seed_table_error(void);

#endif
