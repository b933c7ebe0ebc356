/* Ring-kernel template for CUDA, compiled by NVRTC after the user's handler.
 *
 * The host prepends:
 *   #define RK_MSG_BYTES / RK_REPLY_BYTES / RK_STATE_BYTES   desc sizes
 *   #define RK_IN_LL / RK_OUT_LL        8-byte words per input / output slot
 *   #define RK_IN_STAGE / RK_OUT_STAGE  staging bytes per message / reply
 *   #define RK_WARPS_PER_BLOCK          worker warps in each block
 *   #define RK_HANDLER_FN name          the handler
 * then dsl.h, the handler source and channel.cu (K2K channels). Two kernels follow: rk_ring_persistent
 * (launched once, fed through host-mapped memory) and rk_ring_batch (one
 * launch per batch: the traditional and CUDA-graph patterns).
 *
 * Message path (see docs/cuda.md and facts/h100.md):
 *  - Queues live in pinned host memory that the GPU reads and writes over
 *    PCIe. Position p of a queue uses slot p % capacity. Every 8-byte word of
 *    a slot carries 4 payload bytes and, in its upper half, the tag
 *    (p / capacity) + 1. A reader knows a word is current when its tag
 *    matches, so neither side needs fences or a shared tail pointer: each
 *    word has one writer and is written whole.
 *  - Positions are dealt out in chunks of `chunk` consecutive positions;
 *    worker warp w owns chunks w, w + W, w + 2W, ... Each warp polls only its
 *    own slots (distinct lines, never a word that many blocks poll), loads a
 *    window of up to a whole chunk per pass with coalesced 16-byte loads, runs
 *    the handler on one lane per message and writes the replies back as
 *    tagged words into the same position of the output queue.
 *  - The host never sends position p before it has taken reply p - capacity,
 *    so an output slot is always free when its reply is written.
 *  - One control thread (block 0, the warp after the workers) is the only
 *    reader of the host's control words; it republishes them in device
 *    memory for the workers and writes counters, a heartbeat and
 *    has_terminated back to the host.
 *  - Loading a module waits for every running kernel of the context, so the
 *    host can ask the kernel to pause: each warp saves where it stopped and
 *    leaves, and a relaunch with `resume` set carries on from there.
 */

/* ---- the handler's types, from its signature ------------------------------ */

template <typename F> struct rk_handler_sig_;
template <typename R, typename P, typename S> struct rk_handler_sig_<int(const R *, P *, S *)> {
    typedef R req;
    typedef P resp;
    typedef S state;
};
template <typename R, typename P, typename S> struct rk_handler_sig_<int(R *, P *, S *)> {
    typedef R req;
    typedef P resp;
    typedef S state;
};
template <typename T> struct rk_size_ { static const unsigned long long value = sizeof(T); };
template <> struct rk_size_<void> { static const unsigned long long value = 0; };
template <> struct rk_size_<const void> { static const unsigned long long value = 0; };

typedef rk_handler_sig_<decltype(RK_HANDLER_FN)> rk_sig_;
typedef typename rk_sig_::req rk_req_t;
typedef typename rk_sig_::resp rk_resp_t;
typedef typename rk_sig_::state rk_state_t;

static_assert(rk_size_<rk_req_t>::value <= RK_MSG_BYTES,
              "the handler's request type is larger than the kernel's message_size");
static_assert(rk_size_<rk_resp_t>::value <= (RK_REPLY_BYTES > 0 ? RK_REPLY_BYTES : 16),
              "the handler's reply type is larger than the kernel's reply_size");
static_assert(rk_size_<rk_state_t>::value <= (RK_STATE_BYTES > 0 ? RK_STATE_BYTES : 16),
              "the handler's state type is larger than the kernel's state_size");

__device__ __forceinline__ int rk_call_handler(const unsigned char *req, unsigned char *resp, unsigned char *state) {
    return RK_HANDLER_FN((const rk_req_t *)req, (rk_resp_t *)resp, (rk_state_t *)state);
}

/* ---- shared layout (mirrored in src/cuda/cuda_ring_layout.h) -------------- */

struct rk_ring_args {
    rk_u64 *in;            /* host-mapped input queue: capacity * RK_IN_LL words */
    rk_u64 *out;           /* host-mapped output queue: capacity * RK_OUT_LL words */
    rk_u64 *hctl;          /* host-mapped control words */
    rk_u64 *dctl;          /* device control words */
    rk_u64 *counts;        /* device, per worker warp: processed, errors, and where it stopped */
    unsigned char *stage;  /* device staging when it does not fit in shared memory, else 0 */
    unsigned char *state;  /* the handler's state */
    rk_u64 *crq;           /* host-mapped replies to channel messages: capacity * RK_CRQ_LL words */
    rk_u64 capacity_mask;
    rk_u32 log2_capacity;
    rk_u32 chunk;          /* positions per chunk: a power of two <= 32 */
    rk_u32 log2_chunk;
    rk_u32 worker_warps;
    rk_u32 resume;         /* relaunched after a pause: each warp continues where it stopped */
    rk_u32 turns;          /* ordered: the worker warps (one block) take and publish in position order */
    rk_u32 turn_wait_cycles; /* how long a begin turn is waited for (channel.cu), or 0: the default */
    rk_u32 idle_nap_ns;      /* a worker's nap after many idle passes (sanitizer runs), or 0 */
    rk_u32 k2k_solo;         /* RK_SOLO_* bits (channel.cu): when one worker warp plans its next channel begin */
    rk_u32 k2k_lanes;        /* RK_LANES_* bits (channel_lanes.cu): several worker warps of a chain stage in lanes */
};

/* Control word indices: see cuda_ring_layout.h. */
#define RK_HCTL_ACTIVE 0
#define RK_HCTL_TERMINATE 8   /* 0, or 1 + the number of messages to finish */
#define RK_HCTL_PROCESSED 16
#define RK_HCTL_ERRORS 17
#define RK_HCTL_HEARTBEAT 18
#define RK_HCTL_TERMINATED 24
#define RK_HCTL_PAUSE 32      /* 0, or the number of a pause request */
#define RK_HCTL_PAUSED 40     /* the last pause request granted */
#define RK_DCTL_ACTIVE 0
#define RK_DCTL_TERMINATE 1
#define RK_DCTL_PAUSE 2
#define RK_DCTL_EXITED 16
#define RK_DCTL_PAUSED 24
#define RK_HCTL_CH_PROCESSED 19
#define RK_HCTL_ACTIVE_SEEN 20 /* 1 once every worker has started a pass active, 0 inactive */
#define RK_COUNT_ACTIVE_SEEN 6 /* per warp: the active value its last pass started with */
#define RK_COUNT_WORDS 8      /* per warp: processed, errors, chunk_pos, done, crq head, channel messages */
#define RK_CRQ_LL (RK_OUT_LL + 2) /* a reply, then its 64-bit id as two tagged words */

/* ---- memory access helpers -------------------------------------------------- */

/* Volatile accesses go to memory every time, in program order, and are never
 * split: what the tag protocol needs from host-mapped memory. */
__device__ __forceinline__ void rk_load2(const rk_u64 *p, rk_u64 &a, rk_u64 &b) {
    asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(p));
}
__device__ __forceinline__ void rk_store2(rk_u64 *p, rk_u64 a, rk_u64 b) {
    asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(a), "l"(b) : "memory");
}
__device__ __forceinline__ rk_u64 rk_load(const rk_u64 *p) { return *(const volatile rk_u64 *)p; }
__device__ __forceinline__ void rk_store(rk_u64 *p, rk_u64 v) { *(volatile rk_u64 *)p = v; }

__device__ __forceinline__ rk_u64 rk_globaltimer_ns() {
    rk_u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}


__device__ __forceinline__ rk_u32 rk_tag(rk_u64 pos, rk_u32 log2_capacity) {
    return (rk_u32)(pos >> log2_capacity) + 1u;
}

/* Bits lo .. hi-1 of a 32-bit mask (hi <= 32). */
__device__ __forceinline__ rk_u32 rk_bits(rk_u32 lo, rk_u32 hi) {
    rk_u32 upto = hi >= 32 ? 0xffffffffu : ((1u << hi) - 1u);
    return upto & ~((1u << lo) - 1u);
}

extern __shared__ __align__(16) unsigned char rk_ring_smem[];

#define RK_IN_UNITS (RK_IN_LL / 2)    /* 16-byte units per input slot */
#define RK_OUT_UNITS (RK_OUT_LL / 2)  /* 16-byte units per output slot */
/* 16-byte loads per lane issued before the first is used. A wide ordered
 * block (more than 8 warps) has fewer registers a thread (15 workers and
 * the control warp: 128), and these loads stay live across its channel
 * passes: fewer of them (2: ptxas spilled 32-40 bytes of the bench's
 * 15-warp stage with 4; K2K lanes measured alike with 2 and 4, session 14). */
#define RK_LOADS_IN_FLIGHT (RK_WARPS_PER_BLOCK > 8 ? 2 : 8)
#ifndef RK_REPOLL_DELAY_NS
#define RK_REPOLL_DELAY_NS 300        /* after a lone reply, before the next poll (see rk_worker) */
#endif
#ifndef RK_SPARSE_NS
#define RK_SPARSE_NS 2000             /* a message this long after the previous one is "lone" */
#endif
#define RK_CHANNEL_POLLS 3            /* K2K input polls per pass over the host queue */
#define RK_CHANNEL_SPIN_POLLS 32      /* K2K input polls between two looks at the control words */

/* ---- worker warps ------------------------------------------------------------ */

/* Issues one round of up to 32 * RK_LOADS_IN_FLIGHT coalesced 16-byte loads
 * over the window's slots, without waiting for any of them. */
__device__ __forceinline__ void rk_issue_loads(const rk_ring_args &a, rk_u64 chunk_pos, rk_u32 first, rk_u32 units,
                                               rk_u32 round, rk_u32 lane, rk_u64 (&x)[RK_LOADS_IN_FLIGHT],
                                               rk_u64 (&y)[RK_LOADS_IN_FLIGHT]) {
#pragma unroll
    for (int k = 0; k < RK_LOADS_IN_FLIGHT; k++) {
        rk_u32 u = round + k * 32 + lane;
        x[k] = y[k] = 0;
        if (u < units) {
            rk_u32 off = first + u / RK_IN_UNITS, w = u % RK_IN_UNITS;
            rk_u64 pos = chunk_pos + off;
            rk_load2(a.in + (pos & a.capacity_mask) * RK_IN_LL + 2 * w, x[k], y[k]);
        }
    }
}

/* Checks a round's tags; stages current words, returns the positions with a stale word. */
__device__ __forceinline__ rk_u32 rk_check_loads(const rk_ring_args &a, rk_u64 chunk_pos, rk_u32 first, rk_u32 units,
                                                 rk_u32 round, rk_u32 lane, const rk_u64 (&x)[RK_LOADS_IN_FLIGHT],
                                                 const rk_u64 (&y)[RK_LOADS_IN_FLIGHT], unsigned char *stage_in) {
    rk_u32 bad = 0;
#pragma unroll
    for (int k = 0; k < RK_LOADS_IN_FLIGHT; k++) {
        rk_u32 u = round + k * 32 + lane;
        if (u < units) {
            rk_u32 off = first + u / RK_IN_UNITS, w = u % RK_IN_UNITS;
            rk_u32 tag = rk_tag(chunk_pos + off, a.log2_capacity);
            if ((rk_u32)(x[k] >> 32) != tag || (rk_u32)(y[k] >> 32) != tag) {
                bad |= 1u << off;
            } else {
                rk_u32 *dst = (rk_u32 *)(stage_in + off * RK_IN_STAGE) + 2 * w;
                dst[0] = (rk_u32)x[k];
                dst[1] = (rk_u32)y[k];
            }
        }
    }
    return bad;
}

/* Runs the handler on one staged message and stages its reply, the status
 * word after the payload. Small messages are first copied into local arrays
 * the compiler keeps in registers: the handler's request and reply pointers
 * into shared memory could alias, which makes every access wait for the one
 * before (measured: ~0.4 us of a 64-byte echo's round trip). */
#define RK_REGISTER_STAGING (RK_IN_STAGE <= 256 && RK_OUT_STAGE <= 256)
__device__ __forceinline__ int rk_run_handler(const rk_ring_args &a, const unsigned char *req, unsigned char *resp) {
    int status;
#if RK_REGISTER_STAGING
    uint4 q[RK_IN_STAGE / 16], r[RK_OUT_STAGE / 16];
#pragma unroll
    for (int i = 0; i < RK_IN_STAGE / 16; i++) q[i] = ((const uint4 *)req)[i];
#pragma unroll
    for (int i = 0; i < RK_OUT_STAGE / 16; i++) r[i] = make_uint4(0, 0, 0, 0);
    status = rk_call_handler((const unsigned char *)q, (unsigned char *)r, a.state);
    ((int *)r)[(RK_REPLY_BYTES + 3) / 4] = status;
#pragma unroll
    for (int i = 0; i < RK_OUT_STAGE / 16; i++) ((uint4 *)resp)[i] = r[i];
#else
    for (int i = 0; i < RK_OUT_STAGE; i += 16) *(uint4 *)(resp + i) = make_uint4(0, 0, 0, 0);
    status = rk_call_handler(req, resp, a.state);
    ((int *)resp)[(RK_REPLY_BYTES + 3) / 4] = status;
#endif
    return status;
}

/* K2K (channel.cu): handles up to `max` messages waiting on one input
 * channel, in order, one lane each. Their replies go to the channel-reply
 * queue when the handler failed or the channel asks for every reply.
 * Returns how many slots it took. Device memory only. With several worker
 * warps, each polls its own chunks of the input; a pass begins (takes its
 * slots, gets its ports' positions) when the input's begin turn reaches its
 * first position and places its replies at the publish turn (channel.cu),
 * so the input is taken, and every port and the reply queue get messages,
 * in the input's order while the handlers of several warps run at once.
 * The poll window starts at a few slots and doubles while every slot
 * polled is ready (a stream). */
struct rk_ch_poll {
    rk_u32 window, empty; /* slots per poll; polls in a row that found nothing */
};

/* After a poll of `max` slots that found `found` messages: a full poll
 * doubles the window (up to 32), 16 empty polls in a row shrink it back. */
__device__ __forceinline__ void rk_ch_poll_adapt(rk_ch_poll &cp, rk_u32 found, rk_u32 max) {
    if (found && found == max) {
        cp.window = min(32u, 2 * cp.window);
        cp.empty = 0;
    } else if (!found && ++cp.empty >= 16) {
        cp.window = RK_CH_MIN_WINDOW;
    }
}

/* The lanes of a channel pass with a reply (`reply`; `run`: its messages,
 * seq0 the first one's sequence number) write it into the channel-reply
 * queue at the places rk_reply_publish gave, as tagged words. */
__device__ __forceinline__ void rk_channel_replies(const rk_ring_args &a, rk_u32 lane, rk_u32 wi,
                                                   const unsigned char *stage_out, rk_u32 input, rk_u32 reply,
                                                   rk_u32 run, rk_u64 seq0) {
    if ((reply >> lane) & 1u) {
        const rk_u64 pos = rk_ch.w[wi].cr_base + __popc(reply & ((1u << lane) - 1u));
        const rk_u64 tag = (rk_u64)rk_tag(pos, a.log2_capacity) << 32;
        rk_u64 *slot = a.crq + (pos & a.capacity_mask) * RK_CRQ_LL;
        const rk_u32 *src = (const rk_u32 *)(stage_out + lane * RK_OUT_STAGE);
        for (int w = 0; w < RK_OUT_LL; w += 2) rk_store2(slot + w, tag | src[w], tag | src[w + 1]);
        const rk_u64 seq = (seq0 + __popc(run & ((1u << lane) - 1u))) & ((1ull << 40) - 1);
        const rk_u64 id = (1ull << 63) | ((rk_u64)rk_ch.in[input].id << 40) | seq;
        rk_store2(slot + RK_OUT_LL, tag | (rk_u32)id, tag | (rk_u32)(id >> 32));
    }
}

/* K2K lanes (channel_lanes.cu, assembled after this file). */
__device__ bool rk_lanes_enter(rk_u32 input, rk_u64 first, rk_u64 host_pub);
__device__ __forceinline__ rk_u32 rk_lanes_state();
__device__ __forceinline__ void rk_lanes_leave_request();
__device__ bool rk_lanes_hold_exit(rk_u32 lane);
__device__ rk_u32 rk_lanes_pass(const rk_ring_args &a, rk_u32 lane, rk_u32 wi, unsigned char *stage_in,
                                unsigned char *stage_out, rk_u32 max, rk_ch_poll &cp, rk_u64 &handled,
                                rk_u64 &errors);
#if RK_LANES_BUILT && defined(RK_LANES_PROFILE)
__device__ void rk_lanes_prof_report(rk_u32 wi);
#endif

/* SOLO: this kernel's one worker warp plans its begins (rk_links.solo not
 * 0); the other instance is main's pass with none of the plan's checks
 * (eight warps, or RK_CUDA_K2K_SOLO=0). */
template <bool SOLO>
__device__ rk_u32 rk_channel_pass(const rk_ring_args &a, rk_u32 lane, rk_u32 wi, unsigned char *stage_in,
                                  unsigned char *stage_out, rk_u32 max, rk_ch_poll &cp, rk_u64 &handled,
                                  rk_u64 &errors, bool idle_host, rk_u64 host_pub) {
#if RK_LANES_BUILT
    /* Several warps of a chain stage: lanes (channel_lanes.cu). */
    if (!SOLO && __shfl_sync(0xffffffffu, rk_lanes_state(), 0))
        return rk_lanes_pass(a, lane, wi, stage_in, stage_out, max, cp, handled, errors);
#endif
    const rk_u64 cap = a.capacity_mask + 1;
    if (max > cp.window) max = cp.window;
    rk_u32 input = 0, skip = 0;
    rk_u64 first = 0;
    const rk_u32 lanes = rk_channel_load(lane, wi, max, stage_in, &input, &first, &skip,
                                         SOLO && (rk_ch.solo & RK_SOLO_POLL_PLAIN) != 0);
    rk_ch_poll_adapt(cp, __popc(lanes), max);
    if (!lanes) {
        /* Nothing came: a lone warp makes its next begin ready while it
         * waits (once: a begin drops the plan), so the next message runs
         * its handler at once; a stream's polls find messages and never
         * come here, so it keeps the general begin (TAKEN told before its
         * handlers, no planning on its path). Not while the host queue has
         * messages (idle_host false): its passes' begins drop the plan. */
        if (SOLO && (rk_ch.solo & RK_SOLO_IDLE)) {
            /* plan_ok read in every lane (the compiler loads it there) */
            rk_solo_replan(lane, wi, cap, a.dctl + RK_DCTL_CR_RECEIVED, idle_host && !rk_ch.plan_ok);
        }
        return 0;
    }
    rk_u32 kept = 0, solo_ports = 0;
    rk_u64 seq0 = 0;
    const rk_u32 want = __popc(lanes & ~skip);
    /* One worker warp with its begin made ready (rk_solo_plan) and room for
     * the whole pass: every lane knows the outcome (all slots taken, the
     * planned ports' positions), so the handlers start without a lane-0
     * section or a shuffle; the heads move after them, and TAKEN and the
     * turn too unless RK_SOLO_TAKEN_EARLY (a HOLD input's producer only
     * waits a little longer for its credit). Every lane decides alike: the
     * plan changes only in lane 0 after the __syncwarp below (a general
     * begin drops it, but then every lane saw it refuse this pass). */
    const bool solo = SOLO && rk_ch.plan_ok && want <= rk_ch.plan_room && !rk_ch.in[input].report &&
                      (want <= 1 || !(rk_ch.solo & RK_SOLO_LONE));
    const bool taken_early = SOLO && (rk_ch.solo & RK_SOLO_TAKEN_EARLY) != 0;
    if (solo) {
        solo_ports = want ? rk_ch.plan_ports : 0u;
        if (lane < 8 && ((solo_ports >> lane) & 1u)) rk_ch.w[wi].allow[lane] = lanes & ~skip;
        if (lane == 0) rk_ch.w[wi].ports = solo_ports;
        kept = lanes;
        seq0 = rk_ch.in[input].delivered;
        __syncwarp();
        if (lane == 0 && taken_early) rk_channel_taken(input, first, __popc(kept), want);
    } else {
        /* The begin turn; HOLD ports and the reply queue's room cut the pass;
         * what it keeps is taken at once (staged), before any handler emits
         * (rk_channel_taken says why). Every lane has read the plan (solo)
         * before lane 0's begin drops it. */
        if (SOLO) __syncwarp();
        if (lane == 0 && rk_turn_wait(&rk_ch.in[input].tail, first, true)) {
#if RK_LANES_BUILT
            /* A chain stage of several warps goes into lanes here, holding
             * the turn (the pass is polled again there). */
            if (SOLO || !rk_ch.lanes_bits || !rk_lanes_enter(input, first, host_pub))
#endif
            {
                kept = rk_emit_begin(lanes, skip, wi, cap, a.dctl + RK_DCTL_CR_RECEIVED);
                if (kept) seq0 = rk_channel_taken(input, first, __popc(kept), __popc(kept & ~skip));
            }
        }
        kept = __shfl_sync(0xffffffffu, kept, 0);
        seq0 = __shfl_sync(0xffffffffu, seq0, 0);
        __syncwarp();
        if (!kept) return 0;
    }
    const rk_u32 run = kept & ~skip; /* SKIP slots: taken, no handler */
    int status = 0;
    if ((run >> lane) & 1u) status = rk_run_handler(a, stage_in + lane * RK_IN_STAGE, stage_out + lane * RK_OUT_STAGE);
    rk_emit_finish(lane, wi);
    const rk_u32 failed = __ballot_sync(0xffffffffu, status != 0) & run;
    const rk_u32 reply = rk_ch.in[input].reply_all ? run : failed;
    if (lane == 0) {
        if (solo) {
            /* What the general begin does before the handlers (it promises
             * the reply queue room for every message, rk_reply_publish
             * gives back what was not used). */
            RK_FOR_BITS(p, solo_ports) rk_ch.out[p].head += want;
            if (want) rk_ch.cr_promised += want;
            if (!taken_early) rk_channel_taken(input, first, __popc(kept), __popc(run));
            rk_ch.plan_ok = 0; /* the heads moved: planned again before the next one */
        }
        rk_reply_publish(input, wi, first, __popc(kept), __popc(run), reply);
    }
    __syncwarp();
    rk_channel_replies(a, lane, wi, stage_out, input, reply, run, seq0);
    handled += __popc(run);
    errors += __popc(__ballot_sync(0xffffffffu, status < 0) & run);
    /* The next pass's begin, after this one's replies are on their way (a
     * sink's reply waits for no plan; measured: 2.26 us a hop planned
     * before the reply stores, 1.97 us planned at the next empty poll). */
    if (SOLO && lane == 0 && (rk_ch.solo & RK_SOLO_AFTER_PASS)) rk_solo_plan(wi, cap, a.dctl + RK_DCTL_CR_RECEIVED);
    __syncwarp();
    return __popc(kept);
}

/* K2K, one worker warp: the lean loop (channel_solo.cu, assembled after this file). */
__device__ __forceinline__ bool rk_lean_ready();
__device__ rk_u32 rk_lean_run(const rk_ring_args &a, rk_u32 lane, rk_u32 wi, rk_ch_poll &cp, rk_u64 &handled,
                              rk_u64 &errors, rk_u64 seen_active, rk_u64 host_next, rk_u64 *saved, rk_u32 &idle,
                              bool &changed);
__device__ __forceinline__ bool rk_lean_host_plan(rk_u32 ready, rk_u64 hfirst, rk_u32 wi, rk_u32 lane);
__device__ __forceinline__ void rk_lean_host_done(rk_u64 hfirst, rk_u32 n, rk_u32 wi, rk_u32 lane,
                                                  const rk_ring_args &a);
__device__ __forceinline__ void rk_lean_host_idle(rk_u32 wi, rk_u32 lane, const rk_ring_args &a);
#ifdef RK_LEAN_TRACE
__device__ void rk_lean_trace_exit(); /* measurement only (channel_solo.cu) */
#endif

__device__ void rk_worker(const rk_ring_args &a, rk_u32 gw, rk_u32 lane, rk_u32 local_warp) {
    const rk_u32 P = a.chunk;
    const rk_u32 full = rk_bits(0, P);
    const size_t per_warp = (size_t)P * (RK_IN_STAGE + RK_OUT_STAGE) + RK_LANES_RAW_BYTES;
    unsigned char *stage_in = a.stage ? a.stage + (size_t)gw * per_warp : rk_ring_smem + (size_t)local_warp * per_warp;
    unsigned char *stage_out = stage_in + (size_t)P * RK_IN_STAGE;

    rk_u64 *saved = a.counts + (size_t)RK_COUNT_WORDS * gw;
    rk_u64 chunk_pos = (rk_u64)gw << a.log2_chunk;
    const rk_u64 step = (rk_u64)a.worker_warps << a.log2_chunk;
    rk_u32 done = 0, window = 1; /* invariant: done != full at the top of the loop */
    rk_u32 empty_polls = 0, full_polls = 0;
    rk_u64 last_found_at = 0;
    rk_u64 processed = 0, errors = 0, ch_handled = 0;
    rk_ch_poll cp = {RK_CH_MIN_WINDOW, 0};
    if (a.resume) {
        processed = rk_load(saved);
        errors = rk_load(saved + 1);
        chunk_pos = rk_load(saved + 2);
        done = (rk_u32)rk_load(saved + 3);
        ch_handled = rk_load(saved + 5);
    }
    bool pausing = false, was_active = false;
    /* Not the same as was_active: this one is kept over a pause (the host's
     * deactivate waits on it), was_active starts false at every launch, so a
     * relaunched warp re-reads its links once before it takes a message. */
    rk_u64 seen_active = rk_load(saved + RK_COUNT_ACTIVE_SEEN); /* zeroed at launch; kept over a pause */

    rk_u32 idle = 0; /* passes in a row that handled nothing (for idle_nap_ns) */
    for (;;) {
        /* Under a sanitizer every poll is instrumented: an idle warp naps
         * (RK_CUDA_IDLE_NAP_NS), so the tool's time goes to the warps that work. */
        if (a.idle_nap_ns && ++idle > 64) __nanosleep(a.idle_nap_ns);
        /* The control words (device memory, one line), K2K's link generation
         * and output ports' CLOSED words, and the first round of slot loads
         * (host memory) are all in flight before any of them is used. */
        rk_u64 active = rk_load(a.dctl + RK_DCTL_ACTIVE);
        rk_u64 term = rk_load(a.dctl + RK_DCTL_TERMINATE);
        rk_u64 pause = rk_load(a.dctl + RK_DCTL_PAUSE);
        if (active != seen_active) {
            /* This pass and every later one go by the new value: the control
             * thread tells the host once every warp says so (deactivate waits). */
            seen_active = active;
            if (lane == 0) rk_store(saved + RK_COUNT_ACTIVE_SEEN, active);
        }
        const rk_u64 gen = rk_load(a.dctl + RK_DCTL_LINK_GEN);
        const rk_u64 host_pub_word = rk_load(a.dctl + RK_DCTL_HOST_PUBLISHED); /* with the others: one round trip */
        const rk_u64 closed = rk_ports_closed_load(lane);
        const rk_u32 first = __ffs(~done) - 1;
        /* K2K: a kernel with channel inputs reads its host queue only when
         * the host has published a position it has not handled (the count
         * the control thread relays into device memory), so a pass that
         * waits for channel messages polls device memory only, never the
         * bus. Terminating, every position below the target is polled, as
         * without channels (and none after it, while the inputs drain).
         * Kernels without inputs poll as always. */
        bool poll_host = true;
#if RK_LANES_BUILT
        const rk_u64 host_pub = __shfl_sync(0xffffffffu, host_pub_word, 0);
#else
        const rk_u64 host_pub = 0; /* only lanes need it here */
#endif
        if (rk_ch.in_count) {
#if !RK_LANES_BUILT
            const rk_u64 host_pub = __shfl_sync(0xffffffffu, host_pub_word, 0);
#endif
            const rk_u64 t = __shfl_sync(0xffffffffu, term, 0);
            poll_host = t ? chunk_pos < t - 1 : host_pub > chunk_pos + first;
        }
        const rk_u32 lim = min(P, first + window);
        const rk_u32 units = poll_host ? (lim - first) * RK_IN_UNITS : 0;
        rk_u64 x[RK_LOADS_IN_FLIGHT], y[RK_LOADS_IN_FLIGHT];
        rk_issue_loads(a, chunk_pos, first, units, 0, lane, x, y);
#if RK_LANES_BUILT
        if (__shfl_sync(0xffffffffu, rk_lanes_state(), 0)) {
            /* The channel input runs in lanes (channel_lanes.cu): only its
             * passes run until they leave, which anything else this loop
             * would act on asks for (a quiet point: the ports' positions
             * and the turns are the lanes' until then). */
            const bool closing = __ballot_sync(0xffffffffu, closed != 0) != 0;
            if (lane == 0 && (pause || term || !active || host_pub > rk_vload(&rk_ch.host_tail) ||
                              gen > rk_vload(&rk_ch.gen) || closing))
                rk_lanes_leave_request();
            __syncwarp();
            rk_u32 got = 0;
            for (int poll = 0; poll < RK_CHANNEL_SPIN_POLLS && __shfl_sync(0xffffffffu, rk_lanes_state(), 0); poll++)
                got += rk_channel_pass<false>(a, lane, local_warp, stage_in, stage_out, P, cp, ch_handled, errors,
                                              false, term || pause || !active ? ~0ull : host_pub);
            if (got) {
                idle = 0;
                if (lane == 0) {
                    rk_store(saved + 1, errors);
                    rk_store(saved + 5, ch_handled);
                }
            }
            continue;
        }
#endif
        rk_links_refresh(a.hctl, __shfl_sync(0xffffffffu, gen, 0), lane); /* channels connected meanwhile */
        rk_ports_closed_apply(closed, lane); /* destinations that closed: FINAL, then emits refused */

        if (pause) {
#if RK_LANES_BUILT
            if (rk_lanes_hold_exit(lane)) continue; /* lanes leave first (channel_lanes.cu) */
#endif
            pausing = true;
            break;
        }
        bool host_done = false;
        if (term) {
            /* Finish every position below the target, then (K2K) close the
             * input channels and drain them, then leave. */
            rk_u64 target = term - 1;
            if (chunk_pos >= target) {
#if RK_LANES_BUILT
                if (!rk_ch.enabled || (rk_channel_drained(lane) && !rk_lanes_hold_exit(lane))) break;
#else
                if (!rk_ch.enabled || rk_channel_drained(lane)) break;
#endif
                host_done = true;
            } else {
                if (chunk_pos + P > target) done |= full & ~rk_bits(0, (rk_u32)(target - chunk_pos));
                if (done == full) {
                    chunk_pos += step;
                    done = 0;
                    continue;
                }
            }
        } else if (!active) {
            was_active = false;
            __nanosleep(2000);
            continue;
        }
        if (!was_active) {
            /* Just activated: the control thread relays a connect's link
             * generation before the activation (rk_control), so once past a
             * fence this warp sees every channel connected before it. */
            was_active = true;
            __threadfence();
            rk_links_refresh(a.hctl, __shfl_sync(0xffffffffu, rk_load(a.dctl + RK_DCTL_LINK_GEN), 0), lane);
        }

        if (rk_ch.enabled) {
            /* K2K inputs, polled in device memory. While host slots' loads
             * are in flight, a few polls fit in one trip over the bus (and
             * the first that finds messages ends them). Otherwise several
             * polls and passes run between two looks at the control words,
             * so a channel's message waits for one L2 round trip, not for
             * the control loads before it (they only change how the kernel
             * runs, within a few microseconds). */
            rk_u32 got = 0;
            bool changed = false; /* the lean loop stopped for a control word: to the top */
            if (!poll_host && !term && rk_lean_ready())
                got = rk_lean_run(a, lane, local_warp, cp, ch_handled, errors, seen_active, chunk_pos + first, saved,
                                  idle, changed);
            const int polls = changed ? 0 : poll_host ? RK_CHANNEL_POLLS : RK_CHANNEL_SPIN_POLLS;
            for (int poll = 0; poll < polls && !(poll_host && got); poll++)
                got += rk_ch.solo ? rk_channel_pass<true>(a, lane, local_warp, stage_in, stage_out, P, cp, ch_handled,
                                                          errors, !poll_host, host_pub)
                                  : rk_channel_pass<false>(a, lane, local_warp, stage_in, stage_out, P, cp, ch_handled,
                                                           errors, !poll_host, term ? ~0ull : host_pub);
            if (got) idle = 0;
            if (got && lane == 0) {
                rk_store(saved + 1, errors);
                rk_store(saved + 5, ch_handled);
            }
            if (host_done) continue;
        }
        if (!poll_host) continue; /* nothing from the host for this warp */

        rk_u32 bad = rk_check_loads(a, chunk_pos, first, units, 0, lane, x, y, stage_in);
        for (rk_u32 round = 32 * RK_LOADS_IN_FLIGHT; round < units; round += 32 * RK_LOADS_IN_FLIGHT) {
            rk_issue_loads(a, chunk_pos, first, units, round, lane, x, y);
            bad |= rk_check_loads(a, chunk_pos, first, units, round, lane, x, y, stage_in);
        }
        bad = rk_ch_warp_or(bad); /* channel.cu, assembled before this file */
        rk_u32 ready = rk_bits(first, lim) & ~done & ~bad;
        const rk_u64 hfirst = chunk_pos + first;
        const bool emits = a.turns && ready;
        bool waiting = false; /* ready, but the warps before have not taken theirs yet */
        bool host_planned = false;
        if (emits) {
            /* In order: a run of ready positions from the first not done, so
             * lanes (and so emits) follow the host's order; the pass begins
             * when the host queue's begin turn reaches it (several warps:
             * the warp before has taken its chunk). K2K: HOLD ports cut the
             * pass to their room (the rest stays for later). */
            const rk_u32 run = ~(ready >> first);
            ready &= run ? ((1u << (__ffs(run) - 1)) - 1u) << first : ready;
            host_planned = rk_lean_host_plan(ready, hfirst, local_warp, lane); /* K2K, one warp: channel_solo.cu */
            rk_u32 kept = host_planned ? ready : 0;
            if (!host_planned && lane == 0 && rk_turn_wait(&rk_ch.host_tail, hfirst, true)) {
                kept = rk_ch.enabled ? rk_emit_begin(ready, 0, local_warp, 0, 0) : ready;
                if (kept) rk_vstore(&rk_ch.host_tail, hfirst + __popc(kept));
            }
            waiting = !__shfl_sync(0xffffffffu, kept, 0);
            ready = __shfl_sync(0xffffffffu, kept, 0);
            __syncwarp();
        }
        /* The window: one slot while messages come one at a time (a wider
         * poll only takes longer), doubling while every polled slot keeps
         * being ready (a sender writing batches), back to one slot after a
         * few empty polls, so idle warps cost the bus little. */
        const rk_u32 n_ready = __popc(ready);
        if (!ready) {
            rk_lean_host_idle(local_warp, lane, a); /* K2K, one warp: the next begin made ahead */
            /* A pass that waited for its turn keeps its window: its messages are there. */
            if (!waiting) {
                full_polls = 0;
                if (++empty_polls >= 4) window = 1;
            }
            continue;
        }
        empty_polls = 0;
        idle = 0;
        if (ready == (rk_bits(first, lim) & ~done)) {
            if (++full_polls >= 2) window = min(P, 2 * window);
        } else {
            full_polls = 0;
            window = max(1u, n_ready);
        }
        __syncwarp();

        /* One lane per message runs the handler. */
        int status = 0;
        if ((ready >> lane) & 1u) status = rk_run_handler(a, stage_in + lane * RK_IN_STAGE, stage_out + lane * RK_OUT_STAGE);
        const rk_u32 failed = __ballot_sync(0xffffffffu, status < 0);
        __syncwarp();
        if (emits && ready) rk_emit_finish(lane, local_warp);

        /* Replies go back as tagged words, coalesced. */
        const rk_u32 out_units = (lim - first) * RK_OUT_UNITS;
        for (rk_u32 u = lane; u < out_units; u += 32) {
            rk_u32 off = first + u / RK_OUT_UNITS, w = u % RK_OUT_UNITS;
            if (!((ready >> off) & 1u)) continue;
            rk_u64 pos = chunk_pos + off;
            rk_u64 tag = (rk_u64)rk_tag(pos, a.log2_capacity) << 32;
            const rk_u32 *src = (const rk_u32 *)(stage_out + off * RK_OUT_STAGE) + 2 * w;
            rk_store2(a.out + (pos & a.capacity_mask) * RK_OUT_LL + 2 * w, tag | src[0], tag | src[1]);
        }
        if (host_planned) rk_lean_host_done(hfirst, n_ready, local_warp, lane, a);
        done |= ready;
        processed += n_ready;
        errors += __popc(failed & ready);
        if (lane == 0) {
            rk_store(saved, processed);
            rk_store(saved + 1, errors);
        }
        if (done == full) {
            chunk_pos += step;
            done = 0;
        }
        /* A lone message after a quiet spell: a sender that waits for this
         * reply can send again only after it has crossed the bus (~0.6 us),
         * and a poll that reaches host memory before then finds nothing and
         * holds the warp for a whole round trip (~1.2 us). Messages that
         * come close together (a stream) are polled for at once. */
        const rk_u64 found_at = rk_globaltimer_ns();
        if (n_ready == 1 && window == 1 && found_at - last_found_at > RK_SPARSE_NS && !rk_ch.in_count) {
            /* In short naps: one long __nanosleep ends anywhere between 0
             * and twice its argument, and this wait helps only near its length. */
            for (int t = 0; t < RK_REPOLL_DELAY_NS; t += 100) __nanosleep(100);
        }
        last_found_at = found_at;
        __syncwarp();
    }
    /* K2K: leaving for good, every output port's FINAL (its destination
     * drains up to it), after one last look for channels connected meanwhile. */
    if (!pausing) rk_links_refresh(a.hctl, __shfl_sync(0xffffffffu, rk_load(a.dctl + RK_DCTL_LINK_GEN), 0), lane);
    rk_ports_leave(lane, !pausing);
#ifdef RK_LEAN_TRACE
    if (lane == 0 && !pausing) rk_lean_trace_exit();
#endif
#if RK_LANES_BUILT && defined(RK_LANES_PROFILE)
    if (lane == 0 && !pausing) rk_lanes_prof_report(local_warp);
#endif
    /* Replies and counters reach the host before has_terminated (or the
     * pause) can; where this warp stopped is kept for a relaunch. */
    __threadfence_system();
    if (lane == 0) {
        rk_store(saved, processed);
        rk_store(saved + 1, errors);
        rk_store(saved + 2, chunk_pos);
        rk_store(saved + 3, done);
        rk_store(saved + 4, rk_vload(&rk_ch.cr_head));
        rk_store(saved + 5, ch_handled);
        __threadfence();
        atomicAdd(a.dctl + (pausing ? RK_DCTL_PAUSED : RK_DCTL_EXITED), 1ull);
    }
}

/* ---- the control thread ------------------------------------------------------ */

__device__ void rk_control(const rk_ring_args &a) {
    rk_u64 active = 0, term = 0, pause = 0, processed = 0, errors = 0, beat = 0, gen = 0, cr_received = 0, ch = 0;
    rk_u64 told_active = 0, host_pub = 0;
    for (;;) {
        rk_u64 h_active = rk_load(a.hctl + RK_HCTL_ACTIVE);
        rk_u64 h_term = rk_load(a.hctl + RK_HCTL_TERMINATE);
        rk_u64 h_pause = rk_load(a.hctl + RK_HCTL_PAUSE);
        rk_u64 h_gen = rk_load(a.hctl + RK_HCTL_LINK_GEN);
        rk_u64 h_cr = rk_load(a.hctl + RK_HCTL_CR_RECEIVED);
        rk_u64 h_pub = rk_load(a.hctl + RK_HCTL_HOST_PUBLISHED);
        if (h_active != active && h_active) {
            /* An activation: the generation of every connect before it. */
            __threadfence_system();
            h_gen = rk_load(a.hctl + RK_HCTL_LINK_GEN);
        }
        /* The host's published count: a kernel with channel inputs reads its
         * host queue only when this says a message waits (rk_worker). */
        if (h_pub != host_pub) rk_store(a.dctl + RK_DCTL_HOST_PUBLISHED, host_pub = h_pub);
        /* K2K: the link table's generation first, so that a worker that
         * sees the activation after it sees the links connected before it
         * (rk_worker); and the host's place in the channel-reply queue. */
        if (h_gen != gen) {
            __threadfence_system();
            rk_store(a.dctl + RK_DCTL_LINK_GEN, gen = h_gen);
            __threadfence();
        }
        if (h_cr != cr_received) rk_store(a.dctl + RK_DCTL_CR_RECEIVED, cr_received = h_cr);
        if (h_active != active) rk_store(a.dctl + RK_DCTL_ACTIVE, active = h_active);
        if (h_term != term) rk_store(a.dctl + RK_DCTL_TERMINATE, term = h_term);
        if (h_pause != pause) rk_store(a.dctl + RK_DCTL_PAUSE, pause = h_pause);
        /* Every worker has left, for good or for a pause. */
        const rk_u64 exited = rk_load(a.dctl + RK_DCTL_EXITED), paused = rk_load(a.dctl + RK_DCTL_PAUSED);
        const bool finished = exited + paused == a.worker_warps;
        if (finished) __threadfence();
        rk_u64 p = 0, e = 0, c = 0, seen = 0;
#pragma unroll 8
        for (rk_u32 w = 0; w < a.worker_warps; w++) {
            p += rk_load(a.counts + RK_COUNT_WORDS * w);
            e += rk_load(a.counts + RK_COUNT_WORDS * w + 1);
            c += rk_load(a.counts + RK_COUNT_WORDS * w + 5);
            seen += rk_load(a.counts + RK_COUNT_WORDS * w + RK_COUNT_ACTIVE_SEEN);
        }
        /* Every warp has started a pass with the host's value (deactivate's wait). */
        const rk_u64 all_seen = seen == 0 ? 0 : seen == a.worker_warps ? 1 : told_active;
        if (all_seen != told_active) rk_store(a.hctl + RK_HCTL_ACTIVE_SEEN, told_active = all_seen);
        /* Counters go out every 64 passes (about 100 us), not on every change:
         * each write takes the line from the host's cache, and the host reads
         * it on every poll. */
        if (finished || (beat & 63) == 0) {
            if (p != processed) rk_store(a.hctl + RK_HCTL_PROCESSED, processed = p);
            if (e != errors) rk_store(a.hctl + RK_HCTL_ERRORS, errors = e);
            if (c != ch) rk_store(a.hctl + RK_HCTL_CH_PROCESSED, ch = c);
        }
        if (finished) {
            __threadfence_system();
            if (paused)
                rk_store(a.hctl + RK_HCTL_PAUSED, pause);
            else
                rk_store(a.hctl + RK_HCTL_TERMINATED, 1);
            return;
        }
        if ((++beat & 63) == 0) rk_store(a.hctl + RK_HCTL_HEARTBEAT, beat);
        if (a.idle_nap_ns) __nanosleep(a.idle_nap_ns);
    }
}

extern "C" __global__ void __launch_bounds__(32 * (RK_WARPS_PER_BLOCK + 1), 1)
rk_ring_persistent(rk_ring_args a) {
    const rk_u32 warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (threadIdx.x == 0) {
        rk_links_init(a.worker_warps, a.turn_wait_cycles ? a.turn_wait_cycles : RK_TURN_WAIT_CYCLES, a.k2k_solo,
                      a.k2k_lanes);
        if (a.resume && a.turns) {
            /* The turns where the warps stopped: every pass they began was
             * published before they left, so both are the lowest position
             * not taken; the reply queue's place is the last one saved. */
            rk_u64 tail = ~0ull, cr = 0;
            for (rk_u32 w = 0; w < a.worker_warps && w < RK_WARPS_PER_BLOCK; w++) {
                const rk_u64 *sv = a.counts + (size_t)RK_COUNT_WORDS * w;
                const rk_u64 pos = rk_load(sv + 2) + (rk_u64)(__ffs(~(rk_u32)rk_load(sv + 3)) - 1);
                if (pos < tail) tail = pos;
                if (rk_load(sv + 4) > cr) cr = rk_load(sv + 4);
            }
            rk_ch.host_tail = tail;
            /* The host's place is unknown until reloaded: assume no room. */
            const rk_u64 cap = a.capacity_mask + 1;
            rk_ch.cr_head = rk_ch.cr_promised = cr;
            rk_ch.cr_received = cr > cap ? cr - cap : 0;
        }
    }
    __syncthreads();
    if (warp == RK_WARPS_PER_BLOCK) {
        if (blockIdx.x == 0 && lane == 0) rk_control(a);
        return;
    }
    const rk_u32 gw = blockIdx.x * RK_WARPS_PER_BLOCK + warp;
    if (gw < a.worker_warps) rk_worker(a, gw, lane, warp);
}

/* ---- traditional pattern: one thread per message of a batch ----------------- */

/* in: a 16-byte header holding the count, then messages RK_IN_STAGE apart.
 * out: replies RK_OUT_STAGE apart, each followed by its status word. */
extern "C" __global__ void rk_ring_batch(const unsigned char *in, unsigned char *out, unsigned char *state) {
    const rk_u32 count = *(const rk_u32 *)in;
    const rk_u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x == 0) rk_links_init(1, RK_TURN_WAIT_CYCLES, 0u, 0u); /* no channels here: rk_emit returns RK_EMIT_NO_PORT */
    __syncthreads();
    if (i >= count) return;
    unsigned char *resp = out + (size_t)i * RK_OUT_STAGE;
    for (int b = 0; b < RK_OUT_STAGE; b += 16) *(uint4 *)(resp + b) = make_uint4(0, 0, 0, 0);
    int status = rk_call_handler(in + 16 + (size_t)i * RK_IN_STAGE, resp, state);
    ((int *)resp)[(RK_REPLY_BYTES + 3) / 4] = status;
}
