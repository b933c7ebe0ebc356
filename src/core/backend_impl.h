/* What a backend implements. Internal: only src/ includes this.
 *
 * Objects follow ggml's {iface, parent, impl} shape by embedding: a backend's
 * own struct starts with the public base struct (struct rk_context, ...), and
 * the base's iface points at the backend's vtable. The core (src/core/device.c)
 * validates every argument before calling a slot, so slots may assume non-NULL
 * handles, in-range offsets and launch dimensions within the device's limits.
 * Optional slots may be NULL: the core then returns RK_UNSUPPORTED.
 */
#ifndef RK_BACKEND_IMPL_H
#define RK_BACKEND_IMPL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ringkernel/device.h"
#include "ringkernel/ringkernel.h"

typedef struct rk__context_iface rk__context_iface;
typedef struct rk__ring_iface rk__ring_iface;
struct rk_channel; /* ringkernel/channel.h */

/* ---- backend ------------------------------------------------------------- */

typedef struct rk__backend_iface {
    /* Loads libraries and counts devices. Called once (the registry caches the
     * answer). On failure write why into reason (one line) and return
     * RK_BACKEND_UNAVAILABLE. */
    rk_status (*probe)(uint32_t *device_count, char *reason, size_t reason_size);
    rk_status (*device_info)(uint32_t device, rk_device_info *out);
    rk_status (*context_create)(const rk_backend *backend, uint32_t device, rk_context **out);
} rk__backend_iface;

struct rk_backend {
    const char *name;
    const rk__backend_iface *iface;
};

/* ---- device objects ------------------------------------------------------ */

struct rk_context {
    const rk__context_iface *iface;
    const rk_backend *backend;
    uint32_t device;
    rk_device_info info; /* filled by the core after context_create */
};

struct rk_buffer {
    rk_context *ctx;
    size_t size;
    /* Frees a buffer that iface->buffer_free cannot (host-mapped memory);
     * NULL for ordinary buffers. Set by the backend's slot that made it. */
    void (*release)(rk_buffer *buffer);
};

struct rk_stream {
    rk_context *ctx;
};

struct rk_module {
    rk_context *ctx;
};

struct rk_function {
    rk_module *module;
    const char *name;
};

/* A launch graph: `count` launches of one function, each after the one
 * before, recorded once and replayed on a stream as many times as wanted
 * (each replay runs them in order, as rk_launch of each would). Between
 * replays a launch's arguments may be replaced: a replay already sent
 * keeps the ones it was sent with. */
typedef struct rk__graph {
    rk_context *ctx;
    size_t count;
} rk__graph;

struct rk__context_iface {
    void (*destroy)(rk_context *ctx);
    rk_status (*synchronize)(rk_context *ctx);

    rk_status (*buffer_alloc)(rk_context *ctx, size_t size, rk_buffer **out);
    void (*buffer_free)(rk_buffer *buffer);
    rk_status (*copy_to_device)(rk_context *ctx, rk_buffer *dst, size_t dst_offset, const void *src,
                                size_t size, rk_stream *stream);
    rk_status (*copy_to_host)(rk_context *ctx, void *dst, const rk_buffer *src, size_t src_offset,
                              size_t size, rk_stream *stream);
    rk_status (*copy_device_to_device)(rk_context *ctx, rk_buffer *dst, size_t dst_offset,
                                       const rk_buffer *src, size_t src_offset, size_t size,
                                       rk_stream *stream);

    rk_status (*stream_create)(rk_context *ctx, rk_stream **out);
    rk_status (*stream_synchronize)(rk_stream *stream);
    void (*stream_destroy)(rk_stream *stream);

    rk_status (*module_compile)(rk_context *ctx, const char *source, const rk_compile_options *opts,
                                rk_module **out);
    rk_status (*module_from_host_kernels)(rk_context *ctx, const rk_host_kernel *kernels,
                                          size_t count, rk_module **out); /* optional */
    void (*module_destroy)(rk_module *module);
    rk_status (*module_get_function)(rk_module *module, const char *name, rk_function **out);

    rk_status (*launch)(rk_function *function, const rk_launch_desc *desc);

    /* Host-mapped memory (rk_buffer_alloc_mapped); optional. Sets *host_ptr,
     * and (*out)->release when buffer_free cannot free it. */
    rk_status (*buffer_alloc_mapped)(rk_context *ctx, size_t size, rk_buffer **out, void **host_ptr);

    /* Ring kernels on this backend; NULL = none. */
    const rk__ring_iface *ring;

    /* Launch graphs (rk__graph); optional, all four or none. desc gives the
     * shape and every launch's first arguments (not cooperative; its stream
     * is ignored). set_args takes the same number of arguments, of the same
     * sizes. */
    rk_status (*graph_create)(rk_function *function, const rk_launch_desc *desc, size_t count, rk__graph **out);
    rk_status (*graph_set_args)(rk__graph *graph, size_t index, const rk_arg *args, size_t arg_count);
    rk_status (*graph_launch)(rk__graph *graph, rk_stream *stream);
    void (*graph_destroy)(rk__graph *graph);
};

/* ---- ring kernels (actor layer) -------------------------------------------
 *
 * The core (src/core/kernel.c) owns validation, the lifecycle state machine,
 * request ids, waiting with timeouts and host-side statistics. A backend moves
 * messages and runs the handler. Each queued message carries its id; each
 * reply carries the request's id and the handler's status.
 */

typedef struct rk__control {
    bool is_active, should_terminate, has_terminated;
    uint64_t messages_processed;
    uint64_t errors_encountered;
    uint64_t launches;
    uint32_t input_depth, output_depth;
    rk_status failure; /* RK_OK, or why the kernel can no longer run */
    /* One line saying what failed ("handler crashed with SIGSEGV ..."). The
     * core zeroes the struct before poll, so a backend may leave it empty
     * and the status's generic message is used. */
    char failure_reason[192];
} rk__control;

struct rk_kernel {
    rk_runtime *runtime;
    rk_context *ctx;
    const rk__ring_iface *ring;
    void *impl;                 /* the backend's per-kernel state */
    rk_kernel_desc desc;        /* strings below are owned copies */
    char *name, *handler_source, *handler_name, *handler_file;
    rk_exec_mode mode;          /* resolved: never RK_MODE_DEFAULT */
    _Atomic int state;          /* rk_kernel_state */
    uint64_t next_id;           /* sender side only */
    _Atomic uint64_t messages_sent;
    _Atomic uint64_t replies_received;
    /* Replies taken off the device while terminating, held for receive. */
    unsigned char *held_replies;
    rk_reply_info *held_infos;
    size_t held_count, held_first, held_capacity;
};

/* The name a DSL handler's source goes by in compiler messages (a #line
 * directive before it): desc.handler_file, or "handler_source". */
const char *rk__handler_source_name(const rk_kernel_desc *d);

struct rk__ring_iface {
    /* Resolves RK_MODE_DEFAULT and refuses modes the backend lacks. */
    rk_status (*resolve_mode)(rk_context *ctx, rk_exec_mode requested, rk_exec_mode *out);
    /* Builds the handler, allocates queues and launches the kernel inactive.
     * Sets k->impl. On failure everything it made is freed. */
    rk_status (*start)(rk_kernel *k);
    /* Non-blocking. Queues up to count messages (each desc.message_size bytes,
     * stride apart; ids first_id, first_id+1, ...). *accepted may be 0. */
    rk_status (*try_send)(rk_kernel *k, const void *messages, size_t stride, size_t count,
                          uint64_t first_id, size_t *accepted);
    /* Non-blocking. Takes up to max replies (desc.reply_size bytes each). */
    rk_status (*try_receive)(rk_kernel *k, void *replies, size_t stride, rk_reply_info *infos,
                             size_t max, size_t *received);
    rk_status (*set_active)(rk_kernel *k, bool active);
    /* Sets should_terminate. Called once, after set_active(k, true) and once
     * no try_send is in flight (the core refuses new sends first): the kernel
     * processes every queued message, then sets has_terminated. While it
     * drains, the core keeps taking replies with try_receive. */
    rk_status (*request_terminate)(rk_kernel *k);
    /* Reads the control block (and, for relaunch backends, makes progress).
     * The core serializes poll calls; one may run beside try_send (sender
     * thread) or try_receive (receiver thread). */
    rk_status (*poll)(rk_kernel *k, rk__control *out);
    /* Optional: blocks until the kernel may have moved (a launch ended) or
     * until deadline_ns (rk__now_ns's clock), whichever comes first. False,
     * at once, when there is nothing to wait for: the core backs off. */
    bool (*wait)(rk_kernel *k, uint64_t deadline_ns);
    /* Frees everything; the kernel has terminated or failed, or is stopped
     * forcibly. RK_OK, or RK_HUNG (with rk__fail's text) when a handler had
     * to be stopped without returning, or could not be stopped at all. */
    rk_status (*destroy)(rk_kernel *k);
    /* K2K (include/ringkernel/channel.h): links channel ch from src's port
     * to dst, both of this backend; the core has validated sizes, states,
     * ports and cycles. Optional: NULL = RK_UNSUPPORTED. */
    rk_status (*channel_attach)(rk_kernel *src, rk_kernel *dst, struct rk_channel *ch);
    /* K2K: answer host messages only when they fail (true) or always. Optional. */
    rk_status (*set_host_replies)(rk_kernel *k, bool failures_only);
    /* K2K through the host relay (src/core/channel_relay.c), for channels
     * whose other end is on another backend, runtime or process. Optional.
     * attach_source: src's emits on ch->port land in ch->ring (host memory),
     * in order, with rk__channel_emit's closed/emitting handshake; the
     * relay consumes the ring and has set ch->wake. attach_sink: dst polls
     * ch->ring (host memory) as an input and sets ch->wake; the relay is
     * the producer. Without attach_sink the relay feeds dst's host input
     * queue instead. A backend whose rings live in device memory copies
     * between them and ch->ring here (e.g. between relaunches). */
    rk_status (*channel_attach_source)(rk_kernel *src, struct rk_channel *ch);
    rk_status (*channel_attach_sink)(rk_kernel *dst, struct rk_channel *ch);
};

/* ---- helpers shared by backends -------------------------------------------- */

/* Records details for rk_last_error() and returns status, so a backend can
 * write `return rk__fail(RK_IO_ERROR, "dlopen %s: %s", path, dlerror());`. */
rk_status rk__fail(rk_status status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends more text (e.g. a compiler log) to the current error details. */
void rk__fail_append(const char *text);
void rk__clear_error(void);
void rk__log(rk_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Monotonic clock in nanoseconds. */
uint64_t rk__now_ns(void);
/* A ring kernel's watchdog limit: milliseconds from the environment
 * variable env (a positive integer), else 10000; in nanoseconds. */
uint64_t rk__watchdog_ns(const char *env);

/* Registered backends, defined by each backend's source. */
extern const rk_backend rk__cpu_backend;
#ifdef RK_HAVE_CUDA
extern const rk_backend rk__cuda_backend;
#endif
#ifdef RK_HAVE_METAL
extern const rk_backend rk__metal_backend;
#endif
#ifdef RK_HAVE_WEBGPU
extern const rk_backend rk__webgpu_backend;
#endif

#endif
