/* The Metal backend's registry entry and device layer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metal_internal.h"

static rk_status probe(uint32_t *device_count, char *reason, size_t reason_size) {
    const rk_metal_api *api = NULL;
    int s = rk__metal_load(&api, reason, reason_size);
    if (s != RK_OK) return (rk_status)s;
    id device = api->MTLCreateSystemDefaultDevice();
    if (!device) {
        snprintf(reason, reason_size, "MTLCreateSystemDefaultDevice found no GPU");
        return RK_BACKEND_UNAVAILABLE;
    }
    rk__metal_release(api, device);
    *device_count = 1; /* the system default device */
    return RK_OK;
}

static rk_status device_info(uint32_t device, rk_device_info *out) {
    const rk_metal_api *api = NULL;
    char reason[256];
    if (device != 0 || rk__metal_load(&api, reason, sizeof reason) != RK_OK)
        return rk__fail(RK_NO_DEVICE, "metal: no device %u", device);
    id d = api->MTLCreateSystemDefaultDevice();
    if (!d) return rk__fail(RK_NO_DEVICE, "metal: no device");
    memset(out, 0, sizeof *out);
    const char *name = rk__metal_cstring(api, rk__metal_send(api, d, "name"));
    snprintf(out->name, sizeof out->name, "%s", name ? name : "Apple GPU");
    snprintf(out->vendor, sizeof out->vendor, "Apple");
    snprintf(out->backend, sizeof out->backend, "metal");
    snprintf(out->driver, sizeof out->driver, "Metal");
    snprintf(out->architecture, sizeof out->architecture, "metal");
    out->total_memory = (uint64_t)rk__metal_send_uint(api, d, "recommendedMaxWorkingSetSize");
    out->warp_size = 32; /* SIMD-group width on Apple GPUs */
    out->max_threads_per_block = 1024;
    out->max_block_dim[0] = out->max_block_dim[1] = out->max_block_dim[2] = 1024;
    out->max_grid_dim[0] = out->max_grid_dim[1] = out->max_grid_dim[2] = 0xffffffffu;
    out->max_shared_memory_per_block = (uint32_t)rk__metal_send_uint(api, d, "maxThreadgroupMemoryLength");
    out->persistent_kernels = false; /* a dispatch cannot see host writes made while it runs */
    out->host_mapped_memory = true;  /* shared storage */
    rk__metal_release(api, d);
    return RK_OK;
}

void rk__metal_release(const rk_metal_api *api, id obj) {
    if (obj) rk__metal_send_void(api, obj, "release");
}

rk_status rk__metal_finish(metal_context *c) {
    pthread_mutex_lock(&c->lock);
    id last = c->last;
    c->last = NULL;
    pthread_mutex_unlock(&c->lock);
    if (!last) return RK_OK;
    rk__metal_send_void(c->api, last, "waitUntilCompleted");
    rk_status s = RK_OK;
    if (rk__metal_send_uint(c->api, last, "status") == MTLCommandBufferStatusError)
        s = rk__fail(RK_DEVICE_FAULT, "metal: command buffer failed: %s",
                     rk__metal_error_text(c->api, rk__metal_send(c->api, last, "error")));
    rk__metal_release(c->api, last);
    return s;
}

static void destroy(rk_context *ctx) {
    metal_context *c = (metal_context *)ctx;
    (void)rk__metal_finish(c);
    rk__metal_release(c->api, c->queue);
    rk__metal_release(c->api, c->device);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static rk_status synchronize(rk_context *ctx) { return rk__metal_finish((metal_context *)ctx); }

static rk_status buffer_alloc(rk_context *ctx, size_t size, rk_buffer **out) {
    metal_context *c = (metal_context *)ctx;
    metal_buffer *b = calloc(1, sizeof *b);
    if (!b) return rk__fail(RK_OUT_OF_MEMORY, "metal: out of host memory");
    b->buffer = rk__metal_send_len_opt(c->api, c->device, "newBufferWithLength:options:", size ? size : 4,
                                       MTLResourceStorageModeShared);
    if (!b->buffer) {
        free(b);
        return rk__fail(RK_OUT_OF_MEMORY, "metal: newBufferWithLength: %zu bytes failed", size);
    }
    b->contents = rk__metal_send_ptr(c->api, b->buffer, "contents");
    *out = &b->base;
    return RK_OK;
}

static void buffer_free(rk_buffer *buffer) {
    metal_buffer *b = (metal_buffer *)buffer;
    metal_context *c = (metal_context *)buffer->ctx;
    (void)rk__metal_finish(c); /* the GPU may still use it */
    rk__metal_release(c->api, b->buffer);
    free(b);
}

/* Shared storage: the host reads and writes the same memory once the GPU's
 * earlier work is done (one queue, so copies keep launch order). */
static rk_status copy_to_device(rk_context *ctx, rk_buffer *dst, size_t off, const void *src, size_t size,
                                rk_stream *stream) {
    (void)stream;
    rk_status s = rk__metal_finish((metal_context *)ctx);
    if (s == RK_OK) memcpy(((metal_buffer *)dst)->contents + off, src, size);
    return s;
}

static rk_status copy_to_host(rk_context *ctx, void *dst, const rk_buffer *src, size_t off, size_t size,
                              rk_stream *stream) {
    (void)stream;
    rk_status s = rk__metal_finish((metal_context *)ctx);
    if (s == RK_OK) memcpy(dst, ((const metal_buffer *)src)->contents + off, size);
    return s;
}

static rk_status copy_device_to_device(rk_context *ctx, rk_buffer *dst, size_t dst_off, const rk_buffer *src,
                                       size_t src_off, size_t size, rk_stream *stream) {
    (void)stream;
    rk_status s = rk__metal_finish((metal_context *)ctx);
    if (s == RK_OK) memmove(((metal_buffer *)dst)->contents + dst_off, ((const metal_buffer *)src)->contents + src_off, size);
    return s;
}

rk_status rk__metal_library(metal_context *c, const char *source, id *out) {
    const rk_metal_api *api = c->api;
    void *pool = api->objc_autoreleasePoolPush();
    id options = rk__metal_send(api, rk__metal_send(api, (id)api->objc_getClass("MTLCompileOptions"), "alloc"), "init");
    /* The language version stays the OS's newest: thread_fence() needs MSL 3.2's atomic_thread_fence. */
    /* fastMathEnabled = NO (every macOS; mathMode exists only from macOS 15). */
    rk__metal_send_void_bool(api, options, "setFastMathEnabled:", false);
    id error = NULL;
    *out = rk__metal_send_id_id_err(api, c->device, "newLibraryWithSource:options:error:", rk__metal_string(api, source),
                                    options, &error);
    rk_status s = *out ? RK_OK : rk__fail(RK_COMPILE_FAILED, "metal: newLibraryWithSource: %s", rk__metal_error_text(api, error));
    rk__metal_release(api, options);
    api->objc_autoreleasePoolPop(pool);
    return s;
}

rk_status rk__metal_pipeline(metal_context *c, id library, const char *name, id *out) {
    const rk_metal_api *api = c->api;
    void *pool = api->objc_autoreleasePoolPush();
    id fn = rk__metal_send_id(api, library, "newFunctionWithName:", rk__metal_string(api, name));
    rk_status s = RK_OK;
    if (!fn) {
        s = rk__fail(RK_NOT_FOUND, "metal: the library has no kernel '%s'", name);
    } else {
        id error = NULL;
        *out = rk__metal_send_id_err(api, c->device, "newComputePipelineStateWithFunction:error:", fn, &error);
        if (!*out) s = rk__fail(RK_COMPILE_FAILED, "metal: pipeline for '%s': %s", name, rk__metal_error_text(api, error));
        rk__metal_release(api, fn);
    }
    api->objc_autoreleasePoolPop(pool);
    return s;
}

/* One compute command: encode, commit, remember as the last (the queue keeps order). */
static rk_status dispatch(metal_context *c, id pipeline, const rk_arg *args, id const *buffers, size_t count,
                          MTLSize groups, MTLSize threads) {
    const rk_metal_api *api = c->api;
    void *pool = api->objc_autoreleasePoolPush();
    id cb = rk__metal_send(api, c->queue, "commandBuffer");
    id enc = cb ? rk__metal_send(api, cb, "computeCommandEncoder") : NULL;
    if (!enc) {
        api->objc_autoreleasePoolPop(pool);
        return rk__fail(RK_DEVICE_FAULT, "metal: cannot make a command buffer");
    }
    rk__metal_send_void_id(api, enc, "setComputePipelineState:", pipeline);
    for (size_t i = 0; i < count; i++) {
        if (buffers) {
            rk__metal_set_buffer(api, enc, buffers[i], 0, i);
        } else if (args[i].kind == RK_ARG_BUFFER) {
            rk__metal_set_buffer(api, enc, ((metal_buffer *)args[i].value.buffer)->buffer, 0, i);
        } else {
            /* A scalar: its bytes, read by the kernel as `constant T &` (emit_msl.c). */
            size_t size = args[i].kind == RK_ARG_I64 || args[i].kind == RK_ARG_U64 || args[i].kind == RK_ARG_F64 ? 8 : 4;
            rk__metal_set_bytes(api, enc, &args[i].value, size, i);
        }
    }
    rk__metal_dispatch(api, enc, groups, threads);
    rk__metal_send_void(api, enc, "endEncoding");
    rk__metal_send(api, cb, "retain");
    rk__metal_send_void(api, cb, "commit");
    pthread_mutex_lock(&c->lock);
    id previous = c->last;
    c->last = cb;
    pthread_mutex_unlock(&c->lock);
    rk__metal_release(api, previous); /* the queue runs in order: the newest is enough to wait for */
    api->objc_autoreleasePoolPop(pool);
    return RK_OK;
}

rk_status rk__metal_dispatch_buffers(metal_context *c, id pipeline, id const *buffers, size_t count, MTLSize groups,
                                     MTLSize threads) {
    return dispatch(c, pipeline, NULL, buffers, count, groups, threads);
}

static rk_status module_compile(rk_context *ctx, const char *source, const rk_compile_options *opts, rk_module **out) {
    (void)opts;
    metal_module *m = calloc(1, sizeof *m);
    if (!m) return rk__fail(RK_OUT_OF_MEMORY, "metal: out of host memory");
    rk_status s = rk__metal_library((metal_context *)ctx, source, &m->library);
    if (s != RK_OK) {
        free(m);
        return s;
    }
    *out = &m->base;
    return RK_OK;
}

static void module_destroy(rk_module *module) {
    metal_module *m = (metal_module *)module;
    rk__metal_release(((metal_context *)module->ctx)->api, m->library);
    free(m);
}

static rk_status module_get_function(rk_module *module, const char *name, rk_function **out) {
    metal_function *f = calloc(1, sizeof *f);
    if (!f) return rk__fail(RK_OUT_OF_MEMORY, "metal: out of host memory");
    rk_status s = rk__metal_pipeline((metal_context *)module->ctx, ((metal_module *)module)->library, name, &f->pipeline);
    if (s != RK_OK) {
        free(f);
        return s;
    }
    snprintf(f->name, sizeof f->name, "%s", name);
    f->base.name = f->name;
    *out = &f->base;
    return RK_OK;
}

static rk_status launch(rk_function *function, const rk_launch_desc *d) {
    metal_context *c = (metal_context *)function->module->ctx;
    if (d->cooperative) return rk__fail(RK_UNSUPPORTED, "metal: no grid-wide barrier (cooperative launch)");
    if (d->shared_memory) return rk__fail(RK_UNSUPPORTED, "metal: dynamic threadgroup memory is not supported yet");
    return dispatch(c, ((metal_function *)function)->pipeline, d->args, NULL, d->arg_count,
                    (MTLSize){d->grid.x, d->grid.y, d->grid.z}, (MTLSize){d->block.x, d->block.y, d->block.z});
}

static const rk__context_iface context_iface = {
    .destroy = destroy,
    .synchronize = synchronize,
    .buffer_alloc = buffer_alloc,
    .buffer_free = buffer_free,
    .copy_to_device = copy_to_device,
    .copy_to_host = copy_to_host,
    .copy_device_to_device = copy_device_to_device,
    .module_compile = module_compile,
    .module_destroy = module_destroy,
    .module_get_function = module_get_function,
    .launch = launch,
    .ring = &rk__metal_ring_iface,
};

static rk_status context_create(const rk_backend *backend, uint32_t device, rk_context **out) {
    const rk_metal_api *api = NULL;
    char reason[256];
    if (rk__metal_load(&api, reason, sizeof reason) != RK_OK) return rk__fail(RK_BACKEND_UNAVAILABLE, "metal: %s", reason);
    if (device != 0) return rk__fail(RK_NO_DEVICE, "metal: no device %u", device);
    metal_context *c = calloc(1, sizeof *c);
    if (!c) return rk__fail(RK_OUT_OF_MEMORY, "metal: out of host memory");
    c->api = api;
    c->device = api->MTLCreateSystemDefaultDevice();
    c->queue = c->device ? rk__metal_send(api, c->device, "newCommandQueue") : NULL;
    if (!c->queue) {
        rk__metal_release(api, c->device);
        free(c);
        return rk__fail(RK_BACKEND_UNAVAILABLE, "metal: no device or command queue");
    }
    pthread_mutex_init(&c->lock, NULL);
    c->base.iface = &context_iface;
    c->base.backend = backend;
    *out = &c->base;
    return RK_OK;
}

static const rk__backend_iface backend_iface = {
    .probe = probe,
    .device_info = device_info,
    .context_create = context_create,
};

const rk_backend rk__metal_backend = {.name = "metal", .iface = &backend_iface};
