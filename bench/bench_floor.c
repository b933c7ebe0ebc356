/* The floors of bench_floor.h: a bare SPSC ring and a one-word ping-pong. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_floor.h"

enum { RING_SLOTS = 4096, LINE = 64, MAX_SLOT = 256 };

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One step of a wait: spin a while (the peer is running on another core),
 * then yield (it is not: on a machine with fewer free cores than threads, a
 * pure spin would wait out whole time slices and be no floor at all). */
static inline void wait_step(unsigned *spins) {
    if (++*spins < 256) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        return;
    }
    *spins = 0;
    sched_yield();
}

typedef struct bare_ring {
    _Alignas(LINE) _Atomic uint64_t head; /* next slot the consumer reads */
    _Alignas(LINE) _Atomic uint64_t tail; /* next slot the producer writes */
    _Alignas(LINE) unsigned char *slots;
    uint32_t slot_size, batch;
    uint64_t messages, errors;
} bare_ring;

static void *consume(void *arg) {
    bare_ring *r = arg;
    uint64_t head = 0, errors = 0;
    while (head < r->messages) {
        uint64_t tail;
        unsigned spins = 0;
        while ((tail = atomic_load_explicit(&r->tail, memory_order_acquire)) == head) wait_step(&spins);
        uint64_t end = tail - head > r->batch ? head + r->batch : tail;
        for (; head < end; head++) {
            const unsigned char *s = r->slots + (head % RING_SLOTS) * r->slot_size;
            uint64_t seq, last;
            memcpy(&seq, s, 8);
            memcpy(&last, s + r->slot_size - 8, 8);
            errors += seq != head || last != ~head; /* order, and not torn */
        }
        atomic_store_explicit(&r->head, head, memory_order_release);
    }
    r->errors = errors;
    return NULL;
}

rk_status rk_bench_floor_ring(const rk_bench_floor_ring_opts *opts, rk_bench_floor_result *out) {
    if (!out) return RK_INVALID_ARGUMENT;
    bare_ring r;
    memset(&r, 0, sizeof r);
    r.messages = opts && opts->messages ? opts->messages : 20000000u;
    r.slot_size = opts && opts->slot_size ? opts->slot_size : 64;
    r.batch = opts && opts->batch > 1 ? opts->batch : 1;
    if (r.slot_size < 16 || r.slot_size > MAX_SLOT || r.batch > RING_SLOTS) return RK_INVALID_ARGUMENT;
    r.slots = aligned_alloc(LINE, (size_t)RING_SLOTS * r.slot_size);
    if (!r.slots) return RK_OUT_OF_MEMORY;
    unsigned char msg[MAX_SLOT];
    memset(msg, 0xab, sizeof msg);
    pthread_t consumer;
    uint64_t start = now_ns();
    if (pthread_create(&consumer, NULL, consume, &r) != 0) {
        free(r.slots);
        return RK_INTERNAL;
    }
    uint64_t tail = 0, head = 0;
    while (tail < r.messages) {
        unsigned spins = 0;
        while (tail - head + r.batch > RING_SLOTS) {
            head = atomic_load_explicit(&r.head, memory_order_acquire);
            if (tail - head + r.batch > RING_SLOTS) wait_step(&spins);
        }
        uint64_t end = tail + r.batch < r.messages ? tail + r.batch : r.messages;
        for (; tail < end; tail++) {
            uint64_t last = ~tail;
            memcpy(msg, &tail, 8);
            memcpy(msg + r.slot_size - 8, &last, 8);
            memcpy(r.slots + (tail % RING_SLOTS) * r.slot_size, msg, r.slot_size);
        }
        atomic_store_explicit(&r.tail, tail, memory_order_release);
    }
    pthread_join(consumer, NULL);
    double seconds = (double)(now_ns() - start) / 1e9;
    free(r.slots);
    memset(out, 0, sizeof *out);
    out->messages = r.messages;
    out->seconds = seconds;
    out->messages_per_second = seconds > 0 ? (double)r.messages / seconds : 0;
    out->errors = r.errors;
    return RK_OK;
}

typedef struct pingpong {
    _Alignas(LINE) _Atomic uint64_t ping;
    _Alignas(LINE) _Atomic uint64_t pong;
    uint64_t rounds;
} pingpong;

static void *answer(void *arg) {
    pingpong *p = arg;
    for (uint64_t i = 1; i <= p->rounds; i++) {
        unsigned spins = 0;
        while (atomic_load_explicit(&p->ping, memory_order_acquire) != i) wait_step(&spins);
        atomic_store_explicit(&p->pong, i, memory_order_release);
    }
    return NULL;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

rk_status rk_bench_floor_pingpong(uint64_t rounds, rk_bench_floor_result *out) {
    if (!out) return RK_INVALID_ARGUMENT;
    if (!rounds) rounds = 100000;
    uint64_t *rtt = malloc(rounds * sizeof *rtt);
    pingpong *p = aligned_alloc(LINE, sizeof *p);
    if (!rtt || !p) {
        free(rtt);
        free(p);
        return RK_OUT_OF_MEMORY;
    }
    memset(p, 0, sizeof *p);
    p->rounds = rounds;
    pthread_t peer;
    if (pthread_create(&peer, NULL, answer, p) != 0) {
        free(rtt);
        free(p);
        return RK_INTERNAL;
    }
    uint64_t errors = 0, start = now_ns();
    for (uint64_t i = 1; i <= rounds; i++) {
        uint64_t t0 = now_ns();
        atomic_store_explicit(&p->ping, i, memory_order_release);
        uint64_t got;
        unsigned spins = 0;
        while ((got = atomic_load_explicit(&p->pong, memory_order_acquire)) != i) {
            errors += got > i;
            wait_step(&spins);
        }
        rtt[i - 1] = now_ns() - t0;
    }
    double seconds = (double)(now_ns() - start) / 1e9;
    pthread_join(peer, NULL);
    qsort(rtt, rounds, sizeof *rtt, cmp_u64);
    memset(out, 0, sizeof *out);
    out->messages = rounds;
    out->seconds = seconds;
    out->messages_per_second = seconds > 0 ? (double)rounds / seconds : 0;
    out->p50_ns = (double)rtt[rounds / 2];
    out->p99_ns = (double)rtt[rounds * 99 / 100];
    out->errors = errors;
    free(rtt);
    free(p);
    return RK_OK;
}
