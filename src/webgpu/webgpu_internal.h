/* What the WebGPU backend's parts share: the context and buffer objects and
 * the blocking helpers (wait for a future, read a buffer back, collect an
 * error scope) that every part builds on.
 *
 * Locking: Dawn's objects are used from whichever thread calls the library
 * (and from a ring kernel's worker), so every call into Dawn for a context is
 * made with ctx->lock held. Callbacks run inside WaitAny on the waiting
 * thread (WaitAnyOnly), except the uncaptured-error and device-lost callbacks,
 * which only write the context's error record under error_lock.
 */
#ifndef RK_WEBGPU_INTERNAL_H
#define RK_WEBGPU_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "core/backend_impl.h"
#include "wgpu_api.h"

/* ---- loading (wgpu_loader.c) ------------------------------------------------ */

/* Loads the library once. RK_BACKEND_UNAVAILABLE with the reason otherwise. */
rk_status rk__wgpu_load(const rk__wgpu_api **out, char *reason, size_t reason_size);
/* The path that was loaded, or "". */
const char *rk__wgpu_library_path(void);

/* ---- objects ---------------------------------------------------------------- */

typedef struct wg_context {
    struct rk_context base;
    const rk__wgpu_api *W;
    WGPUInstance instance;
    WGPUAdapter adapter;
    WGPUDevice device;
    WGPUQueue queue;
    WGPULimits limits;
    pthread_mutex_t lock; /* every Dawn call on this context */

    pthread_mutex_t error_lock; /* the two records below */
    char error[2048];           /* first uncaptured error since it was last taken */
    bool has_error;
    char lost[512];             /* why the device was lost */
    atomic_bool is_lost;

    bool wedged;        /* a drain at destroy timed out: leave the device alone */
    WGPUBuffer staging; /* map-read staging buffer for readbacks, reused */
    uint64_t staging_size;
} wg_context;

typedef struct wg_buffer {
    struct rk_buffer base;
    WGPUBuffer buffer;
    uint64_t alloc_size; /* size rounded up to a multiple of 4 */
} wg_buffer;

static inline wg_context *wg_ctx(rk_context *ctx) { return (wg_context *)ctx; }
static inline wg_buffer *wg_buf(const rk_buffer *b) { return (wg_buffer *)(uintptr_t)b; }

/* ---- helpers (webgpu_sync.c); all expect ctx->lock held ----------------------- */

/* Waits for a future (timeout_ns == UINT64_MAX: forever). RK_TIMEOUT, or
 * RK_DEVICE_FAULT if the device was lost, or RK_HUNG once *abort (may be
 * NULL) becomes true. what names the operation. */
rk_status rk__wg_wait(wg_context *c, WGPUFuture future, uint64_t timeout_ns, const atomic_bool *abort,
                      const char *what);
/* Waits until everything submitted to the queue so far has finished. */
rk_status rk__wg_queue_drain(wg_context *c, uint64_t timeout_ns, const char *what);
/* Reports (and clears) an uncaptured error or a lost device as a failure of
 * `what`; RK_OK when there is none. */
rk_status rk__wg_check(wg_context *c, const char *what);

/* Error scopes: push before a call whose errors we want as text, pop after.
 * pop returns RK_OK, or `fail_status` with Dawn's message in rk_last_error. */
void rk__wg_scope_push(wg_context *c);
rk_status rk__wg_scope_pop(wg_context *c, rk_status fail_status, const char *what);

/* Copies [offset, offset+size) of src into host memory, in queue order. Any
 * offset and size; blocks until the data is there. */
rk_status rk__wg_read(wg_context *c, WGPUBuffer src, uint64_t offset, void *dst, size_t size);

/* Creates a buffer of `size` bytes (rounded up to 4) with the given usage. */
rk_status rk__wg_create_buffer(wg_context *c, uint64_t size, WGPUFlags usage, const char *label,
                               WGPUBuffer *out);

/* Releases every Dawn object of the context and frees it (webgpu_backend.c). */
void rk__wg_context_release(wg_context *c);

/* ---- parts ------------------------------------------------------------------ */

extern const rk__context_iface rk__webgpu_context_iface;
extern const rk__ring_iface rk__webgpu_ring_iface;

/* Device-layer slots implemented in webgpu_module.c. */
rk_status rk__wg_module_compile(rk_context *ctx, const char *source, const rk_compile_options *opts,
                                rk_module **out);
void rk__wg_module_destroy(rk_module *module);
rk_status rk__wg_module_get_function(rk_module *module, const char *name, rk_function **out);
rk_status rk__wg_launch(rk_function *function, const rk_launch_desc *desc);
/* Shader module plus a compute pipeline ("auto" layout) for one entry point;
 * RK_COMPILE_FAILED with Dawn's diagnostics. Expects the lock held. */
rk_status rk__wg_build_pipeline(wg_context *c, const char *code, const char *entry, WGPUShaderModule *shader,
                                WGPUComputePipeline *pipeline);

#endif
