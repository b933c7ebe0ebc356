/* A handler that never finishes: terminate times out, and destroying the
 * kernel and the runtime still returns (the dispatch is abandoned, the device
 * left behind, and destroy says so with RK_HUNG), instead of hanging the
 * program. Runs last in its own process:
 * lavapipe keeps spinning on the abandoned dispatch until exit. */
#include <time.h>

#include "check.h"

#define MS 1000000ull
#define SEC 1000000000ull

/* Replies to every message except 7, on which it loops forever. */
static const char stuck_handler[] =
    "fn stuck(req: u32, resp: u32) -> i32 {\n"
    "    loop {\n"
    "        if (rk_in[req] != 7u) { break; }\n"
    "    }\n"
    "    rk_out[resp] = rk_in[req] * 10u;\n"
    "    return 0;\n"
    "}\n";

static double seconds_since(const struct timespec *t0) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

int main(void) {
    const rk_backend *b = NULL;
    uint32_t count = 0;
    CHECK_OK(rk_backend_find("webgpu", &b));
    if (rk_backend_device_count(b, &count) != RK_OK || count == 0)
        RK_SKIP("webgpu backend unavailable: %s", rk_backend_unavailable_reason(b));
    rk_runtime *rt = NULL;
    rk_runtime_desc rd = {.backend = "webgpu"};
    CHECK_OK(rk_runtime_create(&rd, &rt));
    rk_kernel_desc d = {.name = "stuck", .handler_source = stuck_handler, .handler_name = "stuck",
                        .message_size = 4, .reply_size = 4, .queue_capacity = 16};
    rk_kernel *k = NULL;
    CHECK_OK(rk_kernel_launch(rt, &d, &k));
    CHECK_OK(rk_kernel_activate(k));
    for (uint32_t v = 1; v <= 3; v++) {
        uint32_t reply = 0;
        CHECK_OK(rk_kernel_send(k, &v, sizeof v, RK_NO_WAIT, NULL));
        CHECK_OK(rk_kernel_receive(k, &reply, sizeof reply, NULL, 10 * SEC));
        CHECK_EQ(reply, v * 10);
    }
    uint32_t poison = 7;
    CHECK_OK(rk_kernel_send(k, &poison, sizeof poison, RK_NO_WAIT, NULL));
    CHECK_STATUS(rk_kernel_terminate(k, 300 * MS), RK_TIMEOUT);
    rk_kernel_stats st;
    CHECK_OK(rk_kernel_stats_get(k, &st));
    CHECK_EQ(st.state, RK_KERNEL_TERMINATING);
    CHECK_EQ(st.input_depth, 1);
    CHECK_U64_EQ(st.messages_processed, 3);

    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK_STATUS(rk_kernel_destroy(k), RK_HUNG);
    CHECK_STR_CONTAINS(rk_last_error(), "did not finish");
    double kernel_s = seconds_since(&t0);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK_OK(rk_runtime_destroy(rt));
    double runtime_s = seconds_since(&t0);
    printf("stuck handler: kernel destroyed after %.1f s, runtime after %.1f s\n", kernel_s, runtime_s);
    CHECK_LT(kernel_s, 30);
    CHECK_LT(runtime_s, 30);
    return 0;
}
