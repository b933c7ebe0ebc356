/* Blocking helpers over WebGPU's futures: wait, drain the queue, read a
 * buffer back, error scopes. Every caller holds ctx->lock. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webgpu_internal.h"

/* One wait slice: long enough to be cheap, short enough to notice a lost device. */
#define WAIT_SLICE_NS 200000000ull

static void copy_view(char *dst, size_t size, WGPUStringView v) {
    size_t n = 0;
    if (v.data) n = v.length == WGPU_STRLEN ? strlen(v.data) : v.length;
    if (n >= size) n = size - 1;
    if (n) memcpy(dst, v.data, n);
    dst[n] = '\0';
}

rk_status rk__wg_check(wg_context *c, const char *what) {
    rk_status s = RK_OK;
    pthread_mutex_lock(&c->error_lock);
    if (atomic_load(&c->is_lost)) {
        s = rk__fail(RK_DEVICE_FAULT, "%s: the WebGPU device was lost: %s", what, c->lost);
    } else if (c->has_error) {
        s = rk__fail(RK_DEVICE_FAULT, "%s: WebGPU reported an error: %s", what, c->error);
        c->has_error = false;
        c->error[0] = '\0';
    }
    pthread_mutex_unlock(&c->error_lock);
    return s;
}

rk_status rk__wg_wait(wg_context *c, WGPUFuture future, uint64_t timeout_ns, const atomic_bool *abort,
                      const char *what) {
    uint64_t start = rk__now_ns();
    for (;;) {
        if (abort && atomic_load(abort))
            return rk__fail(RK_HUNG, "%s: stopped while the device was still busy (a kernel that does not finish?)",
                            what);
        uint64_t slice = WAIT_SLICE_NS;
        if (timeout_ns != UINT64_MAX) {
            uint64_t spent = rk__now_ns() - start;
            if (spent >= timeout_ns) slice = 0;
            else if (timeout_ns - spent < slice) slice = timeout_ns - spent;
        }
        WGPUFutureWaitInfo info = {.future = future, .completed = 0};
        WGPUEnum w = c->W->InstanceWaitAny(c->instance, 1, &info, slice);
        if (w == WGPU_WAIT_SUCCESS && info.completed) return RK_OK;
        if (w != WGPU_WAIT_SUCCESS && w != WGPU_WAIT_TIMED_OUT)
            return rk__fail(RK_INTERNAL, "%s: wgpuInstanceWaitAny failed (status %u)", what, (unsigned)w);
        if (atomic_load(&c->is_lost)) return rk__wg_check(c, what);
        if (timeout_ns != UINT64_MAX && rk__now_ns() - start >= timeout_ns)
            return rk__fail(RK_TIMEOUT, "%s: timed out after %llu ns", what, (unsigned long long)timeout_ns);
    }
}

/* ---- queue drain -------------------------------------------------------------- */

typedef struct status_result {
    WGPUEnum status;
    char message[512];
} status_result;

static void on_work_done(WGPUEnum status, WGPUStringView message, void *u1, void *u2) {
    (void)u2;
    status_result *r = u1;
    r->status = status;
    copy_view(r->message, sizeof r->message, message);
}

rk_status rk__wg_queue_drain(wg_context *c, uint64_t timeout_ns, const char *what) {
    status_result r = {0};
    WGPUQueueWorkDoneCallbackInfo cb = {
        .mode = WGPU_CALLBACK_MODE_WAIT_ANY_ONLY, .callback = on_work_done, .userdata1 = &r};
    rk_status s = rk__wg_wait(c, c->W->QueueOnSubmittedWorkDone(c->queue, cb), timeout_ns, NULL, what);
    if (s != RK_OK) return s;
    if (r.status != WGPU_STATUS_SUCCESS)
        return rk__fail(RK_DEVICE_FAULT, "%s: queue work failed (status %u): %s", what, (unsigned)r.status,
                        r.message);
    return rk__wg_check(c, what);
}

/* ---- error scopes ------------------------------------------------------------- */

typedef struct scope_result {
    WGPUEnum status, type;
    char message[8192];
} scope_result;

static void on_scope(WGPUEnum status, WGPUEnum type, WGPUStringView message, void *u1, void *u2) {
    (void)u2;
    scope_result *r = u1;
    r->status = status;
    r->type = type;
    copy_view(r->message, sizeof r->message, message);
}

void rk__wg_scope_push(wg_context *c) { c->W->DevicePushErrorScope(c->device, WGPU_ERROR_FILTER_VALIDATION); }

rk_status rk__wg_scope_pop(wg_context *c, rk_status fail_status, const char *what) {
    scope_result *r = calloc(1, sizeof *r);
    if (!r) return rk__fail(RK_OUT_OF_MEMORY, "%s: out of memory", what);
    WGPUPopErrorScopeCallbackInfo cb = {
        .mode = WGPU_CALLBACK_MODE_WAIT_ANY_ONLY, .callback = on_scope, .userdata1 = r};
    rk_status s = rk__wg_wait(c, c->W->DevicePopErrorScope(c->device, cb), UINT64_MAX, NULL, what);
    if (s == RK_OK && r->status != WGPU_STATUS_SUCCESS)
        s = rk__fail(RK_INTERNAL, "%s: could not pop the error scope (status %u): %s", what, (unsigned)r->status,
                     r->message);
    else if (s == RK_OK && r->type != WGPU_ERROR_TYPE_NO_ERROR)
        s = rk__fail(r->type == WGPU_ERROR_TYPE_OUT_OF_MEMORY ? RK_OUT_OF_MEMORY : fail_status, "%s: %s", what,
                     r->message);
    free(r);
    return s;
}

/* ---- buffers ------------------------------------------------------------------- */

rk_status rk__wg_create_buffer(wg_context *c, uint64_t size, WGPUFlags usage, const char *label,
                               WGPUBuffer *out) {
    uint64_t rounded = (size + 3u) & ~(uint64_t)3u;
    if (rounded == 0) rounded = 4;
    if (rounded > c->limits.maxBufferSize)
        return rk__fail(RK_OUT_OF_MEMORY, "WebGPU buffer of %llu bytes is over the device's maxBufferSize %llu",
                        (unsigned long long)size, (unsigned long long)c->limits.maxBufferSize);
    WGPUBufferDescriptor d = {.label = rk__wgpu_str(label), .usage = usage, .size = rounded};
    rk__wg_scope_push(c);
    c->W->DevicePushErrorScope(c->device, WGPU_ERROR_FILTER_OUT_OF_MEMORY);
    WGPUBuffer b = c->W->DeviceCreateBuffer(c->device, &d);
    rk_status s = rk__wg_scope_pop(c, RK_OUT_OF_MEMORY, "wgpuDeviceCreateBuffer");
    rk_status s2 = rk__wg_scope_pop(c, RK_INVALID_ARGUMENT, "wgpuDeviceCreateBuffer");
    if (s == RK_OK) s = s2;
    if (s != RK_OK || !b) {
        if (b) c->W->BufferRelease(b);
        return s != RK_OK ? s : rk__fail(RK_OUT_OF_MEMORY, "wgpuDeviceCreateBuffer returned NULL");
    }
    *out = b;
    return RK_OK;
}

static rk_status ensure_staging(wg_context *c, uint64_t size) {
    if (c->staging && c->staging_size >= size) return RK_OK;
    uint64_t want = c->staging_size ? c->staging_size : 4096;
    while (want < size) want *= 2;
    WGPUBuffer b = NULL;
    rk_status s = rk__wg_create_buffer(c, want, WGPU_BUFFER_USAGE_MAP_READ | WGPU_BUFFER_USAGE_COPY_DST,
                                       "rk staging", &b);
    if (s != RK_OK) return s;
    if (c->staging) {
        c->W->BufferDestroy(c->staging);
        c->W->BufferRelease(c->staging);
    }
    c->staging = b;
    c->staging_size = want;
    return RK_OK;
}

typedef struct map_result {
    WGPUEnum status;
    char message[512];
} map_result;

static void on_map(WGPUEnum status, WGPUStringView message, void *u1, void *u2) {
    (void)u2;
    map_result *r = u1;
    r->status = status;
    copy_view(r->message, sizeof r->message, message);
}

rk_status rk__wg_read(wg_context *c, WGPUBuffer src, uint64_t offset, void *dst, size_t size) {
    if (size == 0) return RK_OK;
    /* copyBufferToBuffer and mapAsync work in 4-byte units: read the aligned
     * range that covers the request (buffers are allocated rounded up to 4). */
    uint64_t start = offset & ~(uint64_t)3u;
    uint64_t end = (offset + size + 3u) & ~(uint64_t)3u;
    uint64_t span = end - start;
    rk_status s = ensure_staging(c, span);
    if (s != RK_OK) return s;
    WGPUCommandEncoder enc = c->W->DeviceCreateCommandEncoder(c->device, NULL);
    c->W->CommandEncoderCopyBufferToBuffer(enc, src, start, c->staging, 0, span);
    WGPUCommandBuffer cmd = c->W->CommandEncoderFinish(enc, NULL);
    c->W->QueueSubmit(c->queue, 1, &cmd);
    c->W->CommandBufferRelease(cmd);
    c->W->CommandEncoderRelease(enc);

    map_result r = {0};
    WGPUBufferMapCallbackInfo cb = {.mode = WGPU_CALLBACK_MODE_WAIT_ANY_ONLY, .callback = on_map, .userdata1 = &r};
    s = rk__wg_wait(c, c->W->BufferMapAsync(c->staging, WGPU_MAP_MODE_READ, 0, (size_t)span, cb), UINT64_MAX, NULL,
                    "reading a WebGPU buffer back");
    if (s != RK_OK) return s;
    if (r.status != WGPU_STATUS_SUCCESS) {
        rk_status e = rk__wg_check(c, "reading a WebGPU buffer back");
        return e != RK_OK ? e
                          : rk__fail(RK_DEVICE_FAULT, "wgpuBufferMapAsync failed (status %u): %s",
                                     (unsigned)r.status, r.message);
    }
    const unsigned char *p = c->W->BufferGetConstMappedRange(c->staging, 0, (size_t)span);
    if (!p) {
        c->W->BufferUnmap(c->staging);
        return rk__fail(RK_INTERNAL, "wgpuBufferGetConstMappedRange returned NULL");
    }
    memcpy(dst, p + (offset - start), size);
    c->W->BufferUnmap(c->staging);
    return rk__wg_check(c, "reading a WebGPU buffer back");
}
