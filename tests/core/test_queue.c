/* The SPSC queue (include/ringkernel/queue.h): refused geometries, full and
 * empty behaviour, batch and zero-copy paths, and a two-thread stress test
 * that checks every message arrives exactly once and in order. */
#include <pthread.h>
#include <sched.h>

#include "check.h"
#include "ringkernel/queue.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif

static void test_refused_geometry(void) {
    rk_queue *q = (rk_queue *)0x1;
    CHECK_STATUS(rk_queue_create(0, 64, &q), RK_BAD_CAPACITY);
    CHECK(q == NULL);
    CHECK_STATUS(rk_queue_create(3, 64, &q), RK_BAD_CAPACITY);
    CHECK_STATUS(rk_queue_create(100, 64, &q), RK_BAD_CAPACITY);
    CHECK_STATUS(rk_queue_create(RK_QUEUE_MAX_CAPACITY * 2u, 64, &q), RK_BAD_CAPACITY);
    CHECK_STATUS(rk_queue_create(8, 0, &q), RK_INVALID_ARGUMENT);
    CHECK_STATUS(rk_queue_create(8, 64, NULL), RK_NULL_ARGUMENT);
    CHECK_OK(rk_queue_create(1, 1, &q));
    CHECK_EQ(rk_queue_capacity(q), 1);
    rk_queue_destroy(q);
}

static void test_full_empty_and_too_large(void) {
    rk_queue *q;
    CHECK_OK(rk_queue_create(4, 24, &q));
    CHECK_EQ(((uintptr_t)q) % RK_QUEUE_CACHE_LINE, 0);
    CHECK_EQ(rk_queue_depth(q), 0);
    unsigned char buf[64];
    CHECK_STATUS(rk_queue_try_pop(q, buf, sizeof buf), RK_WOULD_BLOCK);

    uint32_t v = 7;
    CHECK_OK(rk_queue_try_push(q, &v, sizeof v));
    unsigned char big[25] = {0};
    CHECK_STATUS(rk_queue_try_push(q, big, sizeof big), RK_MESSAGE_TOO_LARGE);
    CHECK_EQ(rk_queue_depth(q), 1); /* the refused push left the queue unchanged */
    for (v = 8; v < 11; v++) CHECK_OK(rk_queue_try_push(q, &v, sizeof v));
    CHECK_EQ(rk_queue_depth(q), 4);
    CHECK_STATUS(rk_queue_try_push(q, &v, sizeof v), RK_WOULD_BLOCK);
    CHECK_EQ(rk_queue_depth(q), 4);

    /* FIFO order; a short push is zero-padded to the slot size. */
    for (uint32_t want = 7; want < 11; want++) {
        memset(buf, 0xAB, sizeof buf);
        CHECK_OK(rk_queue_try_pop(q, buf, sizeof buf));
        uint32_t got;
        memcpy(&got, buf, sizeof got);
        CHECK_EQ(got, want);
        for (int i = 4; i < 24; i++) CHECK_EQ(buf[i], 0);
        CHECK_EQ(buf[24], 0xAB); /* only slot_size bytes are copied out */
    }
    CHECK_STATUS(rk_queue_try_pop(q, buf, sizeof buf), RK_WOULD_BLOCK);
    /* Wraps around the ring many times. */
    for (uint32_t i = 0; i < 1000; i++) {
        CHECK_OK(rk_queue_try_push(q, &i, sizeof i));
        uint32_t got = 0;
        CHECK_OK(rk_queue_try_pop(q, &got, sizeof got));
        CHECK_EQ(got, i);
    }
    rk_queue_destroy(q);
}

static void test_batches_and_zero_copy(void) {
    rk_queue *q;
    CHECK_OK(rk_queue_create(8, 8, &q));
    uint64_t items[20];
    for (int i = 0; i < 20; i++) items[i] = 100u + (uint64_t)i;
    CHECK_EQ(rk_queue_push_batch(q, items, sizeof items[0], 20, sizeof items[0]), 8);
    CHECK_EQ(rk_queue_push_batch(q, items, sizeof items[0], 20, sizeof items[0]), 0);
    CHECK_EQ(rk_queue_push_batch(q, items, 16, 1, 16), 0); /* item over the slot size */
    uint64_t out[20] = {0};
    CHECK_EQ(rk_queue_pop_batch(q, out, sizeof out[0], 5), 5);
    for (int i = 0; i < 5; i++) CHECK_U64_EQ(out[i], 100u + (uint64_t)i);
    CHECK_EQ(rk_queue_depth(q), 3);

    /* reserve/commit: reserving twice without commit gives the same slots. */
    uint64_t first, again;
    CHECK_EQ(rk_queue_reserve(q, 10, &first), 5);
    CHECK_EQ(rk_queue_reserve(q, 2, &again), 2);
    CHECK_U64_EQ(first, again);
    for (uint32_t k = 0; k < 5; k++) {
        uint64_t v = 200u + k;
        memcpy(rk_queue_producer_slot(q, first + k), &v, sizeof v);
    }
    CHECK_EQ(rk_queue_depth(q), 3); /* nothing visible before commit */
    rk_queue_commit(q, 5);
    CHECK_EQ(rk_queue_depth(q), 8);

    /* peek/release: peeking does not consume. */
    uint64_t at;
    CHECK_EQ(rk_queue_peek(q, 2, &at), 2);
    uint64_t v;
    memcpy(&v, rk_queue_consumer_slot(q, at), sizeof v);
    CHECK_U64_EQ(v, 105);
    CHECK_EQ(rk_queue_peek(q, 100, &at), 8);
    rk_queue_release(q, 3);
    CHECK_EQ(rk_queue_pop_batch(q, out, sizeof out[0], 20), 5);
    for (int k = 0; k < 5; k++) CHECK_U64_EQ(out[k], 200u + (uint64_t)k);
    CHECK_EQ(rk_queue_depth(q), 0);
    rk_queue_destroy(q);
}

/* ---- two-thread stress ------------------------------------------------------ */

enum { SLOT = 64, BATCH = 32 };

typedef struct stress {
    rk_queue *q;
    uint64_t count;
    uint64_t errors; /* written by the consumer only */
} stress;

/* Every message carries its sequence number and a checksum of it in the
 * other words, so a torn or stale slot is caught, not only a wrong order. */
static void fill(unsigned char *slot, uint64_t seq) {
    uint64_t w[SLOT / 8];
    for (int i = 0; i < SLOT / 8; i++) w[i] = seq * 0x9E3779B97F4A7C15ull + (uint64_t)i;
    w[0] = seq;
    memcpy(slot, w, SLOT);
}

static int check_slot(const unsigned char *slot, uint64_t seq) {
    uint64_t w[SLOT / 8];
    memcpy(w, slot, SLOT);
    if (w[0] != seq) return 1;
    for (int i = 1; i < SLOT / 8; i++)
        if (w[i] != seq * 0x9E3779B97F4A7C15ull + (uint64_t)i) return 1;
    return 0;
}

/* Full or empty: pause, and now and then yield, so a side that has the
 * core does not spin away the time the other side needs (2 shared cores). */
static void wait_a_little(unsigned *misses) {
    if (++*misses % 64 == 0) sched_yield();
#if defined(__x86_64__) || defined(__i386__)
    else __builtin_ia32_pause();
#endif
}

static void *producer_main(void *arg) {
    stress *s = arg;
    uint64_t seq = 0;
    unsigned char msg[SLOT];
    unsigned misses = 0;
    while (seq < s->count) {
        if ((seq & 1024) == 0) {
            /* single pushes */
            fill(msg, seq);
            if (rk_queue_try_push(s->q, msg, SLOT) == RK_OK) seq++;
            else wait_a_little(&misses);
        } else {
            /* zero-copy batches */
            uint64_t first;
            uint64_t left = s->count - seq;
            uint32_t n = rk_queue_reserve(s->q, left < BATCH ? (uint32_t)left : BATCH, &first);
            for (uint32_t k = 0; k < n; k++) fill(rk_queue_producer_slot(s->q, first + k), seq + k);
            if (n) rk_queue_commit(s->q, n);
            else wait_a_little(&misses);
            seq += n;
        }
    }
    return NULL;
}

static void *consumer_main(void *arg) {
    stress *s = arg;
    uint64_t seq = 0;
    unsigned char batch[BATCH * SLOT];
    unsigned misses = 0;
    while (seq < s->count) {
        uint64_t before = seq;
        if ((seq & 2048) == 0) {
            size_t n = rk_queue_pop_batch(s->q, batch, SLOT, BATCH);
            for (size_t k = 0; k < n; k++) s->errors += (uint64_t)check_slot(batch + k * SLOT, seq + k);
            seq += n;
        } else {
            uint64_t first;
            uint32_t n = rk_queue_peek(s->q, BATCH, &first);
            for (uint32_t k = 0; k < n; k++) s->errors += (uint64_t)check_slot(rk_queue_consumer_slot(s->q, first + k), seq + k);
            if (n) rk_queue_release(s->q, n);
            seq += n;
        }
        if (seq == before) wait_a_little(&misses);
        if (s->errors) break;
    }
    return NULL;
}

static void test_two_thread_stress(uint64_t count) {
    stress s = {.count = count};
    CHECK_OK(rk_queue_create(1024, SLOT, &s.q));
    pthread_t p, c;
    CHECK_EQ(pthread_create(&c, NULL, consumer_main, &s), 0);
    CHECK_EQ(pthread_create(&p, NULL, producer_main, &s), 0);
    pthread_join(p, NULL);
    pthread_join(c, NULL);
    CHECK_U64_EQ(s.errors, 0);
    CHECK_EQ(rk_queue_depth(s.q), 0);
    CHECK_U64_EQ(atomic_load(&s.q->head), count);
    rk_queue_destroy(s.q);
}

int main(void) {
    test_refused_geometry();
    test_full_empty_and_too_large();
    test_batches_and_zero_copy();
#ifdef SANITIZED
    test_two_thread_stress(2000000); /* sanitizers make each access several times slower */
#else
    test_two_thread_stress(10u * 1000u * 1000u);
#endif
    printf("queue: ok\n");
    return 0;
}
