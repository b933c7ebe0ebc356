/* K2K channels on the CPU backend (cpu_channel.c): each kernel's output
 * ports and input channels, and the hooks its persistent worker calls. */
#ifndef RK_CPU_CHANNEL_H
#define RK_CPU_CHANNEL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "ringkernel/channel.h"
#include "ringkernel/queue.h"

struct rk__cpu_ring;
struct rk__cpu_guard;
struct rk__cpu_batch;

/* Written by the host (connect, under the core's registry lock), read by the
 * kernel's one worker: a pointer is stored before in_count is raised. */
typedef struct rk__cpu_links {
    rk_channel *_Atomic out[RK_MAX_PORTS];
    rk_channel *_Atomic in[RK_MAX_INPUTS];
    _Atomic unsigned in_count;
    _Atomic unsigned out_count; /* ports connected (a port is never disconnected while the kernel lives) */
    unsigned in_cursor;  /* worker only: the input visited first next time */
    bool inputs_closed;  /* worker only */
    _Atomic bool host_failures_only; /* rk_channel_set_host_replies */
} rk__cpu_links;

/* Whether the kernel has input / output channels at all: the worker's
 * loop looks at one word each rather than calling through every port and
 * input at every look. */
static inline bool rk__cpu_links_has_inputs(rk__cpu_links *l) {
    return atomic_load_explicit(&l->in_count, memory_order_acquire) != 0;
}
static inline bool rk__cpu_links_has_outputs(rk__cpu_links *l) {
    return atomic_load_explicit(&l->out_count, memory_order_acquire) != 0;
}

/* The worker thread will run r's handler: rk_emit on it uses r's ports. */
void rk__cpu_channel_enter(struct rk__cpu_ring *r);
/* The most messages r may take now: the free slots of its fullest open
 * HOLD output channel (UINT32_MAX without any). */
uint32_t rk__cpu_channel_credit(struct rk__cpu_ring *r);
/* Handles up to `credit` messages waiting on r's input channels, replies
 * (those the channel asks for) into out. A failed kernel answers them with
 * RK_DEVICE_FAULT instead. Returns how many it took. */
uint32_t rk__cpu_channel_serve(struct rk__cpu_ring *r, rk_queue *out, struct rk__cpu_guard *g, bool failed,
                               uint32_t credit, uint64_t *processed, uint64_t *errors);
/* Does the kernel answer the host only for failed messages (a pipeline source)? */
bool rk__cpu_channel_failures_only(struct rk__cpu_ring *r);
/* After the handler ran on a batch of host messages: how many of its
 * replies to publish (moved to the front when only failures are wanted). */
uint32_t rk__cpu_channel_host_replies(struct rk__cpu_ring *r, const struct rk__cpu_batch *b);
/* The ring iface's set_host_replies slot. */
rk_status rk__cpu_channel_set_host_replies(rk_kernel *k, bool failures_only);
/* Any message waiting on an input channel? */
bool rk__cpu_channel_pending(struct rk__cpu_ring *r);
/* Closes every input channel with why (once); after it returns nothing more
 * can arrive. */
void rk__cpu_channel_close_inputs(struct rk__cpu_ring *r, rk_status why);
/* The ring is being freed: closes its inputs and lets go of every channel. */
void rk__cpu_channel_detach(struct rk__cpu_ring *r);
/* The ring iface's channel_attach slot. */
rk_status rk__cpu_channel_attach(rk_kernel *src, rk_kernel *dst, rk_channel *ch);
/* The ring iface's relay slots: src emits into ch's host ring; dst polls it. */
rk_status rk__cpu_channel_attach_source(rk_kernel *src, rk_channel *ch);
rk_status rk__cpu_channel_attach_sink(rk_kernel *dst, rk_channel *ch);
/* The DSL runtime's emit slot. */
int rk__cpu_channel_emit(unsigned port, const void *message, unsigned size);

#endif
