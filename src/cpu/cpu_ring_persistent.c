/* Persistent CPU ring kernels: each worker thread owns one input and one
 * output queue and loops: take a batch, run the handler, publish the
 * replies. The host spreads sends over the workers' input queues and
 * gathers replies from their output queues.
 *
 * An idle worker spins briefly, then yields, then sleeps on its doorbell (a
 * condition variable). The host bumps the worker's kick counter after each
 * push or pop and takes the lock only when the worker said it is sleeping.
 * The worker reads the counter before its last look for work and again
 * after saying it sleeps; all four accesses are seq_cst, so either the
 * worker sees the kick (and does not sleep) or the host sees it sleeping
 * (and signals it).
 *
 * Each reply is published as soon as the handler returns, so reply k of a
 * worker's output queue always answers request k of its input queue. The
 * watchdog (in poll) uses that: a worker that stays inside a batch without
 * finishing a request for watchdog_ns fails the kernel with RK_HUNG and is
 * cancelled (cpu_ring_cancel.c); the host then answers every request the
 * worker left, from its output queue's tail on, with RK_HUNG. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/kernel_wait.h"
#include "ringkernel/queue.h"
#include "cpu_ring_internal.h"

enum {
    BATCH = 256,        /* requests taken per queue visit */
    SPREAD_CHUNK = 64,  /* requests given to one worker before the next (workers > 1) */
};
/* Idle phases: spin, then yield, then sleep on the doorbell. A busy
 * kernel never leaves the first; one-at-a-time traffic stays in it too. */
#define IDLE_SPIN_NS 2000u
#define IDLE_YIELD_NS 1000000u
#define DOORBELL_NAP_MS 100

typedef struct worker {
    rk__cpu_ring *ring;
    unsigned index;
    rk_queue *in, *out;
    pthread_t thread;
    bool started;
    rk__cpu_guard guard;            /* worker thread only */

    /* Written by the worker, read by the host. */
    _Alignas(64) _Atomic uint64_t processed; /* stored after each request */
    _Atomic uint64_t errors;
    _Atomic bool terminated;
    _Atomic bool busy;                       /* inside a batch of handler calls */
    _Atomic uint32_t unpublished;            /* replies written, not yet published */

    /* Written by the host, read by the worker at every look: a line of its
     * own, which stays shared in both caches until the host stops it. */
    _Alignas(64) _Atomic bool stop;          /* leave now */

    /* Host only (poll, destroy; the core serializes them), off the lines
     * above: the watchdog's stores would otherwise take the worker's
     * counters' line away from it at every poll. */
    _Alignas(64) bool seen_busy;             /* the watchdog's last look */
    uint64_t seen_processed, seen_since_ns;
    bool stopped;                            /* cancelled and joined: the host answers its requests */
    bool lost;                               /* would not end even when cancelled */

    /* The doorbell. */
    _Alignas(64) _Atomic uint64_t kicks; /* bumped by the host */
    _Atomic bool sleeping;               /* set by the worker under lock */
    pthread_mutex_t lock;
    pthread_cond_t cond;
} worker;

typedef struct persistent {
    unsigned count;
    worker *workers;
    _Alignas(64) unsigned send_cursor;    /* sender only */
    _Alignas(64) unsigned receive_cursor; /* receiver only */
} persistent;

static persistent *impl_of(rk__cpu_ring *r) { return (persistent *)r->mode_impl; }

/* ---- the worker ------------------------------------------------------------------- */

/* Would the loop make progress now? Read after announcing sleep. */
static bool has_work(worker *w, rk__cpu_ring *r) {
    if (atomic_load(&w->stop)) return true;
    bool terminating = atomic_load(&r->should_terminate);
    bool go = terminating || atomic_load(&r->is_active) || rk__cpu_ring_failed(r);
    if (go && rk__cpu_channel_pending(r)) return true;
    uint32_t waiting = rk__cpu_queue_depth(w->in);
    if (waiting == 0) return terminating;
    return go && rk__cpu_queue_depth(w->out) < r->capacity;
}

static void doorbell_sleep(worker *w, rk__cpu_ring *r) {
    uint64_t seen = atomic_load(&w->kicks);
    if (has_work(w, r)) return;
    pthread_mutex_lock(&w->lock);
    atomic_store(&w->sleeping, true);
    /* Flags change under this lock (wake), queues bump kicks. */
    if (atomic_load(&w->kicks) == seen && !has_work(w, r)) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += DOORBELL_NAP_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec += 1;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&w->cond, &w->lock, &until);
    }
    atomic_store(&w->sleeping, false);
    pthread_mutex_unlock(&w->lock);
}

/* How long the worker has been idle. since = 0 until the first clock read
 * of an idle spell. While it spins, the clock is read once in
 * IDLE_CLOCK_EVERY looks (a clock read costs as much as a pause or more),
 * the first time at the end of the first IDLE_CLOCK_EVERY: after a
 * message, the next request usually lands within them, and a clock read
 * at the first look made it wait for that read. */
typedef struct idle_state {
    uint64_t since;
    unsigned looks;
    bool spinning;
} idle_state;

#define IDLE_CLOCK_EVERY 16u

/* The worker had work: its next idle spell starts spinning. */
static void idle_reset(idle_state *s) { *s = (idle_state){.spinning = true}; }

/* One idle step. */
static void idle_step(worker *w, rk__cpu_ring *r, idle_state *s, rk__cpu_guard *g) {
    if (s->spinning && ++s->looks % IDLE_CLOCK_EVERY) {
        rk__cpu_relax();
        return;
    }
    uint64_t now = rk__now_ns();
    if (s->since == 0) s->since = now;
    uint64_t idle = now - s->since;
    s->spinning = idle < IDLE_SPIN_NS;
    if (s->spinning) {
        /* One pause a look: a request that lands while the worker spins is
         * taken within a pause, not within 32 (over a microsecond on CPUs
         * whose pause is ~140 cycles: most of the round trip's excess over
         * the ping-pong floor). */
        rk__cpu_relax();
    } else if (idle < IDLE_YIELD_NS) {
        sched_yield();
    } else {
        /* Asleep, this worker runs no handler: leave the process's signal
         * handlers as they were meanwhile. */
        if (g) rk__cpu_guard_uninstall(g);
        doorbell_sleep(w, r);
        if (g) rk__cpu_guard_install(g);
    }
}

static void *worker_main(void *arg) {
    worker *w = arg;
    rk__cpu_ring *r = w->ring;
    rk__cpu_guard *g = NULL;
    if (rk__cpu_guard_supported() && rk__cpu_guard_attach(&w->guard) == RK_OK) {
        if (rk__cpu_guard_install(&w->guard) == RK_OK) {
            g = &w->guard;
        } else {
            rk__cpu_guard_detach(&w->guard);
        }
    }
    rk__cpu_cancel_prepare_thread();
    uint64_t processed = 0, errors = 0;
    idle_state idle;
    idle_reset(&idle);
    rk__cpu_channel_enter(r);
    const bool channels = w->index == 0;
    for (;;) {
        if (atomic_load_explicit(&w->stop, memory_order_relaxed)) break;
        uint64_t in_first;
        uint32_t n = rk__cpu_queue_peek_tagged(w->in, BATCH, &in_first);
        /* Flags are read after the peek: a request published after the host
         * cleared is_active is then seen with is_active clear too. */
        bool terminating = atomic_load_explicit(&r->should_terminate, memory_order_acquire);
        bool failed = rk__cpu_ring_failed(r);
        /* K2K inputs close on terminate or failure: what is on them then is
         * all that will come, and is still handled (or answered as faulted).
         * Only a kernel's single worker has channels (worker 0). */
        if (channels && failed) rk__cpu_channel_close_inputs(r, RK_DEVICE_FAULT);
        else if (channels && terminating) rk__cpu_channel_close_inputs(r, RK_TERMINATED);
        bool go = terminating || failed || atomic_load_explicit(&r->is_active, memory_order_acquire);
        /* HOLD output channels: take no more than they have room for. */
        const bool outputs = !failed && rk__cpu_links_has_outputs(&r->links);
        uint32_t credit = outputs ? rk__cpu_channel_credit(r) : UINT32_MAX;
        uint32_t served = go && channels && rk__cpu_links_has_inputs(&r->links)
                              ? rk__cpu_channel_serve(r, w->out, g, failed, credit, &processed, &errors)
                              : 0;
        if (served) {
            atomic_store_explicit(&w->processed, processed, memory_order_relaxed);
            atomic_store_explicit(&w->errors, errors, memory_order_relaxed);
            if (outputs) credit = rk__cpu_channel_credit(r);
        }
        if (n == 0 && terminating) {
            /* No send is in flight once should_terminate is set, so a second
             * look that finds nothing means nothing more will come. */
            n = rk__cpu_queue_peek_tagged(w->in, BATCH, &in_first);
            if (n == 0 && !(channels && rk__cpu_channel_pending(r))) break;
        }
        if (n > credit) n = credit;
        uint64_t out_first = 0;
        uint32_t room = n && go ? rk_queue_reserve(w->out, n, &out_first) : 0;
        if (room == 0) {
            if (served)
                idle_reset(&idle);
            else
                idle_step(w, r, &idle, g);
            continue;
        }
        idle_reset(&idle);
        rk__cpu_batch b = {
            .in = rk__cpu_queue_slots(w->in, in_first),
            .out = rk__cpu_queue_slots(w->out, out_first),
            .count = room,
        };
        if (failed) {
            rk__cpu_ring_fault_batch(&b, r->reply_size, rk__cpu_ring_failure_reply(r));
            rk__cpu_queue_commit_tagged(w->out, room);
            rk_queue_release(w->in, room);
            continue;
        }
        if (!rk__cpu_channel_failures_only(r)) {
            /* The handler publishes each reply; processed is stored before
             * each commit, so a host that has a reply sees it counted. */
            b.publish = w->out;
            b.release = w->in;
            b.unpublished = &w->unpublished;
            b.progress = &w->processed;
            b.error_progress = &w->errors;
            b.cancellable = true;
            atomic_store_explicit(&w->busy, true, memory_order_relaxed);
            rk__cpu_ring_run_batch(r, g, &b, r->state, &processed, &errors);
            atomic_store_explicit(&w->busy, false, memory_order_relaxed);
            continue;
        }
        /* A pipeline source answers the host only when a message fails
         * (rk_channel_set_host_replies): the batch's replies are filtered
         * after it runs, then published together. Not cancellable: a hang
         * here fails the kernel, but its thread cannot be stopped. */
        rk__cpu_ring_run_batch(r, g, &b, r->state, &processed, &errors);
        uint32_t replies = rk__cpu_channel_host_replies(r, &b);
        atomic_store_explicit(&w->processed, processed, memory_order_relaxed);
        atomic_store_explicit(&w->errors, errors, memory_order_relaxed);
        if (replies) rk__cpu_queue_commit_tagged(w->out, replies);
        rk_queue_release(w->in, room);
    }
    if (g) {
        rk__cpu_guard_uninstall(g);
        rk__cpu_guard_detach(g);
    }
    /* release: every reply and counter above is visible to a host that
     * sees terminated. */
    atomic_store_explicit(&w->terminated, true, memory_order_release);
    return NULL;
}

/* ---- the host's side ----------------------------------------------------------- */

static void ring_doorbell(worker *w) {
    atomic_fetch_add(&w->kicks, 1); /* seq_cst: see the top of the file */
    if (atomic_load(&w->sleeping)) {
        pthread_mutex_lock(&w->lock);
        pthread_cond_signal(&w->cond);
        pthread_mutex_unlock(&w->lock);
    }
}

static rk_status p_try_send(rk__cpu_ring *r, const void *messages, size_t stride, size_t count, uint64_t first_id,
                            size_t *accepted) {
    persistent *p = impl_of(r);
    const unsigned char *src = messages;
    size_t done = 0;
    if (p->count == 1) {
        done = rk__cpu_ring_push_requests(p->workers[0].in, true, r->message_size, src, stride, count, first_id);
        if (done) ring_doorbell(&p->workers[0]);
    } else {
        /* Round-robin in chunks; stop after a full turn in which every
         * queue was full. Ids follow the order of the messages, so each
         * stays unique whichever worker takes it. */
        unsigned full_in_a_row = 0;
        while (done < count && full_in_a_row < p->count) {
            worker *w = &p->workers[p->send_cursor];
            size_t chunk = count - done < SPREAD_CHUNK ? count - done : SPREAD_CHUNK;
            size_t n = rk__cpu_ring_push_requests(w->in, true, r->message_size, src + done * stride, stride, chunk,
                                                  first_id + done);
            if (n) {
                ring_doorbell(w);
                done += n;
                full_in_a_row = 0;
            } else {
                full_in_a_row++;
            }
            p->send_cursor = (p->send_cursor + 1) % p->count;
        }
    }
    *accepted = done;
    return RK_OK;
}

static rk_status p_try_receive(rk__cpu_ring *r, void *replies, size_t stride, rk_reply_info *infos, size_t max,
                               size_t *received) {
    persistent *p = impl_of(r);
    unsigned char *dst = replies;
    size_t done = 0;
    for (unsigned visited = 0; visited < p->count && done < max; visited++) {
        worker *w = &p->workers[p->receive_cursor];
        size_t n = rk__cpu_ring_pop_replies(w->out, true, r->reply_size, dst + done * stride, stride, infos + done,
                                            max - done);
        if (n) ring_doorbell(w); /* it may be waiting for room */
        done += n;
        p->receive_cursor = (p->receive_cursor + 1) % p->count;
    }
    *received = done;
    return RK_OK;
}

static void p_wake(rk__cpu_ring *r) {
    persistent *p = impl_of(r);
    for (unsigned i = 0; i < p->count; i++) {
        worker *w = &p->workers[i];
        pthread_mutex_lock(&w->lock);
        pthread_cond_signal(&w->cond);
        pthread_mutex_unlock(&w->lock);
    }
}

/* Stops w for good: asks it to leave, cancels it in case it is inside a
 * handler, joins it. Afterwards the host owns both of its queues. */
static void stop_worker(rk__cpu_ring *r, worker *w) {
    if (w->stopped || w->lost || !w->started) return;
    atomic_store(&w->stop, true);
    ring_doorbell(w);
    if (!rk__cpu_cancel_and_join(w->thread)) {
        w->lost = true;
        rk__log(RK_LOG_ERROR, "cpu: kernel '%s': worker %u did not end even when cancelled; it is left running",
                r->name, w->index);
        return;
    }
    w->started = false;
    w->stopped = true;
    /* Ended inside a batch: its guard was never detached. */
    rk__cpu_guard_abandon(&w->guard);
}

/* Answers, with the kernel's failure, every request of a stopped worker
 * that has no reply: those from its output queue's tail on (reply k answers
 * request k). Runs again on each poll, for sends that were in flight. */
static void answer_for_stopped(rk__cpu_ring *r, worker *w) {
    /* Replies the worker wrote but had not published when it stopped. */
    uint32_t written = atomic_exchange_explicit(&w->unpublished, 0, memory_order_acquire);
    if (written) rk__cpu_queue_commit_tagged(w->out, written);
    uint64_t next = atomic_load_explicit(&w->out->tail, memory_order_relaxed);
    uint64_t last = atomic_load_explicit(&w->in->tail, memory_order_acquire);
    uint64_t out_first = 0;
    uint32_t n = last > next ? rk_queue_reserve(w->out, (uint32_t)(last - next), &out_first) : 0;
    if (n) {
        rk__cpu_batch b = {.in = rk__cpu_queue_slots(w->in, next), .out = rk__cpu_queue_slots(w->out, out_first),
                           .count = n};
        rk__cpu_ring_fault_batch(&b, r->reply_size, rk__cpu_ring_failure_reply(r));
        rk__cpu_queue_commit_tagged(w->out, n);
    }
    /* The worker may have published replies without releasing their requests. */
    atomic_store_explicit(&w->in->head, next + n, memory_order_release);
}

/* The watchdog: a worker seen inside a batch twice, watchdog_ns apart,
 * without finishing a request in between, is stuck. */
static void watch(rk__cpu_ring *r, worker *w, uint64_t now) {
    bool busy = atomic_load_explicit(&w->busy, memory_order_relaxed);
    uint64_t processed = atomic_load_explicit(&w->processed, memory_order_relaxed);
    if (!busy) {
        w->seen_busy = false;
        return;
    }
    if (!w->seen_busy || processed != w->seen_processed) {
        w->seen_busy = true;
        w->seen_processed = processed;
        w->seen_since_ns = now;
        return;
    }
    if (now - w->seen_since_ns < r->watchdog_ns) return;
    /* The stuck request is the one after the last reply; its slot stays
     * put until the worker releases it. */
    rk__cpu_request_header h = {0};
    uint64_t stuck = atomic_load_explicit(&w->out->tail, memory_order_acquire) +
                     atomic_load_explicit(&w->unpublished, memory_order_relaxed);
    if (atomic_load_explicit(&w->in->tail, memory_order_acquire) > stuck)
        memcpy(&h, rk_queue_consumer_slot(w->in, stuck), sizeof h);
    rk__cpu_ring_set_failure(r, RK_HUNG,
                             "handler of kernel '%s' made no progress for %llu ms on request id %llu "
                             "(RK_CPU_WATCHDOG_MS sets the limit); its worker thread was cancelled",
                             r->name, (unsigned long long)((now - w->seen_since_ns) / 1000000u),
                             (unsigned long long)h.id);
    stop_worker(r, w);
}

static void p_poll(rk__cpu_ring *r, rk__control *out) {
    persistent *p = impl_of(r);
    bool all_terminated = true;
    uint64_t now = rk__now_ns();
    for (unsigned i = 0; i < p->count; i++) {
        worker *w = &p->workers[i];
        if (w->started && !atomic_load_explicit(&w->terminated, memory_order_acquire)) watch(r, w, now);
        if (w->stopped) answer_for_stopped(r, w);
        /* terminated first (acquire), so the counters read after it are final. */
        bool ended = w->stopped || atomic_load_explicit(&w->terminated, memory_order_acquire);
        if (!ended) all_terminated = false;
        out->messages_processed += atomic_load_explicit(&w->processed, memory_order_relaxed);
        out->errors_encountered += atomic_load_explicit(&w->errors, memory_order_relaxed);
        out->input_depth += rk__cpu_queue_depth(w->in);
        out->output_depth += rk__cpu_queue_depth(w->out);
    }
    out->has_terminated = all_terminated;
    out->launches = 1;
}

static void free_workers(persistent *p) {
    for (unsigned i = 0; i < p->count; i++) {
        worker *w = &p->workers[i];
        rk_queue_destroy(w->in);
        rk_queue_destroy(w->out);
        pthread_mutex_destroy(&w->lock);
        pthread_cond_destroy(&w->cond);
    }
    free(p->workers);
    free(p);
}

/* Joins every worker that has stopped. One still inside a handler after the
 * grace period is cancelled (RK_HUNG); one that does not end even then is
 * left running, and everything it might touch is kept rather than freed
 * under it. */
static rk_status p_destroy(rk__cpu_ring *r) {
    persistent *p = impl_of(r);
    uint64_t give_up = rk__now_ns() + 200u * 1000u * 1000u;
    unsigned cancelled = 0, lost = 0;
    for (unsigned i = 0; i < p->count; i++) {
        worker *w = &p->workers[i];
        if (!w->started) {
            if (w->lost) lost++;
            continue;
        }
        while (!atomic_load(&w->terminated) && rk__now_ns() < give_up) {
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
        if (atomic_load(&w->terminated)) {
            pthread_join(w->thread, NULL);
            w->started = false;
            continue;
        }
        stop_worker(r, w);
        if (w->lost)
            lost++;
        else
            cancelled++;
    }
    if (lost)
        return rk__fail(RK_HUNG,
                        "rk_kernel_destroy: kernel '%s': %u worker thread%s stuck in the handler did not end even "
                        "when cancelled; %s left running and the kernel's memory is kept",
                        r->name, lost, lost == 1 ? "" : "s", lost == 1 ? "it is" : "they are");
    free_workers(p);
    char name[sizeof r->name];
    memcpy(name, r->name, sizeof name);
    rk__cpu_ring_free(r);
    if (cancelled)
        return rk__fail(RK_HUNG,
                        "rk_kernel_destroy: kernel '%s': %u worker thread%s stuck in the handler; cancelled (the "
                        "handler did not return), everything is freed",
                        name, cancelled, cancelled == 1 ? " was" : "s were");
    return RK_OK;
}

/* A channel put a message on one of r's inputs: wake its (only) worker. */
static void p_kick(rk__cpu_ring *r) { ring_doorbell(&impl_of(r)->workers[0]); }

const rk__cpu_ring_ops rk__cpu_persistent_ops = {
    .start = rk__cpu_persistent_start,
    .try_send = p_try_send,
    .try_receive = p_try_receive,
    .wake = p_wake,
    .poll = p_poll,
    .destroy = p_destroy,
    .kick = p_kick,
};

static rk_status init_worker(worker *w, rk__cpu_ring *r, unsigned index) {
    w->ring = r;
    w->index = index;
    atomic_init(&w->processed, 0);
    atomic_init(&w->unpublished, 0);
    atomic_init(&w->errors, 0);
    atomic_init(&w->terminated, false);
    atomic_init(&w->kicks, 0);
    atomic_init(&w->sleeping, false);
    pthread_mutex_init(&w->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&w->cond, &attr);
    pthread_condattr_destroy(&attr);
    rk_status s = rk_queue_create(r->capacity, RK_CPU_SLOT_HEADER + r->message_size, &w->in);
    if (s == RK_OK) s = rk_queue_create(r->capacity, RK_CPU_SLOT_HEADER + r->reply_size, &w->out);
    if (s != RK_OK)
        return rk__fail(s, "rk_kernel_launch: cannot create the queues of worker %u (%u slots): %s", index, r->capacity,
                        rk_status_message(s));
    return RK_OK;
}

rk_status rk__cpu_persistent_start(rk__cpu_ring *r) {
    persistent *p = aligned_alloc(64, (sizeof *p + 63) & ~(size_t)63);
    if (!p) return rk__fail(RK_OUT_OF_MEMORY, "rk_kernel_launch: out of memory");
    memset(p, 0, sizeof *p);
    p->count = r->workers;
    size_t bytes = ((size_t)p->count * sizeof(worker) + 63) & ~(size_t)63;
    p->workers = aligned_alloc(64, bytes);
    if (!p->workers) {
        free(p);
        return rk__fail(RK_OUT_OF_MEMORY, "rk_kernel_launch: out of memory");
    }
    memset(p->workers, 0, bytes);
    rk_status s = RK_OK;
    unsigned initialised = 0;
    for (; initialised < p->count && s == RK_OK; initialised++) s = init_worker(&p->workers[initialised], r, initialised);
    r->mode_impl = p;
    r->ops = &rk__cpu_persistent_ops;
    /* Workers take no asynchronous signals (they stay with the
     * application's threads); faults in a handler still reach the guard. */
    sigset_t all, previous_mask;
    sigfillset(&all);
    sigdelset(&all, SIGSEGV);
    sigdelset(&all, SIGBUS);
    sigdelset(&all, SIGFPE);
    sigdelset(&all, SIGILL);
    pthread_sigmask(SIG_BLOCK, &all, &previous_mask);
    for (unsigned i = 0; i < p->count && s == RK_OK; i++) {
        worker *w = &p->workers[i];
        int e = pthread_create(&w->thread, NULL, worker_main, w);
        if (e != 0) {
            s = rk__fail(RK_IO_ERROR, "rk_kernel_launch: cannot start worker thread %u: %s", i, strerror(e));
            break;
        }
        w->started = true;
        char name[16];
        snprintf(name, sizeof name, "rk-ring-%u", i % 64u);
        pthread_setname_np(w->thread, name);
    }
    pthread_sigmask(SIG_SETMASK, &previous_mask, NULL);
    if (s != RK_OK) {
        p->count = initialised; /* the workers whose lock and queues exist */
        atomic_store(&r->should_terminate, true);
        p_wake(r);
        for (unsigned i = 0; i < p->count; i++)
            if (p->workers[i].started) pthread_join(p->workers[i].thread, NULL);
        free_workers(p);
        r->mode_impl = NULL;
        return s;
    }
    return RK_OK;
}
