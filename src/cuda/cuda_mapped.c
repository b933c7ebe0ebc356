/* Host-mapped buffers on CUDA (rk_buffer_alloc_mapped): pinned host memory
 * mapped into the device's address space (cuMemHostAlloc with DEVICEMAP and
 * PORTABLE), taken from the context's pinned pool so that freeing one never
 * waits for a running persistent kernel. Kernels get the device's address of
 * the memory as the buffer's pointer; copies go through it too. */
#include <stdlib.h>

#include "cuda/cuda_internal.h"

typedef struct cuda_mapped_buffer {
    rk__cuda_buffer cuda; /* cuda.ptr: the device's address of the memory */
    void *host;
} cuda_mapped_buffer;

static void mapped_release(rk_buffer *buffer) {
    cuda_mapped_buffer *b = (cuda_mapped_buffer *)buffer;
    rk__cuda_pinned_free(rk__cuda_ctx(buffer->ctx), b->host);
    free(b);
}

rk_status rk__cuda_buffer_alloc_mapped(rk_context *ctx, size_t size, rk_buffer **out, void **host_ptr) {
    cuda_mapped_buffer *b = calloc(1, sizeof *b);
    if (!b) return rk__fail(RK_OUT_OF_MEMORY, "rk_buffer_alloc_mapped: out of memory");
    rk_status s = rk__cuda_pinned_alloc(rk__cuda_ctx(ctx), size, &b->host, &b->cuda.ptr); /* zeroed */
    if (s != RK_OK) {
        free(b);
        return s;
    }
    b->cuda.base.release = mapped_release; /* back to the pool, not cuMemFree */
    *host_ptr = b->host;
    *out = &b->cuda.base;
    return RK_OK;
}
