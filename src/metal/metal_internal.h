/* The Metal backend's objects (src/metal/): plain C over the Objective-C
 * runtime (metal_api.h). Shaped like the WebGPU backend: a context owns the
 * MTLDevice and one MTLCommandQueue; buffers use shared storage, so copies
 * are memcpy on the buffer's contents once the GPU work before them has
 * finished; a launch encodes one compute dispatch and commits it; ring
 * kernels relaunch per batch (metal_ring.c). Never run: no Apple GPU was
 * available when it was written (docs/metal.md). */
#ifndef RK_METAL_INTERNAL_H
#define RK_METAL_INTERNAL_H

#include <pthread.h>

#include "core/backend_impl.h"
#include "metal_api.h"

typedef struct metal_context {
    struct rk_context base;
    const rk_metal_api *api;
    id device, queue;
    id last;                /* the last committed command buffer (retained), or NULL */
    pthread_mutex_t lock;   /* queue order and `last` */
} metal_context;

typedef struct metal_buffer {
    struct rk_buffer base;
    id buffer;
    unsigned char *contents; /* [buffer contents]: shared storage */
} metal_buffer;

typedef struct metal_module {
    struct rk_module base;
    id library;
} metal_module;

typedef struct metal_function {
    struct rk_function base;
    id pipeline;
    char name[128];
} metal_function;

/* Waits for the last committed work; RK_DEVICE_FAULT with Metal's error
 * text when it failed. */
rk_status rk__metal_finish(metal_context *c);
/* Compiles MSL source into a library (fast math off: IEEE results, as the
 * CPU reference computes them). */
rk_status rk__metal_library(metal_context *c, const char *source, id *out);
/* A compute pipeline for kernel `name` of library. */
rk_status rk__metal_pipeline(metal_context *c, id library, const char *name, id *out);
/* Encodes one dispatch of pipeline with buffers[i] at index i, commits it and
 * remembers it as the last command buffer (not waited for). */
rk_status rk__metal_dispatch_buffers(metal_context *c, id pipeline, id const *buffers, size_t count, MTLSize groups,
                                     MTLSize threads);
void rk__metal_release(const rk_metal_api *api, id obj);

extern const rk__ring_iface rk__metal_ring_iface;

#endif
