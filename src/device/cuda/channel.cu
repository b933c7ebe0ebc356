/* K2K channels, device side: compiled by NVRTC between the user's handler
 * and ring.cu (src/cuda/cuda_ring_source.c); the host side is
 * src/cuda/cuda_channel.c, the design docs/channels.md.
 *
 * A channel is a ring in device memory written as tagged 8-byte words (the
 * format of the host queues in ring.cu: 4 payload bytes and the position's
 * lap + 1 in each word), so the destination polls L2, never the bus, and
 * needs no fence or shared tail on the data path. Every access here is a
 * relaxed load or store at gpu scope: both kernels run on this GPU. A kernel
 * with channels is ordered: its worker warps (1 to 8, one block) keep
 * position order through turns per input (the host queue and each channel),
 * shared words of the block:
 *  - Each warp polls its own chunks of an input (32 positions; warp w owns
 *    chunks w, w + W, ...). A pass BEGINS when the input's begin turn
 *    reaches its first position: under the block's lock it gets the next
 *    positions of every open port for the lanes allowed to emit there (lane
 *    = message order in the pass), its room in the reply queue, stores
 *    TAKEN and moves the turn on. Passes begin in position order, so each
 *    port gets messages in the order of every input feeding it (and of the
 *    host's sends), exactly once; with one warp the turns are its own.
 *  - rk_emit, called by the lane that runs a handler, writes the message
 *    straight into its slot as tagged words: no staging, no copy after the
 *    handlers, and the handlers of several warps run at once. A lane that
 *    was given a slot and did not emit (the handler did not, or failed)
 *    writes a SKIP word there after the handlers: the destination takes the
 *    slot without running a handler. Replies to channel messages are placed
 *    in the reply queue at the input's publish turn (input order).
 *  - Credit: the consumer publishes how far it has taken (TAKEN); the
 *    producer gives out position p only when p - capacity has been taken.
 *    It reads TAKEN only when its cached copy shows less than a pass of
 *    room. HOLD ports limit how many messages a pass takes, so one emit per
 *    port per message always has room; REPORT ports allow the emit of a
 *    lane only while the positions given before it cannot fill the channel,
 *    else RK_EMIT_FULL (the handler decides).
 *  - Closing (a destination that terminates) is a handshake off the data
 *    path: the destination stores CLOSED; the producer, between passes,
 *    sees it, gives no later pass a position there (RK_EMIT_CLOSED) and
 *    stores FINAL = head + 1 (every position given is below head). A
 *    producer that leaves for good stores FINAL too (its last warp). The
 *    destination drains until it has taken everything below FINAL - 1:
 *    every message emitted before the producer saw CLOSED is delivered,
 *    every later one refused, none lost or taken twice, and no pass pays a
 *    fence for it.
 * The link table (which channels a kernel has) lives in the pinned control
 * block; the host bumps a generation word after changing it, the control
 * thread republishes the word into device memory, and the worker reloads
 * the table when it changes: channels can be connected while kernels run. */

typedef unsigned long long rk_u64;
typedef unsigned int rk_u32;

/* Lanes (channel_lanes.cu) are compiled only into kernels that may use
 * them (the host defines RK_LANES_BUILT 1 for several ordered warps): a
 * kernel of one warp is compiled exactly as without them (its lean loop is
 * sensitive to the code around it: lanes-1 measured 1.21 against 1.06 us a
 * hop with them in). */
#ifndef RK_LANES_BUILT
#define RK_LANES_BUILT 0
#endif
#if RK_LANES_BUILT
#define RK_LANES_ACTIVE() (*(volatile rk_u32 *)&rk_ch.lanes != 0u)
#else
#define RK_LANES_ACTIVE() false
#endif
/* A wide block with the lanes: each warp's staging ends with a raw buffer,
 * a chunk's input slots as they are in the ring (channel_lanes.cu copies
 * the warp's next chunk there ahead of its pass); the host counts it
 * (cuda_ring_persistent.c, choose_chunk). */
#if RK_LANES_BUILT && RK_WARPS_PER_BLOCK > 8
#define RK_LANES_RAW_BYTES (32 * RK_IN_LL * 8)
#else
#define RK_LANES_RAW_BYTES 0
#endif

/* Host-mapped control words (cuda_ring_layout.h). */
#define RK_HCTL_LINK_GEN 48
#define RK_HCTL_IN_COUNT 49
#define RK_HCTL_CR_RECEIVED 56
#define RK_HCTL_OUT 64  /* 8 words per port */
#define RK_HCTL_IN 128  /* 8 words per input */
#define RK_HCTL_HOST_PUBLISHED 256
#define RK_DCTL_LINK_GEN 3
#define RK_DCTL_CR_RECEIVED 4
#define RK_DCTL_HOST_PUBLISHED 5
/* A channel's control words in device memory (one writer per line). */
#define RK_CH_HEAD 0       /* producer: messages emitted (statistics) */
#define RK_CH_FINAL 1      /* producer: 0, or 1 + its last position (it emits no more) */
#define RK_CH_REFUSED 2    /* producer: emits refused */
#define RK_CH_POS 3        /* producer: positions given out (messages and SKIP slots), kept over a pause */
#define RK_CH_TAKEN 16     /* consumer: positions taken */
#define RK_CH_DELIVERED 17 /* consumer: messages taken (SKIP slots not counted) */
#define RK_CH_CLOSED 32  /* consumer: 0, or the rk_status every emit gets */
#define RK_FLOW_HOLD 1
#define RK_FLOW_REPORT 2
#define RK_CH_UNITS (RK_IN_LL / 2) /* 16-byte units per input slot */
#define RK_CH_LOADS 8              /* 16-byte loads per lane in flight in one poll round */
#define RK_CH_SKIP 0x80000000u /* in a word's tag: the slot holds no message */
#define RK_CH_MIN_WINDOW 4         /* slots a poll reads while messages come one at a time */
/* rk_links.solo (RK__CUDA_SOLO_* in cuda_ring_layout.h): when the only
 * worker warp makes its next channel begin ready (rk_solo_plan). */
#define RK_SOLO_AFTER_PASS 1u  /* after every channel pass */
#define RK_SOLO_IDLE 2u        /* when a channel poll finds nothing */
#define RK_SOLO_TAKEN_EARLY 4u /* a planned pass tells TAKEN before its handlers */
#define RK_SOLO_LONE 8u        /* only a pass of one message takes the plan */
#define RK_SOLO_POLL_PLAIN 16u /* a poll's first position without shuffles */
#define RK_SOLO_LEAN 32u       /* the lean loop of channel_solo.cu while only channels have messages */
#define RK_SOLO_LEAN_EMIT 64u  /* its emits go to slots found before the handlers (rk_lean_emit) */

struct rk_out_port {
    rk_u64 *ring, *ctl;
    rk_u64 head;    /* positions given out so far (in begin order) */
    rk_u64 taken;   /* the consumer's TAKEN, as last read */
    rk_u64 emitted; /* messages written (statistics) */
    rk_u32 log2cap, words, flow, msg_bytes, refused, refused_stored;
    int status;     /* 0 open, else what emits return */
    rk_u32 final_stored;
};

struct rk_in_port {
    rk_u64 *ring, *ctl;
    rk_u64 tail;      /* begin turn: the next position to take */
    rk_u64 pub;       /* publish turn: the next position whose replies are placed */
    rk_u64 delivered; /* messages taken (statistics) */
    rk_u32 log2cap, reply_all, report, id; /* report: the producer refuses (RK_EMIT_FULL) when short */
};

/* One worker warp's pass: per port, the lanes given a slot and the first
 * slot's position; per lane and port, whether it emitted. */
struct rk_warp_pass {
    rk_u64 base[8];
    rk_u64 cr_base;
    rk_u32 allow[8];
    rk_u32 ports; /* the ports with lanes allowed in this pass */
    unsigned char emitted[8][32];
    rk_u32 cursor; /* the input this warp polls first */
#if RK_LANES_RAW_BYTES
    /* Lanes: the position (low 32 bits; a stale match fails the slots'
     * tags) whose chunk, to its end, is being copied into this warp's raw
     * buffer (channel_lanes.cu), or ~0. */
    rk_u32 pf_pos;
#endif
#if RK_LANES_BUILT
    /* Lanes (channel_lanes.cu): the next input position this warp takes,
     * the end of its last pass, and whether it has seen the request to
     * leave lanes. */
    rk_u64 lnext, lend;
    rk_u32 lacked;
    /* Reply room this warp holds for its lanes passes (promised in
     * cr_promised, not yet used): topped up when a pass needs more, given
     * back when lanes end, so that a pass without failures touches no
     * shared counter of the reply queue. */
    rk_u32 resv;
    /* The emit buffer (rk_lanes_ebuf): whether this pass's emits wait
     * there, and per lane the port its buffered message goes to (port + 1,
     * 0: none). */
    rk_u32 ebuf;
    unsigned char ebuf_port[32];
#endif
};

struct rk_links {
    rk_u64 gen;
    rk_u64 host_tail;                         /* the host queue's begin turn (kernels with turns) */
    rk_u64 cr_head, cr_promised, cr_received; /* the channel-reply queue: placed, promised, taken by the host */
    rk_u32 enabled, in_count, inputs_closed, lock, exited, warps;
    rk_u32 turn_wait; /* cycles a begin turn is waited for (rk_turn_wait) */
    /* One worker warp: the next channel pass's begin, made ready ahead
     * (rk_solo_plan): whether it is, the ports it gives positions on (their
     * wp.base set), and how many messages it may take without a cut; and
     * when it is made (RK_SOLO_* bits). */
    rk_u32 plan_ok, plan_ports, plan_room, solo;
    rk_u32 ports; /* the connected ports, a bit each */
#if RK_LANES_BUILT
    /* Lanes (channel_lanes.cu): RK_LANES_* state; the RK_CUDA_K2K_LANES
     * bits; warps that saw the request to leave; warps that left
     * rk_worker's loop; per port, output position - input position. */
    rk_u32 lanes, lanes_bits, lanes_acks, lanes_out;
    rk_u64 lanes_d[8];
#endif
    rk_out_port out[8];
    rk_in_port in[16];
    rk_warp_pass w[RK_WARPS_PER_BLOCK];
};

/* The channel code's static shared memory, at most: rk__cuda_channel_shared
 * (cuda_ring_layout.h) gives the same bound. */
#define RK_CH_SHARED_BOUND (RK_WARPS_PER_BLOCK <= 8 ? 6144 : 2048 + 464 * RK_WARPS_PER_BLOCK)
static_assert(sizeof(rk_links) <= RK_CH_SHARED_BOUND, "rk_links must fit rk__cuda_channel_shared (cuda_ring_layout.h)");

/* One copy per block; only a kernel whose worker warps are all in one block
 * (the host refuses others) has channels. Its fields are shared by the
 * block's worker warps: the ports' positions and credit, the inputs' turns
 * and the reply queue's place change under rk_ch.lock (lane 0 of a warp,
 * short sections); a warp's own pass record is its own. */
__shared__ rk_links rk_ch;

/* The lanes' emit buffer (channel_lanes.cu): in a lanes pass, a lane's
 * first emit is copied here and the warp writes the slots after the
 * handlers, 16 bytes a lane side by side (4 slots an instruction instead
 * of 32 lines: +16% device only at 15 warps a stage, session 14). Only in
 * a wide block (the host counts it, rk__cuda_channel_shared) for messages
 * of this kernel's own size, within 37.5 KiB; slots an odd number of
 * 16-byte units apart. */
#define RK_LANES_EBUF_STRIDE ((((RK_MSG_BYTES + 15) / 16) | 1) * 16)
#if RK_LANES_BUILT && RK_WARPS_PER_BLOCK > 8 && RK_MSG_BYTES % 4 == 0 && RK_WARPS_PER_BLOCK * 32 * RK_LANES_EBUF_STRIDE <= 38400
#define RK_LANES_EBUF 1
__shared__ __align__(16) unsigned char rk_lanes_ebuf[RK_WARPS_PER_BLOCK][32][RK_LANES_EBUF_STRIDE];
static_assert(sizeof(rk_links) + sizeof(rk_lanes_ebuf) <= 2048 + 464 * RK_WARPS_PER_BLOCK + 38400,
              "the link table and the lanes' emit buffer must fit rk__cuda_channel_shared (cuda_ring_layout.h)");
#else
#define RK_LANES_EBUF 0
#endif

#if RK_LANES_BUILT && defined(RK_LANES_PROFILE)
/* Measurement only (RK_CUDA_RING_DEFINES=RK_LANES_PROFILE): per worker
 * warp, where its lanes passes spend their cycles (channel_lanes.cu). */
enum { RK_LP_CALLS, RK_LP_PASSES, RK_LP_SLOTS, RK_LP_EMPTY, RK_LP_CUT, RK_LP_WAITED, RK_LP_POLL, RK_LP_CREDIT,
       RK_LP_HANDLE, RK_LP_WAIT, RK_LP_PUBLISH, RK_LP_BETWEEN, RK_LP_RELOADS, RK_LP_FIRST, RK_LP_BUSY, RK_LP_LAST, RK_LP_N };
/* (no room for another word in 48 KiB: with the raw buffer, the passes polled from its copies count in BETWEEN's place) */
#define RK_LP_PF_HIT RK_LP_BETWEEN
__shared__ rk_u64 rk_lanes_prof[RK_WARPS_PER_BLOCK][RK_LP_N];
__shared__ rk_u32 rk_lanes_prof_out;
#endif

/* Lanes (channel_lanes.cu): rk_links.lanes. */
#define RK_LANES_OFF 0u
#define RK_LANES_ON 1u
#define RK_LANES_LEAVING 2u
/* Lane 0: asks the warps to leave lanes (channel_lanes.cu says when). */
__device__ __forceinline__ void rk_lanes_leave_request() {
#if RK_LANES_BUILT
    if (*(volatile rk_u32 *)&rk_ch.lanes == RK_LANES_ON) atomicCAS(&rk_ch.lanes, RK_LANES_ON, RK_LANES_LEAVING);
#endif
}

/* p over the set bits of mask (the hot paths visit connected ports only). */
#define RK_FOR_BITS(p, mask) for (rk_u32 m_ = (mask), p = 0; m_ && ((p = __ffs(m_) - 1), 1); m_ &= m_ - 1)

/* Channel memory: relaxed at gpu scope (never the system: both ends are on
 * this GPU). The link table in host memory: volatile (the host writes it). */
__device__ __forceinline__ rk_u64 rk_ch_load(const rk_u64 *p) {
    rk_u64 v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void rk_ch_store(rk_u64 *p, rk_u64 v) {
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ void rk_ch_load2(const rk_u64 *p, rk_u64 &a, rk_u64 &b) {
    asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(p));
}
__device__ __forceinline__ void rk_ch_store2(rk_u64 *p, rk_u64 a, rk_u64 b) {
    asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(a), "l"(b) : "memory");
}
__device__ __forceinline__ rk_u64 rk_host_load(const rk_u64 *p) { return *(const volatile rk_u64 *)p; }
__device__ __forceinline__ rk_u32 rk_ch_warp_or(rk_u32 v) {
#if __CUDA_ARCH__ >= 800
    return __reduce_or_sync(0xffffffffu, v);
#else
    for (int d = 16; d > 0; d >>= 1) v |= __shfl_xor_sync(0xffffffffu, v, d);
    return v;
#endif
}

/* Shared words other warps write: read from memory every time. */
__device__ __forceinline__ rk_u64 rk_vload(const rk_u64 *p) { return *(const volatile rk_u64 *)p; }
/* With one worker warp nothing here is shared with another warp: no lock,
 * fence or atomic (measured: they cost a lone message's hop microseconds). */
__device__ __forceinline__ bool rk_ch_multi() { return rk_ch.warps > 1; }
__device__ __forceinline__ void rk_vstore(rk_u64 *p, rk_u64 v) {
    if (rk_ch_multi()) __threadfence_block(); /* what this warp wrote before the turn moves is seen with it */
    *(volatile rk_u64 *)p = v;
}
/* *p += v, returning the old value. */
__device__ __forceinline__ rk_u64 rk_ch_add(rk_u64 *p, rk_u64 v) {
    if (rk_ch_multi()) return atomicAdd(p, v);
    const rk_u64 old = *p;
    *p = old + v;
    return old;
}

/* The block's lock over the shared port, turn and reply-queue fields: lane 0
 * of a warp, for a few dozen instructions (a TAKEN reload at most). */
__device__ __forceinline__ void rk_ch_lock() {
    if (!rk_ch_multi()) return;
    while (atomicCAS(&rk_ch.lock, 0u, 1u) != 0u) {
    }
    __threadfence_block();
}
__device__ __forceinline__ void rk_ch_unlock() {
    if (!rk_ch_multi()) return;
    __threadfence_block();
    atomicExch(&rk_ch.lock, 0u);
}

/* Monotone control words (several warps store them, in any order). */
__device__ __forceinline__ void rk_ch_store_max(rk_u64 *p, rk_u64 v) {
    asm volatile("red.relaxed.gpu.global.max.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ void rk_lean_init(); /* channel_solo.cu */

/* Thread 0 at kernel start: nothing linked until the table is read. */
__device__ void rk_links_init(rk_u32 warps, rk_u32 turn_wait, rk_u32 solo, rk_u32 lanes) {
    rk_lean_init();
#if RK_LANES_BUILT
    rk_ch.lanes = 0;
    rk_ch.lanes_bits = warps > 1 ? lanes : 0u;
    rk_ch.lanes_acks = 0;
    rk_ch.lanes_out = 0;
#ifdef RK_LANES_PROFILE
    rk_lanes_prof_out = 0;
#endif
#else
    (void)lanes;
#endif
    rk_ch.turn_wait = turn_wait;
    rk_ch.plan_ok = 0;
    rk_ch.solo = warps == 1 ? solo : 0u; /* several warps: the turns' begin only */
    rk_ch.gen = 0;
    rk_ch.enabled = 0;
    rk_ch.in_count = 0;
    rk_ch.ports = 0;
    rk_ch.inputs_closed = 0;
    rk_ch.lock = 0;
    rk_ch.exited = 0;
    rk_ch.warps = warps;
    rk_ch.host_tail = 0;
    rk_ch.cr_head = rk_ch.cr_promised = rk_ch.cr_received = 0;
    for (int p = 0; p < 8; p++) rk_ch.out[p].ring = 0;
    for (int i = 0; i < 16; i++) rk_ch.in[i].ring = 0;
    for (int w = 0; w < RK_WARPS_PER_BLOCK; w++) {
        rk_ch.w[w].cursor = w;
        rk_ch.w[w].ports = 0;
#if RK_LANES_BUILT
        rk_ch.w[w].lnext = rk_ch.w[w].lend = 0;
        rk_ch.w[w].lacked = 0;
        rk_ch.w[w].ebuf = 0;
        for (int l = 0; l < 32; l++) rk_ch.w[w].ebuf_port[l] = 0;
#ifdef RK_LANES_PROFILE
        for (int k = 0; k < RK_LP_N; k++) rk_lanes_prof[w][k] = 0;
#endif
#endif
        for (int p = 0; p < 8; p++) {
            rk_ch.w[w].allow[p] = 0;
            for (int l = 0; l < 32; l++) rk_ch.w[w].emitted[p][l] = 0;
        }
    }
}

/* Under the lock, once the port is closed or the kernel leaves for good:
 * FINAL = head + 1. Every position is given out under the lock and none
 * after this, so head is the last; the destination takes the slots below
 * it by their tags (the fence is for the statistics' sake only). */
__device__ __forceinline__ void rk_port_final(rk_out_port &o) {
    if (o.final_stored) return;
    o.final_stored = 1;
    __threadfence();
    rk_ch_store(o.ctl + RK_CH_FINAL, o.head + 1);
}

/* The whole warp, with the generation it loaded from device memory (the
 * same value in every lane): reloads the table when the host changed it.
 * New ports start from their channel's control words (a relaunch after a
 * pause, too). Rare: only here does the worker read host memory for links. */
__device__ void rk_links_refresh(const rk_u64 *hctl, rk_u64 gen, rk_u32 lane) {
    if (gen <= rk_vload(&rk_ch.gen)) return;
    __syncwarp();
    if (lane == 0) {
        rk_ch_lock();
        /* In lanes (channel_lanes.cu) the ports are fixed: they leave first. */
        if (gen > rk_ch.gen && RK_LANES_ACTIVE()) {
            rk_lanes_leave_request();
        } else if (gen > rk_ch.gen) {
            __threadfence_system(); /* the table's entries were written before the generation */
            for (int p = 0; p < 8; p++) {
                const rk_u64 *e = hctl + RK_HCTL_OUT + 8 * p;
                rk_u64 *ring = (rk_u64 *)rk_host_load(e);
                if (!ring || rk_ch.out[p].ring) continue;
                rk_out_port &o = rk_ch.out[p];
                const rk_u64 packed = rk_host_load(e + 3), sizes = rk_host_load(e + 4);
                o.ctl = (rk_u64 *)rk_host_load(e + 1);
                o.log2cap = (rk_u32)(packed & 0xff);
                o.words = (rk_u32)((packed >> 8) & 0xffff);
                o.flow = (rk_u32)(packed >> 24);
                o.msg_bytes = (rk_u32)sizes;
                o.head = rk_ch_load(o.ctl + RK_CH_POS);
                o.emitted = rk_ch_load(o.ctl + RK_CH_HEAD);
                o.taken = rk_ch_load(o.ctl + RK_CH_TAKEN);
                o.refused = o.refused_stored = (rk_u32)rk_ch_load(o.ctl + RK_CH_REFUSED);
                o.final_stored = 0;
                /* Closed already (seen before a pause, or since): refused from
                 * the first pass on, FINAL published again (the same head). */
                const rk_u64 closed = rk_ch_load(o.ctl + RK_CH_CLOSED);
                o.status = (int)(rk_u32)closed;
                for (int w = 0; w < RK_WARPS_PER_BLOCK; w++) rk_ch.w[w].allow[p] = 0;
                __threadfence_block();
                o.ring = ring;
                rk_ch.ports |= 1u << p;
                if (closed) rk_port_final(o);
            }
            const rk_u32 n = (rk_u32)rk_host_load(hctl + RK_HCTL_IN_COUNT);
            for (rk_u32 i = 0; i < n && i < 16; i++) {
                const rk_u64 *e = hctl + RK_HCTL_IN + 8 * i;
                if (rk_ch.in[i].ring) continue;
                rk_in_port &c = rk_ch.in[i];
                c.ctl = (rk_u64 *)rk_host_load(e + 1);
                const rk_u64 packed = rk_host_load(e + 2);
                c.log2cap = (rk_u32)(packed & 0xff);
                c.reply_all = (rk_u32)((packed >> 8) & 1);
                c.report = (rk_u32)((packed >> 9) & 1);
                c.id = (rk_u32)rk_host_load(e + 3);
                c.tail = c.pub = rk_ch_load(c.ctl + RK_CH_TAKEN);
                c.delivered = rk_ch_load(c.ctl + RK_CH_DELIVERED);
                __threadfence_block();
                c.ring = (rk_u64 *)rk_host_load(e);
            }
            __threadfence_block();
            rk_ch.in_count = n < 16 ? n : 16;
            rk_ch.enabled = 1;
            rk_ch.plan_ok = 0; /* new ports: the next begin is the general one */
            rk_ch.gen = gen;
        }
        rk_ch_unlock();
    }
    __syncwarp();
}

/* Lane p (< 8), issued at the top of a pass beside the other control loads:
 * port p's CLOSED word, 0 when the port is not open. */
__device__ __forceinline__ rk_u64 rk_ports_closed_load(rk_u32 lane) {
    if (lane >= 8 || !rk_ch.enabled) return 0;
    const rk_out_port &o = rk_ch.out[lane];
    return o.ring && !o.status ? rk_ch_load(o.ctl + RK_CH_CLOSED) : 0;
}

/* The whole warp, between passes: a port whose destination closed is closed
 * for good here (later passes get no position on it), FINAL stored. */
__device__ void rk_ports_closed_apply(rk_u64 closed, rk_u32 lane) {
    const rk_u32 ports = __ballot_sync(0xffffffffu, closed != 0);
    if (!ports) return;
    rk_u32 status[8];
#pragma unroll
    for (int p = 0; p < 8; p++) status[p] = (rk_u32)__shfl_sync(0xffffffffu, closed, p);
    if (lane == 0) {
        rk_u32 ports_ = ports;
        rk_ch_lock();
        rk_ch.plan_ok = 0; /* closed ports: the next begin is the general one */
        /* In lanes (channel_lanes.cu) the ports' heads are not kept: they
         * leave first, and a later pass applies the close (CLOSED stays). */
        if (RK_LANES_ACTIVE()) {
            rk_lanes_leave_request();
            ports_ = 0;
        }
        for (int p = 0; p < 8; p++) {
            rk_out_port &o = rk_ch.out[p];
            if (!((ports_ >> p) & 1u) || o.status) continue;
            o.status = (int)status[p];
            rk_port_final(o);
        }
        rk_ch_unlock();
    }
    __syncwarp();
}

/* The whole warp, leaving for good (terminated, not paused), and at a pause:
 * where each port stands is kept for a relaunch (POS); once every worker warp
 * has left for good, no port will get another message (FINAL). */
__device__ void rk_ports_leave(rk_u32 lane, bool for_good) {
    __syncwarp();
    if (lane == 0 && rk_ch.enabled) {
        rk_ch_lock();
        rk_ch.plan_ok = 0;
        const bool last = for_good && ++rk_ch.exited >= rk_ch.warps;
        for (int p = 0; p < 8; p++) {
            rk_out_port &o = rk_ch.out[p];
            if (!o.ring) continue;
            rk_ch_store_max(o.ctl + RK_CH_POS, o.head);
            if (last) rk_port_final(o);
        }
        rk_ch_unlock();
    }
    __syncwarp();
}

/* The lowest n set bits of mask (all of them when it has no more). */
__device__ __forceinline__ rk_u32 rk_first_bits(rk_u32 mask, rk_u64 n) {
    if (n >= (rk_u64)__popc(mask)) return mask;
    if (n == 0) return 0;
    /* __fns: the position of the (n + 1)-th set bit, below 32 here. */
    return mask & ((1u << __fns(mask, 0, (int)n + 1)) - 1u);
}

#define RK_FRESH_CR (1u << 8) /* with ports 0-7: what rk_emit_begin has just reloaded */
/* rk_emit_begin's general case, under the lock: a pass that some HOLD port
 * or the reply queue cannot take whole (`fresh`: the ports whose TAKEN, and
 * RK_FRESH_CR: whether the host's place, rk_emit_begin has just reloaded;
 * not again). Rare: a stage whose output is full, or a reply queue the
 * host has not emptied. Lane 0 of warp wi, holding the begin turn of the pass's input, before its
 * handlers. `lanes`: the pass's slots (lane = order), `skip` those of them
 * that hold no message. Returns the lanes the pass takes: all of them, or
 * cut before the first message that finds no room on a HOLD port or (when
 * cr_cap is not 0: a channel input) in the channel-reply queue (cr_cap
 * slots; the host's place relayed in *cr_word). Under the lock, in begin
 * order: each open port gives the pass's messages allowed there (HOLD: all
 * taken; REPORT: those that fit) its next positions. TAKEN (and the host's
 * place) are loaded only when the cached room is short of the pass. */
__device__ rk_u32 rk_emit_begin_cut(rk_u32 lanes, rk_u32 skip, rk_u32 wi, rk_u64 cr_cap, const rk_u64 *cr_word,
                                    rk_u32 fresh) {
    rk_warp_pass &wp = rk_ch.w[wi];
    const rk_u32 real = lanes & ~skip;
    const rk_u32 want = __popc(real);
    rk_u64 credit = 32;
    if (cr_cap && want) {
        if (!(fresh & RK_FRESH_CR) && cr_cap - (rk_ch.cr_promised - rk_ch.cr_received) < want) {
            /* Never backwards: after a relaunch the relayed word starts at 0. */
            const rk_u64 r = *(const volatile rk_u64 *)cr_word;
            if (r > rk_ch.cr_received) rk_ch.cr_received = r;
        }
        const rk_u64 room = cr_cap - (rk_ch.cr_promised - rk_ch.cr_received);
        if (room < credit) credit = room;
    }
    /* No array of rooms: indexed by a port number it would live in local
     * memory (the kernel's only stack frame); the second loop recomputes. */
    const rk_u32 ports = want ? rk_ch.ports : 0u;
    RK_FOR_BITS(p, ports) {
        rk_out_port &o = rk_ch.out[p];
        if (o.status) continue;
        const rk_u64 cap = 1ull << o.log2cap;
        if (!((fresh >> p) & 1u) && cap - (o.head - o.taken) < want) {
            /* REPORT refuses on a short credit: the fence orders this pass's
             * earlier loads (messages that came back around a cycle) before
             * TAKEN, which their consumer stored before emitting them
             * (rk_channel_taken), so room they freed is seen. Off the hot
             * path: only when the cached room is short. */
            if (o.flow == RK_FLOW_REPORT) __threadfence();
            const rk_u64 t = rk_ch_load(o.ctl + RK_CH_TAKEN);
            if (t > o.taken) o.taken = t;
        }
        const rk_u64 room = cap - (o.head - o.taken);
        if (o.flow == RK_FLOW_HOLD && room < credit) credit = room;
    }
    /* The messages kept: the first `credit`; the pass ends before the first
     * message cut (SKIP slots before it are taken with the pass). */
    const rk_u32 kept_real = rk_first_bits(real, credit);
    rk_u32 kept = lanes;
    if (kept_real != real) {
        const rk_u32 cut = __ffs(real & ~kept_real) - 1;
        kept = lanes & ((1u << cut) - 1u);
    }
    rk_u32 allowed = 0;
    RK_FOR_BITS(p, kept_real ? ports : 0u) {
        rk_out_port &o = rk_ch.out[p];
        if (o.status) continue;
        const rk_u64 room = (1ull << o.log2cap) - (o.head - o.taken);
        const rk_u32 allow = o.flow == RK_FLOW_HOLD ? kept_real : rk_first_bits(kept_real, room);
        if (!allow) continue;
        wp.allow[p] = allow;
        wp.base[p] = o.head;
        o.head += __popc(allow);
        allowed |= 1u << p;
    }
    wp.ports = allowed;
    if (cr_cap && kept_real) rk_ch_add(&rk_ch.cr_promised, (rk_u64)__popc(kept_real));
    return kept;
}

/* Lane 0 of warp wi, holding the begin turn of the pass's input, before its
 * handlers: rk_emit_begin_cut's result, in one loop over the ports for the
 * common case, a pass that every port and the reply queue take whole. Each
 * open port gives the pass's messages its next positions as it goes (HOLD:
 * all of them; REPORT: those that fit); a HOLD port or a reply queue short
 * of the pass undoes them (under the lock, so nobody saw them) and the
 * general case cuts the pass. */
__device__ rk_u32 rk_emit_begin(rk_u32 lanes, rk_u32 skip, rk_u32 wi, rk_u64 cr_cap, const rk_u64 *cr_word) {
    rk_warp_pass &wp = rk_ch.w[wi];
    const rk_u32 real = lanes & ~skip;
    const rk_u32 want = __popc(real);
    rk_ch_lock();
    if (RK_LANES_ACTIVE()) {
        /* The channel input runs in lanes (channel_lanes.cu): the ports'
         * positions are the lanes' until they leave; this pass waits. */
        rk_ch_unlock();
        return 0;
    }
    rk_ch.plan_ok = 0; /* heads move: a plan made before is stale */
    bool cut = false;
    rk_u32 fresh = 0;
    if (cr_cap && want) {
        if (cr_cap - (rk_ch.cr_promised - rk_ch.cr_received) < want) {
            const rk_u64 r = *(const volatile rk_u64 *)cr_word;
            if (r > rk_ch.cr_received) rk_ch.cr_received = r;
            cut = cr_cap - (rk_ch.cr_promised - rk_ch.cr_received) < want;
            fresh = RK_FRESH_CR;
        }
    }
    rk_u32 allowed = 0;
    const rk_u32 ports = want && !cut ? rk_ch.ports : 0u;
    RK_FOR_BITS(p, ports) {
        rk_out_port &o = rk_ch.out[p];
        if (o.status) continue;
        const rk_u64 cap = 1ull << o.log2cap;
        const rk_u64 head = o.head;
        if (cap - (head - o.taken) < want) {
            if (o.flow == RK_FLOW_REPORT) __threadfence(); /* rk_emit_begin_cut says why */
            const rk_u64 t = rk_ch_load(o.ctl + RK_CH_TAKEN);
            if (t > o.taken) o.taken = t;
            fresh |= 1u << p;
        }
        const rk_u64 room = cap - (head - o.taken);
        const bool hold = o.flow == RK_FLOW_HOLD;
        if (hold && room < want) {
            cut = true;
            break;
        }
        const rk_u32 allow = hold ? real : rk_first_bits(real, room);
        if (!allow) continue;
        wp.allow[p] = allow;
        wp.base[p] = head;
        o.head = head + __popc(allow);
        allowed |= 1u << p;
    }
    rk_u32 kept = lanes;
    if (cut) {
        RK_FOR_BITS(p, allowed) {
            rk_ch.out[p].head -= __popc(wp.allow[p]);
            wp.allow[p] = 0;
        }
        kept = rk_emit_begin_cut(lanes, skip, wi, cr_cap, cr_word, fresh);
    } else {
        wp.ports = allowed;
        if (cr_cap && want) rk_ch_add(&rk_ch.cr_promised, (rk_u64)want);
    }
    rk_ch_unlock();
    return kept;
}

/* Lane 0 of the only worker warp (wi), when a channel poll found nothing
 * (RK_SOLO_IDLE: the warp waits anyway, and a stream, whose polls find
 * messages, pays nothing) or after a channel pass has placed its replies
 * (RK_SOLO_AFTER_PASS): the next channel pass's begin, made ready now, off
 * the path from a message to its emits. Every open port's next position goes to
 * wp.base[p] (its head, which nothing moves before that pass but a begin,
 * and a begin drops the plan), and plan_room is the fewest messages any
 * port or the reply queue has room for (TAKEN and the host's place are
 * reloaded only when the cached room is short of a whole pass). A pass of
 * up to plan_room messages then takes them all without the lock, the turn
 * or any load in lane 0 (rk_channel_pass); a larger one, or a REPORT input,
 * takes the general begin. REPORT output ports: the room used is the
 * cached one, never more than the true room, so the plan never refuses an
 * emit the general begin would allow, and never allows one it would refuse. */
__device__ void rk_solo_plan(rk_u32 wi, rk_u64 cr_cap, const rk_u64 *cr_word) {
    rk_ch.plan_ok = 0;
    if (rk_ch.warps != 1) return;
    rk_u64 room = 32;
    if (cr_cap - (rk_ch.cr_promised - rk_ch.cr_received) < room) {
        const rk_u64 r = *(const volatile rk_u64 *)cr_word;
        if (r > rk_ch.cr_received) rk_ch.cr_received = r;
    }
    const rk_u64 cr_room = cr_cap - (rk_ch.cr_promised - rk_ch.cr_received);
    if (cr_room < room) room = cr_room;
    rk_warp_pass &wp = rk_ch.w[wi];
    rk_u32 ports = 0;
    RK_FOR_BITS(p, rk_ch.ports) {
        rk_out_port &o = rk_ch.out[p];
        if (o.status) continue;
        const rk_u64 cap = 1ull << o.log2cap;
        if (cap - (o.head - o.taken) < 32) {
            if (o.flow == RK_FLOW_REPORT) __threadfence(); /* rk_emit_begin_cut says why */
            const rk_u64 t = rk_ch_load(o.ctl + RK_CH_TAKEN);
            if (t > o.taken) o.taken = t;
        }
        const rk_u64 port_room = cap - (o.head - o.taken);
        if (port_room < room) room = port_room;
        wp.base[p] = o.head;
        ports |= 1u << p;
    }
    rk_ch.plan_ports = ports;
    rk_ch.plan_room = (rk_u32)room;
    /* Made even with no room (a pass then takes the general begin, which
     * reloads TAKEN): an idle warp does not plan again at every poll. */
    rk_ch.plan_ok = 1;
}

/* The whole warp: lane 0 plans (when `go`, lane 0's value) between two
 * __syncwarp, so every lane's reads of the plan come before lane 0
 * rewrites it and its new plan before their next reads (lanes of a warp
 * are not promised to run in step; racecheck found each place that
 * planned without them, session 15). */
__device__ __forceinline__ void rk_solo_replan(rk_u32 lane, rk_u32 wi, rk_u64 cr_cap, const rk_u64 *cr_word,
                                               bool go = true) {
    __syncwarp();
    if (lane == 0 && go) rk_solo_plan(wi, cr_cap, cr_word);
    __syncwarp();
}

/* The tagged words of a message (or of a SKIP slot) at position pos of port o. */
__device__ __forceinline__ rk_u64 *rk_port_slot(const rk_out_port &o, rk_u64 pos, rk_u64 &hi) {
    hi = (rk_u64)((rk_u32)(pos >> o.log2cap) + 1u) << 32;
    return o.ring + (pos & ((1ull << o.log2cap) - 1)) * o.words;
}

/* channel_solo.cu (assembled after ring.cu): the lean loop's emit, where
 * its pass set one up (true: done, *rc what rk_emit returns). */
__device__ __forceinline__ bool rk_lean_emit(unsigned port, const void *msg, unsigned size, int &rc);

/* rk_emit (dsl.h): the lane running a handler writes its message straight
 * into the slot its pass was given, as tagged words (8 bytes each, whole). */
__device__ int rk__emit(unsigned port, const void *msg, unsigned size) {
    int lean_rc;
    if (rk_lean_emit(port, msg, size, lean_rc)) return lean_rc;
    if (!rk_ch.enabled || port >= 8 || !rk_ch.out[port].ring) return RK_EMIT_NO_PORT;
    rk_out_port &o = rk_ch.out[port];
    const rk_u32 wi = threadIdx.x >> 5, lane = threadIdx.x & 31;
    rk_warp_pass &wp = rk_ch.w[wi];
    const rk_u32 allow = wp.allow[port];
    int rc = RK_EMIT_OK;
    if (size != o.msg_bytes) rc = RK_EMIT_BAD_SIZE;
    else if (!((allow >> lane) & 1u)) rc = o.status ? o.status : RK_EMIT_FULL;
    else if (wp.emitted[port][lane]) rc = RK_EMIT_FULL; /* one emit per port per message */
    if (rc != RK_EMIT_OK) {
        atomicAdd(&o.refused, 1u);
        return rc;
    }
    wp.emitted[port][lane] = 1;
#if RK_LANES_EBUF
    if (wp.ebuf && size == RK_MSG_BYTES && !wp.ebuf_port[lane] && (((unsigned)(unsigned long long)msg) & 3u) == 0) {
        /* A lanes pass: the warp writes it after the handlers (rk_emit_finish). */
        /* 4 bytes a store (a wider one would need msg's address: the
         * handler's message would leave registers for the stack; 16-byte
         * stores of the words measured alike, session 15). */
        const rk_u32 *src = (const rk_u32 *)msg;
        rk_u32 *dst = (rk_u32 *)rk_lanes_ebuf[wi][lane];
#pragma unroll
        for (rk_u32 w = 0; w < RK_MSG_BYTES / 4; w++) dst[w] = src[w];
        wp.ebuf_port[lane] = (unsigned char)(port + 1);
        return RK_EMIT_OK;
    }
#endif
    rk_u64 hi;
    rk_u64 *slot = rk_port_slot(o, wp.base[port] + __popc(allow & ((1u << lane) - 1u)), hi);
    const rk_u32 n = (size + 3) / 4; /* payload words; the slot's others stay as they are */
    if ((((unsigned)(unsigned long long)msg) & 3u) == 0 && (size & 3u) == 0) {
        const rk_u32 *src = (const rk_u32 *)msg;
        rk_u32 w = 0;
        for (; w + 2 <= n; w += 2) rk_ch_store2(slot + w, hi | src[w], hi | src[w + 1]);
        if (w < n) rk_ch_store2(slot + w, hi | src[w], hi);
    } else {
        const unsigned char *src = (const unsigned char *)msg;
        for (rk_u32 w = 0; w < n; w += 2) {
            rk_u32 v[2] = {0u, 0u};
            for (rk_u32 b = 0; b < 8; b++)
                if (4 * w + b < size) v[b / 4] |= (rk_u32)src[4 * w + b] << (8 * (b % 4));
            rk_ch_store2(slot + w, hi | v[0], hi | v[1]);
        }
    }
    return RK_EMIT_OK;
}

/* Lane 0: waits until *turn reaches pos. A begin turn is waited for a
 * bounded time only (about 10 us; false: give up, nothing was taken, the
 * messages are polled again): a warp never blocks on one input while
 * another warp might wait for it on another. (2 us was measured: with 8
 * warps a stage, the warps far from their turn gave up, polled again and
 * came back late: 29 M msg/s a parked burst, 36 M with 10 us.) A publish
 * turn is always reached: every pass before it has begun, and a pass that
 * began only waits for the publish turns of the passes before it. */
#define RK_TURN_WAIT_CYCLES 20000 /* ~10 us, unless the host says otherwise (rk_ring_args) */
__device__ __forceinline__ bool rk_turn_wait(const rk_u64 *turn, rk_u64 pos, bool bounded) {
    if (rk_vload(turn) == pos) return true;
    const long long t0 = clock64();
    /* A begin turn stops moving once the kernel's input runs in lanes
     * (channel_lanes.cu): give up at once then. */
    while (rk_vload(turn) != pos)
        if (bounded && (clock64() - t0 > rk_ch.turn_wait || RK_LANES_ACTIVE())) return false;
    return true;
}

#if RK_LANES_EBUF
/* The whole warp of worker wi, after a lanes pass's handlers
 * (the emit buffer): the messages its lanes buffered (rk__emit) go to
 * their slots, 16 bytes (two tagged words) a lane per store, the units of
 * a slot side by side: a few slots an instruction. Before rk_emit_finish. */
__device__ __forceinline__ void rk_lanes_gather(rk_u32 lane, rk_u32 wi) {
    rk_warp_pass &wp = rk_ch.w[wi];
    const rk_u32 eport = wp.ebuf_port[lane];
    const rk_u32 K = (RK_MSG_BYTES + 7) / 8, n = (RK_MSG_BYTES + 3) / 4;
    RK_FOR_BITS(p, wp.ports) {
        const rk_u32 gathered = __ballot_sync(0xffffffffu, eport == p + 1);
        if (!gathered) continue;
        const rk_out_port &o = rk_ch.out[p];
        const rk_u64 base = wp.base[p];
        /* The port's ring in registers: each store below is a memory
         * clobber, after which o's fields would be loaded again. */
        rk_u64 *const ring = o.ring;
        const rk_u32 log2cap = o.log2cap, words = o.words;
        for (rk_u32 u = lane; u < 32 * K; u += 32) {
            const rk_u32 m = u / K, w = 2 * (u % K);
            if (!((gathered >> m) & 1u)) continue;
            /* a lanes pass gives every port its lanes 0 to n - 1: slot m is base + m */
            const rk_u64 pos = base + m, hi = (rk_u64)((rk_u32)(pos >> log2cap) + 1u) << 32;
            rk_u64 *slot = ring + (pos & ((1ull << log2cap) - 1)) * words;
            const uint2 v = *(const uint2 *)(rk_lanes_ebuf[wi][m] + 4 * w); /* w even: 8-byte aligned */
            rk_ch_store2(slot + w, hi | v.x, w + 1 < n ? hi | v.y : hi);
        }
    }
    if (eport) wp.ebuf_port[lane] = 0;
}
#endif

/* The whole warp of worker wi, after its handlers: a lane given a slot on a
 * port that it did not emit into writes a SKIP word there (the slot is
 * taken without a handler), and the statistics move on. No fence. */
__device__ void rk_emit_finish(rk_u32 lane, rk_u32 wi) {
    rk_warp_pass &wp = rk_ch.w[wi];
    __syncwarp();
    const rk_u32 ports = wp.ports; /* written by lane 0 at begin: the same in every lane */
    RK_FOR_BITS(p, ports) {
        const rk_u32 allow = wp.allow[p];
        const bool mine = wp.emitted[p][lane] != 0;
        const rk_u32 emitted = __ballot_sync(0xffffffffu, mine);
        rk_out_port &o = rk_ch.out[p];
        if (((allow >> lane) & 1u) && !mine) {
            rk_u64 hi;
            rk_u64 *slot = rk_port_slot(o, wp.base[p] + __popc(allow & ((1u << lane) - 1u)), hi);
            rk_ch_store(slot, hi | ((rk_u64)RK_CH_SKIP << 32));
        }
        wp.emitted[p][lane] = 0;
        if (lane == 0 && emitted) {
            const rk_u32 n = __popc(emitted);
            rk_ch_store_max(o.ctl + RK_CH_HEAD, rk_ch_add(&o.emitted, (rk_u64)n) + n);
        }
    }
    __syncwarp();
    if (lane == 0) {
        RK_FOR_BITS(p, ports) wp.allow[p] = 0;
        wp.ports = 0;
#if RK_LANES_EBUF
        wp.ebuf = 0;
#endif
        /* Refused emits (any port, counted by rk__emit): published when they change. */
        RK_FOR_BITS(p, rk_ch.ports) {
            rk_out_port &o = rk_ch.out[p];
            const rk_u32 refused = o.refused;
            if (refused != o.refused_stored) {
                o.refused_stored = refused;
                rk_ch_store_max(o.ctl + RK_CH_REFUSED, refused);
            }
        }
    }
    __syncwarp();
}

/* Lane 0 of worker wi, a channel input's pass: waits for the input's publish
 * turn (first), gives the `reply` lanes their places in the reply queue and
 * moves the turn on by n. The reply room was promised at begin. */
__device__ void rk_reply_publish(rk_u32 input, rk_u32 wi, rk_u64 first, rk_u32 n, rk_u32 promised, rk_u32 reply) {
    rk_in_port &c = rk_ch.in[input];
    rk_turn_wait(&c.pub, first, false);
    /* Atomics, no lock: the turn orders this input's replies; begin only
     * adds to cr_promised, and a smaller value only means more room. */
    if (reply) rk_ch.w[wi].cr_base = rk_ch_add(&rk_ch.cr_head, (rk_u64)__popc(reply));
    if (promised != (rk_u32)__popc(reply)) rk_ch_add(&rk_ch.cr_promised, (rk_u64)0 - (promised - __popc(reply)));
    rk_vstore(&c.pub, first + n);
}

/* Positions of channel input c that worker warp wi polls: with several
 * warps, input positions are dealt out in chunks of 32, warp w owning
 * chunks w, w + W, ... (as the host queue's chunks), so a warp polls its
 * next chunk while the warps before it handle theirs; one warp polls from
 * the tail. *end: where the warp's chunk ends. */
__device__ __forceinline__ rk_u64 rk_channel_start(const rk_in_port &c, rk_u32 wi, rk_u64 *end) {
    const rk_u64 t = rk_vload(&c.tail);
    const rk_u32 W = rk_ch.warps;
    if (W <= 1) {
        *end = t + 32;
        return t;
    }
    const rk_u64 c0 = t >> 5;
    /* c0 % W in 32-bit arithmetic (a 64-bit remainder is a long routine on
     * the GPU, and this runs on every poll): 2^32 = q W + r32. */
    const rk_u32 r32 = (0xffffffffu % W + 1u) % W;
    const rk_u32 c0_mod = ((rk_u32)(c0 >> 32) % W * r32 + (rk_u32)c0 % W) % W;
    const rk_u64 d = (wi + W - c0_mod) % W;
    *end = (c0 + d + 1) << 5;
    return d ? (c0 + d) << 5 : t;
}

/* One 16-byte unit u of a polled slot (slot u / RK_CH_UNITS from start):
 * staged when both its words carry the position's tag, else its slot is
 * marked bad (and SKIP when its first word says so). */
__device__ __forceinline__ void rk_ch_check(rk_u32 u, rk_u64 x, rk_u64 y, rk_u64 start, rk_u32 log2cap,
                                            unsigned char *stage, rk_u32 &bad, rk_u32 &skips) {
    const rk_u32 m = u / RK_CH_UNITS, w = u % RK_CH_UNITS;
    const rk_u32 tag = (rk_u32)((start + m) >> log2cap) + 1u;
    if ((rk_u32)(x >> 32) != tag || (rk_u32)(y >> 32) != tag) {
        bad |= 1u << m;
        if (w == 0 && (rk_u32)(x >> 32) == (tag | RK_CH_SKIP)) skips |= 1u << m;
    } else {
        rk_u32 *dst = (rk_u32 *)(stage + m * RK_IN_STAGE) + 2 * w;
        dst[0] = (rk_u32)x;
        dst[1] = (rk_u32)y;
    }
}

/* The whole warp: polls m_max (<= 32) slots of input c from position
 * start into stage (RK_IN_STAGE bytes each). The slots' 16-byte units are
 * spread over the lanes and all loaded before any is checked (one L2 round
 * trip per poll, not one per word). Returns the slots found, a prefix
 * (skips: those of them that hold no message). */
__device__ __forceinline__ rk_u32 rk_channel_poll(const rk_in_port &c, rk_u64 start, rk_u32 m_max, rk_u32 lane,
                                                  unsigned char *stage, rk_u32 &skips) {
    const rk_u32 units = m_max * RK_CH_UNITS;
    const rk_u32 want = m_max >= 32 ? 0xffffffffu : (1u << m_max) - 1u;
    const rk_u64 mask = (1ull << c.log2cap) - 1;
    rk_u32 bad = 0;
    skips = 0;
    if (units <= 32) {
        /* A few slots (messages one at a time): one load per lane, no
         * unrolled rounds: a lone warp runs every instruction of a poll
         * in series, and the poll is most of a hop. */
        rk_u64 x = 0, y = 0;
        if (lane < units)
            rk_ch_load2(c.ring + ((start + lane / RK_CH_UNITS) & mask) * RK_IN_LL + 2 * (lane % RK_CH_UNITS), x, y);
        if (lane < units) rk_ch_check(lane, x, y, start, c.log2cap, stage, bad, skips);
    } else {
        for (rk_u32 round = 0; round < units; round += 32 * RK_CH_LOADS) {
            rk_u64 x[RK_CH_LOADS], y[RK_CH_LOADS];
#pragma unroll
            for (int k = 0; k < RK_CH_LOADS; k++) {
                const rk_u32 u = round + k * 32 + lane;
                x[k] = y[k] = 0;
                if (u < units) {
                    const rk_u64 pos = start + u / RK_CH_UNITS;
                    rk_ch_load2(c.ring + (pos & mask) * RK_IN_LL + 2 * (u % RK_CH_UNITS), x[k], y[k]);
                }
            }
#pragma unroll
            for (int k = 0; k < RK_CH_LOADS; k++) {
                const rk_u32 u = round + k * 32 + lane;
                if (u < units) rk_ch_check(u, x[k], y[k], start, c.log2cap, stage, bad, skips);
            }
        }
    }
    bad = rk_ch_warp_or(bad);
    skips = rk_ch_warp_or(skips);
    const rk_u32 ok = want & (~bad | skips);
    return ok == 0xffffffffu ? ok : ((1u << (__ffs(~ok) - 1)) - 1u);
}

/* The whole warp: loads up to `max` (<= 32) slots (slot i: position
 * *first + i) of the next input with any into stage (RK_IN_STAGE bytes
 * each), from this warp's positions. The slots' 16-byte units are spread
 * over the lanes and all loaded before any is checked (one L2 round trip per
 * poll, not one per word). Returns the slots found, a prefix (*skip: those
 * of them that hold no message); *input says which input, *first where
 * they start. plain (one warp, RK_SOLO_POLL_PLAIN): every lane reads the
 * tail itself, no shuffles. */
__device__ __forceinline__ rk_u32 rk_channel_load(rk_u32 lane, rk_u32 wi, rk_u32 max, unsigned char *stage,
                                                  rk_u32 *input, rk_u64 *first, rk_u32 *skip, bool plain) {
    const rk_u32 n = rk_ch.in_count;
    rk_warp_pass &wp = rk_ch.w[wi];
    rk_u32 idx = wp.cursor < n ? wp.cursor : 0;
    for (rk_u32 v = 0; v < n; v++, idx = idx + 1 < n ? idx + 1 : 0) {
        const rk_in_port &c = rk_ch.in[idx];
        if (!c.ring) continue;
        rk_u64 start, end;
        if (plain) {
            /* One warp: the tail is its own, stored before the last pass
             * ended (__syncwarp), so every lane reads the same value. */
            start = rk_vload(&c.tail);
            end = start + 32;
        } else {
            start = __shfl_sync(0xffffffffu, rk_channel_start(c, wi, &end), 0);
            end = __shfl_sync(0xffffffffu, end, 0);
        }
        const rk_u32 m_max = (rk_u32)min((rk_u64)max, end - start);
        rk_u32 skips;
        const rk_u32 prefix = rk_channel_poll(c, start, m_max, lane, stage, skips);
        if (prefix) {
            *input = idx;
            *first = start;
            *skip = skips & prefix;
            __syncwarp(); /* every lane's staged words before any handler reads them */
            if (lane == 0) wp.cursor = idx + 1 < n ? idx + 1 : 0;
            __syncwarp();
            return prefix;
        }
    }
    return 0;
}

/* Lane 0, holding the input's begin turn, once the pass's slots are staged
 * and before its handlers: the input's slots up to first + n are taken
 * (the producer's credit; they may be overwritten now), `messages` of them
 * messages (returns how many messages were taken before: the first one's
 * sequence number), and the turn moves on. A REPORT producer refuses an emit when
 * its credit looks short, so when this kernel emits too, the fence makes
 * TAKEN visible before anything this pass emits: a message that goes
 * around a cycle and back to that producer finds the room it left (with
 * the producer's fence in rk_emit_begin). A HOLD producer only waits on a
 * stale TAKEN and reloads it, so a HOLD input pays no fence. (Telling TAKEN
 * after the handlers instead was measured: no faster a hop, slower streams.) */
__device__ rk_u64 rk_channel_taken(rk_u32 input, rk_u64 first, rk_u32 n, rk_u32 messages) {
    rk_in_port &c = rk_ch.in[input];
    rk_ch_store_max(c.ctl + RK_CH_TAKEN, first + n);
    const rk_u64 seq0 = c.delivered; /* the begin turn's holder is its only writer */
    c.delivered = seq0 + messages;
    if (messages) rk_ch_store_max(c.ctl + RK_CH_DELIVERED, seq0 + messages);
    rk_vstore(&c.tail, first + n);
    if (c.report) {
        RK_FOR_BITS(p, rk_ch.ports) {
            if (!rk_ch.out[p].status) {
                __threadfence();
                break;
            }
        }
    }
    return seq0;
}

/* The whole warp, terminating: closes every input (once), then reports
 * whether each is drained: its producer has published FINAL (it emits no
 * more) and every slot below it was taken and its replies placed. */
__device__ bool rk_channel_drained(rk_u32 lane) {
    bool drained = true;
    if (lane == 0) {
        const rk_u32 n = rk_ch.in_count;
        if (atomicExch(&rk_ch.inputs_closed, 1u) == 0u) {
            for (rk_u32 i = 0; i < n; i++)
                if (rk_ch.in[i].ring) rk_ch_store(rk_ch.in[i].ctl + RK_CH_CLOSED, (rk_u64)(rk_u32)RK_EMIT_CLOSED);
        }
        for (rk_u32 i = 0; i < n; i++) {
            const rk_in_port &c = rk_ch.in[i];
            if (!c.ring) continue;
            const rk_u64 final_ = rk_ch_load(c.ctl + RK_CH_FINAL);
            if (!final_ || rk_vload(&c.pub) != final_ - 1) drained = false;
        }
    }
    return __shfl_sync(0xffffffffu, drained ? 1 : 0, 0) != 0;
}
