/* Device buffers, copies, and the pinned host memory behind ring kernels.
 *
 * Nothing here may wait for the whole device: a persistent ring kernel never
 * finishes, so cuMemFree (which can synchronize the context) is avoided in
 * favour of stream-ordered frees, and pinned blocks are pooled rather than
 * returned to the driver while the context lives. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda/cuda_internal.h"

rk_status rk__cuda_device_alloc(rk__cuda_context *ctx, size_t size, CUdeviceptr *out) {
    rk_status s = rk__cuda_bind(ctx);
    if (s != RK_OK) return s;
    CUdeviceptr ptr = 0;
    CUresult r = ctx->async_alloc ? rk__cuda.cuMemAllocAsync(&ptr, size, ctx->default_stream)
                                  : rk__cuda.cuMemAlloc(&ptr, size);
    if (r != RK_CUDA_SUCCESS) return rk__cuda_fail(r, RK_OUT_OF_MEMORY, "allocating device memory");
    r = rk__cuda.cuMemsetD8Async(ptr, 0, size, ctx->default_stream);
    /* Stream-ordered memory becomes usable from other streams once its stream reaches it. */
    if (r == RK_CUDA_SUCCESS) r = rk__cuda.cuStreamSynchronize(ctx->default_stream);
    if (r != RK_CUDA_SUCCESS) {
        s = rk__cuda_fail(r, RK_INTERNAL, "zeroing device memory");
        rk__cuda_device_free(ctx, ptr);
        return s;
    }
    *out = ptr;
    return RK_OK;
}

void rk__cuda_device_free(rk__cuda_context *ctx, CUdeviceptr ptr) {
    if (!ptr || rk__cuda_bind(ctx) != RK_OK) return;
    if (ctx->async_alloc)
        rk__cuda.cuMemFreeAsync(ptr, ctx->default_stream);
    else
        rk__cuda.cuMemFree(ptr);
}

/* Takes the smallest pooled block that is big enough but not wastefully so
 * (at most twice the size) off a free list, or NULL; the context's lock held. */
rk__cuda_pinned *rk__cuda_take_pooled(rk__cuda_pinned **list, size_t size) {
    rk__cuda_pinned **best = NULL;
    for (rk__cuda_pinned **p = list; *p; p = &(*p)->next)
        if ((*p)->size >= size && (*p)->size <= 2 * size && (!best || (*p)->size < (*best)->size)) best = p;
    if (!best) return NULL;
    rk__cuda_pinned *block = *best;
    *best = block->next;
    return block;
}

void rk__cuda_channel_arena_reserve(rk__cuda_context *ctx) {
    if (rk__cuda_bind(ctx) != RK_OK) return; /* tried again at the next launch */
    pthread_mutex_lock(&ctx->lock);
    if (!ctx->arena_tried && ctx->arena.size) {
        /* Plain cuMemAlloc, like every linked block: valid in every stream at
         * once, and the ring kernels launched after this see all of it. */
        CUresult r = rk__cuda.cuMemAlloc(&ctx->arena.base, ctx->arena.size);
        if (r != RK_CUDA_SUCCESS) {
            ctx->arena.base = 0;
            rk__log(RK_LOG_WARN,
                    "cuda: cannot reserve the %zu MiB channel arena (CUresult %d); channels get their own "
                    "allocations, which compute-sanitizer memcheck does not count for kernels launched before them",
                    ctx->arena.size >> 20, (int)r);
            ctx->arena.size = 0; /* said once here, not again per channel */
        }
    }
    ctx->arena_tried = true;
    pthread_mutex_unlock(&ctx->lock);
}

rk_status rk__cuda_linked_alloc(rk__cuda_context *ctx, size_t size, CUdeviceptr *out) {
    rk_status s = rk__cuda_bind(ctx);
    if (s != RK_OK) return s;
    size = (size + 4095) & ~(size_t)4095;
    /* The arena first (see cuda_arena.c), then a pooled block of an earlier
     * fallback, then a new cuMemAlloc. */
    pthread_mutex_lock(&ctx->lock);
    rk__cuda_pinned *block = rk__cuda_arena_take(&ctx->arena, size);
    if (!block) block = rk__cuda_take_pooled(&ctx->linked_free, size);
    const size_t arena_mb = ctx->arena.size >> 20;
    const bool tell = !block && ctx->arena.base && !ctx->arena_overflowed;
    if (tell) ctx->arena_overflowed = true;
    pthread_mutex_unlock(&ctx->lock);
    if (tell)
        rk__log(RK_LOG_INFO,
                "cuda: a %zu-byte channel does not fit the %zu MiB channel arena; it gets its own allocation, which "
                "compute-sanitizer memcheck does not count for kernels launched before it (RK_CUDA_CHANNEL_ARENA_MB "
                "sets the arena's size)",
                size, arena_mb);
    if (!block) {
        block = calloc(1, sizeof *block);
        if (!block) return rk__fail(RK_OUT_OF_MEMORY, "out of memory");
        CUresult r = rk__cuda.cuMemAlloc(&block->device, size);
        if (r != RK_CUDA_SUCCESS) {
            free(block);
            return rk__cuda_fail(r, RK_OUT_OF_MEMORY, "allocating device memory (cuMemAlloc)");
        }
        block->size = size;
    }
    /* Zeroed before any kernel can see it: the caller publishes the address after this. */
    CUresult r = rk__cuda.cuMemsetD8Async(block->device, 0, block->size, ctx->default_stream);
    if (r == RK_CUDA_SUCCESS) r = rk__cuda.cuStreamSynchronize(ctx->default_stream);
    pthread_mutex_lock(&ctx->lock);
    if (r == RK_CUDA_SUCCESS) {
        block->next = ctx->linked_used;
        ctx->linked_used = block;
    } else if (rk__cuda_arena_holds(&ctx->arena, block->device)) {
        rk__cuda_arena_give(&ctx->arena, block);
    } else {
        block->next = ctx->linked_free;
        ctx->linked_free = block;
    }
    pthread_mutex_unlock(&ctx->lock);
    if (r != RK_CUDA_SUCCESS) return rk__cuda_fail(r, RK_INTERNAL, "zeroing device memory");
    *out = block->device;
    return RK_OK;
}

void rk__cuda_linked_free(rk__cuda_context *ctx, CUdeviceptr ptr) {
    if (!ptr) return;
    pthread_mutex_lock(&ctx->lock);
    for (rk__cuda_pinned **p = &ctx->linked_used; *p; p = &(*p)->next) {
        if ((*p)->device == ptr) {
            rk__cuda_pinned *block = *p;
            *p = block->next;
            if (rk__cuda_arena_holds(&ctx->arena, ptr)) {
                rk__cuda_arena_give(&ctx->arena, block);
            } else {
                block->next = ctx->linked_free;
                ctx->linked_free = block;
            }
            break;
        }
    }
    pthread_mutex_unlock(&ctx->lock);
}

void rk__cuda_linked_release_all(rk__cuda_context *ctx, bool free_device) {
    rk__cuda_pinned *lists[] = {ctx->linked_free, ctx->linked_used};
    for (int i = 0; i < 2; i++) {
        for (rk__cuda_pinned *p = lists[i], *next; p; p = next) {
            next = p->next;
            /* An arena piece goes with the arena. */
            if (free_device && !rk__cuda_arena_holds(&ctx->arena, p->device)) rk__cuda.cuMemFree(p->device);
            free(p);
        }
    }
    ctx->linked_free = ctx->linked_used = NULL;
    if (free_device && ctx->arena.base) rk__cuda.cuMemFree(ctx->arena.base);
    rk__cuda_arena_forget(&ctx->arena);
}

rk_status rk__cuda_pinned_alloc(rk__cuda_context *ctx, size_t size, void **host, CUdeviceptr *device) {
    rk_status s = rk__cuda_bind(ctx);
    if (s != RK_OK) return s;
    size = (size + 4095) & ~(size_t)4095;
    pthread_mutex_lock(&ctx->lock);
    rk__cuda_pinned *block = rk__cuda_take_pooled(&ctx->pinned_free, size);
    pthread_mutex_unlock(&ctx->lock);
    if (!block) {
        block = calloc(1, sizeof *block);
        if (!block) return rk__fail(RK_OUT_OF_MEMORY, "out of memory");
        CUresult r = rk__cuda.cuMemHostAlloc(&block->host, size, RK_CU_MEMHOSTALLOC_DEVICEMAP | RK_CU_MEMHOSTALLOC_PORTABLE);
        if (r == RK_CUDA_SUCCESS) r = rk__cuda.cuMemHostGetDevicePointer(&block->device, block->host, 0);
        if (r != RK_CUDA_SUCCESS) {
            if (block->host) rk__cuda.cuMemFreeHost(block->host);
            free(block);
            return rk__cuda_fail(r, RK_OUT_OF_MEMORY, "allocating pinned host memory (cuMemHostAlloc)");
        }
        block->size = size;
    }
    memset(block->host, 0, block->size);
    pthread_mutex_lock(&ctx->lock);
    block->next = ctx->pinned_used;
    ctx->pinned_used = block;
    pthread_mutex_unlock(&ctx->lock);
    *host = block->host;
    *device = block->device;
    return RK_OK;
}

void rk__cuda_pinned_free(rk__cuda_context *ctx, void *host) {
    if (!host) return;
    pthread_mutex_lock(&ctx->lock);
    for (rk__cuda_pinned **p = &ctx->pinned_used; *p; p = &(*p)->next) {
        if ((*p)->host == host) {
            rk__cuda_pinned *block = *p;
            *p = block->next;
            block->next = ctx->pinned_free;
            ctx->pinned_free = block;
            break;
        }
    }
    pthread_mutex_unlock(&ctx->lock);
}

/* ---- rk_buffer ------------------------------------------------------------ */

static rk_status buffer_alloc(rk_context *base, size_t size, rk_buffer **out) {
    rk__cuda_buffer *b = calloc(1, sizeof *b);
    if (!b) return rk__fail(RK_OUT_OF_MEMORY, "rk_buffer_alloc: out of memory");
    rk_status s = rk__cuda_device_alloc(rk__cuda_ctx(base), size, &b->ptr);
    if (s != RK_OK) {
        free(b);
        return s;
    }
    *out = &b->base;
    return RK_OK;
}

static void buffer_free(rk_buffer *base) {
    rk__cuda_buffer *b = (rk__cuda_buffer *)base;
    rk__cuda_device_free(rk__cuda_ctx(base->ctx), b->ptr);
    free(b);
}

static CUdeviceptr device_ptr(const rk_buffer *b, size_t offset) { return ((const rk__cuda_buffer *)b)->ptr + offset; }

static rk_status copy_to_device(rk_context *base, rk_buffer *dst, size_t dst_offset, const void *src, size_t size,
                                rk_stream *stream) {
    rk__cuda_context *ctx = rk__cuda_ctx(base);
    rk_status s = rk__cuda_bind(ctx);
    if (s != RK_OK) return s;
    CUresult r = rk__cuda.cuMemcpyHtoDAsync(device_ptr(dst, dst_offset), src, size, rk__cuda_stream_of(ctx, stream));
    return r == RK_CUDA_SUCCESS ? RK_OK : rk__cuda_fail(r, RK_INTERNAL, "rk_copy_to_device (cuMemcpyHtoDAsync)");
}

static rk_status copy_to_host(rk_context *base, void *dst, const rk_buffer *src, size_t src_offset, size_t size,
                              rk_stream *stream) {
    rk__cuda_context *ctx = rk__cuda_ctx(base);
    rk_status s = rk__cuda_bind(ctx);
    if (s != RK_OK) return s;
    CUresult r = rk__cuda.cuMemcpyDtoHAsync(dst, device_ptr(src, src_offset), size, rk__cuda_stream_of(ctx, stream));
    return r == RK_CUDA_SUCCESS ? RK_OK : rk__cuda_fail(r, RK_INTERNAL, "rk_copy_to_host (cuMemcpyDtoHAsync)");
}

static rk_status copy_device_to_device(rk_context *base, rk_buffer *dst, size_t dst_offset, const rk_buffer *src,
                                       size_t src_offset, size_t size, rk_stream *stream) {
    rk__cuda_context *ctx = rk__cuda_ctx(base);
    rk_status s = rk__cuda_bind(ctx);
    if (s != RK_OK) return s;
    CUresult r = rk__cuda.cuMemcpyDtoDAsync(device_ptr(dst, dst_offset), device_ptr(src, src_offset), size,
                                            rk__cuda_stream_of(ctx, stream));
    return r == RK_CUDA_SUCCESS ? RK_OK : rk__cuda_fail(r, RK_INTERNAL, "rk_copy_device_to_device (cuMemcpyDtoDAsync)");
}

/* ---- streams ------------------------------------------------------------- */

static rk_status stream_create(rk_context *base, rk_stream **out) {
    rk__cuda_context *ctx = rk__cuda_ctx(base);
    rk_status s = rk__cuda_bind(ctx);
    if (s != RK_OK) return s;
    rk__cuda_stream *st = calloc(1, sizeof *st);
    if (!st) return rk__fail(RK_OUT_OF_MEMORY, "rk_stream_create: out of memory");
    CUresult r = rk__cuda.cuStreamCreate(&st->stream, RK_CU_STREAM_NON_BLOCKING);
    if (r != RK_CUDA_SUCCESS) {
        free(st);
        return rk__cuda_fail(r, RK_INTERNAL, "rk_stream_create (cuStreamCreate)");
    }
    pthread_mutex_lock(&ctx->lock);
    st->next = ctx->streams;
    ctx->streams = st;
    pthread_mutex_unlock(&ctx->lock);
    *out = &st->base;
    return RK_OK;
}

/* Until the stream is idle, polled: cuStreamSynchronize may spin a core for
 * as long as the stream runs (a context's default scheduling spins while
 * it has fewer contexts than cores), and a persistent simulation's watcher
 * thread (src/sim) waits so for the kernel's whole life. So: yield for the
 * first STREAM_SPIN_NS, then sleep an eighth of the time waited so far (10
 * us to 1 ms), which a long wait overshoots by at most about an eighth
 * (H200, session 25: a seed-table run 1.15 -> 0.98 cores of CPU time; its
 * figures no different). */
enum { STREAM_SPIN_NS = 100000, STREAM_NAP_MIN_NS = 10000, STREAM_NAP_MAX_NS = 1000000 };
static CUresult wait_stream(CUstream stream) {
    const uint64_t since = rk__now_ns();
    for (;;) {
        CUresult r = rk__cuda.cuStreamQuery(stream);
        if (r != RK_CUDA_ERROR_NOT_READY) return r;
        const uint64_t waited = rk__now_ns() - since;
        if (waited < STREAM_SPIN_NS) {
            sched_yield();
            continue;
        }
        uint64_t nap = waited / 8u;
        nap = nap < STREAM_NAP_MIN_NS ? STREAM_NAP_MIN_NS : nap > STREAM_NAP_MAX_NS ? STREAM_NAP_MAX_NS : nap;
        struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)nap};
        nanosleep(&ts, NULL);
    }
}

static rk_status stream_synchronize(rk_stream *base) {
    rk__cuda_context *ctx = rk__cuda_ctx(base->ctx);
    rk_status s = rk__cuda_bind(ctx);
    if (s != RK_OK) return s;
    CUresult r = wait_stream(((rk__cuda_stream *)base)->stream);
    return r == RK_CUDA_SUCCESS ? RK_OK : rk__cuda_fail(r, RK_INTERNAL, "rk_stream_synchronize (cuStreamQuery)");
}

static void stream_destroy(rk_stream *base) {
    rk__cuda_context *ctx = rk__cuda_ctx(base->ctx);
    rk__cuda_stream *st = (rk__cuda_stream *)base;
    pthread_mutex_lock(&ctx->lock);
    for (rk__cuda_stream **p = &ctx->streams; *p; p = &(*p)->next) {
        if (*p == st) {
            *p = st->next;
            break;
        }
    }
    pthread_mutex_unlock(&ctx->lock);
    if (rk__cuda_bind(ctx) == RK_OK) {
        /* Work still queued on it completes by the next context synchronize
         * (device.h), which no longer sees this stream: the default stream,
         * which it does see, waits for that work. (Without this, the
         * conformance suite's stream_order failed when other processes kept
         * the GPU busy: H200, session 25.) */
        CUevent done = NULL;
        if (rk__cuda.cuEventCreate(&done, RK_CU_EVENT_DISABLE_TIMING) == RK_CUDA_SUCCESS) {
            if (rk__cuda.cuEventRecord(done, st->stream) == RK_CUDA_SUCCESS)
                rk__cuda.cuStreamWaitEvent(ctx->default_stream, done, 0);
            rk__cuda.cuEventDestroy(done); /* released once it has completed */
        }
        rk__cuda.cuStreamDestroy(st->stream);
    }
    free(st);
}

/* ---- the vtable ------------------------------------------------------------ */

const rk__context_iface rk__cuda_context_iface = {
    .destroy = rk__cuda_context_destroy,
    .synchronize = rk__cuda_context_synchronize,
    .buffer_alloc = buffer_alloc,
    .buffer_free = buffer_free,
    .copy_to_device = copy_to_device,
    .copy_to_host = copy_to_host,
    .copy_device_to_device = copy_device_to_device,
    .stream_create = stream_create,
    .stream_synchronize = stream_synchronize,
    .stream_destroy = stream_destroy,
    .module_compile = rk__cuda_module_compile,
    .module_from_host_kernels = NULL,
    .module_destroy = rk__cuda_module_destroy,
    .module_get_function = rk__cuda_module_get_function,
    .launch = rk__cuda_launch,
    .buffer_alloc_mapped = rk__cuda_buffer_alloc_mapped, /* cuda_mapped.c */
    .ring = &rk__cuda_ring_iface,
    .graph_create = rk__cuda_graph_create, /* cuda_graph.c */
    .graph_set_args = rk__cuda_graph_set_args,
    .graph_launch = rk__cuda_graph_launch,
    .graph_destroy = rk__cuda_graph_destroy,
};
