/* GPU ring-kernel benchmarks as reusable functions: each runs one
 * measurement through the public API on a runtime the caller opened
 * (normally "cuda:0") and returns its figures; printing is the caller's job
 * (bench_cuda_main.c, and the CLI's `rk bench`). Every reply is checked;
 * `errors` counts wrong ones and must be 0. Nothing here asserts on time. */
#ifndef RK_BENCH_CUDA_H
#define RK_BENCH_CUDA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ringkernel/ringkernel.h"

typedef struct rk_bench_cuda_opts {
    uint64_t messages;       /* 0 = each benchmark's default (see below) */
    uint32_t message_size;   /* request and reply bytes, a multiple of 4, >= 8; 0 = 64 */
    uint32_t queue_capacity; /* 0 = 4096 */
    uint32_t batch;          /* messages per send_batch / receive_batch; 0 = 256 */
    uint32_t workers;        /* GPU blocks; 0 = backend default */
    uint32_t kernels;        /* throughput: kernels side by side, each with its own two host threads; 0 = 1 */
    bool no_pinning;         /* leave host threads unpinned (pinning trims the tail) */
    bool busy_poll;          /* latency: wait for the reply by calling receive with RK_NO_WAIT in a loop
                                (what a latency-critical caller does) instead of a blocking receive */
    bool isolated;           /* latency: wait a random 5-15 us before each send, so that a message arrives at
                                an arbitrary moment of the kernel's polling rather than right after a reply */
} rk_bench_cuda_opts;

/* Host → device → host round trip of one message at a time (send, then
 * receive the reply, then the next), in `mode`: RK_MODE_PERSISTENT,
 * RK_MODE_TRADITIONAL (launch per command) or RK_MODE_GRAPH.
 * Default messages: 100 000 persistent, 20 000 otherwise (after 2 000 warm-up). */
typedef struct rk_bench_cuda_latency {
    uint64_t messages;
    double min_us, mean_us, p50_us, p99_us, p999_us, max_us;
    uint64_t launches;
    uint64_t errors;
} rk_bench_cuda_latency;

rk_status rk_bench_cuda_latency_run(rk_runtime *rt, rk_exec_mode mode, const rk_bench_cuda_opts *opts,
                                    rk_bench_cuda_latency *out);

/* Sustained end-to-end throughput of persistent kernels: per kernel, one
 * thread sends batches and another receives and verifies every reply.
 * Default messages: 200 M in all. */
typedef struct rk_bench_cuda_throughput {
    uint64_t messages;
    uint32_t kernels;
    double seconds;
    double messages_per_second;
    double bytes_per_second; /* request plus reply payload bytes */
    uint64_t errors;
} rk_bench_cuda_throughput;

rk_status rk_bench_cuda_throughput_run(rk_runtime *rt, const rk_bench_cuda_opts *opts,
                                       rk_bench_cuda_throughput *out);

/* Host time spent in rk_kernel_send_batch per message, `batch` messages a
 * call into a drained queue while the persistent kernel runs (replies are
 * taken between calls, outside the timing). Default: 2 000 calls. */
typedef struct rk_bench_cuda_send_cost {
    uint64_t calls;
    uint32_t batch;
    double ns_per_message_p50, ns_per_message_mean;
    uint64_t errors;
} rk_bench_cuda_send_cost;

rk_status rk_bench_cuda_send_cost_run(rk_runtime *rt, const rk_bench_cuda_opts *opts,
                                      rk_bench_cuda_send_cost *out);

/* "NVIDIA H100 80GB HBM3, sm_90, 132 SMs" and the driver line, for reports. */
void rk_bench_cuda_describe(rk_runtime *rt, char *device, size_t device_size, char *driver, size_t driver_size);

#endif
