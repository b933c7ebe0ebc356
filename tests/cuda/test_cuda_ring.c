/* Ring kernels on the GPU under load: every reply checked, in order, none
 * lost or duplicated, handler errors counted, in all three patterns.
 *
 * RK_CUDA_TEST_MESSAGES sets the persistent run's length (default 100 M; the
 * launch-per-batch patterns run a hundredth of it, at least 10 000). Use a
 * small value under compute-sanitizer. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cuda_test_util.h"

static uint64_t expected_errors(uint64_t n) {
    uint64_t e = 0;
    for (uint64_t s = 0; s < n; s++) e += check_fails(s);
    return e;
}

static void run_mode(rk_runtime *rt, rk_exec_mode mode, uint64_t messages, uint32_t capacity) {
    rk_kernel_desc desc = {.name = "check", .handler_source = check_handler_source, .handler_name = "check",
                           .message_size = sizeof(check_req), .reply_size = sizeof(check_resp),
                           .state_size = 8, .queue_capacity = capacity, .mode = mode};
    rk_kernel *k = NULL;
    CHECK_OK(rk_kernel_launch(rt, &desc, &k));
    CHECK_OK(rk_kernel_activate(k));
    check_run run = {.k = k, .messages = messages, .batch = 256};
    check_run_start(&run);
    check_run_join(&run);
    CHECK_OK(run.send_status);
    CHECK_OK(run.receive_status);
    CHECK_U64_EQ(run.sent, messages);
    CHECK_U64_EQ(run.received, messages);
    CHECK_U64_EQ(run.wrong, 0);
    uint64_t errors = expected_errors(messages);
    CHECK_U64_EQ(run.handler_errors, errors);

    /* Nothing more arrives: no duplicates trail behind. */
    check_resp extra;
    CHECK_STATUS(rk_kernel_receive(k, &extra, sizeof extra, NULL, 1000000u), RK_TIMEOUT);
    CHECK_OK(rk_kernel_terminate(k, 10ull * 1000000000u));
    rk_kernel_stats st;
    CHECK_OK(rk_kernel_stats_get(k, &st));
    CHECK_EQ(st.state, RK_KERNEL_TERMINATED);
    CHECK(st.has_terminated);
    CHECK_U64_EQ(st.messages_sent, messages);
    CHECK_U64_EQ(st.messages_processed, messages);
    CHECK_U64_EQ(st.errors_encountered, errors);
    CHECK_U64_EQ(st.replies_received, messages);
    if (mode == RK_MODE_PERSISTENT) CHECK_U64_EQ(st.launches, 1);
    printf("%-11s %llu messages, capacity %u: %.2f s, %.1f M msg/s, %llu handler errors, %llu launches, 0 wrong\n",
           rk_exec_mode_name(mode), (unsigned long long)messages, capacity, run.seconds,
           messages / run.seconds / 1e6, (unsigned long long)errors, (unsigned long long)st.launches);
    CHECK_OK(rk_kernel_destroy(k));
}

/* Odd sizes and tiny queues: 5-byte requests, 3-byte replies. */
/* CUDA C, not the DSL (no RK_HANDLER mark): 8-bit fields are outside the
 * dialect every backend runs (WGSL has none), so this odd-size layout test
 * is backend code, which the launch passes on unchecked with its sizes. */
static const char tiny_source[] =
    "typedef struct Req { unsigned char b[5]; } Req;\n"
    "typedef struct Resp { unsigned char b[3]; } Resp;\n"
    "__device__ int tiny(const Req *req, Resp *resp, void *state) {\n"
    "    (void)state;\n"
    "    resp->b[0] = (unsigned char)(req->b[0] + req->b[4]);\n"
    "    resp->b[1] = req->b[1];\n"
    "    resp->b[2] = (unsigned char)~req->b[2];\n"
    "    return req->b[3] == 0x42 ? -1 : 0;\n"
    "}\n";

static void run_tiny(rk_runtime *rt, rk_exec_mode mode, uint32_t capacity, uint32_t workers) {
    rk_kernel_desc desc = {.name = "tiny", .handler_source = tiny_source, .handler_name = "tiny",
                           .message_size = 5, .reply_size = 3, .queue_capacity = capacity, .mode = mode,
                           .workers = workers};
    rk_kernel *k = NULL;
    CHECK_OK(rk_kernel_launch(rt, &desc, &k));
    CHECK_OK(rk_kernel_activate(k));
    enum { COUNT = 3000 };
    for (int i = 0; i < COUNT; i++) {
        unsigned char m[5] = {(unsigned char)i, (unsigned char)(i >> 8), (unsigned char)(i * 7), (unsigned char)i,
                              (unsigned char)(i >> 3)};
        uint64_t id = 0;
        /* Shorter messages are zero-padded: send only 4 bytes every third time. */
        size_t size = i % 3 == 0 ? 4 : 5;
        CHECK_OK(rk_kernel_send(k, m, size, RK_WAIT_FOREVER, &id));
        if (size == 4) m[4] = 0;
        unsigned char r[3];
        rk_reply_info info;
        CHECK_OK(rk_kernel_receive(k, r, sizeof r, &info, 10ull * 1000000000u));
        CHECK_U64_EQ(info.id, id);
        CHECK_EQ(r[0], (unsigned char)(m[0] + m[4]));
        CHECK_EQ(r[1], m[1]);
        CHECK_EQ(r[2], (unsigned char)~m[2]);
        CHECK_EQ(info.status, m[3] == 0x42 ? -1 : 0);
    }
    CHECK_OK(rk_kernel_terminate(k, 10ull * 1000000000u));
    CHECK_OK(rk_kernel_destroy(k));
}

int main(void) {
    rk_runtime *rt = cuda_test_runtime();
    uint64_t n = cuda_test_env_u64("RK_CUDA_TEST_MESSAGES", 100000000ull);
    uint64_t small = n / 100 < 10000 ? (n < 10000 ? n : 10000) : n / 100;

    run_tiny(rt, RK_MODE_PERSISTENT, 1, 0);
    run_tiny(rt, RK_MODE_PERSISTENT, 64, 1);
    run_tiny(rt, RK_MODE_TRADITIONAL, 2, 0);
    run_tiny(rt, RK_MODE_GRAPH, 4, 0);

    run_mode(rt, RK_MODE_TRADITIONAL, small, 4096);
    run_mode(rt, RK_MODE_GRAPH, small, 4096);
    run_mode(rt, RK_MODE_PERSISTENT, small, 16); /* many laps of a small ring */
    run_mode(rt, RK_MODE_PERSISTENT, n, 4096);
    CHECK_OK(rk_runtime_destroy(rt));
    cuda_test_done();
    return 0;
}
