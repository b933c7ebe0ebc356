/* A handler that reports an error: its reply still comes, carrying the
 * handler's status, and errors_encountered counts it. Both modes. */
#include "kernel_test.h"

static void run(rk_runtime *rt, rk_exec_mode mode) {
    rk_kernel_desc d = test_desc(mode, 64);
    rk_kernel *k;
    CHECK_OK(rk_kernel_launch(rt, &d, &k));
    CHECK_OK(rk_kernel_activate(k));
    enum { N = 300 };
    uint64_t failing = 0;
    for (uint64_t i = 0; i < N; i++) {
        test_request q = test_make_request(i);
        if (i % 3 == 1) {
            q.fail_with = -(int32_t)(1 + i % 50);
            failing++;
        }
        CHECK_OK(rk_kernel_send(k, &q, sizeof q, SECONDS(10), NULL));
        if (i % 50 == 49) {
            for (uint64_t j = i - 49; j <= i; j++) {
                test_reply r;
                rk_reply_info info;
                CHECK_OK(rk_kernel_receive(k, &r, sizeof r, &info, SECONDS(10)));
                test_request want = test_make_request(j);
                CHECK_U64_EQ(info.id, j + 1);
                CHECK_EQ(info.status, j % 3 == 1 ? -(int32_t)(1 + j % 50) : 0);
                CHECK_U64_EQ(r.mixed, test_expected_mixed(want.value, want.salt)); /* the reply is still delivered */
            }
        }
    }
    rk_kernel_stats st = test_stats(k);
    CHECK_U64_EQ(st.errors_encountered, failing);
    CHECK_EQ(st.state, RK_KERNEL_ACTIVE); /* errors do not fail the kernel */
    CHECK_EQ(st.failure, RK_OK);
    CHECK_OK(rk_kernel_terminate(k, SECONDS(10)));
    st = test_stats(k);
    CHECK_U64_EQ(st.messages_processed, N);
    CHECK_U64_EQ(st.errors_encountered, failing);
    CHECK_OK(rk_kernel_destroy(k));
}

int main(void) {
    rk_runtime *rt = test_cpu_runtime();
    run(rt, RK_MODE_PERSISTENT);
    run(rt, RK_MODE_TRADITIONAL);
    CHECK_OK(rk_runtime_destroy(rt));
    printf("kernel handler errors: ok\n");
    return 0;
}
