/* The CPU backend's device layer, shared between its files (not with ring
 * kernels: those use cpu_internal.h).
 *
 *   cpu_backend.c  backend, device info, context          cpu_memory.c  buffers, copies
 *   cpu_stream.c   streams: FIFO of ops on a thread       cpu_launch.c  kernel calls (libffi)
 *   cpu_pool.c     worker threads sharing out blocks      cpu_exec.c    one block as fibers
 *   cpu_fiber.c    context switch + sanitizer notes       cpu_module.c  modules, functions
 *   cpu_compile.c  DSL C -> cached shared object (cpu_compile_internal.h)
 *   cpu_sha256.c   content hash
 *   cpu_call.c     calling a kernel with its arguments   cpu_grid.c    grid barrier (cooperative)
 */
#ifndef RK_CPU_DEVICE_H
#define RK_CPU_DEVICE_H

#include <ffi.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpu_internal.h"

/* Device limits. Shared memory matches CUDA's default so portable kernels
 * that fit on a GPU fit here too. */
enum {
    RK_CPU_MAX_THREADS_PER_BLOCK = 1024,
    RK_CPU_WARP_SIZE = 32,
    RK_CPU_MAX_SHARED_MEMORY = 48 * 1024,
    RK_CPU_ERROR_TEXT = 512,
};

/* ---- fibers (cpu_fiber.c) ------------------------------------------------- */

/* Our own context switch where we have one; ucontext elsewhere (or when
 * RK_CPU_FIBER_UCONTEXT is defined, to test that path). */
#if !defined(RK_CPU_FIBER_UCONTEXT) && !defined(__x86_64__) && !defined(__aarch64__)
#define RK_CPU_FIBER_UCONTEXT 1
#endif
#ifdef RK_CPU_FIBER_UCONTEXT
#include <ucontext.h>
#endif

/* One execution context: a worker's own stack, or a fiber on its own stack. */
typedef struct rk__cpu_fiber_ctx {
#ifdef RK_CPU_FIBER_UCONTEXT
    ucontext_t uc;
    void (*entry)(void *);
    void *entry_arg;
#else
    void *sp;                  /* saved stack pointer */
#endif
    unsigned char *mapping;    /* fiber stack mapping, guard page included; NULL for a thread */
    size_t mapping_size;
    const void *stack_bottom;  /* lowest usable address, for ASan */
    size_t stack_size;
    void *asan_fake_stack;
    void *tsan_fiber;
    struct rk__cpu_fiber_ctx *switched_from; /* who last switched here */
} rk__cpu_fiber_ctx;

/* The calling thread's own context (no stack of its own to manage). */
void rk__cpu_fiber_thread_init(rk__cpu_fiber_ctx *self);
/* A new fiber that will run fn(arg) on first switch. fn must never return. */
rk_status rk__cpu_fiber_create(rk__cpu_fiber_ctx *fiber, size_t stack_size, void (*fn)(void *), void *arg);
/* Frees the stack. The fiber must not be running. */
void rk__cpu_fiber_destroy(rk__cpu_fiber_ctx *fiber);
/* Saves the current context into from and runs to; returns when something
 * switches back to from. leaving_forever (from will never run again) lets
 * ASan drop from's fake stack. */
void rk__cpu_fiber_switch(rk__cpu_fiber_ctx *from, rk__cpu_fiber_ctx *to, bool leaving_forever);
/* On the thread's own stack again after a fiber of it was unwound by a
 * cancellation (no switch happened): brings the sanitizers' view along.
 * live_frame: an address in the deepest frame the unwinding kept. */
void rk__cpu_fiber_abandoned(rk__cpu_fiber_ctx *thread, const void *live_frame);
/* First thing a fiber's fn calls, with its own context: completes the switch that started it. */
void rk__cpu_fiber_started(rk__cpu_fiber_ctx *self);
/* "x86_64 assembly", "aarch64 assembly" or "ucontext". */
const char *rk__cpu_fiber_kind(void);

/* ---- a kernel call: what every thread of a launch runs (cpu_launch.c) --------- */

typedef union rk__cpu_arg_slot {
    void *ptr;
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    uint64_t u64;
    float f32;
    double f64;
} rk__cpu_arg_slot;

/* ---- the grid barrier of a cooperative launch (cpu_grid.c) --------------------- */

typedef struct rk__cpu_grid_barrier rk__cpu_grid_barrier;

/* A barrier for blocks blocks; waiters poll for spin_ns before sleeping. */
rk_status rk__cpu_grid_barrier_create(uint64_t blocks, uint64_t spin_ns, rk__cpu_grid_barrier **out);
void rk__cpu_grid_barrier_destroy(rk__cpu_grid_barrier *g);
/* One call per block per grid_sync(); returns when every block still running has called. */
void rk__cpu_grid_barrier_wait(rk__cpu_grid_barrier *g);
/* A block returned: the others no longer wait for it. */
void rk__cpu_grid_barrier_leave(rk__cpu_grid_barrier *g);
/* The launch failed: every wait, now and later, returns at once. */
void rk__cpu_grid_barrier_break(rk__cpu_grid_barrier *g);

typedef struct rk__cpu_call {
    void (*fn)(void);
    const char *name;
    rk_dim3 grid, block;
    size_t shared_memory;
    ffi_cif cif;
    size_t arg_count;
    ffi_type **types;
    void **values;            /* values[i] points at slots[i] */
    rk__cpu_arg_slot *slots;
    bool direct;              /* every argument fits a register: int_regs/fp_regs hold them */
    uint64_t int_regs[8], fp_regs[8];
    rk__cpu_grid_barrier *grid_barrier; /* cooperative launches only; freed with the call */
} rk__cpu_call;

/* Builds a call for function with desc's dimensions and arguments. */
rk_status rk__cpu_call_create(void (*fn)(void), const char *name, const rk_launch_desc *desc, rk__cpu_call **out);
void rk__cpu_call_destroy(rk__cpu_call *call);
/* cpu_call.c: lays the registers out once when every argument travels in one. */
void rk__cpu_call_prepare_direct(rk__cpu_call *call);
/* Runs the kernel once for the calling (fiber) thread. */
void rk__cpu_call_invoke(const rk__cpu_call *call);

/* ---- executing blocks (cpu_exec.c) ------------------------------------------ */

/* What one OS thread needs to run blocks: its fibers and dynamic shared memory. */
typedef struct rk__cpu_executor rk__cpu_executor;

rk_status rk__cpu_executor_create(rk__cpu_executor **out);
/* Must be called on the thread that ran the executor's blocks. */
void rk__cpu_executor_destroy(rk__cpu_executor *ex);
/* The same, from a cancellation cleanup on that thread: the block that was
 * running is abandoned with its fibers. live_frame: an address in the
 * deepest frame the unwinding kept (see rk__cpu_fiber_abandoned). */
void rk__cpu_executor_destroy_cancelled(rk__cpu_executor *ex, const void *live_frame);
/* Runs every thread of one block. On a fault (divergent barrier) returns
 * RK_DEVICE_FAULT with a message in error (RK_CPU_ERROR_TEXT bytes). */
rk_status rk__cpu_run_block(rk__cpu_executor *ex, const rk__cpu_call *call, uint64_t block_linear, char *error);

/* The table kernels call through rk__dsl_runtime (type from dsl.h). */
struct rk_dsl_runtime;
extern const struct rk_dsl_runtime rk__cpu_dsl_runtime_table;

/* ---- the worker pool (cpu_pool.c) ---------------------------------------------- */

typedef struct rk__cpu_pool rk__cpu_pool;

/* workers OS threads (may be 0: the caller then runs every block). */
rk_status rk__cpu_pool_create(unsigned workers, rk__cpu_pool **out);
void rk__cpu_pool_destroy(rk__cpu_pool *pool);
/* Runs the whole grid; the calling thread works too, with its executor. A
 * cooperative grid (call->grid_barrier set) first waits until enough workers
 * are free of other cooperative grids to run every block at once. */
rk_status rk__cpu_pool_run_grid(rk__cpu_pool *pool, rk__cpu_executor *caller, const rk__cpu_call *call,
                                char *error);

/* ---- context and streams (cpu_backend.c, cpu_stream.c) ------------------------- */

typedef struct rk__cpu_stream rk__cpu_stream;

typedef struct rk__cpu_context {
    struct rk_context base;
    unsigned threads;          /* executors working on one grid: pool workers + stream thread */
    uint64_t spin_ns;          /* polling before sleeping (RK_CPU_SPIN_US) */
    pthread_mutex_t lock;      /* the streams list */
    rk__cpu_stream *streams;   /* every stream, the default one included */
    rk__cpu_stream *default_stream;
    pthread_mutex_t pool_lock; /* pool creation */
    rk__cpu_pool *pool;        /* started by the first launch, before it is queued */
} rk__cpu_context;

static inline rk__cpu_context *rk__cpu_ctx(rk_context *ctx) { return (rk__cpu_context *)ctx; }

/* Starts the pool on first use so contexts that never launch cost no threads. */
rk_status rk__cpu_context_start_pool(rk__cpu_context *c);

rk_status rk__cpu_context_streams_init(rk__cpu_context *c);       /* the default stream */
rk_status rk__cpu_context_streams_synchronize(rk__cpu_context *c);
void rk__cpu_context_streams_destroy(rk__cpu_context *c);         /* every stream left */

rk_status rk__cpu_stream_create(rk_context *ctx, rk_stream **out);
rk_status rk__cpu_stream_synchronize(rk_stream *stream);
void rk__cpu_stream_destroy(rk_stream *stream);
/* Stream ops. stream may be NULL (the context's default stream). A copy runs
 * at once on the caller's thread when its stream is idle; otherwise it queues.
 * A launch always queues; the stream takes ownership of call. */
rk_status rk__cpu_stream_copy(rk_context *ctx, rk_stream *stream, void *dst, const void *src, size_t size);
rk_status rk__cpu_stream_launch(rk_context *ctx, rk_stream *stream, rk__cpu_call *call);

/* ---- memory, modules, compiling (cpu_memory.c, cpu_module.c, cpu_compile.c) ----- */

rk_status rk__cpu_buffer_alloc(rk_context *ctx, size_t size, rk_buffer **out);
void rk__cpu_buffer_free(rk_buffer *buffer);
/* Host memory already is what the device reads: an ordinary buffer. */
rk_status rk__cpu_buffer_alloc_mapped(rk_context *ctx, size_t size, rk_buffer **out, void **host_ptr);
rk_status rk__cpu_copy_to_device(rk_context *ctx, rk_buffer *dst, size_t dst_offset, const void *src, size_t size,
                                 rk_stream *stream);
rk_status rk__cpu_copy_to_host(rk_context *ctx, void *dst, const rk_buffer *src, size_t src_offset, size_t size,
                               rk_stream *stream);
rk_status rk__cpu_copy_device_to_device(rk_context *ctx, rk_buffer *dst, size_t dst_offset, const rk_buffer *src,
                                        size_t src_offset, size_t size, rk_stream *stream);

/* A kernel (or any exported function) of a module; owned by the module. */
typedef struct rk__cpu_function {
    struct rk_function base;   /* base.name points at name below */
    void (*fn)(void);
    struct rk__cpu_function *next;
    char name[];
} rk__cpu_function;

rk_status rk__cpu_module_compile(rk_context *ctx, const char *source, const rk_compile_options *opts,
                                 rk_module **out);
rk_status rk__cpu_module_from_host_kernels(rk_context *ctx, const rk_host_kernel *kernels, size_t count,
                                           rk_module **out);
void rk__cpu_module_destroy(rk_module *module);
rk_status rk__cpu_module_get_function(rk_module *module, const char *name, rk_function **out);
rk_status rk__cpu_launch(rk_function *function, const rk_launch_desc *desc);

/* SHA-256 of a sequence of pieces. */
typedef struct rk__sha256 {
    uint32_t state[8];
    uint64_t length;
    unsigned char block[64];
    size_t used;
} rk__sha256;
void rk__sha256_init(rk__sha256 *h);
void rk__sha256_update(rk__sha256 *h, const void *data, size_t size);
/* 64 lowercase hex digits and a NUL. */
void rk__sha256_hex(rk__sha256 *h, char out[65]);

#endif
