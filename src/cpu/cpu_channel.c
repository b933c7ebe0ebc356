/* K2K channels on the CPU backend. A channel's ring lives in host memory
 * (the CPU backend's device memory); the producer's handler writes it
 * through rk_emit on the worker thread, and the destination's worker polls
 * it beside its host input queue, running the handler on the slots in
 * place. One worker per kernel keeps each channel single-producer,
 * single-consumer and in order. */
#include <stdlib.h>
#include <string.h>

#include "core/channel_internal.h"
#include "cpu_ring_internal.h"

enum { SERVE_BATCH = 256 };

/* The ring whose handler runs on this thread (persistent workers only). */
static _Thread_local rk__cpu_ring *emitting_ring;

void rk__cpu_channel_enter(rk__cpu_ring *r) { emitting_ring = r; }

int rk__cpu_channel_emit(unsigned port, const void *message, unsigned size) {
    rk__cpu_ring *r = emitting_ring;
    if (!r || port >= RK_MAX_PORTS) return RK_EMIT_NO_PORT;
    rk_channel *ch = atomic_load_explicit(&r->links.out[port], memory_order_acquire);
    if (!ch) return RK_EMIT_NO_PORT;
    if (!message) return RK_EMIT_BAD_SIZE;
    return rk__channel_emit(ch, message, size);
}

static void wake_ring(void *arg) {
    rk__cpu_ring *r = arg;
    if (r->ops && r->ops->kick) r->ops->kick(r);
}

static rk_status check_kernel(const rk_kernel *k) {
    static const char fn[] = "rk_channel_connect";
    const rk__cpu_ring *r = k->impl;
    if (k->mode != RK_MODE_PERSISTENT)
        return rk__fail(RK_UNSUPPORTED, "%s: kernel '%s' runs in %s mode; cpu channels need persistent kernels", fn,
                        k->name, rk_exec_mode_name(k->mode));
    if (r->workers != 1)
        return rk__fail(RK_UNSUPPORTED, "%s: kernel '%s' has %u workers; a kernel with channels needs 1 (per-channel order)",
                        fn, k->name, r->workers);
    return RK_OK;
}

/* The input first, so the destination polls it before any emit lands. */
static rk_status attach_input(rk_kernel *dst, rk_channel *ch) {
    rk__cpu_ring *to = dst->impl;
    unsigned n = atomic_load(&to->links.in_count);
    if (n >= RK_MAX_INPUTS)
        return rk__fail(RK_INVALID_ARGUMENT, "rk_channel_connect: kernel '%s' has no free input", dst->name);
    ch->wake = wake_ring;
    ch->wake_arg = to;
    atomic_store_explicit(&to->links.in[n], ch, memory_order_release);
    atomic_store_explicit(&to->links.in_count, n + 1, memory_order_release);
    return RK_OK;
}

static void attach_output(rk_kernel *src, rk_channel *ch) {
    rk__cpu_ring *from = src->impl;
    atomic_store_explicit(&from->links.out[ch->port], ch, memory_order_release);
    atomic_fetch_add_explicit(&from->links.out_count, 1, memory_order_release);
}

rk_status rk__cpu_channel_attach(rk_kernel *src, rk_kernel *dst, rk_channel *ch) {
    rk_status s = check_kernel(src);
    if (s == RK_OK) s = check_kernel(dst);
    if (s == RK_OK) s = attach_input(dst, ch);
    if (s == RK_OK) attach_output(src, ch);
    return s;
}

rk_status rk__cpu_channel_attach_source(rk_kernel *src, rk_channel *ch) {
    rk_status s = check_kernel(src);
    if (s == RK_OK) attach_output(src, ch);
    return s;
}

rk_status rk__cpu_channel_attach_sink(rk_kernel *dst, rk_channel *ch) {
    rk_status s = check_kernel(dst);
    return s == RK_OK ? attach_input(dst, ch) : s;
}

uint32_t rk__cpu_channel_credit(rk__cpu_ring *r) {
    uint32_t credit = UINT32_MAX;
    for (unsigned p = 0; p < RK_MAX_PORTS; p++) {
        rk_channel *ch = atomic_load_explicit(&r->links.out[p], memory_order_acquire);
        if (!ch || ch->desc.flow != RK_CHANNEL_HOLD || atomic_load(&ch->closed) != RK_OK) continue;
        uint32_t room = rk__channel_room(ch);
        if (room < credit) credit = room;
    }
    return credit;
}

bool rk__cpu_channel_pending(rk__cpu_ring *r) {
    unsigned n = atomic_load_explicit(&r->links.in_count, memory_order_acquire);
    for (unsigned i = 0; i < n; i++) {
        rk_channel *ch = atomic_load_explicit(&r->links.in[i], memory_order_acquire);
        if (rk_queue_depth(ch->ring)) return true;
    }
    return false;
}

void rk__cpu_channel_close_inputs(rk__cpu_ring *r, rk_status why) {
    if (r->links.inputs_closed) return;
    r->links.inputs_closed = true;
    unsigned n = atomic_load_explicit(&r->links.in_count, memory_order_acquire);
    for (unsigned i = 0; i < n; i++) rk__channel_close(atomic_load(&r->links.in[i]), why);
}

static int32_t reply_status(const unsigned char *reply) {
    rk__cpu_reply_header h;
    memcpy(&h, reply, sizeof h);
    return h.status;
}

/* Keeps the replies wanted (all, or only failures) at the front of the
 * batch's reply slots; returns how many. */
static uint32_t keep_replies(bool all, const rk__cpu_batch *b, uint32_t reply_stride) {
    uint32_t kept = 0;
    for (uint32_t i = 0; i < b->count; i++) {
        unsigned char *reply = rk__cpu_slot_at(&b->out, i);
        if (!all && reply_status(reply) == 0) continue;
        if (kept != i) { /* all but the tag (cpu_ring_internal.h) */
            unsigned char *to = rk__cpu_slot_at(&b->out, kept);
            memcpy(to, reply, RK_CPU_HEADER_UNTAGGED);
            memcpy(to + RK_CPU_SLOT_HEADER, reply + RK_CPU_SLOT_HEADER, reply_stride - RK_CPU_SLOT_HEADER);
        }
        kept++;
    }
    return kept;
}

uint32_t rk__cpu_channel_serve(rk__cpu_ring *r, rk_queue *out, rk__cpu_guard *g, bool failed, uint32_t credit,
                               uint64_t *processed, uint64_t *errors) {
    unsigned n = atomic_load_explicit(&r->links.in_count, memory_order_acquire);
    uint32_t taken = 0;
    for (unsigned v = 0; v < n && taken < credit; v++) {
        unsigned idx = (r->links.in_cursor + v) % n;
        rk_channel *ch = atomic_load_explicit(&r->links.in[idx], memory_order_acquire);
        uint32_t want = credit - taken < SERVE_BATCH ? credit - taken : SERVE_BATCH;
        uint64_t in_first, out_first;
        uint32_t count = rk_queue_peek(ch->ring, want, &in_first);
        if (count == 0) continue;
        count = rk_queue_reserve(out, count, &out_first);
        if (count == 0) break; /* the host output is full: the host must receive */
        rk__cpu_batch b = {
            .in = rk__cpu_queue_slots(ch->ring, in_first),
            .out = rk__cpu_queue_slots(out, out_first),
            .count = count,
        };
        if (failed)
            rk__cpu_ring_fault_batch(&b, r->reply_size, rk__cpu_ring_failure_reply(r));
        else
            rk__cpu_ring_run_batch(r, g, &b, r->state, processed, errors);
        uint32_t kept = keep_replies(failed || ch->desc.replies == RK_CHANNEL_REPLY_ALL, &b, out->slot_stride);
        /* Counted before the replies are published: never behind what the host has received. */
        atomic_fetch_add_explicit(&ch->delivered, count, memory_order_relaxed);
        if (kept) rk__cpu_queue_commit_tagged(out, kept);
        rk_queue_release(ch->ring, count);
        taken += count;
    }
    if (n) r->links.in_cursor = (r->links.in_cursor + 1) % n;
    return taken;
}

bool rk__cpu_channel_failures_only(rk__cpu_ring *r) {
    return atomic_load_explicit(&r->links.host_failures_only, memory_order_relaxed);
}

uint32_t rk__cpu_channel_host_replies(rk__cpu_ring *r, const rk__cpu_batch *b) {
    if (!rk__cpu_channel_failures_only(r)) return b->count;
    return keep_replies(false, b, b->out.stride);
}

rk_status rk__cpu_channel_set_host_replies(rk_kernel *k, bool failures_only) {
    rk__cpu_ring *r = k->impl;
    atomic_store_explicit(&r->links.host_failures_only, failures_only, memory_order_relaxed);
    return RK_OK;
}

void rk__cpu_channel_detach(rk__cpu_ring *r) {
    unsigned n = atomic_load(&r->links.in_count);
    for (unsigned i = 0; i < n; i++) {
        rk_channel *ch = atomic_load(&r->links.in[i]);
        rk__channel_close(ch, RK_TERMINATED);
        rk__channel_release(ch, RK__CHANNEL_DST);
    }
    for (unsigned p = 0; p < RK_MAX_PORTS; p++) {
        rk_channel *ch = atomic_load(&r->links.out[p]);
        if (ch) rk__channel_release(ch, RK__CHANNEL_SRC);
    }
}
