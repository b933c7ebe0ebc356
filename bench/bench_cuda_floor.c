/* The CUDA floors of bench_cuda_floor.h, through the public device layer. */
#include "bench_cuda_floor.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ringkernel/device.h"

enum { WARMUP = 2000 };
static const uint64_t ROUND_TIMEOUT_NS = 1000000000u; /* a round that takes 1 s: the GPU does not see us */

/* words[0] ping (host writes), words[16] pong (GPU writes), words[32] stop
 * (host writes): 128 bytes apart, one writer each. The word is the message
 * (its value is the round's number), so relaxed loads and stores suffice, as
 * in NCCL's LL protocol: acquire/release at system scope costs ~1 us more
 * per round trip on an H100 (measured on the H100: 3.0-3.3 vs 2.2-2.6 us). */
static const char floor_source[] =
    "extern \"C\" __global__ void rk_floor_pingpong(unsigned long long *words, unsigned long long rounds) {\n"
    "    if (threadIdx.x != 0 || blockIdx.x != 0) return;\n"
    "    unsigned long long *ping = words, *pong = words + 16, *stop = words + 32;\n"
    "    for (unsigned long long i = 1; i <= rounds; i++) {\n"
    "        unsigned long long v, s;\n"
    "        for (unsigned polls = 1;; polls++) {\n"
    "            asm volatile(\"ld.relaxed.sys.global.u64 %0, [%1];\" : \"=l\"(v) : \"l\"(ping) : \"memory\");\n"
    "            if (v == i) break;\n"
    "            if (polls % 1024u) continue; /* a load over the bus is ~1.2 us: stop is read rarely */\n"
    "            asm volatile(\"ld.relaxed.sys.global.u64 %0, [%1];\" : \"=l\"(s) : \"l\"(stop) : \"memory\");\n"
    "            if (s) return;\n"
    "        }\n"
    "        asm volatile(\"st.relaxed.sys.global.u64 [%0], %1;\" :: \"l\"(pong), \"l\"(v) : \"memory\");\n"
    "    }\n"
    "}\n"
    "extern \"C\" __global__ void rk_floor_empty(int unused) { (void)unused; }\n";

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void summarize(uint64_t *ns, uint64_t n, rk_bench_cuda_floor *out) {
    double sum = 0;
    for (uint64_t i = 0; i < n; i++) sum += (double)ns[i];
    qsort(ns, n, sizeof *ns, cmp_u64);
    out->rounds = n;
    out->p50_us = (double)ns[n / 2] / 1e3;
    out->p99_us = (double)ns[n * 99 / 100] / 1e3;
    out->mean_us = n ? sum / (double)n / 1e3 : 0;
}

typedef struct floor_kit {
    rk_context *ctx;
    rk_module *module;
    rk_stream *stream;
    rk_buffer *words;
    _Atomic uint64_t *ping, *pong, *stop;
} floor_kit;

static void kit_close(floor_kit *k) {
    if (k->stream) rk_stream_destroy(k->stream);
    if (k->words) rk_buffer_free(k->words);
    if (k->module) rk_module_destroy(k->module);
}

static rk_status kit_open(rk_runtime *rt, floor_kit *k) {
    memset(k, 0, sizeof *k);
    k->ctx = rk_runtime_context(rt);
    void *host = NULL;
    rk_status s = rk_module_compile(k->ctx, floor_source, NULL, &k->module);
    if (s == RK_OK) s = rk_stream_create(k->ctx, &k->stream);
    /* Three words on separate 128-byte lines, each with one writer. */
    if (s == RK_OK) s = rk_buffer_alloc_mapped(k->ctx, 3 * 128, &k->words, &host);
    if (s != RK_OK) {
        kit_close(k);
        return s;
    }
    k->ping = (_Atomic uint64_t *)host;
    k->pong = (_Atomic uint64_t *)((char *)host + 128);
    k->stop = (_Atomic uint64_t *)((char *)host + 256);
    return RK_OK;
}

rk_status rk_bench_cuda_floor_pingpong(rk_runtime *rt, uint64_t rounds, rk_bench_cuda_floor *out) {
    if (!rt || !out) return RK_NULL_ARGUMENT;
    memset(out, 0, sizeof *out);
    if (!rounds) rounds = 20000;
    uint64_t total = rounds + WARMUP;
    uint64_t *ns = malloc(rounds * sizeof *ns);
    floor_kit k;
    rk_status s = ns ? kit_open(rt, &k) : RK_OUT_OF_MEMORY;
    if (s != RK_OK) {
        free(ns);
        return s;
    }
    rk_function *fn = NULL;
    s = rk_module_get_function(k.module, "rk_floor_pingpong", &fn);
    rk_arg args[] = {RK_ARG_BUF(k.words), RK_ARG_ULONG(total)};
    rk_launch_desc d = {.grid = {1, 1, 1}, .block = {32, 1, 1}, .stream = k.stream, .args = args, .arg_count = 2};
    if (s == RK_OK) s = rk_launch(fn, &d); /* resident until every round is answered or stop is set */
    for (uint64_t i = 1; s == RK_OK && i <= total; i++) {
        uint64_t t0 = now_ns(), got;
        atomic_store_explicit(k.ping, i, memory_order_release);
        while ((got = atomic_load_explicit(k.pong, memory_order_acquire)) != i) {
            if (got > i) out->errors++;
            if (now_ns() - t0 > ROUND_TIMEOUT_NS) {
                s = RK_TIMEOUT;
                break;
            }
        }
        if (i > WARMUP) ns[i - WARMUP - 1] = now_ns() - t0;
    }
    atomic_store_explicit(k.stop, 1, memory_order_release);
    rk_status ss = rk_stream_synchronize(k.stream);
    if (s == RK_OK) s = ss;
    if (s == RK_OK) summarize(ns, rounds, out);
    free(ns);
    kit_close(&k);
    return s;
}

rk_status rk_bench_cuda_floor_empty_launch(rk_runtime *rt, uint64_t rounds, rk_bench_cuda_floor *out) {
    if (!rt || !out) return RK_NULL_ARGUMENT;
    memset(out, 0, sizeof *out);
    if (!rounds) rounds = 20000;
    uint64_t *ns = malloc(rounds * sizeof *ns);
    floor_kit k;
    rk_status s = ns ? kit_open(rt, &k) : RK_OUT_OF_MEMORY;
    if (s != RK_OK) {
        free(ns);
        return s;
    }
    rk_function *fn = NULL;
    s = rk_module_get_function(k.module, "rk_floor_empty", &fn);
    rk_arg args[] = {RK_ARG_INT(0)};
    rk_launch_desc d = {.grid = {1, 1, 1}, .block = {32, 1, 1}, .stream = k.stream, .args = args, .arg_count = 1};
    for (uint64_t i = 0; s == RK_OK && i < rounds + WARMUP; i++) {
        uint64_t t0 = now_ns();
        s = rk_launch(fn, &d);
        if (s == RK_OK) s = rk_stream_synchronize(k.stream);
        if (i >= WARMUP) ns[i - WARMUP] = now_ns() - t0;
    }
    if (s == RK_OK) summarize(ns, rounds, out);
    free(ns);
    kit_close(&k);
    return s;
}
