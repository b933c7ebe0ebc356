/* CPU benchmarks as reusable functions: each runs one measurement and
 * returns its figures; printing is the caller's job (bench_cpu_main.c, and
 * the CLI's `rk bench`). Nothing here asserts on time. */
#ifndef RK_BENCH_CPU_H
#define RK_BENCH_CPU_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "ringkernel/ringkernel.h"

/* SPSC queue between two threads. */
/* Two CPUs for a benchmark's two threads (producer or sender first). A
 * queue row and its floor run on the same pair, so both meet the same
 * caches: on a many-core host where threads land is otherwise the
 * scheduler's choice, and moving a cache line between two hardware threads
 * of one core, two cores or two sockets changes a one-at-a-time rate 5x. */
typedef struct rk_bench_cpu_pair {
    int first, second;
    int workers[2]; /* two more CPUs, on cores of their own, for the pipelined row's two workers; -1: none */
} rk_bench_cpu_pair;

/* Two CPUs of this process's affinity mask on different physical cores
 * (the lowest such pair after the first CPU, which the rest of the process
 * tends to use), and where the mask has them two more on two further cores
 * (else workers[] is -1). false when the mask has fewer than two CPUs. */
bool rk_bench_pick_cpu_pair(rk_bench_cpu_pair *out);
/* Pins the calling thread to cpu; false if the system refused. */
bool rk_bench_pin_self(int cpu);
/* Whether pin places the pipelined row's four threads (two more CPUs known). */
bool rk_bench_pin_has_workers(const rk_bench_cpu_pair *pin);

/* The calling thread's CPU mask, kept while a benchmark pins it and put
 * back after (a thread that stayed pinned would skew the next rows). */
typedef struct rk_bench_affinity {
    _Alignas(8) unsigned char mask[128];
    bool saved;
} rk_bench_affinity;
/* Saves the calling thread's mask into *saved, then pins it to cpu. */
bool rk_bench_pin_self_saving(int cpu, rk_bench_affinity *saved);
/* Puts back what rk_bench_pin_self_saving saved (nothing if it saved nothing). */
void rk_bench_restore_self(const rk_bench_affinity *saved);

/* How a side of the SPSC throughput benchmarks (the bare ring floor and
 * the library's queue alike) waits when it finds the ring empty or full:
 * pauses between looks (rk_bench_ring_pauses: the count that makes the
 * floor of that mode fastest; $RK_BENCH_RING_PAUSES, 1-4096, forces one
 * for every mode), a yield after 256 looks (a machine with fewer free cores
 * than threads). looks counts one wait's looks; reset it to 0 when the wait
 * ends. */
#define RK_BENCH_RING_PAUSES_ONE 64u  /* one message a publish */
#define RK_BENCH_RING_PAUSES_BATCH 1u /* batches */
unsigned rk_bench_ring_pauses(uint32_t batch);
void rk_bench_ring_wait(unsigned *looks, unsigned pauses);

typedef struct rk_bench_queue_opts {
    uint64_t messages;   /* 0 = 20 M */
    uint32_t slot_size;  /* bytes per message; 0 = 64 */
    uint32_t capacity;   /* slots; 0 = 4096 */
    uint32_t batch;      /* messages per reserve/commit and peek/release; 0 or 1 = one at a time */
    const rk_bench_cpu_pair *pin; /* NULL: threads where the scheduler puts them */
} rk_bench_queue_opts;

typedef struct rk_bench_queue_result {
    uint64_t messages;
    double seconds;
    double messages_per_second;
    double bytes_per_second;
    uint64_t errors;     /* messages that arrived out of order or torn: must be 0 */
} rk_bench_queue_result;

/* opts may be NULL (defaults). */
rk_status rk_bench_queue_spsc(const rk_bench_queue_opts *opts, rk_bench_queue_result *out);

/* Ring kernel on a runtime: host send -> handler -> host receive. */
typedef struct rk_bench_kernel_opts {
    uint64_t messages;      /* 0 = 10 M for throughput, 100 k for latency */
    uint32_t message_size;  /* 0 = 16 */
    uint32_t queue_capacity;/* 0 = 4096 */
    uint32_t batch;         /* messages per send_batch / receive_batch; 0 = 256 */
    rk_exec_mode mode;      /* RK_MODE_DEFAULT = the backend's choice */
    uint32_t workers;       /* 0 = backend default */
    uint32_t host_threads;  /* throughput: 0 or 1 = one host thread alternates sending and receiving;
                               2 = one thread sends, another receives (the floor's shape) */
    const rk_bench_cpu_pair *pin; /* one host thread and one worker: the host thread on first, the
                                     worker on second (it inherits the launching thread's mask); two
                                     host threads and two workers, with pin->workers[]: the receiver on
                                     first, the sender on second, the workers on workers[]; NULL or
                                     another shape: where the scheduler puts them */
} rk_bench_kernel_opts;

typedef struct rk_bench_kernel_result {
    uint64_t messages;
    double seconds;
    double messages_per_second;
    /* Latency runs only: one message at a time, host send to host receive. */
    double p50_us, p90_us, p99_us, max_us, mean_us;
    uint64_t errors;        /* wrong replies: must be 0 */
    uint64_t launches;      /* device launches the kernel made */
} rk_bench_kernel_result;

/* Many messages in batches: one host thread alternating send and receive,
 * or (host_threads 2) a sending thread and a receiving one. */
rk_status rk_bench_kernel_throughput(rk_runtime *rt, const rk_bench_kernel_opts *opts,
                                     rk_bench_kernel_result *out);

/* The CPUs this process may run on (its affinity mask). */
uint32_t rk_bench_process_cores(void);

/* One message at a time: send, wait for its reply, repeat. */
rk_status rk_bench_kernel_latency(rk_runtime *rt, const rk_bench_kernel_opts *opts,
                                  rk_bench_kernel_result *out);

#endif
