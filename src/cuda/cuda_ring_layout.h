/* The ring-kernel layout shared by the host side and the CUDA template
 * (src/device/cuda/ring.cu): queue slot sizes, control words, kernel
 * arguments. Change both together. */
#ifndef RK_CUDA_RING_LAYOUT_H
#define RK_CUDA_RING_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "ringkernel/ringkernel.h"

#define RK__CUDA_API __attribute__((visibility("default")))

enum {
    RK_CUDA_WARPS_PER_BLOCK = 8,  /* worker warps per block; one more warp hosts the control thread */
    /* An ordered kernel's worker warps are one block (its turns are shared
     * words), built for their number when it is above 8 (only with the
     * lanes of channel_lanes.cu on; 8 otherwise): 15 workers and the
     * control warp are 4 warps an SM quarter, 128 registers a thread (one
     * warp more and ptxas allots 96: the kernel spills). */
    RK_CUDA_MAX_ORDERED_WARPS = 15,
    RK_CUDA_DEFAULT_BLOCKS = 4,
    RK_CUDA_MAX_CHUNK = 32,       /* positions a warp takes per pass: one per lane */
    RK_CUDA_SHARED_STAGING = 48 * 1024,
    RK_CUDA_CHANNEL_SHARED = 6144, /* static shared memory of channel.cu's link table (rk_links) */
    /* Control words: host-written ones on their own 64-byte lines. */
    RK_HCTL_ACTIVE = 0,
    RK_HCTL_TERMINATE = 8,
    RK_HCTL_PROCESSED = 16,
    RK_HCTL_ERRORS = 17,
    RK_HCTL_HEARTBEAT = 18,
    RK_HCTL_TERMINATED = 24,
    RK_HCTL_PAUSE = 32,
    RK_HCTL_PAUSED = 40,
    RK_HCTL_CH_PROCESSED = 19, /* GPU: channel messages handled (K2K) */
    RK_HCTL_ACTIVE_SEEN = 20,  /* GPU: 1 once every worker runs active, 0 once every one has stopped */
    /* K2K link table (src/device/cuda/channel.cu), host-written. */
    RK_HCTL_LINK_GEN = 48,     /* bumped after the table changed */
    RK_HCTL_IN_COUNT = 49,
    RK_HCTL_CR_RECEIVED = 56,  /* the host's place in the channel-reply queue */
    RK_HCTL_OUT = 64,          /* 8 words per output port */
    RK_HCTL_IN = 128,          /* 8 words per input channel */
    RK_HCTL_HOST_PUBLISHED = 256, /* the sender's published count, relayed to the workers by the control thread */
    RK_HCTL_WORDS = 264,
    RK_DCTL_WORDS = 32,   /* device control words; zeroed before a relaunch */
    RK_COUNT_WORDS = 8,   /* per worker warp: processed, errors, chunk_pos, done, crq head, channel messages */
    /* A channel's control words in device memory (channel.cu). */
    RK_CH_HEAD = 0,   /* producer: messages emitted */
    RK_CH_FINAL = 1,  /* producer: 0, or 1 + its last position once it emits no more */
    RK_CH_REFUSED = 2,
    RK_CH_POS = 3,    /* producer: positions given out (messages and SKIP slots) */
    RK_CH_TAKEN = 16, /* consumer: positions taken */
    RK_CH_DELIVERED = 17, /* consumer: messages taken */
    RK_CH_CLOSED = 32,
    RK_CH_CTL_BYTES = 512,
};

/* Sizes derived from the kernel's message, reply and state sizes. Every
 * queue word is 8 bytes: 4 payload bytes and a 4-byte tag. */
typedef struct rk__cuda_ring_layout {
    uint32_t msg_bytes, reply_bytes, state_bytes;
    uint32_t in_ll, out_ll;        /* words per input / output slot (even) */
    uint32_t crq_ll;               /* words per channel-reply slot: out_ll + the id's two */
    uint32_t in_stage, out_stage;  /* staging bytes per message / reply (multiples of 16) */
    /* Worker warps a block is compiled for (RK_WARPS_PER_BLOCK; the launch
     * bounds follow): RK_CUDA_WARPS_PER_BLOCK, 1 for a kernel that runs
     * one worker warp (its registers are then not capped by nine warps), or
     * up to RK_CUDA_MAX_ORDERED_WARPS for a wide ordered kernel. */
    uint32_t block_warps;
    uint32_t lanes;                /* 1: the template's lanes are compiled in (RK_LANES_BUILT, channel_lanes.cu) */
} rk__cuda_ring_layout;

/* Static shared memory of channel.cu's link table (rk_links) for a block of
 * `warps` worker warps: RK_CUDA_CHANNEL_SHARED up to 8, then a pass record
 * per warp more and the lanes' emit buffer (rk_lanes_ebuf, at most 37.5 KiB;
 * channel.cu asserts the same bound). */
static inline uint32_t rk__cuda_channel_shared(uint32_t warps) {
    return warps <= 8 ? RK_CUDA_CHANNEL_SHARED : 2048u + 464u * warps + 38400u;
}

static inline uint32_t rk__round_up(uint32_t v, uint32_t to) { return (v + to - 1) / to * to; }

static inline rk__cuda_ring_layout rk__cuda_ring_layout_of(uint32_t msg, uint32_t reply, uint32_t state) {
    rk__cuda_ring_layout l;
    l.msg_bytes = msg;
    l.reply_bytes = reply;
    l.state_bytes = state;
    l.in_ll = rk__round_up((msg + 3) / 4, 2);
    l.out_ll = rk__round_up((reply + 3) / 4 + 1, 2); /* + the status word */
    l.crq_ll = l.out_ll + 2;
    l.in_stage = rk__round_up(l.in_ll * 4, 16);
    l.out_stage = rk__round_up(l.out_ll * 4, 16);
    l.block_warps = RK_CUDA_WARPS_PER_BLOCK;
    l.lanes = 0;
    return l;
}

/* The persistent kernel's only argument, byte for byte rk_ring_args in ring.cu. */
typedef struct rk__cuda_ring_args {
    uint64_t in, out, hctl, dctl, counts, stage, state, crq; /* device addresses */
    uint64_t capacity_mask;
    uint32_t log2_capacity;
    uint32_t chunk;
    uint32_t log2_chunk;
    uint32_t worker_warps;
    uint32_t resume;
    uint32_t turns; /* ordered: the worker warps (one block) take and publish in position order */
    uint32_t turn_wait_cycles; /* how long a begin turn is waited for, or 0: the template's default */
    uint32_t idle_nap_ns;      /* a worker's (and the control thread's) nap while idle, or 0 */
    uint32_t k2k_solo;         /* RK__CUDA_SOLO_* bits: when one worker warp makes its next channel begin ready */
    uint32_t k2k_lanes;        /* RK__CUDA_LANES_* bits: several worker warps of a chain stage in lanes (channel_lanes.cu) */
} rk__cuda_ring_args;

/* K2K with one worker warp (channel.cu, rk_solo_plan): the next channel
 * pass's begin is made ready ahead, so a pass that fits runs its handlers
 * with no lane-0 section. RK_CUDA_K2K_SOLO (bits, for side-by-side runs):
 * when the plan is made, and how a planned pass runs. */
#define RK__CUDA_SOLO_AFTER_PASS 1u  /* at the end of every channel pass, after its replies */
#define RK__CUDA_SOLO_IDLE 2u        /* when a channel poll finds nothing and there is no plan */
#define RK__CUDA_SOLO_TAKEN_EARLY 4u /* a planned pass tells TAKEN before its handlers, not after */
#define RK__CUDA_SOLO_LONE 8u        /* only a pass of one message takes the plan */
#define RK__CUDA_SOLO_POLL_PLAIN 16u /* a channel poll's first position without shuffles */
#define RK__CUDA_SOLO_LEAN 32u       /* channel_solo.cu's lean loop while only channels have messages */
#define RK__CUDA_SOLO_LEAN_EMIT 64u  /* the lean loop's emits go to slots found before the handlers */
/* K2K with several worker warps (channel_lanes.cu): rk_links.lanes_bits.
 * RK_CUDA_K2K_LANES: 1 lanes from 2 ordered warps on, 0 never (the turns
 * only, at most 8 ordered warps); unset: lanes above 8 ordered warps (a
 * block built for 9 to 15), the turns up to 8 (there the lanes measured
 * 0.04 us a hop slower, session 14). */
#define RK__CUDA_LANES_USE 1u /* a chain stage of several warps runs in lanes */

#define RK__CUDA_SOLO_DEFAULT (RK__CUDA_SOLO_AFTER_PASS | RK__CUDA_SOLO_IDLE | RK__CUDA_SOLO_LEAN | RK__CUDA_SOLO_LEAN_EMIT)

/* The full NVRTC source for a handler: layout defines, dsl.h, the handler,
 * the template. handler_name must be a C identifier. Free with free(). */
RK__CUDA_API rk_status rk__cuda_ring_source(const char *handler_source, const char *handler_name,
                                            const rk__cuda_ring_layout *layout, char **out);

#endif
