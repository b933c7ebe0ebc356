/* Destroying a kernel whose handler never returns, in each CPU mode: the
 * call comes back with RK_HUNG saying the handler was stopped, within the
 * watchdog's limit (when the watchdog fires while destroy waits) or within
 * destroy's own patience (a watchdog set too long to matter), and no
 * thread is left behind. */
#include "reliability_test.h"

static void run(rk_runtime *rt, rk_exec_mode mode, unsigned watchdog_ms, double bound_s, const char *says) {
    printf("%s, watchdog %u ms\n", rk_exec_mode_name(mode), watchdog_ms);
    set_test_watchdog(watchdog_ms);
    int threads_before = thread_count();
    rk_kernel_desc d = test_desc(mode, 16);
    d.handler = hanging_handler;
    rk_kernel *k;
    CHECK_OK(rk_kernel_launch(rt, &d, &k));
    CHECK_OK(rk_kernel_activate(k));
    test_request q = test_make_request(3);
    test_reply p;
    rk_reply_info info;
    CHECK_OK(rk_kernel_send(k, &q, sizeof q, RK_WAIT_FOREVER, NULL));
    CHECK_OK(rk_kernel_receive(k, &p, sizeof p, &info, SECONDS(30)));
    CHECK_EQ(info.status, 0);
    q.value = POISON;
    CHECK_OK(rk_kernel_send(k, &q, sizeof q, RK_WAIT_FOREVER, NULL));
    test_sleep_ms(20); /* let it get stuck */
    double t0 = seconds_now();
    rk_status s = rk_kernel_destroy(k);
    double took = seconds_now() - t0;
    printf("  destroy: %s after %.2f s: %s\n", rk_status_name(s), took, rk_last_error());
    CHECK_STATUS(s, RK_HUNG);
    CHECK_STR_CONTAINS(rk_last_error(), says);
    CHECK(took < bound_s + NOISE_S);
    CHECK_EQ(thread_count_settled(threads_before), threads_before);
}

int main(void) {
    rk_runtime *rt = test_cpu_runtime();
    warm_up_context(rt);

    /* The watchdog fires while destroy waits for the kernel to drain. */
    run(rt, RK_MODE_PERSISTENT, WATCHDOG_MS, WATCHDOG_MS / 1000.0, "no progress");
    run(rt, RK_MODE_TRADITIONAL, WATCHDOG_MS, WATCHDOG_MS / 1000.0, "no progress");
    /* A watchdog too long to fire: destroy gives up after about 5 s without
     * progress and stops the handler itself. */
    run(rt, RK_MODE_PERSISTENT, 600000, 6.0, "cancelled");
    run(rt, RK_MODE_TRADITIONAL, 600000, 6.0, "cancelled");
    CHECK_OK(rk_runtime_destroy(rt));
    return 0;
}
