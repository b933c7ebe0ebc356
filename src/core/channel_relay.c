/* The host relay: channels between kernels of different runtimes (see
 * channel_relay.h). Sinks into a destination, the lifecycle hooks, and the
 * in-process relay thread. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "channel_relay.h"
#include "kernel_internal.h"

enum { MOVE_BATCH = 256, IDLE_SPINS = 64 };

/* ---- sinks ------------------------------------------------------------------------- */

struct rk__relay_sink {
    rk_kernel *dst;
    uint32_t id, message_size;
    char from[96];
    rk_channel *ch;      /* native: the channel dst polls; the sink is its producer */
    rk_queue *staging;   /* host-queue path: messages waiting for dst's input queue */
    uint64_t next_seq;   /* host-queue path: the next message's sequence on the channel */
    _Atomic uint64_t taken;
    rk_status closed;
};

rk_status rk__relay_sink_open(rk_kernel *dst, uint32_t id, const rk_channel_desc *d, const char *from,
                              rk__relay_sink **out) {
    static const char fn[] = "rk_channel_connect";
    *out = NULL;
    if (!dst->ring->channel_attach_sink && d->replies != RK_CHANNEL_REPLY_ALL)
        return rk__fail(RK_UNSUPPORTED,
                        "%s: kernel '%s' (%s) takes relayed messages through its host queue and answers each one "
                        "to the host; connect '%s' -> '%s' with RK_CHANNEL_REPLY_ALL",
                        fn, dst->name, rk_runtime_backend_name(dst->runtime), from, dst->name);
    rk__relay_sink *s = calloc(1, sizeof *s);
    if (!s) return rk__fail(RK_OUT_OF_MEMORY, "%s: out of memory", fn);
    s->dst = dst;
    s->id = id;
    s->message_size = d->message_size;
    snprintf(s->from, sizeof s->from, "%s", from);
    atomic_init(&s->taken, 0);
    rk_status st;
    if (dst->ring->channel_attach_sink) {
        st = rk__channel_create(d, 0, from, dst->name, &s->ch);
        if (st == RK_OK) {
            s->ch->id = id;
            st = dst->ring->channel_attach_sink(dst, s->ch);
            if (st != RK_OK) rk__channel_destroy(s->ch);
        }
    } else {
        st = rk_queue_create(d->capacity, d->message_size, &s->staging);
        if (st != RK_OK) st = rk__fail(st, "%s: cannot create a relay ring of %u slots", fn, d->capacity);
    }
    if (st != RK_OK) {
        free(s);
        return st;
    }
    *out = s;
    return RK_OK;
}

uint32_t rk__relay_sink_room(rk__relay_sink *s) {
    if (s->closed != RK_OK) return 0;
    if (s->ch) return rk__channel_room(s->ch);
    return rk_queue_capacity(s->staging) - rk_queue_depth(s->staging);
}

rk_status rk__relay_sink_push(rk__relay_sink *s, const unsigned char *msgs, size_t stride, uint32_t count) {
    for (uint32_t i = 0; i < count && s->closed == RK_OK; i++) {
        const unsigned char *m = msgs + (size_t)i * stride;
        if (s->ch) {
            int rc = rk__channel_emit(s->ch, m, s->message_size);
            /* Room was checked: a refusal means the destination closed. */
            if (rc != RK_EMIT_OK) s->closed = rc == RK_EMIT_FULL ? RK_INTERNAL : (rk_status)rc;
        } else if (rk_queue_try_push(s->staging, m, s->message_size) != RK_OK) {
            s->closed = RK_INTERNAL;
        }
    }
    return s->closed;
}

rk_status rk__relay_sink_pump(rk__relay_sink *s) {
    if (s->ch || s->closed != RK_OK) return s->closed;
    for (;;) {
        uint64_t first;
        uint32_t n = rk_queue_peek(s->staging, MOVE_BATCH, &first);
        if (n == 0) return RK_OK;
        /* Slots are contiguous up to the end of the ring. */
        uint32_t to_end = rk_queue_capacity(s->staging) - (uint32_t)(first & (rk_queue_capacity(s->staging) - 1u));
        if (n > to_end) n = to_end;
        size_t accepted = 0;
        rk_status st = rk__kernel_relay_send(s->dst, rk_queue_consumer_slot(s->staging, first),
                                             s->staging->slot_stride, n, RK_CHANNEL_MESSAGE_ID(s->id, s->next_seq),
                                             &accepted);
        if (accepted) {
            rk_queue_release(s->staging, (uint32_t)accepted);
            s->next_seq += accepted;
            atomic_fetch_add(&s->taken, accepted);
        }
        if (st != RK_OK) {
            s->closed = st == RK_TERMINATED ? RK_TERMINATED : RK_DEVICE_FAULT;
            return s->closed;
        }
        if (accepted < n) return RK_OK;
    }
}

uint64_t rk__relay_sink_taken(rk__relay_sink *s) {
    return s->ch ? atomic_load_explicit(&s->ch->delivered, memory_order_relaxed) : atomic_load(&s->taken);
}

uint32_t rk__relay_sink_capacity(rk__relay_sink *s) {
    return s ? rk_queue_capacity(s->ch ? s->ch->ring : s->staging) : 0;
}

rk_status rk__relay_sink_state(rk__relay_sink *s) {
    if (s->closed == RK_OK && s->ch) return (rk_status)atomic_load(&s->ch->closed);
    return s->closed;
}

uint32_t rk__relay_sink_staged(rk__relay_sink *s) {
    return rk_queue_depth(s->ch ? s->ch->ring : s->staging);
}

void rk__relay_sink_close(rk__relay_sink *s) {
    if (!s) return;
    if (s->ch) rk__channel_release(s->ch, RK__CHANNEL_SRC);
    rk_queue_destroy(s->staging);
    free(s);
}

uint32_t rk__relay_move(rk_channel *up, rk__relay_sink *sink, uint32_t max) {
    uint32_t room = rk__relay_sink_room(sink);
    if (room < max) max = room;
    if (max > MOVE_BATCH) max = MOVE_BATCH;
    uint64_t first;
    uint32_t n = rk_queue_peek(up->ring, max, &first);
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *slot = rk_queue_consumer_slot(up->ring, first + i);
        /* Counted before the destination can see it: a reply the host has
         * received is never ahead of the count (the push publishes it). */
        atomic_fetch_add_explicit(&up->delivered, 1, memory_order_relaxed);
        if (rk__relay_sink_push(sink, slot + RK__CHANNEL_SLOT_HEADER, 0, 1) != RK_OK) {
            atomic_fetch_sub_explicit(&up->delivered, 1, memory_order_relaxed);
            n = i;
            break;
        }
    }
    if (n) rk_queue_release(up->ring, n);
    return n;
}

/* ---- lifecycle hooks ------------------------------------------------------------- */

typedef struct watch {
    rk_kernel *dst;
    const rk__relay_hooks *hooks;
    void *owner;
    struct watch *next;
} watch;

/* Held while drain hooks run (never while the registry lock is needed):
 * relay and progress threads never take it. */
static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static watch *watches;

rk_status rk__relay_watch(rk_kernel *dst, const rk__relay_hooks *hooks, void *owner) {
    watch *w = malloc(sizeof *w);
    if (!w) return rk__fail(RK_OUT_OF_MEMORY, "relay: out of memory");
    *w = (watch){.dst = dst, .hooks = hooks, .owner = owner};
    pthread_mutex_lock(&watch_lock);
    w->next = watches;
    watches = w;
    pthread_mutex_unlock(&watch_lock);
    return RK_OK;
}

static void unwatch_locked(rk_kernel *dst, void *owner) {
    for (watch **p = &watches; *p; p = &(*p)->next) {
        if ((*p)->dst == dst && (*p)->owner == owner) {
            watch *w = *p;
            *p = w->next;
            free(w);
            return;
        }
    }
}

void rk__relay_unwatch(rk_kernel *dst, void *owner) {
    pthread_mutex_lock(&watch_lock);
    unwatch_locked(dst, owner);
    pthread_mutex_unlock(&watch_lock);
}

rk_status rk__relay_before_terminate(rk_kernel *k, uint64_t timeout_ns) {
    uint64_t now = rk__now_ns();
    uint64_t deadline = timeout_ns > UINT64_MAX - now ? UINT64_MAX : now + timeout_ns;
    rk_status s = RK_OK;
    pthread_mutex_lock(&watch_lock);
    for (watch *w = watches; w && s == RK_OK; w = w->next)
        if (w->dst == k) s = w->hooks->drain(w->owner, k, deadline);
    pthread_mutex_unlock(&watch_lock);
    return s;
}

void rk__relay_before_destroy(rk_kernel *k) {
    /* Unlinked under the lock, detached outside it: a detach takes the
     * channel registry's lock, which connect holds while it adds a watch. */
    watch *mine = NULL;
    pthread_mutex_lock(&watch_lock);
    watch **p = &watches;
    while (*p) {
        watch *w = *p;
        if (w->dst != k) {
            p = &w->next;
            continue;
        }
        *p = w->next;
        w->next = mine;
        mine = w;
    }
    pthread_mutex_unlock(&watch_lock);
    while (mine) {
        watch *w = mine;
        mine = w->next;
        w->hooks->detach(w->owner, k); /* must not unwatch: done here */
        free(w);
    }
}

/* ---- the in-process relay -------------------------------------------------------- */

typedef struct relay {
    rk_channel *up;
    rk__relay_sink *sink;
    pthread_t thread;
    bool started;
    _Atomic bool stop, sleeping;
    bool reported; /* the sink's closing was logged */
    pthread_mutex_t lock; /* the sink, between the thread and detach */
    pthread_mutex_t sleep_lock;
    pthread_cond_t wake;
} relay;

static void relay_wake(void *arg) {
    relay *r = arg;
    if (!atomic_load(&r->sleeping)) return;
    pthread_mutex_lock(&r->sleep_lock);
    pthread_cond_signal(&r->wake);
    pthread_mutex_unlock(&r->sleep_lock);
}

static void relay_sleep(relay *r) {
    pthread_mutex_lock(&r->sleep_lock);
    atomic_store(&r->sleeping, true);
    if (rk_queue_depth(r->up->ring) == 0 && !atomic_load(&r->stop)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 1000000; /* also polls: a host-queue sink may free up */
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&r->wake, &r->sleep_lock, &ts);
    }
    atomic_store(&r->sleeping, false);
    pthread_mutex_unlock(&r->sleep_lock);
}

/* One step under r->lock: move, pump, and close upstream if the sink closed. */
static uint32_t relay_step(relay *r) {
    uint32_t moved = rk__relay_move(r->up, r->sink, UINT32_MAX);
    rk_status st = rk__relay_sink_pump(r->sink);
    if (st == RK_OK) st = rk__relay_sink_state(r->sink); /* the destination closed its input */
    if (st != RK_OK) {
        /* Emits now report why; what is still upstream stays counted
         * (emitted - delivered in rk_channel_stats). */
        rk__channel_close(r->up, st);
        if (!r->reported) {
            r->reported = true;
            uint32_t left = rk_queue_depth(r->up->ring);
            if (left)
                rk__log(RK_LOG_ERROR, "channel %u '%s' -> '%s': destination %s; %u relayed messages not delivered",
                        r->up->id, r->up->src_name, r->up->dst_name, rk_status_name(st), left);
        }
    }
    return moved;
}

static void *relay_main(void *arg) {
    relay *r = arg;
    unsigned idle = 0;
    while (!atomic_load(&r->stop)) {
        pthread_mutex_lock(&r->lock);
        uint32_t moved = relay_step(r);
        /* Staged for a host queue that is full: poll it again soon. */
        uint32_t staged = r->sink->closed == RK_OK && !r->sink->ch ? rk__relay_sink_staged(r->sink) : 0;
        pthread_mutex_unlock(&r->lock);
        if (moved) {
            idle = 0;
        } else if (++idle < IDLE_SPINS || staged) {
            sched_yield();
        } else {
            relay_sleep(r);
        }
    }
    return NULL;
}

static rk_status relay_drain(void *owner, rk_kernel *dst, uint64_t deadline_ns) {
    relay *r = owner;
    rk__channel_close(r->up, RK_TERMINATED);
    for (;;) {
        pthread_mutex_lock(&r->lock);
        uint32_t left = rk_queue_depth(r->up->ring);
        uint32_t staged = r->sink->ch ? 0 : rk__relay_sink_staged(r->sink);
        rk_status st = r->sink->closed;
        pthread_mutex_unlock(&r->lock);
        if ((left == 0 && staged == 0) || st != RK_OK) return RK_OK;
        if (rk__now_ns() >= deadline_ns)
            return rk__fail(RK_TIMEOUT, "rk_kernel_terminate: kernel '%s' still waits for %u messages relayed from '%s'",
                            dst->name, left + staged, r->up->src_name);
        relay_wake(r);
        sched_yield();
    }
}

static void relay_detach(void *owner, rk_kernel *dst) {
    (void)dst;
    relay *r = owner;
    atomic_store(&r->stop, true);
    relay_wake(r);
    pthread_join(r->thread, NULL);
    rk__channel_close(r->up, RK_TERMINATED);
    rk__relay_sink_close(r->sink);
    rk__channel_release(r->up, RK__CHANNEL_DST);
    pthread_mutex_destroy(&r->lock);
    pthread_mutex_destroy(&r->sleep_lock);
    pthread_cond_destroy(&r->wake);
    free(r);
}

static const rk__relay_hooks relay_hooks = {.drain = relay_drain, .detach = relay_detach};

rk_status rk__relay_check(rk_kernel *src, rk_kernel *dst, const rk_channel_desc *d) {
    static const char fn[] = "rk_channel_connect";
    if (!src->ring->channel_attach_source)
        return rk__fail(RK_UNSUPPORTED,
                        "%s: kernel '%s' (%s) cannot emit to another runtime's kernel '%s' (%s): its backend has no "
                        "relay source yet",
                        fn, src->name, rk_runtime_backend_name(src->runtime), dst->name,
                        rk_runtime_backend_name(dst->runtime));
    if (!dst->ring->channel_attach_sink && d->replies != RK_CHANNEL_REPLY_ALL)
        return rk__fail(RK_UNSUPPORTED,
                        "%s: kernel '%s' (%s) takes relayed messages through its host queue and answers each one "
                        "to the host; connect '%s' -> '%s' with RK_CHANNEL_REPLY_ALL",
                        fn, dst->name, rk_runtime_backend_name(dst->runtime), src->name, dst->name);
    return RK_OK;
}

rk_status rk__relay_attach(rk_kernel *src, rk_kernel *dst, rk_channel *ch) {
    static const char fn[] = "rk_channel_connect";
    relay *r = calloc(1, sizeof *r);
    if (!r) return rk__fail(RK_OUT_OF_MEMORY, "%s: out of memory", fn);
    r->up = ch;
    rk_status s = rk__relay_sink_open(dst, ch->id, &ch->desc, src->name, &r->sink);
    if (s != RK_OK) {
        free(r);
        return s;
    }
    pthread_mutex_init(&r->lock, NULL);
    pthread_mutex_init(&r->sleep_lock, NULL);
    pthread_cond_init(&r->wake, NULL);
    ch->wake = relay_wake;
    ch->wake_arg = r;
    s = rk__relay_watch(dst, &relay_hooks, r);
    if (s == RK_OK) r->started = pthread_create(&r->thread, NULL, relay_main, r) == 0;
    if (s == RK_OK && !r->started) {
        rk__relay_unwatch(dst, r);
        s = rk__fail(RK_OUT_OF_MEMORY, "%s: cannot start the relay thread for '%s' -> '%s'", fn, src->name, dst->name);
    }
    if (s == RK_OK) s = src->ring->channel_attach_source(src, ch);
    if (s == RK_OK) return RK_OK;
    if (r->started) {
        rk__relay_unwatch(dst, r);
        atomic_store(&r->stop, true);
        relay_wake(r);
        pthread_join(r->thread, NULL);
    }
    rk__channel_close(r->sink->ch ? r->sink->ch : ch, RK_TERMINATED);
    rk__relay_sink_close(r->sink);
    pthread_mutex_destroy(&r->lock);
    pthread_mutex_destroy(&r->sleep_lock);
    pthread_cond_destroy(&r->wake);
    free(r);
    return s;
}
