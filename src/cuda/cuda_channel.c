/* K2K channels on CUDA, host side; the device side and the protocol are in
 * src/device/cuda/channel.cu, the design in docs/channels.md.
 *
 * A channel is one device allocation: its control words (one 128-byte line
 * per writer) and the ring (capacity slots of the destination's input words).
 * Connecting writes the channel into both kernels' link tables (pinned
 * control blocks) and bumps their generation words; the kernels pick it up
 * while they run. The core's rk_queue of the channel is not used: positions
 * live on the device, and rk_channel_stats_get reads them from there. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/channel_internal.h"
#include "cuda/cuda_ring.h"

typedef struct cuda_channel {
    rk__cuda_context *ctx;
    CUdeviceptr mem;   /* control words, staging, ring */
    CUstream stream;   /* for reading the control words (stats) */
    const rk_kernel *src, *dst; /* NULL once that kernel is destroyed (under lock) */
    rk_channel *ch;
    struct cuda_channel *next;
} cuda_channel;

/* Every channel with a kernel still alive, for rk__cuda_channel_detach. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static cuda_channel *live;

static void free_impl(rk_channel *ch) {
    cuda_channel *c = ch->impl;
    if (!c) return;
    pthread_mutex_lock(&lock);
    for (cuda_channel **p = &live; *p; p = &(*p)->next) {
        if (*p == c) {
            *p = c->next;
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    if (rk__cuda_bind(c->ctx) == RK_OK) {
        if (c->stream) rk__cuda.cuStreamDestroy(c->stream);
        rk__cuda_linked_free(c->ctx, c->mem);
    }
    free(c);
    ch->impl = NULL;
}

/* Emitted = head, delivered = taken, refused and closed, from the device. */
static rk_status read_stats(rk_channel *ch, rk_channel_stats *out) {
    cuda_channel *c = ch->impl;
    uint64_t w[RK_CH_CTL_BYTES / 8];
    rk_status s = rk__cuda_bind(c->ctx);
    if (s != RK_OK) return s;
    CUresult r = rk__cuda.cuMemcpyDtoHAsync(w, c->mem, sizeof w, c->stream);
    if (r == RK_CUDA_SUCCESS) r = rk__cuda.cuStreamSynchronize(c->stream);
    if (r != RK_CUDA_SUCCESS) return rk__cuda_fail(r, RK_DEVICE_FAULT, "rk_channel_stats_get: reading the channel");
    out->emitted = w[RK_CH_HEAD];
    out->delivered = w[RK_CH_DELIVERED];
    out->refused = w[RK_CH_REFUSED];
    out->depth = (uint32_t)(w[RK_CH_HEAD] > w[RK_CH_DELIVERED] ? w[RK_CH_HEAD] - w[RK_CH_DELIVERED] : 0);
    int closed = (int)(uint32_t)w[RK_CH_CLOSED];
    if (closed == RK_OK) closed = atomic_load(&ch->closed);
    out->closed = (rk_status)closed;
    return RK_OK;
}

static rk_status check_kernel(rk_kernel *k, rk__cuda_ring_view *v) {
    static const char fn[] = "rk_channel_connect";
    if (!rk__cuda_persistent_view(k, v))
        return rk__fail(RK_UNSUPPORTED, "%s: kernel '%s' runs in %s mode; cuda channels need persistent kernels", fn,
                        k->name, rk_exec_mode_name(k->mode));
    if (!v->turns)
        return rk__fail(RK_UNSUPPORTED,
                        "%s: kernel '%s' runs %u worker warps in any order; a cuda kernel with channels must keep "
                        "per-channel order (launch it with ordered = true)",
                        fn, k->name, v->worker_warps);
    return RK_OK;
}

/* Orders the host's stores to mapped control words the GPU reads. GCC
 * refuses atomic_thread_fence under -fsanitize=thread (TSan does not model
 * fences), and the GPU is no thread TSan sees: there an x86 mfence in asm
 * does the same. */
static inline void host_to_device_fence(void) {
#if defined(__SANITIZE_THREAD__) && (defined(__x86_64__) || defined(__i386__))
    __asm__ __volatile__("mfence" ::: "memory");
#else
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

rk_status rk__cuda_channel_attach(rk_kernel *src, rk_kernel *dst, rk_channel *ch) {
    static const char fn[] = "rk_channel_connect";
    rk__cuda_ring_view from, to;
    rk_status s = check_kernel(src, &from);
    if (s == RK_OK) s = check_kernel(dst, &to);
    if (s != RK_OK) return s;
    const uint32_t in_count = (uint32_t)to.hctl[RK_HCTL_IN_COUNT];
    if (in_count >= RK_MAX_INPUTS)
        return rk__fail(RK_INVALID_ARGUMENT, "%s: kernel '%s' has no free input", fn, dst->name);
    const uint32_t words = to.layout.in_ll, stride = rk__round_up(ch->desc.message_size, 16);
    uint32_t log2cap = 0;
    while ((1u << log2cap) < ch->desc.capacity) log2cap++;
    const size_t ring_bytes = (size_t)ch->desc.capacity * words * 8u;
    cuda_channel *c = calloc(1, sizeof *c);
    if (!c) return rk__fail(RK_OUT_OF_MEMORY, "%s: out of memory", fn);
    c->ctx = to.ctx;
    s = rk__cuda_bind(c->ctx);
    if (s == RK_OK) s = rk__cuda_linked_alloc(c->ctx, RK_CH_CTL_BYTES + ring_bytes, &c->mem);
    if (s == RK_OK) {
        CUresult r = rk__cuda.cuStreamCreate(&c->stream, RK_CU_STREAM_NON_BLOCKING);
        if (r != RK_CUDA_SUCCESS) s = rk__cuda_fail(r, RK_INTERNAL, "rk_channel_connect: creating the channel's stream");
    }
    if (s != RK_OK) {
        ch->impl = c;
        free_impl(ch);
        return s;
    }
    ch->impl = c;
    ch->impl_free = free_impl;
    ch->impl_stats = read_stats;
    c->src = src;
    c->dst = dst;
    c->ch = ch;
    pthread_mutex_lock(&lock);
    c->next = live;
    live = c;
    pthread_mutex_unlock(&lock);
    const uint64_t ctl = c->mem, ring = c->mem + RK_CH_CTL_BYTES;

    /* The destination's input first, so it polls the ring before any emit
     * lands; each entry's ring pointer last (it marks the entry valid). */
    volatile uint64_t *in = to.hctl + RK_HCTL_IN + 8u * in_count;
    in[1] = ctl;
    in[2] = log2cap | (uint64_t)(ch->desc.replies == RK_CHANNEL_REPLY_ALL) << 8 |
            (uint64_t)(ch->desc.flow == RK_CHANNEL_REPORT) << 9;
    in[3] = ch->id;
    host_to_device_fence();
    in[0] = ring;
    to.hctl[RK_HCTL_IN_COUNT] = in_count + 1;
    host_to_device_fence();
    to.hctl[RK_HCTL_LINK_GEN] = to.hctl[RK_HCTL_LINK_GEN] + 1;

    volatile uint64_t *out = from.hctl + RK_HCTL_OUT + 8u * ch->port;
    const uint64_t flow = ch->desc.flow == RK_CHANNEL_REPORT ? 2 : 1;
    out[1] = ctl;
    out[2] = 0; /* was the producer's staging: emits go straight into their slots */
    out[3] = log2cap | (uint64_t)words << 8 | flow << 24;
    out[4] = ch->desc.message_size | (uint64_t)stride << 32;
    host_to_device_fence();
    out[0] = ring;
    host_to_device_fence();
    from.hctl[RK_HCTL_LINK_GEN] = from.hctl[RK_HCTL_LINK_GEN] + 1;
    return RK_OK;
}

void rk__cuda_channel_detach(const rk_kernel *k) {
    for (;;) {
        rk_channel *found = NULL;
        rk__channel_side side = RK__CHANNEL_SRC;
        pthread_mutex_lock(&lock);
        for (cuda_channel *c = live; c && !found; c = c->next) {
            if (c->src == k) {
                c->src = NULL;
                found = c->ch;
                side = RK__CHANNEL_SRC;
            } else if (c->dst == k) {
                c->dst = NULL;
                found = c->ch;
                side = RK__CHANNEL_DST;
            }
        }
        pthread_mutex_unlock(&lock);
        if (!found) return;
        rk__channel_release(found, side); /* may free it (free_impl takes the lock) */
    }
}
