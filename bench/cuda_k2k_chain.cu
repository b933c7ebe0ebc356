// The floor under issue 14's K2K hop, built up one library piece at a time.
//
// A chain of one-warp forwarders (one block each, on different SMs) passes
// tagged messages through device memory as facts/h100.md's "Kernel to
// kernel" floor does: each 8-byte word is {tag << 32 | 4 payload bytes}, the
// tag the slot's lap + 1, loaded and stored with relaxed .gpu accesses, no
// fences. The host feeds the first stage through a host-mapped ring and
// takes the last stage's output from another, one message at a time, and
// times each round trip (as `rk bench k2k` does): per hop = (p50 of the
// 4-stage chain - p50 of one stage alone) / 3. A third figure needs no host:
// one message circling four stages (stage 3 feeds stage 0), the device's
// own hop, p50 of a lap (globaltimer) / 4.
//
// Each variant adds pieces of src/device/cuda/channel_solo.cu's lean loop
// (V_* bits below); every variant is its own template instance, so one
// piece's code never slows another's. Not the library: no handler
// compiler, no ports table, no terminate or drain rules; a stage forwards
// what it finds, marked as examples/handlers/pipeline_handler.c marks it.
//   nvcc -O3 -arch=sm_90 -o cuda_k2k_chain bench/cuda_k2k_chain.cu
//   taskset -c 2 ./cuda_k2k_chain [PROBES [ROUNDS [VARIANTS]]]
// VARIANTS: the rows to run, as their numbers separated by commas (e.g. 0,2,13;
// default all). Measured on the H100 in docs/device-runs.md (session 15, hop-1 to hop-3;
// hop-1 and hop-2 ran a build that branched around each load).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <time.h>
#include <cuda_runtime.h>

typedef unsigned long long u64;
typedef unsigned u32;

enum : u32 {
    V_SLOT16 = 1u,    // the bench's 64-byte message: 16 tagged words (128 B) a slot, not 8 (64 B, 32 payload bytes)
    V_WINDOW = 2u,    // a lane loads a whole slot, 4 slots a poll (the lean loop while messages come one at a time)
    V_CTRL = 4u,      // control words loaded beside every poll (5 of the kernel's, the output's CLOSED) and checked
    V_BOOK = 8u,      // after a pass: TAKEN / DELIVERED stored, the next plan (the output's TAKEN loaded), stats stored
    V_CREDIT = 16u,   // on the message's path: the output's TAKEN loaded before the emit (a dependent L2 load)
    V_HANDLER = 32u,  // the message copied into a handler's struct, marked, emitted through slots kept in shared
    V_FINISH = 64u,   // after the handler: __syncwarp, emitted flags cleared, HEAD stored (rk_emit_finish)
    V_CTLWARP = 128u, // a control warp per stage polling host-mapped control words all the time (rk_control)
    V_SEPARATE = 256u, // each stage its own kernel launch on its own stream (host side only)
    V_COAL = 512u,    // instead of V_WINDOW: 4 slots a poll, a 16-byte unit a lane (one coalesced load), each
                      // message gathered into one lane by shuffles for its handler and scattered back for one
                      // coalesced store
    V_LANESTORE = 1024u, // with V_COAL: the gathered message stored by its lane (8 stores of 16 bytes)
    V_COALSTORE = 2048u  // with V_WINDOW: the message scattered by shuffles for one coalesced store
};

enum { CAP = 4096, LOG2CAP = 12, WINDOW = 4, MAXW = 16, STAGES = 4, CTL_WORDS = 48 };
enum { TAKEN = 16, DELIVERED = 17, CLOSED = 32, HEAD = 0 };
static const u32 STOP = 0xffffffffu; // a message's seq that ends the run: forwarded, then the stage leaves

struct Stage {
    u64 *in, *out;         // rings: input (host-mapped for the first stage), output
    u64 *in_ctl, *out_ctl; // a channel's control words (0 for a host ring)
    u32 in_host, out_host;
};
struct Args {
    Stage st[STAGES];
    u64 *dctl;           // per stage 32 device control words (all 0)
    u64 *hctl;           // host-mapped control words (the control warp's)
    volatile u64 *stop;  // host-mapped: 1 stops every loop (a failed run)
    u64 *stats;          // per stage: handled
    u64 *times;          // ring mode: stage 0's globaltimer at each lap
    u32 *smid;           // per stage: the SM it ran on
    u64 laps;            // ring mode: laps before STOP
    int ring;            // 1: stage 3 feeds stage 0, no host
    int pin;             // 1: a block a SM over the whole GPU; the block on SM sms[b] runs stage b, the rest leave
    int nst;             // stages (pinned runs)
    u32 sms[STAGES];
};

// Predicated, branch-free: host-mapped words volatile (over the bus), device words relaxed .gpu; every
// load of a poll in flight at once, as in the library. (hop-1's build branched around each load: its
// "a slot a lane" rows took 11.9 us for one stage, as if its 8 bus reads ran one after another.)
__device__ __forceinline__ void ld2(const u64 *p, bool host, bool on, u64 &a, u64 &b) {
    a = b = 0;
    asm volatile("{\n\t.reg .pred pon, ph, pd;\n\tsetp.ne.u32 pon, %4, 0;\n\t"
                 "setp.ne.and.u32 ph, %3, 0, pon;\n\tsetp.eq.and.u32 pd, %3, 0, pon;\n\t"
                 "@ph ld.volatile.global.v2.u64 {%0, %1}, [%2];\n\t"
                 "@pd ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];\n\t}"
                 : "+l"(a), "+l"(b)
                 : "l"(p), "r"((u32)host), "r"((u32)on));
}
__device__ __forceinline__ void st2(u64 *p, bool host, u64 a, u64 b) {
    asm volatile("{\n\t.reg .pred ph;\n\tsetp.ne.u32 ph, %3, 0;\n\t"
                 "@ph st.volatile.global.v2.u64 [%0], {%1, %2};\n\t"
                 "@!ph st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};\n\t}" ::"l"(p),
                 "l"(a), "l"(b), "r"((u32)host)
                 : "memory");
}
__device__ __forceinline__ u64 ld1(const u64 *p) {
    u64 v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p));
    return v;
}
__device__ __forceinline__ void st1(u64 *p, u64 v) {
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ u64 gtimer() {
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
__device__ __forceinline__ u32 lo32(u64 w) { return (u32)w; }
__device__ __forceinline__ u64 tagged(u64 tag_hi, u32 v) { return tag_hi | v; }

struct Shared {
    u64 *slot[32]; // V_HANDLER: each lane's output slot for the next pass
    u64 hi[32];
    unsigned char emitted[32];
    u32 on;
    u64 room;      // V_BOOK: the plan's room
    volatile u32 done;
};

// The pipeline handler's mark on a message of 32-bit words (seq, hops, check, ...).
__device__ __forceinline__ void mark(u32 *m) {
    m[1] += 1u;
    m[2] = m[2] * 31u + m[1];
}

template <u32 F> __device__ void worker(const Args &a, int b, u32 lane, Shared &sh) {
    constexpr int W = (F & V_SLOT16) ? 16 : 8, U = W / 2;    // words, 16-byte units a slot
    constexpr int NU = (F & V_WINDOW) ? U : 1;               // units a lane holds
    constexpr bool SLOTLANE = (F & (V_WINDOW | V_COAL)) != 0; // a message's handler runs in one lane
    static_assert(!((F & V_WINDOW) && (F & V_COAL)), "one poll layout");
    constexpr bool COALSTORE = (F & V_COAL) ? !(F & V_LANESTORE) : (F & V_WINDOW) && (F & V_COALSTORE) && !(F & V_HANDLER);
    static_assert(!(F & V_HANDLER) || (F & V_WINDOW), "the handler runs on a lane that holds its whole message");
    const Stage s = a.st[b];
    const u64 mask = CAP - 1;
    const bool ring0 = a.ring && b == 0;
    u64 tail = 0, head = 0, handled = 0, laps = 0;
    u32 polls = 0;
    if (lane == 0) a.smid[b] = [] { u32 id; asm volatile("mov.u32 %0, %%smid;" : "=r"(id)); return id; }();
    if (ring0) { // the circling message, seq 0
        if (lane < U) st2(s.out + 2 * lane, false, 1ull << 32, 1ull << 32);
        head = 1;
        if (lane == 0) a.times[0] = gtimer();
    }
    const u64 *cw = 0;
    if (F & V_CTRL) {
        if (lane < 5) cw = a.dctl + 32 * b + lane;
        else if (lane == 8 && !s.out_host) cw = s.out_ctl + CLOSED;
    }
    if (F & V_HANDLER) {
        sh.slot[lane] = s.out + ((head + lane) & mask) * W;
        sh.hi[lane] = (u64)((u32)((head + lane) >> LOG2CAP) + 1u) << 32;
        sh.emitted[lane] = 0;
        if (lane == 0) sh.on = 1;
        __syncwarp();
    }
    for (;;) {
        u64 x[NU], y[NU];
        bool mine;
        u64 pos;
        if (F & V_WINDOW) {
            mine = lane < WINDOW;
            pos = tail + lane;
            const u64 *p = s.in + (pos & mask) * W;
#pragma unroll
            for (int u = 0; u < NU; u++) {
                x[u] = y[u] = 0;
                ld2(p + 2 * u, s.in_host, mine, x[u], y[u]);
            }
        } else if (F & V_COAL) {
            mine = lane / U < WINDOW;
            pos = tail + lane / U;
            x[0] = y[0] = 0;
            ld2(s.in + (pos & mask) * W + 2 * (lane % U), s.in_host, mine, x[0], y[0]);
        } else {
            mine = lane < U;
            pos = tail;
            x[0] = y[0] = 0;
            ld2(s.in + (pos & mask) * W + 2 * lane, s.in_host, mine, x[0], y[0]);
        }
        u64 cv = 0;
        if (F & V_CTRL) cv = cw ? ld1(cw) : 0;
        const u32 tag = (u32)(pos >> LOG2CAP) + 1u;
        u32 stale = 0;
#pragma unroll
        for (int u = 0; u < NU; u++) stale |= ((u32)(x[u] >> 32) ^ tag) | ((u32)(y[u] >> 32) ^ tag);
        const u32 ok = __ballot_sync(0xffffffffu, mine && !stale);
        if (F & V_CTRL)
            if (__any_sync(0xffffffffu, cv != 0)) return; // never: every control word stays 0
        u32 n;
        if (F & V_WINDOW) {
            n = __popc(ok == 0xffffffffu ? ok : ((1u << (__ffs(~ok) - 1)) - 1u));
        } else if (F & V_COAL) {
            n = 0;
            while (n < WINDOW && ((ok >> (n * U)) & ((1u << U) - 1u)) == ((1u << U) - 1u)) n++;
        } else
            n = (ok & ((1u << U) - 1u)) == ((1u << U) - 1u) ? 1u : 0u;
        if (!n) {
            if ((++polls & 1023u) == 0 && *a.stop) return;
            continue;
        }
        polls = 0;
        // The mark, ring mode's lap and STOP (the message's seq word).
        bool stop = false;
        u32 m[MAXW];
        const bool has = SLOTLANE ? lane < n : lane < U;
        if (SLOTLANE) {
            if (F & V_COAL) { // lane l gathers message l from lanes l * U .. l * U + U - 1
#pragma unroll
                for (int u = 0; u < U; u++) {
                    const int from = (lane * U + u) & 31;
                    m[2 * u] = __shfl_sync(0xffffffffu, lo32(x[0]), from);
                    m[2 * u + 1] = __shfl_sync(0xffffffffu, lo32(y[0]), from);
                }
            } else {
#pragma unroll
                for (int u = 0; u < NU; u++) {
                    m[2 * u] = lo32(x[u]);
                    m[2 * u + 1] = lo32(y[u]);
                }
            }
            if (has && m[0] == STOP) stop = true;
            if (has && m[0] != STOP) {
                mark(m);
                if (ring0) {
                    laps++;
                    if (lane == 0) a.times[laps] = gtimer();
                    m[0] = laps < a.laps ? (u32)laps : STOP;
                    m[1] = m[2] = 0;
                }
            }
        } else {
            // Lane u holds words 2u, 2u + 1: seq in lane 0's x, hops in its y, check in lane 1's x.
            const u32 seq = __shfl_sync(0xffffffffu, lo32(x[0]), 0);
            const u32 hops = __shfl_sync(0xffffffffu, lo32(y[0]), 0) + 1u;
            m[0] = lo32(x[0]);
            m[1] = lo32(y[0]);
            stop = seq == STOP;
            if (!stop) {
                if (lane == 0) m[1] = hops;
                if (lane == 1) m[0] = m[0] * 31u + hops;
                if (ring0) {
                    laps++;
                    if (lane == 0) a.times[laps] = gtimer();
                    if (lane == 0) m[0] = laps < a.laps ? (u32)laps : STOP;
                    if (lane == 0) m[1] = 0;
                    if (lane == 1) m[0] = 0;
                }
            }
        }
        stop = __any_sync(0xffffffffu, stop);
        const bool forward = !(ring0 && stop);
        if ((F & V_CREDIT) && !s.out_host) {
            u64 t = 0;
            if (lane == 0) t = ld1(s.out_ctl + TAKEN);
            t = __shfl_sync(0xffffffffu, t, 0);
            while (head + n - t > CAP) { // never in a latency run (one message in flight)
                if (lane == 0) t = ld1(s.out_ctl + TAKEN);
                t = __shfl_sync(0xffffffffu, t, 0);
            }
        }
        if (COALSTORE && forward) { // scattered back: lane j stores unit j % U of message j / U
            const u32 sl = lane / U, un = lane % U;
            u32 o0 = 0, o1 = 0;
#pragma unroll
            for (int u = 0; u < U; u++) {
                const u32 a0 = __shfl_sync(0xffffffffu, m[2 * u], sl), a1 = __shfl_sync(0xffffffffu, m[2 * u + 1], sl);
                if (un == (u32)u) o0 = a0, o1 = a1;
            }
            if (sl < n) {
                const u64 op = head + sl;
                const u64 hi = (u64)((u32)(op >> LOG2CAP) + 1u) << 32;
                st2(s.out + (op & mask) * W + 2 * un, s.out_host, tagged(hi, o0), tagged(hi, o1));
            }
        } else if (forward && has) {
            if (F & V_HANDLER) {
                // rk_lean_emit: the slot from shared, the emitted flag, then the stores.
                if (sh.on && !sh.emitted[lane]) {
                    sh.emitted[lane] = 1;
                    u64 *slot = sh.slot[lane];
                    const u64 hi = sh.hi[lane];
#pragma unroll
                    for (int u = 0; u < U; u++) st2(slot + 2 * u, s.out_host, tagged(hi, m[2 * u]), tagged(hi, m[2 * u + 1]));
                }
            } else if (SLOTLANE) {
                const u64 op = head + lane;
                const u64 hi = (u64)((u32)(op >> LOG2CAP) + 1u) << 32;
                u64 *slot = s.out + (op & mask) * W;
#pragma unroll
                for (int u = 0; u < U; u++) st2(slot + 2 * u, s.out_host, tagged(hi, m[2 * u]), tagged(hi, m[2 * u + 1]));
            } else {
                const u64 hi = (u64)((u32)(head >> LOG2CAP) + 1u) << 32;
                st2(s.out + (head & mask) * W + 2 * lane, s.out_host, tagged(hi, m[0]), tagged(hi, m[1]));
            }
        }
        if ((F & V_HANDLER) && !(F & V_FINISH)) sh.emitted[lane] = 0; // its own flag (V_FINISH: after a __syncwarp)
        if (F & V_FINISH) {
            __syncwarp();
            if (F & V_HANDLER) sh.emitted[lane] = 0;
            if (lane == 0 && !s.out_host) st1(s.out_ctl + HEAD, head + n);
            __syncwarp();
        }
        tail += n;
        head += n;
        handled += n;
        if (F & V_BOOK) {
            if (lane == 0) {
                if (!s.in_host) {
                    st1(s.in_ctl + TAKEN, tail);
                    st1(s.in_ctl + DELIVERED, tail);
                }
                const u64 t = s.out_host ? head : ld1(s.out_ctl + TAKEN);
                const u64 cr = ld1(a.dctl + 32 * b + 4);
                sh.room = CAP - (head - t) - cr;
                st1(a.stats + 8 * b, handled);
                st1(a.stats + 8 * b + 1, 0);
            }
            __syncwarp();
        }
        if (F & V_HANDLER) {
            sh.slot[lane] = s.out + ((head + lane) & mask) * W;
            sh.hi[lane] = (u64)((u32)((head + lane) >> LOG2CAP) + 1u) << 32;
            __syncwarp();
        }
        if (stop) break;
    }
    if (lane == 0) a.stats[8 * b + 2] = handled;
}

// rk_control's shape: one lane loads the host's control words (over the bus) and republishes them.
__device__ void control(const Args &a, int b, Shared &sh) {
    u64 seen = 0;
    for (u32 beat = 0; !sh.done; beat++) {
        const u64 v0 = *(volatile u64 *)(a.hctl + 0), v1 = *(volatile u64 *)(a.hctl + 8);
        const u64 v2 = *(volatile u64 *)(a.hctl + 32), v3 = *(volatile u64 *)(a.hctl + 48);
        const u64 v4 = *(volatile u64 *)(a.hctl + 49), v5 = *(volatile u64 *)(a.hctl + 50);
        const u64 v = v0 + v1 + v2 + v3 + v4 + v5;
        if (v != seen) st1(a.dctl + 32 * b + 16, seen = v);
        if (*a.stop) return;
        if ((beat & 63) == 0) *(volatile u64 *)(a.hctl + 64 + 8 * b) = beat;
    }
}

template <u32 F> __global__ void __launch_bounds__(64, 1) chain(Args a, int first) {
    __shared__ Shared sh;
    int b = first + blockIdx.x;
    if (a.pin) { // every block on its own SM (dynamic shared memory allows one): keep the stage of this SM
        u32 id;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
        b = -1;
        for (int i = 0; i < a.nst; i++)
            if (a.sms[i] == id) b = i;
        if (b < 0) return;
    }
    const u32 warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (threadIdx.x == 0) sh.done = 0;
    __syncthreads();
    if (warp == 0) {
        worker<F>(a, b, lane, sh);
        if (lane == 0) sh.done = 1;
    } else if (lane == 0) {
        control(a, b, sh);
    }
}

// ---- host ------------------------------------------------------------------

#define CK(x)                                                                                   \
    do {                                                                                        \
        cudaError_t e_ = (x);                                                                   \
        if (e_ != cudaSuccess) {                                                                \
            fprintf(stderr, "cuda_k2k_chain: %s: %s (line %d)\n", #x, cudaGetErrorString(e_), __LINE__); \
            exit(1);                                                                            \
        }                                                                                       \
    } while (0)

static double now_ns() {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}
static double pct(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, (size_t)(q * v.size()))];
}

struct Mem {
    u64 *hin, *hout, *hctl, *stop; // host-mapped
    u64 *d_hin, *d_hout, *d_hctl, *d_stop;
    u64 *ch[STAGES];               // device: CTL_WORDS control words, then the ring
    u64 *dctl, *stats, *times;
    u32 *smid;
    cudaStream_t st[STAGES];
};
typedef void (*launch_fn)(const Args &, int, int, cudaStream_t);
static int g_sms;           // the GPU's SMs
static size_t g_pin_smem;   // pinned runs: dynamic shared memory that leaves room for one block a SM
template <u32 F> static void launch(const Args &a, int first, int blocks, cudaStream_t s) {
    static bool sized = false;
    if (!sized) {
        CK(cudaFuncSetAttribute(chain<F>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)g_pin_smem));
        sized = true;
    }
    chain<F><<<blocks, (F & V_CTLWARP) ? 64 : 32, a.pin ? g_pin_smem : 0, s>>>(a, first);
}

static const u32 *g_pin; // the SMs of the stages (pinned runs), or null
static Args make_args(Mem &m, int stages, bool ring, u64 laps) {
    Args a;
    memset(&a, 0, sizeof a);
    a.nst = stages;
    if (g_pin) {
        a.pin = 1;
        for (int b = 0; b < STAGES; b++) a.sms[b] = g_pin[b];
    }
    for (int b = 0; b < stages; b++) {
        Stage &s = a.st[b];
        const int from = ring ? (b + stages - 1) % stages : b - 1; // channel index feeding stage b
        s.in_host = !ring && b == 0;
        s.out_host = !ring && b == stages - 1;
        s.in = s.in_host ? m.d_hin : m.ch[from] + CTL_WORDS;
        s.in_ctl = s.in_host ? 0 : m.ch[from];
        s.out = s.out_host ? m.d_hout : m.ch[b] + CTL_WORDS;
        s.out_ctl = s.out_host ? 0 : m.ch[b];
    }
    a.dctl = m.dctl;
    a.hctl = m.d_hctl;
    a.stop = m.d_stop;
    a.stats = m.stats;
    a.times = m.times;
    a.smid = m.smid;
    a.laps = laps;
    a.ring = ring;
    return a;
}

static void reset(Mem &m) {
    const size_t ring = (size_t)CAP * MAXW * 8;
    memset(m.hin, 0, ring);
    memset(m.hout, 0, ring);
    memset(m.hctl, 0, 4096);
    *m.stop = 0;
    for (int i = 0; i < STAGES; i++) CK(cudaMemset(m.ch[i], 0, CTL_WORDS * 8 + ring));
    CK(cudaMemset(m.dctl, 0, 32 * 8 * STAGES));
    CK(cudaMemset(m.stats, 0, 64 * STAGES));
    CK(cudaDeviceSynchronize());
}

static void start(Mem &m, launch_fn fn, u32 flags, const Args &a, int stages) {
    if (a.pin)
        fn(a, 0, g_sms, m.st[0]);
    else if (flags & V_SEPARATE)
        for (int b = 0; b < stages; b++) fn(a, b, 1, m.st[b]);
    else
        fn(a, 0, stages, m.st[0]);
    CK(cudaGetLastError());
}

// Waits for the stages' launches (timeout_ns; then the stop word ends them): true when they finished.
static bool finish(Mem &m, u32 flags, int stages, double timeout_ns) {
    const double t0 = now_ns();
    const int streams = (flags & V_SEPARATE) && !g_pin ? stages : 1;
    for (int i = 0; i < streams; i++)
        while (cudaStreamQuery(m.st[i]) == cudaErrorNotReady) {
            if (now_ns() - t0 > timeout_ns) {
                *m.stop = 1;
                CK(cudaDeviceSynchronize());
                return false;
            }
        }
    CK(cudaDeviceSynchronize());
    return true;
}

// One message at a time through `stages` stages from the host and back: p50 of the round trip (ns), or -1.
static double host_run(Mem &m, launch_fn fn, u32 flags, int stages, int probes, u32 *smids) {
    const int W = (flags & V_SLOT16) ? 16 : 8;
    reset(m);
    Args a = make_args(m, stages, false, 0);
    start(m, fn, flags, a, stages);
    std::vector<double> lat;
    const int warm = 1000;
    bool bad = false;
    volatile u64 *in = m.hin, *out = m.hout;
    for (int i = 0; i <= warm + probes && !bad; i++) {
        const bool last = i == warm + probes;
        const u64 slot = (u64)i & (CAP - 1), hi = (u64)((u32)(i >> LOG2CAP) + 1u) << 32;
        const u32 seq = last ? STOP : (u32)i;
        const double t0 = now_ns();
        for (int w = W - 1; w >= 0; w--) in[slot * W + w] = hi | (w == 0 ? seq : 0u);
        for (;;) {
            int good = 0;
            for (int w = 0; w < W; w++) good += (out[slot * W + w] >> 32) == (hi >> 32);
            if (good == W) break;
            if (now_ns() - t0 > 1e9) {
                fprintf(stderr, "cuda_k2k_chain: flags %#x, %d stages: message %d never came back\n", flags, stages, i);
                bad = true;
                break;
            }
        }
        const double t1 = now_ns();
        if (bad) break;
        const u32 got_seq = (u32)out[slot * W], hops = (u32)out[slot * W + 1];
        if (got_seq != seq || (!last && hops != (u32)stages)) {
            fprintf(stderr, "cuda_k2k_chain: flags %#x: message %d came back as seq %u hops %u\n", flags, i, got_seq, hops);
            bad = true;
        }
        if (i >= warm && !last) lat.push_back(t1 - t0);
    }
    if (bad) *m.stop = 1;
    if (!finish(m, flags, stages, 2e9)) bad = true;
    CK(cudaMemcpy(smids, m.smid, sizeof(u32) * stages, cudaMemcpyDeviceToHost));
    return bad ? -1 : pct(lat, 0.5);
}

// One message circling four stages, no host: p50 of a lap / 4 (ns), or -1.
static double ring_run(Mem &m, launch_fn fn, u32 flags, u64 laps) {
    reset(m);
    Args a = make_args(m, STAGES, true, laps);
    start(m, fn, flags, a, STAGES);
    if (!finish(m, flags, STAGES, 5e9)) {
        fprintf(stderr, "cuda_k2k_chain: flags %#x: the ring did not finish\n", flags);
        return -1;
    }
    std::vector<u64> t(laps + 1);
    CK(cudaMemcpy(t.data(), m.times, 8 * (laps + 1), cudaMemcpyDeviceToHost));
    std::vector<double> lap;
    for (u64 i = 100; i < laps; i++) lap.push_back((double)(t[i + 1] - t[i]) / STAGES);
    return pct(lap, 0.5);
}

struct Variant {
    const char *name;
    u32 flags;
    launch_fn fn;
};
#define VAR(name, f) {name, (f), launch<(f)>}
static const u32 LIB = V_SLOT16 | V_WINDOW | V_CTRL | V_BOOK | V_HANDLER | V_FINISH;
static const Variant variants[] = {
    VAR("floor (8 words, a unit a lane)", 0u),
    VAR("+ 16-word slot", V_SLOT16),
    VAR("+ window (a slot a lane, 4 a poll)", V_SLOT16 | V_WINDOW),
    VAR("+ control words beside the poll", V_SLOT16 | V_WINDOW | V_CTRL),
    VAR("+ bookkeeping after the pass", V_SLOT16 | V_WINDOW | V_CTRL | V_BOOK),
    VAR("+ handler, emit through shared", V_SLOT16 | V_WINDOW | V_CTRL | V_BOOK | V_HANDLER),
    VAR("+ finish (syncwarp, HEAD)", LIB),
    VAR("+ control warp", LIB | V_CTLWARP),
    VAR("+ a kernel a stage", LIB | V_CTLWARP | V_SEPARATE),
    VAR("+ credit load on the path", LIB | V_CTLWARP | V_SEPARATE | V_CREDIT),
    VAR("16-word slot + control warp", V_SLOT16 | V_CTLWARP),
    VAR("16-word slot + a kernel a stage", V_SLOT16 | V_SEPARATE),
    VAR("16-word slot + control words", V_SLOT16 | V_CTRL),
    VAR("coalesced window (4 slots, a unit a lane)", V_SLOT16 | V_COAL),
    VAR("coalesced + control words", V_SLOT16 | V_COAL | V_CTRL),
    VAR("coalesced + ctrl + book + finish", V_SLOT16 | V_COAL | V_CTRL | V_BOOK | V_FINISH),
    VAR("coalesced + all (ctl warp, a kernel a stage)", V_SLOT16 | V_COAL | V_CTRL | V_BOOK | V_FINISH | V_CTLWARP | V_SEPARATE),
    VAR("coalesced poll, a lane stores its slot", V_SLOT16 | V_COAL | V_LANESTORE),
    VAR("a slot a lane poll, coalesced store", V_SLOT16 | V_WINDOW | V_COALSTORE),
};

int main(int argc, char **argv) {
    const int probes = argc > 1 ? atoi(argv[1]) : 10000;
    const int rounds = argc > 2 ? atoi(argv[2]) : 2;
    const u64 laps = 20000;
    const char *only = argc > 3 ? argv[3] : NULL; // "0,2,13": the variants to run
    Mem m;
    const size_t ring = (size_t)CAP * MAXW * 8;
    CK(cudaHostAlloc((void **)&m.hin, ring, cudaHostAllocMapped));
    CK(cudaHostAlloc((void **)&m.hout, ring, cudaHostAllocMapped));
    CK(cudaHostAlloc((void **)&m.hctl, 4096, cudaHostAllocMapped));
    CK(cudaHostAlloc((void **)&m.stop, 64, cudaHostAllocMapped));
    CK(cudaHostGetDevicePointer((void **)&m.d_hin, m.hin, 0));
    CK(cudaHostGetDevicePointer((void **)&m.d_hout, m.hout, 0));
    CK(cudaHostGetDevicePointer((void **)&m.d_hctl, m.hctl, 0));
    CK(cudaHostGetDevicePointer((void **)&m.d_stop, m.stop, 0));
    for (int i = 0; i < STAGES; i++) {
        CK(cudaMalloc((void **)&m.ch[i], CTL_WORDS * 8 + ring));
        CK(cudaStreamCreateWithFlags(&m.st[i], cudaStreamNonBlocking));
    }
    CK(cudaMalloc((void **)&m.dctl, 32 * 8 * STAGES));
    CK(cudaMalloc((void **)&m.stats, 64 * STAGES));
    CK(cudaMalloc((void **)&m.times, 8 * (laps + 1)));
    CK(cudaMalloc((void **)&m.smid, 4 * STAGES));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    g_sms = prop.multiProcessorCount;
    g_pin_smem = prop.sharedMemPerMultiprocessor / 2 + 1024; // two such blocks never fit one SM
    if (g_pin_smem > prop.sharedMemPerBlockOptin) g_pin_smem = prop.sharedMemPerBlockOptin;
    if (argc > 1 && strcmp(argv[1], "map") == 0) {
        // map VARIANT LAPS FROM...: the device hop of a ring whose every hop goes between SM pair
        // (2f, 2f + 1) and SM pair (2j, 2j + 1), for every j: which SMs are near each other.
        const int vi = argc > 2 ? atoi(argv[2]) : 1;
        const u64 mlaps = argc > 3 ? strtoull(argv[3], NULL, 10) : 3000;
        const Variant &v = variants[vi];
        printf("cuda_k2k_chain map on %s (%d SMs): variant %d (%s), %llu laps; device hop p50 (ns), ring "
               "2f -> 2j -> 2f+1 -> 2j+1\n", prop.name, g_sms, vi, v.name, mlaps);
        for (int k = 4; k < argc; k++) {
            const u32 f = (u32)atoi(argv[k]);
            printf("from SMs %u,%u:", 2 * f, 2 * f + 1);
            for (u32 j = 0; 2 * j + 1 < (u32)g_sms; j++) {
                if (j == f) continue;
                const u32 sms[STAGES] = {2 * f, 2 * j, 2 * f + 1, 2 * j + 1};
                g_pin = sms;
                const double dev = ring_run(m, v.fn, v.flags, mlaps);
                printf(" %u:%.0f", 2 * j, dev);
                fflush(stdout);
            }
            g_pin = NULL;
            printf("\n");
        }
        return 0;
    }
    // CHAIN_SETS="name=a,b,c,d;...": every variant also with its stages pinned to those SMs.
    struct Set { char name[32]; u32 sms[STAGES]; };
    std::vector<Set> sets(1);
    strcpy(sets[0].name, "free");
    if (const char *e = getenv("CHAIN_SETS")) {
        for (const char *c = e; *c;) {
            Set st;
            memset(&st, 0, sizeof st);
            const char *eq = strchr(c, '=');
            if (!eq) break;
            snprintf(st.name, sizeof st.name, "%.*s", (int)(eq - c), c);
            const char *q = eq + 1;
            for (int b = 0; b < STAGES; b++) {
                char *end;
                st.sms[b] = (u32)strtoul(q, &end, 10);
                q = *end == ',' ? end + 1 : end;
            }
            sets.push_back(st);
            if (*q != ';') break;
            c = q + 1;
        }
    }
    printf("cuda_k2k_chain on %s: %d probes a run, %llu laps, per hop = (4-stage p50 - 1-stage p50) / 3; "
           "device hop = p50 of a lap of 4 stages / 4\n", prop.name, probes, laps);
    printf("%-44s %9s %9s %9s %9s  %s\n", "variant", "1 stage", "4 stages", "per hop", "dev hop", "SMs");
    int failed = 0;
    for (int r = 0; r < rounds; r++) {
        for (const Variant &v : variants) {
            if (only) {
                const int idx = (int)(&v - variants);
                bool want = false;
                for (const char *c = only; *c;) {
                    char *end;
                    const long x = strtol(c, &end, 10);
                    if (end == c) break;
                    want |= x == idx;
                    c = *end == ',' ? end + 1 : end;
                }
                if (!want) continue;
            }
            for (const Set &set : sets) {
            g_pin = &set - &sets[0] ? set.sms : NULL;
            u32 sm1[STAGES] = {0}, sm4[STAGES] = {0};
            const double one = host_run(m, v.fn, v.flags, 1, probes, sm1);
            const double four = host_run(m, v.fn, v.flags, STAGES, probes, sm4);
            const double dev = ring_run(m, v.fn, v.flags, laps);
            if (one < 0 || four < 0 || dev < 0) failed = 1;
            printf("%2d %-41s %7.0f ns %7.0f ns %7.0f ns %7.0f ns  %u %u %u %u %s\n", (int)(&v - variants), v.name, one, four, (four - one) / 3, dev,
                   sm4[0], sm4[1], sm4[2], sm4[3], set.name);
            fflush(stdout);
            }
            g_pin = NULL;
        }
    }
    return failed;
}
