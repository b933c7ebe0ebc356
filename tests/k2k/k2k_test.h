/* Shared by the K2K channel tests. Each test is written once against the
 * public API and run per backend: argv[1] is "cpu", "webgpu" or "cuda"; a
 * backend that is absent, or has no channels yet, skips (77).
 *
 * Handlers are DSL source (the same text for every backend). A message
 * carries its source and sequence number and a check word every stage
 * updates, so the sink can verify each message end to end. */
#ifndef RK_K2K_TEST_H
#define RK_K2K_TEST_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "ringkernel/channel.h"
#include "ringkernel/ringkernel.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define K2K_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define K2K_SANITIZED 1
#endif
#endif

/* RK_K2K_TIME_SCALE (a whole number, default 1) stretches every wait: under
 * compute-sanitizer the GPU kernels run many times slower. */
static inline uint64_t k2k_time_scale(void) {
    const char *e = getenv("RK_K2K_TIME_SCALE");
    long v = e ? strtol(e, NULL, 10) : 1;
    return v > 0 && v < 1000 ? (uint64_t)v : 1;
}
#define K2K_SECONDS(n) ((uint64_t)(n) * 1000000000u * k2k_time_scale())

/* RK_K2K_PROGRESS=1: each step on stderr with the seconds since the first,
 * to see where a slow run (compute-sanitizer) spends its time. */
static inline void k2k_step(const char *what, uint64_t n) {
    static struct timespec t0;
    static int started;
    const char *e = getenv("RK_K2K_PROGRESS");
    if (!e || *e != '1') return;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    if (!started) {
        t0 = t;
        started = 1;
    }
    const double s = (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9;
    fprintf(stderr, "k2k progress %8.2f s: %s %llu\n", s, what, (unsigned long long)n);
}

typedef struct k2k_msg {
    uint64_t seq;
    uint32_t source;
    uint32_t hops;  /* stages that handled it */
    uint64_t check; /* check * 31 + hops at every stage */
    int32_t ttl;    /* cycle test: hops left */
    uint32_t flags; /* cycle test: K2K_DONE when ttl ran out */
} k2k_msg;

enum { K2K_DONE = 1u };

static inline uint64_t k2k_check_after(uint64_t seq, unsigned stages) {
    uint64_t c = seq;
    for (unsigned h = 1; h <= stages; h++) c = c * 31u + h;
    return c;
}

#include "support/channel_handlers.h"

/* The sink alone: no rk_emit, so a backend without device-side channels
 * builds it (the destination of a relayed channel). */
static const char k2k_sink_source[] =
    "typedef struct { uint64_t seq; uint32_t source; uint32_t hops; uint64_t check; int32_t ttl; uint32_t flags; } "
    "Msg;\n"
    "RK_HANDLER int sink(const Msg *in, Msg *out, void *state) {\n"
    "    Msg m = *in; m.hops += 1u; m.check = m.check * 31u + m.hops; *out = m;\n"
    "    return 0;\n"
    "}\n";

/* The source to build handler from: the sink alone where that is enough. */
static inline const char *k2k_source_for(const char *handler) {
    return strcmp(handler, "sink") == 0 ? k2k_sink_source : channel_handlers_source;
}

typedef struct k2k_env {
    const char *backend;
    rk_runtime *rt;
} k2k_env;

/* Launches handler (from k2k_source_for) on rt with the tests' sizes. */
static inline rk_status k2k_try_launch(rk_runtime *rt, const char *name, const char *handler, uint32_t capacity,
                                       rk_kernel **out) {
    rk_kernel_desc d = {
        .name = name,
        .handler_source = k2k_source_for(handler),
        .handler_name = handler,
        .message_size = sizeof(k2k_msg),
        .reply_size = sizeof(k2k_msg),
        .queue_capacity = capacity,
        .workers = 1,
        .ordered = true, /* CUDA: one worker warp, so each channel has one producer and keeps its order */
    };
    return rk_kernel_launch(rt, &d, out);
}

static inline rk_kernel *k2k_launch(k2k_env *env, const char *name, const char *handler, uint32_t capacity) {
    rk_kernel *k = NULL;
    CHECK_OK(k2k_try_launch(env->rt, name, handler, capacity, &k));
    return k;
}

static inline rk_channel *k2k_connect(rk_kernel *a, uint32_t port, rk_kernel *b, rk_channel_flow flow,
                                      rk_channel_replies replies, uint32_t capacity) {
    rk_channel_desc cd = {.message_size = sizeof(k2k_msg), .capacity = capacity, .flow = flow, .replies = replies};
    rk_channel *ch = NULL;
    CHECK_OK(rk_channel_connect(a, port, b, &cd, &ch));
    CHECK(ch != NULL);
    return ch;
}

/* Opens argv[1]'s backend; skips when it is absent or has no channels. */
static inline k2k_env k2k_open(int argc, char **argv) {
    k2k_env env = {.backend = argc > 1 ? argv[1] : "cpu"};
    k2k_step("opening the runtime", 0);
    rk_runtime_desc d = {.backend = env.backend};
    rk_status s = rk_runtime_create(&d, &env.rt);
    if (s == RK_BACKEND_UNAVAILABLE || s == RK_NO_DEVICE || s == RK_UNKNOWN_BACKEND)
        RK_SKIP("backend %s: %s", env.backend, rk_last_error());
    CHECK_OK(s);
    /* Channels on this backend? Probe with one kernel whose handler does not
     * emit, connected to itself (REPORT: a cycle needs one). One kernel, not
     * two: compute-sanitizer runs CUDA kernels one at a time, so a second
     * persistent kernel would never start beside the first. */
    rk_kernel_desc kd = {.name = "probe", .handler_source = channel_handlers_source, .handler_name = "sink",
                         .message_size = sizeof(k2k_msg), .reply_size = sizeof(k2k_msg), .queue_capacity = 16,
                         .workers = 1, .ordered = true /* CUDA: one worker warp, as channels need */};
    rk_kernel *a = NULL;
    s = rk_kernel_launch(env.rt, &kd, &a);
    if ((s == RK_COMPILE_FAILED || s == RK_PARSE_ERROR || s == RK_UNSUPPORTED) && strcmp(env.backend, "cpu") != 0) {
        fprintf(stderr, "SKIP: backend %s cannot build handlers that call rk_emit yet: %s\n", env.backend,
                rk_last_error());
        rk_runtime_destroy(env.rt);
        exit(77);
    }
    CHECK_OK(s);
    k2k_step("probe: kernel launched", 1);
    rk_channel_desc cd = {.message_size = sizeof(k2k_msg), .flow = RK_CHANNEL_REPORT};
    s = rk_channel_connect(a, 0, a, &cd, NULL);
    k2k_step("probe: connected", 1);
    char why[512]; /* destroy clears rk_last_error() */
    snprintf(why, sizeof why, "%s", rk_last_error());
    rk_kernel_destroy(a);
    k2k_step("probe: destroyed", 1);
    if (s == RK_UNSUPPORTED) {
        fprintf(stderr, "SKIP: backend %s: %s\n", env.backend, why);
        rk_runtime_destroy(env.rt);
        exit(77);
    }
    CHECK_OK(s);
    return env;
}

static inline void k2k_close(k2k_env *env) { CHECK_OK(rk_runtime_destroy(env->rt)); }

/* Receives one reply from k, failing the test after 20 s. */
static inline void k2k_receive(rk_kernel *k, k2k_msg *m, rk_reply_info *info) {
    CHECK_OK(rk_kernel_receive(k, m, sizeof *m, info, K2K_SECONDS(20)));
}

static inline k2k_msg k2k_make(uint32_t source, uint64_t seq) {
    k2k_msg m = {.seq = seq, .source = source, .check = seq};
    return m;
}

static inline void k2k_terminate_all(rk_kernel **ks, size_t n) {
    for (size_t i = 0; i < n; i++) CHECK_OK(rk_kernel_terminate(ks[i], K2K_SECONDS(20)));
}

static inline void k2k_destroy_all(rk_kernel **ks, size_t n) {
    for (size_t i = 0; i < n; i++) CHECK_OK(rk_kernel_destroy(ks[i]));
}

#endif
