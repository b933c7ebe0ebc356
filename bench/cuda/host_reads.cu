/* How one warp's loads of host-mapped memory behave on a GPU, the facts
 * the persistent simulations' relay is built around (docs/simulations.md,
 * session 19). Not part of the CMake build: scripts/device-host-reads.sh
 * builds it with nvcc on a machine with a GPU and runs it.
 *
 *  1. A second load of the same host lines, issued D ns after a first that
 *     is still in flight: does it come back D after the first (both on the
 *     bus at once) or a round trip after it (it left when the first was
 *     back)? The same for other lines.
 *  2. A load of device memory (the L2) issued after a load of host memory
 *     that is still in flight: does its value come before the host load's?
 *     (3: a shared-memory load, another warp's load; 4: a shuffle, a ballot,
 *     a store that another warp polls for; 5: device memory at GPU and
 *     system scope.) */
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <ctime>

#include "ptx_memory.cuh"

/* Waits 3 us, so that every load of a round has landed before the next. */
__device__ void settle() {
    uint64_t t;
    const uint64_t t1 = now_ns();
    do t = now_ns(); while (t - t1 < 3000);
}
/* Thread `who` writes the mean of `sum` and what keeps the loads alive. */
__device__ void report(uint64_t *out, uint64_t sum, uint64_t keep, int reps, int who) {
    if ((int)threadIdx.x == who) {
        out[0] = sum / reps;
        out[1] = keep;
    }
}
/* Right after the poll that saw a store: ns since the storing thread
 * noted its time in `stored_at` (waited for, if not yet there). */
__device__ uint64_t since_stored(volatile uint64_t &stored_at) {
    const uint64_t seen = now_ns();
    while (stored_at == 0) {
    }
    return seen - stored_at;
}

/* One warp-wide load (256 bytes) of host memory, then after `delay` ns a
 * second one `offset` words further on; out: mean ns until each value. */
__global__ void two_host_loads(const uint64_t *host, uint64_t *out, int delay, int offset, int reps) {
    if (threadIdx.x >= 32) return;
    uint64_t first = 0, second = 0, keep = 0;
    for (int r = 0; r < reps; r++) {
        const uint64_t t0 = now_ns();
        const uint64_t a = load_sys(host + threadIdx.x);
        uint64_t t;
        do t = now_ns(); while (t - t0 < (uint64_t)delay);
        const uint64_t b = load_sys(host + offset + threadIdx.x);
        keep += __shfl_sync(0xffffffffu, a, 0);
        const uint64_t t1 = now_ns();
        keep += __shfl_sync(0xffffffffu, b, 0);
        const uint64_t t2 = now_ns();
        first += t1 - t0;
        second += t2 - t0;
    }
    if (threadIdx.x == 0) {
        out[0] = first / reps;
        out[1] = second / reps;
        out[2] = keep;
    }
}

/* Mode 0: a load of device memory alone; 1: behind a load of host memory
 * still in flight; 2: behind three stores to host memory (an answer's);
 * 3: a GPU-scope fence, then the load, behind a host load in flight.
 * out: mean ns from the device load's issue to its value. */
__global__ void device_load_behind(const uint64_t *host, uint64_t *host_words, const uint64_t *dev, uint64_t *out,
                                   int mode, int reps) {
    if (threadIdx.x >= 32) return;
    uint64_t sum = 0, keep = 0;
    for (int r = 0; r < reps; r++) {
        uint64_t a = 0;
        if (mode == 1 || mode == 3) a = load_sys(host + threadIdx.x);
        if (mode == 2 && threadIdx.x == 0)
            for (int w = 0; w < 3; w++) store_sys(host_words + w, (uint64_t)r);
        const uint64_t t0 = now_ns();
        if (mode == 3) asm volatile("fence.acq_rel.gpu;" ::: "memory");
        const uint64_t b = load_gpu(dev + threadIdx.x);
        keep += __shfl_sync(0xffffffffu, b, 0);
        sum += now_ns() - t0;
        keep += __shfl_sync(0xffffffffu, a, 0);
        settle();
    }
    report(out, sum, keep, reps, 0);
}

/* Part 3. Mode 0: a shared-memory load alone; 1: the same warp's
 * shared-memory load behind its load of host memory in flight; 2: warp 1's
 * load of device memory while warp 0 has a load of host memory in flight
 * (the other warp is not held up if loads complete in order per warp only).
 * out: mean ns from the measured load's issue to its value. */
__global__ void other_loads_behind(const uint64_t *host, const uint64_t *dev, uint64_t *out, int mode, int reps) {
    __shared__ uint64_t shared[64];
    __shared__ volatile int go;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (threadIdx.x < 64) shared[threadIdx.x] = threadIdx.x;
    __syncthreads();
    uint64_t sum = 0, keep = 0;
    for (int r = 0; r < reps; r++) {
        if (threadIdx.x == 0) go = 0;
        __syncthreads();
        uint64_t a = 0;
        if (warp == 0 && mode >= 1) {
            a = load_sys(host + lane);
            if (mode == 2 && lane == 0) go = 1; /* warp 1 measures now, with this read in flight */
        }
        if ((mode < 2 && warp == 0) || (mode == 2 && warp == 1)) {
            if (mode == 2)
                while (!go) {
                }
            const uint64_t t0 = now_ns();
            uint64_t b;
            if (mode < 2) {
                volatile uint64_t *sp = shared;
                b = sp[(lane + r) & 63];
            } else {
                b = load_gpu(dev + lane);
            }
            keep += __shfl_sync(0xffffffffu, b, 0);
            sum += now_ns() - t0;
        }
        keep += __shfl_sync(0xffffffffu, a, 0);
        __syncthreads();
        settle();
    }
    report(out, sum, keep, reps, (mode == 2 ? 32 : 0));
}

/* Part 4, what else of a warp's waits for its load of host memory in
 * flight. Mode 0: a shuffle alone; 1: a shuffle behind the host load; 2: a
 * ballot behind it; 3: warp 0 stores a word to device memory and warp 1,
 * polling it, sees it (from warp 0's store to warp 1's sight); 4: the
 * same store behind warp 0's host load in flight. out: mean ns. */
__global__ void warp_ops_behind(const uint64_t *host, uint64_t *dev, uint64_t *out, int mode, int reps) {
    __shared__ volatile uint64_t stored_at;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    uint64_t sum = 0, keep = 0;
    uint32_t acc = lane;
    for (int r = 0; r < reps; r++) {
        if (threadIdx.x == 0) stored_at = 0;
        __syncthreads();
        uint64_t a = 0;
        if (warp == 0 && (mode == 1 || mode == 2 || mode == 4)) a = load_sys(host + lane);
        if (warp == 0 && mode <= 2) {
            const uint64_t t0 = now_ns();
            uint32_t v;
            if (mode == 2) v = __ballot_sync(0xffffffffu, (acc & 1u) != 0u);
            else asm volatile("shfl.sync.idx.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(v) : "r"(acc), "r"((lane + 1) & 31));
            asm volatile("add.u32 %0, %0, %1;" : "+r"(acc) : "r"(v));
            sum += now_ns() - t0;
        } else if (warp == 0) {
            const uint64_t t0 = now_ns();
            if (lane == 0) {
                stored_at = t0;
                asm volatile("st.relaxed.gpu.u64 [%0], %1;" ::"l"(dev), "l"((uint64_t)r + 1) : "memory");
            }
        } else if (mode >= 3) {
            while (load_gpu(dev) != (uint64_t)r + 1) {
            }
            sum += since_stored(stored_at);
        }
        keep += __shfl_sync(0xffffffffu, a, 0) + acc;
        __syncthreads();
        settle();
    }
    report(out, sum, keep, reps, (mode >= 3 ? 32 : 0));
}

/* Part 5, the scope of a load or store of device memory. Mode 0: a
 * relaxed load at GPU scope; 1: at system scope (the DSL's
 * load_relaxed_u64); 2: an acquire at GPU scope; then warp 0's store seen
 * by warp 1 polling with a load of the same scope: 3 GPU, 4 system. out:
 * mean ns (a load: issue to value; a store: store to warp 1 seeing it). */
__global__ void device_scopes(uint64_t *dev, uint64_t *out, int mode, int reps) {
    __shared__ volatile uint64_t stored_at;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    uint64_t sum = 0, keep = 0;
    for (int r = 0; r < reps; r++) {
        if (threadIdx.x == 0) stored_at = 0;
        __syncthreads();
        if (mode <= 2 && warp == 0) {
            const uint64_t t0 = now_ns();
            uint64_t v;
            if (mode == 0) v = load_gpu(dev + lane);
            else if (mode == 1) v = load_sys(dev + lane);
            else asm volatile("ld.acquire.gpu.u64 %0, [%1];" : "=l"(v) : "l"(dev + lane) : "memory");
            keep += __shfl_sync(0xffffffffu, v, 0);
            sum += now_ns() - t0;
        } else if (mode >= 3 && warp == 0 && lane == 0) {
            stored_at = now_ns();
            if (mode == 3) asm volatile("st.relaxed.gpu.u64 [%0], %1;" ::"l"(dev + 64), "l"((uint64_t)r + 1) : "memory");
            else store_sys(dev + 64, (uint64_t)r + 1);
        } else if (mode >= 3 && warp == 1) {
            while ((mode == 3 ? load_gpu(dev + 64) : load_sys(dev + 64)) != (uint64_t)r + 1) {
            }
            sum += since_stored(stored_at);
        }
        __syncthreads();
        settle();
    }
    report(out, sum, keep, reps, (mode >= 3 ? 32 : 0));
}

/* Part 6. Warp 0 of block 0 loads host lines A; `delay` ns later the
 * second warp -- warp 1 of block 0 (blocks 1) or warp 0 of block 1 (blocks
 * 2) -- loads host lines B, `offset` words on. out[0], out[1]: mean ns from
 * the first load's issue to each value, on the first warp's clock (the
 * global timer is one for the whole GPU). */
__global__ void two_warps_host_loads(const uint64_t *host, uint64_t *out, int delay, int offset, int reps) {
    __shared__ volatile uint64_t shared_t0;
    __shared__ volatile int shared_round;
    const int lane = threadIdx.x % 32;
    const int second = gridDim.x > 1 ? blockIdx.x == 1 && threadIdx.x < 32 : threadIdx.x >= 32 && threadIdx.x < 64;
    const int first = blockIdx.x == 0 && threadIdx.x < 32;
    uint64_t *t0_word = out + 8, *round_word = out + 9, *back_word = out + 10;
    uint64_t sum_first = 0, sum_second = 0, keep = 0;
    if (threadIdx.x == 0) shared_round = -1;
    __syncthreads();
    for (int r = 0; r < reps; r++) {
        if (first) {
            const uint64_t t0 = now_ns();
            if (lane == 0) {
                if (gridDim.x > 1) {
                    asm volatile("st.relaxed.gpu.u64 [%0], %1;" ::"l"(t0_word), "l"(t0) : "memory");
                    asm volatile("st.release.gpu.u64 [%0], %1;" ::"l"(round_word), "l"((uint64_t)r + 1) : "memory");
                } else {
                    shared_t0 = t0;
                    shared_round = r;
                }
            }
            const uint64_t a = load_sys(host + lane);
            keep += __shfl_sync(0xffffffffu, a, 0);
            sum_first += now_ns() - t0;
            /* the second warp's value, then a pause for every load to land */
            if (gridDim.x > 1) {
                uint64_t v;
                do asm volatile("ld.acquire.gpu.u64 %0, [%1];" : "=l"(v) : "l"(back_word) : "memory");
                while (v >> 32 != (uint64_t)r + 1);
                sum_second += (v & 0xffffffffu);
            }
        } else if (second) {
            uint64_t t0;
            if (gridDim.x > 1) {
                uint64_t v;
                do asm volatile("ld.acquire.gpu.u64 %0, [%1];" : "=l"(v) : "l"(round_word) : "memory");
                while (v != (uint64_t)r + 1);
                asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(t0) : "l"(t0_word) : "memory");
            } else {
                while (shared_round != r) {
                }
                t0 = shared_t0;
            }
            uint64_t t;
            do t = now_ns(); while (t - t0 < (uint64_t)delay);
            const uint64_t b = load_sys(host + offset + lane);
            keep += __shfl_sync(0xffffffffu, b, 0);
            const uint64_t back = now_ns() - t0;
            if (gridDim.x > 1) {
                if (lane == 0)
                    asm volatile("st.release.gpu.u64 [%0], %1;" ::"l"(back_word), "l"(((uint64_t)r + 1) << 32 | back) : "memory");
            } else {
                sum_second += back;
            }
        }
        if (gridDim.x == 1) __syncthreads();
        settle();
    }
    if (first && lane == 0) {
        out[0] = sum_first / reps;
        if (gridDim.x > 1) out[1] = sum_second / reps;
        out[2] = keep;
    }
    if (gridDim.x == 1 && second && lane == 0) out[1] = sum_second / reps;
}

#define CHECK(call)                                                                            \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_));                        \
            return 1;                                                                          \
        }                                                                                      \
    } while (0)

int main(int argc, char **argv) {
    const char *commit = argc > 1 ? argv[1] : "unknown";
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    char date[64];
    const time_t t = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&t));
    printf("# host_reads on %s, %s, commit %s\n", prop.name, date, commit);

    uint64_t *host = NULL, *host_dev = NULL, *dev = NULL, *out = NULL;
    CHECK(cudaHostAlloc((void **)&host, 1 << 16, cudaHostAllocMapped));
    CHECK(cudaHostGetDevicePointer((void **)&host_dev, host, 0));
    CHECK(cudaMalloc((void **)&dev, 1 << 16));
    CHECK(cudaMallocManaged((void **)&out, 128)); /* part 6 uses words 8-10 to hand over between blocks */
    const int reps = 2000;

    printf("\n1. two warp-wide loads of host memory, the second `delay` ns after the first\n");
    printf("%-28s %8s %14s %14s %12s\n", "second load", "delay", "first back", "second back", "gap");
    const int offsets[] = {0, 8, 64, 512}; /* words: same bytes, overlapping lines, the next 512 bytes, 4 KiB on */
    const int delays[] = {0, 200, 400, 800};
    for (int o : offsets) {
        for (int d : delays) {
            two_host_loads<<<1, 32>>>(host_dev, out, d, o, reps);
            CHECK(cudaDeviceSynchronize());
            printf("%4d words on %-15s %6d ns %11llu ns %11llu ns %9lld ns\n", o, o == 0 ? "(same lines)" : o < 32 ? "(overlapping)" : "(other lines)", d,
                   (unsigned long long)out[0], (unsigned long long)out[1], (long long)out[1] - (long long)out[0]);
        }
    }

    printf("\n2. a warp-wide load of device memory (L2): issue to value\n");
    const char *names[] = {"alone", "behind a host load in flight", "behind three host stores",
                           "fence.acq_rel.gpu first, behind a host load"};
    for (int m = 0; m < 4; m++) {
        device_load_behind<<<1, 32>>>(host_dev, host_dev + 1024, dev, out, m, reps / 4);
        CHECK(cudaDeviceSynchronize());
        printf("%-46s %6llu ns\n", names[m], (unsigned long long)out[0]);
    }
    printf("\n3. other loads while warp 0 has a load of host memory in flight: issue to value\n");
    const char *others[] = {"warp 0's shared-memory load, alone", "warp 0's shared-memory load, behind its host load",
                            "warp 1's load of device memory"};
    for (int m = 0; m < 3; m++) {
        other_loads_behind<<<1, 64>>>(host_dev, dev, out, m, reps / 4);
        CHECK(cudaDeviceSynchronize());
        printf("%-52s %6llu ns\n", others[m], (unsigned long long)out[0]);
    }
    printf("\n4. a warp's other work while it has a load of host memory in flight\n");
    const char *ops[] = {"a shuffle, alone (issue to value)", "a shuffle, behind the host load", "a ballot, behind the host load",
                         "a device store, alone (store to warp 1 seeing it)", "a device store, behind the host load"};
    for (int m = 0; m < 5; m++) {
        warp_ops_behind<<<1, 64>>>(host_dev, dev + 512, out, m, reps / 4);
        CHECK(cudaDeviceSynchronize());
        printf("%-52s %6llu ns\n", ops[m], (unsigned long long)out[0]);
    }
    printf("\n5. device memory by scope\n");
    const char *scopes[] = {"a relaxed load, GPU scope", "a relaxed load, system scope", "an acquire load, GPU scope",
                            "a store seen by another warp, GPU scope", "a store seen by another warp, system scope"};
    for (int m = 0; m < 5; m++) {
        device_scopes<<<1, 64>>>(dev + 1024, out, m, reps / 4);
        CHECK(cudaDeviceSynchronize());
        printf("%-52s %6llu ns\n", scopes[m], (unsigned long long)out[0]);
    }
    printf("\n6. two warps, each one load of its own host lines, the second `delay` ns after the first\n");
    printf("%-34s %8s %14s %14s %12s\n", "second warp", "delay", "first back", "second back", "gap");
    for (int blocks = 1; blocks <= 2; blocks++) {
        for (int d : delays) {
            out[9] = out[10] = 0;
            two_warps_host_loads<<<blocks, blocks == 1 ? 64 : 32>>>(host_dev, out, d, 512, reps / 4);
            CHECK(cudaDeviceSynchronize());
            printf("%-34s %6d ns %11llu ns %11llu ns %9lld ns\n", blocks == 1 ? "warp 1 of the same block" : "warp 0 of another block", d,
                   (unsigned long long)out[0], (unsigned long long)out[1], (long long)out[1] - (long long)out[0]);
        }
    }
    return 0;
}
