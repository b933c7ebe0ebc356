/* Floors for the CUDA rows, measured on the same runtime right before them:
 *   tagged-word ping-pong: one GPU thread polls a word of mapped host memory
 *     and writes it back to another (relaxed, the word is the message): what
 *     a host -> device -> host round trip costs with no queue, handler or
 *     library (the floor of the persistent round trip; cf. bench/cuda_ll_pingpong.cu);
 *   empty launch: an empty kernel launched and synchronized: the floor of
 *     the launch-per-command pattern. */
#ifndef RK_BENCH_CUDA_FLOOR_H
#define RK_BENCH_CUDA_FLOOR_H

#include <stdint.h>

#include "ringkernel/ringkernel.h"

typedef struct rk_bench_cuda_floor {
    uint64_t rounds;
    double p50_us, p99_us, mean_us;
    uint64_t errors;
} rk_bench_cuda_floor;

/* rounds = 0: 20 000 (after 2 000 warm-up). */
rk_status rk_bench_cuda_floor_pingpong(rk_runtime *rt, uint64_t rounds, rk_bench_cuda_floor *out);
rk_status rk_bench_cuda_floor_empty_launch(rk_runtime *rt, uint64_t rounds, rk_bench_cuda_floor *out);

#endif
