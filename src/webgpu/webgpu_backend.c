/* The WebGPU backend's registry entry: loading the library, finding an
 * adapter (refusing Dawn's Null adapter, which "runs" shaders and returns
 * garbage), describing it, and opening a device for a context. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webgpu_internal.h"

/* Filled by the probe; the registry calls the probe once, under its lock.
 * The instance lives as long as the process, like the loaded library: one
 * Vulkan instance for every context (creating and destroying instances
 * leaks inside the Vulkan driver), and adapter discovery done once. Dawn's
 * instance may be waited on from several threads. */
static rk_device_info probed_info;
static WGPUInstance shared_instance;

static const char *backend_type_name(WGPUEnum t) {
    switch (t) {
    case WGPU_BACKEND_NULL: return "null";
    case WGPU_BACKEND_WEBGPU: return "webgpu";
    case WGPU_BACKEND_D3D11: return "d3d11";
    case WGPU_BACKEND_D3D12: return "d3d12";
    case WGPU_BACKEND_METAL: return "metal";
    case WGPU_BACKEND_VULKAN: return "vulkan";
    case WGPU_BACKEND_OPENGL: return "opengl";
    case WGPU_BACKEND_OPENGLES: return "opengles";
    default: return "unknown";
    }
}

static void view_to(char *dst, size_t size, WGPUStringView v) {
    size_t n = 0;
    if (v.data) n = v.length == WGPU_STRLEN ? strlen(v.data) : v.length;
    if (n >= size) n = size - 1;
    if (n) memcpy(dst, v.data, n);
    dst[n] = '\0';
}

/* ---- instance and adapter ------------------------------------------------------ */

static rk_status create_instance(const rk__wgpu_api *W, WGPUInstance *out, char *reason, size_t n) {
    WGPUInstanceDescriptor d = {.capabilities = {.timedWaitAnyEnable = 1, .timedWaitAnyMaxCount = 4}};
    *out = W->CreateInstance(&d);
    if (!*out) {
        snprintf(reason, n, "wgpuCreateInstance failed (%s)", rk__wgpu_library_path());
        return RK_BACKEND_UNAVAILABLE;
    }
    return RK_OK;
}

typedef struct adapter_result {
    WGPUEnum status;
    WGPUAdapter adapter;
    char message[256];
} adapter_result;

static void on_adapter(WGPUEnum status, WGPUAdapter adapter, WGPUStringView message, void *u1, void *u2) {
    (void)u2;
    adapter_result *r = u1;
    r->status = status;
    r->adapter = adapter;
    view_to(r->message, sizeof r->message, message);
}

/* Waits up to 30 s: adapter discovery takes tens of milliseconds. */
static bool wait_future(const rk__wgpu_api *W, WGPUInstance inst, WGPUFuture f) {
    WGPUFutureWaitInfo info = {.future = f};
    WGPUEnum w = W->InstanceWaitAny(inst, 1, &info, 30000000000ull);
    return w == WGPU_WAIT_SUCCESS && info.completed;
}

static rk_status request_adapter(const rk__wgpu_api *W, WGPUInstance inst, WGPUAdapter *out, WGPUAdapterInfo *info,
                                 char *reason, size_t n) {
    adapter_result r = {0};
    WGPURequestAdapterOptions opts = {.featureLevel = WGPU_FEATURE_LEVEL_CORE};
    WGPURequestAdapterCallbackInfo cb = {.mode = WGPU_CALLBACK_MODE_WAIT_ANY_ONLY, .callback = on_adapter,
                                         .userdata1 = &r};
    if (!wait_future(W, inst, W->InstanceRequestAdapter(inst, &opts, cb))) {
        snprintf(reason, n, "wgpuInstanceRequestAdapter did not complete");
        return RK_BACKEND_UNAVAILABLE;
    }
    if (r.status != WGPU_STATUS_SUCCESS || !r.adapter) {
        snprintf(reason, n, "no WebGPU adapter: %s", r.message[0] ? r.message : "(no message)");
        if (r.adapter) W->AdapterRelease(r.adapter);
        return RK_BACKEND_UNAVAILABLE;
    }
    memset(info, 0, sizeof *info);
    if (W->AdapterGetInfo(r.adapter, info) != WGPU_STATUS_SUCCESS) {
        snprintf(reason, n, "wgpuAdapterGetInfo failed");
        W->AdapterRelease(r.adapter);
        return RK_BACKEND_UNAVAILABLE;
    }
    if (info->backendType == WGPU_BACKEND_NULL || info->backendType == WGPU_BACKEND_UNDEFINED) {
        snprintf(reason, n,
                 "WebGPU offered only its Null adapter (no usable Vulkan driver: Dawn needs Mesa 25 or a GPU "
                 "driver; run scripts/install-webgpu.sh)");
        W->AdapterInfoFreeMembers(*info);
        W->AdapterRelease(r.adapter);
        return RK_BACKEND_UNAVAILABLE;
    }
    *out = r.adapter;
    return RK_OK;
}

static void fill_info(const WGPUAdapterInfo *a, const WGPULimits *l, rk_device_info *out) {
    memset(out, 0, sizeof *out);
    view_to(out->name, sizeof out->name, a->device);
    view_to(out->vendor, sizeof out->vendor, a->vendor);
    if (!out->vendor[0]) snprintf(out->vendor, sizeof out->vendor, "0x%04x", (unsigned)a->vendorID);
    snprintf(out->backend, sizeof out->backend, "webgpu");
    view_to(out->driver, sizeof out->driver, a->description);
    snprintf(out->architecture, sizeof out->architecture, "%s", backend_type_name(a->backendType));
    out->multiprocessors = 0; /* WebGPU does not say */
    out->total_memory = 0;    /* nor this */
    /* Subgroup size where the adapter reports a sane one. */
    uint32_t sg = a->subgroupMaxSize;
    out->warp_size = (sg && sg <= 256 && (sg & (sg - 1)) == 0) ? sg : 0;
    out->max_threads_per_block = l->maxComputeInvocationsPerWorkgroup;
    out->max_block_dim[0] = l->maxComputeWorkgroupSizeX;
    out->max_block_dim[1] = l->maxComputeWorkgroupSizeY;
    out->max_block_dim[2] = l->maxComputeWorkgroupSizeZ;
    for (int i = 0; i < 3; i++) out->max_grid_dim[i] = l->maxComputeWorkgroupsPerDimension;
    out->max_shared_memory_per_block = l->maxComputeWorkgroupStorageSize;
    out->cooperative_launch = false;
    out->persistent_kernels = false; /* a running dispatch cannot see host writes */
    out->host_mapped_memory = false;
    /* lavapipe and SwiftShader: automatic selection prefers the CPU backend. */
    out->software = a->adapterType == WGPU_ADAPTER_CPU;
}

/* ---- registry slots -------------------------------------------------------------- */

static rk_status probe(uint32_t *device_count, char *reason, size_t reason_size) {
    const rk__wgpu_api *W = NULL;
    *device_count = 0;
    rk_status s = rk__wgpu_load(&W, reason, reason_size);
    if (s != RK_OK) return s;
    WGPUAdapter adapter = NULL;
    WGPUAdapterInfo info;
    s = create_instance(W, &shared_instance, reason, reason_size);
    if (s != RK_OK) return s;
    s = request_adapter(W, shared_instance, &adapter, &info, reason, reason_size);
    if (s == RK_OK) {
        WGPULimits limits;
        memset(&limits, 0, sizeof limits);
        if (W->AdapterGetLimits(adapter, &limits) != WGPU_STATUS_SUCCESS) {
            snprintf(reason, reason_size, "wgpuAdapterGetLimits failed");
            s = RK_BACKEND_UNAVAILABLE;
        } else {
            fill_info(&info, &limits, &probed_info);
            *device_count = 1;
            rk__log(RK_LOG_INFO, "webgpu: %s (%s, %s) from %s", probed_info.name, probed_info.architecture,
                    probed_info.driver, rk__wgpu_library_path());
        }
        W->AdapterInfoFreeMembers(info);
        W->AdapterRelease(adapter);
    }
    return s;
}

static rk_status device_info(uint32_t device, rk_device_info *out) {
    (void)device; /* the registry checked device < 1 */
    *out = probed_info;
    return RK_OK;
}

/* ---- device ---------------------------------------------------------------------- */

typedef struct device_result {
    WGPUEnum status;
    WGPUDevice device;
    char message[512];
} device_result;

static void on_device(WGPUEnum status, WGPUDevice device, WGPUStringView message, void *u1, void *u2) {
    (void)u2;
    device_result *r = u1;
    r->status = status;
    r->device = device;
    view_to(r->message, sizeof r->message, message);
}

/* Reasons 2 (destroyed) and 3 (callback cancelled) are our own teardown. */
static void on_device_lost(const WGPUDevice *device, WGPUEnum reason, WGPUStringView message, void *u1, void *u2) {
    (void)device;
    (void)u2;
    if (reason == 2 || reason == 3) return;
    wg_context *c = u1;
    pthread_mutex_lock(&c->error_lock);
    view_to(c->lost, sizeof c->lost, message);
    atomic_store(&c->is_lost, true);
    pthread_mutex_unlock(&c->error_lock);
    rk__log(RK_LOG_ERROR, "webgpu: device lost: %s", c->lost);
}

static void on_uncaptured_error(const WGPUDevice *device, WGPUEnum type, WGPUStringView message, void *u1,
                                void *u2) {
    (void)device;
    (void)u2;
    wg_context *c = u1;
    pthread_mutex_lock(&c->error_lock);
    if (!c->has_error) {
        view_to(c->error, sizeof c->error, message);
        c->has_error = true;
    }
    pthread_mutex_unlock(&c->error_lock);
    rk__log(RK_LOG_ERROR, "webgpu: uncaptured error (type %u)", (unsigned)type);
}

static void release_all(wg_context *c) {
    const rk__wgpu_api *W = c->W;
    if (c->wedged) { /* still running a kernel: releasing anything would wait for it */
        pthread_mutex_destroy(&c->lock);
        pthread_mutex_destroy(&c->error_lock);
        free(c);
        return;
    }
    if (c->staging) {
        W->BufferDestroy(c->staging);
        W->BufferRelease(c->staging);
    }
    if (c->queue) W->QueueRelease(c->queue);
    if (c->device) {
        W->DeviceDestroy(c->device);
        W->DeviceRelease(c->device);
    }
    if (c->adapter) W->AdapterRelease(c->adapter);
    if (c->instance) W->InstanceProcessEvents(c->instance); /* let cancelled callbacks run before we go */
    pthread_mutex_destroy(&c->lock);
    pthread_mutex_destroy(&c->error_lock);
    free(c);
}

static rk_status context_create(const rk_backend *backend, uint32_t device, rk_context **out) {
    (void)backend;
    (void)device;
    char reason[512] = "";
    const rk__wgpu_api *W = NULL;
    if (rk__wgpu_load(&W, reason, sizeof reason) != RK_OK) return rk__fail(RK_BACKEND_UNAVAILABLE, "%s", reason);
    wg_context *c = calloc(1, sizeof *c);
    if (!c) return rk__fail(RK_OUT_OF_MEMORY, "webgpu context: out of memory");
    c->W = W;
    pthread_mutex_init(&c->lock, NULL);
    pthread_mutex_init(&c->error_lock, NULL);
    c->base.iface = &rk__webgpu_context_iface;
    WGPUAdapterInfo info;
    /* The registry probed (and made the instance) before any context. */
    c->instance = shared_instance;
    rk_status s = c->instance ? RK_OK : RK_BACKEND_UNAVAILABLE;
    if (!c->instance) snprintf(reason, sizeof reason, "the webgpu backend was not probed");
    if (s == RK_OK) s = request_adapter(W, c->instance, &c->adapter, &info, reason, sizeof reason);
    if (s != RK_OK) {
        release_all(c);
        return rk__fail(s, "%s", reason);
    }
    W->AdapterInfoFreeMembers(info);
    memset(&c->limits, 0, sizeof c->limits);
    if (W->AdapterGetLimits(c->adapter, &c->limits) != WGPU_STATUS_SUCCESS) {
        release_all(c);
        return rk__fail(RK_BACKEND_UNAVAILABLE, "wgpuAdapterGetLimits failed");
    }
    c->limits.nextInChain = NULL;
    /* Ask for everything the adapter can do, not WebGPU's conservative defaults. */
    device_result r = {0};
    WGPUDeviceDescriptor d = {
        .label = rk__wgpu_str("ringkernel"),
        .requiredLimits = &c->limits,
        .defaultQueue = {.label = rk__wgpu_str("ringkernel queue")},
        .deviceLostCallbackInfo = {.mode = WGPU_CALLBACK_MODE_ALLOW_SPONTANEOUS, .callback = on_device_lost,
                                   .userdata1 = c},
        .uncapturedErrorCallbackInfo = {.callback = on_uncaptured_error, .userdata1 = c},
    };
    WGPURequestDeviceCallbackInfo cb = {.mode = WGPU_CALLBACK_MODE_WAIT_ANY_ONLY, .callback = on_device,
                                        .userdata1 = &r};
    if (!wait_future(W, c->instance, W->AdapterRequestDevice(c->adapter, &d, cb)) ||
        r.status != WGPU_STATUS_SUCCESS || !r.device) {
        if (r.device) W->DeviceRelease(r.device);
        release_all(c);
        return rk__fail(RK_BACKEND_UNAVAILABLE, "wgpuAdapterRequestDevice failed: %s",
                        r.message[0] ? r.message : "(no message)");
    }
    c->device = r.device;
    if (W->DeviceGetLimits(c->device, &c->limits) != WGPU_STATUS_SUCCESS) {
        release_all(c);
        return rk__fail(RK_INTERNAL, "wgpuDeviceGetLimits failed");
    }
    c->queue = W->DeviceGetQueue(c->device);
    *out = &c->base;
    return RK_OK;
}

void rk__wg_context_release(wg_context *c) { release_all(c); }

static const rk__backend_iface webgpu_backend_iface = {
    .probe = probe,
    .device_info = device_info,
    .context_create = context_create,
};

const rk_backend rk__webgpu_backend = {.name = "webgpu", .iface = &webgpu_backend_iface};
