/* Ring kernels on WebGPU by event-driven relaunch.
 *
 * A running dispatch cannot see host writes, so the kernel is not resident:
 * try_send stages messages in a host-side ring, and a worker thread, while
 * the kernel is active (or terminating) and messages are staged, runs one
 * dispatch per batch: write the batch, dispatch the ring template with the
 * handler, copy replies, statuses and counters into a mapped staging buffer,
 * read them back. The replies then become receivable. Messages that arrive
 * during a dispatch form the next batch.
 *
 * The control block keeps the other backends' meaning: is_active gates
 * dispatches, should_terminate drains every accepted message (active or not)
 * and then sets has_terminated. messages_processed and errors_encountered are
 * 64-bit sums of each dispatch's 32-bit device counters.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringkernel/transpile.h"
#include "webgpu_channel.h"
#include "webgpu_ring.h"

extern const char rk__webgpu_ring_template[];



static wg_ring *ring_of(rk_kernel *k) { return k->impl; }

/* ---- the handler as WGSL ------------------------------------------------------------ */

/* DSL C handlers (they carry RK_HANDLER) go through the transpiler's WGSL
 * emitter, which adds the adapter rk_handle_NAME(req, resp). Any other
 * source is taken as WGSL that defines
 *     fn NAME(req: u32, resp: u32) -> i32
 * reading its request from rk_in[req ..] and writing its reply to
 * rk_out[resp ..] (word indexes), with its state in rk_state. */
static rk_status transpile_handler(rk_kernel *k, char **wgsl, char **entry, bool *uses_state) {
    const rk_kernel_desc *d = &k->desc;
    const rk_compile_options *o = d->compile_options;
    /* Handler sources use the DSL without including it (as on the other
     * backends): a wrapper includes dsl.h, then the source as a virtual file,
     * so diagnostics keep the source's own line numbers. */
    const char *name = rk__handler_source_name(d);
    char wrapper[1200];
    snprintf(wrapper, sizeof wrapper, "#include <ringkernel/dsl.h>\n#include \"%s\"\n", name);
    const rk_transpile_file file = {.name = name, .contents = d->handler_source};
    rk_transpile_desc td = {
        .source = wrapper,
        .path = "handler-wrapper.c",
        .files = &file,
        .file_count = 1,
        .include_dirs = o ? o->include_dirs : NULL,
        .include_dir_count = o ? o->include_dir_count : 0,
        .defines = o ? o->defines : NULL,
        .define_count = o ? o->define_count : 0,
        .target = RK_TARGET_WGSL,
        .kind = RK_TRANSPILE_AUTO,
    };
    rk_transpile_result *res = NULL;
    rk_status s = rk_transpile(&td, &res);
    if (s != RK_OK) {
        if (s == RK_PARSE_ERROR || s == RK_UNSUPPORTED) {
            s = rk__fail(RK_COMPILE_FAILED, "rk_kernel_launch: the handler does not transpile to WGSL:\n%s",
                         res ? rk_transpile_diagnostics_text(res) : rk_last_error());
        }
        rk_transpile_result_destroy(res);
        return s;
    }
    const rk_transpiled_kernel *tk = NULL;
    for (size_t i = 0; i < rk_transpile_kernel_count(res); i++) {
        const rk_transpiled_kernel *c = rk_transpile_kernel(res, i);
        if (c->kind == RK_TRANSPILE_HANDLER && strcmp(c->name, d->handler_name) == 0) tk = c;
    }
    const char *out = rk_transpile_output(res, NULL);
    if (!tk) {
        s = rk__fail(RK_NOT_FOUND, "rk_kernel_launch: the source has no RK_HANDLER named '%s'", d->handler_name);
    } else {
        /* The state is only loaded and stored when the handler refers to it. */
        char marker[160];
        snprintf(marker, sizeof marker, "const rk_uses_state_%s: bool = false;", d->handler_name);
        *uses_state = strstr(out, marker) == NULL;
        uint32_t state_need = *uses_state ? tk->state_size : 0;
        if (tk->request_size > d->message_size || tk->reply_size > d->reply_size || state_need > d->state_size)
            s = rk__fail(RK_INVALID_ARGUMENT,
                         "rk_kernel_launch: handler '%s' takes a %u-byte request, %u-byte reply and %u-byte state, but "
                         "the kernel has message_size %u, reply_size %u, state_size %u",
                         d->handler_name, tk->request_size, tk->reply_size, state_need, d->message_size, d->reply_size,
                         d->state_size);
    }
    if (s == RK_OK) {
        *wgsl = strdup(out);
        size_t n = strlen(d->handler_name) + 16;
        *entry = malloc(n);
        if (*entry) snprintf(*entry, n, "rk_handle_%s", d->handler_name);
        if (!*wgsl || !*entry) {
            free(*wgsl);
            free(*entry);
            s = rk__fail(RK_OUT_OF_MEMORY, "rk_kernel_launch: out of memory");
        }
    }
    rk_transpile_result_destroy(res);
    return s;
}

static rk_status handler_wgsl(rk_kernel *k, char **wgsl, char **entry, bool *uses_state) {
    const char *src = k->desc.handler_source;
    *uses_state = true;
    if (strstr(src, "RK_HANDLER")) return transpile_handler(k, wgsl, entry, uses_state);
    *wgsl = strdup(src);
    *entry = strdup(k->desc.handler_name);
    if (!*wgsl || !*entry) {
        free(*wgsl);
        free(*entry);
        return rk__fail(RK_OUT_OF_MEMORY, "rk_kernel_launch: out of memory");
    }
    return RK_OK;
}

static char *ring_source(const wg_ring *r, const char *handler, const char *entry) {
    const char *fmt = "const RK_REQ_WORDS: u32 = %uu;\n"
                      "const RK_RESP_WORDS: u32 = %uu;\n"
                      "fn rk_call_handler(req: u32, resp: u32) -> i32 { return %s(req, resp); }\n"
                      "%s\n"
                      "// ---- handler ----\n%s\n";
    size_t len = strlen(fmt) + strlen(entry) + strlen(rk__webgpu_ring_template) + strlen(handler) + 64;
    char *out = malloc(len);
    if (out) snprintf(out, len, fmt, r->req_words, r->resp_words, entry, rk__webgpu_ring_template, handler);
    return out;
}

/* ---- device objects --------------------------------------------------------------- */

static void release_device(wg_ring *r) {
    const rk__wgpu_api *W = r->c->W;
    WGPUBuffer *bufs[] = {&r->in, &r->out, &r->status, &r->state, &r->counters, &r->readback, &r->links.emit};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) {
        if (*bufs[i]) {
            W->BufferDestroy(*bufs[i]);
            W->BufferRelease(*bufs[i]);
            *bufs[i] = NULL;
        }
    }
    if (r->group) W->BindGroupRelease(r->group);
    if (r->pipeline) W->ComputePipelineRelease(r->pipeline);
    if (r->shader) W->ShaderModuleRelease(r->shader);
    r->group = NULL;
    r->pipeline = NULL;
    r->shader = NULL;
}

/* The bind group over the current buffers (again when the emit buffer grows). */
static rk_status bind(wg_ring *r) {
    wg_context *c = r->c;
    WGPUBindGroupLayout layout = c->W->ComputePipelineGetBindGroupLayout(r->pipeline, 0);
    WGPUBuffer bufs[6] = {r->in, r->out, r->status, r->state, r->counters, r->links.emit};
    WGPUBindGroupEntry e[6];
    for (uint32_t i = 0; i < 6; i++)
        e[i] = (WGPUBindGroupEntry){.binding = i, .buffer = bufs[i], .offset = 0, .size = WGPU_WHOLE_SIZE};
    WGPUBindGroupDescriptor bd = {.layout = layout, .entryCount = 6, .entries = e};
    if (r->group) c->W->BindGroupRelease(r->group);
    rk__wg_scope_push(c);
    r->group = c->W->DeviceCreateBindGroup(c->device, &bd);
    rk_status s = rk__wg_scope_pop(c, RK_INTERNAL, "ring kernel bind group");
    c->W->BindGroupLayoutRelease(layout);
    return s;
}

static rk_status create_device(wg_ring *r, const char *code, const void *initial_state, uint32_t state_size) {
    wg_context *c = r->c;
    const WGPUFlags storage = WGPU_BUFFER_USAGE_STORAGE | WGPU_BUFFER_USAGE_COPY_DST | WGPU_BUFFER_USAGE_COPY_SRC;
    uint64_t reply_bytes = (uint64_t)r->max_batch * r->resp_words * 4u;
    r->status_off = COUNTERS_BYTES;
    r->reply_off = (r->status_off + (uint64_t)r->max_batch * 4u + 7u) & ~(uint64_t)7u;
    r->emit_off = r->reply_off + ((reply_bytes + 7u) & ~(uint64_t)7u);
    rk_status s = rk__wg_build_pipeline(c, code, r->sequential ? "rk_ring_sequential" : "rk_ring_parallel",
                                        &r->shader, &r->pipeline);
    if (s == RK_OK)
        s = rk__wg_create_buffer(c, 4u + (uint64_t)r->max_batch * r->req_words * 4u, storage, "rk ring in", &r->in);
    if (s == RK_OK) s = rk__wg_create_buffer(c, reply_bytes ? reply_bytes : 4, storage, "rk ring out", &r->out);
    if (s == RK_OK) s = rk__wg_create_buffer(c, (uint64_t)r->max_batch * 4u, storage, "rk ring status", &r->status);
    if (s == RK_OK) s = rk__wg_create_buffer(c, (uint64_t)r->state_words * 4u, storage, "rk ring state", &r->state);
    if (s == RK_OK && initial_state) {
        /* Whole words: the tail of the last one stays zero. */
        uint32_t *words = calloc(r->state_words, 4);
        if (!words) return rk__fail(RK_OUT_OF_MEMORY, "rk_kernel_launch: out of memory");
        memcpy(words, initial_state, state_size);
        c->W->QueueWriteBuffer(c->queue, r->state, 0, words, (size_t)r->state_words * 4u);
        free(words);
    }
    if (s == RK_OK) s = rk__wg_create_buffer(c, COUNTERS_BYTES, storage, "rk ring counters", &r->counters);
    if (s == RK_OK)
        s = rk__wg_create_buffer(c, r->emit_off + WG_EMIT_HEADER * 4u,
                                 WGPU_BUFFER_USAGE_MAP_READ | WGPU_BUFFER_USAGE_COPY_DST, "rk ring readback",
                                 &r->readback);
    if (s == RK_OK) s = rk__wg_create_buffer(c, WG_EMIT_HEADER * 4u, storage, "rk ring emit", &r->links.emit);
    if (s != RK_OK) return s;
    return bind(r);
}

/* ---- one batch: write, dispatch, read back ------------------------------------------- */

static void on_map(WGPUEnum status, WGPUStringView message, void *u1, void *u2) {
    (void)message;
    (void)u2;
    *(WGPUEnum *)u1 = status;
}

/* Runs a batch of n requests: the first `host` staged in r->batch, the rest
 * copied on the device from channels (plan). Expects c->lock. */
static rk_status run_batch(wg_ring *r, uint32_t host, uint32_t n, const wg_plan *plan) {
    wg_context *c = r->c;
    const rk__wgpu_api *W = c->W;
    r->batch[0] = n;
    W->QueueWriteBuffer(c->queue, r->in, 0, r->batch, 4u + (size_t)host * r->req_words * 4u);
    W->QueueWriteBuffer(c->queue, r->links.emit, 0, plan->header, sizeof plan->header);
    WGPUCommandEncoder enc = W->DeviceCreateCommandEncoder(c->device, NULL);
    rk__wg_channel_encode_inputs(r, plan, enc);
    W->CommandEncoderClearBuffer(enc, r->counters, 0, COUNTERS_BYTES);
    WGPUComputePassEncoder pass = W->CommandEncoderBeginComputePass(enc, NULL);
    W->ComputePassEncoderSetPipeline(pass, r->pipeline);
    W->ComputePassEncoderSetBindGroup(pass, 0, r->group, 0, NULL);
    W->ComputePassEncoderDispatchWorkgroups(pass, r->sequential ? 1 : (n + PARALLEL_WORKGROUP - 1) / PARALLEL_WORKGROUP,
                                            1, 1);
    W->ComputePassEncoderEnd(pass);
    uint64_t reply_bytes = (uint64_t)n * r->resp_words * 4u;
    W->CommandEncoderCopyBufferToBuffer(enc, r->counters, 0, r->readback, 0, COUNTERS_BYTES);
    W->CommandEncoderCopyBufferToBuffer(enc, r->status, 0, r->readback, r->status_off, (uint64_t)n * 4u);
    if (reply_bytes) W->CommandEncoderCopyBufferToBuffer(enc, r->out, 0, r->readback, r->reply_off, reply_bytes);
    W->CommandEncoderCopyBufferToBuffer(enc, r->links.emit, 0, r->readback, r->emit_off, WG_EMIT_HEADER * 4u);
    WGPUCommandBuffer cmd = W->CommandEncoderFinish(enc, NULL);
    W->QueueSubmit(c->queue, 1, &cmd);
    W->CommandBufferRelease(cmd);
    W->ComputePassEncoderRelease(pass);
    W->CommandEncoderRelease(enc);

    size_t span = (size_t)(r->emit_off + WG_EMIT_HEADER * 4u);
    /* If destroy aborts this wait, the callback (WaitAnyOnly) is never run;
     * its result lives in the ring all the same, not on this stack. */
    r->map_status = 0;
    WGPUBufferMapCallbackInfo cb = {.mode = WGPU_CALLBACK_MODE_WAIT_ANY_ONLY, .callback = on_map,
                                    .userdata1 = &r->map_status};
    rk_status s = rk__wg_wait(c, W->BufferMapAsync(r->readback, WGPU_MAP_MODE_READ, 0, span, cb), UINT64_MAX,
                              &r->abort, "ring kernel batch");
    if (s == RK_HUNG) c->wedged = true; /* the dispatch still runs: leave the device alone */
    if (s != RK_OK) return s;
    if (r->map_status != WGPU_STATUS_SUCCESS) {
        s = rk__wg_check(c, "ring kernel batch");
        return s != RK_OK ? s : rk__fail(RK_DEVICE_FAULT, "ring kernel batch: mapping the results failed");
    }
    const void *p = W->BufferGetConstMappedRange(r->readback, 0, span);
    if (p) memcpy(r->result, p, span);
    W->BufferUnmap(r->readback);
    if (!p) return rk__fail(RK_INTERNAL, "ring kernel batch: wgpuBufferGetConstMappedRange returned NULL");
    return rk__wg_check(c, "ring kernel batch");
}

/* ---- the worker ------------------------------------------------------------------------ */

/* Rebuilds the emit buffer and bind group when ports were connected. */
static rk_status prepare_ports(wg_ring *r) {
    pthread_mutex_lock(&r->c->lock);
    bool rebind = false;
    rk_status s = rk__wg_channel_prepare(r, &rebind);
    if (s == RK_OK && rebind) s = bind(r);
    pthread_mutex_unlock(&r->c->lock);
    return s;
}

static void fail(wg_ring *r, rk_kernel *k, rk_status s) {
    r->failure = s;
    snprintf(r->failure_reason, sizeof r->failure_reason, "%s", rk_last_error());
    rk__log(RK_LOG_ERROR, "webgpu ring kernel '%s' failed: %s", k->desc.name ? k->desc.name : "kernel", rk_last_error());
}

/* Stages up to n host messages in r->batch. */
static void stage_host(wg_ring *r, uint32_t n, uint32_t msz) {
    unsigned char *words = (unsigned char *)(r->batch + 1);
    size_t stride = (size_t)r->req_words * 4u;
    memset(words, 0, (size_t)n * stride);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t slot = (r->in_head + i) & (r->cap - 1);
        memcpy(words + i * stride, r->in_msgs + slot * msz, msz);
        r->batch_ids[i] = r->in_ids[slot];
        r->reply_all[i] = !r->links.failures_only;
    }
    r->in_head += n;
}

/* Publishes the batch's replies: every one that failed, and the others
 * their message's source asks for. */
static void publish_replies(wg_ring *r, uint32_t n, uint32_t rsz) {
    const uint32_t *counters = (const uint32_t *)r->result;
    const int32_t *status = (const int32_t *)(r->result + r->status_off);
    const unsigned char *replies = r->result + r->reply_off;
    uint64_t tail = r->out_tail;
    for (uint32_t i = 0; i < n; i++) {
        if (!r->reply_all[i] && status[i] == 0) continue;
        uint64_t slot = tail++ & (r->cap - 1);
        if (rsz) memcpy(r->out_msgs + slot * rsz, replies + (size_t)i * r->resp_words * 4u, rsz);
        r->out_infos[slot] = (rk_reply_info){.id = r->batch_ids[i], .status = status[i]};
    }
    r->out_tail = tail;
    r->processed += counters[0];
    r->errors += counters[1];
}

static void *worker_main(void *arg) {
    rk_kernel *k = arg;
    wg_ring *r = ring_of(k);
    const uint32_t msz = k->desc.message_size, rsz = k->desc.reply_size;
    wg_plan plan;
    pthread_mutex_lock(&r->mu);
    for (;;) {
        if (r->stop || r->failure != RK_OK) break;
        uint64_t staged = r->in_tail - r->in_head;
        if (r->should_terminate && staged == 0 && r->links.in_count && !r->links.inputs_closed) {
            /* What is on the inputs once they are closed is all that comes. */
            pthread_mutex_unlock(&r->mu);
            rk__wg_channel_close_inputs(r, RK_TERMINATED);
            pthread_mutex_lock(&r->mu);
            continue;
        }
        bool pending = rk__wg_channel_pending(r);
        if (r->should_terminate && staged == 0 && !pending) {
            r->has_terminated = true;
            break;
        }
        uint64_t room = r->cap - (r->out_tail - r->out_head);
        uint32_t credit = rk__wg_channel_credit(r);
        bool go = r->active || r->should_terminate;
        if (!go || !room || !credit || (!staged && !pending)) {
            pthread_cond_wait(&r->cv, &r->mu);
            continue;
        }
        if (r->links.gen != r->links.built_gen) {
            pthread_mutex_unlock(&r->mu);
            rk_status s = prepare_ports(r);
            pthread_mutex_lock(&r->mu);
            if (s != RK_OK) {
                fail(r, k, s);
                break;
            }
            continue;
        }
        uint32_t limit = r->max_batch;
        if (room < limit) limit = (uint32_t)room;
        if (credit < limit) limit = credit;
        uint32_t host = (uint32_t)(staged < limit ? staged : limit);
        stage_host(r, host, msz);
        rk__wg_channel_plan(r, &plan, host, limit - host);
        uint32_t n = host + plan.taken;
        r->in_flight = n;
        pthread_mutex_unlock(&r->mu);

        pthread_mutex_lock(&r->c->lock);
        rk_status s = n ? run_batch(r, host, n, &plan) : RK_OK;
        rk__wg_channel_finish(r, &plan, (const uint32_t *)(r->result + r->emit_off), s == RK_OK && n);
        pthread_mutex_unlock(&r->c->lock);
        rk__wg_channel_wake(&plan);

        pthread_mutex_lock(&r->mu);
        r->in_flight = 0;
        r->launches += n ? 1 : 0;
        if (s != RK_OK) {
            fail(r, k, s);
            break;
        }
        publish_replies(r, n, rsz);
    }
    bool failed = r->failure != RK_OK;
    pthread_mutex_unlock(&r->mu);
    if (failed) {
        /* A failed kernel takes nothing more: emits to it report the fault
         * and what waits on its inputs is answered with RK_DEVICE_FAULT. */
        rk__wg_channel_close_inputs(r, RK_DEVICE_FAULT);
        rk__wg_channel_fault_pending(r);
    }
    return NULL;
}

/* ---- the ring interface ------------------------------------------------------------------ */

static rk_status resolve_mode(rk_context *ctx, rk_exec_mode requested, rk_exec_mode *out) {
    (void)ctx;
    if (requested == RK_MODE_DEFAULT || requested == RK_MODE_TRADITIONAL) {
        *out = RK_MODE_TRADITIONAL;
        return RK_OK;
    }
    return rk__fail(RK_UNSUPPORTED,
                    "the webgpu backend runs ring kernels by relaunch per batch (RK_MODE_TRADITIONAL): a running "
                    "WebGPU dispatch cannot see host writes, so %s is not available",
                    rk_exec_mode_name(requested));
}

static void free_ring(wg_ring *r) {
    if (r->c && !r->c->wedged) {
        pthread_mutex_lock(&r->c->lock);
        release_device(r);
        pthread_mutex_unlock(&r->c->lock);
    }
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cv);
    free(r->in_msgs);
    free(r->in_ids);
    free(r->out_msgs);
    free(r->out_infos);
    free(r->batch);
    free(r->batch_ids);
    free(r->reply_all);
    free(r->result);
    free(r);
}

static rk_status start(rk_kernel *k) {
    const rk_kernel_desc *d = &k->desc;
    if (d->handler || !d->handler_source || !d->handler_name)
        return rk__fail(RK_UNSUPPORTED, "rk_kernel_launch: the webgpu backend runs handlers given as source "
                                        "(handler_source and handler_name); host function handlers run on the CPU "
                                        "backend only");
    wg_ring *r = calloc(1, sizeof *r);
    if (!r) return rk__fail(RK_OUT_OF_MEMORY, "rk_kernel_launch: out of memory");
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    r->c = wg_ctx(k->ctx);
    r->cap = d->queue_capacity;
    r->reply_bytes = d->reply_size;
    r->req_words = (d->message_size + 3u) / 4u;
    r->resp_words = (d->reply_size + 3u) / 4u;
    r->state_words = d->state_size ? (d->state_size + 3u) / 4u : 1u;
    r->sequential = d->state_size > 0 || d->ordered;
    r->max_batch = r->cap < MAX_BATCH ? r->cap : MAX_BATCH;
    uint64_t binding_max = r->c->limits.maxStorageBufferBindingSize;
    while (r->max_batch > 1 && (4u + (uint64_t)r->max_batch * r->req_words * 4u > binding_max ||
                                (uint64_t)r->max_batch * r->resp_words * 4u > binding_max))
        r->max_batch /= 2;
    r->failure = RK_OK;
    size_t result_size = 64 + (size_t)r->max_batch * 4u + (size_t)r->max_batch * r->resp_words * 4u + 16 +
                         WG_EMIT_HEADER * 4u;
    r->in_msgs = calloc(r->cap, d->message_size);
    r->in_ids = calloc(r->cap, sizeof *r->in_ids);
    r->out_msgs = calloc(r->cap, d->reply_size ? d->reply_size : 1);
    r->out_infos = calloc(r->cap, sizeof *r->out_infos);
    r->batch = calloc(1 + (size_t)r->max_batch * r->req_words, 4);
    r->batch_ids = calloc(r->max_batch, sizeof *r->batch_ids);
    r->reply_all = calloc(r->max_batch, sizeof *r->reply_all);
    r->result = calloc(1, result_size);
    if (!r->in_msgs || !r->in_ids || !r->out_msgs || !r->out_infos || !r->batch || !r->batch_ids || !r->reply_all || !r->result) {
        free_ring(r);
        return rk__fail(RK_OUT_OF_MEMORY, "rk_kernel_launch: out of memory for %u-slot queues", r->cap);
    }
    char *handler = NULL, *entry = NULL, *code = NULL;
    bool uses_state = true;
    rk_status s = handler_wgsl(k, &handler, &entry, &uses_state);
    /* Handlers that keep no state run one invocation per message. */
    if (!uses_state && !d->ordered) r->sequential = false;
    /* rk_emit: one invocation runs the batch in order, so each channel gets
     * its messages in order and the emit counts need no atomics. */
    if (s == RK_OK && strstr(handler, "rk_emit_0(")) r->sequential = true;
    if (s == RK_OK && !(code = ring_source(r, handler, entry)))
        s = rk__fail(RK_OUT_OF_MEMORY, "rk_kernel_launch: out of memory");
    if (s == RK_OK) {
        pthread_mutex_lock(&r->c->lock);
        s = create_device(r, code, d->initial_state, d->state_size);
        pthread_mutex_unlock(&r->c->lock);
    }
    free(handler);
    free(entry);
    free(code);
    if (s == RK_OK) {
        k->impl = r;
        if (pthread_create(&r->worker, NULL, worker_main, k) != 0) {
            k->impl = NULL;
            s = rk__fail(RK_IO_ERROR, "rk_kernel_launch: cannot start the ring kernel's worker thread");
        } else {
            r->worker_started = true;
        }
    }
    if (s != RK_OK) {
        free_ring(r);
        return s;
    }
    return RK_OK;
}

static rk_status try_send(rk_kernel *k, const void *messages, size_t stride, size_t count, uint64_t first_id,
                          size_t *accepted) {
    wg_ring *r = ring_of(k);
    const uint32_t msz = k->desc.message_size;
    pthread_mutex_lock(&r->mu);
    size_t room = (size_t)(r->cap - (r->in_tail - r->in_head));
    size_t n = count < room ? count : room;
    if (r->should_terminate || r->failure != RK_OK) n = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t slot = (r->in_tail + i) & (r->cap - 1);
        memcpy(r->in_msgs + slot * msz, (const unsigned char *)messages + i * stride, msz);
        r->in_ids[slot] = first_id + i;
    }
    r->in_tail += n;
    rk_status s = r->failure;
    if (n) pthread_cond_signal(&r->cv);
    pthread_mutex_unlock(&r->mu);
    *accepted = n;
    if (s != RK_OK) return rk__fail(s, "the webgpu ring kernel has failed");
    return RK_OK;
}

static rk_status try_receive(rk_kernel *k, void *replies, size_t stride, rk_reply_info *infos, size_t max,
                             size_t *received) {
    wg_ring *r = ring_of(k);
    const uint32_t rsz = k->desc.reply_size;
    pthread_mutex_lock(&r->mu);
    size_t ready = (size_t)(r->out_tail - r->out_head);
    size_t n = max < ready ? max : ready;
    for (size_t i = 0; i < n; i++) {
        uint64_t slot = (r->out_head + i) & (r->cap - 1);
        if (rsz && replies) memcpy((unsigned char *)replies + i * stride, r->out_msgs + slot * rsz, rsz);
        if (infos) infos[i] = r->out_infos[slot];
    }
    r->out_head += n;
    if (n) pthread_cond_signal(&r->cv); /* room for the next batch's replies */
    pthread_mutex_unlock(&r->mu);
    *received = n;
    return RK_OK;
}

static rk_status set_active(rk_kernel *k, bool active) {
    wg_ring *r = ring_of(k);
    pthread_mutex_lock(&r->mu);
    r->active = active;
    pthread_cond_signal(&r->cv);
    pthread_mutex_unlock(&r->mu);
    return RK_OK;
}

static rk_status request_terminate(rk_kernel *k) {
    wg_ring *r = ring_of(k);
    pthread_mutex_lock(&r->mu);
    r->should_terminate = true;
    pthread_cond_signal(&r->cv);
    pthread_mutex_unlock(&r->mu);
    return RK_OK;
}

static rk_status poll(rk_kernel *k, rk__control *out) {
    wg_ring *r = ring_of(k);
    pthread_mutex_lock(&r->mu);
    *out = (rk__control){
        .is_active = r->active,
        .should_terminate = r->should_terminate,
        .has_terminated = r->has_terminated,
        .messages_processed = r->processed,
        .errors_encountered = r->errors,
        .launches = r->launches,
        .input_depth = (uint32_t)(r->in_tail - r->in_head) + r->in_flight,
        .output_depth = (uint32_t)(r->out_tail - r->out_head),
        .failure = r->failure,
    };
    snprintf(out->failure_reason, sizeof out->failure_reason, "%s", r->failure_reason);
    pthread_mutex_unlock(&r->mu);
    return RK_OK;
}

static rk_status destroy(rk_kernel *k) {
    wg_ring *r = ring_of(k);
    if (!r) return RK_OK;
    pthread_mutex_lock(&r->mu);
    r->stop = true;
    /* Not terminated: the core has given up waiting (a handler that does
     * not finish). Stop waiting for the dispatch in flight. */
    bool abandoned = !r->has_terminated && r->failure == RK_OK;
    if (abandoned) atomic_store(&r->abort, true);
    pthread_cond_signal(&r->cv);
    pthread_mutex_unlock(&r->mu);
    if (r->worker_started) pthread_join(r->worker, NULL);
    rk__wg_channel_detach(r);
    bool wedged = r->c && r->c->wedged;
    free_ring(r);
    k->impl = NULL;
    if (abandoned && wedged)
        return rk__fail(RK_HUNG, "rk_kernel_destroy: kernel '%s': a dispatch did not finish (a handler that does not "
                                 "return); it was abandoned and the device is left behind", k->name);
    return RK_OK;
}

const rk__ring_iface rk__webgpu_ring_iface = {
    .resolve_mode = resolve_mode,
    .start = start,
    .try_send = try_send,
    .try_receive = try_receive,
    .set_active = set_active,
    .request_terminate = request_terminate,
    .poll = poll,
    .destroy = destroy,
    .channel_attach = rk__wg_channel_attach,
    .set_host_replies = rk__wg_channel_set_host_replies,
};
