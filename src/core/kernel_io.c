/* Ring kernels: sending requests and receiving replies, with request ids,
 * timeouts and the held-reply buffer that terminate fills. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_internal.h"
#include "kernel_wait.h"

/* Replies are taken from the backend in chunks this big when the caller
 * passed no info array (backends always get one). */
enum { INFO_CHUNK = 64 };

bool rk__kernel_wait(rk__kernel_core *c, rk__backoff *b) {
    rk_kernel *k = &c->k;
    /* While spinning, most looks are one pause and no clock read (the
     * deadline is still checked once in RK__BACKOFF_CLOCK_EVERY looks): a
     * clock read per look made the host see a reply tens of ns late. */
    if (rk__backoff_spin(b)) return true;
    uint64_t now = rk__backoff_now(b);
    if (now >= b->deadline) return false;
    if (k->ring->wait) {
        uint64_t until = b->deadline - now > 1000000u ? now + 1000000u : b->deadline;
        if (k->ring->wait(k, until)) return true;
    }
    return rk__backoff_wait_at(b, now);
}

/* ---- sending ------------------------------------------------------------------- */

/* Every sender holds sender_busy (below), so these words have one writer at
 * a time: plain stores, not locked read-modify-writes, which a one-message
 * round trip would pay for in every send. */
static void count_sent(rk_kernel *k, size_t n) {
    uint64_t sent = atomic_load_explicit(&k->messages_sent, memory_order_relaxed);
    atomic_store_explicit(&k->messages_sent, sent + n, memory_order_relaxed);
}

/* Leaving needs no fence against terminate, only the order of what came
 * before (the entry, a fetch_add, is the Dekker side that needs one). */
static void sender_out_of_flight(rk__kernel_core *c) {
    unsigned n = atomic_load_explicit(&c->senders_in_flight, memory_order_relaxed);
    atomic_store_explicit(&c->senders_in_flight, n - 1u, memory_order_release);
}

/* One non-blocking attempt, fenced against terminate (see senders_in_flight). */
static rk_status try_send_once(rk__kernel_core *c, const char *fn, const unsigned char *messages, size_t stride,
                               size_t count, size_t *accepted) {
    rk_kernel *k = &c->k;
    *accepted = 0;
    atomic_fetch_add(&c->senders_in_flight, 1);
    int st = atomic_load(&k->state);
    rk_status s;
    if (st == RK_KERNEL_FAILED) {
        s = rk__kernel_fail_failed(c, fn);
    } else if (st == RK_KERNEL_TERMINATING || st == RK_KERNEL_TERMINATED) {
        s = rk__fail(RK_TERMINATED, "%s: kernel '%s' is %s; nothing was queued", fn, k->name,
                     rk_kernel_state_name((rk_kernel_state)st));
    } else {
        s = k->ring->try_send(k, messages, stride, count, k->next_id, accepted);
        if (*accepted) {
            rk__latency_on_send(&c->latency, k->next_id, *accepted);
            k->next_id += *accepted;
            count_sent(k, *accepted);
        }
    }
    sender_out_of_flight(c);
    if (s != RK_OK && st != RK_KERNEL_FAILED) {
        /* The backend refused: if it failed, report that rather than its
         * own words about the queue. */
        rk__kernel_refresh(c, NULL);
        if (atomic_load(&k->state) == RK_KERNEL_FAILED) s = rk__kernel_fail_failed(c, fn);
    }
    return s;
}

static rk_status send_common(rk__kernel_core *c, const char *fn, const unsigned char *messages, size_t stride,
                             size_t count, uint64_t timeout_ns, size_t *sent_out, uint64_t *first_id) {
    rk_kernel *k = &c->k;
    size_t sent = 0;
    *first_id = k->next_id;
    rk__backoff b;
    bool waiting = false;
    rk_status s = RK_OK;
    for (;;) {
        size_t n = 0;
        s = try_send_once(c, fn, messages + sent * stride, stride, count - sent, &n);
        sent += n;
        if (s != RK_OK || sent == count) break;
        if (!waiting) {
            rk__backoff_init(&b, timeout_ns);
            waiting = true;
        } else if (n) {
            rk__backoff_reset(&b);
        }
        /* Relaunch backends make progress in poll; all of them report
         * failures there. */
        if (rk__backoff_should_poll(&b)) rk__kernel_refresh(c, NULL);
        if (!rk__kernel_wait(c, &b)) {
            s = timeout_ns == RK_NO_WAIT
                    ? rk__fail(RK_WOULD_BLOCK, "%s: kernel '%s' input queue is full (%zu of %zu queued)", fn,
                               k->name, sent, count)
                    : rk__fail(RK_TIMEOUT, "%s: kernel '%s' input queue stayed full (%zu of %zu queued)", fn,
                               k->name, sent, count);
            break;
        }
    }
    *sent_out = sent;
    return s;
}

/* Raw sends are single-producer: a second thread arriving while one is
 * inside is refused rather than racing on next_id and the queue. */
static rk_status sender_enter(rk__kernel_core *c, const char *fn) {
    if (!atomic_exchange_explicit(&c->sender_busy, true, memory_order_acquire)) return RK_OK;
    /* A relay holds the sender role only for one non-blocking attempt. */
    if (atomic_load(&c->relay_fed)) {
        while (atomic_exchange_explicit(&c->sender_busy, true, memory_order_acquire)) sched_yield();
        return RK_OK;
    }
    return rk__fail(RK_BAD_STATE,
                    "%s: another thread is sending to kernel '%s' at this moment; raw sends must come from one "
                    "thread at a time (many threads: rk_kernel_call or rk_kernel_submit)",
                    fn, c->k.name);
}

static void sender_leave(rk__kernel_core *c) { atomic_store_explicit(&c->sender_busy, false, memory_order_release); }

rk_status rk__kernel_relay_send(rk_kernel *k, const void *messages, size_t stride, size_t count, uint64_t first_id,
                                size_t *accepted) {
    rk__kernel_core *c = rk__core_of(k);
    *accepted = 0;
    atomic_store(&c->relay_fed, true);
    while (atomic_exchange_explicit(&c->sender_busy, true, memory_order_acquire)) sched_yield();
    atomic_fetch_add(&c->senders_in_flight, 1);
    int st = atomic_load(&k->state);
    rk_status s = RK_OK;
    if (st == RK_KERNEL_FAILED) s = (rk_status)atomic_load(&c->failure);
    else if (st == RK_KERNEL_TERMINATING || st == RK_KERNEL_TERMINATED) s = RK_TERMINATED;
    else s = k->ring->try_send(k, messages, stride, count, first_id, accepted);
    if (*accepted) count_sent(k, *accepted);
    sender_out_of_flight(c);
    sender_leave(c);
    /* Relaunch backends make progress in poll; it also reports failures. */
    if (s == RK_OK && *accepted < count) {
        rk__kernel_refresh(c, NULL);
        if (atomic_load(&k->state) == RK_KERNEL_FAILED) s = (rk_status)atomic_load(&c->failure);
    }
    if (s == RK_OK && st != RK_KERNEL_FAILED) return RK_OK;
    return s == RK_OK ? RK_DEVICE_FAULT : s;
}

rk_status rk_kernel_send(rk_kernel *k, const void *message, size_t size, uint64_t timeout_ns, uint64_t *id) {
    static const char fn[] = "rk_kernel_send";
    if (!k) return rk__fail(RK_NULL_ARGUMENT, "%s: k is NULL", fn);
    if (!message && size) return rk__fail(RK_NULL_ARGUMENT, "%s: message is NULL", fn);
    rk__kernel_core *c = rk__core_of(k);
    uint32_t message_size = k->desc.message_size;
    if (size > message_size)
        return rk__fail(RK_MESSAGE_TOO_LARGE, "%s: message of %zu bytes is larger than kernel '%s' message_size %u",
                        fn, size, k->name, message_size);
    rk_status s = sender_enter(c, fn);
    if (s != RK_OK) return s;
    const unsigned char *src = message;
    if (size < message_size) {
        if (size) memcpy(c->pad, message, size);
        memset(c->pad + size, 0, message_size - size);
        src = c->pad;
    }
    size_t sent = 0;
    uint64_t first = 0;
    s = send_common(c, fn, src, message_size, 1, timeout_ns, &sent, &first);
    sender_leave(c);
    if (s == RK_OK && id) *id = first;
    return s;
}

rk_status rk_kernel_send_batch(rk_kernel *k, const void *messages, size_t stride, size_t count, uint64_t timeout_ns,
                               size_t *sent, uint64_t *first_id) {
    static const char fn[] = "rk_kernel_send_batch";
    if (sent) *sent = 0;
    if (!k) return rk__fail(RK_NULL_ARGUMENT, "%s: k is NULL", fn);
    if (first_id) *first_id = 0;
    if (count && !messages) return rk__fail(RK_NULL_ARGUMENT, "%s: messages is NULL", fn);
    if (count && stride < k->desc.message_size)
        return rk__fail(RK_INVALID_ARGUMENT, "%s: stride %zu is smaller than kernel '%s' message_size %u", fn, stride,
                        k->name, k->desc.message_size);
    rk__kernel_core *c = rk__core_of(k);
    rk_status s = sender_enter(c, fn);
    if (s != RK_OK) return s;
    size_t n = 0;
    uint64_t first = k->next_id;
    if (count) s = send_common(c, fn, messages, stride, count, timeout_ns, &n, &first);
    sender_leave(c);
    if (sent) *sent = n;
    if (first_id) *first_id = first;
    return s;
}

/* ---- the held-reply buffer ---------------------------------------------------- */

size_t rk__kernel_held_pending(rk__kernel_core *c) {
    pthread_mutex_lock(&c->receive_lock);
    size_t n = c->k.held_count - c->k.held_first;
    pthread_mutex_unlock(&c->receive_lock);
    return n;
}

/* Room for at least one more held reply. Caller holds receive_lock. */
static rk_status grow_held(rk_kernel *k) {
    if (k->held_first == k->held_count) k->held_first = k->held_count = 0;
    if (k->held_count < k->held_capacity) return RK_OK;
    size_t cap = k->held_capacity ? k->held_capacity * 2 : 256;
    size_t rsize = k->desc.reply_size ? k->desc.reply_size : 1;
    unsigned char *r = realloc(k->held_replies, cap * rsize);
    if (!r) return rk__fail(RK_OUT_OF_MEMORY, "kernel '%s': no memory to hold %zu replies", k->name, cap);
    k->held_replies = r;
    rk_reply_info *i = realloc(k->held_infos, cap * sizeof *i);
    if (!i) return rk__fail(RK_OUT_OF_MEMORY, "kernel '%s': no memory to hold %zu replies", k->name, cap);
    k->held_infos = i;
    k->held_capacity = cap;
    return RK_OK;
}

rk_status rk__kernel_hold_replies(rk__kernel_core *c) {
    rk_kernel *k = &c->k;
    rk_status s = RK_OK;
    pthread_mutex_lock(&c->receive_lock);
    for (;;) {
        s = grow_held(k);
        if (s != RK_OK) break;
        size_t room = k->held_capacity - k->held_count, got = 0;
        s = k->ring->try_receive(k, k->held_replies + k->held_count * k->desc.reply_size, k->desc.reply_size,
                                 k->held_infos + k->held_count, room, &got);
        if (s != RK_OK) break;
        k->held_count += got;
        if (got < room) break;
    }
    pthread_mutex_unlock(&c->receive_lock);
    return s;
}

/* ---- receiving ---------------------------------------------------------------- */

/* Takes up to max replies without waiting: held ones first, then the
 * backend's. */
rk_status rk__kernel_take_replies(rk__kernel_core *c, unsigned char *replies, size_t stride, rk_reply_info *infos,
                                  size_t max, size_t *taken) {
    rk_kernel *k = &c->k;
    size_t rsize = k->desc.reply_size, n = 0;
    rk_status s = RK_OK;
    pthread_mutex_lock(&c->receive_lock);
    while (n < max && k->held_first < k->held_count) {
        if (rsize) memcpy(replies + n * stride, k->held_replies + k->held_first * rsize, rsize);
        if (infos) infos[n] = k->held_infos[k->held_first];
        k->held_first++;
        n++;
    }
    while (n < max && s == RK_OK) {
        rk_reply_info chunk[INFO_CHUNK];
        rk_reply_info *dst = infos ? infos + n : chunk;
        size_t want = infos ? max - n : (max - n < INFO_CHUNK ? max - n : INFO_CHUNK);
        size_t got = 0;
        s = k->ring->try_receive(k, replies + n * stride, stride, dst, want, &got);
        rk__latency_on_take(&c->latency, dst, got);
        n += got;
        if (got < want) break;
    }
    /* Under the lock: one writer, a plain store (not a locked add). */
    if (n)
        atomic_store_explicit(&k->replies_received, atomic_load_explicit(&k->replies_received, memory_order_relaxed) + n,
                              memory_order_relaxed);
    pthread_mutex_unlock(&c->receive_lock);
    *taken = n;
    return s;
}

static rk_status receive_common(rk__kernel_core *c, const char *fn, unsigned char *replies, size_t stride,
                                rk_reply_info *infos, size_t max, uint64_t timeout_ns, size_t *received) {
    rk_kernel *k = &c->k;
    rk__backoff b;
    bool waiting = false;
    *received = 0;
    if (atomic_load_explicit(&c->clients, memory_order_acquire))
        return rk__fail(RK_BAD_STATE,
                        "%s: kernel '%s' serves calls (rk_kernel_call / rk_kernel_submit were used), which route "
                        "every reply to its caller; raw receive is refused on it",
                        fn, k->name);
    for (;;) {
        size_t n = 0;
        rk_status s = rk__kernel_take_replies(c, replies, stride, infos, max, &n);
        if (n) {
            *received = n;
            return RK_OK;
        }
        if (s != RK_OK) return s;
        /* A blocking receive does not poll on its first look (a reply is
         * usually on its way; polling would pull the worker's lines away
         * from it, a cache miss on each side of every round trip): it polls
         * from the first spin rounds on. One that may not wait polls now. */
        bool polled = waiting ? rk__backoff_should_poll(&b) : timeout_ns == RK_NO_WAIT;
        rk__control ctl;
        if (polled) rk__kernel_refresh(c, &ctl);
        int st = atomic_load(&k->state);
        /* Nothing more can come: terminate moved every reply into the held
         * buffer, which is empty now. */
        if (st == RK_KERNEL_TERMINATED && rk__kernel_held_pending(c) == 0)
            return rk__fail(RK_TERMINATED, "%s: kernel '%s' has terminated and every reply has been received", fn,
                            k->name);
        /* A failed kernel with nothing queued anywhere has no reply to give. */
        if (polled && st == RK_KERNEL_FAILED && ctl.input_depth == 0 && ctl.output_depth == 0 &&
            rk__kernel_held_pending(c) == 0) {
            n = 0;
            s = rk__kernel_take_replies(c, replies, stride, infos, max, &n); /* one last look, ordered after the poll */
            if (n) {
                *received = n;
                return RK_OK;
            }
            return rk__kernel_fail_failed(c, fn);
        }
        if (!waiting) {
            rk__backoff_init(&b, timeout_ns);
            waiting = true;
        }
        if (!rk__kernel_wait(c, &b))
            return timeout_ns == RK_NO_WAIT
                       ? rk__fail(RK_WOULD_BLOCK, "%s: kernel '%s' has no reply ready", fn, k->name)
                       : rk__fail(RK_TIMEOUT, "%s: no reply from kernel '%s' within %llu ns", fn, k->name,
                                  (unsigned long long)timeout_ns);
    }
}

rk_status rk_kernel_receive(rk_kernel *k, void *reply, size_t capacity, rk_reply_info *info, uint64_t timeout_ns) {
    static const char fn[] = "rk_kernel_receive";
    if (!k) return rk__fail(RK_NULL_ARGUMENT, "%s: k is NULL", fn);
    uint32_t rsize = k->desc.reply_size;
    if (!reply && rsize) return rk__fail(RK_NULL_ARGUMENT, "%s: reply is NULL", fn);
    if (capacity < rsize)
        return rk__fail(RK_INVALID_ARGUMENT, "%s: reply buffer of %zu bytes is smaller than kernel '%s' reply_size %u",
                        fn, capacity, k->name, rsize);
    unsigned char dummy;
    rk_reply_info local;
    size_t got = 0;
    return receive_common(rk__core_of(k), fn, reply ? reply : &dummy, rsize, info ? info : &local, 1, timeout_ns,
                          &got);
}

rk_status rk_kernel_receive_batch(rk_kernel *k, void *replies, size_t stride, rk_reply_info *infos, size_t max,
                                  uint64_t timeout_ns, size_t *received) {
    static const char fn[] = "rk_kernel_receive_batch";
    if (received) *received = 0;
    if (!k) return rk__fail(RK_NULL_ARGUMENT, "%s: k is NULL", fn);
    if (!received) return rk__fail(RK_NULL_ARGUMENT, "%s: received is NULL", fn);
    uint32_t rsize = k->desc.reply_size;
    if (max == 0) return RK_OK;
    if (!replies && rsize) return rk__fail(RK_NULL_ARGUMENT, "%s: replies is NULL", fn);
    if (stride < rsize)
        return rk__fail(RK_INVALID_ARGUMENT, "%s: stride %zu is smaller than kernel '%s' reply_size %u", fn, stride,
                        k->name, rsize);
    unsigned char dummy;
    return receive_common(rk__core_of(k), fn, replies ? replies : &dummy, rsize ? stride : 0, infos, max, timeout_ns,
                          received);
}
