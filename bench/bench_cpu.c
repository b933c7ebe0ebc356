/* CPU benchmarks: the SPSC queue between two threads and ring kernels
 * (throughput in batches, one-at-a-time latency). See bench_cpu.h. */
#include "bench_cpu.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ringkernel/queue.h"

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

uint32_t rk_bench_process_cores(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return (uint32_t)CPU_COUNT(&set);
    return 1;
}

/* ---- CPU placement ------------------------------------------------------------ */

/* A topology number of cpu from sysfs ("core_id", "physical_package_id"); -1
 * when the system does not say. */
static int cpu_topology(int cpu, const char *what) {
    char path[96];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/%s", cpu, what);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int v = -1;
    if (fscanf(f, "%d", &v) != 1) v = -1;
    fclose(f);
    return v;
}

bool rk_bench_pick_cpu_pair(rk_bench_cpu_pair *out) {
    cpu_set_t set;
    if (!out || sched_getaffinity(0, sizeof set, &set) != 0) return false;
    int cpus[CPU_SETSIZE], n = 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set)) cpus[n++] = c;
    if (n < 2) return false;
    int first = n >= 3 ? 1 : 0; /* leave the lowest to interrupts and the main thread where there are spares */
    int a = cpus[first], pkg = cpu_topology(a, "physical_package_id"), core = cpu_topology(a, "core_id");
    int b = -1, other_socket = -1;
    for (int i = first + 1; i < n && b < 0; i++) {
        int p = cpu_topology(cpus[i], "physical_package_id"), c = cpu_topology(cpus[i], "core_id");
        if (p == pkg && (c != core || c < 0)) b = cpus[i];
        else if (p != pkg && other_socket < 0) other_socket = cpus[i];
    }
    if (b < 0) b = other_socket;
    if (b < 0) b = cpus[first + 1 < n ? first + 1 : 0]; /* only hardware threads of one core */
    out->first = a;
    out->second = b;
    /* The workers: the next CPUs of the first one's package on cores of their own. */
    int cores[4] = {core, cpu_topology(b, "core_id"), -1, -1}, found = 0;
    out->workers[0] = out->workers[1] = -1;
    for (int i = first + 1; i < n && found < 2 && core >= 0; i++) {
        int c = cpu_topology(cpus[i], "core_id");
        if (cpu_topology(cpus[i], "physical_package_id") != pkg || c < 0) continue;
        bool taken = false;
        for (int j = 0; j < 2 + found; j++) taken |= cores[j] == c;
        if (!taken) {
            cores[2 + found] = c;
            out->workers[found++] = cpus[i];
        }
    }
    if (found < 2) out->workers[0] = out->workers[1] = -1;
    return true;
}

bool rk_bench_pin_has_workers(const rk_bench_cpu_pair *pin) {
    return pin && pin->workers[0] >= 0 && pin->workers[1] >= 0;
}

/* Pins the calling thread to the n CPUs of cpus (threads it starts inherit them). */
static bool pin_self_to(const int *cpus, int n) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int i = 0; i < n; i++) {
        if (cpus[i] < 0 || cpus[i] >= CPU_SETSIZE) return false;
        CPU_SET(cpus[i], &set);
    }
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

bool rk_bench_pin_self(int cpu) { return pin_self_to(&cpu, 1); }

_Static_assert(sizeof(cpu_set_t) <= sizeof(((rk_bench_affinity *)0)->mask), "cpu_set_t fits rk_bench_affinity");

/* Keeps the calling thread's CPU mask in *saved, then pins it to cpus. */
static bool pin_self_saving_to(const int *cpus, int n, rk_bench_affinity *saved) {
    cpu_set_t mask;
    saved->saved = pthread_getaffinity_np(pthread_self(), sizeof mask, &mask) == 0;
    if (saved->saved) memcpy(saved->mask, &mask, sizeof mask);
    return pin_self_to(cpus, n);
}

bool rk_bench_pin_self_saving(int cpu, rk_bench_affinity *saved) { return pin_self_saving_to(&cpu, 1, saved); }

void rk_bench_restore_self(const rk_bench_affinity *saved) {
    if (!saved->saved) return;
    cpu_set_t mask;
    memcpy(&mask, saved->mask, sizeof mask);
    pthread_setaffinity_np(pthread_self(), sizeof mask, &mask);
}

/* ---- SPSC queue --------------------------------------------------------------- */

/* The SPSC benchmarks' wait (bench_cpu.h). One pause between looks left
 * the one-at-a-time rows bimodal on the 16-core Xeon host: a consumer that
 * keeps pace reads the producer's index line after every message, so each
 * publish waits for that line to come back (~10-20 M msg/s), while one that
 * falls behind streams whole lines (40-100 M msg/s), and which of the two a
 * run got decided the ratio (0.10-0.91 within one run of five pairs). With
 * 64 pauses between looks both the bare ring and the queue stream; in
 * batches, where the index moves once per batch, one pause gives the bare
 * ring its best (113 against 88 M msg/s with 16). Each mode gets the count
 * that makes its floor fastest (scripts/device-cpu-pin.sh measures them). */
unsigned rk_bench_ring_pauses(uint32_t batch) {
    static _Atomic long forced; /* 0: not read yet; -1: none */
    long f = atomic_load_explicit(&forced, memory_order_relaxed);
    if (!f) {
        const char *env = getenv("RK_BENCH_RING_PAUSES");
        f = env && *env ? strtol(env, NULL, 10) : -1;
        if (f < 1 || f > 4096) f = -1;
        atomic_store_explicit(&forced, f, memory_order_relaxed);
    }
    if (f > 0) return (unsigned)f;
    return batch > 1 ? RK_BENCH_RING_PAUSES_BATCH : RK_BENCH_RING_PAUSES_ONE;
}

void rk_bench_ring_wait(unsigned *looks, unsigned pauses) {
    if (++*looks < 256) {
        for (unsigned i = pauses; i; i--) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        }
        return;
    }
    *looks = 0;
    sched_yield();
}

typedef struct queue_run {
    rk_queue *q;
    uint64_t messages;
    uint32_t slot_size, batch;
    uint64_t errors;
    int producer_cpu, consumer_cpu; /* -1: not pinned; each read only by its own thread */
} queue_run;

/* Each message is slot_size bytes with its sequence number in the first 8;
 * the producer copies it in and the consumer copies it out, as real users do.
 * Each side works from locals and its own line-aligned staging buffer: the
 * consumer once added each message's check to r->errors, on the line the
 * producer read r->messages and r->q from at every message, and that false
 * sharing cost the one-at-a-time row a line transfer per message (~10 M
 * msg/s on the 16-core Xeon host, whatever the floor did). */
static void *staging_alloc(size_t count, uint32_t slot_size) {
    size_t bytes = (count * slot_size + 63u) & ~(size_t)63u;
    void *p = aligned_alloc(64, bytes);
    if (p) memset(p, 0, bytes);
    return p;
}

/* One side's copy of the run's settings, taken once before its loop. */
typedef struct queue_side {
    rk_queue *q;
    uint64_t messages;
    uint32_t slot;
    size_t n; /* messages a push or pop */
    unsigned pauses;
    unsigned char *staging; /* NULL: out of memory */
} queue_side;

static queue_side side_begin(const queue_run *r, int cpu) {
    if (cpu >= 0) rk_bench_pin_self(cpu);
    queue_side s = {.q = r->q, .messages = r->messages, .slot = r->slot_size, .n = r->batch > 1 ? r->batch : 1,
                    .pauses = rk_bench_ring_pauses(r->batch)};
    s.staging = staging_alloc(s.n, s.slot);
    return s;
}

static void *queue_producer(void *arg) {
    queue_side sd = side_begin(arg, ((queue_run *)arg)->producer_cpu);
    if (!sd.staging) return NULL;
    for (uint64_t seq = 0; seq < sd.messages;) {
        uint64_t left = sd.messages - seq;
        size_t want = left < sd.n ? (size_t)left : sd.n;
        for (size_t k = 0; k < want; k++) {
            uint64_t s = seq + k;
            memcpy(sd.staging + k * sd.slot, &s, sizeof s);
        }
        size_t pushed = 0;
        unsigned misses = 0;
        if (sd.n > 1) {
            while (pushed < want) {
                size_t got = rk_queue_push_batch(sd.q, sd.staging + pushed * sd.slot, sd.slot, want - pushed, sd.slot);
                if (got == 0) rk_bench_ring_wait(&misses, sd.pauses);
                pushed += got;
            }
        } else {
            while (rk_queue_try_push(sd.q, sd.staging, sd.slot) != RK_OK) rk_bench_ring_wait(&misses, sd.pauses);
            pushed = 1;
        }
        seq += pushed;
    }
    free(sd.staging);
    return NULL;
}

static void *queue_consumer(void *arg) {
    queue_run *r = arg;
    queue_side sd = side_begin(r, r->consumer_cpu);
    if (!sd.staging) {
        r->errors = sd.messages;
        return NULL;
    }
    unsigned misses = 0;
    uint64_t errors = 0;
    for (uint64_t seq = 0; seq < sd.messages;) {
        size_t got;
        if (sd.n > 1) {
            got = rk_queue_pop_batch(sd.q, sd.staging, sd.slot, sd.n);
        } else {
            got = rk_queue_try_pop(sd.q, sd.staging, sd.slot) == RK_OK;
        }
        /* Count misses per wait, as the floor does: a count kept across
         * messages made every 256th empty look a sched_yield. */
        if (got == 0)
            rk_bench_ring_wait(&misses, sd.pauses);
        else
            misses = 0;
        for (size_t k = 0; k < got; k++) {
            uint64_t s;
            memcpy(&s, sd.staging + k * sd.slot, sizeof s);
            errors += s != seq + k;
        }
        seq += got;
    }
    r->errors = errors;
    free(sd.staging);
    return NULL;
}

rk_status rk_bench_queue_spsc(const rk_bench_queue_opts *opts, rk_bench_queue_result *out) {
    if (!out) return RK_NULL_ARGUMENT;
    memset(out, 0, sizeof *out);
    rk_bench_queue_opts o = opts ? *opts : (rk_bench_queue_opts){0};
    if (!o.messages) o.messages = 20u * 1000u * 1000u;
    if (!o.slot_size) o.slot_size = 64;
    if (!o.capacity) o.capacity = 4096;
    if (o.slot_size < sizeof(uint64_t)) return RK_INVALID_ARGUMENT;
    queue_run r = {.messages = o.messages, .slot_size = o.slot_size, .batch = o.batch,
                   .producer_cpu = o.pin ? o.pin->first : -1, .consumer_cpu = o.pin ? o.pin->second : -1};
    rk_status s = rk_queue_create(o.capacity, o.slot_size, &r.q);
    if (s != RK_OK) return s;
    pthread_t producer, consumer;
    double t0 = now_seconds();
    if (pthread_create(&consumer, NULL, queue_consumer, &r) != 0) {
        rk_queue_destroy(r.q);
        return RK_IO_ERROR;
    }
    if (pthread_create(&producer, NULL, queue_producer, &r) != 0) {
        /* Let the consumer finish by producing here instead (unpinned). */
        r.producer_cpu = -1;
        queue_producer(&r);
    } else {
        pthread_join(producer, NULL);
    }
    pthread_join(consumer, NULL);
    double t1 = now_seconds();
    rk_queue_destroy(r.q);
    out->messages = o.messages;
    out->seconds = t1 - t0;
    out->messages_per_second = (double)o.messages / out->seconds;
    out->bytes_per_second = out->messages_per_second * o.slot_size;
    out->errors = r.errors;
    return RK_OK;
}

/* ---- ring kernels ---------------------------------------------------------------- */

/* The handler under test does the least a handler can: read the request's
 * first word, answer with it plus one. Everything else measured is the
 * runtime: queues, ids, copies, the worker loop or the launches. */
static int bench_handler(const void *request, void *reply, void *state) {
    (void)state;
    uint64_t v;
    memcpy(&v, request, sizeof v);
    v += 1;
    memcpy(reply, &v, sizeof v);
    return 0;
}

/* The same in DSL source, for backends that cannot call a host function.
 * The message is RK_BENCH_WORDS words, so its type has the kernel's size. */
static const char bench_handler_source[] =
    "typedef struct { uint64_t w[RK_BENCH_WORDS]; } BenchMsg;\n"
    "RK_HANDLER int rk_bench_plus_one(const BenchMsg *req, BenchMsg *resp, void *state) {\n"
    "    (void)state;\n"
    "    resp->w[0] = req->w[0] + 1u;\n"
    "    return 0;\n"
    "}\n";

static rk_status launch_bench_kernel_here(rk_runtime *rt, const rk_bench_kernel_opts *o, rk_kernel **k);

/* Pinned (o->pin, one worker): the workers start while this thread runs on
 * pin->second, so they inherit that CPU; this thread then moves to
 * pin->first until the caller restores *saved. The pipelined shape (two
 * host threads, two workers): the workers start on pin->workers[] alike. */
static bool pins_pipelined(const rk_bench_kernel_opts *o) {
    return o->host_threads == 2 && o->workers == 2 && rk_bench_pin_has_workers(o->pin);
}

static rk_status launch_bench_kernel(rk_runtime *rt, const rk_bench_kernel_opts *o, rk_kernel **k,
                                     rk_bench_affinity *saved) {
    saved->saved = false;
    bool one = o->pin && o->workers <= 1 && o->host_threads <= 1;
    bool pinned = one || pins_pipelined(o);
    if (one) rk_bench_pin_self_saving(o->pin->second, saved);
    if (pinned && !one) pin_self_saving_to(o->pin->workers, 2, saved);
    rk_status s = launch_bench_kernel_here(rt, o, k);
    if (pinned) rk_bench_pin_self(o->pin->first);
    if (s != RK_OK) rk_bench_restore_self(saved);
    return s;
}

static rk_status launch_bench_kernel_here(rk_runtime *rt, const rk_bench_kernel_opts *o, rk_kernel **k) {
    char words[32];
    snprintf(words, sizeof words, "RK_BENCH_WORDS=%u", o->message_size / 8u);
    const char *defines[] = {words};
    rk_compile_options co = {.defines = defines, .define_count = 1};
    rk_kernel_desc d = {
        .name = "bench",
        .message_size = o->message_size,
        .reply_size = o->message_size,
        .queue_capacity = o->queue_capacity,
        .mode = o->mode,
        .workers = o->workers,
    };
    if (strcmp(rk_runtime_backend_name(rt), "cpu") == 0) {
        d.handler = bench_handler;
    } else {
        d.handler_source = bench_handler_source;
        d.handler_name = "rk_bench_plus_one";
        d.compile_options = &co;
    }
    rk_status s = rk_kernel_launch(rt, &d, k);
    if (s != RK_OK) return s;
    s = rk_kernel_activate(*k);
    if (s != RK_OK) rk_kernel_destroy(*k);
    return s;
}

static void kernel_defaults(rk_bench_kernel_opts *o, uint64_t messages) {
    if (!o->messages) o->messages = messages;
    if (!o->message_size) o->message_size = 16;
    if (!o->queue_capacity) o->queue_capacity = 4096;
    if (!o->batch) o->batch = 256;
}

/* Stops the kernel, fills in launches and returns the first failure. */
static rk_status finish_kernel(rk_kernel *k, rk_status s, rk_bench_kernel_result *out,
                               const rk_bench_affinity *saved) {
    rk_bench_restore_self(saved);
    rk_status t = rk_kernel_terminate(k, 10ull * 1000000000u);
    rk_kernel_stats st;
    if (rk_kernel_stats_get(k, &st) == RK_OK) out->launches = st.launches;
    rk_kernel_destroy(k);
    return s != RK_OK ? s : t;
}

/* Request v carries v in its first word; the request with id v + 1 (ids
 * count from 1 in send order) must come back with v + 1. */
static void fill_requests(unsigned char *requests, uint32_t message_size, uint64_t first, size_t n) {
    for (size_t i = 0; i < n; i++) {
        uint64_t v = first + i;
        memcpy(requests + i * message_size, &v, sizeof v);
    }
}

static uint64_t check_replies(const unsigned char *replies, uint32_t message_size, const rk_reply_info *infos,
                              size_t n) {
    uint64_t errors = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t v;
        memcpy(&v, replies + i * message_size, sizeof v);
        errors += v != infos[i].id || infos[i].status != 0; /* (id - 1) + 1 */
    }
    return errors;
}

/* host_threads 2: the sending side, on a thread of its own. */
/* Line-aligned (and so line-sized): it sits on the receiving thread's
 * stack, whose busy locals must not share the sender's line. */
typedef struct sender_run {
    _Alignas(64) rk_kernel *k;
    int cpu; /* -1: where the scheduler puts it */
    uint64_t messages;
    uint32_t message_size;
    size_t batch;
    _Atomic int status; /* rk_status; RK_OK while sending or done */
} sender_run;

static void *sender_main(void *arg) {
    sender_run *s = arg;
    if (s->cpu >= 0) rk_bench_pin_self(s->cpu);
    unsigned char *requests = calloc(s->batch, s->message_size);
    if (!requests) {
        atomic_store(&s->status, RK_OUT_OF_MEMORY);
        return NULL;
    }
    for (uint64_t sent = 0; sent < s->messages;) {
        uint64_t left = s->messages - sent;
        size_t n = left < s->batch ? (size_t)left : s->batch;
        fill_requests(requests, s->message_size, sent, n);
        size_t accepted = 0;
        /* Blocking: waits for room while the receiver drains. */
        rk_status st = rk_kernel_send_batch(s->k, requests, s->message_size, n, 10ull * 1000000000u, &accepted, NULL);
        sent += accepted;
        if (st != RK_OK) {
            atomic_store(&s->status, st);
            break;
        }
    }
    free(requests);
    return NULL;
}

/* The receiving side of host_threads 2 (the calling thread): every reply
 * checked, as in the one-thread loop. */
static rk_status receive_all(rk_kernel *k, const sender_run *sender, unsigned char *replies, rk_reply_info *infos,
                             uint64_t *received, uint64_t *errors) {
    while (*received < sender->messages) {
        size_t got = 0;
        rk_status s = rk_kernel_receive_batch(k, replies, sender->message_size, infos, sender->batch, 1000000u, &got);
        if (s == RK_TIMEOUT && atomic_load(&sender->status) != RK_OK) return (rk_status)atomic_load(&sender->status);
        if (s != RK_OK && s != RK_TIMEOUT) return s;
        *errors += check_replies(replies, sender->message_size, infos, got);
        *received += got;
    }
    return RK_OK;
}

rk_status rk_bench_kernel_throughput(rk_runtime *rt, const rk_bench_kernel_opts *opts, rk_bench_kernel_result *out) {
    if (!rt || !out) return RK_NULL_ARGUMENT;
    memset(out, 0, sizeof *out);
    rk_bench_kernel_opts o = opts ? *opts : (rk_bench_kernel_opts){0};
    kernel_defaults(&o, 10u * 1000u * 1000u);
    if (o.message_size < sizeof(uint64_t) || o.host_threads > 2) return RK_INVALID_ARGUMENT;
    size_t batch = o.batch;
    unsigned char *requests = calloc(batch, o.message_size);
    unsigned char *replies = calloc(batch, o.message_size);
    rk_reply_info *infos = calloc(batch, sizeof *infos);
    rk_kernel *k = NULL;
    rk_bench_affinity saved = {.saved = false};
    rk_status s = requests && replies && infos ? launch_bench_kernel(rt, &o, &k, &saved) : RK_OUT_OF_MEMORY;
    if (s != RK_OK) {
        free(requests), free(replies), free(infos);
        return s;
    }
    uint64_t sent = 0, received = 0, errors = 0;
    double t0 = now_seconds();
    if (o.host_threads == 2) {
        sender_run sender = {.k = k, .messages = o.messages, .message_size = o.message_size, .batch = batch,
                             .cpu = pins_pipelined(&o) ? o.pin->second : -1};
        atomic_init(&sender.status, RK_OK);
        pthread_t thread;
        if (pthread_create(&thread, NULL, sender_main, &sender) != 0) {
            s = RK_IO_ERROR;
        } else {
            s = receive_all(k, &sender, replies, infos, &received, &errors);
            pthread_join(thread, NULL);
            if (s == RK_OK) s = (rk_status)atomic_load(&sender.status);
        }
    }
    /* One host thread alternates: queue what fits, take what is ready. */
    while (o.host_threads != 2 && received < o.messages && s == RK_OK) {
        size_t accepted = 0;
        if (sent < o.messages) {
            uint64_t left = o.messages - sent;
            size_t n = left < batch ? (size_t)left : batch;
            fill_requests(requests, o.message_size, sent, n);
            uint64_t first_id;
            s = rk_kernel_send_batch(k, requests, o.message_size, n, RK_NO_WAIT, &accepted, &first_id);
            if (s == RK_WOULD_BLOCK) s = RK_OK;
            sent += accepted;
        }
        size_t got = 0;
        if (s == RK_OK) {
            /* Wait a little only when there was nothing to send. */
            uint64_t wait = accepted ? RK_NO_WAIT : 1000000u;
            s = rk_kernel_receive_batch(k, replies, o.message_size, infos, batch, wait, &got);
            if (s == RK_WOULD_BLOCK || s == RK_TIMEOUT) s = RK_OK;
        }
        errors += check_replies(replies, o.message_size, infos, got);
        received += got;
    }
    double t1 = now_seconds();
    free(requests), free(replies), free(infos);
    out->messages = received;
    out->seconds = t1 - t0;
    out->messages_per_second = out->seconds > 0 ? (double)received / out->seconds : 0;
    out->errors = errors;
    return finish_kernel(k, s, out, &saved);
}

static int compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

rk_status rk_bench_kernel_latency(rk_runtime *rt, const rk_bench_kernel_opts *opts, rk_bench_kernel_result *out) {
    if (!rt || !out) return RK_NULL_ARGUMENT;
    memset(out, 0, sizeof *out);
    rk_bench_kernel_opts o = opts ? *opts : (rk_bench_kernel_opts){0};
    kernel_defaults(&o, 100u * 1000u);
    if (o.message_size < sizeof(uint64_t)) return RK_INVALID_ARGUMENT;
    uint64_t warmup = o.messages / 10 < 1000 ? o.messages / 10 : 1000;
    uint64_t *samples = calloc(o.messages, sizeof *samples);
    unsigned char *request = calloc(1, o.message_size), *reply = calloc(1, o.message_size);
    rk_kernel *k = NULL;
    rk_bench_affinity saved = {.saved = false};
    rk_status s = samples && request && reply ? launch_bench_kernel(rt, &o, &k, &saved) : RK_OUT_OF_MEMORY;
    if (s != RK_OK) {
        free(samples), free(request), free(reply);
        return s;
    }
    uint64_t errors = 0, done = 0;
    double total = 0;
    for (uint64_t i = 0; i < warmup + o.messages && s == RK_OK; i++) {
        memcpy(request, &i, sizeof i);
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        uint64_t id = 0;
        rk_reply_info info;
        s = rk_kernel_send(k, request, o.message_size, 1000000000u, &id);
        if (s == RK_OK) s = rk_kernel_receive(k, reply, o.message_size, &info, 1000000000u);
        clock_gettime(CLOCK_MONOTONIC, &b);
        if (s != RK_OK) break;
        uint64_t v;
        memcpy(&v, reply, sizeof v);
        errors += v != i + 1 || info.id != id;
        if (i >= warmup) {
            uint64_t ns = (uint64_t)(b.tv_sec - a.tv_sec) * 1000000000u + (uint64_t)b.tv_nsec - (uint64_t)a.tv_nsec;
            samples[done++] = ns;
            total += (double)ns;
        }
    }
    if (done) {
        qsort(samples, done, sizeof *samples, compare_u64);
        out->p50_us = (double)samples[done / 2] / 1e3;
        out->p90_us = (double)samples[done * 9 / 10] / 1e3;
        out->p99_us = (double)samples[done * 99 / 100] / 1e3;
        out->max_us = (double)samples[done - 1] / 1e3;
        out->mean_us = total / (double)done / 1e3;
        out->seconds = total / 1e9;
        out->messages_per_second = total > 0 ? (double)done / (total / 1e9) : 0;
    }
    out->messages = done;
    out->errors = errors;
    free(samples), free(request), free(reply);
    return finish_kernel(k, s, out, &saved);
}
