/* A handler that never returns: the watchdog in poll reports RK_HUNG
 * (RK_CUDA_WATCHDOG_MS is set low here) instead of waiting forever, and
 * destroying the kernel says so (RK_HUNG: it is left running). The stuck
 * kernel cannot be stopped, so the process ends without tearing the context
 * down. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cuda_test_util.h"

static const char spin_source[] =
    "RK_HANDLER int spinner(const unsigned int *req, unsigned int *resp, unsigned int *state) {\n"
    "    /* state stays 0: a volatile read of device memory the compiler cannot drop */\n"
    "    while (*req == 13u && *(volatile unsigned int *)state == 0u) { }\n"
    "    *resp = *req + 1u;\n"
    "    return 0;\n"
    "}\n";

int main(void) {
    setenv("RK_CUDA_WATCHDOG_MS", "300", 1);
    rk_runtime *rt = cuda_test_runtime();
    rk_kernel_desc desc = {.name = "spinner", .handler_source = spin_source, .handler_name = "spinner",
                           .message_size = 4, .reply_size = 4, .state_size = 4, .queue_capacity = 64};
    rk_kernel *k = NULL;
    CHECK_OK(rk_kernel_launch(rt, &desc, &k));
    CHECK_OK(rk_kernel_activate(k));
    unsigned v = 5, r = 0;
    CHECK_OK(rk_kernel_send(k, &v, sizeof v, RK_WAIT_FOREVER, NULL));
    CHECK_OK(rk_kernel_receive(k, &r, sizeof r, NULL, 10ull * 1000000000u));
    CHECK_EQ(r, 6);
    v = 13;
    CHECK_OK(rk_kernel_send(k, &v, sizeof v, RK_WAIT_FOREVER, NULL));
    rk_status s = rk_kernel_receive(k, &r, sizeof r, NULL, 20ull * 1000000000u);
    printf("receive from the stuck kernel: %s: %s\n", rk_status_name(s), rk_last_error());
    CHECK_EQ(s, RK_HUNG);
    CHECK_EQ(rk_kernel_get_state(k), RK_KERNEL_FAILED);
    s = rk_kernel_destroy(k);
    printf("destroy of the stuck kernel: %s: %s\n", rk_status_name(s), rk_last_error());
    CHECK_EQ(s, RK_HUNG);
    fflush(stdout);
    _Exit(0);
}
