/* K2K channels: validation and the graph (rk_channel_connect), the channel's
 * ring and its closed/emitting handshake, statistics. Backends link a
 * channel to their kernels through rk__ring_iface.channel_attach. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "channel_internal.h"
#include "channel_relay.h"

_Static_assert(RK_EMIT_FULL == RK_WOULD_BLOCK && RK_EMIT_NO_PORT == RK_NOT_FOUND &&
                   RK_EMIT_BAD_SIZE == RK_INVALID_ARGUMENT && RK_EMIT_CLOSED == RK_TERMINATED &&
                   RK_EMIT_FAULTED == RK_DEVICE_FAULT,
               "RK_EMIT_* codes follow rk_status");

/* Every channel with at least one endpoint alive: the graph. */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static rk_channel *registry;
static uint32_t next_channel_id = 1;

/* ---- the graph (registry_lock held) ---------------------------------------------- */

static bool edge_live(const rk_channel *c) { return !c->src_gone && !c->dst_gone; }

static const rk_channel *port_owner(const rk_kernel *src, uint32_t port) {
    for (const rk_channel *c = registry; c; c = c->next)
        if (!c->src_gone && c->src == src && c->port == port) return c;
    return NULL;
}

static rk_status check_port_range(const rk_kernel *src, uint32_t port, const char *fn) {
    if (port >= RK_MAX_PORTS)
        return rk__fail(RK_INVALID_ARGUMENT, "%s: kernel '%s' has no port %u (ports are 0 .. %u)", fn, src->name,
                        port, RK_MAX_PORTS - 1u);
    return RK_OK;
}

/* registry_lock held. */
static rk_status check_port_free(const rk_kernel *src, uint32_t port, const char *fn) {
    const rk_channel *taken = port_owner(src, port);
    if (taken)
        return rk__fail(RK_INVALID_ARGUMENT, "%s: port %u of kernel '%s' is already connected to kernel '%s'", fn,
                        port, src->name, taken->dst_name);
    return RK_OK;
}

static uint32_t input_count(const rk_kernel *dst) {
    uint32_t n = 0;
    for (const rk_channel *c = registry; c; c = c->next)
        if (!c->dst_gone && c->dst == dst) n++;
    return n;
}

/* Is there a path of live HOLD edges from `from` to `to`? Writes the kernels
 * on it (from first) into path. Depth-first; depth bounded by the number of
 * channels, so a graph that already has (REPORT) cycles terminates. */
static bool hold_path(const rk_kernel *from, const rk_kernel *to, unsigned depth, unsigned max_depth,
                      const char **path, unsigned *path_len) {
    if (from == to) {
        *path_len = depth;
        return true;
    }
    if (depth >= max_depth) return false;
    for (const rk_channel *c = registry; c; c = c->next) {
        if (!edge_live(c) || c->desc.flow != RK_CHANNEL_HOLD || c->src != from) continue;
        path[depth] = c->dst_name;
        if (hold_path(c->dst, to, depth + 1, max_depth, path, path_len)) return true;
    }
    return false;
}

static unsigned channel_count(void) {
    unsigned n = 0;
    for (const rk_channel *c = registry; c; c = c->next) n++;
    return n;
}

/* ---- connect ---------------------------------------------------------------------- */

static rk_status resolve_desc(const rk_kernel *src, const rk_kernel *dst, const rk_channel_desc *in,
                              rk_channel_desc *out) {
    static const char fn[] = "rk_channel_connect";
    *out = *in;
    if (out->flow == RK_CHANNEL_FLOW_DEFAULT) out->flow = RK_CHANNEL_HOLD;
    if (out->replies == RK_CHANNEL_REPLIES_DEFAULT) out->replies = RK_CHANNEL_REPLY_FAILURES;
    if (out->capacity == 0) out->capacity = dst->desc.queue_capacity;
    if (out->flow != RK_CHANNEL_HOLD && out->flow != RK_CHANNEL_REPORT)
        return rk__fail(RK_INVALID_ARGUMENT, "%s: flow %d is not an rk_channel_flow", fn, (int)out->flow);
    if (out->replies != RK_CHANNEL_REPLY_FAILURES && out->replies != RK_CHANNEL_REPLY_ALL)
        return rk__fail(RK_INVALID_ARGUMENT, "%s: replies %d is not an rk_channel_replies", fn, (int)out->replies);
    if (out->capacity & (out->capacity - 1u) || out->capacity > RK_QUEUE_MAX_CAPACITY)
        return rk__fail(RK_BAD_CAPACITY, "%s: capacity %u of channel '%s' -> '%s' is not a power of two up to %u", fn,
                        out->capacity, src->name, dst->name, (unsigned)RK_QUEUE_MAX_CAPACITY);
    if (out->message_size != dst->desc.message_size)
        return rk__fail(RK_INVALID_ARGUMENT,
                        "%s: port message size %u of kernel '%s' differs from kernel '%s' message_size %u", fn,
                        out->message_size, src->name, dst->name, dst->desc.message_size);
    return RK_OK;
}

static rk_status check_state(const rk_kernel *k, const char *role) {
    int st = atomic_load(&((rk_kernel *)k)->state);
    if (st == RK_KERNEL_TERMINATING || st == RK_KERNEL_TERMINATED)
        return rk__fail(RK_TERMINATED, "rk_channel_connect: %s kernel '%s' is %s", role, k->name,
                        rk_kernel_state_name((rk_kernel_state)st));
    if (st == RK_KERNEL_FAILED)
        return rk__fail(RK_BAD_STATE, "rk_channel_connect: %s kernel '%s' has failed", role, k->name);
    return RK_OK;
}

/* The graph checks; registry_lock held. */
static rk_status check_graph(rk_kernel *src, uint32_t port, rk_kernel *dst, const rk_channel_desc *d) {
    static const char fn[] = "rk_channel_connect";
    rk_status s = check_port_free(src, port, fn);
    if (s != RK_OK) return s;
    if (input_count(dst) >= RK_MAX_INPUTS)
        return rk__fail(RK_INVALID_ARGUMENT, "%s: kernel '%s' already has %u input channels (the most)", fn,
                        dst->name, (unsigned)RK_MAX_INPUTS);
    if (d->flow != RK_CHANNEL_HOLD) return RK_OK;
    const char *path[RK_MAX_INPUTS * 64];
    unsigned len = 0, max_depth = channel_count() + 1;
    if (max_depth > sizeof path / sizeof path[0]) max_depth = sizeof path / sizeof path[0];
    if (!hold_path(dst, src, 0, max_depth, path, &len)) return RK_OK;
    char cycle[512];
    int at = snprintf(cycle, sizeof cycle, "'%s' -> '%s'", src->name, dst->name);
    for (unsigned i = 0; i < len && at > 0 && (size_t)at < sizeof cycle; i++)
        at += snprintf(cycle + at, sizeof cycle - (size_t)at, " -> '%s'", path[i]);
    return rk__fail(RK_INVALID_ARGUMENT,
                    "%s: channel would close a cycle of HOLD channels (%s), which could deadlock when full; "
                    "connect one channel of the cycle with RK_CHANNEL_REPORT",
                    fn, cycle);
}

rk_status rk__channel_create(const rk_channel_desc *d, uint32_t port, const char *src_name, const char *dst_name,
                             rk_channel **out) {
    rk_channel *ch = calloc(1, sizeof *ch);
    if (!ch) return rk__fail(RK_OUT_OF_MEMORY, "rk_channel_connect: out of memory");
    rk_status s = rk_queue_create(d->capacity, RK__CHANNEL_SLOT_HEADER + d->message_size, &ch->ring);
    if (s != RK_OK) {
        free(ch);
        return rk__fail(s, "rk_channel_connect: cannot create a ring of %u slots: %s", d->capacity,
                        rk_status_message(s));
    }
    ch->port = port;
    ch->desc = *d;
    snprintf(ch->src_name, sizeof ch->src_name, "%s", src_name);
    snprintf(ch->dst_name, sizeof ch->dst_name, "%s", dst_name);
    atomic_init(&ch->closed, RK_OK);
    atomic_init(&ch->emitting, 0);
    atomic_init(&ch->emitted, 0);
    atomic_init(&ch->delivered, 0);
    atomic_init(&ch->refused, 0);
    *out = ch;
    return RK_OK;
}

void rk__channel_destroy(rk_channel *ch) {
    if (!ch) return;
    if (ch->impl_free) ch->impl_free(ch); /* a backend's own channel memory (CUDA, WebGPU) */
    rk_queue_destroy(ch->ring);
    free(ch);
}

/* After the backend's attach: the channel joins the graph, or is freed when
 * the attach failed (registry_lock held). */
static rk_status enlist(rk_channel **ch, rk_status attached) {
    if (attached == RK_OK) {
        (*ch)->next = registry;
        registry = *ch;
    } else {
        rk__channel_destroy(*ch);
        *ch = NULL;
    }
    return attached;
}

static rk_status channel_new(rk_kernel *src, uint32_t port, rk_kernel *dst, const rk_channel_desc *d,
                             rk_channel **out) {
    rk_status s = rk__channel_create(d, port, src->name, dst->name, out);
    if (s != RK_OK) return s;
    (*out)->src = src;
    (*out)->dst = dst;
    return RK_OK;
}

rk_status rk_channel_connect(rk_kernel *src, uint32_t port, rk_kernel *dst, const rk_channel_desc *desc,
                             rk_channel **out) {
    static const char fn[] = "rk_channel_connect";
    if (out) *out = NULL;
    if (!src) return rk__fail(RK_NULL_ARGUMENT, "%s: src is NULL", fn);
    if (!dst) return rk__fail(RK_NULL_ARGUMENT, "%s: dst is NULL", fn);
    if (!desc) return rk__fail(RK_NULL_ARGUMENT, "%s: desc is NULL", fn);
    rk_status s = check_port_range(src, port, fn);
    if (s != RK_OK) return s;
    rk_channel_desc d;
    s = resolve_desc(src, dst, desc, &d);
    if (s == RK_OK) s = check_state(src, "source");
    if (s == RK_OK) s = check_state(dst, "destination");
    if (s != RK_OK) return s;
    /* Kernels of two runtimes (backends, devices) meet through the host relay. */
    bool relayed = src->ctx != dst->ctx || src->ring != dst->ring;
    if (relayed) s = rk__relay_check(src, dst, &d);
    if (s != RK_OK) return s;
    if (!relayed && !src->ring->channel_attach)
        return rk__fail(RK_UNSUPPORTED, "%s: the %s backend has no kernel-to-kernel channels yet ('%s' -> '%s')", fn,
                        rk_runtime_backend_name(src->runtime), src->name, dst->name);
    rk_channel *ch = NULL;
    pthread_mutex_lock(&registry_lock);
    s = check_graph(src, port, dst, &d);
    if (s == RK_OK) s = channel_new(src, port, dst, &d, &ch);
    if (s == RK_OK) {
        ch->id = next_channel_id++ & 0x7fffffu;
        s = enlist(&ch, relayed ? rk__relay_attach(src, dst, ch) : src->ring->channel_attach(src, dst, ch));
    }
    pthread_mutex_unlock(&registry_lock);
    if (s == RK_OK && out) *out = ch;
    return s;
}

/* ---- the channel's ring ------------------------------------------------------------- */

int rk__channel_emit(rk_channel *ch, const void *message, size_t size) {
    if (size != ch->desc.message_size) {
        atomic_fetch_add_explicit(&ch->refused, 1, memory_order_relaxed);
        return RK_EMIT_BAD_SIZE;
    }
    atomic_store(&ch->emitting, 1u);
    int closed = atomic_load(&ch->closed);
    int rc = closed;
    uint64_t i = 0;
    if (closed == RK_OK) rc = rk_queue_reserve(ch->ring, 1, &i) ? RK_EMIT_OK : RK_EMIT_FULL;
    if (rc == RK_EMIT_OK) {
        unsigned char *slot = rk_queue_producer_slot(ch->ring, i);
        uint64_t header[2] = {RK_CHANNEL_MESSAGE_ID(ch->id, ch->next_seq), 0};
        memcpy(slot, header, sizeof header);
        memcpy(slot + RK__CHANNEL_SLOT_HEADER, message, size);
        ch->next_seq++;
        atomic_fetch_add_explicit(&ch->emitted, 1, memory_order_relaxed); /* before the commit: never behind delivered */
        rk_queue_commit(ch->ring, 1);
        /* Inside the emitting window: the destination is not freed meanwhile. */
        if (ch->wake) ch->wake(ch->wake_arg);
    } else {
        atomic_fetch_add_explicit(&ch->refused, 1, memory_order_relaxed);
    }
    atomic_store(&ch->emitting, 0u);
    return rc;
}

uint32_t rk__channel_room(rk_channel *ch) {
    uint64_t first;
    return rk_queue_reserve(ch->ring, UINT32_MAX, &first);
}

void rk__channel_close(rk_channel *ch, rk_status why) {
    int open = RK_OK;
    atomic_compare_exchange_strong(&ch->closed, &open, (int)why);
    while (atomic_load(&ch->emitting)) sched_yield();
}

void rk__channel_release(rk_channel *ch, rk__channel_side side) {
    pthread_mutex_lock(&registry_lock);
    if (side == RK__CHANNEL_SRC) ch->src_gone = true;
    else ch->dst_gone = true;
    bool last = ch->src_gone && ch->dst_gone;
    if (last) {
        for (rk_channel **p = &registry; *p; p = &(*p)->next) {
            if (*p == ch) {
                *p = ch->next;
                break;
            }
        }
    }
    pthread_mutex_unlock(&registry_lock);
    if (last) rk__channel_destroy(ch);
}

rk_status rk_channel_set_host_replies(rk_kernel *k, rk_channel_replies which) {
    static const char fn[] = "rk_channel_set_host_replies";
    if (!k) return rk__fail(RK_NULL_ARGUMENT, "%s: k is NULL", fn);
    if (which == RK_CHANNEL_REPLIES_DEFAULT) which = RK_CHANNEL_REPLY_ALL;
    if (which != RK_CHANNEL_REPLY_ALL && which != RK_CHANNEL_REPLY_FAILURES)
        return rk__fail(RK_INVALID_ARGUMENT, "%s: %d is not an rk_channel_replies", fn, (int)which);
    if (!k->ring->set_host_replies)
        return rk__fail(RK_UNSUPPORTED, "%s: the %s backend has no kernel-to-kernel channels yet (kernel '%s')", fn,
                        rk_runtime_backend_name(k->runtime), k->name);
    return k->ring->set_host_replies(k, which == RK_CHANNEL_REPLY_FAILURES);
}

/* ---- statistics ------------------------------------------------------------------------ */

rk_status rk_channel_stats_get(rk_channel *ch, rk_channel_stats *out) {
    if (!ch) return rk__fail(RK_NULL_ARGUMENT, "rk_channel_stats_get: ch is NULL");
    if (!out) return rk__fail(RK_NULL_ARGUMENT, "rk_channel_stats_get: out is NULL");
    *out = (rk_channel_stats){
        .id = ch->id,
        .capacity = ch->desc.capacity,
        .depth = rk_queue_depth(ch->ring),
        .emitted = atomic_load_explicit(&ch->emitted, memory_order_relaxed),
        .delivered = atomic_load_explicit(&ch->delivered, memory_order_relaxed),
        .refused = atomic_load_explicit(&ch->refused, memory_order_relaxed),
        .closed = (rk_status)atomic_load(&ch->closed),
    };
    return ch->impl_stats ? ch->impl_stats(ch, out) : RK_OK;
}

/* ---- channels whose destination is outside this process (src/mpi) ---------------- */

/* Whether src's port could take a channel now (in range, not connected):
 * checked again when the channel is made, but a connect to another process
 * asks here first, so that it fails at once, before any message to its
 * peer, whose refusal for another reason would hide this one. */
rk_status rk__channel_port_free(rk_kernel *src, uint32_t port, const char *fn) {
    rk_status s = check_port_range(src, port, fn);
    if (s != RK_OK) return s;
    pthread_mutex_lock(&registry_lock);
    s = check_port_free(src, port, fn);
    pthread_mutex_unlock(&registry_lock);
    return s;
}

rk_status rk__channel_connect_remote(rk_kernel *src, uint32_t port, const rk_channel_desc *d, const char *dst_name,
                                     rk_channel **out) {
    static const char fn[] = "rk_mpi_connect";
    *out = NULL;
    rk_status s = check_port_range(src, port, fn);
    if (s == RK_OK) s = check_state(src, "source");
    if (s != RK_OK) return s;
    if (!src->ring->channel_attach_source)
        return rk__fail(RK_UNSUPPORTED, "%s: kernel '%s' (%s) cannot emit to another process yet", fn, src->name,
                        rk_runtime_backend_name(src->runtime));
    pthread_mutex_lock(&registry_lock);
    s = check_port_free(src, port, fn);
    rk_channel *ch = NULL;
    if (s == RK_OK) s = rk__channel_create(d, port, src->name, dst_name, &ch);
    if (s == RK_OK) {
        ch->src = src;
        ch->id = next_channel_id++ & 0x7fffffu;
        s = enlist(&ch, src->ring->channel_attach_source(src, ch));
    }
    pthread_mutex_unlock(&registry_lock);
    *out = ch;
    return s;
}

bool rk__channel_source_done(rk_channel *ch) {
    pthread_mutex_lock(&registry_lock);
    bool done = ch->src_gone;
    if (!done) {
        int st = atomic_load(&((rk_kernel *)ch->src)->state);
        done = st == RK_KERNEL_TERMINATED || st == RK_KERNEL_FAILED;
    }
    pthread_mutex_unlock(&registry_lock);
    return done;
}

uint32_t rk__channel_new_id(void) {
    pthread_mutex_lock(&registry_lock);
    uint32_t id = next_channel_id++ & 0x7fffffu;
    pthread_mutex_unlock(&registry_lock);
    return id;
}
