/* CPU ring kernels: the rk__ring_iface. Builds the handler and its state,
 * picks the mode's implementation (persistent workers or a launch per batch)
 * and holds what both modes share: running a batch of requests through the
 * handler and moving slots in and out of the queues. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_ring_internal.h"

static rk__cpu_ring *ring_of(rk_kernel *k) { return (rk__cpu_ring *)k->impl; }

void rk__cpu_ring_set_failure(rk__cpu_ring *r, rk_status status, const char *fmt, ...) {
    bool expected = false;
    if (!atomic_compare_exchange_strong(&r->failure_claimed, &expected, true)) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->failure_reason, sizeof r->failure_reason, fmt, ap);
    va_end(ap);
    /* release: the reason is complete before anyone sees the status. */
    atomic_store_explicit(&r->failure, (int)status, memory_order_release);
}

/* ---- batches ------------------------------------------------------------------- */

/* Leaves the tag alone: a consumer may be reading it (cpu_ring_internal.h). */
static void write_reply_header(unsigned char *reply, uint64_t id, int32_t status) {
    rk__cpu_reply_header h = {.id = id, .status = status};
    memcpy(reply, &h, RK_CPU_HEADER_UNTAGGED);
}

static uint64_t request_id(const unsigned char *request) {
    uint64_t id;
    memcpy(&id, request, sizeof id);
    return id;
}

void rk__cpu_ring_fault_batch(const rk__cpu_batch *b, uint32_t reply_size, int32_t status) {
    for (uint32_t i = 0; i < b->count; i++) {
        unsigned char *reply = rk__cpu_slot_at(&b->out, i);
        write_reply_header(reply, request_id(rk__cpu_slot_at(&b->in, i)), status);
        memset(reply + RK_CPU_SLOT_HEADER, 0, reply_size);
    }
}

int32_t rk__cpu_ring_failure_reply(rk__cpu_ring *r) {
    int failure = atomic_load_explicit(&r->failure, memory_order_acquire);
    return failure == RK_HUNG ? RK_HUNG : RK_DEVICE_FAULT;
}

/* Zeroes a reply's payload, 16 bytes at a time inline (a slot's stride is
 * a multiple of 16, so the rounded-up length stays inside the slot). */
static inline void zero_payload(unsigned char *reply, uint32_t reply_size) {
    static const unsigned char zeros[16];
    for (uint32_t i = 0; i < reply_size; i += 16u) memcpy(reply + RK_CPU_SLOT_HEADER + i, zeros, 16u);
}

/* Makes the next n written replies of b visible (a publishing batch, whose
 * output queue is tagged). */
static void publish(const rk__cpu_batch *b, uint32_t n) {
    if (b->publish && n) rk__cpu_queue_commit_tagged(b->publish, n);
    if (b->release && n) rk_queue_release(b->release, n);
    if (b->unpublished) atomic_store_explicit(b->unpublished, 0, memory_order_relaxed);
}

bool rk__cpu_ring_run_batch(rk__cpu_ring *r, rk__cpu_guard *g, const rk__cpu_batch *b, void *state,
                            uint64_t *processed, uint64_t *errors) {
    /* volatile: read again after a crash jumps back here. */
    volatile uint32_t i = 0, published = 0;
    volatile uint64_t errs = 0;
    if (g) {
        if (RK__CPU_GUARD_CATCH(g) != 0) {
            rk__cpu_guard_recover(g);
            if (b->cancellable) pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
            uint32_t at = i;
            const unsigned char *request = rk__cpu_slot_at(&b->in, at);
            rk__cpu_ring_set_failure(r, RK_DEVICE_FAULT,
                                     "handler of kernel '%s' crashed with %s (fault address %p) on request id %llu",
                                     r->name, rk__cpu_signal_name(g->signal), g->fault_address,
                                     (unsigned long long)request_id(request));
            rk__cpu_batch rest = *b;
            rest.in.first += at;
            rest.out.first += at;
            rest.count = b->count - at;
            rk__cpu_ring_fault_batch(&rest, r->reply_size, RK_DEVICE_FAULT);
            *processed += at;
            *errors += errs + 1;
            if (b->progress) atomic_store_explicit(b->progress, *processed, memory_order_release);
            if (b->error_progress) atomic_store_explicit(b->error_progress, *errors, memory_order_relaxed);
            publish(b, at - published + rest.count);
            return false;
        }
        rk__cpu_guard_arm(g);
    }
    rk_handler_fn handler = r->handler;
    uint32_t reply_size = r->reply_size;
    uint64_t before = *processed;
    /* A stuck handler can be cancelled from here on (see cpu_ring_cancel.c):
     * everything below up to the disable is the handler's or a plain store. */
    if (b->cancellable) pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
    for (; i < b->count; i++) {
        const unsigned char *request = rk__cpu_slot_at(&b->in, i);
        unsigned char *reply = rk__cpu_slot_at(&b->out, i);
        /* A handler that writes only part of its reply leaks nothing old. */
        zero_payload(reply, reply_size);
        int rc = handler(request + RK_CPU_SLOT_HEADER, reply + RK_CPU_SLOT_HEADER, state);
        write_reply_header(reply, request_id(request), rc);
        if (rc < 0) {
            errs++;
            if (b->error_progress) atomic_store_explicit(b->error_progress, *errors + errs, memory_order_relaxed);
        }
        /* Counted as soon as it exists, published a chunk at a time; a later
         * handler that never returns does not take it along: the worker's
         * stopper publishes what *unpublished says is written. */
        if (b->progress) atomic_store_explicit(b->progress, before + i + 1, memory_order_release);
        uint32_t pending = i + 1 - published;
        if (pending >= RK_CPU_PUBLISH_EVERY) {
            publish(b, pending);
            published = i + 1;
        } else if (b->unpublished) {
            atomic_store_explicit(b->unpublished, pending, memory_order_relaxed);
        }
    }
    publish(b, b->count - published);
    if (b->cancellable) pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
    if (g) rk__cpu_guard_disarm(g);
    *processed += b->count;
    *errors += errs;
    return true;
}

/* ---- moving slots between the host and the queues ----------------------------- */

size_t rk__cpu_ring_push_requests(rk_queue *q, bool tagged, uint32_t message_size, const unsigned char *messages,
                                  size_t stride, size_t count, uint64_t first_id) {
    uint64_t first;
    uint32_t n = rk_queue_reserve(q, count > UINT32_MAX ? UINT32_MAX : (uint32_t)count, &first);
    for (uint32_t i = 0; i < n; i++) {
        unsigned char *slot = rk_queue_producer_slot(q, first + i);
        uint64_t id = first_id + i; /* the header's other bytes: reserved (zero from create) and the tag */
        memcpy(slot, &id, sizeof id);
        rk_queue_copy_(slot + RK_CPU_SLOT_HEADER, messages + i * stride, message_size);
    }
    if (n && tagged)
        rk__cpu_queue_commit_tagged(q, n);
    else if (n)
        rk_queue_commit(q, n);
    return n;
}

size_t rk__cpu_ring_pop_replies(rk_queue *q, bool tagged, uint32_t reply_size, unsigned char *replies, size_t stride,
                                rk_reply_info *infos, size_t max) {
    uint64_t first;
    uint32_t want = max > UINT32_MAX ? UINT32_MAX : (uint32_t)max;
    uint32_t n = tagged ? rk__cpu_queue_peek_tagged(q, want, &first) : rk_queue_peek(q, want, &first);
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *slot = rk_queue_consumer_slot(q, first + i);
        rk__cpu_reply_header h;
        memcpy(&h, slot, sizeof h);
        infos[i] = (rk_reply_info){.id = h.id, .status = h.status};
        rk_queue_copy_(replies + i * stride, slot + RK_CPU_SLOT_HEADER, reply_size);
    }
    if (n) rk_queue_release(q, n);
    return n;
}

/* ---- the iface ------------------------------------------------------------------- */

/* Each mode's implementation, by rk_exec_mode; NULL where the CPU has none. */
static const rk__cpu_ring_ops *const modes[] = {
    [RK_MODE_PERSISTENT] = &rk__cpu_persistent_ops,
    [RK_MODE_TRADITIONAL] = &rk__cpu_traditional_ops,
    [RK_MODE_GRAPH] = NULL,
};

static rk_status resolve_mode(rk_context *ctx, rk_exec_mode requested, rk_exec_mode *out) {
    (void)ctx;
    rk_exec_mode mode = requested == RK_MODE_DEFAULT ? RK_MODE_PERSISTENT : requested;
    if ((unsigned)mode < sizeof modes / sizeof modes[0] && modes[mode]) {
        *out = mode;
        return RK_OK;
    }
    return rk__fail(RK_UNSUPPORTED, "rk_kernel_launch: %s mode is not available on the cpu backend",
                    rk_exec_mode_name(requested));
}

static void free_ring(rk__cpu_ring *r) {
    rk__cpu_channel_detach(r);
    if (r->state_buffer) rk_buffer_free(r->state_buffer);
    if (r->module) rk_module_destroy(r->module);
    free(r);
}

static rk_status build_handler(rk__cpu_ring *r, const rk_kernel *k) {
    if (k->desc.handler) {
        r->handler = k->desc.handler;
        return RK_OK;
    }
    /* Compiler messages name the user's file and lines, not the cache's copy. */
    char *text = NULL;
    if (asprintf(&text, "#line 1 \"%s\"\n%s", rk__handler_source_name(&k->desc), k->desc.handler_source) < 0)
        return rk__fail(RK_OUT_OF_MEMORY, "rk_kernel_launch: out of memory");
    rk_status s = rk_module_compile(k->ctx, text, k->desc.compile_options, &r->module);
    free(text);
    if (s != RK_OK) return s;
    void (*fn)(void) = NULL;
    s = rk__cpu_module_symbol(r->module, k->desc.handler_name, &fn);
    if (s != RK_OK) return s;
    r->handler = (rk_handler_fn)fn;
    return RK_OK;
}

static rk_status start(rk_kernel *k) {
    if (k->desc.workers > RK_CPU_MAX_WORKERS)
        return rk__fail(RK_INVALID_ARGUMENT, "rk_kernel_launch: %u workers asked for; the cpu backend allows 1 .. %d",
                        k->desc.workers, RK_CPU_MAX_WORKERS);
    if (k->mode == RK_MODE_TRADITIONAL && k->desc.workers > 1)
        return rk__fail(RK_INVALID_ARGUMENT,
                        "rk_kernel_launch: traditional mode runs one launch at a time; workers must be 0 or 1");
    rk__cpu_ring *r = aligned_alloc(64, (sizeof *r + 63) & ~(size_t)63);
    if (!r) return rk__fail(RK_OUT_OF_MEMORY, "rk_kernel_launch: out of memory");
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", k->name);
    r->ctx = k->ctx;
    r->message_size = k->desc.message_size;
    r->reply_size = k->desc.reply_size;
    r->state_size = k->desc.state_size;
    r->capacity = k->desc.queue_capacity;
    r->workers = k->desc.workers ? k->desc.workers : 1;
    r->watchdog_ns = rk__watchdog_ns("RK_CPU_WATCHDOG_MS");
    atomic_init(&r->is_active, false);
    atomic_init(&r->should_terminate, false);
    atomic_init(&r->failure_claimed, false);
    atomic_init(&r->failure, RK_OK);

    rk_status s = build_handler(r, k);
    if (s == RK_OK && r->state_size) {
        s = rk_buffer_alloc(k->ctx, r->state_size, &r->state_buffer); /* zeroed */
        if (s == RK_OK) r->state = rk__cpu_buffer_data(r->state_buffer);
        if (s == RK_OK && k->desc.initial_state) memcpy(r->state, k->desc.initial_state, r->state_size);
    }
    if (s == RK_OK) s = modes[k->mode]->start(r);
    if (s != RK_OK) {
        free_ring(r);
        return s;
    }
    k->impl = r;
    return RK_OK;
}

static rk_status try_send(rk_kernel *k, const void *messages, size_t stride, size_t count, uint64_t first_id,
                          size_t *accepted) {
    rk__cpu_ring *r = ring_of(k);
    *accepted = 0;
    if (rk__cpu_ring_failed(r))
        return rk__fail((rk_status)atomic_load(&r->failure), "cpu: %s", r->failure_reason);
    return r->ops->try_send(r, messages, stride, count, first_id, accepted);
}

static rk_status try_receive(rk_kernel *k, void *replies, size_t stride, rk_reply_info *infos, size_t max,
                             size_t *received) {
    rk__cpu_ring *r = ring_of(k);
    *received = 0;
    return r->ops->try_receive(r, replies, stride, infos, max, received);
}

static rk_status set_active(rk_kernel *k, bool active) {
    rk__cpu_ring *r = ring_of(k);
    atomic_store(&r->is_active, active);
    r->ops->wake(r);
    return RK_OK;
}

static rk_status request_terminate(rk_kernel *k) {
    rk__cpu_ring *r = ring_of(k);
    atomic_store(&r->should_terminate, true);
    r->ops->wake(r);
    return RK_OK;
}

static rk_status poll(rk_kernel *k, rk__control *out) {
    rk__cpu_ring *r = ring_of(k);
    out->is_active = atomic_load(&r->is_active);
    out->should_terminate = atomic_load(&r->should_terminate);
    r->ops->poll(r, out);
    int failure = atomic_load_explicit(&r->failure, memory_order_acquire);
    if (failure != RK_OK) {
        out->failure = (rk_status)failure;
        snprintf(out->failure_reason, sizeof out->failure_reason, "%s", r->failure_reason);
    }
    return RK_OK;
}

static bool wait(rk_kernel *k, uint64_t deadline_ns) {
    rk__cpu_ring *r = ring_of(k);
    return r->ops->wait && r->ops->wait(r, deadline_ns);
}

static rk_status destroy(rk_kernel *k) {
    rk__cpu_ring *r = ring_of(k);
    if (!r) return RK_OK;
    atomic_store(&r->should_terminate, true);
    r->ops->wake(r);
    rk_status s = r->ops->destroy(r);
    k->impl = NULL;
    return s;
}

void rk__cpu_ring_free(rk__cpu_ring *r) { free_ring(r); }

const rk__ring_iface rk__cpu_ring_iface = {
    .resolve_mode = resolve_mode,
    .start = start,
    .try_send = try_send,
    .try_receive = try_receive,
    .set_active = set_active,
    .request_terminate = request_terminate,
    .poll = poll,
    .wait = wait,
    .destroy = destroy,
    .channel_attach = rk__cpu_channel_attach,
    .set_host_replies = rk__cpu_channel_set_host_replies,
    .channel_attach_source = rk__cpu_channel_attach_source,
    .channel_attach_sink = rk__cpu_channel_attach_sink,
};
