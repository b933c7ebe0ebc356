/* Traditional CPU ring kernels: no thread of their own. Requests wait in an
 * input queue; each batch goes through the device layer like any GPU
 * command would: copy the requests into a device buffer, launch a kernel
 * that runs the handler over them (on the kernel's stream thread), copy the
 * replies out. So the persistent and the launch-per-batch patterns can be
 * compared on the same handler.
 *
 * The host drives it from try_send, try_receive and poll, and never waits
 * for a launch there: pump starts one when none is in flight and finishes it
 * once the stream is idle, so every call returns within its own timeout and
 * no handler runs on the caller's thread.
 *
 * The watchdog (in pump): a launch in flight that finishes no request for
 * watchdog_ns fails the kernel with RK_HUNG; the stream thread running the
 * handler is cancelled (cpu_ring_cancel.c). The replies the launch had
 * finished are taken from the device buffer (CPU device memory is host
 * memory), the rest of its requests are answered with RK_HUNG. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu_ring_internal.h"

typedef struct traditional traditional;

/* What the batch kernel reads and writes besides the slots. In device memory
 * (host memory on the CPU, so it may point at the ring). */
typedef struct batch_params {
    rk__cpu_ring *ring;
    traditional *mode;
    uint32_t in_stride, out_stride;
    uint64_t processed, errors; /* written by the kernel for each launch */
} batch_params;

struct traditional {
    rk_queue *in, *out;
    pthread_mutex_t pump_lock;  /* one pump at a time; it is the consumer of in and producer of out */
    rk_module *module;
    rk_function *function;
    rk_stream *stream;
    rk_buffer *in_buffer, *out_buffer, *params;

    /* The launch in flight; under pump_lock. */
    bool in_flight;
    uint64_t in_first, out_first;
    uint32_t count;
    uint64_t seen_done, seen_since_ns; /* the watchdog's last look */
    bool abandoned;                    /* its thread did not end when cancelled: keep the memory */

    /* Written by the batch kernel on the stream thread. */
    _Alignas(64) _Atomic uint64_t done; /* requests of the launch in flight answered */
    _Atomic bool in_handler;            /* the kernel runs handlers on runner */
    pthread_t runner;
    rk__cpu_guard guard;

    _Atomic uint64_t launches, processed, errors;
    _Atomic bool terminated;
    _Atomic bool in_flight_hint; /* in_flight, for t_wait (which takes no lock) */
};

static traditional *impl_of(rk__cpu_ring *r) { return (traditional *)r->mode_impl; }

/* ---- the kernel: runs on the device layer's executor -------------------------- */

static void ring_batch_kernel(unsigned char *in, unsigned char *out, batch_params *params, uint32_t count) {
    rk__cpu_ring *r = params->ring;
    traditional *t = params->mode;
    rk__cpu_batch b = {
        .in = {.base = in, .first = 0, .mask = UINT64_MAX, .stride = params->in_stride},
        .out = {.base = out, .first = 0, .mask = UINT64_MAX, .stride = params->out_stride},
        .count = count,
        .progress = &t->done,
        .cancellable = true,
    };
    /* The executor's thread is not ours: guard just this launch. */
    rk__cpu_guard *g = NULL;
    if (rk__cpu_guard_supported() && rk__cpu_guard_attach(&t->guard) == RK_OK) {
        if (rk__cpu_guard_install(&t->guard) == RK_OK)
            g = &t->guard;
        else
            rk__cpu_guard_detach(&t->guard);
    }
    t->runner = pthread_self();
    atomic_store(&t->in_handler, true);
    int type = 0;
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &type);
    uint64_t processed = 0, errors = 0;
    rk__cpu_ring_run_batch(r, g, &b, r->state, &processed, &errors);
    pthread_setcanceltype(type, NULL);
    atomic_store(&t->in_handler, false);
    if (g) {
        rk__cpu_guard_uninstall(g);
        rk__cpu_guard_detach(g);
    }
    params->processed = processed;
    params->errors = errors;
}

/* ---- one batch through the device layer ------------------------------------------ */

/* Copies count slots starting at queue index first between a queue and a
 * flat buffer, in at most two runs (the queue wraps). */
static rk_status copy_slots(rk_context *ctx, rk_stream *stream, rk_queue *q, uint64_t first, uint32_t count,
                            rk_buffer *buffer, bool to_device) {
    uint32_t stride = q->slot_stride, cap = q->capacity;
    uint32_t start = (uint32_t)(first & (cap - 1u));
    uint32_t run1 = count < cap - start ? count : cap - start;
    uint32_t runs[2][2] = {{start, run1}, {0, count - run1}};
    size_t offset = 0;
    for (int i = 0; i < 2; i++) {
        if (runs[i][1] == 0) continue;
        unsigned char *slots = q->slots + (size_t)runs[i][0] * stride;
        size_t bytes = (size_t)runs[i][1] * stride;
        rk_status s = to_device ? rk_copy_to_device(ctx, buffer, offset, slots, bytes, stream)
                                : rk_copy_to_host(ctx, slots, buffer, offset, bytes, stream);
        if (s != RK_OK) return s;
        offset += bytes;
    }
    return RK_OK;
}

/* Commits the launch's count replies and releases its requests. */
static void complete(traditional *t) {
    rk_queue_commit(t->out, t->count);
    rk_queue_release(t->in, t->count);
    t->in_flight = false;
    atomic_store(&t->in_flight_hint, false);
}

/* Answers the last n requests of the launch in flight with the kernel's
 * failure, in place of the replies the kernel would have written. */
static void fault_tail(rk__cpu_ring *r, traditional *t, uint32_t from) {
    rk__cpu_batch b = {
        .in = rk__cpu_queue_slots(t->in, t->in_first + from),
        .out = rk__cpu_queue_slots(t->out, t->out_first + from),
        .count = t->count - from,
    };
    rk__cpu_ring_fault_batch(&b, r->reply_size, rk__cpu_ring_failure_reply(r));
}

static rk_status start_launch(rk__cpu_ring *r, traditional *t) {
    rk_context *ctx = r->ctx;
    rk_status s = copy_slots(ctx, t->stream, t->in, t->in_first, t->count, t->in_buffer, true);
    if (s != RK_OK) return s;
    rk_arg args[] = {RK_ARG_BUF(t->in_buffer), RK_ARG_BUF(t->out_buffer), RK_ARG_BUF(t->params),
                     RK_ARG_UINT(t->count)};
    rk_launch_desc launch = {
        .grid = RK_DIM3(1, 1, 1),
        .block = RK_DIM3(1, 1, 1),
        .stream = t->stream,
        .args = args,
        .arg_count = sizeof args / sizeof args[0],
    };
    atomic_store(&t->done, 0);
    t->seen_done = 0;
    t->seen_since_ns = rk__now_ns();
    s = rk_launch(t->function, &launch);
    atomic_fetch_add(&t->launches, 1);
    return s;
}

/* The stream is idle: the launch has finished. */
static rk_status finish_launch(rk__cpu_ring *r, traditional *t) {
    rk_context *ctx = r->ctx;
    rk_status s = rk_stream_synchronize(t->stream);
    if (s == RK_OK) s = copy_slots(ctx, t->stream, t->out, t->out_first, t->count, t->out_buffer, false);
    batch_params results;
    if (s == RK_OK) s = rk_copy_to_host(ctx, &results, t->params, 0, sizeof results, t->stream);
    if (s == RK_OK) s = rk_stream_synchronize(t->stream);
    if (s != RK_OK) return s;
    atomic_store(&t->processed, atomic_load(&t->processed) + results.processed);
    atomic_store(&t->errors, atomic_load(&t->errors) + results.errors);
    return RK_OK;
}

/* Waits up to wait_ns for the launch in flight to end. True when it did. */
static bool stream_idle_within(traditional *t, uint64_t wait_ns) {
    uint64_t give_up = rk__now_ns() + wait_ns;
    while (rk__cpu_stream_busy(t->stream)) {
        if (rk__now_ns() > give_up) return false;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return true;
}

/* Cancels the stream thread if it is inside the handler and waits for the
 * stream to go idle. False when it does not. */
static bool stop_runner(traditional *t) {
    if (atomic_load(&t->in_handler)) pthread_cancel(t->runner);
    if (!stream_idle_within(t, RK_CPU_CANCEL_GRACE_NS)) return false;
    if (atomic_load(&t->in_handler)) {
        /* Cancelled inside the kernel: it never put its guard away. */
        rk__cpu_guard_abandon(&t->guard);
        atomic_store(&t->in_handler, false);
    }
    rk_stream_synchronize(t->stream); /* the cancelled launch's RK_HUNG */
    return true;
}

/* The launch in flight is stuck (the watchdog, or destroy): stops it and
 * answers its requests, the finished ones with their replies. */
static void abandon_launch(rk__cpu_ring *r, traditional *t) {
    if (!stop_runner(t)) {
        t->abandoned = true;
        rk__log(RK_LOG_ERROR, "cpu: kernel '%s': the thread running its handler did not end even when cancelled",
                r->name);
    }
    /* Replies [0, done) are complete in the device buffer and no longer
     * written to; the kernel stored done with release after each. */
    uint64_t done = atomic_load_explicit(&t->done, memory_order_acquire);
    const unsigned char *device = rk__cpu_buffer_data(t->out_buffer);
    uint32_t stride = t->out->slot_stride;
    for (uint32_t i = 0; i < done; i++)
        memcpy(rk_queue_producer_slot(t->out, t->out_first + i), device + (size_t)i * stride, stride);
    fault_tail(r, t, (uint32_t)done);
    atomic_store(&t->processed, atomic_load(&t->processed) + done);
    complete(t);
}

static void watch(rk__cpu_ring *r, traditional *t) {
    uint64_t done = atomic_load_explicit(&t->done, memory_order_relaxed), now = rk__now_ns();
    if (done != t->seen_done) {
        t->seen_done = done;
        t->seen_since_ns = now;
        return;
    }
    if (now - t->seen_since_ns < r->watchdog_ns) return;
    rk__cpu_request_header h;
    memcpy(&h, rk_queue_consumer_slot(t->in, t->in_first + done), sizeof h);
    rk__cpu_ring_set_failure(r, RK_HUNG,
                             "handler of kernel '%s' made no progress for %llu ms on request id %llu "
                             "(RK_CPU_WATCHDOG_MS sets the limit); the thread running it was cancelled",
                             r->name, (unsigned long long)((now - t->seen_since_ns) / 1000000u),
                             (unsigned long long)h.id);
    abandon_launch(r, t);
}

/* Moves things along without waiting: finishes the launch in flight if the
 * stream is idle (else runs the watchdog), then starts the next one if the
 * kernel may run (active, draining, or failed: then requests are answered
 * with its failure) and the output queue has room. Whoever finds the pump
 * busy skips it. */
static void pump(rk__cpu_ring *r, traditional *t) {
    if (pthread_mutex_trylock(&t->pump_lock) != 0) return;
    for (;;) {
        if (t->in_flight) {
            if (rk__cpu_stream_busy(t->stream)) {
                watch(r, t);
                if (t->in_flight) break;
                continue;
            }
            rk_status s = finish_launch(r, t);
            if (s != RK_OK) {
                rk__cpu_ring_set_failure(r, s, "the batch kernel of '%s' failed: %s", r->name, rk_last_error());
                fault_tail(r, t, 0);
            }
            /* A handler that crashed in this batch: the kernel answered the
             * rest with RK_DEVICE_FAULT already. */
            complete(t);
        }
        if (t->abandoned) break;
        bool terminating = atomic_load(&r->should_terminate);
        bool failed = rk__cpu_ring_failed(r);
        bool go = terminating || failed || atomic_load(&r->is_active);
        uint32_t n = go ? rk_queue_peek(t->in, r->capacity, &t->in_first) : 0;
        if (n == 0) {
            /* No send is in flight once should_terminate is set. */
            if (terminating && rk_queue_peek(t->in, 1, &t->in_first) == 0) atomic_store(&t->terminated, true);
            break;
        }
        n = rk_queue_reserve(t->out, n, &t->out_first);
        if (n == 0) break;
        t->count = n;
        t->in_flight = true;
        if (failed) {
            fault_tail(r, t, 0);
            complete(t);
            continue;
        }
        rk_status s = start_launch(r, t);
        if (s != RK_OK) {
            rk__cpu_ring_set_failure(r, s, "launching the batch kernel of '%s' failed: %s", r->name,
                                     rk_last_error());
            rk_stream_synchronize(t->stream);
            fault_tail(r, t, 0);
            complete(t);
            continue;
        }
        atomic_store(&t->in_flight_hint, true);
        break; /* it runs on the stream thread; a later pump finishes it */
    }
    pthread_mutex_unlock(&t->pump_lock);
}

/* ---- the iface slots ----------------------------------------------------------------- */

static rk_status t_try_send(rk__cpu_ring *r, const void *messages, size_t stride, size_t count, uint64_t first_id,
                            size_t *accepted) {
    traditional *t = impl_of(r);
    *accepted = rk__cpu_ring_push_requests(t->in, false, r->message_size, messages, stride, count, first_id);
    pump(r, t);
    return RK_OK;
}

static rk_status t_try_receive(rk__cpu_ring *r, void *replies, size_t stride, rk_reply_info *infos, size_t max,
                               size_t *received) {
    traditional *t = impl_of(r);
    if (rk_queue_depth(t->out) < max) pump(r, t);
    *received = rk__cpu_ring_pop_replies(t->out, false, r->reply_size, replies, stride, infos, max);
    return RK_OK;
}

static void t_wake(rk__cpu_ring *r) { (void)r; /* the next pump sees the flags */ }

/* A caller that waits sleeps until the launch in flight ends (woken by the
 * stream), not in the core's backoff. */
static bool t_wait(rk__cpu_ring *r, uint64_t deadline_ns) {
    traditional *t = impl_of(r);
    if (!atomic_load(&t->in_flight_hint)) return false;
    rk__cpu_stream_wait_idle_until(t->stream, deadline_ns);
    return true;
}

static void t_poll(rk__cpu_ring *r, rk__control *out) {
    traditional *t = impl_of(r);
    pump(r, t);
    out->messages_processed = atomic_load(&t->processed);
    out->errors_encountered = atomic_load(&t->errors);
    out->launches = atomic_load(&t->launches);
    out->input_depth = rk_queue_depth(t->in);
    out->output_depth = rk_queue_depth(t->out);
    out->has_terminated = atomic_load(&t->terminated);
}

static void free_traditional(traditional *t) {
    if (t->stream) rk_stream_destroy(t->stream);
    if (t->in_buffer) rk_buffer_free(t->in_buffer);
    if (t->out_buffer) rk_buffer_free(t->out_buffer);
    if (t->params) rk_buffer_free(t->params);
    if (t->module) rk_module_destroy(t->module);
    rk_queue_destroy(t->in);
    rk_queue_destroy(t->out);
    pthread_mutex_destroy(&t->pump_lock);
    free(t);
}

static rk_status t_destroy(rk__cpu_ring *r) {
    traditional *t = impl_of(r);
    /* No call pumps any more; a launch still in flight gets a moment to end. */
    pthread_mutex_lock(&t->pump_lock);
    bool cancelled = false;
    if (t->in_flight && !t->abandoned) {
        cancelled = !stream_idle_within(t, 200u * 1000u * 1000u);
        if (cancelled) abandon_launch(r, t);
    }
    pthread_mutex_unlock(&t->pump_lock);
    if (t->abandoned)
        return rk__fail(RK_HUNG,
                        "rk_kernel_destroy: kernel '%s': the thread running its handler did not end even when "
                        "cancelled; it is left running and the kernel's memory is kept",
                        r->name);
    char name[sizeof r->name];
    memcpy(name, r->name, sizeof name);
    free_traditional(t);
    rk__cpu_ring_free(r);
    if (cancelled)
        return rk__fail(RK_HUNG,
                        "rk_kernel_destroy: kernel '%s': its handler did not return; the thread running it was "
                        "cancelled, everything is freed",
                        name);
    return RK_OK;
}

const rk__cpu_ring_ops rk__cpu_traditional_ops = {
    .start = rk__cpu_traditional_start,
    .try_send = t_try_send,
    .try_receive = t_try_receive,
    .wake = t_wake,
    .poll = t_poll,
    .wait = t_wait,
    .destroy = t_destroy,
};

rk_status rk__cpu_traditional_start(rk__cpu_ring *r) {
    traditional *t = calloc(1, sizeof *t);
    if (!t) return rk__fail(RK_OUT_OF_MEMORY, "rk_kernel_launch: out of memory");
    pthread_mutex_init(&t->pump_lock, NULL);
    atomic_init(&t->done, 0);
    atomic_init(&t->in_handler, false);
    atomic_init(&t->in_flight_hint, false);
    rk_context *ctx = r->ctx;
    rk_status s = rk_queue_create(r->capacity, RK_CPU_SLOT_HEADER + r->message_size, &t->in);
    if (s == RK_OK) s = rk_queue_create(r->capacity, RK_CPU_SLOT_HEADER + r->reply_size, &t->out);
    if (s != RK_OK) {
        free_traditional(t);
        return rk__fail(s, "rk_kernel_launch: cannot create queues of %u slots: %s", r->capacity,
                        rk_status_message(s));
    }
    const rk_host_kernel kernels[] = {{.name = "rk_ring_batch", .fn = (void (*)(void))ring_batch_kernel}};
    s = rk_module_from_host_kernels(ctx, kernels, 1, &t->module);
    if (s == RK_OK) s = rk_module_get_function(t->module, "rk_ring_batch", &t->function);
    if (s == RK_OK) s = rk_stream_create(ctx, &t->stream);
    if (s == RK_OK) s = rk_buffer_alloc(ctx, (size_t)r->capacity * t->in->slot_stride, &t->in_buffer);
    if (s == RK_OK) s = rk_buffer_alloc(ctx, (size_t)r->capacity * t->out->slot_stride, &t->out_buffer);
    if (s == RK_OK) s = rk_buffer_alloc(ctx, sizeof(batch_params), &t->params);
    if (s == RK_OK) {
        batch_params params = {.ring = r, .mode = t, .in_stride = t->in->slot_stride, .out_stride = t->out->slot_stride};
        s = rk_copy_to_device(ctx, t->params, 0, &params, sizeof params, t->stream);
        if (s == RK_OK) s = rk_stream_synchronize(t->stream);
    }
    if (s != RK_OK) {
        free_traditional(t);
        return s;
    }
    r->mode_impl = t;
    r->ops = &rk__cpu_traditional_ops;
    return RK_OK;
}
