/* The CUDA backend: probing, device information and contexts. Each context
 * is the device's primary context (shared with the CUDA runtime and other
 * libraries in the process) plus a non-blocking default stream. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/resident.h"
#include "cuda/cuda_internal.h"

static rk_status probe(uint32_t *device_count, char *reason, size_t reason_size) {
    return rk__cuda_load(device_count, reason, reason_size);
}

static int attribute(CUdevice dev, int which) {
    int value = 0;
    if (rk__cuda.cuDeviceGetAttribute(&value, which, dev) != RK_CUDA_SUCCESS) return 0;
    return value;
}

/* "580.159.04" from the kernel module's version line, when the file is there:
 * the first word that looks like a dotted version number. */
static void kernel_driver_version(char *out, size_t size) {
    out[0] = '\0';
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    if (!f) return;
    char line[512];
    if (fgets(line, sizeof line, f)) {
        char *save = NULL;
        for (char *word = strtok_r(line, " \t\n", &save); word; word = strtok_r(NULL, " \t\n", &save)) {
            size_t digits = strspn(word, "0123456789.");
            if (digits == strlen(word) && digits < size && isdigit((unsigned char)word[0]) && strchr(word, '.')) {
                memcpy(out, word, digits + 1);
                break;
            }
        }
    }
    fclose(f);
}

static rk_status device_info(uint32_t ordinal, rk_device_info *out) {
    CUdevice dev;
    CUresult r = rk__cuda.cuDeviceGet(&dev, (int)ordinal);
    if (r != RK_CUDA_SUCCESS) return rk__cuda_fail(r, RK_NO_DEVICE, "cuDeviceGet");
    r = rk__cuda.cuDeviceGetName(out->name, (int)sizeof out->name, dev);
    if (r != RK_CUDA_SUCCESS) return rk__cuda_fail(r, RK_INTERNAL, "cuDeviceGetName");
    snprintf(out->vendor, sizeof out->vendor, "NVIDIA");
    snprintf(out->backend, sizeof out->backend, "cuda");
    int version = 0;
    rk__cuda.cuDriverGetVersion(&version);
    char kernel[32];
    kernel_driver_version(kernel, sizeof kernel);
    snprintf(out->driver, sizeof out->driver, "%s%sCUDA %d.%d", kernel, kernel[0] ? ", " : "", version / 1000,
             (version % 1000) / 10);
    out->compute_major = attribute(dev, RK_CU_ATTR_COMPUTE_CAPABILITY_MAJOR);
    out->compute_minor = attribute(dev, RK_CU_ATTR_COMPUTE_CAPABILITY_MINOR);
    snprintf(out->architecture, sizeof out->architecture, "sm_%d%d", out->compute_major, out->compute_minor);
    size_t bytes = 0;
    if (rk__cuda.cuDeviceTotalMem(&bytes, dev) == RK_CUDA_SUCCESS) out->total_memory = bytes;
    out->multiprocessors = (uint32_t)attribute(dev, RK_CU_ATTR_MULTIPROCESSOR_COUNT);
    out->warp_size = (uint32_t)attribute(dev, RK_CU_ATTR_WARP_SIZE);
    out->max_threads_per_block = (uint32_t)attribute(dev, RK_CU_ATTR_MAX_THREADS_PER_BLOCK);
    for (int i = 0; i < 3; i++) {
        out->max_block_dim[i] = (uint32_t)attribute(dev, RK_CU_ATTR_MAX_BLOCK_DIM_X + i);
        out->max_grid_dim[i] = (uint32_t)attribute(dev, RK_CU_ATTR_MAX_GRID_DIM_X + i);
    }
    int shared = attribute(dev, RK_CU_ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    if (shared <= 0) shared = attribute(dev, RK_CU_ATTR_MAX_SHARED_MEMORY_PER_BLOCK);
    out->max_shared_memory_per_block = (uint32_t)shared;
    out->cooperative_launch = attribute(dev, RK_CU_ATTR_COOPERATIVE_LAUNCH) != 0;
    out->host_mapped_memory = attribute(dev, RK_CU_ATTR_CAN_MAP_HOST_MEMORY) != 0;
    out->persistent_kernels = out->host_mapped_memory && attribute(dev, RK_CU_ATTR_UNIFIED_ADDRESSING) != 0;
    return RK_OK;
}

rk_status rk__cuda_bind(rk__cuda_context *ctx) {
    CUcontext current = NULL;
    if (rk__cuda.cuCtxGetCurrent(&current) == RK_CUDA_SUCCESS && current == ctx->cu) return RK_OK;
    CUresult r = rk__cuda.cuCtxSetCurrent(ctx->cu);
    return r == RK_CUDA_SUCCESS ? RK_OK : rk__cuda_fail(r, RK_INTERNAL, "cuCtxSetCurrent");
}

CUstream rk__cuda_stream_of(rk__cuda_context *ctx, rk_stream *stream) {
    return stream ? ((rk__cuda_stream *)stream)->stream : ctx->default_stream;
}

void rk__cuda_context_destroy(rk_context *base) {
    rk__cuda_context *ctx = rk__cuda_ctx(base);
    if (ctx->stuck_kernels) {
        /* Unloading modules or freeing memory under a kernel that still runs
         * could block forever or fault: leave the device side to process exit. */
        rk__log(RK_LOG_WARN, "cuda: %d ring kernel(s) still running; the context is left in place",
                ctx->stuck_kernels);
        for (rk__cuda_stream *s = ctx->streams, *next; s; s = next) {
            next = s->next;
            free(s);
        }
        pthread_mutex_destroy(&ctx->lock);
        free(ctx);
        return;
    }
    rk__cuda_bind(ctx);
    rk__cuda.cuStreamSynchronize(ctx->default_stream);
    for (rk__cuda_stream *s = ctx->streams, *next; s; s = next) {
        next = s->next;
        rk__cuda.cuStreamDestroy(s->stream);
        free(s);
    }
    /* Unloading a module and freeing pinned memory wait for every kernel in
     * the device's primary context, which other rk contexts share: their
     * resident kernels (ring kernels, simulations) are paused around it. One
     * that will not pause leaves the driver's side of this context in place
     * rather than block here for good. */
    const bool paused = rk__resident_pause(base) == RK_OK;
    if (!paused)
        rk__log(RK_LOG_WARN, "cuda: a resident kernel could not be paused; this context's modules and pinned memory "
                             "stay allocated until the process exits");
    for (rk__cuda_loaded_module *m = ctx->ring_modules, *next; m; m = next) {
        next = m->next;
        if (paused) rk__cuda.cuModuleUnload(m->module);
        free(m);
    }
    rk__cuda_pinned *lists[] = {ctx->pinned_free, ctx->pinned_used};
    for (int i = 0; i < 2; i++) {
        for (rk__cuda_pinned *p = lists[i], *next; p; p = next) {
            next = p->next;
            if (paused) rk__cuda.cuMemFreeHost(p->host);
            free(p);
        }
    }
    rk__cuda_linked_release_all(ctx, paused); /* channel memory and the channel arena */
    if (paused) rk__resident_resume(base);
    rk__cuda.cuStreamDestroy(ctx->default_stream);
    rk__cuda.cuDevicePrimaryCtxRelease(ctx->device);
    pthread_mutex_destroy(&ctx->lock);
    free(ctx);
}

rk_status rk__cuda_context_synchronize(rk_context *base) {
    rk__cuda_context *ctx = rk__cuda_ctx(base);
    rk_status s = rk__cuda_bind(ctx);
    if (s != RK_OK) return s;
    /* Not cuCtxSynchronize: that would wait for running ring kernels forever. */
    CUresult r = rk__cuda.cuStreamSynchronize(ctx->default_stream);
    if (r != RK_CUDA_SUCCESS) return rk__cuda_fail(r, RK_INTERNAL, "cuStreamSynchronize (default stream)");
    pthread_mutex_lock(&ctx->lock);
    for (rk__cuda_stream *st = ctx->streams; st && r == RK_CUDA_SUCCESS; st = st->next)
        r = rk__cuda.cuStreamSynchronize(st->stream);
    pthread_mutex_unlock(&ctx->lock);
    return r == RK_CUDA_SUCCESS ? RK_OK : rk__cuda_fail(r, RK_INTERNAL, "cuStreamSynchronize");
}

static rk_status context_create(const rk_backend *backend, uint32_t ordinal, rk_context **out) {
    (void)backend;
    rk__cuda_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return rk__fail(RK_OUT_OF_MEMORY, "rk_context_create: out of memory");
    ctx->base.iface = &rk__cuda_context_iface;
    CUresult r = rk__cuda.cuDeviceGet(&ctx->device, (int)ordinal);
    if (r != RK_CUDA_SUCCESS) {
        free(ctx);
        return rk__cuda_fail(r, RK_NO_DEVICE, "cuDeviceGet");
    }
    r = rk__cuda.cuDevicePrimaryCtxRetain(&ctx->cu, ctx->device);
    if (r != RK_CUDA_SUCCESS) {
        free(ctx);
        return rk__cuda_fail(r, RK_BACKEND_UNAVAILABLE, "cuDevicePrimaryCtxRetain");
    }
    r = rk__cuda.cuCtxSetCurrent(ctx->cu);
    if (r == RK_CUDA_SUCCESS) r = rk__cuda.cuStreamCreate(&ctx->default_stream, RK_CU_STREAM_NON_BLOCKING);
    if (r != RK_CUDA_SUCCESS) {
        rk_status s = rk__cuda_fail(r, RK_INTERNAL, "creating the context's stream");
        rk__cuda.cuDevicePrimaryCtxRelease(ctx->device);
        free(ctx);
        return s;
    }
    pthread_mutex_init(&ctx->lock, NULL);
    /* Reserved at the first persistent ring kernel's launch, not here: a
     * context that runs no ring kernel pays nothing. */
    rk_status s = rk__cuda_arena_bytes(getenv("RK_CUDA_CHANNEL_ARENA_MB"), &ctx->arena.size);
    if (s != RK_OK) {
        rk__cuda.cuStreamDestroy(ctx->default_stream);
        rk__cuda.cuDevicePrimaryCtxRelease(ctx->device);
        pthread_mutex_destroy(&ctx->lock);
        free(ctx);
        return s;
    }
    rk__cuda.cuDriverGetVersion(&ctx->driver_version);
    ctx->sm_count = attribute(ctx->device, RK_CU_ATTR_MULTIPROCESSOR_COUNT);
    ctx->async_alloc = rk__cuda.cuMemAllocAsync && rk__cuda.cuMemFreeAsync &&
                       attribute(ctx->device, RK_CU_ATTR_MEMORY_POOLS_SUPPORTED) != 0;
    snprintf(ctx->arch, sizeof ctx->arch, "sm_%d%d", attribute(ctx->device, RK_CU_ATTR_COMPUTE_CAPABILITY_MAJOR),
             attribute(ctx->device, RK_CU_ATTR_COMPUTE_CAPABILITY_MINOR));
    *out = &ctx->base;
    return RK_OK;
}

static const rk__backend_iface cuda_backend_iface = {
    .probe = probe,
    .device_info = device_info,
    .context_create = context_create,
};

const rk_backend rk__cuda_backend = {.name = "cuda", .iface = &cuda_backend_iface};

