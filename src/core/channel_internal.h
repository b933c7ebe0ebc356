/* A K2K channel as the core and the backends see it: one SPSC ring in host
 * memory (the CPU backend's device memory), the producer's sequence counter,
 * the closed/emitting handshake and the graph edge used for cycle checks.
 *
 * Slots use the CPU request layout, [id u64][reserved u64][message bytes],
 * so a destination runs its handler on them in place. */
#ifndef RK_CHANNEL_INTERNAL_H
#define RK_CHANNEL_INTERNAL_H

#include <stdatomic.h>

#include "backend_impl.h"
#include "ringkernel/channel.h"
#include "ringkernel/queue.h"

enum { RK__CHANNEL_SLOT_HEADER = 16 };

typedef enum rk__channel_side { RK__CHANNEL_SRC, RK__CHANNEL_DST } rk__channel_side;

struct rk_channel {
    uint32_t id, port;
    rk_channel_desc desc;   /* resolved: no DEFAULT values */
    rk_queue *ring;
    char src_name[64], dst_name[64];

    /* A backend's own part (a GPU buffer, say), freed with the channel by
     * impl_free; the core's ring then only counts positions. */
    void *impl;
    void (*impl_free)(rk_channel *ch);
    /* Optional: the counters, depth and closed state where the backend keeps
     * them (on the device). */
    rk_status (*impl_stats)(rk_channel *ch, rk_channel_stats *out);

    /* Producer only. */
    uint64_t next_seq;
    /* Wakes the destination after an emit; set by the backend's attach. */
    void (*wake)(void *arg);
    void *wake_arg;

    /* Closing: the destination stores closed, then waits for emitting to
     * be 0; an emit stores emitting, then reads closed. Both seq_cst, so
     * either the emit sees closed or the close waits for the emit. */
    _Atomic int closed;       /* rk_status: RK_OK while open */
    _Atomic unsigned emitting;

    _Atomic uint64_t emitted, delivered, refused;

    /* The graph, under the registry lock. A side that is gone no longer
     * counts as an edge. */
    const rk_kernel *src, *dst;
    bool src_gone, dst_gone;
    rk_channel *next;
};

/* A channel not yet linked to kernels or to the graph (src and dst NULL):
 * the relay's half channels use it too. */
rk_status rk__channel_create(const rk_channel_desc *d, uint32_t port, const char *src_name, const char *dst_name,
                             rk_channel **out);
/* Frees a channel that no kernel holds. */
void rk__channel_destroy(rk_channel *ch);
/* A channel from src's port to a kernel in another process (src/mpi): in
 * the graph as src's port, attached through channel_attach_source; the
 * caller consumes its ring and holds its destination side. d resolved. */
rk_status rk__channel_port_free(rk_kernel *src, uint32_t port, const char *fn);
rk_status rk__channel_connect_remote(rk_kernel *src, uint32_t port, const rk_channel_desc *d, const char *dst_name,
                                     rk_channel **out);
/* A fresh channel id (RK_CHANNEL_MESSAGE_ID) for a channel not made by connect. */
uint32_t rk__channel_new_id(void);
/* Will the source emit no more (gone, terminated or failed)? */
bool rk__channel_source_done(rk_channel *ch);
/* Producer side: 0 or an RK_EMIT_* code. */
int rk__channel_emit(rk_channel *ch, const void *message, size_t size);
/* Free slots from the producer's side (HOLD credit). */
uint32_t rk__channel_room(rk_channel *ch);
/* Consumer side: closes the channel with why (RK_TERMINATED or
 * RK_DEVICE_FAULT) unless already closed; returns once no emit is in flight,
 * so what is on the ring afterwards is final. */
void rk__channel_close(rk_channel *ch, rk_status why);
/* An endpoint's kernel is gone; the channel is freed when both are. */
void rk__channel_release(rk_channel *ch, rk__channel_side side);

#endif
