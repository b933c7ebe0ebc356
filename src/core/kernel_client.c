/* Many clients per kernel: rk_kernel_call, rk_kernel_submit, rk_call_wait.
 *
 * Each call is a handle registered under its request id in a table. Sending
 * and registering happen under one lock, and replies are handed out under
 * the same lock after they were taken, so a reply can never be looked up
 * before its call is registered.
 *
 * No router thread: a waiting caller that finds nobody collecting becomes
 * the leader. It takes replies off the kernel in batches (the raw path's
 * rk__kernel_take_replies) and hands each to its handle, waking the owner if
 * it sleeps. When its own reply came (or its timeout passed) it leaves and
 * wakes one sleeping waiter, which becomes the next leader. Followers sleep
 * on their handle's condition variable, with a periodic look as a safety
 * net. A sender whose queue is full helps collect, so callers that all wait
 * to send cannot starve a kernel whose output queue is full. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel_internal.h"
#include "kernel_wait.h"

enum {
    REAP_BATCH = 64,          /* replies taken per visit by the leader */
    FOLLOWER_LOOK_NS = 20000000, /* a sleeping follower looks again this often */
};

typedef enum call_state { CALL_FREE, CALL_PENDING, CALL_DONE, CALL_ENDED } call_state;

struct rk_call {
    struct rk__clients *owner;
    uint64_t id;
    _Atomic int state;          /* call_state; DONE/ENDED published with release */
    _Atomic bool waiting;       /* one waiter at a time */
    /* Under the clients lock. */
    bool released;              /* given back while pending: freed when its reply comes */
    bool sleeping;              /* in the sleepers list */
    struct rk_call *sleep_prev, *sleep_next;
    struct rk_call *next;       /* table chain, or free list */
    struct rk_call *all_next;   /* every handle ever made, for destroy */
    pthread_cond_t cond;
    /* Written before state becomes DONE or ENDED. */
    rk_status end_status;
    char end_reason[160];
    rk_reply_info info;
    unsigned char reply[];      /* reply_size bytes */
};

typedef struct rk__clients {
    rk__kernel_core *core;
    pthread_mutex_t lock;
    /* Under lock. */
    bool leader;                /* someone collects replies */
    rk_call **table;            /* pending calls by id & mask, chained */
    size_t mask;
    rk_call *free_list, *all;
    rk_call *sleepers;          /* waiters asleep: the next leader comes from here */
    _Atomic unsigned waiters;   /* threads inside a wait, for the cores warning */
    uint64_t discarded;
    /* The leader's scratch space. */
    unsigned char *batch;
    rk_reply_info infos[REAP_BATCH];
} rk__clients;

/* ---- setup ------------------------------------------------------------------- */

rk_status rk__clients_validate_desc(const rk_kernel_desc *d) {
    if (d->ordered && d->workers > 1)
        return rk__fail(RK_INVALID_ARGUMENT,
                        "rk_kernel_launch: ordered kernels run one handler at a time, but workers is %u (use 0 or 1)",
                        d->workers);
    return RK_OK;
}

static void free_clients(rk__clients *cl) {
    for (rk_call *call = cl->all; call;) {
        rk_call *next = call->all_next;
        pthread_cond_destroy(&call->cond);
        free(call);
        call = next;
    }
    pthread_mutex_destroy(&cl->lock);
    free(cl->table);
    free(cl->batch);
    free(cl);
}

void rk__clients_free(rk__kernel_core *c) {
    rk__clients *cl = atomic_load(&c->clients);
    if (cl) free_clients(cl);
}

/* The kernel's call machinery, made by the first call. */
static rk_status clients_of(rk__kernel_core *c, const char *fn, rk__clients **out) {
    rk__clients *cl = atomic_load_explicit(&c->clients, memory_order_acquire);
    if (cl) {
        *out = cl;
        return RK_OK;
    }
    const rk_kernel *k = &c->k;
    cl = calloc(1, sizeof *cl);
    /* Pending calls are at most what the queues hold; a chain absorbs more. */
    size_t buckets = 64;
    while (buckets < 2u * k->desc.queue_capacity && buckets < ((size_t)1 << 16)) buckets *= 2;
    if (cl) {
        cl->table = calloc(buckets, sizeof *cl->table);
        cl->batch = malloc((size_t)REAP_BATCH * (k->desc.reply_size ? k->desc.reply_size : 1));
    }
    if (!cl || !cl->table || !cl->batch) {
        if (cl) free(cl->table), free(cl->batch);
        free(cl);
        return rk__fail(RK_OUT_OF_MEMORY, "%s: kernel '%s': no memory for the call table", fn, k->name);
    }
    cl->core = c;
    cl->mask = buckets - 1;
    pthread_mutex_init(&cl->lock, NULL);
    rk__clients *expected = NULL;
    if (!atomic_compare_exchange_strong(&c->clients, &expected, cl)) {
        free_clients(cl); /* another thread's first call won */
        cl = expected;
    }
    *out = cl;
    return RK_OK;
}

/* A handle from the free list or a new one. Caller holds the lock. */
static rk_call *call_alloc(rk__clients *cl) {
    rk_call *call = cl->free_list;
    if (call) {
        cl->free_list = call->next;
    } else {
        call = calloc(1, sizeof *call + cl->core->k.desc.reply_size);
        if (!call) return NULL;
        call->owner = cl;
        pthread_condattr_t attr;
        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&call->cond, &attr);
        pthread_condattr_destroy(&attr);
        call->all_next = cl->all;
        cl->all = call;
    }
    call->next = NULL;
    call->released = call->sleeping = false;
    call->end_status = RK_OK;
    call->end_reason[0] = '\0';
    atomic_store_explicit(&call->waiting, false, memory_order_relaxed);
    atomic_store_explicit(&call->state, CALL_PENDING, memory_order_relaxed);
    return call;
}

/* Caller holds the lock. */
static void call_free(rk__clients *cl, rk_call *call) {
    atomic_store_explicit(&call->state, CALL_FREE, memory_order_relaxed);
    call->next = cl->free_list;
    cl->free_list = call;
}

/* Removes and returns the pending call with this id, or NULL. Caller holds
 * the lock. */
static rk_call *table_take(rk__clients *cl, uint64_t id) {
    for (rk_call **p = &cl->table[id & cl->mask]; *p; p = &(*p)->next) {
        if ((*p)->id == id) {
            rk_call *call = *p;
            *p = call->next;
            call->next = NULL;
            return call;
        }
    }
    return NULL;
}

/* ---- handing replies to their calls --------------------------------------------- */

static void finish(rk__clients *cl, rk_call *call, call_state state) {
    if (call->released) {
        if (state == CALL_DONE) cl->discarded++;
        call_free(cl, call);
        return;
    }
    atomic_store_explicit(&call->state, state, memory_order_release);
    if (call->sleeping) pthread_cond_signal(&call->cond);
}

static void dispatch(rk__clients *cl, size_t n) {
    size_t rsize = cl->core->k.desc.reply_size;
    pthread_mutex_lock(&cl->lock);
    for (size_t i = 0; i < n; i++) {
        rk_call *call = table_take(cl, cl->infos[i].id);
        if (!call) {
            cl->discarded++; /* a raw send's reply */
            continue;
        }
        if (!call->released) {
            if (rsize) memcpy(call->reply, cl->batch + i * rsize, rsize);
            call->info = cl->infos[i];
        }
        finish(cl, call, CALL_DONE);
    }
    pthread_mutex_unlock(&cl->lock);
}

/* No reply can come any more: every pending call ends with status. */
static void end_all(rk__clients *cl, rk_status status, const char *reason) {
    pthread_mutex_lock(&cl->lock);
    for (size_t b = 0; b <= cl->mask; b++) {
        while (cl->table[b]) {
            rk_call *call = cl->table[b];
            cl->table[b] = call->next;
            call->next = NULL;
            call->end_status = status;
            snprintf(call->end_reason, sizeof call->end_reason, "%s", reason);
            finish(cl, call, CALL_ENDED);
        }
    }
    pthread_mutex_unlock(&cl->lock);
}

/* Takes what replies there are and hands them out. Returns how many. */
static size_t reap_once(rk__clients *cl, rk_status *status) {
    size_t n = 0;
    *status = rk__kernel_take_replies(cl->core, cl->batch, cl->core->k.desc.reply_size, cl->infos, REAP_BATCH, &n);
    if (n) dispatch(cl, n);
    return n;
}

/* After a look that found nothing: has the kernel stopped for good? Then
 * ends every pending call and returns true. Mirrors receive's rules. */
static bool kernel_gone(rk__clients *cl, bool poll) {
    rk__kernel_core *c = cl->core;
    rk__control ctl;
    memset(&ctl, 0, sizeof ctl);
    if (poll) rk__kernel_refresh(c, &ctl);
    int st = atomic_load(&c->k.state);
    char reason[160];
    if (st == RK_KERNEL_TERMINATED && rk__kernel_held_pending(c) == 0) {
        snprintf(reason, sizeof reason, "kernel '%.64s' terminated without answering this request", c->k.name);
        end_all(cl, RK_TERMINATED, reason);
        return true;
    }
    if (poll && st == RK_KERNEL_FAILED && ctl.input_depth == 0 && ctl.output_depth == 0 &&
        rk__kernel_held_pending(c) == 0) {
        rk_status s;
        while (reap_once(cl, &s)) { /* one last look, ordered after the poll */
        }
        snprintf(reason, sizeof reason, "kernel '%.40s' failed: %.100s", c->k.name, c->failure_reason);
        end_all(cl, (rk_status)atomic_load(&c->failure), reason);
        return true;
    }
    return false;
}

static bool settled(const rk_call *call) {
    return atomic_load_explicit(&call->state, memory_order_acquire) != CALL_PENDING;
}

/* With the seat empty, wakes one sleeper whose reply has not come, to take
 * it (one whose reply came is about to leave anyway). Under the lock. */
static void wake_next_leader(rk__clients *cl) {
    if (cl->leader) return;
    for (rk_call *s = cl->sleepers; s; s = s->sleep_next) {
        if (!settled(s)) {
            pthread_cond_signal(&s->cond);
            return;
        }
    }
}

/* Leaves the leader's seat and wakes a sleeping waiter to take it. */
static void resign(rk__clients *cl) {
    pthread_mutex_lock(&cl->lock);
    cl->leader = false;
    wake_next_leader(cl);
    pthread_mutex_unlock(&cl->lock);
}

/* The sleepers list, under the lock. */
static void sleep_push(rk__clients *cl, rk_call *call) {
    call->sleeping = true;
    call->sleep_prev = NULL;
    call->sleep_next = cl->sleepers;
    if (cl->sleepers) cl->sleepers->sleep_prev = call;
    cl->sleepers = call;
}

static void sleep_pop(rk__clients *cl, rk_call *call) {
    if (call->sleep_prev) call->sleep_prev->sleep_next = call->sleep_next;
    else cl->sleepers = call->sleep_next;
    if (call->sleep_next) call->sleep_next->sleep_prev = call->sleep_prev;
    call->sleeping = false;
}

/* Collects replies until call settles or the deadline passes. */
static void lead(rk__clients *cl, rk_call *call, uint64_t deadline) {
    rk__backoff b;
    bool waiting = false;
    while (!settled(call)) {
        rk_status s;
        size_t n = reap_once(cl, &s);
        if (n) {
            if (waiting) rk__backoff_reset(&b);
            continue;
        }
        bool poll = !waiting || rk__backoff_should_poll(&b);
        if (kernel_gone(cl, poll)) break;
        if (!waiting) {
            uint64_t now = rk__now_ns();
            rk__backoff_init(&b, deadline > now ? deadline - now : 0);
            waiting = true;
        }
        if (!rk__backoff_wait(&b)) break;
    }
    resign(cl);
}

/* Sleeps until call settles, the leader leaves, a periodic look is due or
 * the deadline passes. Becomes the leader instead when there is none. */
static void wait_turn(rk__clients *cl, rk_call *call, uint64_t deadline) {
    pthread_mutex_lock(&cl->lock);
    if (!cl->leader) {
        cl->leader = true;
        pthread_mutex_unlock(&cl->lock);
        lead(cl, call, deadline);
        return;
    }
    uint64_t now = rk__now_ns();
    if (!settled(call) && now < deadline) {
        uint64_t until = deadline - now < FOLLOWER_LOOK_NS ? deadline : now + FOLLOWER_LOOK_NS;
        /* rk__now_ns is CLOCK_MONOTONIC, the condition's clock. */
        struct timespec ts = {.tv_sec = (time_t)(until / 1000000000u), .tv_nsec = (long)(until % 1000000000u)};
        sleep_push(cl, call);
        pthread_cond_timedwait(&call->cond, &cl->lock, &ts);
        sleep_pop(cl, call);
    }
    /* Leaving (reply came, or time is up) while the seat is empty: the
     * wake-up meant for a new leader may have been this one. Pass it on. */
    if (settled(call) || rk__now_ns() >= deadline) wake_next_leader(cl);
    pthread_mutex_unlock(&cl->lock);
}

/* ---- the API ---------------------------------------------------------------------- */

static uint64_t deadline_of(uint64_t timeout_ns) {
    uint64_t now = rk__now_ns();
    return timeout_ns > UINT64_MAX - now ? UINT64_MAX : now + timeout_ns;
}

static rk_status submit(rk_kernel *k, const char *fn, const void *request, size_t size, uint64_t timeout_ns,
                        rk_call **out) {
    rk__kernel_core *c = rk__core_of(k);
    rk__clients *cl = NULL;
    rk_status s = clients_of(c, fn, &cl);
    if (s != RK_OK) return s;
    rk__backoff b;
    bool waiting = false;
    for (;;) {
        pthread_mutex_lock(&cl->lock);
        rk_call *call = call_alloc(cl);
        if (!call) {
            pthread_mutex_unlock(&cl->lock);
            return rk__fail(RK_OUT_OF_MEMORY, "%s: kernel '%s': no memory for a call handle", fn, k->name);
        }
        uint64_t id = 0;
        s = rk_kernel_send(k, request, size, RK_NO_WAIT, &id);
        if (s == RK_OK) {
            call->id = id;
            rk_call **head = &cl->table[id & cl->mask];
            call->next = *head;
            *head = call;
            pthread_mutex_unlock(&cl->lock);
            *out = call;
            return RK_OK;
        }
        call_free(cl, call);
        pthread_mutex_unlock(&cl->lock);
        if (s != RK_WOULD_BLOCK) return s; /* send's own message names the problem */
        /* The input queue is full. Collect replies if nobody does, so the
         * kernel has room to answer; then wait a little. */
        pthread_mutex_lock(&cl->lock);
        bool lead_now = !cl->leader;
        if (lead_now) cl->leader = true;
        pthread_mutex_unlock(&cl->lock);
        if (lead_now) {
            rk_status rs;
            reap_once(cl, &rs);
            resign(cl);
        }
        if (!waiting) {
            rk__backoff_init(&b, timeout_ns);
            waiting = true;
        }
        if (!rk__backoff_wait(&b))
            return timeout_ns == RK_NO_WAIT
                       ? rk__fail(RK_WOULD_BLOCK, "%s: kernel '%s' input queue is full; nothing was queued", fn,
                                  k->name)
                       : rk__fail(RK_TIMEOUT, "%s: kernel '%s' input queue stayed full for %llu ns; nothing was queued",
                                  fn, k->name, (unsigned long long)timeout_ns);
    }
}

rk_status rk_kernel_submit(rk_kernel *k, const void *request, size_t size, uint64_t timeout_ns, rk_call **out) {
    static const char fn[] = "rk_kernel_submit";
    if (out) *out = NULL;
    if (!k) return rk__fail(RK_NULL_ARGUMENT, "%s: k is NULL", fn);
    if (!out) return rk__fail(RK_NULL_ARGUMENT, "%s: out is NULL", fn);
    return submit(k, fn, request, size, timeout_ns, out);
}

static rk_status wait_call(rk_call *call, const char *fn, void *reply, size_t capacity, rk_reply_info *info,
                           uint64_t timeout_ns) {
    rk__clients *cl = call->owner;
    const rk_kernel *k = &cl->core->k;
    size_t rsize = k->desc.reply_size;
    if (!reply && rsize) return rk__fail(RK_NULL_ARGUMENT, "%s: reply is NULL", fn);
    if (capacity < rsize)
        return rk__fail(RK_INVALID_ARGUMENT, "%s: reply buffer of %zu bytes is smaller than kernel '%s' reply_size %zu",
                        fn, capacity, k->name, rsize);
    int st = atomic_load_explicit(&call->state, memory_order_acquire);
    if (st == CALL_FREE) return rk__fail(RK_BAD_STATE, "%s: the call was released", fn);
    if (atomic_exchange_explicit(&call->waiting, true, memory_order_acquire))
        return rk__fail(RK_BAD_STATE, "%s: another thread is waiting on call %llu of kernel '%s'", fn,
                        (unsigned long long)call->id, k->name);
    unsigned waiters = atomic_fetch_add_explicit(&cl->waiters, 1, memory_order_relaxed) + 1;
    if (waiters > 1) rk__kernel_check_cores(cl->core, waiters);
    uint64_t deadline = deadline_of(timeout_ns);
    /* At least one turn: with RK_NO_WAIT a free leader's seat still means
     * one look at the kernel. */
    while (!settled(call)) {
        wait_turn(cl, call, deadline);
        if (rk__now_ns() >= deadline) break;
    }
    rk_status s;
    st = atomic_load_explicit(&call->state, memory_order_acquire);
    if (st == CALL_DONE) {
        if (rsize) memcpy(reply, call->reply, rsize);
        if (info) *info = call->info;
        s = RK_OK;
    } else if (st == CALL_ENDED) {
        s = rk__fail(call->end_status, "%s: %s", fn, call->end_reason);
    } else if (timeout_ns == RK_NO_WAIT) {
        s = rk__fail(RK_WOULD_BLOCK, "%s: the reply to request %llu of kernel '%s' has not come yet", fn,
                     (unsigned long long)call->id, k->name);
    } else {
        s = rk__fail(RK_TIMEOUT, "%s: no reply to request %llu from kernel '%s' within %llu ns", fn,
                     (unsigned long long)call->id, k->name, (unsigned long long)timeout_ns);
    }
    atomic_fetch_sub_explicit(&cl->waiters, 1, memory_order_relaxed);
    atomic_store_explicit(&call->waiting, false, memory_order_release);
    return s;
}

rk_status rk_call_wait(rk_call *call, void *reply, size_t capacity, rk_reply_info *info, uint64_t timeout_ns) {
    static const char fn[] = "rk_call_wait";
    if (!call) return rk__fail(RK_NULL_ARGUMENT, "%s: call is NULL", fn);
    return wait_call(call, fn, reply, capacity, info, timeout_ns);
}

uint64_t rk_call_id(const rk_call *call) { return call ? call->id : 0; }

rk_status rk_call_release(rk_call *call) {
    if (!call) return rk__fail(RK_NULL_ARGUMENT, "rk_call_release: call is NULL");
    rk__clients *cl = call->owner;
    pthread_mutex_lock(&cl->lock);
    int st = atomic_load_explicit(&call->state, memory_order_relaxed);
    rk_status s = RK_OK;
    if (st == CALL_FREE || call->released) {
        s = rk__fail(RK_BAD_STATE, "rk_call_release: the call was already released");
    } else if (st == CALL_PENDING) {
        call->released = true; /* still in the table: freed when its reply comes */
    } else {
        call_free(cl, call);
    }
    pthread_mutex_unlock(&cl->lock);
    return s;
}

rk_status rk_kernel_call(rk_kernel *k, const void *request, size_t size, void *reply, size_t capacity,
                         rk_reply_info *info, uint64_t timeout_ns) {
    static const char fn[] = "rk_kernel_call";
    if (!k) return rk__fail(RK_NULL_ARGUMENT, "%s: k is NULL", fn);
    if (!reply && k->desc.reply_size) return rk__fail(RK_NULL_ARGUMENT, "%s: reply is NULL", fn);
    if (capacity < k->desc.reply_size)
        return rk__fail(RK_INVALID_ARGUMENT, "%s: reply buffer of %zu bytes is smaller than kernel '%s' reply_size %u",
                        fn, capacity, k->name, k->desc.reply_size);
    uint64_t deadline = deadline_of(timeout_ns);
    rk_call *call = NULL;
    rk_status s = submit(k, fn, request, size, timeout_ns, &call);
    if (s != RK_OK) return s;
    uint64_t now = rk__now_ns();
    uint64_t left = timeout_ns == RK_WAIT_FOREVER ? RK_WAIT_FOREVER : (deadline > now ? deadline - now : 0);
    s = wait_call(call, fn, reply, capacity, info, left);
    rk_call_release(call); /* a late reply is discarded when it comes */
    return s;
}

void rk__clients_fill_stats(rk__kernel_core *c, rk_kernel_stats *out) {
    rk__latency_fill(&c->latency, out);
    rk__clients *cl = atomic_load_explicit(&c->clients, memory_order_acquire);
    if (!cl) return;
    pthread_mutex_lock(&cl->lock);
    out->replies_discarded = cl->discarded;
    pthread_mutex_unlock(&cl->lock);
}
