/* The WebGPU context: buffers, the three copies, streams, synchronize.
 *
 * WebGPU has one queue per device, so every stream is ordered on it: work on
 * two streams runs in submission order (stricter than the API promises, never
 * looser). Copies and writes work in 4-byte units in WebGPU; unaligned ranges
 * are handled here by reading the covering words back and patching them.
 */
#include <stdlib.h>
#include <string.h>

#include "webgpu_internal.h"

typedef struct wg_stream {
    struct rk_stream base;
} wg_stream;

#define LOCK(c) pthread_mutex_lock(&(c)->lock)
#define UNLOCK(c) pthread_mutex_unlock(&(c)->lock)

/* Waits a while for queued work; a kernel that never finishes must not
 * hang the caller, so after that the device is abandoned, not destroyed
 * (destroying it would wait for the GPU). */
static void context_destroy(rk_context *ctx) {
    wg_context *c = wg_ctx(ctx);
    LOCK(c);
    if (!c->wedged && rk__wg_queue_drain(c, 5000000000ull, "rk_context_destroy") == RK_TIMEOUT) {
        c->wedged = true;
        rk__log(RK_LOG_WARN, "webgpu: queued work did not finish in 5 s; leaving the device behind");
    }
    if (c->wedged) rk__log(RK_LOG_WARN, "webgpu: a kernel is still running; its device is left behind");
    UNLOCK(c);
    rk__wg_context_release(c);
}

static rk_status context_synchronize(rk_context *ctx) {
    wg_context *c = wg_ctx(ctx);
    LOCK(c);
    rk_status s = rk__wg_queue_drain(c, UINT64_MAX, "rk_context_synchronize");
    UNLOCK(c);
    return s;
}

/* ---- buffers -------------------------------------------------------------------- */

static rk_status buffer_alloc(rk_context *ctx, size_t size, rk_buffer **out) {
    wg_context *c = wg_ctx(ctx);
    wg_buffer *b = calloc(1, sizeof *b);
    if (!b) return rk__fail(RK_OUT_OF_MEMORY, "rk_buffer_alloc: out of memory");
    b->alloc_size = ((uint64_t)size + 3u) & ~(uint64_t)3u;
    LOCK(c);
    /* WebGPU zero-initialises new buffers. */
    rk_status s = rk__wg_create_buffer(
        c, b->alloc_size, WGPU_BUFFER_USAGE_STORAGE | WGPU_BUFFER_USAGE_COPY_SRC | WGPU_BUFFER_USAGE_COPY_DST,
        "rk buffer", &b->buffer);
    UNLOCK(c);
    if (s != RK_OK) {
        free(b);
        return s;
    }
    *out = &b->base;
    return RK_OK;
}

static void buffer_free(rk_buffer *buffer) {
    wg_context *c = wg_ctx(buffer->ctx);
    wg_buffer *b = wg_buf(buffer);
    LOCK(c);
    c->W->BufferDestroy(b->buffer); /* work already queued that uses it still completes */
    c->W->BufferRelease(b->buffer);
    UNLOCK(c);
    free(b);
}

/* ---- copies ----------------------------------------------------------------------- */

/* Writes host bytes at any offset: aligned ranges go straight to
 * writeBuffer (which copies the data at once); ragged edges are merged with
 * the device's current words first. Expects the lock held. */
static rk_status write_locked(wg_context *c, wg_buffer *dst, uint64_t offset, const void *src, size_t size) {
    if ((offset & 3u) == 0 && (size & 3u) == 0) {
        c->W->QueueWriteBuffer(c->queue, dst->buffer, offset, src, size);
        return rk__wg_check(c, "rk_copy_to_device");
    }
    uint64_t start = offset & ~(uint64_t)3u;
    uint64_t end = (offset + size + 3u) & ~(uint64_t)3u;
    size_t span = (size_t)(end - start);
    unsigned char *tmp = malloc(span);
    if (!tmp) return rk__fail(RK_OUT_OF_MEMORY, "rk_copy_to_device: out of memory");
    rk_status s = rk__wg_read(c, dst->buffer, start, tmp, 4);
    if (s == RK_OK && span > 4) s = rk__wg_read(c, dst->buffer, end - 4, tmp + span - 4, 4);
    if (s == RK_OK) {
        memcpy(tmp + (offset - start), src, size);
        c->W->QueueWriteBuffer(c->queue, dst->buffer, start, tmp, span);
        s = rk__wg_check(c, "rk_copy_to_device");
    }
    free(tmp);
    return s;
}

static rk_status copy_to_device(rk_context *ctx, rk_buffer *dst, size_t dst_offset, const void *src, size_t size,
                                rk_stream *stream) {
    (void)stream;
    wg_context *c = wg_ctx(ctx);
    LOCK(c);
    rk_status s = write_locked(c, wg_buf(dst), dst_offset, src, size);
    UNLOCK(c);
    return s;
}

/* Completes before returning (earlier than the stream requires, which is allowed). */
static rk_status copy_to_host(rk_context *ctx, void *dst, const rk_buffer *src, size_t src_offset, size_t size,
                              rk_stream *stream) {
    (void)stream;
    wg_context *c = wg_ctx(ctx);
    LOCK(c);
    rk_status s = rk__wg_read(c, wg_buf(src)->buffer, src_offset, dst, size);
    UNLOCK(c);
    return s;
}

static rk_status copy_device_to_device(rk_context *ctx, rk_buffer *dst, size_t dst_offset, const rk_buffer *src,
                                       size_t src_offset, size_t size, rk_stream *stream) {
    (void)stream;
    wg_context *c = wg_ctx(ctx);
    wg_buffer *d = wg_buf(dst), *sb = wg_buf(src);
    rk_status s;
    LOCK(c);
    bool aligned = ((dst_offset | src_offset | size) & 3u) == 0;
    if (aligned && d != sb) {
        WGPUCommandEncoder enc = c->W->DeviceCreateCommandEncoder(c->device, NULL);
        c->W->CommandEncoderCopyBufferToBuffer(enc, sb->buffer, src_offset, d->buffer, dst_offset, size);
        WGPUCommandBuffer cmd = c->W->CommandEncoderFinish(enc, NULL);
        c->W->QueueSubmit(c->queue, 1, &cmd);
        c->W->CommandBufferRelease(cmd);
        c->W->CommandEncoderRelease(enc);
        s = rk__wg_check(c, "rk_copy_device_to_device");
    } else {
        /* WebGPU copies neither unaligned ranges nor within one buffer: go
         * through the host (reading first keeps overlapping ranges right). */
        void *tmp = malloc(size);
        if (!tmp) {
            UNLOCK(c);
            return rk__fail(RK_OUT_OF_MEMORY, "rk_copy_device_to_device: out of memory");
        }
        s = rk__wg_read(c, sb->buffer, src_offset, tmp, size);
        if (s == RK_OK) s = write_locked(c, d, dst_offset, tmp, size);
        free(tmp);
    }
    UNLOCK(c);
    return s;
}

/* ---- streams ---------------------------------------------------------------------- */

static rk_status stream_create(rk_context *ctx, rk_stream **out) {
    (void)ctx;
    wg_stream *st = calloc(1, sizeof *st);
    if (!st) return rk__fail(RK_OUT_OF_MEMORY, "rk_stream_create: out of memory");
    *out = &st->base;
    return RK_OK;
}

static rk_status stream_synchronize(rk_stream *stream) {
    wg_context *c = wg_ctx(stream->ctx);
    LOCK(c);
    rk_status s = rk__wg_queue_drain(c, UINT64_MAX, "rk_stream_synchronize");
    UNLOCK(c);
    return s;
}

/* Like the other backends, destroying a stream finishes its queued work. */
static void stream_destroy(rk_stream *stream) {
    wg_context *c = wg_ctx(stream->ctx);
    LOCK(c);
    (void)rk__wg_queue_drain(c, UINT64_MAX, "rk_stream_destroy");
    UNLOCK(c);
    free(stream);
}

const rk__context_iface rk__webgpu_context_iface = {
    .destroy = context_destroy,
    .synchronize = context_synchronize,
    .buffer_alloc = buffer_alloc,
    .buffer_free = buffer_free,
    .copy_to_device = copy_to_device,
    .copy_to_host = copy_to_host,
    .copy_device_to_device = copy_device_to_device,
    .stream_create = stream_create,
    .stream_synchronize = stream_synchronize,
    .stream_destroy = stream_destroy,
    .module_compile = rk__wg_module_compile,
    .module_from_host_kernels = NULL,
    .module_destroy = rk__wg_module_destroy,
    .module_get_function = rk__wg_module_get_function,
    .launch = rk__wg_launch,
    .ring = &rk__webgpu_ring_iface,
};
