/* What the CUDA backend's files share: the objects behind the public
 * handles, context binding, pinned-memory pooling and cached compilation. */
#ifndef RK_CUDA_INTERNAL_H
#define RK_CUDA_INTERNAL_H

#include <pthread.h>

#include "core/backend_impl.h"
#include "cuda/cuda_api.h"

typedef struct rk__cuda_stream {
    struct rk_stream base;
    CUstream stream;
    struct rk__cuda_stream *next; /* in the context's list, for rk_context_synchronize */
} rk__cuda_stream;

typedef struct rk__cuda_buffer {
    struct rk_buffer base;
    CUdeviceptr ptr;
} rk__cuda_buffer;

enum { RK_CUDA_MAX_ARGS = 64 }; /* arguments of one rk_launch */

typedef struct rk__cuda_function {
    struct rk_function base;
    CUfunction fn;
    char *name;
    /* Learnt once from the driver, so that a launch need not ask: how many
     * parameters the kernel takes (-1: the driver cannot say; more than
     * RK_CUDA_MAX_ARGS: RK_CUDA_MAX_ARGS + 1) and the size of each. */
    int param_count;
    uint32_t param_size[RK_CUDA_MAX_ARGS];
    struct rk__cuda_function *next;
} rk__cuda_function;

typedef struct rk__cuda_module {
    struct rk_module base;
    CUmodule module;
    char *image; /* the loaded cubin (or PTX): it tells the kernels' parameters */
    size_t image_size;
    rk__cuda_function *functions; /* looked up so far; freed with the module */
    pthread_mutex_t lock;
} rk__cuda_module;

/* A freed pinned block kept for reuse: freeing pinned memory can wait for
 * every kernel of the context, which never happens while a persistent ring
 * kernel runs. Pooled blocks are returned to the driver with the context. */
typedef struct rk__cuda_pinned {
    void *host;
    CUdeviceptr device;
    size_t size;
    struct rk__cuda_pinned *next;
} rk__cuda_pinned;

/* The channel arena (cuda_arena.c): device memory reserved once per context
 * before its first persistent ring kernel launches, from which K2K channels
 * are carved, so compute-sanitizer memcheck counts them among the
 * allocations of every ring kernel of the context (it checks a kernel
 * against the allocations that existed at its launch). Size:
 * $RK_CUDA_CHANNEL_ARENA_MB (default 8, 0: none; docs/channels.md). */
enum { RK_CUDA_ARENA_DEFAULT_MB = 8, RK_CUDA_ARENA_MAX_MB = 65536 };
typedef struct rk__cuda_arena {
    CUdeviceptr base;      /* 0 until reserved */
    size_t size;
    size_t carved;         /* bytes from base handed out so far, never given back */
    rk__cuda_pinned *free; /* freed pieces (host = NULL) */
} rk__cuda_arena;

/* The arena's size from $RK_CUDA_CHANNEL_ARENA_MB's text (NULL or empty: the
 * default), or RK_INVALID_ARGUMENT for text that is not a size in range. */
rk_status rk__cuda_arena_bytes(const char *env, size_t *out);
/* Whether ptr lies in the arena's range. */
bool rk__cuda_arena_holds(const rk__cuda_arena *a, CUdeviceptr ptr);
/* A piece of size bytes (a multiple of 4096): a freed one of at most twice
 * that, else one carved from the rest; NULL when neither is there. */
rk__cuda_pinned *rk__cuda_arena_take(rk__cuda_arena *a, size_t size);
/* A piece back for reuse. */
void rk__cuda_arena_give(rk__cuda_arena *a, rk__cuda_pinned *block);
/* Frees the bookkeeping (not the device range; pieces in use are the
 * caller's) and empties the arena. */
void rk__cuda_arena_forget(rk__cuda_arena *a);
/* The pools' lookup (cuda_memory.c): the smallest block on list of at
 * least size and at most twice it, unlinked, or NULL. Caller holds the lock. */
rk__cuda_pinned *rk__cuda_take_pooled(rk__cuda_pinned **list, size_t size);

/* Ring-kernel modules loaded in this context, by source hash. Kept until
 * the context is destroyed, for the same reason as pinned blocks. */
typedef struct rk__cuda_loaded_module {
    uint64_t key[2];
    CUmodule module;
    struct rk__cuda_loaded_module *next;
} rk__cuda_loaded_module;

typedef struct rk__cuda_context {
    struct rk_context base;
    CUdevice device;
    CUcontext cu;
    CUstream default_stream; /* non-blocking: never waits behind ring kernels */
    bool async_alloc;        /* cuMemAllocAsync: allocation that never synchronizes */
    int driver_version;
    int sm_count;
    char arch[16];           /* "sm_90" */
    pthread_mutex_t lock;    /* streams, pinned pool, ring modules */
    rk__cuda_stream *streams;
    rk__cuda_pinned *pinned_free;
    rk__cuda_pinned *pinned_used;
    rk__cuda_pinned *linked_free;   /* device blocks of rk__cuda_linked_alloc (host = NULL) */
    rk__cuda_pinned *linked_used;   /* arena pieces and fallback blocks alike */
    rk__cuda_arena arena;           /* channel memory; reserved by rk__cuda_channel_arena_reserve */
    bool arena_tried;               /* reserved, or tried and failed (not retried) */
    bool arena_overflowed;          /* a channel fell back to cuMemAlloc (logged once) */
    rk__cuda_loaded_module *ring_modules;
    int stuck_kernels;       /* ring kernels that would not stop: their memory stays */
} rk__cuda_context;

static inline rk__cuda_context *rk__cuda_ctx(rk_context *ctx) { return (rk__cuda_context *)ctx; }

/* Context slots defined in cuda_backend.c; the vtable is in cuda_device.c. */
void rk__cuda_context_destroy(rk_context *ctx);
rk_status rk__cuda_context_synchronize(rk_context *ctx);
extern const rk__context_iface rk__cuda_context_iface;

/* Makes the context current on the calling thread (CUDA contexts are per thread). */
rk_status rk__cuda_bind(rk__cuda_context *ctx);

/* The stream to use for a possibly-NULL rk_stream. */
CUstream rk__cuda_stream_of(rk__cuda_context *ctx, rk_stream *stream);

/* Pinned, device-mapped, zeroed host memory from the context's pool. */
rk_status rk__cuda_pinned_alloc(rk__cuda_context *ctx, size_t size, void **host, CUdeviceptr *device);
void rk__cuda_pinned_free(rk__cuda_context *ctx, void *host);

/* Device memory that never synchronizes the device (stream-ordered where the
 * driver allows), zeroed. Free with rk__cuda_device_free. */
rk_status rk__cuda_device_alloc(rk__cuda_context *ctx, size_t size, CUdeviceptr *out);
void rk__cuda_device_free(rk__cuda_context *ctx, CUdeviceptr ptr);

/* Device memory, zeroed, for kernels that are already running (K2K
 * channels are connected while their kernels run): plain cuMemAlloc, valid
 * in every stream at once. Stream-ordered memory would be used by those
 * kernels before its allocation in stream order (undefined; memcheck reports
 * it). cuMemFree may wait for the whole device, so freed blocks are pooled
 * and returned at context destroy. */
rk_status rk__cuda_linked_alloc(rk__cuda_context *ctx, size_t size, CUdeviceptr *out);
void rk__cuda_linked_free(rk__cuda_context *ctx, CUdeviceptr ptr);
/* Reserves the context's channel arena (once; a failure is logged and
 * channels then come from plain cuMemAlloc): called before every persistent
 * ring kernel launch, so that linked memory comes from the arena first. */
void rk__cuda_channel_arena_reserve(rk__cuda_context *ctx);
/* At context destroy, kernels paused: returns the linked blocks and the
 * arena to the driver when free_device, and frees the bookkeeping. */
void rk__cuda_linked_release_all(rk__cuda_context *ctx, bool free_device);

/* Compiles CUDA C for the context's device through the disk cache
 * ($RK_CACHE_DIR, else ~/.cache/ringkernel; key: source, options,
 * architecture, driver and NVRTC versions) and loads it. With image_out,
 * the loaded image (a cubin, or PTX) is handed over too: free it. */
rk_status rk__cuda_build_module(rk__cuda_context *ctx, const char *source, const char *name,
                                const char *const *options, size_t option_count, CUmodule *out, char **image_out,
                                size_t *image_size);

/* A kernel's parameters as a cubin records them (cuda_params.c): their
 * count, and the size of each of the first `max` in sizes[]; -1 when the
 * image cannot say (PTX, no record of the kernel, a record not understood). */
__attribute__((visibility("default"))) /* for tests/cuda/test_cuda_params.c */
int rk__cuda_cubin_params(const char *image, size_t size, const char *kernel, uint32_t *sizes, int max);

/* Looks a kernel up and loads it now (never lazily: see facts/h100.md). */
rk_status rk__cuda_get_function(CUmodule module, const char *name, CUfunction *out);

/* A module for a ring kernel, built once per context and source. */
rk_status rk__cuda_ring_module(rk__cuda_context *ctx, const char *source, const char *const *options,
                               size_t option_count, CUmodule *out);

/* 128-bit hash of several byte strings, for cache keys. */
void rk__cuda_hash(const void *const *parts, const size_t *sizes, size_t count, uint64_t out[2]);

/* The disk cache: a compiled image for a key, or RK_NOT_FOUND. */
rk_status rk__cuda_cache_load(const uint64_t key[2], char **image, size_t *size);
void rk__cuda_cache_store(const uint64_t key[2], const char *image, size_t size);

/* The context's buffer_alloc_mapped slot (cuda_mapped.c). */
rk_status rk__cuda_buffer_alloc_mapped(rk_context *ctx, size_t size, rk_buffer **out, void **host_ptr);

/* Module and launch slots (cuda_module.c). */
rk_status rk__cuda_module_compile(rk_context *ctx, const char *source, const rk_compile_options *opts,
                                  rk_module **out);
void rk__cuda_module_destroy(rk_module *module);
rk_status rk__cuda_module_get_function(rk_module *module, const char *name, rk_function **out);
rk_status rk__cuda_launch(rk_function *function, const rk_launch_desc *desc);

/* A launch's arguments as the driver takes them: checked against the
 * kernel's parameters, values copied into values[], params[] pointing at
 * them (NULL-terminated; arg_count + 1 entries). */
typedef union rk__cuda_arg_value {
    CUdeviceptr ptr;
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    uint64_t u64;
    float f32;
    double f64;
} rk__cuda_arg_value;
rk_status rk__cuda_marshal_args(const rk__cuda_function *f, const rk_arg *args, size_t arg_count,
                                rk__cuda_arg_value *values, void **params);
/* What a launch and a launch graph both do first: bind the context, marshal
 * desc's arguments into values/params, raise the shared-memory limit. */
rk_status rk__cuda_prepare_launch(rk__cuda_context *ctx, const rk__cuda_function *f, const rk_launch_desc *desc,
                                  rk__cuda_arg_value *values, void **params);

/* Launch graphs (cuda_graph.c): the context's graph_* slots. */
rk_status rk__cuda_graph_create(rk_function *function, const rk_launch_desc *desc, size_t count, rk__graph **out);
rk_status rk__cuda_graph_set_args(rk__graph *graph, size_t index, const rk_arg *args, size_t arg_count);
rk_status rk__cuda_graph_launch(rk__graph *graph, rk_stream *stream);
void rk__cuda_graph_destroy(rk__graph *graph);

/* Loading or unloading a module waits for every kernel running in the CUDA
 * context, and a resident kernel (a persistent ring kernel or simulation)
 * never finishes by itself: module loads and unloads run inside
 * rk__resident_pause / rk__resident_resume (core/resident.h), which stop
 * and relaunch them. If one does not stop within a few seconds (a handler
 * that never returns), the pause returns RK_HUNG: the caller then must not
 * load. */

/* Ring kernels on CUDA. */
extern const rk__ring_iface rk__cuda_ring_iface;

#endif
