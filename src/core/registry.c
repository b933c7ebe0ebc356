/* The backend registry: the spec's selection order, probing once per backend,
 * and choosing a device by name, by RK_BACKEND or automatically. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_impl.h"

/* Automatic selection takes the first with a device: CUDA, Metal, WebGPU, CPU. */
static const rk_backend *const backends[] = {
#ifdef RK_HAVE_CUDA
    &rk__cuda_backend,
#endif
#ifdef RK_HAVE_METAL
    &rk__metal_backend,
#endif
#ifdef RK_HAVE_WEBGPU
    &rk__webgpu_backend,
#endif
    &rk__cpu_backend,
};
enum { BACKEND_COUNT = sizeof backends / sizeof backends[0] };

typedef struct probe_result {
    bool done;
    rk_status status;
    uint32_t device_count;
    char reason[512];
} probe_result;

static probe_result probes[BACKEND_COUNT];
static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;

size_t rk_backend_count(void) { return BACKEND_COUNT; }

const rk_backend *rk_backend_at(size_t index) { return index < BACKEND_COUNT ? backends[index] : NULL; }

const char *rk_backend_name(const rk_backend *backend) { return backend ? backend->name : "(null)"; }

static int index_of(const rk_backend *backend) {
    for (int i = 0; i < BACKEND_COUNT; i++)
        if (backends[i] == backend) return i;
    return -1;
}

rk_status rk_backend_find(const char *name, const rk_backend **out) {
    if (!name || !out) return rk__fail(RK_NULL_ARGUMENT, "rk_backend_find: %s is NULL", name ? "out" : "name");
    for (int i = 0; i < BACKEND_COUNT; i++) {
        if (strcmp(backends[i]->name, name) == 0) {
            *out = backends[i];
            return RK_OK;
        }
    }
    char known[128] = "";
    for (int i = 0; i < BACKEND_COUNT; i++) {
        strncat(known, backends[i]->name, sizeof known - strlen(known) - 1);
        if (i + 1 < BACKEND_COUNT) strncat(known, ", ", sizeof known - strlen(known) - 1);
    }
    return rk__fail(RK_UNKNOWN_BACKEND, "unknown backend '%s' (built-in backends: %s)", name, known);
}

/* Runs the backend's probe once and keeps the answer. */
static const probe_result *probe(const rk_backend *backend) {
    int i = index_of(backend);
    if (i < 0) return NULL;
    pthread_mutex_lock(&probe_lock);
    probe_result *p = &probes[i];
    if (!p->done) {
        p->reason[0] = '\0';
        p->device_count = 0;
        p->status = backend->iface->probe(&p->device_count, p->reason, sizeof p->reason);
        if (p->status == RK_OK && p->device_count == 0 && !p->reason[0])
            snprintf(p->reason, sizeof p->reason, "no %s device found", backend->name);
        if (p->status != RK_OK && !p->reason[0])
            snprintf(p->reason, sizeof p->reason, "%s", rk_status_message(p->status));
        p->done = true;
    }
    pthread_mutex_unlock(&probe_lock);
    return p;
}

rk_status rk_backend_device_count(const rk_backend *backend, uint32_t *count) {
    if (!backend || !count)
        return rk__fail(RK_NULL_ARGUMENT, "rk_backend_device_count: %s is NULL", backend ? "count" : "backend");
    const probe_result *p = probe(backend);
    if (!p) return rk__fail(RK_INVALID_ARGUMENT, "rk_backend_device_count: not a registered backend");
    *count = p->status == RK_OK ? p->device_count : 0;
    if (p->status != RK_OK) return rk__fail(p->status, "backend '%s' unavailable: %s", backend->name, p->reason);
    return RK_OK;
}

const char *rk_backend_unavailable_reason(const rk_backend *backend) {
    if (!backend) return "backend is NULL";
    const probe_result *p = probe(backend);
    if (!p) return "not a registered backend";
    return (p->status == RK_OK && p->device_count > 0) ? "" : p->reason;
}

rk_status rk_backend_device_info(const rk_backend *backend, uint32_t device, rk_device_info *out) {
    uint32_t count = 0;
    if (!out) return rk__fail(RK_NULL_ARGUMENT, "rk_backend_device_info: out is NULL");
    rk_status s = rk_backend_device_count(backend, &count);
    if (s != RK_OK) return s;
    if (device >= count)
        return rk__fail(RK_NO_DEVICE, "backend '%s' has %u device(s); device %u does not exist", backend->name,
                        count, device);
    memset(out, 0, sizeof *out);
    return backend->iface->device_info(device, out);
}

/* Splits "cuda:1" into the backend and the device number. */
static rk_status parse_spec(const char *spec, const rk_backend **backend, uint32_t *device, bool *has_device) {
    char name[32];
    const char *colon = strchr(spec, ':');
    size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
    if (len == 0 || len >= sizeof name) return rk__fail(RK_UNKNOWN_BACKEND, "malformed backend name '%s'", spec);
    memcpy(name, spec, len);
    name[len] = '\0';
    *has_device = false;
    *device = 0;
    if (colon) {
        char *end = NULL;
        unsigned long d = strtoul(colon + 1, &end, 10);
        if (!colon[1] || *end || d > UINT32_MAX)
            return rk__fail(RK_INVALID_ARGUMENT, "malformed device number in '%s' (expected NAME:N)", spec);
        *device = (uint32_t)d;
        *has_device = true;
    }
    return rk_backend_find(name, backend);
}

rk_status rk_select_device(const char *spec, const rk_backend **backend, uint32_t *device) {
    if (!backend || !device)
        return rk__fail(RK_NULL_ARGUMENT, "rk_select_device: %s is NULL", backend ? "device" : "backend");
    bool automatic = !spec || strcmp(spec, "auto") == 0;
    const char *env = getenv("RK_BACKEND");
    if (automatic && env && *env && strcmp(env, "auto") != 0) {
        spec = env;
        automatic = false;
    }
    if (automatic) {
        for (int i = 0; i < BACKEND_COUNT; i++) {
            uint32_t count = 0;
            rk_device_info info;
            if (rk_backend_device_count(backends[i], &count) == RK_OK && count > 0 &&
                rk_backend_device_info(backends[i], 0, &info) == RK_OK && info.software) {
                rk__log(RK_LOG_INFO, "skipping backend %s: %s is a software device", backends[i]->name, info.name);
                continue;
            }
            if (count > 0) {
                rk__log(RK_LOG_INFO, "selected backend %s", backends[i]->name);
                *backend = backends[i];
                *device = 0;
                rk__clear_error();
                return RK_OK;
            }
            rk__log(RK_LOG_INFO, "skipping backend %s: %s", backends[i]->name,
                    rk_backend_unavailable_reason(backends[i]));
        }
        return rk__fail(RK_BACKEND_UNAVAILABLE, "no backend has a usable device");
    }
    const rk_backend *b = NULL;
    uint32_t d = 0, count = 0;
    bool has_device = false;
    rk_status s = parse_spec(spec, &b, &d, &has_device);
    if (s != RK_OK) return s;
    s = rk_backend_device_count(b, &count);
    if (s != RK_OK) return s;
    if (count == 0)
        return rk__fail(RK_BACKEND_UNAVAILABLE, "backend '%s' unavailable: %s", b->name,
                        rk_backend_unavailable_reason(b));
    if (d >= count)
        return rk__fail(RK_NO_DEVICE, "backend '%s' has %u device(s); device %u does not exist", b->name, count, d);
    *backend = b;
    *device = d;
    return RK_OK;
}
