/* A handler that traps: the device fault reaches the host as a FAILED
 * kernel with the CUresult's name, replies sent before it still arrive, and
 * nothing hangs. Its own process: a fault ends the CUDA context. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cuda_test_util.h"

/* CUDA C (__trap is no DSL call), so not marked RK_HANDLER: the launch
 * passes backend code on without the dialect check. */
static const char trap_source[] =
    "__device__ int trapper(const unsigned int *req, unsigned int *resp, void *state) {\n"
    "    (void)state;\n"
    "    if (*req == 777u) __trap();\n"
    "    *resp = *req + 1u;\n"
    "    return 0;\n"
    "}\n";

int main(void) {
    rk_runtime *rt = cuda_test_runtime();
    rk_kernel_desc desc = {.name = "trapper", .handler_source = trap_source, .handler_name = "trapper",
                           .message_size = 4, .reply_size = 4, .queue_capacity = 256};
    rk_kernel *k = NULL;
    CHECK_OK(rk_kernel_launch(rt, &desc, &k));
    CHECK_OK(rk_kernel_activate(k));
    for (unsigned v = 0; v < 100; v++) {
        unsigned r = 0;
        CHECK_OK(rk_kernel_send(k, &v, sizeof v, RK_WAIT_FOREVER, NULL));
        CHECK_OK(rk_kernel_receive(k, &r, sizeof r, NULL, 10ull * 1000000000u));
        CHECK_EQ(r, v + 1);
    }
    unsigned bad = 777, r = 0;
    CHECK_OK(rk_kernel_send(k, &bad, sizeof bad, RK_WAIT_FOREVER, NULL));
    rk_status s = rk_kernel_receive(k, &r, sizeof r, NULL, 20ull * 1000000000u);
    printf("receive after the trap: %s: %s\n", rk_status_name(s), rk_last_error());
    CHECK_EQ(s, RK_DEVICE_FAULT);
    CHECK_STR_CONTAINS(rk_last_error(), "CUDA_ERROR_");
    rk_kernel_stats st;
    CHECK_OK(rk_kernel_stats_get(k, &st));
    CHECK_EQ(st.state, RK_KERNEL_FAILED);
    CHECK_EQ(st.failure, RK_DEVICE_FAULT);
    CHECK_STATUS(rk_kernel_send(k, &bad, sizeof bad, RK_NO_WAIT, NULL), RK_DEVICE_FAULT);
    CHECK_OK(rk_kernel_destroy(k));
    CHECK_OK(rk_runtime_destroy(rt));
    cuda_test_done();
    printf("trap: reported as %s, destroyed cleanly\n", rk_status_name(st.failure));
    return 0;
}
