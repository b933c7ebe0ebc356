/* K2K channels on the WebGPU backend: see webgpu_channel.h for the design.
 *
 * Positions and credit are the core's rk_queue counters of the channel (its
 * slots are not used: the payload lives in the channel's storage buffer).
 * The producer is the source kernel's worker thread, the consumer the
 * destination's, so each channel stays single-producer, single-consumer;
 * each kernel's dispatch handles its batch in order, so messages of one
 * channel arrive in emit order, exactly once. */
#include <stdlib.h>
#include <string.h>

#include "core/channel_internal.h"
#include "webgpu_ring.h"

/* The channel's device side; src and dst are cleared (under links_lock)
 * when their kernel goes away, so a wake never reaches a freed ring. */
typedef struct wg_channel {
    wg_context *c;
    WGPUBuffer ring;
    uint32_t words; /* per slot */
    wg_ring *src, *dst;
} wg_channel;

static pthread_mutex_t links_lock = PTHREAD_MUTEX_INITIALIZER;

static wg_channel *impl_of(rk_channel *ch) { return ch->impl; }

static void free_impl(rk_channel *ch) {
    wg_channel *w = impl_of(ch);
    if (!w) return;
    if (w->ring && !w->c->wedged) {
        pthread_mutex_lock(&w->c->lock);
        w->c->W->BufferDestroy(w->ring);
        w->c->W->BufferRelease(w->ring);
        pthread_mutex_unlock(&w->c->lock);
    }
    free(w);
    ch->impl = NULL;
}

static void wake_ring(wg_ring *r) {
    pthread_mutex_lock(&r->mu);
    pthread_cond_signal(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

/* Wakes the kernel on the given side of ch, if it is still there. */
static void wake_side(rk_channel *ch, bool dst) {
    pthread_mutex_lock(&links_lock);
    wg_channel *w = impl_of(ch);
    wg_ring *r = w ? (dst ? w->dst : w->src) : NULL;
    if (r) wake_ring(r);
    pthread_mutex_unlock(&links_lock);
}

/* ---- credit and pending (the worker, r->mu held) --------------------------------------------- */

uint32_t rk__wg_channel_credit(wg_ring *r) {
    uint32_t credit = UINT32_MAX;
    for (unsigned p = 0; p < RK_MAX_PORTS; p++) {
        rk_channel *ch = r->links.out[p];
        if (!ch || ch->desc.flow != RK_CHANNEL_HOLD || atomic_load(&ch->closed) != RK_OK) continue;
        uint32_t room = rk__channel_room(ch);
        if (room < credit) credit = room;
    }
    return credit;
}

bool rk__wg_channel_pending(wg_ring *r) {
    for (unsigned i = 0; i < r->links.in_count; i++)
        if (rk_queue_depth(r->links.in[i]->ring)) return true;
    return false;
}

/* ---- one batch ---------------------------------------------------------------------------------- */

void rk__wg_channel_plan(wg_ring *r, wg_plan *p, uint32_t at, uint32_t budget) {
    memset(p, 0, sizeof *p);
    unsigned n = r->links.in_count;
    for (unsigned v = 0; v < n && budget; v++) {
        rk_channel *ch = r->links.in[(r->links.in_cursor + v) % n];
        uint64_t first = 0;
        uint32_t count = rk_queue_peek(ch->ring, budget, &first);
        if (!count) continue;
        p->takes[p->take_count++] = (wg_take){.ch = ch, .first = first, .count = count, .at = at};
        for (uint32_t i = 0; i < count; i++) {
            r->batch_ids[at + i] = RK_CHANNEL_MESSAGE_ID(ch->id, first + i);
            r->reply_all[at + i] = ch->desc.replies == RK_CHANNEL_REPLY_ALL;
        }
        at += count;
        budget -= count;
        p->taken += count;
    }
    if (n) r->links.in_cursor = (r->links.in_cursor + 1) % n;

    /* The emit header. Emits see the channel's state as it is now: a
     * destination that closes meanwhile waits for this batch (emitting). */
    uint32_t offset = WG_EMIT_HEADER;
    for (unsigned port = 0; port < RK_MAX_PORTS; port++) {
        rk_channel *ch = r->links.out[port];
        uint32_t *h = p->header;
        if (!ch || r->links.built_gen != r->links.gen) {
            h[WG_EMIT_STATUS + port] = (uint32_t)RK_EMIT_NO_PORT;
            continue;
        }
        uint32_t words = (ch->desc.message_size + 3u) / 4u;
        atomic_store(&ch->emitting, 1u);
        int closed = atomic_load(&ch->closed);
        uint64_t first = 0;
        uint32_t room = closed == RK_OK ? rk_queue_reserve(ch->ring, r->max_batch, &first) : 0;
        p->out[port] = ch;
        p->out_first[port] = first;
        h[WG_EMIT_ROOM + port] = room;
        h[WG_EMIT_STATUS + port] = (uint32_t)closed;
        h[WG_EMIT_SIZE + port] = ch->desc.message_size;
        h[WG_EMIT_STRIDE + port] = words;
        h[WG_EMIT_OFFSET + port] = offset;
        offset += r->max_batch * words;
    }
}

/* Copies count slots from position first of a ring of cap slots (words
 * each) to/from a linear range, in at most two pieces. */
static void copy_ring(wg_ring *r, WGPUCommandEncoder enc, WGPUBuffer ring, uint32_t cap, uint32_t words,
                      uint64_t first, uint32_t count, WGPUBuffer lin, uint64_t lin_off, bool to_ring) {
    const rk__wgpu_api *W = r->c->W;
    const uint64_t slot_bytes = (uint64_t)words * 4u;
    uint32_t done = 0;
    while (done < count) {
        uint32_t slot = (uint32_t)((first + done) & (cap - 1u));
        uint32_t piece = cap - slot < count - done ? cap - slot : count - done;
        uint64_t ring_off = slot * slot_bytes, off = lin_off + done * slot_bytes;
        if (to_ring)
            W->CommandEncoderCopyBufferToBuffer(enc, lin, off, ring, ring_off, piece * slot_bytes);
        else
            W->CommandEncoderCopyBufferToBuffer(enc, ring, ring_off, lin, off, piece * slot_bytes);
        done += piece;
    }
}

void rk__wg_channel_encode_inputs(wg_ring *r, const wg_plan *p, WGPUCommandEncoder enc) {
    for (unsigned t = 0; t < p->take_count; t++) {
        const wg_take *tk = &p->takes[t];
        wg_channel *w = impl_of(tk->ch);
        /* Request i of the batch starts at word 1 + i * req_words. */
        copy_ring(r, enc, w->ring, tk->ch->desc.capacity, w->words, tk->first, tk->count, r->in,
                  4u + (uint64_t)tk->at * r->req_words * 4u, false);
    }
}

void rk__wg_channel_finish(wg_ring *r, wg_plan *p, const uint32_t *header, bool ok) {
    const rk__wgpu_api *W = r->c->W;
    WGPUCommandEncoder enc = NULL;
    uint32_t counts[RK_MAX_PORTS] = {0};
    for (unsigned port = 0; ok && port < RK_MAX_PORTS; port++) {
        rk_channel *ch = p->out[port];
        if (!ch) continue;
        uint32_t n = header[WG_EMIT_COUNT + port], room = p->header[WG_EMIT_ROOM + port];
        counts[port] = n <= room ? n : room;
        atomic_fetch_add_explicit(&ch->refused, header[WG_EMIT_REFUSED + port], memory_order_relaxed);
        if (!counts[port]) continue;
        if (!enc) enc = W->DeviceCreateCommandEncoder(r->c->device, NULL);
        wg_channel *w = impl_of(ch);
        copy_ring(r, enc, w->ring, ch->desc.capacity, w->words, p->out_first[port], counts[port], r->links.emit,
                  (uint64_t)p->header[WG_EMIT_OFFSET + port] * 4u, true);
    }
    if (enc) {
        WGPUCommandBuffer cmd = W->CommandEncoderFinish(enc, NULL);
        W->QueueSubmit(r->c->queue, 1, &cmd);
        W->CommandBufferRelease(cmd);
        W->CommandEncoderRelease(enc);
    }
    /* Published only after the copies are on the queue: the destination's
     * own copies out of the ring are queued after them. */
    for (unsigned port = 0; port < RK_MAX_PORTS; port++) {
        rk_channel *ch = p->out[port];
        if (!ch) continue;
        if (counts[port]) { /* counted first: never behind what the destination can take */
            atomic_fetch_add_explicit(&ch->emitted, counts[port], memory_order_relaxed);
            rk_queue_commit(ch->ring, counts[port]);
        }
        atomic_store(&ch->emitting, 0u);
    }
    for (unsigned t = 0; t < p->take_count; t++) {
        rk_queue_release(p->takes[t].ch->ring, p->takes[t].count);
        atomic_fetch_add_explicit(&p->takes[t].ch->delivered, p->takes[t].count, memory_order_relaxed);
    }
    for (unsigned port = 0; port < RK_MAX_PORTS; port++)
        if (!counts[port]) p->out[port] = NULL; /* nothing to wake for */
}

void rk__wg_channel_wake(wg_plan *p) {
    for (unsigned port = 0; port < RK_MAX_PORTS; port++)
        if (p->out[port]) wake_side(p->out[port], true);
    for (unsigned t = 0; t < p->take_count; t++) wake_side(p->takes[t].ch, false);
}

rk_status rk__wg_channel_prepare(wg_ring *r, bool *rebind) {
    *rebind = false;
    pthread_mutex_lock(&r->mu);
    uint32_t gen = r->links.gen;
    uint64_t words = WG_EMIT_HEADER;
    for (unsigned p = 0; p < RK_MAX_PORTS; p++)
        if (r->links.out[p]) words += (uint64_t)r->max_batch * ((r->links.out[p]->desc.message_size + 3u) / 4u);
    pthread_mutex_unlock(&r->mu);
    if (r->links.emit && r->links.built_gen == gen) return RK_OK;
    const WGPUFlags usage = WGPU_BUFFER_USAGE_STORAGE | WGPU_BUFFER_USAGE_COPY_DST | WGPU_BUFFER_USAGE_COPY_SRC;
    WGPUBuffer b = NULL;
    rk_status s = rk__wg_create_buffer(r->c, words * 4u, usage, "rk ring emit", &b);
    if (s != RK_OK) return s;
    if (r->links.emit) {
        r->c->W->BufferDestroy(r->links.emit);
        r->c->W->BufferRelease(r->links.emit);
    }
    r->links.emit = b;
    pthread_mutex_lock(&r->mu);
    r->links.built_gen = gen;
    pthread_mutex_unlock(&r->mu);
    *rebind = true;
    return RK_OK;
}

/* ---- closing, faults, teardown ------------------------------------------------------------------ */

void rk__wg_channel_close_inputs(wg_ring *r, rk_status why) {
    pthread_mutex_lock(&r->mu);
    bool already = r->links.inputs_closed;
    r->links.inputs_closed = true;
    unsigned n = r->links.in_count;
    rk_channel *in[RK_MAX_INPUTS];
    memcpy(in, r->links.in, sizeof in);
    pthread_mutex_unlock(&r->mu);
    if (already) return;
    for (unsigned i = 0; i < n; i++) rk__channel_close(in[i], why);
}

void rk__wg_channel_fault_pending(wg_ring *r) {
    pthread_mutex_lock(&r->mu);
    for (unsigned i = 0; i < r->links.in_count; i++) {
        rk_channel *ch = r->links.in[i];
        uint64_t first = 0;
        uint32_t room = (uint32_t)(r->cap - (r->out_tail - r->out_head));
        uint32_t n = rk_queue_peek(ch->ring, room, &first);
        for (uint32_t j = 0; j < n; j++) {
            uint64_t slot = (r->out_tail + j) & (r->cap - 1);
            if (r->reply_bytes) memset(r->out_msgs + slot * r->reply_bytes, 0, r->reply_bytes);
            r->out_infos[slot] = (rk_reply_info){.id = RK_CHANNEL_MESSAGE_ID(ch->id, first + j),
                                                 .status = RK_DEVICE_FAULT};
        }
        r->out_tail += n;
        if (n) rk_queue_release(ch->ring, n);
    }
    pthread_mutex_unlock(&r->mu);
}

void rk__wg_channel_detach(wg_ring *r) {
    rk__wg_channel_close_inputs(r, RK_TERMINATED);
    pthread_mutex_lock(&links_lock);
    for (unsigned i = 0; i < r->links.in_count; i++) impl_of(r->links.in[i])->dst = NULL;
    for (unsigned p = 0; p < RK_MAX_PORTS; p++)
        if (r->links.out[p]) impl_of(r->links.out[p])->src = NULL;
    pthread_mutex_unlock(&links_lock);
    for (unsigned i = 0; i < r->links.in_count; i++) rk__channel_release(r->links.in[i], RK__CHANNEL_DST);
    for (unsigned p = 0; p < RK_MAX_PORTS; p++)
        if (r->links.out[p]) rk__channel_release(r->links.out[p], RK__CHANNEL_SRC);
    memset(r->links.in, 0, sizeof r->links.in);
    memset(r->links.out, 0, sizeof r->links.out);
    r->links.in_count = 0;
}

/* ---- the ring iface's slots ------------------------------------------------------------------------ */

rk_status rk__wg_channel_attach(rk_kernel *src, rk_kernel *dst, rk_channel *ch) {
    static const char fn[] = "rk_channel_connect";
    wg_ring *from = src->impl, *to = dst->impl;
    pthread_mutex_lock(&to->mu);
    unsigned n = to->links.in_count;
    pthread_mutex_unlock(&to->mu);
    if (n >= RK_MAX_INPUTS) return rk__fail(RK_INVALID_ARGUMENT, "%s: kernel '%s' has no free input", fn, dst->name);
    wg_channel *w = calloc(1, sizeof *w);
    if (!w) return rk__fail(RK_OUT_OF_MEMORY, "%s: out of memory", fn);
    w->c = to->c;
    w->words = (ch->desc.message_size + 3u) / 4u;
    w->src = from;
    w->dst = to;
    const WGPUFlags usage = WGPU_BUFFER_USAGE_STORAGE | WGPU_BUFFER_USAGE_COPY_DST | WGPU_BUFFER_USAGE_COPY_SRC;
    pthread_mutex_lock(&w->c->lock);
    rk_status s = rk__wg_create_buffer(w->c, (uint64_t)ch->desc.capacity * w->words * 4u, usage, "rk channel",
                                       &w->ring);
    pthread_mutex_unlock(&w->c->lock);
    if (s != RK_OK) {
        free(w);
        return s;
    }
    ch->impl = w;
    ch->impl_free = free_impl;
    /* The input first, so the destination plans it before any emit lands. */
    pthread_mutex_lock(&to->mu);
    to->links.in[to->links.in_count++] = ch;
    pthread_cond_signal(&to->cv);
    pthread_mutex_unlock(&to->mu);
    pthread_mutex_lock(&from->mu);
    from->links.out[ch->port] = ch;
    from->links.gen++;
    pthread_cond_signal(&from->cv);
    pthread_mutex_unlock(&from->mu);
    return RK_OK;
}

rk_status rk__wg_channel_set_host_replies(rk_kernel *k, bool failures_only) {
    wg_ring *r = k->impl;
    pthread_mutex_lock(&r->mu);
    r->links.failures_only = failures_only;
    pthread_mutex_unlock(&r->mu);
    return RK_OK;
}
