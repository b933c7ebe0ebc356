/* Ring kernels: launch, lifecycle, statistics and names. The backend moves
 * messages and runs the handler (rk__ring_iface); this file owns validation
 * and the state machine
 *
 *   LAUNCHED <-> ACTIVE -> TERMINATING -> TERMINATED
 *        \          \           \
 *         `----------`-----------`--> FAILED (a backend failure seen by poll)
 *
 * Sending and receiving live in kernel_io.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "channel_relay.h"
#include "kernel_handler.h"
#include "kernel_internal.h"
#include "kernel_wait.h"
#include "ringkernel/queue.h"

#define MAX_MESSAGE_SIZE 65536u

const char *rk_exec_mode_name(rk_exec_mode mode) {
    switch (mode) {
    case RK_MODE_DEFAULT: return "default";
    case RK_MODE_PERSISTENT: return "persistent";
    case RK_MODE_TRADITIONAL: return "traditional";
    case RK_MODE_GRAPH: return "graph";
    }
    return "unknown";
}

const char *rk_kernel_state_name(rk_kernel_state state) {
    switch (state) {
    case RK_KERNEL_LAUNCHED: return "launched";
    case RK_KERNEL_ACTIVE: return "active";
    case RK_KERNEL_TERMINATING: return "terminating";
    case RK_KERNEL_TERMINATED: return "terminated";
    case RK_KERNEL_FAILED: return "failed";
    }
    return "unknown";
}

/* ---- launch ------------------------------------------------------------------ */

static rk_status validate_desc(const rk_kernel_desc *d) {
    static const char fn[] = "rk_kernel_launch";
    if (d->message_size == 0 || d->message_size > MAX_MESSAGE_SIZE)
        return rk__fail(RK_INVALID_ARGUMENT, "%s: message_size is %u (must be 1 .. %u)", fn, d->message_size,
                        MAX_MESSAGE_SIZE);
    if (d->reply_size > MAX_MESSAGE_SIZE)
        return rk__fail(RK_INVALID_ARGUMENT, "%s: reply_size is %u (must be 0 .. %u)", fn, d->reply_size,
                        MAX_MESSAGE_SIZE);
    if (d->state_size > RK_MAX_STATE_SIZE)
        return rk__fail(RK_INVALID_ARGUMENT, "%s: state_size is %u (must be 0 .. %u, RK_MAX_STATE_SIZE)", fn,
                        d->state_size, RK_MAX_STATE_SIZE);
    uint32_t cap = d->queue_capacity;
    if (cap == 0 || (cap & (cap - 1)) != 0 || cap > RK_QUEUE_MAX_CAPACITY)
        return rk__fail(RK_BAD_CAPACITY, "%s: queue_capacity is %u (must be a power of two, 1 .. %u)", fn, cap,
                        (unsigned)RK_QUEUE_MAX_CAPACITY);
    if (d->initial_state && d->state_size == 0)
        return rk__fail(RK_INVALID_ARGUMENT, "%s: initial_state is set but the kernel has no state (state_size 0)", fn);
    if ((int)d->mode < (int)RK_MODE_DEFAULT || (int)d->mode > (int)RK_MODE_GRAPH)
        return rk__fail(RK_INVALID_ARGUMENT, "%s: unknown execution mode %d", fn, (int)d->mode);
    return rk__clients_validate_desc(d);
}

static char *copy_string(const char *s) {
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

static void free_core(rk__kernel_core *c) {
    rk_kernel *k = &c->k;
    rk__clients_free(c);
    pthread_mutex_destroy(&c->lifecycle_lock);
    pthread_mutex_destroy(&c->receive_lock);
    pthread_mutex_destroy(&c->poll_lock);
    free(k->name);
    free(k->handler_source);
    free(k->handler_name);
    free(k->handler_file);
    free(k->held_replies);
    free(k->held_infos);
    free(c->pad);
    free(c);
}

static rk_status launch_checked(rk_runtime *rt, const rk_kernel_desc *desc, rk__handler_text *text, rk_kernel **out);

rk_status rk_kernel_launch(rk_runtime *rt, const rk_kernel_desc *desc, rk_kernel **out) {
    static const char fn[] = "rk_kernel_launch";
    if (!out) return rk__fail(RK_NULL_ARGUMENT, "%s: out is NULL", fn);
    *out = NULL;
    if (!rt) return rk__fail(RK_NULL_ARGUMENT, "%s: rt is NULL", fn);
    if (!desc) return rk__fail(RK_NULL_ARGUMENT, "%s: desc is NULL", fn);
    /* The handler first: a DSL handler's types give the sizes validated next. */
    rk_kernel_desc d = *desc;
    rk__handler_text text;
    rk_status s = rk__handler_text_load(&d, &text);
    if (s == RK_OK) s = rk__handler_check(&d);
    if (s == RK_OK) s = validate_desc(&d);
    if (s == RK_OK) s = launch_checked(rt, &d, &text, out);
    rk__handler_text_free(&text);
    return s;
}

/* Launches a desc whose handler is loaded and checked; takes text's source
 * and file. */
static rk_status launch_checked(rk_runtime *rt, const rk_kernel_desc *desc, rk__handler_text *text, rk_kernel **out) {
    static const char fn[] = "rk_kernel_launch";
    rk_context *ctx = rk_runtime_context(rt);
    const rk__ring_iface *ring = ctx->iface->ring;
    if (!ring) return rk__fail(RK_UNSUPPORTED, "%s: the %s backend has no ring kernels", fn, ctx->backend->name);
    rk_exec_mode mode = RK_MODE_DEFAULT;
    rk_status s = ring->resolve_mode(ctx, desc->mode, &mode);
    if (s != RK_OK) return s;

    rk__kernel_core *c = calloc(1, sizeof *c);
    if (!c) return rk__fail(RK_OUT_OF_MEMORY, "%s: out of memory", fn);
    pthread_mutex_init(&c->lifecycle_lock, NULL);
    pthread_mutex_init(&c->receive_lock, NULL);
    pthread_mutex_init(&c->poll_lock, NULL);
    rk_kernel *k = &c->k;
    k->runtime = rt;
    k->ctx = ctx;
    k->ring = ring;
    k->desc = *desc;
    k->name = copy_string(desc->name ? desc->name : "kernel");
    k->handler_source = text->source;
    k->handler_file = text->file;
    text->source = text->file = NULL;
    k->handler_name = copy_string(desc->handler_name);
    c->pad = calloc(1, desc->message_size);
    if (!k->name || !c->pad || (desc->handler_name && !k->handler_name)) {
        free_core(c);
        return rk__fail(RK_OUT_OF_MEMORY, "%s: out of memory", fn);
    }
    k->desc.name = k->name;
    k->desc.handler_source = k->handler_source;
    k->desc.handler_name = k->handler_name;
    k->desc.handler_file = k->handler_file;
    k->mode = mode;
    k->desc.mode = mode;
    atomic_init(&k->state, RK_KERNEL_LAUNCHED);
    k->next_id = 1;
    atomic_init(&c->failure, RK_OK);

    s = ring->start(k); /* compile_options and initial_state are read here only */
    k->desc.compile_options = NULL;
    k->desc.initial_state = NULL;
    if (s != RK_OK) {
        free_core(c);
        return s;
    }
    rk__runtime_kernels_add(rt, 1);
    rk__log(RK_LOG_DEBUG, "kernel '%s' launched on %s (%s)", k->name, ctx->backend->name, rk_exec_mode_name(mode));
    rk__kernel_check_cores(c, 1); /* the launching thread */
    *out = k;
    return RK_OK;
}

/* ---- failure and polling ------------------------------------------------------- */

rk_status rk__kernel_fail_failed(rk__kernel_core *c, const char *fn) {
    rk_status f = (rk_status)atomic_load(&c->failure);
    return rk__fail(f, "%s: kernel '%s' failed: %s", fn, c->k.name, c->failure_reason);
}

void rk__kernel_refresh(rk__kernel_core *c, rk__control *out) {
    rk_kernel *k = &c->k;
    rk__control ctl;
    memset(&ctl, 0, sizeof ctl);
    pthread_mutex_lock(&c->poll_lock);
    rk_status s = k->ring->poll(k, &ctl);
    if (s != RK_OK && ctl.failure == RK_OK) {
        /* A poll that cannot read the device is a failure of the kernel. */
        ctl.failure = s;
        snprintf(ctl.failure_reason, sizeof ctl.failure_reason, "polling the kernel failed: %s", rk_last_error());
    }
    if (ctl.failure != RK_OK && atomic_load(&c->failure) == RK_OK) {
        const char *why = ctl.failure_reason[0] ? ctl.failure_reason : rk_status_message(ctl.failure);
        snprintf(c->failure_reason, sizeof c->failure_reason, "%s (%s)", why, rk_status_name(ctl.failure));
        atomic_store(&c->failure, (int)ctl.failure);
        int st = atomic_load(&k->state);
        while (st != RK_KERNEL_FAILED && st != RK_KERNEL_TERMINATED &&
               !atomic_compare_exchange_weak(&k->state, &st, RK_KERNEL_FAILED)) {
        }
        rk__log(RK_LOG_ERROR, "kernel '%s' failed: %s", k->name, c->failure_reason);
    }
    if (ctl.has_terminated) atomic_store(&c->backend_terminated, true);
    pthread_mutex_unlock(&c->poll_lock);
    if (out) *out = ctl;
}

rk_kernel_state rk_kernel_get_state(rk_kernel *k) {
    if (!k) {
        rk__fail(RK_NULL_ARGUMENT, "rk_kernel_get_state: k is NULL");
        return RK_KERNEL_FAILED;
    }
    rk__kernel_refresh(rk__core_of(k), NULL);
    return (rk_kernel_state)atomic_load(&k->state);
}

rk_status rk_kernel_stats_get(rk_kernel *k, rk_kernel_stats *out) {
    if (!k) return rk__fail(RK_NULL_ARGUMENT, "rk_kernel_stats_get: k is NULL");
    if (!out) return rk__fail(RK_NULL_ARGUMENT, "rk_kernel_stats_get: out is NULL");
    rk__kernel_core *c = rk__core_of(k);
    rk__control ctl;
    rk__kernel_refresh(c, &ctl);
    memset(out, 0, sizeof *out);
    out->state = (rk_kernel_state)atomic_load(&k->state);
    out->is_active = ctl.is_active;
    out->should_terminate = ctl.should_terminate;
    out->has_terminated = ctl.has_terminated;
    out->messages_sent = atomic_load(&k->messages_sent);
    out->messages_processed = ctl.messages_processed;
    out->errors_encountered = ctl.errors_encountered;
    out->replies_received = atomic_load(&k->replies_received);
    out->launches = ctl.launches;
    out->input_depth = ctl.input_depth;
    out->output_depth = ctl.output_depth + (uint32_t)rk__kernel_held_pending(c);
    out->failure = (rk_status)atomic_load(&c->failure);
    rk__clients_fill_stats(c, out);
    return RK_OK;
}

/* ---- lifecycle ------------------------------------------------------------------- */

/* Why a kernel in state st refuses fn, or RK_OK. */
static rk_status refuse_if_stopped(rk__kernel_core *c, const char *fn, int st) {
    if (st == RK_KERNEL_FAILED) return rk__kernel_fail_failed(c, fn);
    if (st == RK_KERNEL_TERMINATING || st == RK_KERNEL_TERMINATED)
        return rk__fail(RK_TERMINATED, "%s: kernel '%s' is %s", fn, c->k.name,
                        rk_kernel_state_name((rk_kernel_state)st));
    return RK_OK;
}

static rk_status set_active(rk_kernel *k, bool active, const char *fn) {
    if (!k) return rk__fail(RK_NULL_ARGUMENT, "%s: k is NULL", fn);
    rk__kernel_core *c = rk__core_of(k);
    int from = active ? RK_KERNEL_LAUNCHED : RK_KERNEL_ACTIVE;
    int to = active ? RK_KERNEL_ACTIVE : RK_KERNEL_LAUNCHED;
    pthread_mutex_lock(&c->lifecycle_lock);
    int st = atomic_load(&k->state);
    rk_status s = refuse_if_stopped(c, fn, st);
    if (s == RK_OK && st == from) {
        s = k->ring->set_active(k, active);
        /* A failure seen meanwhile wins: leave FAILED alone. */
        if (s == RK_OK) atomic_compare_exchange_strong(&k->state, &from, to);
    }
    pthread_mutex_unlock(&c->lifecycle_lock);
    return s;
}

rk_status rk_kernel_activate(rk_kernel *k) { return set_active(k, true, "rk_kernel_activate"); }

rk_status rk_kernel_deactivate(rk_kernel *k) { return set_active(k, false, "rk_kernel_deactivate"); }

/* Stops new sends, waits out the ones in flight, and tells the backend to
 * drain and stop. Done once. */
static rk_status request_terminate(rk__kernel_core *c) {
    rk_kernel *k = &c->k;
    pthread_mutex_lock(&c->lifecycle_lock);
    rk_status s = RK_OK;
    if (!atomic_load(&c->terminate_requested)) {
        int st = atomic_load(&k->state);
        while ((st == RK_KERNEL_LAUNCHED || st == RK_KERNEL_ACTIVE) &&
               !atomic_compare_exchange_weak(&k->state, &st, RK_KERNEL_TERMINATING)) {
        }
        /* A send that saw the old state finishes its try_send; one that
         * starts now sees TERMINATING (or FAILED) and refuses. */
        rk__backoff b;
        rk__backoff_init(&b, RK_WAIT_FOREVER);
        while (atomic_load(&c->senders_in_flight) != 0) rk__backoff_wait(&b);
        s = k->ring->set_active(k, true);
        if (s == RK_OK) s = k->ring->request_terminate(k);
        if (s == RK_OK) atomic_store(&c->terminate_requested, true);
    }
    pthread_mutex_unlock(&c->lifecycle_lock);
    return s;
}

rk_status rk_kernel_terminate(rk_kernel *k, uint64_t timeout_ns) {
    static const char fn[] = "rk_kernel_terminate";
    if (!k) return rk__fail(RK_NULL_ARGUMENT, "%s: k is NULL", fn);
    rk__kernel_core *c = rk__core_of(k);
    if (atomic_load(&k->state) == RK_KERNEL_TERMINATED) return RK_OK;
    /* Relayed inputs first: what was accepted upstream reaches the kernel. */
    rk_status s = RK_OK;
    if (!atomic_load(&c->terminate_requested) && atomic_load(&k->state) != RK_KERNEL_FAILED)
        s = rk__relay_before_terminate(k, timeout_ns);
    if (s == RK_OK) s = request_terminate(c);
    if (s != RK_OK) return s;
    rk__backoff b;
    rk__backoff_init(&b, timeout_ns);
    for (;;) {
        /* Taking replies off the backend keeps its output queue from filling
         * up, so draining can always finish even if nobody receives. */
        size_t held_before = rk__kernel_held_pending(c);
        s = rk__kernel_hold_replies(c);
        if (s != RK_OK) return s;
        rk__control ctl;
        rk__kernel_refresh(c, &ctl);
        if (ctl.has_terminated) {
            /* Replies published before has_terminated are visible now. */
            s = rk__kernel_hold_replies(c);
            if (s != RK_OK) return s;
            int st = RK_KERNEL_TERMINATING;
            atomic_compare_exchange_strong(&k->state, &st, RK_KERNEL_TERMINATED);
            if (atomic_load(&k->state) == RK_KERNEL_FAILED) return rk__kernel_fail_failed(c, fn);
            return RK_OK;
        }
        if (rk__kernel_held_pending(c) != held_before) rk__backoff_reset(&b);
        if (!rk__kernel_wait(c, &b))
            return rk__fail(RK_TIMEOUT, "%s: kernel '%s' still has %u messages to process", fn, k->name,
                            ctl.input_depth);
    }
}

rk_status rk_kernel_destroy(rk_kernel *k) {
    if (!k) return rk__fail(RK_NULL_ARGUMENT, "rk_kernel_destroy: k is NULL");
    rk__kernel_core *c = rk__core_of(k);
    bool failed_before = atomic_load(&k->state) == RK_KERNEL_FAILED;
    /* Wait as long as the kernel makes progress; give up after a few seconds
     * without any (a handler stuck in a loop), and let the backend stop it as
     * best it can. A kernel that has already failed cannot drain: no wait. */
    uint64_t last_processed = UINT64_MAX;
    int stalled = 0;
    while (!atomic_load(&c->backend_terminated) && atomic_load(&k->state) != RK_KERNEL_FAILED && stalled < 5) {
        rk_status s = rk_kernel_terminate(k, 1000000000u);
        if (atomic_load(&c->backend_terminated) || atomic_load(&k->state) == RK_KERNEL_FAILED) break;
        if (s != RK_TIMEOUT && s != RK_OK) {
            /* The backend could not even be asked to stop; don't spin on it. */
            if (!atomic_load(&c->terminate_requested)) break;
        }
        rk__control ctl;
        rk__kernel_refresh(c, &ctl);
        stalled = ctl.messages_processed == last_processed ? stalled + 1 : 0;
        last_processed = ctl.messages_processed;
    }
    if (!atomic_load(&c->backend_terminated))
        rk__log(RK_LOG_WARN, "kernel '%s' did not terminate; stopping it forcibly", k->name);
    rk__relay_before_destroy(k);
    rk_status s = k->ring->destroy(k);
    /* A handler found stuck while this call waited (the watchdog fired) is
     * reported like one the backend had to stop. */
    if (s == RK_OK && !failed_before && atomic_load(&c->failure) == RK_HUNG)
        s = rk__kernel_fail_failed(c, "rk_kernel_destroy");
    rk_runtime *rt = k->runtime;
    free_core(c);
    rk__runtime_kernels_add(rt, -1);
    return s;
}
