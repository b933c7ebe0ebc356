/* The public device layer: validates arguments once, here, then calls the
 * backend's vtable. Backends may assume what is checked here. */
#include <string.h>

#include "arg_struct.h"
#include "backend_impl.h"

#define REQUIRE(ptr, fn)                                                          \
    do {                                                                          \
        if (!(ptr)) return rk__fail(RK_NULL_ARGUMENT, "%s: %s is NULL", fn, #ptr); \
    } while (0)

#define OPTIONAL_SLOT(ctx, slot, fn)                                                            \
    do {                                                                                        \
        if (!(ctx)->iface->slot)                                                                \
            return rk__fail(RK_UNSUPPORTED, "%s: not supported by the %s backend", fn,          \
                            (ctx)->backend->name);                                              \
    } while (0)

rk_status rk_context_create(const rk_backend *backend, uint32_t device, rk_context **out) {
    REQUIRE(backend, "rk_context_create");
    REQUIRE(out, "rk_context_create");
    *out = NULL;
    rk_device_info info;
    rk_status s = rk_backend_device_info(backend, device, &info);
    if (s != RK_OK) return s;
    rk_context *ctx = NULL;
    s = backend->iface->context_create(backend, device, &ctx);
    if (s != RK_OK) return s;
    ctx->backend = backend;
    ctx->device = device;
    ctx->info = info;
    *out = ctx;
    return RK_OK;
}

rk_status rk_context_destroy(rk_context *ctx) {
    REQUIRE(ctx, "rk_context_destroy");
    ctx->iface->destroy(ctx);
    return RK_OK;
}

const rk_backend *rk_context_backend(const rk_context *ctx) { return ctx ? ctx->backend : NULL; }

rk_status rk_context_device_info(const rk_context *ctx, rk_device_info *out) {
    REQUIRE(ctx, "rk_context_device_info");
    REQUIRE(out, "rk_context_device_info");
    *out = ctx->info;
    return RK_OK;
}

rk_status rk_context_synchronize(rk_context *ctx) {
    REQUIRE(ctx, "rk_context_synchronize");
    return ctx->iface->synchronize(ctx);
}

rk_status rk_buffer_alloc(rk_context *ctx, size_t size, rk_buffer **out) {
    REQUIRE(ctx, "rk_buffer_alloc");
    REQUIRE(out, "rk_buffer_alloc");
    *out = NULL;
    if (size == 0) return rk__fail(RK_INVALID_ARGUMENT, "rk_buffer_alloc: size is 0");
    rk_status s = ctx->iface->buffer_alloc(ctx, size, out);
    if (s == RK_OK) {
        (*out)->ctx = ctx;
        (*out)->size = size;
    }
    return s;
}

rk_status rk_buffer_alloc_mapped(rk_context *ctx, size_t size, rk_buffer **out, void **host_ptr) {
    static const char fn[] = "rk_buffer_alloc_mapped";
    REQUIRE(ctx, fn);
    REQUIRE(out, fn);
    REQUIRE(host_ptr, fn);
    *out = NULL;
    *host_ptr = NULL;
    OPTIONAL_SLOT(ctx, buffer_alloc_mapped, fn);
    if (size == 0) return rk__fail(RK_INVALID_ARGUMENT, "%s: size is 0", fn);
    if (!ctx->info.host_mapped_memory)
        return rk__fail(RK_UNSUPPORTED, "%s: the %s device cannot map host memory", fn, ctx->backend->name);
    rk_status s = ctx->iface->buffer_alloc_mapped(ctx, size, out, host_ptr);
    if (s == RK_OK) {
        (*out)->ctx = ctx;
        (*out)->size = size;
    }
    return s;
}

rk_status rk_buffer_free(rk_buffer *buffer) {
    REQUIRE(buffer, "rk_buffer_free");
    if (buffer->release)
        buffer->release(buffer);
    else
        buffer->ctx->iface->buffer_free(buffer);
    return RK_OK;
}

size_t rk_buffer_size(const rk_buffer *buffer) { return buffer ? buffer->size : 0; }

/* Offsets and sizes are checked without overflow: offset <= size and
 * count <= size - offset. */
static rk_status check_range(const char *fn, const char *which, const rk_buffer *b, size_t offset, size_t count) {
    if (offset > b->size || count > b->size - offset)
        return rk__fail(RK_OUT_OF_RANGE, "%s: %s range [%zu, %zu+%zu) is outside the %zu-byte buffer", fn, which,
                        offset, offset, count, b->size);
    return RK_OK;
}

static rk_status check_owner(const char *fn, rk_context *ctx, const rk_buffer *b, const rk_stream *stream) {
    if (b->ctx != ctx) return rk__fail(RK_INVALID_ARGUMENT, "%s: buffer belongs to another context", fn);
    if (stream && stream->ctx != ctx) return rk__fail(RK_INVALID_ARGUMENT, "%s: stream belongs to another context", fn);
    return RK_OK;
}

rk_status rk_copy_to_device(rk_context *ctx, rk_buffer *dst, size_t dst_offset, const void *src, size_t size,
                            rk_stream *stream) {
    static const char fn[] = "rk_copy_to_device";
    REQUIRE(ctx, fn);
    REQUIRE(dst, fn);
    REQUIRE(src, fn);
    rk_status s = check_owner(fn, ctx, dst, stream);
    if (s == RK_OK) s = check_range(fn, "destination", dst, dst_offset, size);
    if (s != RK_OK || size == 0) return s;
    return ctx->iface->copy_to_device(ctx, dst, dst_offset, src, size, stream);
}

rk_status rk_copy_to_host(rk_context *ctx, void *dst, const rk_buffer *src, size_t src_offset, size_t size,
                          rk_stream *stream) {
    static const char fn[] = "rk_copy_to_host";
    REQUIRE(ctx, fn);
    REQUIRE(dst, fn);
    REQUIRE(src, fn);
    rk_status s = check_owner(fn, ctx, src, stream);
    if (s == RK_OK) s = check_range(fn, "source", src, src_offset, size);
    if (s != RK_OK || size == 0) return s;
    return ctx->iface->copy_to_host(ctx, dst, src, src_offset, size, stream);
}

rk_status rk_copy_device_to_device(rk_context *ctx, rk_buffer *dst, size_t dst_offset, const rk_buffer *src,
                                   size_t src_offset, size_t size, rk_stream *stream) {
    static const char fn[] = "rk_copy_device_to_device";
    REQUIRE(ctx, fn);
    REQUIRE(dst, fn);
    REQUIRE(src, fn);
    rk_status s = check_owner(fn, ctx, dst, stream);
    if (s == RK_OK) s = check_owner(fn, ctx, src, stream);
    if (s == RK_OK) s = check_range(fn, "destination", dst, dst_offset, size);
    if (s == RK_OK) s = check_range(fn, "source", src, src_offset, size);
    if (s != RK_OK || size == 0) return s;
    return ctx->iface->copy_device_to_device(ctx, dst, dst_offset, src, src_offset, size, stream);
}

rk_status rk_stream_create(rk_context *ctx, rk_stream **out) {
    REQUIRE(ctx, "rk_stream_create");
    REQUIRE(out, "rk_stream_create");
    *out = NULL;
    rk_status s = ctx->iface->stream_create(ctx, out);
    if (s == RK_OK) (*out)->ctx = ctx;
    return s;
}

rk_status rk_stream_synchronize(rk_stream *stream) {
    REQUIRE(stream, "rk_stream_synchronize");
    return stream->ctx->iface->stream_synchronize(stream);
}

rk_status rk_stream_destroy(rk_stream *stream) {
    REQUIRE(stream, "rk_stream_destroy");
    stream->ctx->iface->stream_destroy(stream);
    return RK_OK;
}

rk_status rk_module_compile(rk_context *ctx, const char *source, const rk_compile_options *opts, rk_module **out) {
    REQUIRE(ctx, "rk_module_compile");
    REQUIRE(source, "rk_module_compile");
    REQUIRE(out, "rk_module_compile");
    *out = NULL;
    static const rk_compile_options defaults = {0};
    if (!opts) opts = &defaults;
    if ((opts->include_dir_count && !opts->include_dirs) || (opts->define_count && !opts->defines))
        return rk__fail(RK_NULL_ARGUMENT, "rk_module_compile: options give a count but a NULL array");
    rk_status s = ctx->iface->module_compile(ctx, source, opts, out);
    if (s == RK_OK) (*out)->ctx = ctx;
    return s;
}

rk_status rk_module_from_host_kernels(rk_context *ctx, const rk_host_kernel *kernels, size_t count,
                                      rk_module **out) {
    static const char fn[] = "rk_module_from_host_kernels";
    REQUIRE(ctx, fn);
    REQUIRE(kernels, fn);
    REQUIRE(out, fn);
    *out = NULL;
    OPTIONAL_SLOT(ctx, module_from_host_kernels, fn);
    if (count == 0) return rk__fail(RK_INVALID_ARGUMENT, "%s: count is 0", fn);
    for (size_t i = 0; i < count; i++)
        if (!kernels[i].name || !kernels[i].fn)
            return rk__fail(RK_NULL_ARGUMENT, "%s: kernel %zu has a NULL name or function", fn, i);
    rk_status s = ctx->iface->module_from_host_kernels(ctx, kernels, count, out);
    if (s == RK_OK) (*out)->ctx = ctx;
    return s;
}

rk_status rk_module_destroy(rk_module *module) {
    REQUIRE(module, "rk_module_destroy");
    module->ctx->iface->module_destroy(module);
    return RK_OK;
}

rk_status rk_module_get_function(rk_module *module, const char *name, rk_function **out) {
    REQUIRE(module, "rk_module_get_function");
    REQUIRE(name, "rk_module_get_function");
    REQUIRE(out, "rk_module_get_function");
    *out = NULL;
    rk_status s = module->ctx->iface->module_get_function(module, name, out);
    if (s == RK_OK) (*out)->module = module;
    return s;
}

static rk_status check_dims(const char *what, rk_dim3 d, const uint32_t limit[3]) {
    const uint32_t v[3] = {d.x, d.y, d.z};
    for (int i = 0; i < 3; i++) {
        if (v[i] == 0)
            return rk__fail(RK_BAD_LAUNCH_CONFIG, "rk_launch: %s dimension %c is 0 (every dimension must be >= 1)",
                            what, "xyz"[i]);
        if (limit[i] && v[i] > limit[i])
            return rk__fail(RK_BAD_LAUNCH_CONFIG, "rk_launch: %s dimension %c is %u, over the device limit %u", what,
                            "xyz"[i], v[i], limit[i]);
    }
    return RK_OK;
}

rk_status rk_launch(rk_function *function, const rk_launch_desc *desc) {
    REQUIRE(function, "rk_launch");
    REQUIRE(desc, "rk_launch");
    rk_context *ctx = function->module->ctx;
    const rk_device_info *info = &ctx->info;
    rk_status s = check_dims("grid", desc->grid, info->max_grid_dim);
    if (s == RK_OK) s = check_dims("block", desc->block, info->max_block_dim);
    if (s != RK_OK) return s;
    uint64_t threads = (uint64_t)desc->block.x * desc->block.y * desc->block.z;
    if (info->max_threads_per_block && threads > info->max_threads_per_block)
        return rk__fail(RK_BAD_LAUNCH_CONFIG, "rk_launch: block of %llu threads is over the device limit %u",
                        (unsigned long long)threads, info->max_threads_per_block);
    if (info->max_shared_memory_per_block && desc->shared_memory > info->max_shared_memory_per_block)
        return rk__fail(RK_BAD_LAUNCH_CONFIG, "rk_launch: %zu bytes of shared memory is over the device limit %u",
                        desc->shared_memory, info->max_shared_memory_per_block);
    if (desc->arg_count && !desc->args) return rk__fail(RK_NULL_ARGUMENT, "rk_launch: args is NULL but arg_count is %zu", desc->arg_count);
    if (desc->stream && desc->stream->ctx != ctx)
        return rk__fail(RK_INVALID_ARGUMENT, "rk_launch: stream belongs to another context");
    for (size_t i = 0; i < desc->arg_count; i++) {
        const rk_arg *a = &desc->args[i];
        if (a->kind < RK_ARG_BUFFER || a->kind > RK_ARG_STRUCT)
            return rk__fail(RK_INVALID_ARGUMENT, "rk_launch: argument %zu has unknown kind %d", i, (int)a->kind);
        size_t fields = 0;
        rk_status fs = a->kind == RK_ARG_STRUCT ? rk__arg_struct_layout(&a->value.structure, i, NULL, &fields) : RK_OK;
        if (fs != RK_OK) return fs;
        if (a->kind == RK_ARG_BUFFER && !a->value.buffer)
            return rk__fail(RK_NULL_ARGUMENT, "rk_launch: argument %zu is a NULL buffer", i);
        if (a->kind == RK_ARG_BUFFER && a->value.buffer->ctx != ctx)
            return rk__fail(RK_INVALID_ARGUMENT, "rk_launch: argument %zu is a buffer of another context", i);
    }
    if (desc->cooperative && !info->cooperative_launch)
        return rk__fail(RK_UNSUPPORTED, "rk_launch: the %s device does not support cooperative launch",
                        ctx->backend->name);
    return ctx->iface->launch(function, desc);
}
