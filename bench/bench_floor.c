/* The floors of bench_floor.h: a bare SPSC ring and a one-word ping-pong. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_floor.h"
#include "ringkernel/device.h"

enum { RING_SLOTS = 4096, LINE = 64, MAX_SLOT = 256 };

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The best plain SPSC ring we know how to write: each side keeps a private
 * copy of the other's index and reloads it only when that copy says the
 * ring is empty (consumer) or full (producer), so a steady stream touches
 * the other side's line once per refill, not once per message; the slot
 * size is a constant the compiler sees, so the copies are a few moves; each
 * side publishes its index once per batch (once per message when the batch
 * is 1). The producer copies each message in from its own buffer and the
 * consumer copies it out, the job the library's queue benchmark does. */
typedef struct bare_ring {
    _Alignas(LINE) _Atomic uint64_t head; /* next slot the consumer reads: consumer writes */
    _Alignas(LINE) _Atomic uint64_t tail; /* next slot the producer writes: producer writes */
    _Alignas(LINE) unsigned char *slots;  /* read-only from here on */
    uint32_t slot_size, batch;
    uint64_t messages;
    const rk_bench_cpu_pair *pin;
    _Alignas(LINE) uint64_t errors; /* consumer's, once at the end */
} bare_ring;

/* Inlined with size a constant (64) for the rows rk bench runs. */
static inline uint64_t consume_sized(bare_ring *r, uint32_t size) {
    /* Locals: the slot copies may alias anything through unsigned char, so
     * fields of *r would be reloaded after each. */
    const unsigned char *slots = r->slots;
    const uint64_t messages = r->messages, batch = r->batch;
    const unsigned pauses = rk_bench_ring_pauses(r->batch);
    uint64_t head = 0, cached_tail = 0, errors = 0;
    _Alignas(LINE) unsigned char msg[MAX_SLOT];
    while (head < messages) {
        if (cached_tail == head) {
            unsigned spins = 0;
            while ((cached_tail = atomic_load_explicit(&r->tail, memory_order_acquire)) == head)
                rk_bench_ring_wait(&spins, pauses);
        }
        uint64_t end = cached_tail - head > batch ? head + batch : cached_tail;
        for (; head < end; head++) {
            memcpy(msg, slots + (head & (RING_SLOTS - 1)) * size, size);
            uint64_t seq, last;
            memcpy(&seq, msg, 8);
            memcpy(&last, msg + size - 8, 8);
            errors += seq != head || last != ~head; /* order, and not torn */
        }
        atomic_store_explicit(&r->head, head, memory_order_release);
    }
    return errors;
}

static void *consume(void *arg) {
    bare_ring *r = arg;
    if (r->pin) rk_bench_pin_self(r->pin->second);
    r->errors = r->slot_size == 64 ? consume_sized(r, 64) : consume_sized(r, r->slot_size);
    return NULL;
}

static inline void produce_sized(bare_ring *r, uint32_t size) {
    _Alignas(LINE) unsigned char msg[MAX_SLOT];
    memset(msg, 0xab, sizeof msg);
    unsigned char *slots = r->slots;
    const uint64_t messages = r->messages, batch = r->batch;
    const unsigned pauses = rk_bench_ring_pauses(r->batch);
    uint64_t tail = 0, cached_head = 0;
    while (tail < messages) {
        uint64_t end = tail + batch < messages ? tail + batch : messages;
        if (end - cached_head > RING_SLOTS) {
            unsigned spins = 0;
            while (end - (cached_head = atomic_load_explicit(&r->head, memory_order_acquire)) > RING_SLOTS)
                rk_bench_ring_wait(&spins, pauses);
        }
        for (; tail < end; tail++) {
            uint64_t last = ~tail;
            memcpy(msg, &tail, 8);
            memcpy(msg + size - 8, &last, 8);
            memcpy(slots + (tail & (RING_SLOTS - 1)) * size, msg, size);
        }
        atomic_store_explicit(&r->tail, tail, memory_order_release);
    }
}

/* The producer is a thread of its own, as in the queue benchmark (a
 * pinned main thread would stay pinned after the floor). */
static void *produce(void *arg) {
    bare_ring *r = arg;
    if (r->pin) rk_bench_pin_self(r->pin->first);
    if (r->slot_size == 64)
        produce_sized(r, 64);
    else
        produce_sized(r, r->slot_size);
    return NULL;
}

rk_status rk_bench_floor_ring(const rk_bench_floor_ring_opts *opts, rk_bench_floor_result *out) {
    if (!out) return RK_INVALID_ARGUMENT;
    bare_ring *r = aligned_alloc(LINE, sizeof *r);
    if (!r) return RK_OUT_OF_MEMORY;
    memset(r, 0, sizeof *r);
    r->messages = opts && opts->messages ? opts->messages : 20000000u;
    r->slot_size = opts && opts->slot_size ? opts->slot_size : 64;
    r->batch = opts && opts->batch > 1 ? opts->batch : 1;
    r->pin = opts ? opts->pin : NULL;
    if (r->slot_size < 16 || r->slot_size > MAX_SLOT || r->slot_size % 8 || r->batch > RING_SLOTS) {
        free(r);
        return RK_INVALID_ARGUMENT;
    }
    r->slots = aligned_alloc(LINE, (size_t)RING_SLOTS * r->slot_size);
    if (!r->slots) {
        free(r);
        return RK_OUT_OF_MEMORY;
    }
    memset(r->slots, 0, (size_t)RING_SLOTS * r->slot_size);
    pthread_t consumer, producer;
    uint64_t start = now_ns();
    if (pthread_create(&consumer, NULL, consume, r) != 0) {
        free(r->slots);
        free(r);
        return RK_INTERNAL;
    }
    if (pthread_create(&producer, NULL, produce, r) != 0) {
        /* Produce here, unpinned: the consumer is waiting for the messages. */
        if (r->slot_size == 64)
            produce_sized(r, 64);
        else
            produce_sized(r, r->slot_size);
    } else {
        pthread_join(producer, NULL);
    }
    pthread_join(consumer, NULL);
    double seconds = (double)(now_ns() - start) / 1e9;
    memset(out, 0, sizeof *out);
    out->messages = r->messages;
    out->seconds = seconds;
    out->messages_per_second = seconds > 0 ? (double)r->messages / seconds : 0;
    out->errors = r->errors;
    free(r->slots);
    free(r);
    return RK_OK;
}

/* One word each way, each on its own cache line; a waiter spins one pause
 * a look and yields after a bounded spin (rk_bench_ring_wait). A futex
 * sleep after the spin was tried as the floor: on the shared 2-vCPU VM it gave a steady 14.9 us p50 (a
 * wake-up there costs an IPI to a halted vCPU) where the library's
 * spin-then-yield waits gave 1.2-7.8 us in the same runs, so it was no
 * floor. */
typedef struct pp_word {
    _Alignas(LINE) _Atomic uint32_t value;
} pp_word;

typedef struct pingpong {
    pp_word ping, pong;
    uint64_t rounds;
    const rk_bench_cpu_pair *pin;
    uint64_t errors; /* the answering thread's */
} pingpong;

static void pp_post(pp_word *w, uint32_t v) { atomic_store_explicit(&w->value, v, memory_order_release); }

/* Waits for v; returns how many times it saw a value that strict
 * alternation rules out (neither v nor the one before): must be 0. */
static uint64_t pp_await(pp_word *w, uint32_t v) {
    uint32_t got;
    uint64_t wrong = 0;
    unsigned spins = 0;
    while ((got = atomic_load_explicit(&w->value, memory_order_acquire)) != v) {
        wrong += got != v - 1;
        rk_bench_ring_wait(&spins, 1); /* one pause a look, a yield after 256 */
    }
    return wrong;
}

static void *answer(void *arg) {
    pingpong *p = arg;
    for (uint64_t i = 1; i <= p->rounds; i++) {
        if (pp_await(&p->ping, (uint32_t)i)) p->errors++;
        pp_post(&p->pong, (uint32_t)i);
    }
    return NULL;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void *answer_pinned(void *arg) {
    pingpong *p = arg;
    if (p->pin) rk_bench_pin_self(p->pin->second);
    return answer(p);
}

rk_status rk_bench_floor_pingpong(uint64_t rounds, const rk_bench_cpu_pair *pin, rk_bench_floor_result *out) {
    if (!out) return RK_INVALID_ARGUMENT;
    if (!rounds) rounds = 100000;
    if (rounds > UINT32_MAX - 1) return RK_INVALID_ARGUMENT; /* the words are 32-bit */
    uint64_t *rtt = malloc(rounds * sizeof *rtt);
    pingpong *p = aligned_alloc(LINE, sizeof *p);
    if (!rtt || !p) {
        free(rtt);
        free(p);
        return RK_OUT_OF_MEMORY;
    }
    memset(p, 0, sizeof *p);
    p->rounds = rounds;
    p->pin = pin;
    pthread_t peer;
    if (pthread_create(&peer, NULL, answer_pinned, p) != 0) {
        free(rtt);
        free(p);
        return RK_INTERNAL;
    }
    rk_bench_affinity saved = {.saved = false};
    if (pin) rk_bench_pin_self_saving(pin->first, &saved);
    uint64_t errors = 0, start = now_ns();
    for (uint64_t i = 1; i <= rounds; i++) {
        uint64_t t0 = now_ns();
        pp_post(&p->ping, (uint32_t)i);
        errors += pp_await(&p->pong, (uint32_t)i);
        rtt[i - 1] = now_ns() - t0;
    }
    double seconds = (double)(now_ns() - start) / 1e9;
    rk_bench_restore_self(&saved);
    pthread_join(peer, NULL);
    errors += p->errors;
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

/* ---- dispatch + readback (WebGPU) ------------------------------------------ */

/* 64-byte messages are 16 words; the reply is the request's first word + 1. */
static const char dispatch_floor_wgsl[] =
    "struct P { n: u32 }\n"
    "@group(0) @binding(0) var<storage, read> req: array<u32>;\n"
    "@group(0) @binding(1) var<storage, read_write> rep: array<u32>;\n"
    "@group(0) @binding(2) var<uniform> p: P;\n"
    "@compute @workgroup_size(64)\n"
    "fn rk_floor_echo(@builtin(global_invocation_id) g: vec3<u32>) {\n"
    "    let i = g.x;\n"
    "    if (i >= p.n) { return; }\n"
    "    rep[i * 16u] = req[i * 16u] + 1u;\n"
    "}\n";

enum { DISPATCH_WORDS = 16, DISPATCH_WARMUP = 100 };

rk_status rk_bench_floor_dispatch(rk_runtime *rt, uint64_t rounds, uint32_t batch, rk_bench_floor_result *out) {
    if (!rt || !out) return RK_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    if (!rounds) rounds = 2000;
    if (batch < 1) batch = 1;
    if (batch > 65536) return RK_INVALID_ARGUMENT;
    rk_context *ctx = rk_runtime_context(rt);
    size_t bytes = (size_t)batch * DISPATCH_WORDS * sizeof(uint32_t);
    uint32_t *req = calloc(1, bytes), *rep = calloc(1, bytes);
    uint64_t *ns = malloc(rounds * sizeof *ns);
    rk_module *m = NULL;
    rk_function *fn = NULL;
    rk_buffer *in = NULL, *outb = NULL;
    rk_status s = req && rep && ns ? RK_OK : RK_OUT_OF_MEMORY;
    if (s == RK_OK) s = rk_module_compile(ctx, dispatch_floor_wgsl, NULL, &m);
    if (s == RK_OK) s = rk_module_get_function(m, "rk_floor_echo", &fn);
    if (s == RK_OK) s = rk_buffer_alloc(ctx, bytes, &in);
    if (s == RK_OK) s = rk_buffer_alloc(ctx, bytes, &outb);
    uint64_t errors = 0, seq = 0, start = 0;
    rk_arg args[] = {RK_ARG_BUF(in), RK_ARG_BUF(outb), RK_ARG_UINT(batch)};
    rk_launch_desc d = {.grid = RK_DIM3((batch + 63) / 64, 1, 1), .block = RK_DIM3(64, 1, 1), .args = args,
                        .arg_count = 3};
    for (uint64_t r = 0; s == RK_OK && r < rounds + DISPATCH_WARMUP; r++) {
        if (r == DISPATCH_WARMUP) start = now_ns();
        uint64_t t0 = now_ns();
        for (uint32_t i = 0; i < batch; i++) req[(size_t)i * DISPATCH_WORDS] = (uint32_t)(seq + i);
        s = rk_copy_to_device(ctx, in, 0, req, bytes, NULL);
        if (s == RK_OK) s = rk_launch(fn, &d);
        if (s == RK_OK) s = rk_copy_to_host(ctx, rep, outb, 0, bytes, NULL);
        if (s != RK_OK) break;
        for (uint32_t i = 0; i < batch; i++) errors += rep[(size_t)i * DISPATCH_WORDS] != (uint32_t)(seq + i + 1);
        seq += batch;
        if (r >= DISPATCH_WARMUP) ns[r - DISPATCH_WARMUP] = now_ns() - t0;
    }
    if (s == RK_OK) {
        double seconds = (double)(now_ns() - start) / 1e9;
        qsort(ns, rounds, sizeof *ns, cmp_u64);
        out->messages = rounds * batch;
        out->seconds = seconds;
        out->messages_per_second = seconds > 0 ? (double)out->messages / seconds : 0;
        out->p50_ns = (double)ns[rounds / 2];
        out->p99_ns = (double)ns[rounds * 99 / 100];
        out->errors = errors;
    }
    if (in) rk_buffer_free(in);
    if (outb) rk_buffer_free(outb);
    if (m) rk_module_destroy(m);
    free(req), free(rep), free(ns);
    return s;
}
