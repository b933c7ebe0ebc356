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
 * position order through two turns per input (the host queue and each
 * channel), shared words of the block:
 *  - Each warp polls its own chunks of an input (32 positions; warp w owns
 *    chunks w, w + W, ...). A pass BEGINS when the input's begin turn
 *    reaches its first position: it promises its room on the ports and the
 *    reply queue, stores TAKEN, and moves the turn on; passes begin in
 *    position order.
 *  - rk_emit, called by the lane that runs a handler, stages the message
 *    per warp, lane and port. The handlers of several warps run at once.
 *  - A pass PUBLISHES when the input's publish turn reaches its first
 *    position: its staged emits get the next positions of each port in
 *    lane order (lane = message order in the pass), its replies the next
 *    places in the reply queue, and the turn moves on; then it writes the
 *    tagged words. So each port gets messages in the order of every input
 *    feeding it (and of the host's sends), exactly once. With one warp the
 *    turns are always its own.
 *  - Credit: the consumer publishes how far it has taken (TAKEN); the
 *    producer writes position p only when p - capacity has been taken. It
 *    reads TAKEN only when its cached copy shows less than a pass of room.
 *    HOLD ports limit how many messages a pass takes, so one emit per port
 *    per message always has room; REPORT ports allow the emit of a lane
 *    only while the room promised before it cannot fill the channel, else
 *    RK_EMIT_FULL (the handler decides). Room is promised under the block's
 *    lock, in begin order, so a pass that waits for its publish turn never
 *    holds room a pass before it needs.
 *  - Closing (a destination that terminates) is a handshake off the data
 *    path: the destination stores CLOSED; the producer, between passes,
 *    sees it, allows no later emit (RK_EMIT_CLOSED) and stores FINAL =
 *    head + 1 once every pass allowed to emit before has published (its
 *    last message is below head). A producer that leaves for good stores
 *    FINAL too (its last warp). The destination drains until its publish
 *    turn reaches FINAL - 1: every message emitted before the producer saw
 *    CLOSED is delivered, every later one refused, none lost or taken
 *    twice, and no pass pays a fence for it.
 * The link table (which channels a kernel has) lives in the pinned control
 * block; the host bumps a generation word after changing it, the control
 * thread republishes the word into device memory, and the worker reloads
 * the table when it changes: channels can be connected while kernels run. */

typedef unsigned long long rk_u64;
typedef unsigned int rk_u32;

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
#define RK_CH_HEAD 0     /* producer: positions written */
#define RK_CH_FINAL 1    /* producer: 0, or 1 + its last head (it emits no more) */
#define RK_CH_REFUSED 2  /* producer: emits refused */
#define RK_CH_TAKEN 16   /* consumer: positions taken */
#define RK_CH_CLOSED 32  /* consumer: 0, or the rk_status every emit gets */
#define RK_FLOW_HOLD 1
#define RK_FLOW_REPORT 2
#define RK_CH_UNITS (RK_IN_LL / 2) /* 16-byte units per input slot */
#define RK_CH_LOADS 8              /* 16-byte loads per lane in flight in one poll round */
#define RK_CH_MIN_WINDOW 4         /* slots a poll reads while messages come one at a time */

struct rk_out_port {
    rk_u64 *ring, *ctl;
    unsigned char *stage; /* worker warps x 32 lanes x stride bytes (lane i of warp w at (32 w + i) stride) */
    rk_u64 head;          /* positions given to messages so far, in publish order */
    rk_u64 promised;      /* head + the lanes allowed to emit by passes not yet published */
    rk_u64 taken;         /* the consumer's TAKEN, as last read */
    rk_u32 log2cap, words, flow, msg_bytes, stride, refused, refused_stored;
    int status;           /* 0 open, else what emits return */
    rk_u32 inflight;      /* passes allowed to emit here that have not published yet */
    rk_u32 final_stored;  /* FINAL is stored: no message will follow */
};

struct rk_in_port {
    rk_u64 *ring, *ctl;
    rk_u64 tail; /* begin turn: the next position to take */
    rk_u64 pub;  /* publish turn: the next position whose emits and reply are placed */
    rk_u32 log2cap, reply_all, report, id; /* report: the producer refuses (RK_EMIT_FULL) when short */
};

/* One worker warp's pass: which lanes may emit on each port, which did,
 * and where its emits go once placed. */
struct rk_warp_pass {
    rk_u64 base[8];
    rk_u64 cr_base;
    rk_u32 allow[8], used[8];
    rk_u32 cursor; /* the input this warp polls first */
};

struct rk_links {
    rk_u64 gen;
    rk_u64 host_tail, host_pub;               /* the host queue's turns (kernels with turns) */
    rk_u64 cr_head, cr_promised, cr_received; /* the channel-reply queue: placed, promised, taken by the host */
    rk_u32 enabled, in_count, inputs_closed, lock, exited, warps;
    rk_out_port out[8];
    rk_in_port in[16];
    rk_warp_pass w[RK_WARPS_PER_BLOCK];
};

static_assert(sizeof(rk_links) <= 4096, "rk_links must fit RK_CUDA_CHANNEL_SHARED (cuda_ring_layout.h)");

/* One copy per block; only a kernel whose worker warps are all in one block
 * (the host refuses others) has channels. Its fields are shared by the
 * block's worker warps: the ports' positions and credit, the inputs' turns
 * and the reply queue's place change under rk_ch.lock (lane 0 of a warp,
 * short sections); a warp's own pass record is its own. */
__shared__ rk_links rk_ch;

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
__device__ __forceinline__ void rk_vstore(rk_u64 *p, rk_u64 v) {
    __threadfence_block(); /* what this warp wrote before the turn moves is seen with it */
    *(volatile rk_u64 *)p = v;
}

/* The block's lock over the shared port, turn and reply-queue fields: lane 0
 * of a warp, for a few dozen instructions (a TAKEN reload at most). */
__device__ __forceinline__ void rk_ch_lock() {
    while (atomicCAS(&rk_ch.lock, 0u, 1u) != 0u) {
    }
    __threadfence_block();
}
__device__ __forceinline__ void rk_ch_unlock() {
    __threadfence_block();
    atomicExch(&rk_ch.lock, 0u);
}

/* Monotone control words (several warps store them, in any order). */
__device__ __forceinline__ void rk_ch_store_max(rk_u64 *p, rk_u64 v) {
    asm volatile("red.relaxed.gpu.global.max.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

/* Thread 0 at kernel start: nothing linked until the table is read. */
__device__ void rk_links_init(rk_u32 warps) {
    rk_ch.gen = 0;
    rk_ch.enabled = 0;
    rk_ch.in_count = 0;
    rk_ch.inputs_closed = 0;
    rk_ch.lock = 0;
    rk_ch.exited = 0;
    rk_ch.warps = warps;
    rk_ch.host_tail = rk_ch.host_pub = 0;
    rk_ch.cr_head = rk_ch.cr_promised = rk_ch.cr_received = 0;
    for (int p = 0; p < 8; p++) rk_ch.out[p].ring = 0;
    for (int i = 0; i < 16; i++) rk_ch.in[i].ring = 0;
    for (int w = 0; w < RK_WARPS_PER_BLOCK; w++) {
        rk_ch.w[w].cursor = w;
        for (int p = 0; p < 8; p++) rk_ch.w[w].allow[p] = rk_ch.w[w].used[p] = 0;
    }
}

/* Under the lock: FINAL = head + 1 once the port is closed or the kernel
 * leaves and no pass allowed to emit here is still to publish: no message
 * will get a position after head. (The destination drains by the slots'
 * tags up to FINAL - 1, so the fence is for the statistics' sake only.) */
__device__ __forceinline__ void rk_port_final(rk_out_port &o) {
    if (o.final_stored || o.inflight) return;
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
        if (gen > rk_ch.gen) {
            __threadfence_system(); /* the table's entries were written before the generation */
            for (int p = 0; p < 8; p++) {
                const rk_u64 *e = hctl + RK_HCTL_OUT + 8 * p;
                rk_u64 *ring = (rk_u64 *)rk_host_load(e);
                if (!ring || rk_ch.out[p].ring) continue;
                rk_out_port &o = rk_ch.out[p];
                const rk_u64 packed = rk_host_load(e + 3), sizes = rk_host_load(e + 4);
                o.ctl = (rk_u64 *)rk_host_load(e + 1);
                o.stage = (unsigned char *)rk_host_load(e + 2);
                o.log2cap = (rk_u32)(packed & 0xff);
                o.words = (rk_u32)((packed >> 8) & 0xffff);
                o.flow = (rk_u32)(packed >> 24);
                o.msg_bytes = (rk_u32)sizes;
                o.stride = (rk_u32)(sizes >> 32);
                o.head = o.promised = rk_ch_load(o.ctl + RK_CH_HEAD);
                o.taken = rk_ch_load(o.ctl + RK_CH_TAKEN);
                o.refused = o.refused_stored = (rk_u32)rk_ch_load(o.ctl + RK_CH_REFUSED);
                o.inflight = o.final_stored = 0;
                /* Closed already (seen before a pause, or since): refused from
                 * the first pass on, FINAL published again (the same head). */
                const rk_u64 closed = rk_ch_load(o.ctl + RK_CH_CLOSED);
                o.status = (int)(rk_u32)closed;
                for (int w = 0; w < RK_WARPS_PER_BLOCK; w++) rk_ch.w[w].allow[p] = rk_ch.w[w].used[p] = 0;
                __threadfence_block();
                o.ring = ring;
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
                __threadfence_block();
                c.ring = (rk_u64 *)rk_host_load(e);
            }
            __threadfence_block();
            rk_ch.in_count = n < 16 ? n : 16;
            rk_ch.enabled = 1;
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
 * for good here (later passes get no lanes allowed on it); its FINAL is
 * stored once no pass allowed to emit on it is still to publish. */
__device__ void rk_ports_closed_apply(rk_u64 closed, rk_u32 lane) {
    const rk_u32 ports = __ballot_sync(0xffffffffu, closed != 0);
    if (!ports) return;
    if (lane == 0) {
        rk_ch_lock();
        for (int p = 0; p < 8; p++) {
            if (!((ports >> p) & 1u)) continue;
            rk_out_port &o = rk_ch.out[p];
            if (o.status) continue;
            o.status = (int)(rk_u32)rk_ch_load(o.ctl + RK_CH_CLOSED);
            if (!o.status) o.status = RK_EMIT_CLOSED;
            rk_port_final(o);
        }
        rk_ch_unlock();
    }
    __syncwarp();
}

/* The whole warp, leaving for good (terminated, not paused): once every
 * worker warp has left, no port will get another message. */
__device__ void rk_ports_final(rk_u32 lane) {
    __syncwarp();
    if (lane == 0) {
        rk_ch_lock();
        if (++rk_ch.exited >= rk_ch.warps && rk_ch.enabled) {
            for (int p = 0; p < 8; p++) {
                rk_out_port &o = rk_ch.out[p];
                if (!o.ring) continue;
                o.inflight = 0; /* every warp has published: nothing is on its way */
                rk_port_final(o);
            }
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

/* Lane 0 of warp wi, holding the begin turn of the pass's input, before its
 * handlers: opens every port for the lanes in `lanes` (the pass's messages,
 * lane = order) and returns how many of them the pass may take: the room of
 * the fullest open HOLD port and, when cr_cap is not 0 (a channel input),
 * of the channel-reply queue (cr_cap slots; the host's place relayed in
 * *cr_word). The room is promised to this pass under the lock, so passes of
 * several warps never promise the same slot. TAKEN (and the host's place)
 * are loaded only when the cached room is short of the pass. */
__device__ rk_u32 rk_emit_begin(rk_u32 lanes, rk_u32 wi, rk_u64 cr_cap, const rk_u64 *cr_word) {
    rk_warp_pass &wp = rk_ch.w[wi];
    const rk_u32 want = __popc(lanes);
    rk_u64 credit = 32;
    rk_ch_lock();
    if (cr_cap) {
        if (cr_cap - (rk_ch.cr_promised - rk_ch.cr_received) < want) {
            /* Never backwards: after a relaunch the relayed word starts at 0. */
            const rk_u64 r = *(const volatile rk_u64 *)cr_word;
            if (r > rk_ch.cr_received) rk_ch.cr_received = r;
        }
        const rk_u64 room = cr_cap - (rk_ch.cr_promised - rk_ch.cr_received);
        if (room < credit) credit = room;
    }
    rk_u64 room[8];
    for (int p = 0; p < 8; p++) {
        rk_out_port &o = rk_ch.out[p];
        wp.used[p] = 0;
        wp.allow[p] = 0;
        room[p] = 0;
        if (!o.ring || o.status) continue;
        const rk_u64 cap = 1ull << o.log2cap;
        if (cap - (o.promised - o.taken) < want) {
            /* REPORT refuses on a short credit: the fence orders this pass's
             * earlier loads (messages that came back around a cycle) before
             * TAKEN, which their consumer stored before emitting them
             * (rk_channel_taken), so room they freed is seen. Off the hot
             * path: only when the cached room is short. */
            if (o.flow == RK_FLOW_REPORT) __threadfence();
            const rk_u64 t = rk_ch_load(o.ctl + RK_CH_TAKEN);
            if (t > o.taken) o.taken = t;
        }
        room[p] = cap - (o.promised - o.taken);
        if (o.flow == RK_FLOW_HOLD && room[p] < credit) credit = room[p];
    }
    /* The lanes allowed: the first `credit` of the pass for HOLD (all of
     * them, once the pass is cut to credit), the first `room` for REPORT. */
    const rk_u32 kept = rk_first_bits(lanes, credit);
    for (int p = 0; p < 8; p++) {
        rk_out_port &o = rk_ch.out[p];
        if (!o.ring || o.status || !kept) continue;
        const rk_u32 allow = o.flow == RK_FLOW_HOLD ? kept : rk_first_bits(kept, room[p]);
        wp.allow[p] = allow;
        o.promised += __popc(allow);
        if (allow) o.inflight++;
    }
    if (cr_cap) rk_ch.cr_promised += __popc(kept);
    rk_ch_unlock();
    return kept;
}

/* rk_emit (dsl.h): the lane running a handler stages its message. */
__device__ int rk__emit(unsigned port, const void *msg, unsigned size) {
    if (!rk_ch.enabled || port >= 8 || !rk_ch.out[port].ring) return RK_EMIT_NO_PORT;
    rk_out_port &o = rk_ch.out[port];
    rk_warp_pass &wp = rk_ch.w[threadIdx.x >> 5];
    const rk_u32 bit = 1u << (threadIdx.x & 31);
    int rc = RK_EMIT_OK;
    if (size != o.msg_bytes) rc = RK_EMIT_BAD_SIZE;
    else if (!(wp.allow[port] & bit)) rc = o.status ? o.status : RK_EMIT_FULL;
    else if (atomicOr(&wp.used[port], bit) & bit) rc = RK_EMIT_FULL;
    if (rc != RK_EMIT_OK) {
        atomicAdd(&o.refused, 1u);
        return rc;
    }
    unsigned char *dst = o.stage + threadIdx.x * o.stride; /* stride: a multiple of 16 */
    const unsigned align = size | (unsigned)(unsigned long long)msg;
    if ((align & 15u) == 0) {
        const uint4 *src = (const uint4 *)msg;
        for (unsigned i = 0; i < size / 16; i++) ((uint4 *)dst)[i] = src[i];
    } else if ((align & 3u) == 0) {
        const rk_u32 *src = (const rk_u32 *)msg;
        for (unsigned i = 0; i < size / 4; i++) ((rk_u32 *)dst)[i] = src[i];
    } else {
        const unsigned char *src = (const unsigned char *)msg;
        for (unsigned i = 0; i < size; i++) dst[i] = src[i];
    }
    return RK_EMIT_OK;
}

/* Lane 0: waits until *turn reaches pos. A begin turn is waited for a
 * bounded time only (about 2 us; false: give up, nothing was taken, the
 * messages are polled again): a warp never blocks on one input while
 * another warp might wait for it on another. A publish turn is always
 * reached: every pass before it has begun, and a pass that began only
 * waits for the publish turns of the passes before it. */
#define RK_TURN_WAIT_CYCLES 4000
__device__ __forceinline__ bool rk_turn_wait(const rk_u64 *turn, rk_u64 pos, bool bounded) {
    if (rk_vload(turn) == pos) return true;
    const long long t0 = clock64();
    while (rk_vload(turn) != pos)
        if (bounded && clock64() - t0 > RK_TURN_WAIT_CYCLES) return false;
    return true;
}

/* The whole warp of worker wi, after its handlers, once *pub (the publish
 * turn of the pass's input) has reached `first`: gives the staged emits
 * their positions in lane order after every earlier pass of that input,
 * and `reply` lanes their places in the channel-reply queue (cr: a channel
 * input's pass, whose reply room was promised at begin); moves the turn on
 * by n; then writes the emits as tagged words, published by their tags.
 * No fence. */
__device__ void rk_emit_publish(rk_u32 lane, rk_u32 wi, rk_u64 *pub, rk_u64 first, rk_u32 n, rk_u32 reply,
                                bool cr) {
    rk_warp_pass &wp = rk_ch.w[wi];
    __syncwarp();
    const bool linked = rk_ch.enabled != 0; /* else this pass had no port: only the turn moves */
    if (lane == 0) {
        rk_turn_wait(pub, first, false);
        if (linked) rk_ch_lock();
        for (int p = 0; p < 8 && linked; p++) {
            rk_out_port &o = rk_ch.out[p];
            if (!o.ring) continue;
            const rk_u32 used = wp.used[p], allow = wp.allow[p];
            wp.base[p] = o.head;
            o.head += __popc(used);
            o.promised -= __popc(allow) - __popc(used);
            if (used) rk_ch_store_max(o.ctl + RK_CH_HEAD, o.head);
            if (o.refused != o.refused_stored) rk_ch_store_max(o.ctl + RK_CH_REFUSED, o.refused_stored = o.refused);
            if (allow) {
                o.inflight--;
                if (o.status) rk_port_final(o);
            }
        }
        if (linked) {
            wp.cr_base = rk_ch.cr_head;
            rk_ch.cr_head += __popc(reply);
            if (cr) rk_ch.cr_promised -= n - __popc(reply);
            rk_ch_unlock();
        }
        rk_vstore(pub, first + n);
    }
    __syncwarp();
    for (int p = 0; p < 8 && linked; p++) {
        rk_out_port &o = rk_ch.out[p];
        if (!o.ring) continue;
        const rk_u32 used = wp.used[p];
        if ((used >> lane) & 1u) {
            const rk_u64 pos = wp.base[p] + __popc(used & ((1u << lane) - 1u));
            const rk_u64 hi = (rk_u64)((rk_u32)(pos >> o.log2cap) + 1u) << 32;
            rk_u64 *slot = o.ring + (pos & ((1ull << o.log2cap) - 1)) * o.words;
            const rk_u32 *src = (const rk_u32 *)(o.stage + (32 * wi + lane) * o.stride);
            for (rk_u32 w = 0; w < o.words; w += 2) {
                /* words * 4 <= stride (cuda_channel.c), so a pair is one 8-byte load. */
                uint2 v = make_uint2(0u, 0u);
                if (4 * (w + 2) <= o.stride) v = *(const uint2 *)(src + w);
                else if (4 * w < o.stride) v.x = src[w];
                rk_ch_store2(slot + w, hi | v.x, hi | v.y);
            }
        }
    }
    __syncwarp();
    if (lane < 8) wp.used[lane] = wp.allow[lane] = 0;
    __syncwarp();
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
    const rk_u64 d = (wi + W - (rk_u32)(c0 % W)) % W;
    *end = (c0 + d + 1) << 5;
    return d ? (c0 + d) << 5 : t;
}

/* The whole warp: loads up to `max` (<= 32) messages (message i: position
 * *first + i) of the next input with any into stage (RK_IN_STAGE bytes
 * each), from this warp's positions. The slots' 16-byte units are spread
 * over the lanes and all loaded before any is checked (one L2 round trip per
 * poll, not one per word). Returns the messages found, a prefix; *input
 * says which input, *first where they start. */
__device__ rk_u32 rk_channel_load(rk_u32 lane, rk_u32 wi, rk_u32 max, unsigned char *stage, rk_u32 *input,
                                  rk_u64 *first) {
    const rk_u32 n = rk_ch.in_count;
    rk_warp_pass &wp = rk_ch.w[wi];
    for (rk_u32 v = 0; v < n; v++) {
        const rk_u32 idx = (wp.cursor + v) % n;
        const rk_in_port &c = rk_ch.in[idx];
        if (!c.ring) continue;
        rk_u64 end;
        const rk_u64 start = __shfl_sync(0xffffffffu, rk_channel_start(c, wi, &end), 0);
        end = __shfl_sync(0xffffffffu, end, 0);
        const rk_u32 m_max = (rk_u32)min((rk_u64)max, end - start);
        const rk_u32 units = m_max * RK_CH_UNITS;
        const rk_u32 want = m_max >= 32 ? 0xffffffffu : (1u << m_max) - 1u;
        const rk_u64 mask = (1ull << c.log2cap) - 1;
        rk_u32 bad = 0;
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
                if (u < units) {
                    const rk_u32 m = u / RK_CH_UNITS, w = u % RK_CH_UNITS;
                    const rk_u32 tag = (rk_u32)((start + m) >> c.log2cap) + 1u;
                    if ((rk_u32)(x[k] >> 32) != tag || (rk_u32)(y[k] >> 32) != tag) {
                        bad |= 1u << m;
                    } else {
                        rk_u32 *dst = (rk_u32 *)(stage + m * RK_IN_STAGE) + 2 * w;
                        dst[0] = (rk_u32)x[k];
                        dst[1] = (rk_u32)y[k];
                    }
                }
            }
        }
        bad = rk_ch_warp_or(bad);
        const rk_u32 ok = want & ~bad;
        const rk_u32 prefix = ok == 0xffffffffu ? ok : ((1u << (__ffs(~ok) - 1)) - 1u);
        if (prefix) {
            *input = idx;
            *first = start;
            __syncwarp(); /* every lane's staged words before any handler reads them */
            if (lane == 0) wp.cursor = (idx + 1) % n;
            __syncwarp();
            return prefix;
        }
    }
    return 0;
}

/* Lane 0, holding the input's begin turn, once the pass's messages are
 * staged and before its handlers: the input's messages up to first + n are
 * taken (the producer's credit; their slots may be overwritten now), and
 * the turn moves on. A REPORT producer refuses an emit when its credit
 * looks short, so when this kernel emits too, the fence makes TAKEN visible
 * before anything this pass emits: a message that goes around a cycle and
 * back to that producer finds the room it left (with the producer's fence
 * in rk_emit_begin). A HOLD producer only waits on a stale TAKEN and
 * reloads it, so a HOLD input pays no fence. */
__device__ void rk_channel_taken(rk_u32 input, rk_u64 first, rk_u32 n) {
    rk_in_port &c = rk_ch.in[input];
    rk_ch_store_max(c.ctl + RK_CH_TAKEN, first + n);
    rk_vstore(&c.tail, first + n);
    if (c.report) {
        for (int p = 0; p < 8; p++) {
            if (rk_ch.out[p].ring && !rk_ch.out[p].status) {
                __threadfence();
                break;
            }
        }
    }
}

/* The whole warp, terminating: closes every input (once), then reports
 * whether each is drained: its producer has published FINAL (it emits no
 * more) and everything below it was taken. */
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
