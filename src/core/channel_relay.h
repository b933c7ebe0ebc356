/* The host relay (channel_relay.c): K2K channels whose two kernels are not
 * on one runtime (another backend, another device, another process).
 *
 * A relayed channel is two halves joined on the host:
 *   - upstream: the source kernel emits into a channel ring in host memory
 *     (its backend's channel_attach_source); the relay consumes it.
 *   - a sink feeding the destination: a host-memory channel the destination
 *     polls (its backend's channel_attach_sink), or, where the backend has
 *     none, the destination's host input queue through a staging ring.
 * In one process a relay thread moves messages between the two; across
 * processes the MPI progress thread (src/mpi) does, with the network in
 * between. Either way: in order, exactly once, nothing leaves the upstream
 * ring before the sink took it. */
#ifndef RK_CHANNEL_RELAY_H
#define RK_CHANNEL_RELAY_H

#include "channel_internal.h"

/* ---- sinks: the destination side ---------------------------------------------- */

typedef struct rk__relay_sink rk__relay_sink;

/* Opens a sink into dst for channel id (its replies carry that id). from
 * names the sender in messages. Where dst's backend has no sink attach, the
 * messages go through dst's host queue: then dst answers every one of them
 * to the host, so d->replies must be RK_CHANNEL_REPLY_ALL (RK_UNSUPPORTED
 * otherwise, saying so). */
rk_status rk__relay_sink_open(rk_kernel *dst, uint32_t id, const rk_channel_desc *d, const char *from,
                              rk__relay_sink **out);
/* Messages the sink takes now without waiting. */
uint32_t rk__relay_sink_room(rk__relay_sink *s);
/* Pushes count messages of message_size bytes, stride apart; at most
 * rk__relay_sink_room. RK_OK, or why the sink is closed (RK_TERMINATED,
 * RK_DEVICE_FAULT): then nothing more can be pushed. */
rk_status rk__relay_sink_push(rk__relay_sink *s, const unsigned char *msgs, size_t stride, uint32_t count);
/* Progress where the sink stages messages for a host queue. Returns the
 * sink's state (RK_OK while open). */
rk_status rk__relay_sink_pump(rk__relay_sink *s);
/* Messages the destination has taken from the sink so far (credit). */
uint64_t rk__relay_sink_taken(rk__relay_sink *s);
/* Slots between the relay and the destination. */
uint32_t rk__relay_sink_capacity(rk__relay_sink *s);
/* RK_OK while the destination takes messages, else why not. */
rk_status rk__relay_sink_state(rk__relay_sink *s);
/* Messages pushed and not yet taken by the destination. */
uint32_t rk__relay_sink_staged(rk__relay_sink *s);
/* The destination kernel is being destroyed, or the relay ends: lets go of
 * it. Safe once; the sink is freed. */
void rk__relay_sink_close(rk__relay_sink *s);

/* ---- hooks the kernel lifecycle calls ------------------------------------------ */

/* Whoever feeds a kernel through a sink registers these, so terminate
 * drains what was accepted upstream first, and destroy stops the feeding. */
typedef struct rk__relay_hooks {
    /* Close the inputs feeding dst (later emits: RK_EMIT_CLOSED) and wait
     * until every message accepted upstream is in dst, up to deadline_ns
     * (rk__now_ns's clock). RK_TIMEOUT names what is missing. */
    rk_status (*drain)(void *owner, rk_kernel *dst, uint64_t deadline_ns);
    /* dst is about to be freed: never touch it again. */
    void (*detach)(void *owner, rk_kernel *dst);
} rk__relay_hooks;

rk_status rk__relay_watch(rk_kernel *dst, const rk__relay_hooks *hooks, void *owner);
void rk__relay_unwatch(rk_kernel *dst, void *owner);
/* kernel.c: before terminate asks the backend to drain, and before destroy. */
rk_status rk__relay_before_terminate(rk_kernel *k, uint64_t timeout_ns);
void rk__relay_before_destroy(rk_kernel *k);

/* ---- in-process relays (rk_channel_connect across runtimes) -------------------- */

/* Refuses what a relayed channel cannot do (registry lock not held). */
rk_status rk__relay_check(rk_kernel *src, rk_kernel *dst, const rk_channel_desc *d);
/* Links ch (already in the graph's terms: src, dst, port, desc) through a
 * relay thread. Called with the registry lock held. */
rk_status rk__relay_attach(rk_kernel *src, rk_kernel *dst, rk_channel *ch);

/* Copies up to max messages from ch's ring (the relay is its consumer) into
 * the sink; returns how many. Shared by the relay thread and MPI. */
uint32_t rk__relay_move(rk_channel *up, rk__relay_sink *sink, uint32_t max);

#endif
