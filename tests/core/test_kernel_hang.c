/* A handler that never returns, in each CPU mode: the watchdog fails the
 * kernel with RK_HUNG soon after RK_CPU_WATCHDOG_MS; the replies finished
 * before the stuck request arrive with their values; every other accepted
 * request gets a reply with status RK_HUNG (each id exactly once); the
 * stuck thread is gone (counted in /proc/self/task); a later receive
 * reports the failure at once. */
#include "reliability_test.h"

enum { TOTAL = 10, POISON_AT = 4 };

static void run(rk_runtime *rt, rk_exec_mode mode, uint32_t workers) {
    printf("%s, %u worker(s)\n", rk_exec_mode_name(mode), workers);
    int threads_before = thread_count();
    rk_kernel_desc d = test_desc(mode, 64);
    d.handler = hanging_handler;
    d.workers = workers;
    if (workers > 1) d.state_size = 0; /* workers would share it */
    rk_kernel *k;
    CHECK_OK(rk_kernel_launch(rt, &d, &k));
    /* Queued before activation: the stuck request lands mid-batch. */
    uint64_t first_id = 0;
    for (uint64_t i = 0; i < TOTAL; i++) {
        test_request q = test_make_request(i);
        if (i == POISON_AT) q.value = POISON;
        uint64_t id = 0;
        CHECK_OK(rk_kernel_send(k, &q, sizeof q, RK_NO_WAIT, &id));
        if (i == 0) first_id = id;
    }
    double t0 = seconds_now();
    CHECK_OK(rk_kernel_activate(k));

    int seen[TOTAL] = {0};
    unsigned answered = 0, hung = 0;
    double first_hung_s = -1;
    rk_status last;
    for (;;) {
        test_reply p;
        rk_reply_info info;
        last = rk_kernel_receive(k, &p, sizeof p, &info, SECONDS(30));
        if (last != RK_OK) break;
        uint64_t i = info.id - first_id;
        CHECK_LT(i, TOTAL);
        CHECK_EQ(seen[i], 0);
        seen[i] = 1;
        if (info.status == 0) {
            test_request q = test_make_request(i);
            CHECK_NE(i, POISON_AT);
            if (workers == 1) CHECK_LT(i, POISON_AT);
            CHECK_U64_EQ(p.mixed, test_expected_mixed(q.value, q.salt));
            answered++;
        } else {
            CHECK_EQ(info.status, RK_HUNG);
            if (workers == 1) CHECK_GE(i, POISON_AT);
            if (first_hung_s < 0) first_hung_s = seconds_now() - t0;
            hung++;
        }
    }
    double failed_s = seconds_now() - t0;
    printf("  %u replies, %u answered RK_HUNG after %.2f s; receive then says %s: %s\n", answered, hung, first_hung_s,
           rk_status_name(last), rk_last_error());
    CHECK_STATUS(last, RK_HUNG);
    CHECK_STR_CONTAINS(rk_last_error(), "RK_CPU_WATCHDOG_MS");
    CHECK_EQ(answered + hung, TOTAL);
    CHECK(seen[POISON_AT] && hung >= 1);
    /* One worker took them all, in order: exactly those before the stuck
     * one were answered. Two share them out, round robin. */
    if (workers == 1) CHECK_EQ(answered, POISON_AT);
    /* Never before the limit, and not much after it. */
    CHECK(first_hung_s >= WATCHDOG_MS / 1000.0 * 0.95);
    CHECK(failed_s < WATCHDOG_MS / 1000.0 + NOISE_S);

    rk_kernel_stats st = test_stats(k);
    CHECK_EQ(st.state, RK_KERNEL_FAILED);
    CHECK_EQ(st.failure, RK_HUNG);
    CHECK_U64_EQ(st.messages_sent, TOTAL);
    CHECK_U64_EQ(st.replies_received, TOTAL);
    CHECK_EQ(st.input_depth + st.output_depth, 0);
    test_request q = test_make_request(1);
    CHECK_STATUS(rk_kernel_send(k, &q, sizeof q, RK_NO_WAIT, NULL), RK_HUNG);
    /* The stuck handler's thread was cancelled when the kernel failed (a
     * second persistent worker, never stuck, lives until destroy). */
    int others = mode == RK_MODE_PERSISTENT ? (int)workers - 1 : 0;
    CHECK_EQ(thread_count_settled(threads_before + others), threads_before + others);
    /* The failure was reported already; destroy has nothing left to stop. */
    CHECK_OK(rk_kernel_destroy(k));
    CHECK_EQ(thread_count_settled(threads_before), threads_before);
}

int main(void) {
    set_test_watchdog(WATCHDOG_MS);
    rk_runtime *rt = test_cpu_runtime();
    warm_up_context(rt);

    run(rt, RK_MODE_PERSISTENT, 1);
    run(rt, RK_MODE_PERSISTENT, 2);
    run(rt, RK_MODE_TRADITIONAL, 1);
    CHECK_OK(rk_runtime_destroy(rt));
    return 0;
}
