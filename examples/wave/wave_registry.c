/* wave_registry.h: a count of running persistent kernels per device, and the
 * modules waiting for it to reach zero. */
#include "wave_registry.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct device_entry {
    const rk_backend *backend;
    uint32_t device;
    unsigned running;           /* persistent kernels */
    struct deferred *deferred;  /* modules and contexts to release at zero */
    struct device_entry *next;
} device_entry;

typedef struct deferred {
    rk_module *module;
    rk_context *ctx;
    struct deferred *next;
} deferred;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static device_entry *devices;

/* Only CUDA waits for running kernels when it loads or unloads a module. */
static bool loads_wait(const rk_backend *backend) { return strcmp(rk_backend_name(backend), "cuda") == 0; }

/* The device's entry, created if asked; NULL if absent or out of memory. Caller holds lock. */
static device_entry *entry(const rk_backend *backend, uint32_t device, bool create) {
    for (device_entry *e = devices; e; e = e->next)
        if (e->backend == backend && e->device == device) return e;
    if (!create) return NULL;
    device_entry *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->backend = backend;
    e->device = device;
    e->next = devices;
    devices = e;
    return e;
}

static void release_now(rk_module *module, rk_context *ctx) {
    if (module) rk_module_destroy(module);
    if (ctx) rk_context_destroy(ctx);
}

bool wave_registry_busy(const rk_backend *backend, uint32_t device) {
    if (!backend || !loads_wait(backend)) return false;
    pthread_mutex_lock(&lock);
    device_entry *e = entry(backend, device, false);
    bool busy = e && e->running > 0;
    pthread_mutex_unlock(&lock);
    return busy;
}

void wave_registry_started(const rk_backend *backend, uint32_t device) {
    if (!backend || !loads_wait(backend)) return;
    pthread_mutex_lock(&lock);
    device_entry *e = entry(backend, device, true);
    if (e) e->running++;
    pthread_mutex_unlock(&lock);
}

void wave_registry_release(const rk_backend *backend, uint32_t device, rk_module *module, rk_context *ctx,
                           bool was_running) {
    if (!backend || !loads_wait(backend)) {
        release_now(module, ctx);
        return;
    }
    pthread_mutex_lock(&lock);
    device_entry *e = entry(backend, device, false);
    if (e && was_running && e->running > 0) e->running--;
    if (e && e->running > 0) {
        /* Without memory to remember them they stay loaded for good rather than hang. */
        deferred *d = malloc(sizeof *d);
        if (d) {
            *d = (deferred){.module = module, .ctx = ctx, .next = e->deferred};
            e->deferred = d;
        }
        pthread_mutex_unlock(&lock);
        return;
    }
    deferred *list = e ? e->deferred : NULL;
    if (e) e->deferred = NULL;
    pthread_mutex_unlock(&lock);
    /* Nothing runs on the device now: unload outside the lock. */
    release_now(module, ctx);
    while (list) {
        deferred *next = list->next;
        release_now(list->module, list->ctx);
        free(list);
        list = next;
    }
}
