/* Whether a multiprocessor reaches some lines of the L2 sooner than others:
 * the persistent simulation's bands poll copies of the log in the L2, and
 * a GPU's L2 is split in partitions, a line's home in one of them by its
 * address (docs/simulations.md, session 30). Each block (one a
 * multiprocessor, by turns so that none disturbs another) times a strong
 * load (as a poll is: relaxed, sys scope, past the L1) of each of LINES
 * 128-byte lines, the least of REPS tries. Prints, per multiprocessor, the
 * lines' latency spread, and how the lines split in "near" and "far" for
 * one multiprocessor against another. Not part of the CMake build:
 * scripts/device-l2-lines.sh builds it with nvcc and runs it. */
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "ptx_memory.cuh"

constexpr int LINES = 256;
constexpr int REPS = 8;

__device__ __forceinline__ uint64_t clock_now() {
    uint64_t t;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t));
    return t;
}
__device__ __forceinline__ uint32_t smid() {
    uint32_t s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    return s;
}

/* lat[block][line]: cycles a load, the least over REPS chains of CHAIN
 * dependent loads of the line (each address takes the last value, 0), so
 * that the clock's read after the chain waits for all but the last. */
constexpr int CHAIN = 16;
__global__ void time_lines(const uint64_t *lines, volatile int *turn, uint32_t *lat, uint32_t *sm) {
    if (threadIdx.x != 0) return;
    const int b = blockIdx.x;
    while (*turn != b) {
    }
    __threadfence();
    sm[b] = smid();
    uint64_t dep = 0;
    for (int l = 0; l < LINES; l++) {
        uint64_t best = ~0ull;
        for (int r = 0; r < REPS; r++) {
            const uint64_t t0 = clock_now();
            for (int k = 0; k < CHAIN; k++) dep = load_sys((const volatile uint64_t *)(lines + (size_t)l * 16 + (dep & 1)));
            const uint64_t t1 = clock_now();
            best = t1 - t0 < best ? t1 - t0 : best;
        }
        lat[(size_t)b * LINES + l] = (uint32_t)(best / (CHAIN - 1)) + (uint32_t)(dep & 1);
    }
    __threadfence();
    *turn = b + 1;
}

int main(int argc, char **argv) {
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    const int blocks = p.multiProcessorCount;
    uint64_t *lines;
    int *turn;
    uint32_t *lat, *sm;
    cudaMalloc(&lines, (size_t)LINES * 128);
    cudaMemset(lines, 0, (size_t)LINES * 128);
    cudaMalloc(&turn, sizeof(int));
    cudaMemset(turn, 0, sizeof(int));
    cudaMalloc(&lat, (size_t)blocks * LINES * 4);
    cudaMalloc(&sm, (size_t)blocks * 4);
    /* One block a multiprocessor: more shared memory than two may have. */
    const size_t smem = p.sharedMemPerMultiprocessor / 2 + 1024;
    cudaFuncSetAttribute(time_lines, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    time_lines<<<blocks, 32, smem>>>(lines, turn, lat, sm);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        fprintf(stderr, "l2_lines: %s\n", cudaGetErrorString(e));
        return 1;
    }
    std::vector<uint32_t> h((size_t)blocks * LINES), hs(blocks);
    cudaMemcpy(h.data(), lat, h.size() * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(hs.data(), sm, hs.size() * 4, cudaMemcpyDeviceToHost);
    int khz = 0;
    cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0);
    printf("l2_lines: %s, %d SMs, clock %d kHz, commit %s\n", p.name, blocks, khz, argc > 1 ? argv[1] : "?");
    /* Per block: the lines sorted; near = below the midpoint of min and max. */
    std::vector<std::vector<int>> near(blocks, std::vector<int>(LINES));
    for (int b = 0; b < blocks; b++) {
        std::vector<uint32_t> v(h.begin() + (size_t)b * LINES, h.begin() + (size_t)(b + 1) * LINES);
        std::vector<uint32_t> s = v;
        std::sort(s.begin(), s.end());
        const uint32_t mid = (s.front() + s.back()) / 2;
        int n_near = 0;
        double sum_near = 0, sum_far = 0;
        for (int l = 0; l < LINES; l++) {
            near[b][l] = v[l] < mid;
            if (near[b][l]) {
                n_near++;
                sum_near += v[l];
            } else {
                sum_far += v[l];
            }
        }
        if (b < 8 || b % 16 == 0)
            printf("block %3d sm %3u: min %u p25 %u p50 %u p75 %u max %u cycles; near %d lines (mean %.0f), far %d (mean %.0f)\n",
                   b, hs[b], s.front(), s[LINES / 4], s[LINES / 2], s[3 * LINES / 4], s.back(), n_near,
                   n_near ? sum_near / n_near : 0.0, LINES - n_near, LINES - n_near ? sum_far / (LINES - n_near) : 0.0);
    }
    /* Do two blocks agree on which lines are near? Agreement with block 0 per block. */
    int same = 0, opposite = 0, mixed = 0;
    for (int b = 1; b < blocks; b++) {
        int agree = 0;
        for (int l = 0; l < LINES; l++) agree += near[b][l] == near[0][l];
        if (agree > LINES * 9 / 10) same++;
        else if (agree < LINES / 10) opposite++;
        else mixed++;
    }
    printf("against block 0's near lines: %d blocks agree (>90%%), %d the opposite (<10%%), %d neither\n", same,
           opposite, mixed);
    return 0;
}
