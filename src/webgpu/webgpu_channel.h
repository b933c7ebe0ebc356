/* K2K channels on the WebGPU backend (webgpu_channel.c).
 *
 * A channel is a storage buffer of `capacity` slots, each the destination's
 * request words. The producer's dispatch runs its handler once per message
 * in order (the sequential entry point); rk_emit writes into the kernel's
 * rk_emit buffer (binding 5 of the ring template). Between dispatches the
 * producer's worker copies what was emitted from rk_emit into the channel
 * buffer, and the destination's worker copies from the channel buffer into
 * its request buffer before its own dispatch: both are buffer-to-buffer
 * copies on the device's queue, so the payload never comes to the host.
 * The host keeps only positions (the core's rk_queue counters) and ids.
 *
 * rk_emit buffer: a header of WG_EMIT_HEADER words, then per connected
 * port a region of max_batch messages. Header word offsets (per port p):
 *   WG_EMIT_COUNT + p    messages emitted in this dispatch (the shader counts)
 *   WG_EMIT_ROOM + p     how many may be emitted (the channel's free slots)
 *   WG_EMIT_STATUS + p   0 = open, else the code every emit returns
 *                        (RK_EMIT_NO_PORT, RK_EMIT_CLOSED, RK_EMIT_FAULTED)
 *   WG_EMIT_SIZE + p     the channel's message size in bytes
 *   WG_EMIT_REFUSED + p  emits refused in this dispatch (the shader counts)
 *   WG_EMIT_STRIDE + p   words per message in the region
 *   WG_EMIT_OFFSET + p   the region's first word
 * The WGSL emitter's rk_emit helpers use the same numbers. */
#ifndef RK_WEBGPU_CHANNEL_H
#define RK_WEBGPU_CHANNEL_H

#include <stdbool.h>
#include <stdint.h>

#include "ringkernel/channel.h"
#include "webgpu_internal.h"

enum {
    WG_EMIT_COUNT = 0,
    WG_EMIT_ROOM = 8,
    WG_EMIT_STATUS = 16,
    WG_EMIT_SIZE = 24,
    WG_EMIT_REFUSED = 32,
    WG_EMIT_STRIDE = 40,
    WG_EMIT_OFFSET = 48,
    WG_EMIT_HEADER = 64, /* words */
};

struct wg_ring;

/* A kernel's ports and inputs. Written by attach under the ring's mu; the
 * worker reads them under mu when it plans a batch. */
typedef struct wg_links {
    rk_channel *out[RK_MAX_PORTS];
    rk_channel *in[RK_MAX_INPUTS];
    unsigned in_count, in_cursor;
    bool failures_only;  /* rk_channel_set_host_replies */
    bool inputs_closed;  /* worker only */
    uint32_t gen, built_gen; /* the emit buffer is rebuilt when ports change */
    WGPUBuffer emit;     /* binding 5 */
} wg_links;

/* One batch's use of channels (worker only). */
typedef struct wg_take {
    rk_channel *ch;
    uint64_t first;  /* channel position of the first message taken */
    uint32_t count;
    uint32_t at;     /* index in the batch */
} wg_take;

typedef struct wg_plan {
    wg_take takes[RK_MAX_INPUTS];
    unsigned take_count;
    uint32_t taken;
    rk_channel *out[RK_MAX_PORTS]; /* ports open for emits in this batch */
    uint64_t out_first[RK_MAX_PORTS];
    uint32_t header[WG_EMIT_HEADER];
} wg_plan;

/* The free slots of r's fullest open HOLD output (UINT32_MAX without one). */
uint32_t rk__wg_channel_credit(struct wg_ring *r);
/* Messages waiting on r's inputs. */
bool rk__wg_channel_pending(struct wg_ring *r);
/* Plans up to `budget` channel messages after the first `at` of the batch;
 * opens the output ports (the emitting window) and fills the emit header. */
void rk__wg_channel_plan(struct wg_ring *r, wg_plan *p, uint32_t at, uint32_t budget);
/* Encodes the copies of the planned channel messages into r's request buffer. */
void rk__wg_channel_encode_inputs(struct wg_ring *r, const wg_plan *p, WGPUCommandEncoder enc);
/* After the dispatch: routes what was emitted (device copies), publishes
 * it, releases what was taken, closes the emitting window and wakes the
 * kernels on the other ends. header: the emit header read back. ok: false
 * when the dispatch failed (nothing is routed). Expects c->lock. */
void rk__wg_channel_finish(struct wg_ring *r, wg_plan *p, const uint32_t *header, bool ok);
/* Wakes the kernels on the other ends (without r->mu held). */
void rk__wg_channel_wake(wg_plan *p);
/* (Re)creates the emit buffer when ports changed; true when the bind group
 * must be rebuilt. Expects c->lock. */
rk_status rk__wg_channel_prepare(struct wg_ring *r, bool *rebind);
/* Closes every input with why; waits for emits in flight (without r->mu). */
void rk__wg_channel_close_inputs(struct wg_ring *r, rk_status why);
/* A failed kernel answers what is left on its inputs with RK_DEVICE_FAULT. */
void rk__wg_channel_fault_pending(struct wg_ring *r);
/* The ring is being freed (worker stopped): lets go of every channel. */
void rk__wg_channel_detach(struct wg_ring *r);
rk_status rk__wg_channel_attach(rk_kernel *src, rk_kernel *dst, rk_channel *ch);
rk_status rk__wg_channel_set_host_replies(rk_kernel *k, bool failures_only);

#endif
