/* The links of an MPI endpoint: export and connect (user threads), the
 * protocol of one link (progress thread), and the lifecycle hooks of the
 * exported kernels. See mpi_internal.h for the wire messages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/kernel_internal.h"
#include "mpi_internal.h"

enum { DATA_BATCH = 256 };
static const uint64_t LOOKUP_EVERY_NS = 100000000u, CREDIT_EVERY_NS = 1000000u;

static bool out_live(const out_link *o) { return o->state == LINK_LOOKING || o->state == LINK_OPEN; }

static void cond_wait_until(rk_mpi *m, uint64_t deadline_ns) {
    /* The progress thread broadcasts every round; wake at least each 10 ms. */
    (void)deadline_ns;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 10000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    pthread_cond_timedwait(&m->changed, &m->lock, &ts);
}

/* ---- hooks of exported kernels ---------------------------------------------------- */

static bool in_drained(rk_mpi *m, const in_link *l) {
    (void)m;
    if (l->state != LINK_OPEN || !l->sink) return true;
    if (rk__relay_sink_state(l->sink) != RK_OK) return true;
    return l->fin && l->received == l->fin_total && rk__relay_sink_staged(l->sink) == 0;
}

static rk_status mpi_drain(void *owner, rk_kernel *dst, uint64_t deadline_ns) {
    rk_mpi *m = owner;
    pthread_mutex_lock(&m->lock);
    for (int e = 0; e < RK__MPI_MAX_EXPORTS; e++)
        if (m->exports[e].dst == dst) m->exports[e].name[0] = '\0'; /* withdrawn: no new links */
    rk_status s = RK_OK;
    for (;;) {
        const in_link *waiting = NULL;
        for (int i = 0; i < RK__MPI_MAX_LINKS; i++) {
            in_link *l = &m->in[i];
            if (l->state != LINK_OPEN || m->exports[l->exported].dst != dst) continue;
            l->drain = true;
            if (!in_drained(m, l)) waiting = l;
        }
        if (!waiting || m->stopped) break;
        if (rk__now_ns() >= deadline_ns) {
            s = rk__fail(RK_TIMEOUT,
                         "rk_kernel_terminate: kernel '%s' still waits for MPI rank %d (channel from kernel '%s'): "
                         "%llu messages arrived, %s",
                         dst->name, waiting->peer, waiting->why, (unsigned long long)waiting->received,
                         waiting->fin ? "more are on their way" : "the sender has not finished");
            break;
        }
        cond_wait_until(m, deadline_ns);
    }
    pthread_mutex_unlock(&m->lock);
    return s;
}

static void mpi_detach(void *owner, rk_kernel *dst) {
    rk_mpi *m = owner;
    pthread_mutex_lock(&m->lock);
    for (int i = 0; i < RK__MPI_MAX_LINKS; i++) {
        in_link *l = &m->in[i];
        if (l->state == LINK_FREE || m->exports[l->exported].dst != dst) continue;
        rk__relay_sink_close(l->sink);
        l->sink = NULL;
        if (l->state == LINK_OPEN) l->state = LINK_DONE;
    }
    for (int e = 0; e < RK__MPI_MAX_EXPORTS; e++) {
        if (m->exports[e].dst != dst) continue;
        m->exports[e].dst = NULL;
        m->exports[e].name[0] = '\0';
        m->exports[e].watched = false; /* the caller unwatches */
    }
    pthread_mutex_unlock(&m->lock);
}

static const rk__relay_hooks mpi_hooks = {.drain = mpi_drain, .detach = mpi_detach};

/* ---- export and connect (user threads) ------------------------------------------- */

static rk_status check_name(const char *fn, const char *name) {
    if (!name) return rk__fail(RK_NULL_ARGUMENT, "%s: name is NULL", fn);
    size_t n = strlen(name);
    if (n == 0 || n >= RK__MPI_NAME)
        return rk__fail(RK_INVALID_ARGUMENT, "%s: name '%s' must have 1 .. %d characters", fn, name,
                        RK__MPI_NAME - 1);
    return RK_OK;
}

rk_status rk__mpi_export(rk_mpi *m, rk_kernel *dst, const char *name) {
    static const char fn[] = "rk_mpi_export";
    if (!m) return rk__fail(RK_NULL_ARGUMENT, "%s: m is NULL", fn);
    if (!dst) return rk__fail(RK_NULL_ARGUMENT, "%s: dst is NULL", fn);
    rk_status s = check_name(fn, name);
    if (s != RK_OK) return s;
    int st = atomic_load(&dst->state);
    if (st == RK_KERNEL_TERMINATING || st == RK_KERNEL_TERMINATED || st == RK_KERNEL_FAILED)
        return rk__fail(RK_TERMINATED, "%s: kernel '%s' is %s", fn, dst->name,
                        rk_kernel_state_name((rk_kernel_state)st));
    pthread_mutex_lock(&m->lock);
    int slot = -1;
    bool watched = false;
    for (int e = 0; e < RK__MPI_MAX_EXPORTS && s == RK_OK; e++) {
        export_entry *x = &m->exports[e];
        if (x->dst && strcmp(x->name, name) == 0)
            s = rk__fail(RK_INVALID_ARGUMENT, "%s: name '%s' is exported already (kernel '%s')", fn, name,
                         x->dst->name);
        if (x->dst == dst && x->watched) watched = true;
        if (!x->dst && slot < 0) slot = e;
    }
    if (s == RK_OK && slot < 0)
        s = rk__fail(RK_INVALID_ARGUMENT, "%s: this endpoint exports %d kernels already (the most)", fn,
                     RK__MPI_MAX_EXPORTS);
    if (s == RK_OK) {
        snprintf(m->exports[slot].name, RK__MPI_NAME, "%s", name);
        m->exports[slot].dst = dst;
    }
    pthread_mutex_unlock(&m->lock);
    if (s != RK_OK || watched) return s;
    /* Outside m->lock: hooks run under the watch lock and take m->lock. */
    s = rk__relay_watch(dst, &mpi_hooks, m);
    pthread_mutex_lock(&m->lock);
    if (s == RK_OK) m->exports[slot].watched = true;
    else m->exports[slot].dst = NULL;
    pthread_mutex_unlock(&m->lock);
    return s;
}

static rk_status resolve(const char *fn, const rk_channel_desc *in, rk_channel_desc *out) {
    *out = *in;
    if (out->flow == RK_CHANNEL_FLOW_DEFAULT) out->flow = RK_CHANNEL_HOLD;
    if (out->replies == RK_CHANNEL_REPLIES_DEFAULT) out->replies = RK_CHANNEL_REPLY_FAILURES;
    if (out->flow != RK_CHANNEL_HOLD && out->flow != RK_CHANNEL_REPORT)
        return rk__fail(RK_INVALID_ARGUMENT, "%s: flow %d is not an rk_channel_flow", fn, (int)out->flow);
    if (out->replies != RK_CHANNEL_REPLY_FAILURES && out->replies != RK_CHANNEL_REPLY_ALL)
        return rk__fail(RK_INVALID_ARGUMENT, "%s: replies %d is not an rk_channel_replies", fn, (int)out->replies);
    if (out->message_size == 0 || out->message_size > 65536)
        return rk__fail(RK_INVALID_ARGUMENT, "%s: message_size %u is not 1 .. 65536", fn, out->message_size);
    if ((out->capacity & (out->capacity - 1u)) || out->capacity > RK_QUEUE_MAX_CAPACITY)
        return rk__fail(RK_BAD_CAPACITY, "%s: capacity %u is not 0 or a power of two up to %u", fn, out->capacity,
                        (unsigned)RK_QUEUE_MAX_CAPACITY);
    return RK_OK;
}

rk_status rk__mpi_connect(rk_mpi *m, rk_kernel *src, uint32_t port, const char *name, const rk_channel_desc *desc,
                          uint64_t timeout_ns, rk_channel **out) {
    static const char fn[] = "rk_mpi_connect";
    if (out) *out = NULL;
    if (!m) return rk__fail(RK_NULL_ARGUMENT, "%s: m is NULL", fn);
    if (!src) return rk__fail(RK_NULL_ARGUMENT, "%s: src is NULL", fn);
    if (!desc) return rk__fail(RK_NULL_ARGUMENT, "%s: desc is NULL", fn);
    rk_status s = check_name(fn, name);
    rk_channel_desc d;
    if (s == RK_OK) s = resolve(fn, desc, &d);
    if (s != RK_OK) return s;
    if (!src->ring->channel_attach_source)
        return rk__fail(RK_UNSUPPORTED, "%s: kernel '%s' (%s) cannot emit to another process yet", fn, src->name,
                        rk_runtime_backend_name(src->runtime));
    s = rk__channel_port_free(src, port, fn);
    if (s != RK_OK) return s;
    pthread_mutex_lock(&m->lock);
    out_link *o = NULL;
    for (int i = 0; i < RK__MPI_MAX_LINKS && !o; i++)
        if (m->out[i].state == LINK_FREE) o = &m->out[i];
    if (!o || m->stopping) {
        pthread_mutex_unlock(&m->lock);
        return rk__fail(RK_INVALID_ARGUMENT, "%s: %s", fn,
                        o ? "the endpoint is closing" : "this endpoint has the most channels already");
    }
    uint64_t now = rk__now_ns();
    *o = (out_link){.state = LINK_LOOKING, .desc = d, .peer = -1,
                    .deadline_ns = timeout_ns > UINT64_MAX - now ? UINT64_MAX : now + timeout_ns};
    snprintf(o->name, sizeof o->name, "%s", name);
    snprintf(o->src, sizeof o->src, "%s", src->name);
    while (o->state == LINK_LOOKING && !m->stopped) cond_wait_until(m, o->deadline_ns);
    if (o->state != LINK_OPEN) {
        s = rk__fail(o->result != RK_OK ? o->result : RK_BAD_STATE, "%s: %s (state %d)", fn, o->why, (int)o->state);
        o->state = LINK_FREE;
        pthread_mutex_unlock(&m->lock);
        return s;
    }
    rk_channel_desc cd = o->desc;
    pthread_mutex_unlock(&m->lock);

    char dst_name[RK__MPI_NAME + 16];
    snprintf(dst_name, sizeof dst_name, "%s", name);
    rk_channel *up = NULL;
    s = rk__channel_connect_remote(src, port, &cd, dst_name, &up);
    pthread_mutex_lock(&m->lock);
    if (s == RK_OK) o->up = up;
    else o->closing = true; /* the progress thread tells the peer: FIN of nothing */
    pthread_mutex_unlock(&m->lock);
    if (s == RK_OK && out) *out = up;
    return s;
}

/* ---- the protocol (progress thread, m->lock held) ---------------------------------- */

static void refuse(rk_mpi *m, int to, uint32_t link, rk_status why, uint32_t size, const char *name) {
    wire_header r = {.kind = WIRE_REFUSE, .link = link, .c = why, .d = size};
    snprintf(r.name, sizeof r.name, "%s", name);
    rk__mpi_send(m, to, &r, NULL, 0);
}

static void on_lookup(rk_mpi *m, int from, const wire_header *h, const unsigned char *payload, size_t bytes) {
    int e = 0;
    while (e < RK__MPI_MAX_EXPORTS && !(m->exports[e].dst && strcmp(m->exports[e].name, h->name) == 0)) e++;
    if (e == RK__MPI_MAX_EXPORTS) return; /* not here (yet): the sender asks again */
    rk_kernel *dst = m->exports[e].dst;
    int free_slot = -1;
    for (int i = 0; i < RK__MPI_MAX_LINKS; i++) {
        in_link *l = &m->in[i];
        if (l->state != LINK_FREE && l->peer == from && l->remote == h->link) {
            wire_header a = {.kind = WIRE_ACCEPT, .link = h->link, .a = (uint64_t)i,
                             .d = rk__relay_sink_capacity(l->sink)};
            rk__mpi_send(m, from, &a, NULL, 0); /* a repeated lookup */
            return;
        }
        if (l->state == LINK_FREE && free_slot < 0) free_slot = i;
    }
    if ((uint32_t)h->c != dst->desc.message_size) {
        refuse(m, from, h->link, RK_INVALID_ARGUMENT, dst->desc.message_size, dst->name);
        return;
    }
    if (free_slot < 0) {
        refuse(m, from, h->link, RK_INVALID_ARGUMENT, 0, dst->name);
        return;
    }
    char src_name[RK__MPI_NAME] = "";
    if (bytes) snprintf(src_name, sizeof src_name, "%.*s", (int)(bytes < RK__MPI_NAME ? bytes : RK__MPI_NAME - 1),
                        (const char *)payload);
    rk_channel_desc d = {.message_size = (uint32_t)h->c,
                         .capacity = h->d ? h->d : dst->desc.queue_capacity,
                         .flow = (rk_channel_flow)(h->b & 0xff),
                         .replies = (rk_channel_replies)((h->b >> 8) & 0xff)};
    char from_name[160];
    snprintf(from_name, sizeof from_name, "%s", src_name);
    rk__relay_sink *sink = NULL;
    rk_status s = rk__relay_sink_open(dst, rk__channel_new_id(), &d, from_name, &sink);
    if (s != RK_OK) {
        refuse(m, from, h->link, s, dst->desc.message_size, dst->name);
        return;
    }
    in_link *l = &m->in[free_slot];
    *l = (in_link){.state = LINK_OPEN, .peer = from, .remote = h->link, .exported = e, .sink = sink};
    snprintf(l->why, sizeof l->why, "%s", src_name); /* the source's name, for messages */
    wire_header a = {.kind = WIRE_ACCEPT, .link = h->link, .a = (uint64_t)free_slot, .d = d.capacity};
    rk__mpi_send(m, from, &a, NULL, 0);
}

static void on_accept(rk_mpi *m, int from, const wire_header *h) {
    out_link *o = &m->out[h->link];
    if (o->state == LINK_LOOKING) {
        o->state = LINK_OPEN;
        o->peer = from;
        o->remote = (uint32_t)h->a;
        o->desc.capacity = h->d;
        o->result = RK_OK;
        return;
    }
    if (o->peer == from && o->remote == (uint32_t)h->a) return; /* a repeated answer */
    /* Another rank exports the name too: that link ends at once. */
    wire_header f = {.kind = WIRE_FIN, .link = (uint32_t)h->a, .a = 0};
    rk__mpi_send(m, from, &f, NULL, 0);
}

static void on_refuse(rk_mpi *m, int from, const wire_header *h) {
    out_link *o = &m->out[h->link];
    if (o->state != LINK_LOOKING) return;
    o->state = LINK_FAILED;
    o->result = (rk_status)h->c;
    char name[RK__MPI_NAME], src[RK__MPI_NAME], why[sizeof o->why];
    memcpy(name, o->name, sizeof name);
    memcpy(src, o->src, sizeof src);
    if (h->c == RK_INVALID_ARGUMENT && h->d && h->d != o->desc.message_size)
        snprintf(why, sizeof why, "kernel '%s' (exported as '%s' on MPI rank %d) has message_size %u; kernel '%s' sends %u",
                 h->name, name, from, h->d, src, o->desc.message_size);
    else
        snprintf(why, sizeof why, "MPI rank %d refused a channel from kernel '%s' to kernel '%s' (exported as '%s'): %s",
                 from, src, h->name, name, rk_status_message((rk_status)h->c));
    memcpy(o->why, why, sizeof why);
}

static void on_data(rk_mpi *m, int from, const wire_header *h, const unsigned char *payload, size_t bytes) {
    in_link *l = &m->in[h->link];
    if (l->state == LINK_FREE || l->peer != from) return;
    uint32_t count = (uint32_t)h->c;
    l->received += count;
    if (!l->sink || l->state != LINK_OPEN) return; /* the kernel is gone: CLOSE went out */
    uint32_t size = (uint32_t)(bytes / (count ? count : 1));
    if (rk__relay_sink_room(l->sink) < count)
        rk__log(RK_LOG_ERROR, "mpi: rank %d sent beyond its credit on a channel to '%s'", from, l->why);
    rk__relay_sink_push(l->sink, payload, size, count);
}

void rk__mpi_on_message(rk_mpi *m, int from, const wire_header *h, const unsigned char *payload, size_t bytes) {
    bool out_ok = h->link < RK__MPI_MAX_LINKS, in_ok = out_ok;
    switch ((wire_kind)h->kind) {
    case WIRE_LOOKUP: on_lookup(m, from, h, payload, bytes); break;
    case WIRE_ACCEPT: if (out_ok) on_accept(m, from, h); break;
    case WIRE_REFUSE: if (out_ok) on_refuse(m, from, h); break;
    case WIRE_DATA: if (in_ok) on_data(m, from, h, payload, bytes); break;
    case WIRE_CREDIT:
        if (out_ok && m->out[h->link].peer == from && h->a > m->out[h->link].credit) m->out[h->link].credit = h->a;
        break;
    case WIRE_CLOSE:
        if (out_ok && m->out[h->link].peer == from && m->out[h->link].state == LINK_OPEN) {
            m->out[h->link].closing = true;
            if (m->out[h->link].up) rk__channel_close(m->out[h->link].up, (rk_status)h->c);
        }
        break;
    case WIRE_FIN:
        if (in_ok && m->in[h->link].peer == from) {
            m->in[h->link].fin = true;
            m->in[h->link].fin_total = h->a;
        }
        break;
    case WIRE_HEARTBEAT:
    case WIRE_BYE: break;
    }
}

/* ---- pumping ---------------------------------------------------------------------------- */

static void send_lookup(rk_mpi *m, int id, out_link *o) {
    wire_header h = {.kind = WIRE_LOOKUP, .link = (uint32_t)id, .c = (int32_t)o->desc.message_size,
                     .d = o->desc.capacity, .b = (uint64_t)o->desc.flow | ((uint64_t)o->desc.replies << 8)};
    snprintf(h.name, sizeof h.name, "%s", o->name);
    for (int p = 0; p < m->size; p++) rk__mpi_send(m, p, &h, o->src, strlen(o->src) + 1);
}

static bool pump_out(rk_mpi *m, int id, out_link *o, uint64_t now, unsigned char **tx, size_t *tx_cap) {
    if (o->state == LINK_LOOKING) {
        if (now >= o->deadline_ns || m->stopping) {
            o->state = LINK_FAILED;
            o->result = RK_TIMEOUT;
            snprintf(o->why, sizeof o->why, "no MPI rank exported a kernel named '%s' in time (%d ranks asked)",
                     o->name, m->size);
        } else if (now >= o->next_lookup_ns) {
            send_lookup(m, id, o);
            o->next_lookup_ns = now + LOOKUP_EVERY_NS;
        }
        return false;
    }
    if (o->state != LINK_OPEN) return false;
    if (!o->up) {
        if (!o->closing) return false; /* connect is attaching it */
        wire_header f = {.kind = WIRE_FIN, .link = o->remote, .a = 0};
        rk__mpi_send(m, o->peer, &f, NULL, 0);
        o->state = LINK_DONE;
        return true;
    }
    if (m->stopping) rk__channel_close(o->up, RK_TERMINATED);
    bool moved = false;
    uint32_t size = o->desc.message_size;
    while (o->sent < o->credit + o->desc.capacity) {
        uint64_t avail = o->credit + o->desc.capacity - o->sent;
        uint64_t first;
        uint32_t n = rk_queue_peek(o->up->ring, avail < DATA_BATCH ? (uint32_t)avail : DATA_BATCH, &first);
        if (n == 0) break;
        size_t bytes = (size_t)n * size;
        if (bytes > *tx_cap) {
            unsigned char *p = realloc(*tx, bytes);
            if (!p) break;
            *tx = p;
            *tx_cap = bytes;
        }
        for (uint32_t i = 0; i < n; i++)
            memcpy(*tx + (size_t)i * size,
                   (const unsigned char *)rk_queue_consumer_slot(o->up->ring, first + i) + RK__CHANNEL_SLOT_HEADER,
                   size);
        wire_header h = {.kind = WIRE_DATA, .link = o->remote, .a = o->sent, .c = (int32_t)n};
        if (rk__mpi_send(m, o->peer, &h, *tx, bytes) != RK_OK) break;
        rk_queue_release(o->up->ring, n);
        atomic_fetch_add_explicit(&o->up->delivered, n, memory_order_relaxed);
        o->sent += n;
        moved = true;
    }
    bool finished = atomic_load(&o->up->closed) != RK_OK || rk__channel_source_done(o->up);
    if (finished) {
        /* The closed/emitting handshake: nothing lands after close returns. */
        rk__channel_close(o->up, RK_TERMINATED);
        if (rk_queue_depth(o->up->ring) == 0) {
            wire_header f = {.kind = WIRE_FIN, .link = o->remote, .a = o->sent};
            rk__mpi_send(m, o->peer, &f, NULL, 0);
            o->fin_sent = true;
            o->state = LINK_DONE;
            moved = true;
        }
    }
    return moved;
}

static bool pump_in(rk_mpi *m, in_link *l, uint64_t now) {
    if (l->state != LINK_OPEN) return false;
    bool moved = false;
    rk_status st = l->sink ? rk__relay_sink_pump(l->sink) : RK_TERMINATED;
    if (st == RK_OK && l->sink) st = rk__relay_sink_state(l->sink);
    if ((st != RK_OK || l->drain) && !l->close_sent) {
        wire_header c = {.kind = WIRE_CLOSE, .link = l->remote, .c = st != RK_OK ? st : RK_TERMINATED};
        rk__mpi_send(m, l->peer, &c, NULL, 0);
        l->close_sent = true;
        moved = true;
    }
    if (l->sink) {
        /* A closed destination takes nothing more: what arrives after is
         * counted as received (and lost), so the sender is not stuck. */
        uint64_t taken = st == RK_OK ? rk__relay_sink_taken(l->sink) : l->received;
        uint32_t quarter = rk__relay_sink_capacity(l->sink) / 4u;
        if (taken != l->credit_sent && (taken - l->credit_sent >= quarter || now - l->credit_ns >= CREDIT_EVERY_NS)) {
            wire_header c = {.kind = WIRE_CREDIT, .link = l->remote, .a = taken};
            rk__mpi_send(m, l->peer, &c, NULL, 0);
            l->credit_sent = taken;
            l->credit_ns = now;
            moved = true;
        }
    }
    return moved;
}

bool rk__mpi_pump_links(rk_mpi *m, uint64_t now) {
    bool moved = false;
    for (int i = 0; i < RK__MPI_MAX_LINKS; i++) {
        if (m->out[i].state != LINK_FREE) moved |= pump_out(m, i, &m->out[i], now, &m->tx, &m->tx_capacity);
        if (m->in[i].state != LINK_FREE) moved |= pump_in(m, &m->in[i], now);
    }
    return moved;
}

/* ---- peers and the end ---------------------------------------------------------------- */

void rk__mpi_peer_lost(rk_mpi *m, int peer, rk_status why, const char *what) {
    for (int i = 0; i < RK__MPI_MAX_LINKS; i++) {
        out_link *o = &m->out[i];
        if (o->state == LINK_OPEN && o->peer == peer) {
            if (o->up) rk__channel_close(o->up, why);
            o->state = why == RK_TERMINATED ? LINK_DONE : LINK_FAILED;
            if (why != RK_TERMINATED) {
                char text[384];
                snprintf(text, sizeof text, "MPI peer rank %d %s; channel from kernel '%s' to '%s' closed (%llu sent)",
                         peer, what, o->src, o->name, (unsigned long long)o->sent);
                rk__mpi_note_failure(m, why, text);
                o->result = why;
                snprintf(o->why, sizeof o->why, "%s", text);
            }
        }
        in_link *l = &m->in[i];
        if (l->state == LINK_OPEN && l->peer == peer) {
            if (why == RK_TERMINATED) {
                /* It said goodbye: MPI keeps order, so all it sent is here. */
                l->fin = true;
                l->fin_total = l->received;
                continue;
            }
            l->state = LINK_FAILED;
            char text[1024]; /* room for both kernel names and the reason at their longest */
            snprintf(text, sizeof text, "MPI peer rank %d %s; channel from kernel '%s' to '%s' closed (%llu received)",
                     peer, what, l->why, m->exports[l->exported].name, (unsigned long long)l->received);
            rk__mpi_note_failure(m, why, text);
        }
    }
}

bool rk__mpi_peer_linked(rk_mpi *m, int peer) {
    for (int i = 0; i < RK__MPI_MAX_LINKS; i++) {
        if (m->out[i].state == LINK_OPEN && m->out[i].peer == peer) return true;
        if (m->in[i].state == LINK_OPEN && m->in[i].peer == peer && !m->in[i].fin) return true;
    }
    return false;
}

bool rk__mpi_links_finished(rk_mpi *m) {
    for (int i = 0; i < RK__MPI_MAX_LINKS; i++)
        if (out_live(&m->out[i])) return false;
    return true;
}

void rk__mpi_links_release(rk_mpi *m) {
    /* Unwatch first, without m->lock: a hook may be running. */
    for (int e = 0; e < RK__MPI_MAX_EXPORTS; e++) {
        pthread_mutex_lock(&m->lock);
        rk_kernel *dst = m->exports[e].watched ? m->exports[e].dst : NULL;
        bool again = false;
        for (int f = 0; f < e && dst; f++) again |= m->exports[f].dst == dst;
        pthread_mutex_unlock(&m->lock);
        if (dst && !again) rk__relay_unwatch(dst, m);
    }
    pthread_mutex_lock(&m->lock);
    for (int i = 0; i < RK__MPI_MAX_LINKS; i++) {
        out_link *o = &m->out[i];
        if (o->up) {
            rk__channel_close(o->up, RK_TERMINATED);
            rk__channel_release(o->up, RK__CHANNEL_DST);
            o->up = NULL;
        }
        rk__relay_sink_close(m->in[i].sink);
        m->in[i].sink = NULL;
    }
    pthread_mutex_unlock(&m->lock);
}
