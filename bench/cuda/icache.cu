/* How fast one warp runs straight-line code it has not run lately: the
 * persistent simulation's relay runs a long path once per command after
 * microseconds of polling (docs/simulations.md, session 20). A block of
 * N straight-line instructions (8 independent chains, so that issue, not
 * latency, bounds it when the code is cached) is run R times in a row by
 * one warp, then once more after the warp has polled a small loop for
 * `idle` ns. Not part of the CMake build: scripts/device-icache.sh builds
 * it with nvcc on a machine with a GPU and runs it. Prints ns per
 * instruction: cold (the kernel's first run), cached (again at once), and
 * after idling. */
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <ctime>

#include "ptx_memory.cuh"

/* STEPS x 8 chains x 2 instructions (a LOP3 and an IADD3 each). */
template <int STEPS>
__device__ __noinline__ uint32_t straight_line(uint32_t seed, uint32_t a, uint32_t b) {
    uint32_t x0 = seed, x1 = seed + 1, x2 = seed + 2, x3 = seed + 3, x4 = seed + 4, x5 = seed + 5, x6 = seed + 6,
             x7 = seed + 7;
#pragma unroll
    for (int k = 0; k < STEPS; k++) {
        x0 = (x0 ^ a) + b;
        x1 = (x1 ^ b) + a;
        x2 = (x2 ^ a) + k;
        x3 = (x3 ^ b) + k;
        x4 = (x4 ^ (a + k)) + b;
        x5 = (x5 ^ (b + k)) + a;
        x6 = (x6 ^ a) + (b ^ k);
        x7 = (x7 ^ b) + (a ^ k);
    }
    return x0 ^ x1 ^ x2 ^ x3 ^ x4 ^ x5 ^ x6 ^ x7;
}

/* out[0]: first run, out[1]: mean of the next `reps`, out[2]: mean of
 * runs each after `idle` ns of polling (ns each). */
template <int STEPS>
__global__ void run_block(uint64_t *out, uint32_t a, uint32_t b, int reps, int idle) {
    if (threadIdx.x >= 32) return;
    uint32_t keep = 0;
    uint64_t t0 = now_ns();
    keep += straight_line<STEPS>(keep, a, b);
    uint64_t first = now_ns() - t0;
    uint64_t warm = 0, after = 0;
    for (int r = 0; r < reps; r++) {
        t0 = now_ns();
        keep += straight_line<STEPS>(keep, a, b);
        warm += now_ns() - t0;
    }
    for (int r = 0; r < reps; r++) {
        const uint64_t t1 = now_ns();
        while (now_ns() - t1 < (uint64_t)idle) {
        }
        t0 = now_ns();
        keep += straight_line<STEPS>(keep, a, b);
        after += now_ns() - t0;
    }
    if (threadIdx.x == 0) {
        out[0] = first;
        out[1] = warm / reps;
        out[2] = after / reps;
        out[3] = keep;
    }
}

template <int STEPS>
static int measure(uint64_t *out, int idle) {
    run_block<STEPS><<<1, 32>>>(out, 0x9e3779b9u, 0x7f4a7c15u, 50, idle);
    if (cudaDeviceSynchronize() != cudaSuccess) return 1;
    const double n = STEPS * 16.0;
    printf("%7.0f instructions (%4.0f KiB)  idle %5d ns:  first %7.3f  again %7.3f  after idling %7.3f ns/instruction\n", n,
           n * 16 / 1024, idle, out[0] / n, out[1] / n, out[2] / n);
    return 0;
}

int main(int argc, char **argv) {
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return 77;
    char date[64];
    const time_t t = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&t));
    printf("# icache on %s, %s, commit %s\n", prop.name, date, argc > 1 ? argv[1] : "unknown");
    uint64_t *out = NULL;
    if (cudaMallocManaged((void **)&out, 64) != cudaSuccess) return 1;
    for (int idle : {0, 5000}) {
        if (measure<16>(out, idle) || measure<32>(out, idle) || measure<64>(out, idle) || measure<128>(out, idle) ||
            measure<256>(out, idle) || measure<512>(out, idle) || measure<1024>(out, idle))
            return 1;
    }
    return 0;
}
