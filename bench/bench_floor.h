/* Physical floors for the CPU benchmarks, measured in the same process
 * right before the rows they judge: the least a message can cost between
 * two threads on this machine, with no library in the way.
 *   ring:      a minimal single-producer/single-consumer ring of fixed
 *              slots (two cache-line-separated indices, nothing else): the
 *              floor of the queue and of batched ring-kernel throughput;
 *   ping-pong: two threads bouncing one word through one cache line: the
 *              floor of a round trip (host -> worker -> host).
 *   dispatch:  on a backend without persistent kernels (WebGPU), a batch of
 *              64-byte requests copied to the device, one dispatch that
 *              answers each (first word + 1), the replies read back: the
 *              floor of event-driven relaunch, per message (batch 1, p50)
 *              and in batches (messages per second).
 * The CPU floors spin, and yield after a bounded spin (never sleep), as the
 * library's own waits do. Every message is still checked. */
#ifndef RK_BENCH_FLOOR_H
#define RK_BENCH_FLOOR_H

#include <stdint.h>

#include "bench_cpu.h"
#include "ringkernel/ringkernel.h"

typedef struct rk_bench_floor_ring_opts {
    uint64_t messages;  /* 0 = 20 M */
    uint32_t slot_size; /* 8 .. 256 bytes; 0 = 64 */
    uint32_t batch;     /* slots per publish; 0 or 1 = one at a time */
    const rk_bench_cpu_pair *pin; /* NULL: threads where the scheduler puts them */
} rk_bench_floor_ring_opts;

typedef struct rk_bench_floor_result {
    uint64_t messages;
    double seconds;
    double messages_per_second;
    double p50_ns, p99_ns; /* ping-pong only */
    uint64_t errors;       /* messages out of order or torn: must be 0 */
} rk_bench_floor_result;

rk_status rk_bench_floor_ring(const rk_bench_floor_ring_opts *opts, rk_bench_floor_result *out);
/* rounds = 0: 100 k round trips (at most 2^32 - 2: the words are 32-bit).
 * pin: the calling thread on first, its peer on second (NULL: unpinned). */
rk_status rk_bench_floor_pingpong(uint64_t rounds, const rk_bench_cpu_pair *pin, rk_bench_floor_result *out);

/* A bare dispatch + readback through the device layer (WGSL: the backend
 * must take WGSL, i.e. WebGPU). rounds = 0: 2 000 (after 100 warm-up);
 * batch 0 or 1: one message a round. p50/p99 are per round. */
rk_status rk_bench_floor_dispatch(rk_runtime *rt, uint64_t rounds, uint32_t batch, rk_bench_floor_result *out);

#endif
