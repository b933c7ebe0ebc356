/* A host thread and one GPU warp play ping-pong through host-mapped
 * memory, the warp polling for the host's word in one of three ways, so
 * that the ways a persistent kernel's relay could read the host's ring can
 * be compared on their own (docs/simulations.md, session 19):
 *   single  one read in flight, the next issued when it is back (the
 *           relay's plain read);
 *   copies  the host writes its word to K copies on separate lines and the
 *           warp keeps K reads in flight, one per copy, issued `stagger` ns
 *           apart (a read of lines whose read is in flight would wait for
 *           it; bench/cuda/host_reads.cu).
 * The host writes word k, waits for the warp's reply k, and writes k + 1
 * at once or after `think` ns (the host's turn between an answer and its
 * next command). Prints the round trip's p50 and p99 per way. Not part of
 * the CMake build: scripts/device-host-poll.sh builds and runs it. */
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <vector>

#include "ptx_memory.cuh"

enum { LINE_WORDS = 64 }; /* copies 512 bytes apart: separate lines */

/* Copy c of the host's word is host[c * LINE_WORDS]; the reply is reply[0].
 * The warp answers words 1 .. rounds, then returns. */
template <int K>
__global__ void poller(const uint64_t *host, uint64_t *reply, int stagger, int rounds) {
    if (threadIdx.x >= 32) return;
    uint64_t v[K];
    uint64_t want = 1;
    for (int c = 0; c < K; c++) {
        const uint64_t t0 = now_ns();
        v[c] = load_sys(host + c * LINE_WORDS);
        if (c + 1 < K)
            while (now_ns() - t0 < (uint64_t)stagger) {
            }
    }
    while (want <= (uint64_t)rounds) {
#pragma unroll
        for (int c = 0; c < K; c++) {
            const uint64_t x = __shfl_sync(0xffffffffu, v[c], 0); /* waits for read c (and those before it) */
            const uint64_t issued = now_ns();
            if (x >= want) {
                if (threadIdx.x == 0) store_sys(reply, x);
                want = x + 1;
            }
            v[c] = load_sys(host + c * LINE_WORDS); /* the next read of this copy: its last one is back */
            if (K > 1)
                while (now_ns() - issued < (uint64_t)stagger) {
                }
        }
    }
}

static double pct(std::vector<double> &v, double p) {
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, (size_t)(p * (double)v.size()))];
}

static void spin_ns(long ns) {
    const auto t0 = std::chrono::steady_clock::now();
    while (std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count() < ns) {
    }
}

template <int K>
static int run(const char *name, uint64_t *host, uint64_t *host_dev, volatile uint64_t *reply, uint64_t *reply_dev,
               int stagger, long think, int rounds) {
    for (int c = 0; c < K; c++) host[c * LINE_WORDS] = 0;
    *reply = 0;
    poller<K><<<1, 32>>>(host_dev, reply_dev, stagger, rounds);
    std::vector<double> rtt;
    rtt.reserve(rounds);
    for (uint64_t k = 1; k <= (uint64_t)rounds; k++) {
        if (think > 0) spin_ns(think);
        const auto t0 = std::chrono::steady_clock::now();
        for (int c = 0; c < K; c++) __atomic_store_n(&host[c * LINE_WORDS], k, __ATOMIC_RELEASE);
        while (__atomic_load_n(reply, __ATOMIC_ACQUIRE) < k) {
            if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(1)) {
                fprintf(stderr, "host_poll: %s, copies %d: no reply to word %llu within a second\n", name, K,
                        (unsigned long long)k);
                return 1; /* the process ends with the warp still polling; its exit tears the context down */
            }
        }
        rtt.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    if (cudaDeviceSynchronize() != cudaSuccess) return 1;
    const std::vector<double> keep(rtt.begin() + rounds / 10, rtt.end()); /* the first tenth warms up */
    std::vector<double> r = keep;
    printf("%-8s copies %d  stagger %4d ns  host turn %4ld ns:  p50 %5.2f us  p99 %5.2f us\n", name, K, stagger, think,
           pct(r, 0.5), pct(r, 0.99));
    return 0;
}

int main(int argc, char **argv) {
    const char *commit = argc > 1 ? argv[1] : "unknown";
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
        fprintf(stderr, "host_poll: no CUDA device\n");
        return 77;
    }
    char date[64];
    const time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    printf("# host_poll on %s, %s, commit %s\n", prop.name, date, commit);
    uint64_t *host = NULL, *host_dev = NULL, *reply = NULL, *reply_dev = NULL;
    if (cudaHostAlloc((void **)&host, 4 * LINE_WORDS * sizeof(uint64_t), cudaHostAllocMapped) != cudaSuccess ||
        cudaHostAlloc((void **)&reply, 64, cudaHostAllocMapped) != cudaSuccess ||
        cudaHostGetDevicePointer((void **)&host_dev, host, 0) != cudaSuccess ||
        cudaHostGetDevicePointer((void **)&reply_dev, reply, 0) != cudaSuccess) {
        fprintf(stderr, "host_poll: no mapped host memory\n");
        return 1;
    }
    const int rounds = 20000;
    int bad = 0;
    for (long think : {0L, 300L, 1000L}) {
        bad |= run<1>("single", host, host_dev, reply, reply_dev, 0, think, rounds);
        for (int stagger : {300, 650})
            if (!bad) bad |= run<2>("copies", host, host_dev, reply, reply_dev, stagger, think, rounds);
        if (!bad) bad |= run<4>("copies", host, host_dev, reply, reply_dev, 325, think, rounds);
        if (bad) break;
    }
    return bad;
}
