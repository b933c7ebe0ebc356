/* CPU device memory is host memory: buffers and the three copies. The core
 * has checked ranges and ownership; copies only pick their stream. */
#include <stdlib.h>
#include <string.h>

#include "cpu_device.h"

/* A cache line, so kernels' atomics and vector loads never straddle one at the start. */
enum { BUFFER_ALIGNMENT = 64 };

typedef struct cpu_buffer {
    struct rk_buffer base;
    unsigned char *data;
} cpu_buffer;

void *rk__cpu_buffer_data(rk_buffer *buffer) { return buffer ? ((cpu_buffer *)buffer)->data : NULL; }

rk_status rk__cpu_buffer_alloc(rk_context *ctx, size_t size, rk_buffer **out) {
    /* The buffer is zeroed page by page: with the kernel's overcommit, a
     * request beyond physical memory would be granted and then never finish
     * zeroing. */
    if (ctx->info.total_memory > 0 && size > ctx->info.total_memory)
        return rk__fail(RK_OUT_OF_MEMORY, "rk_buffer_alloc: %zu bytes is more than this machine's memory (%llu bytes)",
                        size, (unsigned long long)ctx->info.total_memory);
    cpu_buffer *b = calloc(1, sizeof *b);
    void *data = NULL;
    if (!b || posix_memalign(&data, BUFFER_ALIGNMENT, size) != 0) {
        free(b);
        return rk__fail(RK_OUT_OF_MEMORY, "rk_buffer_alloc: cannot allocate %zu bytes of host memory", size);
    }
    memset(data, 0, size);
    b->data = data;
    *out = &b->base;
    return RK_OK;
}

rk_status rk__cpu_buffer_alloc_mapped(rk_context *ctx, size_t size, rk_buffer **out, void **host_ptr) {
    rk_status s = rk__cpu_buffer_alloc(ctx, size, out);
    if (s == RK_OK) *host_ptr = ((cpu_buffer *)*out)->data;
    return s;
}

void rk__cpu_buffer_free(rk_buffer *buffer) {
    cpu_buffer *b = (cpu_buffer *)buffer;
    free(b->data);
    free(b);
}

rk_status rk__cpu_copy_to_device(rk_context *ctx, rk_buffer *dst, size_t dst_offset, const void *src, size_t size,
                                 rk_stream *stream) {
    return rk__cpu_stream_copy(ctx, stream, ((cpu_buffer *)dst)->data + dst_offset, src, size);
}

rk_status rk__cpu_copy_to_host(rk_context *ctx, void *dst, const rk_buffer *src, size_t src_offset, size_t size,
                               rk_stream *stream) {
    return rk__cpu_stream_copy(ctx, stream, dst, ((const cpu_buffer *)src)->data + src_offset, size);
}

rk_status rk__cpu_copy_device_to_device(rk_context *ctx, rk_buffer *dst, size_t dst_offset, const rk_buffer *src,
                                        size_t src_offset, size_t size, rk_stream *stream) {
    /* The stream runs copies with memmove, so overlapping ranges of one buffer are fine. */
    return rk__cpu_stream_copy(ctx, stream, ((cpu_buffer *)dst)->data + dst_offset,
                               ((const cpu_buffer *)src)->data + src_offset, size);
}
