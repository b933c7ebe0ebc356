/* K2K channels, device side: compiled by NVRTC between the user's handler
 * and ring.cu (src/cuda/cuda_ring_source.c); the host side is
 * src/cuda/cuda_channel.c, the design docs/channels.md.
 *
 * A channel is a ring in device memory written as tagged 8-byte words (the
 * format of the host queues in ring.cu: 4 payload bytes and the position's
 * lap + 1 in each word), so the destination polls L2, never the bus. A
 * kernel with channels runs one worker warp (the host refuses others), so
 * each channel has one producer warp and one consumer warp:
 *  - rk_emit, called by the lane that runs a handler, stages the message
 *    per lane and port; after the handlers the warp writes the staged
 *    messages in lane order (lane = message order in the pass) at the
 *    channel's head, so a channel gets messages in the order they were
 *    handled, exactly once.
 *  - Credit: the consumer publishes how far it has taken (TAKEN); the
 *    producer writes position p only when p - capacity has been taken.
 *    HOLD ports limit how many messages a pass takes, so one emit per port
 *    per message always has room; REPORT ports allow the emit of a lane
 *    only while the pass's lanes before it cannot fill the channel, else
 *    RK_EMIT_FULL (the handler decides).
 *  - Closing (a destination that terminates): the producer stores INTENT =
 *    head + 32, fence.sc, loads CLOSED; the destination stores CLOSED,
 *    fence.sc, and waits until INTENT == HEAD before it drains to HEAD.
 *    Either the producer sees CLOSED (its emits return RK_EMIT_CLOSED) or
 *    the destination waits for its pass: no message is lost or taken twice.
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
#define RK_DCTL_LINK_GEN 3
#define RK_DCTL_CR_RECEIVED 4
/* A channel's control words in device memory (one writer per line). */
#define RK_CH_HEAD 0     /* producer: positions written */
#define RK_CH_INTENT 1   /* producer: head + 32 during a pass, else head */
#define RK_CH_REFUSED 2  /* producer: emits refused */
#define RK_CH_TAKEN 16   /* consumer: positions taken */
#define RK_CH_CLOSED 32  /* consumer: 0, or the rk_status every emit gets */
#define RK_FLOW_HOLD 1
#define RK_FLOW_REPORT 2

struct rk_out_port {
    rk_u64 *ring, *ctl;
    unsigned char *stage; /* 32 lanes x stride bytes */
    rk_u64 head, taken;
    rk_u32 log2cap, words, flow, msg_bytes, stride, refused;
    int status;           /* 0 open, else what emits return */
    rk_u32 allow, used;   /* lanes that may emit in this pass, and those that did */
};

struct rk_in_port {
    rk_u64 *ring, *ctl;
    rk_u64 tail;
    rk_u32 log2cap, reply_all, id;
};

struct rk_links {
    rk_u64 gen;
    rk_u32 enabled, in_count, cursor, inputs_closed;
    rk_out_port out[8];
    rk_in_port in[16];
};

static_assert(sizeof(rk_links) <= 2048, "rk_links must fit RK_CUDA_CHANNEL_SHARED (cuda_ring_layout.h)");

/* One copy per block; only a kernel with a single worker warp uses it. */
__shared__ rk_links rk_ch;

__device__ __forceinline__ void rk_fence_sc() { asm volatile("fence.sc.gpu;" ::: "memory"); }
__device__ __forceinline__ rk_u64 rk_ch_load(const rk_u64 *p) { return *(const volatile rk_u64 *)p; }
__device__ __forceinline__ void rk_ch_store(rk_u64 *p, rk_u64 v) { *(volatile rk_u64 *)p = v; }

/* Lane 0 at kernel start: nothing linked until the table is read. */
__device__ void rk_links_init() {
    rk_ch.gen = 0;
    rk_ch.enabled = 0;
    rk_ch.in_count = 0;
    rk_ch.cursor = 0;
    rk_ch.inputs_closed = 0;
    for (int p = 0; p < 8; p++) rk_ch.out[p].ring = 0;
    for (int i = 0; i < 16; i++) rk_ch.in[i].ring = 0;
}

/* The whole warp: reloads the table when the host changed it. New ports
 * start from their channel's control words (a relaunch after a pause, too). */
__device__ void rk_links_refresh(const rk_u64 *hctl, const rk_u64 *dctl, rk_u32 lane) {
    rk_u64 gen = lane == 0 ? rk_ch_load(dctl + RK_DCTL_LINK_GEN) : 0;
    gen = __shfl_sync(0xffffffffu, gen, 0); /* one value for the whole warp */
    if (gen == rk_ch.gen) return;
    __syncwarp();
    if (lane == 0) {
        __threadfence_system();
        for (int p = 0; p < 8; p++) {
            const rk_u64 *e = hctl + RK_HCTL_OUT + 8 * p;
            rk_u64 *ring = (rk_u64 *)rk_ch_load(e);
            if (!ring || rk_ch.out[p].ring) continue;
            rk_out_port &o = rk_ch.out[p];
            const rk_u64 packed = rk_ch_load(e + 3), sizes = rk_ch_load(e + 4);
            o.ctl = (rk_u64 *)rk_ch_load(e + 1);
            o.stage = (unsigned char *)rk_ch_load(e + 2);
            o.log2cap = (rk_u32)(packed & 0xff);
            o.words = (rk_u32)((packed >> 8) & 0xffff);
            o.flow = (rk_u32)(packed >> 24);
            o.msg_bytes = (rk_u32)sizes;
            o.stride = (rk_u32)(sizes >> 32);
            o.head = rk_ch_load(o.ctl + RK_CH_HEAD);
            o.taken = rk_ch_load(o.ctl + RK_CH_TAKEN);
            o.refused = (rk_u32)rk_ch_load(o.ctl + RK_CH_REFUSED);
            o.status = 0;
            o.allow = o.used = 0;
            rk_ch_store(o.ctl + RK_CH_INTENT, o.head);
            __threadfence();
            o.ring = ring;
        }
        const rk_u32 n = (rk_u32)rk_ch_load(hctl + RK_HCTL_IN_COUNT);
        for (rk_u32 i = 0; i < n && i < 16; i++) {
            const rk_u64 *e = hctl + RK_HCTL_IN + 8 * i;
            if (rk_ch.in[i].ring) continue;
            rk_in_port &c = rk_ch.in[i];
            c.ctl = (rk_u64 *)rk_ch_load(e + 1);
            const rk_u64 packed = rk_ch_load(e + 2);
            c.log2cap = (rk_u32)(packed & 0xff);
            c.reply_all = (rk_u32)((packed >> 8) & 1);
            c.id = (rk_u32)rk_ch_load(e + 3);
            c.tail = rk_ch_load(c.ctl + RK_CH_TAKEN);
            c.ring = (rk_u64 *)rk_ch_load(e);
        }
        rk_ch.in_count = n < 16 ? n : 16;
        rk_ch.enabled = 1;
        rk_ch.gen = gen;
    }
    __syncwarp();
}

/* Lane 0, before a pass's handlers: opens every port for the lanes in
 * `lanes` (the pass's messages, lane = order) and returns how many of them
 * the pass may take: the room of the fullest open HOLD port. */
__device__ rk_u32 rk_emit_begin(rk_u32 lanes) {
    rk_u32 credit = 32;
    for (int p = 0; p < 8; p++) {
        rk_out_port &o = rk_ch.out[p];
        o.used = 0;
        o.allow = 0;
        if (!o.ring || o.status) continue;
        rk_ch_store(o.ctl + RK_CH_INTENT, o.head + 32);
        rk_fence_sc();
        const rk_u64 closed = rk_ch_load(o.ctl + RK_CH_CLOSED);
        if (closed) {
            o.status = (int)(rk_u32)closed;
            rk_ch_store(o.ctl + RK_CH_INTENT, o.head);
            continue;
        }
        const rk_u64 cap = 1ull << o.log2cap;
        if (cap - (o.head - o.taken) < 32) o.taken = rk_ch_load(o.ctl + RK_CH_TAKEN);
        const rk_u64 room = cap - (o.head - o.taken);
        if (o.flow == RK_FLOW_HOLD) {
            if (room < credit) credit = (rk_u32)room;
        }
    }
    /* The lanes allowed: the first `credit` of the pass for HOLD (all of
     * them, once the pass is cut to credit), the first `room` for REPORT. */
    rk_u32 kept = 0, seen = 0;
    for (int l = 0; l < 32; l++) {
        if (!((lanes >> l) & 1u)) continue;
        if (seen++ < credit) kept |= 1u << l;
    }
    for (int p = 0; p < 8; p++) {
        rk_out_port &o = rk_ch.out[p];
        if (!o.ring || o.status) continue;
        if (o.flow == RK_FLOW_HOLD) {
            o.allow = kept;
        } else {
            const rk_u64 room = (1ull << o.log2cap) - (o.head - o.taken);
            rk_u32 allow = 0, n = 0;
            for (int l = 0; l < 32; l++)
                if (((kept >> l) & 1u) && n++ < room) allow |= 1u << l;
            o.allow = allow;
        }
    }
    return kept;
}

/* rk_emit (dsl.h): the lane running a handler stages its message. */
__device__ int rk__emit(unsigned port, const void *msg, unsigned size) {
    if (!rk_ch.enabled || port >= 8 || !rk_ch.out[port].ring) return RK_EMIT_NO_PORT;
    rk_out_port &o = rk_ch.out[port];
    const rk_u32 bit = 1u << (threadIdx.x & 31);
    int rc = RK_EMIT_OK;
    if (size != o.msg_bytes) rc = RK_EMIT_BAD_SIZE;
    else if (o.status) rc = o.status;
    else if (!(o.allow & bit) || (atomicOr(&o.used, bit) & bit)) rc = RK_EMIT_FULL;
    if (rc != RK_EMIT_OK) {
        atomicAdd(&o.refused, 1u);
        return rc;
    }
    unsigned char *dst = o.stage + (threadIdx.x & 31) * o.stride;
    const unsigned char *src = (const unsigned char *)msg;
    for (unsigned i = 0; i < size; i++) dst[i] = src[i];
    return RK_EMIT_OK;
}

/* The whole warp, after the handlers: writes every staged message at its
 * port's head in lane order, then publishes head and closes the pass. */
__device__ void rk_emit_publish(rk_u32 lane) {
    __syncwarp();
    for (int p = 0; p < 8; p++) {
        rk_out_port &o = rk_ch.out[p];
        if (!o.ring) continue;
        const rk_u32 used = o.used;
        if ((used >> lane) & 1u) {
            const rk_u64 pos = o.head + __popc(used & ((1u << lane) - 1u));
            const rk_u64 hi = (rk_u64)((rk_u32)(pos >> o.log2cap) + 1u) << 32;
            rk_u64 *slot = o.ring + (pos & ((1ull << o.log2cap) - 1)) * o.words;
            const rk_u32 *src = (const rk_u32 *)(o.stage + lane * o.stride);
            for (rk_u32 w = 0; w < o.words; w += 2) {
                const rk_u32 a = 4 * w < o.stride ? src[w] : 0u, b = 4 * (w + 1) < o.stride ? src[w + 1] : 0u;
                asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(slot + w), "l"(hi | a), "l"(hi | b)
                             : "memory");
            }
        }
    }
    __syncwarp();
    if (lane == 0) {
        for (int p = 0; p < 8; p++) {
            rk_out_port &o = rk_ch.out[p];
            if (!o.ring) continue;
            const rk_u32 n = __popc(o.used);
            if (n) {
                o.head += n;
                rk_ch_store(o.ctl + RK_CH_HEAD, o.head);
            }
            rk_ch_store(o.ctl + RK_CH_REFUSED, o.refused);
            __threadfence();
            rk_ch_store(o.ctl + RK_CH_INTENT, o.head);
            o.used = 0;
            o.allow = 0;
        }
    }
    __syncwarp();
}

/* The whole warp: loads up to `max` messages (lane i: position tail + i)
 * from the next input that has any into stage (stride bytes per lane,
 * `words` words each). Returns the lanes with a message, a prefix; *input
 * says which input. */
__device__ rk_u32 rk_channel_load(rk_u32 lane, rk_u32 max, rk_u32 words, unsigned char *stage, rk_u32 stride,
                                  rk_u32 *input) {
    const rk_u32 n = rk_ch.in_count;
    for (rk_u32 v = 0; v < n; v++) {
        const rk_u32 idx = (rk_ch.cursor + v) % n;
        rk_in_port &c = rk_ch.in[idx];
        if (!c.ring) continue;
        bool ok = false;
        if (lane < max) {
            const rk_u64 pos = c.tail + lane;
            const rk_u32 tag = (rk_u32)(pos >> c.log2cap) + 1u;
            const rk_u64 *slot = c.ring + (pos & ((1ull << c.log2cap) - 1)) * words;
            rk_u32 *dst = (rk_u32 *)(stage + lane * stride);
            ok = true;
            for (rk_u32 w = 0; w < words; w += 2) {
                rk_u64 a, b;
                asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(slot + w));
                if ((rk_u32)(a >> 32) != tag || (rk_u32)(b >> 32) != tag) {
                    ok = false;
                    break;
                }
                dst[w] = (rk_u32)a;
                dst[w + 1] = (rk_u32)b;
            }
        }
        const rk_u32 got = __ballot_sync(0xffffffffu, ok);
        const rk_u32 prefix = got == 0xffffffffu ? got : ((1u << (__ffs(~got) - 1)) - 1u);
        if (prefix) {
            *input = idx;
            if (lane == 0) rk_ch.cursor = (idx + 1) % n;
            __syncwarp();
            return prefix;
        }
    }
    return 0;
}

/* Lane 0: the input's messages up to tail + n are taken (the producer's credit). */
__device__ void rk_channel_taken(rk_u32 input, rk_u32 n) {
    rk_in_port &c = rk_ch.in[input];
    c.tail += n;
    rk_ch_store(c.ctl + RK_CH_TAKEN, c.tail);
}

/* The whole warp, terminating: closes every input (once), then reports
 * whether each is drained: no producer pass in flight and nothing left. */
__device__ bool rk_channel_drained(rk_u32 lane) {
    bool drained = true;
    if (lane == 0) {
        const rk_u32 n = rk_ch.in_count;
        if (!rk_ch.inputs_closed) {
            for (rk_u32 i = 0; i < n; i++)
                if (rk_ch.in[i].ring) rk_ch_store(rk_ch.in[i].ctl + RK_CH_CLOSED, (rk_u64)(rk_u32)RK_EMIT_CLOSED);
            rk_fence_sc();
            rk_ch.inputs_closed = 1;
        }
        for (rk_u32 i = 0; i < n; i++) {
            rk_in_port &c = rk_ch.in[i];
            if (!c.ring) continue;
            const rk_u64 intent = rk_ch_load(c.ctl + RK_CH_INTENT);
            rk_fence_sc();
            const rk_u64 head = rk_ch_load(c.ctl + RK_CH_HEAD);
            if (intent != head || c.tail != head) drained = false;
        }
    }
    return __shfl_sync(0xffffffffu, drained ? 1 : 0, 0) != 0;
}
