/* Streams: an ordered queue of copies and launches, run by the stream's own
 * thread (started on first use). A launch always queues, so it is
 * asynchronous to the host; a copy on an idle stream runs at once on the
 * caller's thread, which keeps the order and saves a thread hop. A failure is
 * kept and reported by the next synchronize.
 *
 * The stream thread keeps cancellation disabled. A CPU ring kernel's batch
 * enables it around its handler calls, so a handler that never returns can
 * be cancelled (cpu_ring_cancel.c): the launch then ends with RK_HUNG and the
 * thread with it; the next op starts a new one. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_device.h"


typedef enum op_kind { OP_COPY, OP_LAUNCH } op_kind;

typedef struct stream_op {
    op_kind kind;
    struct stream_op *next;
    void *dst;
    const void *src;
    size_t size;
    rk__cpu_call *call;
} stream_op;

struct rk__cpu_stream {
    struct rk_stream base;
    rk__cpu_context *ctx;
    pthread_mutex_t lock;
    pthread_cond_t changed;    /* an op was queued or finished, or stopping was set */
    stream_op *head, *tail;
    bool busy;                 /* an op is running (on the stream thread or a caller) */
    atomic_uint outstanding;   /* ops queued or running; written under lock, polled without */
    bool stopping, has_thread;
    bool thread_cancelled;     /* the thread ended in a cancelled launch; join it */
    pthread_t thread;
    rk_status error;           /* first failure since the last synchronize */
    char error_text[RK_CPU_ERROR_TEXT];
    unsigned later_errors;     /* failures after the first, for the message */
    rk__cpu_stream *next;      /* in the context's list */
};

static rk_status run_op(rk__cpu_stream *s, rk__cpu_executor **ex, stream_op *op, char *error) {
    if (op->kind == OP_COPY) {
        memmove(op->dst, op->src, op->size);
        return RK_OK;
    }
    if (!*ex) {
        rk_status st = rk__cpu_executor_create(ex);
        if (st != RK_OK) {
            snprintf(error, RK_CPU_ERROR_TEXT, "%s", rk_last_error());
            return st;
        }
    }
    /* The pool was started by rk_launch before the op was queued. */
    return rk__cpu_pool_run_grid(s->ctx->pool, *ex, op->call, error);
}

static void free_op(stream_op *op) {
    if (op->kind == OP_LAUNCH) rk__cpu_call_destroy(op->call);
    free(op);
}

static void finish_op(rk__cpu_stream *s, rk_status st, const char *error) {
    if (st != RK_OK) {
        if (s->error == RK_OK) {
            s->error = st;
            snprintf(s->error_text, sizeof s->error_text, "%s", error);
        } else {
            s->later_errors++;
        }
    }
    s->busy = false;
    atomic_fetch_sub(&s->outstanding, 1);
    pthread_cond_broadcast(&s->changed);
}

/* Waking a sleeping thread costs a few microseconds each way, as much as a
 * small launch, so the stream thread and a synchronizing caller first poll
 * for the context's spin time. True if outstanding reached the wanted state. */
static bool spin_until_outstanding(rk__cpu_stream *s, bool want_zero) {
    uint64_t start = rk__now_ns(), limit = s->ctx->spin_ns;
    for (unsigned i = 0;; i++) {
        unsigned n = atomic_load(&s->outstanding);
        if (want_zero ? n == 0 : n != 0) return true;
        if ((i & 63) == 63 && rk__now_ns() - start >= limit) return false;
#if defined(__x86_64__)
        __builtin_ia32_pause();
#endif
    }
}

/* What a cancelled launch leaves to clean up (see the top of the file):
 * the op running, if any, and the thread's executor. */
typedef struct stream_thread {
    rk__cpu_stream *s;
    rk__cpu_executor *ex;
    stream_op *running;
} stream_thread;

static void on_cancel(void *arg) {
    stream_thread *t = arg;
    rk__cpu_executor_destroy_cancelled(t->ex, t); /* t lives in stream_main's frame */
    t->ex = NULL;
    if (!t->running) return; /* cancellation is only ever enabled inside an op */
    free_op(t->running);
    pthread_mutex_lock(&t->s->lock);
    t->s->thread_cancelled = true;
    finish_op(t->s, RK_HUNG, "cpu: a launch was cancelled: its kernel did not return");
    pthread_mutex_unlock(&t->s->lock);
}

static void *stream_main(void *arg) {
    /* Registered once (it costs a setjmp), not per op. */
    stream_thread t = {.s = arg};
    rk__cpu_stream *s = t.s;
    char error[RK_CPU_ERROR_TEXT];
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
    pthread_cleanup_push(on_cancel, &t);
    pthread_mutex_lock(&s->lock);
    for (;;) {
        if (s->head && !s->busy) {
            stream_op *op = s->head;
            s->head = op->next;
            if (!s->head) s->tail = NULL;
            s->busy = true;
            pthread_mutex_unlock(&s->lock);
            error[0] = '\0';
            t.running = op;
            rk_status st = run_op(s, &t.ex, op, error);
            t.running = NULL;
            free_op(op);
            pthread_mutex_lock(&s->lock);
            finish_op(s, st, error);
        } else if (s->stopping) {
            break;
        } else if (!s->busy) {
            /* Idle: a launch often follows at once, so look for it before sleeping. */
            pthread_mutex_unlock(&s->lock);
            bool more = spin_until_outstanding(s, false);
            pthread_mutex_lock(&s->lock);
            if (!more && !s->head && !s->stopping) pthread_cond_wait(&s->changed, &s->lock);
        } else {
            pthread_cond_wait(&s->changed, &s->lock);
        }
    }
    pthread_mutex_unlock(&s->lock);
    pthread_cleanup_pop(0);
    rk__cpu_executor_destroy(t.ex);
    return NULL;
}

/* A thread for the queued ops, after the last one ended in a cancelled
 * launch. The caller holds s->lock. */
static rk_status start_thread_locked(rk__cpu_stream *s) {
    if (s->thread_cancelled) {
        /* It unlocked s->lock in its cleanup and only ends now. */
        pthread_join(s->thread, NULL);
        s->has_thread = s->thread_cancelled = false;
    }
    if (!s->has_thread) {
        int e = pthread_create(&s->thread, NULL, stream_main, s);
        if (e != 0) return rk__fail(RK_IO_ERROR, "cpu: cannot start a stream thread: %s", strerror(e));
        s->has_thread = true;
    }
    return RK_OK;
}

/* Queues op; the caller holds s->lock. */
static rk_status enqueue_locked(rk__cpu_stream *s, stream_op *op) {
    rk_status st = start_thread_locked(s);
    if (st != RK_OK) return st;
    op->next = NULL;
    atomic_fetch_add(&s->outstanding, 1);
    if (s->tail)
        s->tail->next = op;
    else
        s->head = op;
    s->tail = op;
    pthread_cond_broadcast(&s->changed);
    return RK_OK;
}

static rk__cpu_stream *resolve(rk_context *ctx, rk_stream *stream) {
    return stream ? (rk__cpu_stream *)stream : rk__cpu_ctx(ctx)->default_stream;
}

rk_status rk__cpu_stream_copy(rk_context *ctx, rk_stream *stream, void *dst, const void *src, size_t size) {
    rk__cpu_stream *s = resolve(ctx, stream);
    pthread_mutex_lock(&s->lock);
    if (!s->head && !s->busy) {
        s->busy = true;
        atomic_fetch_add(&s->outstanding, 1);
        pthread_mutex_unlock(&s->lock);
        memmove(dst, src, size);
        pthread_mutex_lock(&s->lock);
        finish_op(s, RK_OK, NULL);
        pthread_mutex_unlock(&s->lock);
        return RK_OK;
    }
    stream_op *op = calloc(1, sizeof *op);
    if (!op) {
        pthread_mutex_unlock(&s->lock);
        return rk__fail(RK_OUT_OF_MEMORY, "cpu: out of memory queueing a copy");
    }
    *op = (stream_op){.kind = OP_COPY, .dst = dst, .src = src, .size = size};
    rk_status st = enqueue_locked(s, op);
    pthread_mutex_unlock(&s->lock);
    if (st != RK_OK) free(op);
    return st;
}

rk_status rk__cpu_stream_launch(rk_context *ctx, rk_stream *stream, rk__cpu_call *call) {
    rk__cpu_stream *s = resolve(ctx, stream);
    stream_op *op = calloc(1, sizeof *op);
    if (!op) {
        rk__cpu_call_destroy(call);
        return rk__fail(RK_OUT_OF_MEMORY, "cpu: out of memory queueing a launch");
    }
    *op = (stream_op){.kind = OP_LAUNCH, .call = call};
    pthread_mutex_lock(&s->lock);
    rk_status st = enqueue_locked(s, op);
    pthread_mutex_unlock(&s->lock);
    if (st != RK_OK) free_op(op);
    return st;
}

static rk_status wait_idle(rk__cpu_stream *s) {
    spin_until_outstanding(s, true);
    pthread_mutex_lock(&s->lock);
    /* Ops queued behind a cancelled launch need a new thread. */
    if (s->head && s->thread_cancelled && start_thread_locked(s) != RK_OK) {
        pthread_mutex_unlock(&s->lock);
        return RK_IO_ERROR;
    }
    while (s->head || s->busy) pthread_cond_wait(&s->changed, &s->lock);
    rk_status st = s->error;
    char text[RK_CPU_ERROR_TEXT];
    unsigned later = s->later_errors;
    memcpy(text, s->error_text, sizeof text);
    s->error = RK_OK;
    s->error_text[0] = '\0';
    s->later_errors = 0;
    pthread_mutex_unlock(&s->lock);
    if (st == RK_OK) return RK_OK;
    if (later) return rk__fail(st, "%s (and %u later failures on the same stream)", text, later);
    return rk__fail(st, "%s", text);
}

static rk_status stream_new(rk__cpu_context *c, rk__cpu_stream **out) {
    rk__cpu_stream *s = calloc(1, sizeof *s);
    if (!s) return rk__fail(RK_OUT_OF_MEMORY, "cpu: out of memory for a stream");
    s->base.ctx = &c->base;
    s->ctx = c;
    atomic_init(&s->outstanding, 0);
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->changed, NULL);
    *out = s;
    return RK_OK;
}

static void stream_free(rk__cpu_stream *s) {
    wait_idle(s);
    if (s->has_thread) {
        pthread_mutex_lock(&s->lock);
        s->stopping = true;
        pthread_cond_broadcast(&s->changed);
        pthread_mutex_unlock(&s->lock);
        pthread_join(s->thread, NULL);
    }
    pthread_cond_destroy(&s->changed);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

rk_status rk__cpu_stream_create(rk_context *ctx, rk_stream **out) {
    rk__cpu_context *c = rk__cpu_ctx(ctx);
    rk__cpu_stream *s = NULL;
    rk_status st = stream_new(c, &s);
    if (st != RK_OK) return st;
    pthread_mutex_lock(&c->lock);
    s->next = c->streams;
    c->streams = s;
    pthread_mutex_unlock(&c->lock);
    *out = &s->base;
    return RK_OK;
}

rk_status rk__cpu_stream_synchronize(rk_stream *stream) { return wait_idle((rk__cpu_stream *)stream); }

bool rk__cpu_stream_busy(rk_stream *stream) {
    return atomic_load(&((rk__cpu_stream *)stream)->outstanding) != 0;
}

void rk__cpu_stream_wait_idle_until(rk_stream *stream, uint64_t deadline_ns) {
    rk__cpu_stream *s = (rk__cpu_stream *)stream;
    if (spin_until_outstanding(s, true)) return;
    uint64_t now = rk__now_ns();
    if (now >= deadline_ns) return;
    /* changed runs on the realtime clock. */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    uint64_t ns = (uint64_t)until.tv_nsec + (deadline_ns - now);
    until.tv_sec += (time_t)(ns / 1000000000u);
    until.tv_nsec = (long)(ns % 1000000000u);
    pthread_mutex_lock(&s->lock);
    while (atomic_load(&s->outstanding) != 0 && pthread_cond_timedwait(&s->changed, &s->lock, &until) == 0) {
    }
    pthread_mutex_unlock(&s->lock);
}

void rk__cpu_stream_destroy(rk_stream *stream) {
    rk__cpu_stream *s = (rk__cpu_stream *)stream;
    rk__cpu_context *c = s->ctx;
    pthread_mutex_lock(&c->lock);
    for (rk__cpu_stream **p = &c->streams; *p; p = &(*p)->next) {
        if (*p == s) {
            *p = s->next;
            break;
        }
    }
    pthread_mutex_unlock(&c->lock);
    stream_free(s);
}

/* ---- the context's side ------------------------------------------------------ */

rk_status rk__cpu_context_streams_init(rk__cpu_context *c) {
    rk_status st = stream_new(c, &c->default_stream);
    if (st != RK_OK) return st;
    c->streams = c->default_stream;
    return RK_OK;
}

rk_status rk__cpu_context_streams_synchronize(rk__cpu_context *c) {
    rk_status first = RK_OK;
    char text[RK_CPU_ERROR_TEXT] = "";
    pthread_mutex_lock(&c->lock);
    for (rk__cpu_stream *s = c->streams; s; s = s->next) {
        rk_status st = wait_idle(s);
        if (st != RK_OK && first == RK_OK) {
            first = st;
            snprintf(text, sizeof text, "%s", rk_last_error());
        }
    }
    pthread_mutex_unlock(&c->lock);
    if (first != RK_OK) return rk__fail(first, "%s", text);
    return RK_OK;
}

void rk__cpu_context_streams_destroy(rk__cpu_context *c) {
    pthread_mutex_lock(&c->lock);
    rk__cpu_stream *s = c->streams;
    c->streams = NULL;
    c->default_stream = NULL;
    pthread_mutex_unlock(&c->lock);
    while (s) {
        rk__cpu_stream *next = s->next;
        stream_free(s);
        s = next;
    }
}
