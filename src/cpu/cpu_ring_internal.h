/* What the CPU ring-kernel files share.
 *
 *   cpu_ring.c              the rk__ring_iface: mode, handler, state, dispatch
 *   cpu_ring_persistent.c   worker threads polling their own pair of queues
 *   cpu_ring_traditional.c  one device-layer launch per batch of messages
 *   cpu_ring_guard.c        catching a crashing handler on the thread running it
 *   cpu_ring_cancel.c       stopping a thread stuck in a handler (the watchdog, destroy)
 *
 * Queue slots (both modes):
 *   request: [id u64][reserved u32][tag u32][message_size bytes]
 *   reply:   [id u64][status i32][tag u32][reply_size bytes]
 * Payloads start 16 bytes in, so a handler may cast them to any struct.
 *
 * Tagged slots (persistent mode): a producer stores each slot's tag, the
 * low 32 bits of its queue index + 1, with release after the slot's bytes
 * and before it commits tail; the consumer acquires the tag of the slot it
 * wants next instead of loading tail. A round trip then moves the slots'
 * lines and nothing else: the tail lines stay with their writers (only a
 * poll reads them), where loading tail cost a transfer of the tail line on
 * both sides of each round trip (docs/architecture.md, "Where the CPU
 * message path's time goes"). A slot's old tag is index + 1 - capacity (or
 * 0, never written), never index + 1. The consumer may so take a slot
 * before tail covers it: head can pass tail for the few instructions
 * between a producer's tags and its commit (rk__cpu_queue_depth clamps).
 * Nobody writes a tag but with rk__cpu_slot_set_tag: header writes and
 * slot moves leave its 4 bytes alone.
 */
#ifndef RK_CPU_RING_INTERNAL_H
#define RK_CPU_RING_INTERNAL_H

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>

#include "cpu_channel.h"
#include "cpu_internal.h"
#include "ringkernel/queue.h"

enum {
    RK_CPU_SLOT_HEADER = 16,
    RK_CPU_MAX_WORKERS = 64,
};

typedef struct rk__cpu_request_header {
    uint64_t id;
    uint32_t reserved;
    uint32_t tag; /* read and written only by the functions below */
} rk__cpu_request_header;

typedef struct rk__cpu_reply_header {
    uint64_t id;
    int32_t status;
    uint32_t tag;
} rk__cpu_reply_header;

/* The bytes of a header before its tag: what header writes and slot moves
 * may touch. */
enum { RK_CPU_HEADER_UNTAGGED = 12 };

#ifndef RK_PREFETCH_OFF
#define RK_PREFETCH_OFF 0
#endif

static inline _Atomic uint32_t *rk__cpu_slot_tag(unsigned char *slot) {
    return (_Atomic uint32_t *)(void *)(slot + RK_CPU_HEADER_UNTAGGED);
}

/* Marks slot (queue index i) as written: its bytes before this are
 * visible to a consumer that acquires the tag. */
static inline void rk__cpu_slot_set_tag(unsigned char *slot, uint64_t i) {
    atomic_store_explicit(rk__cpu_slot_tag(slot), (uint32_t)(i + 1u), memory_order_release);
}

static inline bool rk__cpu_slot_tagged(unsigned char *slot, uint64_t i) {
    return atomic_load_explicit(rk__cpu_slot_tag(slot), memory_order_acquire) == (uint32_t)(i + 1u);
}

/* Producer: tags the next count reserved slots, then commits them. */
static inline void rk__cpu_queue_commit_tagged(rk_queue *q, uint32_t count) {
    uint64_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
    for (uint32_t i = 0; i < count; i++)
        rk__cpu_slot_set_tag((unsigned char *)rk_queue_producer_slot(q, tail + i), tail + i);
    rk_queue_commit(q, count);
}

/* Asks for the lines of a slot other than its tag's. A consumer waiting for
 * the slot calls it at every look: the producer writes those lines before
 * the tag, so when the tag shows they are already on their way, and the
 * copy after it does not wait for a second miss (two line transfers in a row
 * each way of a round trip, where the floor has one). */
static inline void rk__cpu_slot_prefetch_payload(const unsigned char *slot, uint32_t stride) {
    if (RK_PREFETCH_OFF || stride > 256u) return;
    const uintptr_t line = 64u, tag_line = (uintptr_t)(slot + RK_CPU_HEADER_UNTAGGED) & ~(line - 1u);
    for (uintptr_t a = (uintptr_t)slot & ~(line - 1u); a < (uintptr_t)slot + stride; a += line)
        if (a != tag_line) __builtin_prefetch((const void *)a, 0, 3);
}

/* Consumer: rk_queue_peek for a queue whose producers all tag: reads the
 * tags of the slots after those it knows of, never tail. */
static inline uint32_t rk__cpu_queue_peek_tagged(rk_queue *q, uint32_t max, uint64_t *first) {
    uint64_t head = atomic_load_explicit(&q->head, memory_order_relaxed); /* our own index */
    uint64_t known = q->consumer_cached_tail;
    while (known - head < max && rk__cpu_slot_tagged((unsigned char *)rk_queue_consumer_slot(q, known), known))
        known++;
    if (known == head) rk__cpu_slot_prefetch_payload(rk_queue_consumer_slot(q, known), q->consumer_stride);
    q->consumer_cached_tail = known;
    *first = head;
    return (uint32_t)(known - head < max ? known - head : max);
}

/* rk_queue_depth for a tagged queue, where head may pass tail for a moment. */
static inline uint32_t rk__cpu_queue_depth(rk_queue *q) {
    uint64_t head = atomic_load_explicit(&q->head, memory_order_acquire);
    uint64_t tail = atomic_load_explicit(&q->tail, memory_order_acquire);
    return tail > head ? (uint32_t)(tail - head) : 0;
}

/* ---- crash guard (cpu_ring_guard.c) ------------------------------------------ */

/* Per thread that runs handlers. While armed, SIGSEGV/SIGBUS/SIGFPE/SIGILL
 * on that thread jump back to the last RK__CPU_GUARD_CATCH instead of
 * killing the process. */
typedef struct rk__cpu_guard {
    sigjmp_buf env;
    volatile sig_atomic_t armed;
    volatile sig_atomic_t signal;   /* the signal caught, 0 before */
    void *fault_address;
    bool attached, handlers_installed;
    void *alt_stack;                /* ours, or NULL when the thread had one */
    stack_t previous_alt_stack;
} rk__cpu_guard;

/* False when built with a sanitizer that owns these signals (ASan, TSan):
 * then nothing is installed and a crash is the sanitizer's to report. */
bool rk__cpu_guard_supported(void);
/* On the calling thread: an alternate signal stack (a stack overflow still
 * reaches the handler), and the process-wide handlers (reference-counted;
 * the previous ones are restored when the last guard detaches). */
rk_status rk__cpu_guard_attach(rk__cpu_guard *g);
void rk__cpu_guard_detach(rk__cpu_guard *g);
/* Process-wide handlers only, around a busy streak; the alternate stack
 * stays attached. */
rk_status rk__cpu_guard_install(rk__cpu_guard *g);
void rk__cpu_guard_uninstall(rk__cpu_guard *g);
/* For a guard whose thread ended without detaching (it was cancelled):
 * drops its handler reference and frees its stack, from another thread. */
void rk__cpu_guard_abandon(rk__cpu_guard *g);
void rk__cpu_guard_arm(rk__cpu_guard *g);
void rk__cpu_guard_disarm(rk__cpu_guard *g);
/* After a catch: unblocks the signal (the jump left it blocked). */
void rk__cpu_guard_recover(rk__cpu_guard *g);
/* "SIGSEGV", "SIGFPE", ... */
const char *rk__cpu_signal_name(int sig);

/* Evaluates to 0 when entered, to non-zero after a caught crash. A macro:
 * sigsetjmp must run in the frame that stays live while the guard is armed.
 * The mask is not saved (that would cost a system call per batch). */
#define RK__CPU_GUARD_CATCH(g) sigsetjmp((g)->env, 0)

/* ---- one kernel --------------------------------------------------------------- */

typedef struct rk__cpu_ring rk__cpu_ring;

/* One mode's implementation of the iface slots (cpu_ring.c picks it from
 * its mode table, indexed by the resolved rk_exec_mode, as every backend
 * does: docs/architecture.md). */
typedef struct rk__cpu_ring_ops {
    /* Makes the mode's queues and threads; on success sets r->ops and r->mode_impl. */
    rk_status (*start)(rk__cpu_ring *r);
    rk_status (*try_send)(rk__cpu_ring *r, const void *messages, size_t stride, size_t count, uint64_t first_id,
                          size_t *accepted);
    rk_status (*try_receive)(rk__cpu_ring *r, void *replies, size_t stride, rk_reply_info *infos, size_t max,
                             size_t *received);
    void (*wake)(rk__cpu_ring *r); /* after is_active / should_terminate changed */
    void (*poll)(rk__cpu_ring *r, rk__control *out);
    bool (*wait)(rk__cpu_ring *r, uint64_t deadline_ns); /* optional: rk__ring_iface.wait */
    /* The mode's part, then rk__cpu_ring_free. RK_HUNG when a handler had to
     * be cancelled (or could not be: then the ring is kept, not freed). */
    rk_status (*destroy)(rk__cpu_ring *r);
    void (*kick)(rk__cpu_ring *r);    /* a channel has a message for it; may be NULL */
} rk__cpu_ring_ops;

struct rk__cpu_ring {
    const rk__cpu_ring_ops *ops;
    void *mode_impl;
    rk_context *ctx;
    char name[64];                 /* for messages; the kernel's own copy may be gone */
    rk_handler_fn handler;
    rk_module *module;             /* built from handler_source; NULL for a host handler */
    rk_buffer *state_buffer;       /* state_size zeroed bytes of device memory; NULL when 0 */
    void *state;                   /* its host address (CPU device memory is host memory) */
    uint32_t message_size, reply_size, state_size, capacity, workers;
    uint64_t watchdog_ns;          /* no progress this long inside a handler: RK_HUNG */

    /* Written by the host, read by the workers. */
    _Alignas(64) _Atomic bool is_active;
    _Atomic bool should_terminate;

    /* Written once by whichever worker fails first (it wins failure_claimed),
     * read by the host: failure_reason is complete before failure is stored
     * with release. */
    _Alignas(64) _Atomic bool failure_claimed;
    _Atomic int failure;           /* rk_status */
    char failure_reason[192];

    rk__cpu_links links;           /* K2K channels (cpu_channel.c) */
};

/* Records the first failure; later ones are dropped. */
void rk__cpu_ring_set_failure(rk__cpu_ring *r, rk_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline bool rk__cpu_ring_failed(rk__cpu_ring *r) {
    return atomic_load_explicit(&r->failure, memory_order_acquire) != RK_OK;
}

/* A run of slots: in a queue (mask = capacity - 1, indices wrap) or in a
 * flat buffer (mask = UINT64_MAX, first = 0). */
typedef struct rk__cpu_slots {
    unsigned char *base;
    uint64_t first, mask;
    uint32_t stride;
} rk__cpu_slots;

static inline unsigned char *rk__cpu_slot_at(const rk__cpu_slots *s, uint32_t i) {
    return s->base + (size_t)((s->first + i) & s->mask) * s->stride;
}

static inline rk__cpu_slots rk__cpu_queue_slots(const rk_queue *q, uint64_t first) {
    return (rk__cpu_slots){.base = q->slots, .first = first, .mask = q->capacity - 1u, .stride = q->slot_stride};
}

/* count requests in `in` and as many reply slots in `out`. */
enum { RK_CPU_PUBLISH_EVERY = 32 };

typedef struct rk__cpu_batch {
    rk__cpu_slots in, out;
    uint32_t count;
    /* Optional: publish the replies as they are written, RK_CPU_PUBLISH_EVERY
     * at a time and the rest at the end (commit slots of publish and release
     * as many of release: the queues `out` and `in` are in); *unpublished
     * holds how many written replies are not published yet, so that whoever
     * stops a stuck worker can publish them (one commit per reply cost the
     * batch path 2-3x in throughput: the host's core spins on those lines). */
    rk_queue *publish, *release;
    _Atomic uint32_t *unpublished;
    /* Optional: the number of requests answered so far, stored with release
     * after each reply (the watchdog's measure of progress). */
    _Atomic uint64_t *progress;       /* requests answered (the caller's *processed + those of this batch) */
    _Atomic uint64_t *error_progress; /* the same for *errors */
    /* Asynchronous cancellation is enabled around the handler calls (the
     * thread's cancel type must be asynchronous already). */
    bool cancellable;
} rk__cpu_batch;

/* Runs the handler on each request and writes each reply in place. Crash-
 * guarded when g is not NULL. Adds to *processed and *errors. Returns false
 * when a handler crashed: the kernel is then failed, and the crashed request
 * and those after it were answered with RK_DEVICE_FAULT (and published, when
 * the batch publishes). */
bool rk__cpu_ring_run_batch(rk__cpu_ring *r, rk__cpu_guard *g, const rk__cpu_batch *b, void *state,
                            uint64_t *processed, uint64_t *errors);
/* Answers n requests with the given status (RK_HUNG, RK_DEVICE_FAULT)
 * without running the handler (a failed kernel drains this way). */
void rk__cpu_ring_fault_batch(const rk__cpu_batch *b, uint32_t reply_size, int32_t status);
/* The status a failed kernel answers its remaining requests with. */
int32_t rk__cpu_ring_failure_reply(rk__cpu_ring *r);

/* ---- stopping a stuck thread (cpu_ring_cancel.c) --------------------------- */

/* Sets up the calling thread for rk__cpu_batch.cancellable: cancellation
 * disabled, type asynchronous. */
void rk__cpu_cancel_prepare_thread(void);
/* Cancels thread (its cancellation is enabled only inside handler calls)
 * and waits up to the grace period for it to end. True when joined. */
bool rk__cpu_cancel_and_join(pthread_t thread);
/* How long a thread may take to act on its cancellation. */
#define RK_CPU_CANCEL_GRACE_NS 2000000000ull

/* Copies up to max replies out of q into the caller's arrays (tagged: q's
 * producers tag their slots; see the top of this file). */
size_t rk__cpu_ring_pop_replies(rk_queue *q, bool tagged, uint32_t reply_size, unsigned char *replies, size_t stride,
                                rk_reply_info *infos, size_t max);
/* Queues up to count requests (ids from first_id) into q, tagged or not. */
size_t rk__cpu_ring_push_requests(rk_queue *q, bool tagged, uint32_t message_size, const unsigned char *messages,
                                  size_t stride, size_t count, uint64_t first_id);

/* Frees the ring, its module and state. A mode's destroy calls it once
 * nothing can run the handler any more (and leaks the ring if something
 * might: a handler that never returns). */
void rk__cpu_ring_free(rk__cpu_ring *r);

rk_status rk__cpu_persistent_start(rk__cpu_ring *r);
rk_status rk__cpu_traditional_start(rk__cpu_ring *r);

/* The modes (cpu_ring_persistent.c, cpu_ring_traditional.c). */
extern const rk__cpu_ring_ops rk__cpu_persistent_ops;
extern const rk__cpu_ring_ops rk__cpu_traditional_ops;

#endif
