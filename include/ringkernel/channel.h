/* Kernel-to-kernel (K2K) channels: ring kernels that send messages to each
 * other without a trip through the host.
 *
 * A handler emits on one of its output ports (0 .. RK_MAX_PORTS-1):
 *
 *     RK_HANDLER int stage(const Msg *in, Reply *out, void *state) {
 *         Msg next = *in; next.value += 1;
 *         int rc = rk_emit(0, &next);     // dsl.h: 0, or an RK_EMIT_* code
 *         return rc;                      // a failed emit is reported, never dropped
 *     }
 *
 * and the host connects that port to another kernel's input, before the
 * kernels are activated or while they run:
 *
 *     rk_channel_desc cd = {.message_size = sizeof(Msg)};
 *     rk_channel_connect(a, 0, b, &cd, &channel);
 *
 * Shape of the graph
 *   - One channel per connection: a single-producer/single-consumer ring of
 *     `capacity` slots in the backend's memory (host memory on the CPU
 *     backend). The producer's handler writes it; the destination polls it
 *     beside its host input queue.
 *   - Fan-out: a kernel connects several ports (one channel each; a port
 *     has at most one channel).
 *   - Fan-in: several channels into one kernel (up to RK_MAX_INPUTS). The
 *     destination visits its inputs round-robin; messages of one channel
 *     arrive in emit order, exactly once; there is no order between channels.
 *   - The host can still send to and receive from every kernel.
 *
 * Replies of host messages are unchanged (one per request), unless
 * rk_channel_set_host_replies asks for failures only (a pipeline's source).
 *
 * Replies of channel messages. A message that arrived over a channel is
 * handled like one from the host; its reply goes to the destination's host
 * output queue when the handler failed (status != 0, so nothing fails
 * silently) or when the channel was connected with RK_CHANNEL_REPLY_ALL (the
 * sink of a pipeline). Its rk_reply_info.id is RK_CHANNEL_MESSAGE_ID(channel
 * id, sequence): the channel's id and the message's position on it.
 *
 * Backpressure (never a silent drop)
 *   - RK_CHANNEL_HOLD (default): a kernel takes a message from any input only
 *     when each of its HOLD output channels has a free slot, so an emit of
 *     one message per port per handled message never finds the channel full;
 *     a full downstream stops the producer taking input, and that propagates
 *     to the host's rk_kernel_send (RK_TIMEOUT / RK_WOULD_BLOCK).
 *   - RK_CHANNEL_REPORT: the producer never waits; rk_emit returns
 *     RK_EMIT_FULL when the channel is full and the handler decides (emit
 *     again later, answer the host with an error status, ...).
 *   - Cycles: a cycle made only of HOLD channels could deadlock when it fills,
 *     so rk_channel_connect refuses the HOLD channel that would close one
 *     (RK_INVALID_ARGUMENT naming the kernels on the cycle). A cycle with at
 *     least one REPORT channel is accepted: that channel's producer never
 *     waits, so the cycle always drains.
 *   - A HOLD emit beyond one message per port per handled message, and any
 *     emit into a full REPORT channel, returns RK_EMIT_FULL.
 *
 * Termination and faults
 *   - A kernel that terminates closes its input channels: it first handles
 *     every message already on them, in order, then stops. An emit to a
 *     closed channel returns RK_EMIT_CLOSED (the handler reports it).
 *     Terminating a pipeline from its sources to its sinks therefore delivers
 *     everything accepted upstream; any other order reports what could no
 *     longer be delivered to the handler that emitted it.
 *   - A destination that faults closes its inputs with RK_EMIT_FAULTED and
 *     answers every message still on them with RK_DEVICE_FAULT replies to the
 *     host (nothing delivered is lost); emits after that return RK_EMIT_FAULTED.
 *
 * Limits of this version (each refused by rk_channel_connect with a message):
 *   - both kernels on the same runtime's backend. CPU: persistent mode, one
 *     worker each (per-channel order). WebGPU: every kernel (relaunch; a
 *     handler that emits runs its batch in order). CUDA: persistent
 *     ordered kernels (ordered = true: without state, 1 to 8 worker warps
 *     in one block, RK_CUDA_ORDERED_WARPS, which take their inputs and give
 *     out port positions in order, so per-channel order holds with several
 *     warps). docs/channels.md has each backend's design.
 *   - Kernels of two runtimes (backends, devices) are joined through the
 *     host relay, same rules: the source's backend must be able to emit into
 *     host memory (CPU); a destination whose backend cannot poll host memory
 *     takes the messages in its host queue and needs RK_CHANNEL_REPLY_ALL.
 *     Across processes: ringkernel/channel_mpi.h. docs/channels.md.
 *
 * Lifetime: a channel lives until both of its kernels are destroyed; the
 * handle may be used while at least one of them has not been destroyed.
 */
#ifndef RINGKERNEL_CHANNEL_H
#define RINGKERNEL_CHANNEL_H

#include "ringkernel.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RK_MAX_PORTS 8u   /* output ports per kernel */
#define RK_MAX_INPUTS 16u /* input channels per kernel */

/* Status codes rk_emit returns to a handler (dsl.h has them too, as ints). */
/* Spelled as in dsl.h; each equals the rk_status named beside it. */
#define RK_EMIT_OK 0
#define RK_EMIT_FULL (-7)       /* RK_WOULD_BLOCK: no free slot, the handler decides */
#define RK_EMIT_NO_PORT (-12)   /* RK_NOT_FOUND: port out of range or not connected */
#define RK_EMIT_BAD_SIZE (-1)   /* RK_INVALID_ARGUMENT: sizeof(*msg) != the channel's message_size */
#define RK_EMIT_CLOSED (-5)     /* RK_TERMINATED: the destination has terminated */
#define RK_EMIT_FAULTED (-15)   /* RK_DEVICE_FAULT: the destination failed */

/* rk_reply_info.id of a reply to a message that came over a channel. */
#define RK_CHANNEL_MESSAGE_BIT (1ull << 63)
#define RK_CHANNEL_MESSAGE_ID(channel_id, seq) \
    (RK_CHANNEL_MESSAGE_BIT | ((uint64_t)(channel_id) << 40) | ((uint64_t)(seq) & ((1ull << 40) - 1)))
#define RK_CHANNEL_MESSAGE_CHANNEL(id) ((uint32_t)(((id) >> 40) & 0x7fffffu))
#define RK_CHANNEL_MESSAGE_SEQ(id) ((uint64_t)(id) & ((1ull << 40) - 1))

typedef struct rk_channel rk_channel;

typedef enum rk_channel_flow {
    RK_CHANNEL_FLOW_DEFAULT = 0, /* HOLD */
    RK_CHANNEL_HOLD,             /* the producer takes no input while the channel is full */
    RK_CHANNEL_REPORT,           /* rk_emit returns RK_EMIT_FULL; the handler decides */
} rk_channel_flow;

typedef enum rk_channel_replies {
    RK_CHANNEL_REPLIES_DEFAULT = 0, /* FAILURES */
    RK_CHANNEL_REPLY_FAILURES,      /* only failed messages are answered to the host */
    RK_CHANNEL_REPLY_ALL,           /* every message's reply goes to the host */
} rk_channel_replies;

typedef struct rk_channel_desc {
    uint32_t message_size;  /* bytes the producer emits on the port: must equal the
                               destination's message_size */
    uint32_t capacity;      /* slots, a power of two; 0 = the destination's queue_capacity */
    rk_channel_flow flow;
    rk_channel_replies replies;
} rk_channel_desc;

/* Connects src's output port to dst's input. Refused with a message naming
 * both kernels when: port >= RK_MAX_PORTS or already connected
 * (RK_INVALID_ARGUMENT), message_size differs from dst's (RK_INVALID_ARGUMENT),
 * either kernel is terminating, terminated (RK_TERMINATED) or failed
 * (RK_BAD_STATE), dst has RK_MAX_INPUTS inputs already, a HOLD cycle would
 * close (RK_INVALID_ARGUMENT), or the backend/mode cannot (RK_UNSUPPORTED).
 * out may be NULL. */
rk_status rk_channel_connect(rk_kernel *src, uint32_t port, rk_kernel *dst, const rk_channel_desc *desc,
                             rk_channel **out);

typedef struct rk_channel_stats {
    uint32_t id;              /* as in RK_CHANNEL_MESSAGE_ID */
    uint32_t capacity, depth; /* slots, and messages waiting now */
    uint64_t emitted;         /* accepted by rk_emit */
    uint64_t delivered;       /* taken by the destination */
    uint64_t refused;         /* emits that returned an error (full, closed, faulted, bad size) */
    rk_status closed;         /* RK_OK while open, RK_TERMINATED or RK_DEVICE_FAULT after */
} rk_channel_stats;

/* A snapshot of counters the kernels keep as they go: on a GPU a pass
 * stores `delivered` after its handlers' emits and replies, so a message
 * can reach the next kernel or the host a moment before the count moves. */
rk_status rk_channel_stats_get(rk_channel *ch, rk_channel_stats *out);

/* Which of the host's own messages k answers: RK_CHANNEL_REPLY_ALL (the
 * default: one reply per request, the ring-kernel contract) or
 * RK_CHANNEL_REPLY_FAILURES (a pipeline's source, whose work goes on over
 * channels: only messages whose handler failed, e.g. because an emit was
 * refused, come back). Takes effect for messages handled after the call.
 * RK_UNSUPPORTED where the backend has no channels. */
rk_status rk_channel_set_host_replies(rk_kernel *k, rk_channel_replies which);

#ifdef __cplusplus
}
#endif
#endif
