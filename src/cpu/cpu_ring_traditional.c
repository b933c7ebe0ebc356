/* Traditional CPU ring kernels: no thread of their own. Requests wait in an
 * input queue; each batch goes through the device layer like any GPU
 * command would: copy the requests into a device buffer, launch a kernel
 * that runs the handler over them, synchronize, copy the replies out. The
 * host drives it from try_send, try_receive and poll, so the persistent and
 * the launch-per-batch patterns can be compared on the same handler. */
#include <stdlib.h>
#include <string.h>

#include "cpu_ring_internal.h"

/* What the batch kernel reads and writes besides the slots. In device memory
 * (host memory on the CPU, so it may point at the ring). */
typedef struct batch_params {
    rk__cpu_ring *ring;
    uint32_t in_stride, out_stride;
    uint64_t processed, errors; /* written by the kernel for each launch */
} batch_params;

typedef struct traditional {
    rk_queue *in, *out;
    pthread_mutex_t pump_lock;  /* one pump at a time; it is the consumer of in and producer of out */
    rk_module *module;
    rk_function *function;
    rk_stream *stream;
    rk_buffer *in_buffer, *out_buffer, *params;
    _Atomic uint64_t launches, processed, errors;
    _Atomic bool terminated;
} traditional;

static traditional *impl_of(rk__cpu_ring *r) { return (traditional *)r->mode_impl; }

/* ---- the kernel: runs on the device layer's executor -------------------------- */

static void ring_batch_kernel(unsigned char *in, unsigned char *out, batch_params *params, uint32_t count) {
    rk__cpu_ring *r = params->ring;
    rk__cpu_batch b = {
        .in = {.base = in, .first = 0, .mask = UINT64_MAX, .stride = params->in_stride},
        .out = {.base = out, .first = 0, .mask = UINT64_MAX, .stride = params->out_stride},
        .count = count,
    };
    /* The executor's thread is not ours: guard just this launch. */
    rk__cpu_guard guard;
    rk__cpu_guard *g = NULL;
    if (rk__cpu_guard_supported() && rk__cpu_guard_attach(&guard) == RK_OK) {
        if (rk__cpu_guard_install(&guard) == RK_OK)
            g = &guard;
        else
            rk__cpu_guard_detach(&guard);
    }
    uint64_t processed = 0, errors = 0;
    rk__cpu_ring_run_batch(r, g, &b, r->state, &processed, &errors);
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

static rk_status launch_batch(rk__cpu_ring *r, traditional *t, uint64_t in_first, uint64_t out_first, uint32_t n) {
    rk_context *ctx = r->ctx;
    rk_status s = copy_slots(ctx, t->stream, t->in, in_first, n, t->in_buffer, true);
    if (s != RK_OK) return s;
    rk_arg args[] = {RK_ARG_BUF(t->in_buffer), RK_ARG_BUF(t->out_buffer), RK_ARG_BUF(t->params), RK_ARG_UINT(n)};
    rk_launch_desc launch = {
        .grid = RK_DIM3(1, 1, 1),
        .block = RK_DIM3(1, 1, 1),
        .stream = t->stream,
        .args = args,
        .arg_count = sizeof args / sizeof args[0],
    };
    s = rk_launch(t->function, &launch);
    if (s == RK_OK) s = rk_stream_synchronize(t->stream);
    atomic_fetch_add(&t->launches, 1);
    if (s != RK_OK) return s;
    s = copy_slots(ctx, t->stream, t->out, out_first, n, t->out_buffer, false);
    batch_params results;
    if (s == RK_OK) s = rk_copy_to_host(ctx, &results, t->params, 0, sizeof results, t->stream);
    if (s == RK_OK) s = rk_stream_synchronize(t->stream);
    if (s != RK_OK) return s;
    atomic_store(&t->processed, atomic_load(&t->processed) + results.processed);
    atomic_store(&t->errors, atomic_load(&t->errors) + results.errors);
    return RK_OK;
}

/* Runs every batch that can run now: the kernel must be active (or
 * draining, or failed: then requests are answered with RK_DEVICE_FAULT) and
 * the output queue must have room. Whoever finds the pump busy skips it. */
static void pump(rk__cpu_ring *r, traditional *t) {
    if (pthread_mutex_trylock(&t->pump_lock) != 0) return;
    for (;;) {
        bool terminating = atomic_load(&r->should_terminate);
        bool failed = rk__cpu_ring_failed(r);
        bool go = terminating || failed || atomic_load(&r->is_active);
        uint64_t in_first = 0, out_first = 0;
        uint32_t n = go ? rk_queue_peek(t->in, r->capacity, &in_first) : 0;
        if (n == 0) {
            /* No send is in flight once should_terminate is set. */
            if (terminating && rk_queue_peek(t->in, 1, &in_first) == 0) atomic_store(&t->terminated, true);
            break;
        }
        n = rk_queue_reserve(t->out, n, &out_first);
        if (n == 0) break;
        if (!failed) {
            rk_status s = launch_batch(r, t, in_first, out_first, n);
            if (s != RK_OK) {
                rk__cpu_ring_set_failure(r, s, "launching the batch kernel of '%s' failed: %s", r->name,
                                         rk_last_error());
                failed = true;
            } else if (rk__cpu_ring_failed(r)) {
                /* The handler crashed in this batch: the kernel answered the
                 * rest with RK_DEVICE_FAULT already. */
                failed = false;
            }
        }
        if (failed) {
            rk__cpu_batch b = {
                .in = rk__cpu_queue_slots(t->in, in_first),
                .out = rk__cpu_queue_slots(t->out, out_first),
                .count = n,
            };
            rk__cpu_ring_fault_batch(&b, r->reply_size);
        }
        rk_queue_commit(t->out, n);
        rk_queue_release(t->in, n);
    }
    pthread_mutex_unlock(&t->pump_lock);
}

/* ---- the iface slots ----------------------------------------------------------------- */

static rk_status t_try_send(rk__cpu_ring *r, const void *messages, size_t stride, size_t count, uint64_t first_id,
                            size_t *accepted) {
    traditional *t = impl_of(r);
    *accepted = rk__cpu_ring_push_requests(t->in, r->message_size, messages, stride, count, first_id);
    pump(r, t);
    return RK_OK;
}

static rk_status t_try_receive(rk__cpu_ring *r, void *replies, size_t stride, rk_reply_info *infos, size_t max,
                               size_t *received) {
    traditional *t = impl_of(r);
    if (rk_queue_depth(t->out) < max) pump(r, t);
    *received = rk__cpu_ring_pop_replies(t->out, r->reply_size, replies, stride, infos, max);
    return RK_OK;
}

static void t_wake(rk__cpu_ring *r) { (void)r; /* the next pump sees the flags */ }

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

static void t_destroy(rk__cpu_ring *r) {
    traditional *t = impl_of(r);
    /* A launch still in flight finishes before its stream is destroyed. */
    pthread_mutex_lock(&t->pump_lock);
    pthread_mutex_unlock(&t->pump_lock);
    free_traditional(t);
    rk__cpu_ring_free(r);
}

static const rk__cpu_ring_ops traditional_ops = {
    .try_send = t_try_send,
    .try_receive = t_try_receive,
    .wake = t_wake,
    .poll = t_poll,
    .destroy = t_destroy,
};

rk_status rk__cpu_traditional_start(rk__cpu_ring *r) {
    traditional *t = calloc(1, sizeof *t);
    if (!t) return rk__fail(RK_OUT_OF_MEMORY, "rk_kernel_launch: out of memory");
    pthread_mutex_init(&t->pump_lock, NULL);
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
        batch_params params = {.ring = r, .in_stride = t->in->slot_stride, .out_stride = t->out->slot_stride};
        s = rk_copy_to_device(ctx, t->params, 0, &params, sizeof params, t->stream);
        if (s == RK_OK) s = rk_stream_synchronize(t->stream);
    }
    if (s != RK_OK) {
        free_traditional(t);
        return s;
    }
    r->mode_impl = t;
    r->ops = &traditional_ops;
    return RK_OK;
}
