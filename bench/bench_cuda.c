/* GPU ring-kernel benchmarks: round-trip latency in each execution pattern,
 * sustained verified throughput, host cost of a send. See bench_cuda.h. */
#include "bench_cuda.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Each reply word is its request word plus one; request word 0 and 1 hold the
 * sequence number, the rest are derived from it. */
static const char echo_source[] =
    "typedef struct Msg { unsigned int w[RK_BENCH_WORDS]; } Msg;\n"
    "RK_HANDLER int echo(const Msg *req, Msg *resp, void *state) {\n"
    "    (void)state;\n"
    "    for (int i = 0; i < RK_BENCH_WORDS; i++) resp->w[i] = req->w[i] + 1u;\n"
    "    return 0;\n"
    "}\n";

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void fill(uint32_t *w, uint32_t words, uint64_t seq) {
    w[0] = (uint32_t)seq;
    w[1] = (uint32_t)(seq >> 32);
    for (uint32_t i = 2; i < words; i++) w[i] = (uint32_t)seq * 2654435761u + i;
}

static bool verify(const uint32_t *r, uint32_t words, uint64_t seq) {
    if (r[0] != (uint32_t)seq + 1u || r[1] != (uint32_t)(seq >> 32) + 1u) return false;
    for (uint32_t i = 2; i < words; i++)
        if (r[i] != (uint32_t)seq * 2654435761u + i + 1u) return false;
    return true;
}

static void pin_to_cpu(int cpu) {
#if defined(__linux__)
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n <= 0) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu % n, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
#else
    (void)cpu;
#endif
}

typedef struct settings {
    uint64_t messages;
    uint32_t size, words, capacity, batch, workers, kernels;
    bool pin, busy_poll, isolated;
} settings;

static rk_status resolve(const rk_bench_cuda_opts *o, uint64_t default_messages, settings *s) {
    static const rk_bench_cuda_opts none = {0};
    if (!o) o = &none;
    s->messages = o->messages ? o->messages : default_messages;
    s->size = o->message_size ? o->message_size : 64;
    if (s->size % 4 || s->size < 8) return RK_INVALID_ARGUMENT;
    s->words = s->size / 4;
    s->capacity = o->queue_capacity ? o->queue_capacity : 4096;
    s->batch = o->batch ? o->batch : 256;
    s->workers = o->workers;
    s->kernels = o->kernels ? o->kernels : 1;
    s->pin = !o->no_pinning;
    s->busy_poll = o->busy_poll;
    s->isolated = o->isolated;
    return RK_OK;
}

static rk_status launch_echo(rk_runtime *rt, const settings *s, rk_exec_mode mode, rk_kernel **out) {
    char define[48];
    snprintf(define, sizeof define, "RK_BENCH_WORDS=%u", s->words);
    const char *defines[] = {define};
    rk_compile_options copts = {.defines = defines, .define_count = 1};
    rk_kernel_desc desc = {.name = "bench-echo", .handler_source = echo_source, .handler_name = "echo",
                           .compile_options = &copts, .message_size = s->size, .reply_size = s->size,
                           .queue_capacity = s->capacity, .mode = mode, .workers = s->workers};
    rk_status st = rk_kernel_launch(rt, &desc, out);
    if (st == RK_OK) st = rk_kernel_activate(*out);
    return st;
}

static int compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static double percentile_us(const uint64_t *sorted, uint64_t n, double p) {
    uint64_t i = (uint64_t)(p * (double)(n - 1) + 0.5);
    return (double)sorted[i] / 1000.0;
}

/* ---- latency ------------------------------------------------------------------ */

rk_status rk_bench_cuda_latency_run(rk_runtime *rt, rk_exec_mode mode, const rk_bench_cuda_opts *opts,
                                    rk_bench_cuda_latency *out) {
    settings s;
    memset(out, 0, sizeof *out);
    rk_status st = resolve(opts, mode == RK_MODE_PERSISTENT ? 100000 : 20000, &s);
    if (st != RK_OK) return st;
    if (s.pin) pin_to_cpu(1);
    rk_kernel *k = NULL;
    st = launch_echo(rt, &s, mode, &k);
    if (st != RK_OK) return st;
    uint32_t *req = calloc(s.words, 4), *rep = calloc(s.words, 4);
    uint64_t *samples = calloc(s.messages, sizeof *samples);
    if (!req || !rep || !samples) st = RK_OUT_OF_MEMORY;
    const uint64_t warmup = 2000;
    for (uint64_t i = 0; st == RK_OK && i < warmup + s.messages; i++) {
        fill(req, s.words, i);
        if (s.isolated) {
            /* A fixed sequence of gaps, the same in every run. */
            uint64_t until = now_ns() + 5000u + (i * 2654435761u) % 10000u;
            while (now_ns() < until) {
            }
        }
        uint64_t t0 = now_ns();
        st = rk_kernel_send(k, req, s.size, RK_WAIT_FOREVER, NULL);
        if (st == RK_OK && s.busy_poll) {
            uint64_t deadline = t0 + 10ull * 1000000000u;
            while ((st = rk_kernel_receive(k, rep, s.size, NULL, RK_NO_WAIT)) == RK_WOULD_BLOCK && now_ns() < deadline) {
            }
        } else if (st == RK_OK) {
            st = rk_kernel_receive(k, rep, s.size, NULL, 10ull * 1000000000u);
        }
        uint64_t t1 = now_ns();
        if (st != RK_OK) break;
        if (!verify(rep, s.words, i)) out->errors++;
        if (i >= warmup) samples[i - warmup] = t1 - t0;
    }
    if (st == RK_OK) {
        qsort(samples, s.messages, sizeof *samples, compare_u64);
        double sum = 0;
        for (uint64_t i = 0; i < s.messages; i++) sum += (double)samples[i];
        out->messages = s.messages;
        out->min_us = (double)samples[0] / 1000.0;
        out->max_us = (double)samples[s.messages - 1] / 1000.0;
        out->mean_us = sum / (double)s.messages / 1000.0;
        out->p50_us = percentile_us(samples, s.messages, 0.50);
        out->p99_us = percentile_us(samples, s.messages, 0.99);
        out->p999_us = percentile_us(samples, s.messages, 0.999);
        rk_kernel_stats stats;
        if (rk_kernel_stats_get(k, &stats) == RK_OK) out->launches = stats.launches;
    }
    rk_status t = rk_kernel_terminate(k, 10ull * 1000000000u);
    if (st == RK_OK) st = t;
    rk_kernel_destroy(k);
    free(req);
    free(rep);
    free(samples);
    return st;
}

/* ---- throughput ----------------------------------------------------------------- */

typedef struct flow {
    rk_kernel *k;
    const settings *s;
    uint64_t messages, first_id;
    int cpu;
    uint64_t errors;
    rk_status send_status, receive_status;
    pthread_t sender, receiver;
} flow;

static void *flow_send(void *arg) {
    flow *f = arg;
    const settings *s = f->s;
    if (s->pin) pin_to_cpu(f->cpu);
    uint32_t *buf = malloc((size_t)s->batch * s->size);
    uint64_t seq = 0;
    f->send_status = buf ? RK_OK : RK_OUT_OF_MEMORY;
    while (f->send_status == RK_OK && seq < f->messages) {
        size_t n = f->messages - seq < s->batch ? (size_t)(f->messages - seq) : s->batch;
        for (size_t i = 0; i < n; i++) fill(buf + i * s->words, s->words, seq + i);
        size_t sent = 0;
        f->send_status = rk_kernel_send_batch(f->k, buf, s->size, n, RK_WAIT_FOREVER, &sent, NULL);
        seq += sent;
    }
    free(buf);
    return NULL;
}

static void *flow_receive(void *arg) {
    flow *f = arg;
    const settings *s = f->s;
    if (s->pin) pin_to_cpu(f->cpu + 1);
    uint32_t *buf = malloc((size_t)s->batch * s->size);
    rk_reply_info *infos = malloc(s->batch * sizeof *infos);
    uint64_t seq = 0;
    f->receive_status = buf && infos ? RK_OK : RK_OUT_OF_MEMORY;
    while (f->receive_status == RK_OK && seq < f->messages) {
        size_t got = 0;
        f->receive_status = rk_kernel_receive_batch(f->k, buf, s->size, infos, s->batch, 30ull * 1000000000u, &got);
        for (size_t i = 0; i < got; i++, seq++)
            if (infos[i].id != f->first_id + seq || infos[i].status != 0 || !verify(buf + i * s->words, s->words, seq))
                f->errors++;
    }
    free(buf);
    free(infos);
    return NULL;
}

rk_status rk_bench_cuda_throughput_run(rk_runtime *rt, const rk_bench_cuda_opts *opts,
                                       rk_bench_cuda_throughput *out) {
    settings s;
    memset(out, 0, sizeof *out);
    rk_status st = resolve(opts, 200000000ull, &s);
    if (st != RK_OK) return st;
    flow *flows = calloc(s.kernels, sizeof *flows);
    if (!flows) return RK_OUT_OF_MEMORY;
    uint32_t launched = 0;
    for (; launched < s.kernels && st == RK_OK; launched++) {
        flow *f = &flows[launched];
        st = launch_echo(rt, &s, RK_MODE_PERSISTENT, &f->k);
        if (st != RK_OK) break;
        f->s = &s;
        f->messages = s.messages / s.kernels;
        f->first_id = 1;
        f->cpu = 2 + 2 * (int)launched;
    }
    uint64_t t0 = now_ns();
    for (uint32_t i = 0; st == RK_OK && i < launched; i++) {
        pthread_create(&flows[i].sender, NULL, flow_send, &flows[i]);
        pthread_create(&flows[i].receiver, NULL, flow_receive, &flows[i]);
    }
    if (st == RK_OK) {
        for (uint32_t i = 0; i < launched; i++) {
            pthread_join(flows[i].sender, NULL);
            pthread_join(flows[i].receiver, NULL);
        }
        uint64_t t1 = now_ns();
        out->kernels = launched;
        out->seconds = (double)(t1 - t0) * 1e-9;
        for (uint32_t i = 0; i < launched; i++) {
            out->messages += flows[i].messages;
            out->errors += flows[i].errors;
            if (st == RK_OK && flows[i].send_status != RK_OK) st = flows[i].send_status;
            if (st == RK_OK && flows[i].receive_status != RK_OK) st = flows[i].receive_status;
        }
        out->messages_per_second = (double)out->messages / out->seconds;
        out->bytes_per_second = out->messages_per_second * 2.0 * s.size;
    }
    for (uint32_t i = 0; i < launched; i++) {
        rk_kernel_terminate(flows[i].k, 10ull * 1000000000u);
        rk_kernel_destroy(flows[i].k);
    }
    free(flows);
    return st;
}

/* ---- host cost of a send -------------------------------------------------------- */

rk_status rk_bench_cuda_send_cost_run(rk_runtime *rt, const rk_bench_cuda_opts *opts,
                                      rk_bench_cuda_send_cost *out) {
    settings s;
    memset(out, 0, sizeof *out);
    rk_status st = resolve(opts, 2000, &s);
    if (st != RK_OK) return st;
    if (s.batch > s.capacity) s.batch = s.capacity;
    if (s.pin) pin_to_cpu(1);
    rk_kernel *k = NULL;
    st = launch_echo(rt, &s, RK_MODE_PERSISTENT, &k);
    if (st != RK_OK) return st;
    uint32_t *buf = malloc((size_t)s.batch * s.size), *rep = malloc((size_t)s.batch * s.size);
    rk_reply_info *infos = malloc(s.batch * sizeof *infos);
    uint64_t *samples = calloc(s.messages, sizeof *samples);
    if (!buf || !rep || !infos || !samples) st = RK_OUT_OF_MEMORY;
    uint64_t seq = 0;
    const uint64_t warmup = 100;
    for (uint64_t call = 0; st == RK_OK && call < warmup + s.messages; call++) {
        for (uint32_t i = 0; i < s.batch; i++) fill(buf + i * s.words, s.words, seq + i);
        size_t sent = 0;
        uint64_t t0 = now_ns();
        st = rk_kernel_send_batch(k, buf, s.size, s.batch, RK_WAIT_FOREVER, &sent, NULL);
        uint64_t t1 = now_ns();
        if (call >= warmup) samples[call - warmup] = t1 - t0;
        for (size_t got_all = 0; st == RK_OK && got_all < sent;) {
            size_t got = 0;
            st = rk_kernel_receive_batch(k, rep, s.size, infos, s.batch, 10ull * 1000000000u, &got);
            for (size_t i = 0; i < got; i++)
                if (!verify(rep + i * s.words, s.words, seq + got_all + i)) out->errors++;
            got_all += got;
        }
        seq += sent;
    }
    if (st == RK_OK) {
        double sum = 0;
        for (uint64_t i = 0; i < s.messages; i++) sum += (double)samples[i];
        qsort(samples, s.messages, sizeof *samples, compare_u64);
        out->calls = s.messages;
        out->batch = s.batch;
        out->ns_per_message_p50 = (double)samples[s.messages / 2] / s.batch;
        out->ns_per_message_mean = sum / (double)s.messages / s.batch;
    }
    rk_status t = rk_kernel_terminate(k, 10ull * 1000000000u);
    if (st == RK_OK) st = t;
    rk_kernel_destroy(k);
    free(buf);
    free(rep);
    free(infos);
    free(samples);
    return st;
}

void rk_bench_cuda_describe(rk_runtime *rt, char *device, size_t device_size, char *driver, size_t driver_size) {
    rk_device_info info;
    if (rk_context_device_info(rk_runtime_context(rt), &info) != RK_OK) {
        snprintf(device, device_size, "unknown");
        snprintf(driver, driver_size, "unknown");
        return;
    }
    snprintf(device, device_size, "%s, %s, %u SMs", info.name, info.architecture, info.multiprocessors);
    snprintf(driver, driver_size, "%s", info.driver);
}
