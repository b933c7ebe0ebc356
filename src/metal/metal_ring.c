/* Ring kernels on Metal by event-driven relaunch: Metal has no persistent
 * kernels, so the handler is transpiled to MSL with its relaunch ring kernel
 * rk_ring_<handler> (src/transpile/emit_msl.c), and the queues and the
 * control block live in shared-storage buffers the host writes directly.
 *
 * try_send writes requests into free slots of the request queue. poll makes
 * progress: with no dispatch in flight, and the kernel active (or draining
 * for termination) and messages queued, it publishes the tail in the control
 * block and dispatches one thread of the ring kernel, which handles
 * head..tail in order; when that dispatch has completed, the replies of the
 * slots it handled move to the host's reply ring for try_receive. Never run:
 * written without an Apple GPU (docs/metal.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metal_internal.h"
#include "ringkernel/transpile.h"

/* The control block as emit_msl.c declares rk__ring_control. */
typedef struct ring_control {
    uint32_t active, terminate, capacity, head, tail, processed, errors, dispatches;
} ring_control;

typedef struct metal_ring {
    metal_context *c;
    id library, pipeline;
    metal_buffer *ctl, *in, *out, *status, *state;
    uint32_t cap, req_stride, resp_stride;
    uint64_t *ids;            /* per slot */
    uint64_t sent, done;      /* messages written / handled (host counts) */
    id in_flight;             /* the dispatch's command buffer (retained), or NULL */
    uint32_t flight_tail;
    unsigned char *replies;   /* host reply ring: cap replies */
    rk_reply_info *infos;
    uint64_t reply_head, reply_tail;
    bool active, terminate, terminated;
    uint64_t processed, errors, launches;
    rk_status failure;
    pthread_mutex_t mu;
} metal_ring;

static rk_status resolve_mode(rk_context *ctx, rk_exec_mode requested, rk_exec_mode *out) {
    (void)ctx;
    if (requested == RK_MODE_PERSISTENT || requested == RK_MODE_GRAPH)
        return rk__fail(RK_UNSUPPORTED, "metal: no persistent kernels or graphs; ring kernels relaunch per batch");
    *out = RK_MODE_TRADITIONAL;
    return RK_OK;
}

/* The handler in MSL, and the sizes the ring kernel uses as slot strides. */
static rk_status transpile_handler(rk_kernel *k, char **msl, uint32_t *req, uint32_t *resp) {
    const rk_kernel_desc *d = &k->desc;
    const rk_compile_options *o = d->compile_options;
    const rk_transpile_file file = {.name = "handler.c", .contents = d->handler_source};
    rk_transpile_desc td = {
        .source = "#include <ringkernel/dsl.h>\n#include \"handler.c\"\n",
        .path = "handler-wrapper.c",
        .files = &file,
        .file_count = 1,
        .include_dirs = o ? o->include_dirs : NULL,
        .include_dir_count = o ? o->include_dir_count : 0,
        .defines = o ? o->defines : NULL,
        .define_count = o ? o->define_count : 0,
        .target = RK_TARGET_MSL,
    };
    rk_transpile_result *res = NULL;
    rk_status s = rk_transpile(&td, &res);
    if (s != RK_OK) {
        s = rk__fail(RK_COMPILE_FAILED, "rk_kernel_launch: the handler does not transpile to MSL:\n%s",
                     res ? rk_transpile_diagnostics_text(res) : rk_last_error());
        rk_transpile_result_destroy(res);
        return s;
    }
    const rk_transpiled_kernel *tk = NULL;
    for (size_t i = 0; i < rk_transpile_kernel_count(res); i++) {
        const rk_transpiled_kernel *t = rk_transpile_kernel(res, i);
        if (t->kind == RK_TRANSPILE_HANDLER && strcmp(t->name, d->handler_name) == 0) tk = t;
    }
    if (!tk)
        s = rk__fail(RK_NOT_FOUND, "rk_kernel_launch: the source has no RK_HANDLER named '%s'", d->handler_name);
    else if (tk->request_size > d->message_size || tk->reply_size > d->reply_size || tk->state_size > d->state_size)
        s = rk__fail(RK_INVALID_ARGUMENT, "rk_kernel_launch: handler '%s' needs %u/%u/%u request/reply/state bytes",
                     d->handler_name, tk->request_size, tk->reply_size, tk->state_size);
    else if (!(*msl = strdup(rk_transpile_output(res, NULL))))
        s = rk__fail(RK_OUT_OF_MEMORY, "rk_kernel_launch: out of memory");
    if (s == RK_OK) *req = tk->request_size, *resp = tk->reply_size;
    rk_transpile_result_destroy(res);
    return s;
}

static void free_buffer(metal_buffer *b) {
    if (b) b->base.ctx->iface->buffer_free(&b->base);
}

static void ring_free(metal_ring *r) {
    const rk_metal_api *api = r->c->api;
    if (r->in_flight) {
        rk__metal_send_void(api, r->in_flight, "waitUntilCompleted");
        rk__metal_release(api, r->in_flight);
    }
    free_buffer(r->ctl), free_buffer(r->in), free_buffer(r->out), free_buffer(r->status), free_buffer(r->state);
    rk__metal_release(api, r->pipeline);
    rk__metal_release(api, r->library);
    free(r->ids), free(r->replies), free(r->infos);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

static rk_status alloc(metal_ring *r, size_t size, metal_buffer **out) {
    rk_buffer *b = NULL;
    rk_status s = r->c->base.iface->buffer_alloc(&r->c->base, size ? size : 4, &b);
    if (s == RK_OK) {
        b->ctx = &r->c->base;
        b->size = size;
        memset(((metal_buffer *)b)->contents, 0, size ? size : 4);
        *out = (metal_buffer *)b;
    }
    return s;
}

static rk_status start(rk_kernel *k) {
    if (!k->desc.handler_source) return rk__fail(RK_UNSUPPORTED, "metal: ring kernels need handler_source");
    metal_ring *r = calloc(1, sizeof *r);
    if (!r) return rk__fail(RK_OUT_OF_MEMORY, "metal: out of memory");
    pthread_mutex_init(&r->mu, NULL);
    r->c = (metal_context *)k->ctx;
    r->cap = k->desc.queue_capacity;
    char *msl = NULL, entry[200];
    rk_status s = transpile_handler(k, &msl, &r->req_stride, &r->resp_stride);
    if (s == RK_OK) s = rk__metal_library(r->c, msl, &r->library);
    snprintf(entry, sizeof entry, "rk_ring_%s", k->desc.handler_name);
    if (s == RK_OK) s = rk__metal_pipeline(r->c, r->library, entry, &r->pipeline);
    free(msl);
    if (s == RK_OK) s = alloc(r, sizeof(ring_control), &r->ctl);
    if (s == RK_OK) s = alloc(r, (size_t)r->cap * r->req_stride, &r->in);
    if (s == RK_OK) s = alloc(r, (size_t)r->cap * r->resp_stride, &r->out);
    if (s == RK_OK) s = alloc(r, (size_t)r->cap * sizeof(int32_t), &r->status);
    if (s == RK_OK) s = alloc(r, k->desc.state_size, &r->state);
    r->ids = calloc(r->cap, sizeof *r->ids);
    r->replies = calloc(r->cap, k->desc.reply_size ? k->desc.reply_size : 1);
    r->infos = calloc(r->cap, sizeof *r->infos);
    if (s == RK_OK && (!r->ids || !r->replies || !r->infos)) s = rk__fail(RK_OUT_OF_MEMORY, "metal: out of memory");
    if (s != RK_OK) {
        ring_free(r);
        return s;
    }
    ((ring_control *)r->ctl->contents)->capacity = r->cap;
    k->impl = r;
    return RK_OK;
}

static rk_status try_send(rk_kernel *k, const void *messages, size_t stride, size_t count, uint64_t first_id,
                          size_t *accepted) {
    metal_ring *r = k->impl;
    pthread_mutex_lock(&r->mu);
    size_t n = 0;
    /* reply_tail follows done, so queued plus unreceived messages are sent - reply_head: both rings have room. */
    while (n < count && r->sent - r->reply_head < r->cap) {
        uint32_t slot = (uint32_t)(r->sent % r->cap);
        memcpy(r->in->contents + (size_t)slot * r->req_stride, (const unsigned char *)messages + n * stride,
               r->req_stride);
        r->ids[slot] = first_id + n;
        r->sent++, n++;
    }
    pthread_mutex_unlock(&r->mu);
    *accepted = n;
    return RK_OK;
}

static rk_status try_receive(rk_kernel *k, void *replies, size_t stride, rk_reply_info *infos, size_t max,
                             size_t *received) {
    metal_ring *r = k->impl;
    size_t size = k->desc.reply_size, n = 0;
    pthread_mutex_lock(&r->mu);
    for (; n < max && r->reply_head < r->reply_tail; n++, r->reply_head++) {
        uint32_t slot = (uint32_t)(r->reply_head % r->cap);
        memcpy((unsigned char *)replies + n * stride, r->replies + (size_t)slot * size, size);
        infos[n] = r->infos[slot];
    }
    pthread_mutex_unlock(&r->mu);
    *received = n;
    return RK_OK;
}

static rk_status set_active(rk_kernel *k, bool active) {
    metal_ring *r = k->impl;
    pthread_mutex_lock(&r->mu);
    r->active = active;
    pthread_mutex_unlock(&r->mu);
    return RK_OK;
}

static rk_status request_terminate(rk_kernel *k) {
    metal_ring *r = k->impl;
    pthread_mutex_lock(&r->mu);
    r->terminate = true;
    pthread_mutex_unlock(&r->mu);
    return RK_OK;
}

/* The finished dispatch's replies, into the host ring (called with mu held). */
static void collect(rk_kernel *k, metal_ring *r) {
    const rk_metal_api *api = r->c->api;
    NSUInteger st = rk__metal_send_uint(api, r->in_flight, "status");
    if (st != MTLCommandBufferStatusCompleted && st != MTLCommandBufferStatusError) return;
    rk__metal_release(api, r->in_flight);
    r->in_flight = NULL;
    if (st == MTLCommandBufferStatusError) {
        r->failure = RK_DEVICE_FAULT;
        return;
    }
    const ring_control *ctl = (const ring_control *)r->ctl->contents;
    size_t size = k->desc.reply_size;
    for (; (uint32_t)r->done != r->flight_tail; r->done++, r->reply_tail++) {
        uint32_t slot = (uint32_t)(r->done % r->cap), dst = (uint32_t)(r->reply_tail % r->cap);
        unsigned char *reply = r->replies + (size_t)dst * size;
        memset(reply, 0, size);
        memcpy(reply, r->out->contents + (size_t)slot * r->resp_stride, r->resp_stride < size ? r->resp_stride : size);
        r->infos[dst] = (rk_reply_info){.id = r->ids[slot], .status = ((const int32_t *)r->status->contents)[slot]};
    }
    r->processed = ctl->processed;
    r->errors = ctl->errors;
}

static rk_status poll_ring(rk_kernel *k, rk__control *out) {
    metal_ring *r = k->impl;
    rk_status s = RK_OK;
    pthread_mutex_lock(&r->mu);
    if (r->in_flight) collect(k, r);
    bool work = r->sent != r->done && (r->active || r->terminate);
    if (!r->in_flight && work && r->failure == RK_OK) {
        ring_control *ctl = (ring_control *)r->ctl->contents;
        ctl->active = 1;
        ctl->terminate = 0;
        ctl->tail = (uint32_t)r->sent;
        r->flight_tail = (uint32_t)r->sent;
        id buffers[] = {r->ctl->buffer, r->in->buffer, r->out->buffer, r->status->buffer, r->state->buffer};
        s = rk__metal_dispatch_buffers(r->c, r->pipeline, buffers, 5, (MTLSize){1, 1, 1}, (MTLSize){1, 1, 1});
        if (s == RK_OK) {
            /* The context remembers it as its last command buffer too; keep our own reference. */
            pthread_mutex_lock(&r->c->lock);
            r->in_flight = r->c->last ? rk__metal_send(r->c->api, r->c->last, "retain") : NULL;
            pthread_mutex_unlock(&r->c->lock);
            r->launches++;
        } else {
            r->failure = s;
        }
    }
    if (r->terminate && r->sent == r->done && !r->in_flight) r->terminated = true;
    *out = (rk__control){.is_active = r->active, .should_terminate = r->terminate, .has_terminated = r->terminated,
                         .messages_processed = r->processed, .errors_encountered = r->errors, .launches = r->launches,
                         .input_depth = (uint32_t)(r->sent - r->done), .output_depth = (uint32_t)(r->reply_tail - r->reply_head),
                         .failure = r->failure};
    pthread_mutex_unlock(&r->mu);
    return s;
}

static rk_status destroy(rk_kernel *k) {
    if (k->impl) ring_free(k->impl);
    k->impl = NULL;
    return RK_OK;
}

const rk__ring_iface rk__metal_ring_iface = {
    .resolve_mode = resolve_mode,
    .start = start,
    .try_send = try_send,
    .try_receive = try_receive,
    .set_active = set_active,
    .request_terminate = request_terminate,
    .poll = poll_ring,
    .destroy = destroy,
};
