/* A lock-free single-producer/single-consumer ring of fixed-size byte slots.
 *
 * Header-only so the hot path (push, pop, reserve, commit) inlines into the
 * caller. One thread produces, one thread consumes; they may be any two
 * threads, and the roles may move between threads when something else (a
 * mutex, a join) orders the hand-over.
 *
 * Layout follows liburing: head is written only by the consumer, tail only by
 * the producer, each on its own 64-byte cache line. Each side also keeps a
 * private cached copy of the other side's index on a line of its own, so it
 * only touches the shared line when the cached value says the ring looks full
 * (producer) or empty (consumer). Indices are free-running 64-bit counters
 * (they never wrap in practice); a slot is index & mask.
 *
 * Memory ordering, in one place:
 *   producer: write slot bytes, then store tail with release
 *             -> the consumer's acquire load of tail sees the bytes.
 *   consumer: read slot bytes, then store head with release
 *             -> the producer's acquire load of head knows the slot is free
 *                before it overwrites it.
 * Each side reads its own index relaxed (nobody else writes it).
 *
 *   rk_queue *q;
 *   rk_queue_create(1024, 64, &q);        // producer:      consumer:
 *   rk_queue_try_push(q, msg, 48);        //  -> RK_OK      rk_queue_try_pop(q, buf, 64)
 *   rk_queue_destroy(q);
 *
 * Zero-copy variants: rk_queue_reserve / rk_queue_commit (producer) and
 * rk_queue_peek / rk_queue_release (consumer) hand out slot indices; address a
 * slot with rk_queue_slot. The index is published once per commit/release, so
 * a batch costs one release store however many slots it fills.
 */
#ifndef RINGKERNEL_QUEUE_H
#define RINGKERNEL_QUEUE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RK_QUEUE_CACHE_LINE 64
/* Largest capacity accepted: keeps capacity * slot stride well inside size_t. */
#define RK_QUEUE_MAX_CAPACITY (UINT32_C(1) << 30)
/* Largest slot accepted (a 64 KiB message plus its header, with room). */
#define RK_QUEUE_MAX_SLOT_SIZE (UINT32_C(1) << 20)

typedef struct rk_queue {
    /* Consumer's line: the only writer of head. */
    _Alignas(RK_QUEUE_CACHE_LINE) _Atomic uint64_t head;
    /* Producer's line: the only writer of tail. */
    _Alignas(RK_QUEUE_CACHE_LINE) _Atomic uint64_t tail;
    /* Producer-private: last head it loaded, and its own copy of the geometry
     * so a push touches only this line, tail's line and the slot. */
    _Alignas(RK_QUEUE_CACHE_LINE) uint64_t producer_cached_head;
    unsigned char *producer_slots;
    uint64_t producer_mask;
    uint32_t producer_stride, producer_slot_size;
    /* Consumer-private, the mirror image. */
    _Alignas(RK_QUEUE_CACHE_LINE) uint64_t consumer_cached_tail;
    unsigned char *consumer_slots;
    uint64_t consumer_mask;
    uint32_t consumer_stride, consumer_slot_size;
    /* Read-only after create; for either side and for observers. */
    _Alignas(RK_QUEUE_CACHE_LINE) uint32_t capacity;
    uint32_t slot_size;   /* bytes a message may use */
    uint32_t slot_stride; /* slot_size rounded up to 16 bytes */
    unsigned char *slots;
} rk_queue;

/* Creates a queue of capacity slots of slot_size bytes each, zero-filled.
 * RK_BAD_CAPACITY unless capacity is a non-zero power of two (at most
 * RK_QUEUE_MAX_CAPACITY); RK_INVALID_ARGUMENT for slot_size 0 or over
 * RK_QUEUE_MAX_SLOT_SIZE; RK_NULL_ARGUMENT for out == NULL. */
static inline rk_status rk_queue_create(uint32_t capacity, uint32_t slot_size, rk_queue **out) {
    if (!out) return RK_NULL_ARGUMENT;
    *out = NULL;
    if (capacity == 0 || (capacity & (capacity - 1)) != 0 || capacity > RK_QUEUE_MAX_CAPACITY)
        return RK_BAD_CAPACITY;
    if (slot_size == 0 || slot_size > RK_QUEUE_MAX_SLOT_SIZE) return RK_INVALID_ARGUMENT;
    uint32_t stride = (slot_size + 15u) & ~15u;
    /* The header and the slots in one block; both start on a cache line. */
    size_t header = (sizeof(rk_queue) + RK_QUEUE_CACHE_LINE - 1) & ~(size_t)(RK_QUEUE_CACHE_LINE - 1);
    if ((uint64_t)capacity * stride > (uint64_t)SIZE_MAX - header - RK_QUEUE_CACHE_LINE) return RK_OUT_OF_MEMORY;
    size_t bytes = header + (size_t)capacity * stride;
    bytes = (bytes + RK_QUEUE_CACHE_LINE - 1) & ~(size_t)(RK_QUEUE_CACHE_LINE - 1);
    void *block = aligned_alloc(RK_QUEUE_CACHE_LINE, bytes);
    if (!block) return RK_OUT_OF_MEMORY;
    memset(block, 0, bytes);
    rk_queue *q = (rk_queue *)block;
    atomic_init(&q->head, 0);
    atomic_init(&q->tail, 0);
    q->capacity = capacity;
    q->slot_size = slot_size;
    q->slot_stride = stride;
    q->slots = (unsigned char *)block + header;
    q->producer_slots = q->consumer_slots = q->slots;
    q->producer_mask = q->consumer_mask = capacity - 1u;
    q->producer_stride = q->consumer_stride = stride;
    q->producer_slot_size = q->consumer_slot_size = slot_size;
    *out = q;
    return RK_OK;
}

/* Frees the queue. NULL is ignored. Neither side may use it afterwards. */
static inline void rk_queue_destroy(rk_queue *q) { free(q); }

static inline uint32_t rk_queue_capacity(const rk_queue *q) { return q->capacity; }
static inline uint32_t rk_queue_slot_size(const rk_queue *q) { return q->slot_size; }

/* Messages waiting, as seen from any thread. Exact on either side when the
 * other is idle; otherwise a snapshot that may already be stale. */
static inline uint32_t rk_queue_depth(rk_queue *q) {
    /* head first: tail only grows, so tail - head can never go negative. */
    uint64_t head = atomic_load_explicit(&q->head, memory_order_acquire);
    uint64_t tail = atomic_load_explicit(&q->tail, memory_order_acquire);
    return (uint32_t)(tail - head);
}

/* ---- producer side ------------------------------------------------------- */

/* Address of the slot for free-running index i (producer's view). */
static inline void *rk_queue_producer_slot(rk_queue *q, uint64_t i) {
    return q->producer_slots + (size_t)(i & q->producer_mask) * q->producer_stride;
}

/* Up to want free slots, starting at index *first: fill them (address with
 * rk_queue_producer_slot), then rk_queue_commit. Returns how many are free
 * (0 when full). Reserving again before committing returns the same slots. */
static inline uint32_t rk_queue_reserve(rk_queue *q, uint32_t want, uint64_t *first) {
    uint64_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed); /* our own index */
    uint64_t cap = q->producer_mask + 1u;
    uint64_t free_slots = cap - (tail - q->producer_cached_head);
    if (free_slots < want) {
        /* acquire: the consumer finished reading these slots before it moved head. */
        q->producer_cached_head = atomic_load_explicit(&q->head, memory_order_acquire);
        free_slots = cap - (tail - q->producer_cached_head);
    }
    *first = tail;
    return (uint32_t)(free_slots < want ? free_slots : want);
}

/* Publishes count reserved slots to the consumer. */
static inline void rk_queue_commit(rk_queue *q, uint32_t count) {
    uint64_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
    /* release: the slot bytes written before this store are visible to the
     * consumer once it acquires the new tail. */
    atomic_store_explicit(&q->tail, tail + count, memory_order_release);
}

/* memcpy for a message: 16 bytes at a time, inline. The sizes here are
 * known only at run time, where memcpy is a library call that costs as much
 * as the rest of a one-message push or pop. */
static inline void rk_queue_copy_(void *dst, const void *src, size_t size) {
    unsigned char *d = (unsigned char *)dst;
    const unsigned char *s = (const unsigned char *)src;
    size_t i = 0;
    for (; i + 16u <= size; i += 16u) memcpy(d + i, s + i, 16u);
    if (i < size) memcpy(d + i, s + i, size - i);
}

/* Copies size bytes (<= slot size) into the next slot; the rest of the slot is
 * zeroed. RK_WOULD_BLOCK when full, RK_MESSAGE_TOO_LARGE (queue unchanged)
 * when size is over the slot size. */
static inline rk_status rk_queue_try_push(rk_queue *q, const void *data, size_t size) {
    if (size > q->producer_slot_size) return RK_MESSAGE_TOO_LARGE;
    uint64_t i;
    if (rk_queue_reserve(q, 1, &i) == 0) return RK_WOULD_BLOCK;
    unsigned char *slot = (unsigned char *)rk_queue_producer_slot(q, i);
    rk_queue_copy_(slot, data, size);
    if (size < q->producer_slot_size) memset(slot + size, 0, q->producer_slot_size - size);
    rk_queue_commit(q, 1);
    return RK_OK;
}

/* Pushes up to count items of item_size bytes (<= slot size), stride bytes
 * apart, publishing tail once. Returns how many were pushed (0 when full, or
 * when item_size is over the slot size: check that first if it can be). */
static inline size_t rk_queue_push_batch(rk_queue *q, const void *items, size_t stride, size_t count,
                                         size_t item_size) {
    if (item_size > q->producer_slot_size || count == 0) return 0;
    uint64_t first;
    uint32_t want = count > UINT32_MAX ? UINT32_MAX : (uint32_t)count;
    uint32_t n = rk_queue_reserve(q, want, &first);
    const unsigned char *src = (const unsigned char *)items;
    size_t pad = q->producer_slot_size - item_size;
    for (uint32_t k = 0; k < n; k++) {
        unsigned char *slot = (unsigned char *)rk_queue_producer_slot(q, first + k);
        rk_queue_copy_(slot, src + (size_t)k * stride, item_size);
        if (pad) memset(slot + item_size, 0, pad);
    }
    if (n) rk_queue_commit(q, n);
    return n;
}

/* ---- consumer side ------------------------------------------------------- */

/* Address of the slot for free-running index i (consumer's view). */
static inline void *rk_queue_consumer_slot(rk_queue *q, uint64_t i) {
    return q->consumer_slots + (size_t)(i & q->consumer_mask) * q->consumer_stride;
}

/* Up to max filled slots, starting at index *first: read them in place
 * (rk_queue_consumer_slot), then rk_queue_release. Returns how many (0 when
 * empty). */
static inline uint32_t rk_queue_peek(rk_queue *q, uint32_t max, uint64_t *first) {
    uint64_t head = atomic_load_explicit(&q->head, memory_order_relaxed); /* our own index */
    uint64_t avail = q->consumer_cached_tail - head;
    if (avail < max) {
        /* acquire: pairs with the producer's release of tail, so the slot
         * bytes it wrote are visible here. */
        q->consumer_cached_tail = atomic_load_explicit(&q->tail, memory_order_acquire);
        avail = q->consumer_cached_tail - head;
    }
    *first = head;
    return (uint32_t)(avail < max ? avail : max);
}

/* Gives count peeked slots back to the producer. */
static inline void rk_queue_release(rk_queue *q, uint32_t count) {
    uint64_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
    /* release: our reads of the slots are done before the producer can see
     * them free and overwrite them. */
    atomic_store_explicit(&q->head, head + count, memory_order_release);
}

/* Copies the next message into out (min(out_size, slot size) bytes).
 * RK_WOULD_BLOCK when empty. */
static inline rk_status rk_queue_try_pop(rk_queue *q, void *out, size_t out_size) {
    uint64_t i;
    if (rk_queue_peek(q, 1, &i) == 0) return RK_WOULD_BLOCK;
    size_t n = out_size < q->consumer_slot_size ? out_size : q->consumer_slot_size;
    rk_queue_copy_(out, rk_queue_consumer_slot(q, i), n);
    rk_queue_release(q, 1);
    return RK_OK;
}

/* Pops up to max messages into out, stride bytes apart, copying
 * min(stride, slot size) bytes each and publishing head once. Returns how
 * many. */
static inline size_t rk_queue_pop_batch(rk_queue *q, void *out, size_t stride, size_t max) {
    if (max == 0) return 0;
    uint64_t first;
    uint32_t want = max > UINT32_MAX ? UINT32_MAX : (uint32_t)max;
    uint32_t n = rk_queue_peek(q, want, &first);
    size_t bytes = stride < q->consumer_slot_size ? stride : q->consumer_slot_size;
    unsigned char *dst = (unsigned char *)out;
    for (uint32_t k = 0; k < n; k++) rk_queue_copy_(dst + (size_t)k * stride, rk_queue_consumer_slot(q, first + k), bytes);
    if (n) rk_queue_release(q, n);
    return n;
}

#ifdef __cplusplus
}
#endif
#endif
