/* ringkernel: GPU-native persistent actors.
 *
 * A ring kernel is launched once and then takes messages from the host
 * through a lock-free input queue, runs a user handler on each, and puts the
 * replies on an output queue. The same API runs on every backend: persistent
 * where the backend has persistent kernels (CPU, CUDA), event-driven relaunch
 * where it does not (WebGPU, Metal), and launch-per-command ("traditional")
 * on request.
 *
 * Threading: one thread at a time may send to a kernel and one thread at a
 * time may receive from it (the queues are single-producer/single-consumer);
 * they may be different threads. Lifecycle calls may come from either.
 * Any number of threads may use rk_kernel_call / rk_kernel_submit on one
 * kernel; see "Many clients" and "Ordering" at the end of this header.
 *
 * Promises (docs/guarantees.md says how each is tested):
 * - Timeouts: every call that takes timeout_ns returns within it (plus
 *   scheduling noise), in every mode. Handlers run on the backend's threads,
 *   never on the caller's: RK_NO_WAIT neither runs nor waits for one.
 * - Hangs: a handler that makes no progress for the watchdog limit fails its
 *   kernel with RK_HUNG (state FAILED). The limit is milliseconds in
 *   $RK_CPU_WATCHDOG_MS on the CPU backend and $RK_CUDA_WATCHDOG_MS on CUDA
 *   (default 10000 on both). It is checked whenever a call polls the kernel
 *   (send, receive, terminate, stats), so a failure is seen within the limit
 *   by a caller that waits. On the CPU backend the thread running the stuck
 *   handler is then cancelled asynchronously: the handler is abandoned where
 *   it is and none of its code runs again. Handlers must therefore be plain
 *   computation, as on a GPU: a lock it holds or an allocation it is inside
 *   stays as it was. A hung CUDA kernel cannot be stopped: it keeps
 *   running, and rk_kernel_destroy says RK_HUNG although the kernel was
 *   FAILED already. WebGPU has no watchdog (a dispatch cannot be watched
 *   or stopped): terminate times out (RK_TIMEOUT, state TERMINATING) and
 *   rk_kernel_destroy abandons the dispatch with RK_HUNG.
 * - Faults: a handler that crashes (a NULL write) fails its kernel with
 *   RK_DEVICE_FAULT on the CPU (outside sanitizer builds) and CUDA. WebGPU
 *   handlers cannot fault: WGSL has no pointers to arbitrary memory, so
 *   such a handler is refused at launch (RK_COMPILE_FAILED).
 * - Nothing accepted is lost: on the CPU backend every message send
 *   accepted gets exactly one reply. Replies are published as each finishes
 *   (persistent mode) or as each launch ends (traditional), so one stuck or
 *   crashing request does not hold back the replies finished before it.
 *   When a kernel fails, the requests that will never run are answered with
 *   a reply whose rk_reply_info.status is the failure (RK_HUNG,
 *   RK_DEVICE_FAULT) and whose payload is zero; once all are received,
 *   receive returns the failure. GPU backends, which cannot take requests
 *   back from a failed device, return the failure from receive once the
 *   replies the device published are taken.
 * - Destroy order: kernels first, then their runtime (rk_runtime_destroy
 *   refuses otherwise).
 */
#ifndef RINGKERNEL_RINGKERNEL_H
#define RINGKERNEL_RINGKERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RK_VERSION_MAJOR 0
#define RK_VERSION_MINOR 1
#define RK_VERSION_PATCH 0
const char *rk_version(void);

/* Timeouts are in nanoseconds. */
#define RK_NO_WAIT ((uint64_t)0)
#define RK_WAIT_FOREVER UINT64_MAX

/* ---- runtime: a chosen backend and an open context ---------------------- */

typedef struct rk_runtime rk_runtime;

typedef struct rk_runtime_desc {
    const char *backend; /* "auto" or NULL (honours RK_BACKEND), "cpu", "cuda:0", ... */
} rk_runtime_desc;

/* desc may be NULL: automatic selection. */
rk_status rk_runtime_create(const rk_runtime_desc *desc, rk_runtime **out);
/* Closes the context. Kernels launched on rt use it until they are
 * destroyed, so while any is alive this refuses with RK_BAD_STATE (the
 * message says how many) and changes nothing: rk_kernel_destroy them first. */
rk_status rk_runtime_destroy(rk_runtime *rt);
rk_context *rk_runtime_context(rk_runtime *rt);
const char *rk_runtime_backend_name(const rk_runtime *rt);

/* ---- ring kernels ---------------------------------------------------------- */

typedef struct rk_kernel rk_kernel;

/* A handler reads one request and writes one reply of the kernel's fixed
 * sizes. state points at the kernel's private state_size bytes (kept on the
 * device between messages; NULL when state_size is 0). Return 0 on success;
 * a negative value marks the message as failed: the reply is still delivered,
 * with that value in rk_reply_info.status, and errors_encountered counts it.
 * In DSL source write it as
 *     RK_HANDLER int name(const Req *req, Resp *resp, State *state) { ... }
 * On the CPU backend a handler is native code in the calling process (a host
 * function, or DSL source compiled to a shared object): a handler that calls
 * abort() or exit() ends the whole process, as any library code would (a
 * crash is caught and fails the kernel with RK_DEVICE_FAULT, outside
 * sanitizer builds). Keep such handlers out of processes that must survive
 * them.   */
typedef int (*rk_handler_fn)(const void *request, void *reply, void *state);

/* Execution modes per backend (others give RK_UNSUPPORTED at launch; the
 * conformance suite checks this table):
 *   CPU:    persistent (the default), traditional.
 *   CUDA:   persistent (the default where the device has persistent_kernels
 *           and cooperative_launch, else traditional), traditional, graph.
 *   WebGPU: traditional only (the default): relaunch per batch of messages.
 * rk_kernel_stats.launches is 1 in persistent mode, one per batch otherwise. */
typedef enum rk_exec_mode {
    RK_MODE_DEFAULT = 0,  /* persistent where the backend supports it, else relaunch */
    RK_MODE_PERSISTENT,   /* one launch; the kernel polls its input queue */
    RK_MODE_TRADITIONAL,  /* copy in, launch, copy out for every batch of commands */
    RK_MODE_GRAPH,        /* traditional, replayed as a CUDA graph (CUDA only) */
} rk_exec_mode;

const char *rk_exec_mode_name(rk_exec_mode mode);

/* The largest state_size rk_kernel_launch accepts (64 MiB): state is one
 * device allocation per kernel; larger data belongs in a buffer. */
#define RK_MAX_STATE_SIZE (64u << 20)

typedef struct rk_kernel_desc {
    const char *name;            /* for logs and statistics; NULL = "kernel" */
    /* The handler: DSL source (handler_source, or the file handler_file)
     * plus the function's name, or (CPU backend only) a host function
     * pointer. Exactly one of handler_source / handler_file / handler. */
    const char *handler_source;
    const char *handler_name;
    rk_handler_fn handler;
    const rk_compile_options *compile_options; /* for DSL handlers; may be NULL */
    /* Sizes. For a DSL handler (see "Handler sizes and dialect" below) 0
     * takes the size of the handler's type, and any other value must equal
     * it. For a host function (handler) they are trusted as given.
     * Requests are 1 .. 65536 bytes. WebGPU copies a request and its reply
     * into the handler's private memory: on a software Vulkan driver
     * (lavapipe) a handler for large messages builds and runs very slowly
     * (16 KiB: about 30 s to build, 50 s per batch on a 2-core machine),
     * and a hardware driver may refuse the pipeline at launch: NVIDIA's
     * Vulkan driver (580) refuses 64 KiB requests and replies ("failed to
     * validate local memory"; rk_kernel_launch fails naming the pipeline). */
    uint32_t message_size;
    uint32_t reply_size;         /* reply bytes, 0 .. 65536 */
    uint32_t state_size;         /* per-kernel handler state; 0 .. RK_MAX_STATE_SIZE */
    /* Slots per queue: a non-zero power of two. Exactly this many requests
     * wait unprocessed (an inactive kernel); a send beyond waits for room
     * (RK_TIMEOUT, or RK_WOULD_BLOCK with RK_NO_WAIT), on every backend.
     * Room: on the CPU, WebGPU and CUDA's launch-per-batch modes a slot frees
     * when its request is taken; on CUDA's persistent mode a request and its
     * reply share a slot of pinned memory, so the slot frees when the reply is
     * received: at most queue_capacity requests are in flight there (sent and
     * their replies not yet received). */
    uint32_t queue_capacity;
    rk_exec_mode mode;
    uint32_t workers;            /* CPU threads / GPU blocks; 0 = backend default */
    bool ordered;                /* handlers run one at a time in send order: see "Ordering" */
    /* A DSL handler in a file: read at launch; diagnostics and compiler
     * errors name this path and the file's lines, and its directory is
     * searched by its #include "...". */
    const char *handler_file;
    /* The state's first value (state_size bytes, copied at launch); NULL =
     * zeroed. */
    const void *initial_state;
} rk_kernel_desc;

typedef enum rk_kernel_state {
    RK_KERNEL_LAUNCHED = 1,  /* running but inactive: messages queue up */
    RK_KERNEL_ACTIVE,        /* processing messages */
    RK_KERNEL_TERMINATING,   /* should_terminate set; draining accepted messages */
    RK_KERNEL_TERMINATED,    /* has_terminated seen; replies may still be received */
    RK_KERNEL_FAILED,        /* the device faulted or hung; see rk_kernel_stats.failure */
} rk_kernel_state;

const char *rk_kernel_state_name(rk_kernel_state state);

/* Per-reply metadata. id is the value rk_kernel_send returned for the request. */
typedef struct rk_reply_info {
    uint64_t id;
    /* The handler's return value: 0 = success. RK_HUNG or RK_DEVICE_FAULT
     * (rk_status values) when the kernel failed before or while running
     * this request: the handler produced no reply, the payload is zero. */
    int32_t status;
    uint32_t reserved;
} rk_reply_info;

typedef struct rk_kernel_stats {
    rk_kernel_state state;
    bool is_active, should_terminate, has_terminated; /* the control block */
    uint64_t messages_sent;       /* accepted by send */
    uint64_t messages_processed;  /* handled by the device */
    uint64_t errors_encountered;  /* handler errors and faults */
    uint64_t replies_received;    /* taken by receive */
    uint64_t launches;            /* kernel launches so far (1 for persistent) */
    uint32_t input_depth, output_depth; /* messages waiting in each queue */
    rk_status failure;            /* why the kernel is FAILED, else RK_OK */
    /* Latency, sampled: one request in 16 (ids 1, 17, 33, ...) is timed from
     * send accepting it to its reply being taken off the kernel (by receive,
     * or by whichever caller reaps replies for rk_kernel_call). Includes
     * queueing on both sides, not the time a reply waits in a call's handle.
     * Approximate to about 6 %; 0 while latency_samples is 0. */
    uint64_t latency_samples;
    uint64_t latency_p50_ns, latency_p99_ns, latency_max_ns;
    /* Replies nobody will take: late replies of calls that timed out or were
     * released, and replies to raw sends on a kernel that serves calls. */
    uint64_t replies_discarded;
} rk_kernel_stats;

/* Builds the handler, allocates the queues and launches the kernel, inactive.
 * Messages sent before rk_kernel_activate wait in the queue. */
rk_status rk_kernel_launch(rk_runtime *rt, const rk_kernel_desc *desc, rk_kernel **out);
rk_status rk_kernel_activate(rk_kernel *k);
rk_status rk_kernel_deactivate(rk_kernel *k);

/* Sets should_terminate and waits up to timeout_ns for has_terminated. Every
 * accepted message is processed first (an inactive kernel is activated to
 * drain); replies stay receivable afterwards. RK_TIMEOUT leaves the kernel
 * terminating: call again. */
rk_status rk_kernel_terminate(rk_kernel *k, uint64_t timeout_ns);

/* Terminates (if still running) and frees everything. Replies not yet
 * received are dropped. Waits while the kernel makes progress; a handler
 * that does not return is reported with RK_HUNG (k is destroyed all the
 * same): on the CPU backend its thread was cancelled and everything freed,
 * no thread is left; a GPU kernel that cannot be stopped keeps running with
 * its memory left in place. A kernel that was FAILED already before the
 * call gives RK_OK. */
rk_status rk_kernel_destroy(rk_kernel *k);

/* Queues one request of size <= message_size (shorter ones are zero-padded).
 * Waits up to timeout_ns for a free slot (RK_TIMEOUT, nothing queued). *id
 * (may be NULL) receives the request's id. */
rk_status rk_kernel_send(rk_kernel *k, const void *message, size_t size, uint64_t timeout_ns,
                         uint64_t *id);

/* Queues count requests of message_size bytes each, stride bytes apart.
 * Returns after all are queued or the timeout passes; *sent says how many
 * were accepted (ids first_id .. first_id + *sent - 1). */
rk_status rk_kernel_send_batch(rk_kernel *k, const void *messages, size_t stride, size_t count,
                               uint64_t timeout_ns, size_t *sent, uint64_t *first_id);

/* Takes one reply (reply_size bytes into reply, which holds capacity bytes).
 * Waits up to timeout_ns (RK_TIMEOUT when none came). info may be NULL.
 * From a FAILED kernel: the replies it has (see rk_reply_info.status), then
 * its failure (RK_HUNG, RK_DEVICE_FAULT) once there are none left. */
rk_status rk_kernel_receive(rk_kernel *k, void *reply, size_t capacity, rk_reply_info *info,
                            uint64_t timeout_ns);

/* Takes up to max replies, stride bytes apart; waits up to timeout_ns for
 * the first one, then returns what is there. infos may be NULL. */
rk_status rk_kernel_receive_batch(rk_kernel *k, void *replies, size_t stride, rk_reply_info *infos,
                                  size_t max, uint64_t timeout_ns, size_t *received);

rk_status rk_kernel_stats_get(rk_kernel *k, rk_kernel_stats *out);
rk_kernel_state rk_kernel_get_state(rk_kernel *k);

/* ---- Handler sizes and dialect ---------------------------------------------------
 *
 * A DSL handler is source that marks its function RK_HANDLER (given as
 * handler_source or handler_file). At launch, on every backend, the CPU
 * included, it is run through the transpiler for the CUDA and the WGSL
 * targets, so what launches anywhere is in the one dialect every backend
 * accepts: printf, static locals, recursion and the like are refused with
 * RK_COMPILE_FAILED, the text naming each target that refuses and
 * file:line:col of each problem (about a millisecond per target). A source
 * without the RK_HANDLER mark is backend code (C for the CPU backend,
 * WGSL for WebGPU) and is passed on unchecked.
 *
 * The same pass reads the handler's signature
 *     RK_HANDLER int name(const Req *req, Resp *resp, State *state)
 * and the desc's sizes are checked against the C layout (x86-64 host) of
 * Req, Resp and State: 0 takes the type's size, a different non-zero size
 * is refused with RK_INVALID_ARGUMENT naming both. A void * parameter has
 * no size: the desc's value is used as given (0 reply = no reply payload,
 * 0 state = no state, NULL state pointer). A kernel whose handler takes a
 * State gets sizeof(State) bytes, zeroed or copied from initial_state.
 *
 * A host function handler (handler) cannot be read: message_size,
 * reply_size and state_size are trusted. The function must read at most
 * message_size bytes, write at most reply_size bytes, and touch the state
 * only when state_size is non-zero (state is NULL when it is 0). */

/* ---- many clients per kernel --------------------------------------------------
 *
 * Any number of threads may call these on one kernel at once. Each request
 * gets its own reply, routed by request id to the caller that asked (as
 * io_uring's user_data does): no router thread, no mailbox, no client id in
 * the payload. Whichever waiting caller finds nobody collecting replies
 * becomes the collector ("leader"): it takes replies off the kernel in
 * batches and hands each to its owner; the others sleep until their reply
 * is handed to them, or until the leader leaves and one of them takes over.
 * A single client thus pays about what a raw send + receive pays.
 *
 * Mixing with the raw calls: the first rk_kernel_call / rk_kernel_submit
 * switches the kernel to serving calls, for good. From then on
 * rk_kernel_receive and rk_kernel_receive_batch return RK_BAD_STATE (they
 * would take other callers' replies); rk_kernel_send still works, as
 * fire-and-forget: its reply is dropped and counted in replies_discarded.
 * Do not start calls while another thread is inside a raw receive.
 *
 * Raw sends are single-producer: two threads inside rk_kernel_send /
 * rk_kernel_send_batch at the same moment are detected, and the second
 * returns RK_BAD_STATE without queueing anything (one atomic exchange per
 * send).
 *
 * Handler failures are not call failures: as with receive, the call returns
 * RK_OK and the handler's value is in info->status. */

typedef struct rk_call rk_call;

/* Sends one request (size <= message_size, shorter ones zero-padded) and
 * waits for its own reply: reply_size bytes into reply (capacity bytes).
 * timeout_ns covers both waiting for room in the input queue and for the
 * reply. RK_TIMEOUT before the request was queued: nothing was sent. After:
 * the request stays queued and is processed; its late reply is discarded
 * when it arrives (counted in replies_discarded), never given to another
 * caller. Use rk_kernel_submit to keep waiting instead. RK_TERMINATED when
 * the kernel was terminating before the request was queued. info may be
 * NULL. */
rk_status rk_kernel_call(rk_kernel *k, const void *request, size_t size, void *reply, size_t capacity,
                         rk_reply_info *info, uint64_t timeout_ns);

/* Queues one request and returns at once with a handle for its reply.
 * Waits up to timeout_ns only for room in the input queue (RK_TIMEOUT or,
 * with RK_NO_WAIT, RK_WOULD_BLOCK: nothing queued, *out is NULL). Every
 * handle must be given back with rk_call_release. */
rk_status rk_kernel_submit(rk_kernel *k, const void *request, size_t size, uint64_t timeout_ns, rk_call **out);

/* Waits up to timeout_ns for the handle's reply and copies it out (reply
 * may be NULL when reply_size is 0; info may be NULL). RK_TIMEOUT leaves the
 * handle pending: wait again later, from any thread, and the reply is there
 * (it is kept in the handle, not lost). Once it came, every wait returns it
 * again until release. Handles may be waited in any order. RK_TERMINATED or
 * the kernel's failure status when no reply can come (a failed kernel).
 * One thread at a time waits on a handle: a second returns RK_BAD_STATE. */
rk_status rk_call_wait(rk_call *call, void *reply, size_t capacity, rk_reply_info *info, uint64_t timeout_ns);

/* The request id of a submitted call (the id its rk_reply_info carries). */
uint64_t rk_call_id(const rk_call *call);

/* Gives the handle back. A pending call's reply is discarded when it comes
 * (replies_discarded). The handle must not be used afterwards. Handles not
 * released before rk_kernel_destroy are freed by it; no thread may be inside
 * a call, submit or wait on the kernel while it is destroyed. */
rk_status rk_call_release(rk_call *call);

/* ---- Ordering -------------------------------------------------------------------
 *
 * Send order is the order in which the kernel accepted requests: their ids
 * (1, 2, 3, ...). Requests from one thread are accepted in that thread's
 * program order; concurrent callers are accepted in some interleaving, and
 * a caller that needs a PUT to come before its GET waits for the PUT's
 * reply (or submits both from one thread, on an ordered kernel).
 *
 * Handler execution, per backend and mode:
 *  - CPU, persistent, workers = 1 (the default): one thread runs every
 *    handler, in send order. workers > 1: requests are dealt to the workers
 *    in chunks of 64 and run concurrently, in no defined order; the state
 *    is shared, so the handler must not rely on it without atomics.
 *  - CPU, traditional: one batch at a time, each in send order.
 *  - CUDA, persistent: one GPU lane per message, many at once: no defined
 *    execution order. Traditional / graph: one thread per message.
 *  - WebGPU (relaunch per batch): a handler with state runs one invocation
 *    over the batch in send order, batches in send order; a stateless
 *    handler runs one invocation per message, in parallel.
 * Replies: raw receive sees them in send order on CUDA, WebGPU and on the
 * CPU with one worker; with several CPU workers, in order per worker only.
 * Calls are unaffected: each caller gets its own reply whatever the order.
 *
 * ordered = true in rk_kernel_desc asks for handlers to run one at a time,
 * in send order, each seeing the state the previous one left (an order
 * book, a per-account ledger). It needs workers 0 or 1 (refused with
 * RK_INVALID_ARGUMENT otherwise). CPU: what workers = 1 already does.
 * WebGPU: the sequential invocation even for a stateless handler. CUDA:
 * one warp taking one message at a time (persistent mode only; traditional
 * and graph refuse it with RK_UNSUPPORTED); without state (state_size 0),
 * up to 32 messages a pass, one lane each, and RK_CUDA_ORDERED_WARPS (1 to
 * 8, default 1; up to 15 with RK_CUDA_K2K_LANES, docs/channels.md) warps whose handlers run at once but which take messages
 * and emit on channels in send order (docs/channels.md). It gives up the device's
 * parallelism for this kernel: leave it off for handlers that don't care.
 * Tested on the CPU and WebGPU backends in CI (tests/core/
 * test_kernel_ordering.c), on CUDA where a GPU is present. */

#ifdef __cplusplus
}
#endif
#endif
