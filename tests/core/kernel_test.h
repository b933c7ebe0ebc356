/* Shared by the ring-kernel tests: a CPU runtime, request/reply types and
 * handlers whose replies are easy to check. */
#ifndef RK_KERNEL_TEST_H
#define RK_KERNEL_TEST_H

#include <stdint.h>
#include <time.h>

#include "check.h"
#include "ringkernel/ringkernel.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define RK_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define RK_TEST_SANITIZED 1
#endif
#endif

#define MS(n) ((uint64_t)(n) * 1000000u)
#define SECONDS(n) ((uint64_t)(n) * 1000000000u)

typedef struct test_request {
    uint64_t value;
    uint32_t salt;
    int32_t fail_with; /* the handler returns this when non-zero */
} test_request;

typedef struct test_reply {
    uint64_t mixed;   /* value * 3 + salt */
    uint64_t running; /* sum of every value so far, when the kernel has state */
} test_reply;

static inline uint64_t test_expected_mixed(uint64_t value, uint32_t salt) { return value * 3u + salt; }

/* The host-pointer version of the DSL handler below. */
static inline int test_handler(const void *request, void *reply, void *state) {
    const test_request *q = request;
    test_reply *p = reply;
    p->mixed = q->value * 3u + q->salt;
    if (state) {
        uint64_t *sum = state;
        *sum += q->value;
        p->running = *sum;
    }
    return q->fail_with;
}

/* The same handler as DSL source, compiled by the CPU backend. */
static const char test_handler_source[] =
    "typedef struct { uint64_t value; uint32_t salt; int32_t fail_with; } Req;\n"
    "typedef struct { uint64_t mixed; uint64_t running; } Resp;\n"
    "RK_HANDLER int mix(const Req *req, Resp *resp, uint64_t *sum) {\n"
    "    resp->mixed = req->value * 3u + req->salt;\n"
    "    *sum += req->value;\n"
    "    resp->running = *sum;\n"
    "    return req->fail_with;\n"
    "}\n"
    "/* Without state, for several workers (they would share it). */\n"
    "RK_HANDLER int mix_stateless(const Req *req, Resp *resp, void *unused) {\n"
    "    (void)unused;\n"
    "    resp->mixed = req->value * 3u + req->salt;\n"
    "    return req->fail_with;\n"
    "}\n";

static inline rk_runtime *test_cpu_runtime(void) {
    rk_runtime *rt = NULL;
    rk_runtime_desc d = {.backend = "cpu"};
    CHECK_OK(rk_runtime_create(&d, &rt));
    return rt;
}

static inline rk_kernel_desc test_desc(rk_exec_mode mode, uint32_t capacity) {
    rk_kernel_desc d = {
        .name = "test",
        .handler = test_handler,
        .message_size = sizeof(test_request),
        .reply_size = sizeof(test_reply),
        .state_size = sizeof(uint64_t),
        .queue_capacity = capacity,
        .mode = mode,
    };
    return d;
}

static inline test_request test_make_request(uint64_t i) {
    test_request q = {.value = i * 7u + 1u, .salt = (uint32_t)(i % 1000u), .fail_with = 0};
    return q;
}

static inline void test_sleep_ms(unsigned ms) {
    struct timespec ts = {.tv_sec = ms / 1000u, .tv_nsec = (long)(ms % 1000u) * 1000000L};
    nanosleep(&ts, NULL);
}

static inline rk_kernel_stats test_stats(rk_kernel *k) {
    rk_kernel_stats st;
    CHECK_OK(rk_kernel_stats_get(k, &st));
    return st;
}

#endif
