/* The device layer: the spec's backend → context → module → function chain,
 * plus streams, as plain C objects. Every backend (CPU, CUDA, WebGPU, Metal)
 * implements it; the actor layer (ringkernel.h) is built on top.
 *
 * Asynchronous operations (copies, launches) are ordered on a stream and
 * complete at rk_stream_synchronize / rk_context_synchronize. A NULL stream
 * means the context's default stream. Host memory passed to an asynchronous
 * copy must stay valid until the stream is synchronized.
 */
#ifndef RINGKERNEL_DEVICE_H
#define RINGKERNEL_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rk_backend rk_backend;   /* a registered backend; static, never freed */
typedef struct rk_context rk_context;   /* one device opened for use */
typedef struct rk_buffer rk_buffer;     /* device memory */
typedef struct rk_module rk_module;     /* compiled kernel source */
typedef struct rk_function rk_function; /* one kernel in a module; owned by it */
typedef struct rk_stream rk_stream;     /* an ordered queue of device work */

typedef struct rk_dim3 {
    uint32_t x, y, z;
} rk_dim3;

#define RK_DIM3(x_, y_, z_) ((rk_dim3){(x_), (y_), (z_)})

typedef struct rk_device_info {
    char name[256];      /* "NVIDIA H100 80GB HBM3", "AMD EPYC 7B13" */
    char vendor[64];
    char backend[16];    /* "cpu", "cuda", "webgpu", "metal" */
    char driver[64];     /* driver / runtime version text */
    char architecture[32]; /* "sm_90", "x86_64", "vulkan" */
    int compute_major, compute_minor; /* CUDA compute capability; 0 elsewhere */
    uint64_t total_memory;            /* bytes */
    uint32_t multiprocessors;         /* SMs, or CPU cores */
    uint32_t warp_size;               /* 32 on NVIDIA; 32 emulated lanes on the CPU */
    uint32_t max_threads_per_block;
    uint32_t max_block_dim[3];
    uint32_t max_grid_dim[3];
    uint32_t max_shared_memory_per_block; /* bytes */
    bool cooperative_launch;  /* grid-wide sync supported */
    bool persistent_kernels;  /* a kernel may run indefinitely and see host writes */
    bool host_mapped_memory;  /* the device can read pinned host memory */
    bool software;            /* emulated on the CPU (e.g. Vulkan on lavapipe): automatic
                                 selection prefers the native CPU backend to it */
} rk_device_info;

/* ---- registry ------------------------------------------------------------ */

/* Backends in the spec's automatic-selection order: cuda, metal, webgpu, cpu.
 * Backends not built into this library are absent. */
size_t rk_backend_count(void);
const rk_backend *rk_backend_at(size_t index);
const char *rk_backend_name(const rk_backend *backend);

/* Exact name lookup ("cpu", "cuda", ...). RK_UNKNOWN_BACKEND for other names. */
rk_status rk_backend_find(const char *name, const rk_backend **out);

/* Loads the backend's libraries on first use. RK_BACKEND_UNAVAILABLE (with
 * the reason in rk_last_error and rk_backend_unavailable_reason) if it cannot
 * run here; otherwise *count may still be 0. */
rk_status rk_backend_device_count(const rk_backend *backend, uint32_t *count);

/* Why the backend cannot run here (library not found, no device, ...), or ""
 * when it is available. Triggers the same probe as rk_backend_device_count. */
const char *rk_backend_unavailable_reason(const rk_backend *backend);

rk_status rk_backend_device_info(const rk_backend *backend, uint32_t device, rk_device_info *out);

/* Chooses a device. spec is "cpu", "cuda", "cuda:1", "webgpu:0", "auto" or
 * NULL. NULL and "auto" honour the RK_BACKEND environment variable and
 * otherwise take the first backend in spec order (CUDA, Metal, WebGPU, CPU)
 * whose device 0 is real hardware; a software device (WebGPU on lavapipe)
 * is used only when named, since the CPU backend runs the same work natively. A named
 * backend that cannot run gives RK_BACKEND_UNAVAILABLE with its reason. */
rk_status rk_select_device(const char *spec, const rk_backend **backend, uint32_t *device);

/* ---- context ------------------------------------------------------------- */

rk_status rk_context_create(const rk_backend *backend, uint32_t device, rk_context **out);
rk_status rk_context_destroy(rk_context *ctx);
const rk_backend *rk_context_backend(const rk_context *ctx);
rk_status rk_context_device_info(const rk_context *ctx, rk_device_info *out);
/* Waits for all work on all streams of the context. */
rk_status rk_context_synchronize(rk_context *ctx);

/* ---- memory -------------------------------------------------------------- */

/* Contents are zero-initialised. size 0 is RK_INVALID_ARGUMENT. */
rk_status rk_buffer_alloc(rk_context *ctx, size_t size, rk_buffer **out);
rk_status rk_buffer_free(rk_buffer *buffer);
size_t rk_buffer_size(const rk_buffer *buffer);

/* Host-mapped memory: the host reads and writes it through *host_ptr while
 * kernels run, and kernels take the buffer like any other (command words and
 * replies of a persistent kernel). Zero-initialised; *host_ptr stays valid
 * until rk_buffer_free. Give every word one writer, host or device: on an
 * H100 GPU atomics on host memory are not atomic with respect to the CPU.
 * Kernels use load_acquire_* / store_release_* (dsl.h), the host C11 atomics.
 * Copies to and from the buffer work too. RK_UNSUPPORTED on backends that
 * cannot map host memory (see rk_device_info.host_mapped_memory), for every
 * call, before the size is looked at. */
rk_status rk_buffer_alloc_mapped(rk_context *ctx, size_t size, rk_buffer **out, void **host_ptr);

rk_status rk_copy_to_device(rk_context *ctx, rk_buffer *dst, size_t dst_offset,
                            const void *src, size_t size, rk_stream *stream);
rk_status rk_copy_to_host(rk_context *ctx, void *dst, const rk_buffer *src,
                          size_t src_offset, size_t size, rk_stream *stream);
rk_status rk_copy_device_to_device(rk_context *ctx, rk_buffer *dst, size_t dst_offset,
                                   const rk_buffer *src, size_t src_offset, size_t size,
                                   rk_stream *stream);

/* ---- streams ------------------------------------------------------------- */

rk_status rk_stream_create(rk_context *ctx, rk_stream **out);
rk_status rk_stream_synchronize(rk_stream *stream);
/* Work already queued on the stream still runs (it need not have finished
 * when this returns): rk_context_synchronize waits for it. */
rk_status rk_stream_destroy(rk_stream *stream);

/* ---- compile ------------------------------------------------------------- */

typedef struct rk_compile_options {
    const char *const *include_dirs; /* extra -I paths */
    size_t include_dir_count;
    const char *const *defines;      /* "NAME" or "NAME=VALUE" */
    size_t define_count;
    int optimization_level;          /* 0 = default (O2/O3 per backend) */
    bool debug_info;
} rk_compile_options;

/* Compiles source in the backend's kernel language (DSL C on the CPU, CUDA C on
 * CUDA, WGSL on WebGPU). opts may be NULL. On RK_COMPILE_FAILED the compiler's
 * log is in rk_last_error(). */
rk_status rk_module_compile(rk_context *ctx, const char *source, const rk_compile_options *opts,
                            rk_module **out);
rk_status rk_module_destroy(rk_module *module);
/* The function stays owned by the module. */
rk_status rk_module_get_function(rk_module *module, const char *name, rk_function **out);

/* ---- launch -------------------------------------------------------------- */

typedef enum rk_arg_kind {
    RK_ARG_BUFFER = 1, /* an rk_buffer: a pointer in the kernel */
    RK_ARG_I32,
    RK_ARG_U32,
    RK_ARG_I64,
    RK_ARG_U64,
    RK_ARG_F32,
    RK_ARG_F64,
    RK_ARG_STRUCT, /* a struct passed by value: value.structure */
} rk_arg_kind;

/* A struct argument: the host's bytes of the struct, and its members as
 * letters in order so that every backend can lay it out and pass it as the
 * host's C compiler would: 'i' int32_t, 'u' uint32_t, 'l' int64_t, 'L'
 * uint64_t, 'f' float, 'd' double (an array member repeats its letter;
 * padding follows from C's natural alignment). The fields must account for
 * size exactly. Members that are pointers cannot be passed (a device pointer
 * means something else on every backend): pass the buffer as an argument of
 * its own. Nested structs: flatten them into their own fields only when that
 * does not change the layout (the size check catches it when it does).
 * On WebGPU the struct is bound as a var<storage, read> at the binding of the
 * next buffer argument (docs/webgpu.md); the bytes are copied at rk_launch. */
typedef struct rk_arg_struct {
    const void *data;
    size_t size;        /* sizeof the struct */
    const char *fields; /* "ffi" for struct { float x, y; int n; } */
} rk_arg_struct;

typedef struct rk_arg {
    rk_arg_kind kind;
    union {
        rk_buffer *buffer;
        int32_t i32;
        uint32_t u32;
        int64_t i64;
        uint64_t u64;
        float f32;
        double f64;
        rk_arg_struct structure;
    } value;
} rk_arg;

#define RK_ARG_BUF(b) ((rk_arg){.kind = RK_ARG_BUFFER, .value.buffer = (b)})
#define RK_ARG_INT(v) ((rk_arg){.kind = RK_ARG_I32, .value.i32 = (v)})
#define RK_ARG_UINT(v) ((rk_arg){.kind = RK_ARG_U32, .value.u32 = (v)})
#define RK_ARG_LONG(v) ((rk_arg){.kind = RK_ARG_I64, .value.i64 = (v)})
#define RK_ARG_ULONG(v) ((rk_arg){.kind = RK_ARG_U64, .value.u64 = (v)})
#define RK_ARG_FLOAT(v) ((rk_arg){.kind = RK_ARG_F32, .value.f32 = (v)})
#define RK_ARG_DOUBLE(v) ((rk_arg){.kind = RK_ARG_F64, .value.f64 = (v)})
/* A struct by value from a pointer to it: RK_ARG_STRUCT_OF(&params, "ffi"). */
#define RK_ARG_STRUCT_OF(ptr, fields_)                                                                             \
    ((rk_arg){.kind = RK_ARG_STRUCT, .value.structure = {.data = (ptr), .size = sizeof *(ptr), .fields = (fields_)}})

typedef struct rk_launch_desc {
    rk_dim3 grid;            /* every component >= 1 */
    rk_dim3 block;           /* every component >= 1, product <= max_threads_per_block */
    size_t shared_memory;    /* dynamic shared memory per block, bytes */
    rk_stream *stream;       /* NULL = default stream */
    const rk_arg *args;
    size_t arg_count;
    bool cooperative;        /* grid-wide sync (grid_sync() in dsl.h); refused if the grid
                              * cannot be co-resident (on the CPU: more blocks than worker threads) */
} rk_launch_desc;

/* Enqueues the kernel on the stream. Grid/block problems give
 * RK_BAD_LAUNCH_CONFIG before anything is launched: a zero or over-the-limit
 * dimension (rk_device_info), more threads than max_threads_per_block, more
 * shared memory than max_shared_memory_per_block. A cooperative launch
 * where rk_device_info.cooperative_launch is false is RK_UNSUPPORTED.
 * Backend differences (checked by tests/conformance):
 * - WebGPU: a transpiled kernel's @workgroup_size is made of override
 *   constants, so it runs with the block the launch asks for (a pipeline per
 *   block, kept); a WGSL dimension written as a literal fixes that part, and
 *   another block there is RK_BAD_LAUNCH_CONFIG, as is dynamic shared memory. */
rk_status rk_launch(rk_function *function, const rk_launch_desc *desc);

/* ---- host-compiled kernels (CPU backend) ------------------------------------ */

/* A kernel written against dsl.h and compiled into the host program. It is
 * called with the launch's arguments in order (buffers as pointers). */
typedef struct rk_host_kernel {
    const char *name;
    void (*fn)(void);
} rk_host_kernel;

/* Wraps host functions as a module. RK_UNSUPPORTED on backends other than the CPU. */
rk_status rk_module_from_host_kernels(rk_context *ctx, const rk_host_kernel *kernels, size_t count,
                                      rk_module **out);

#ifdef __cplusplus
}
#endif
#endif
