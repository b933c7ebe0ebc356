/* rk_runtime_destroy while kernels of the runtime are alive is refused with
 * RK_BAD_STATE, naming how many; the runtime and its kernels keep working;
 * once they are destroyed, so is the runtime. */
#include "reliability_test.h"

static void round_trip(rk_kernel *k, uint64_t i) {
    test_request q = test_make_request(i);
    test_reply p;
    CHECK_OK(rk_kernel_send(k, &q, sizeof q, RK_WAIT_FOREVER, NULL));
    CHECK_OK(rk_kernel_receive(k, &p, sizeof p, NULL, SECONDS(30)));
    CHECK_U64_EQ(p.mixed, test_expected_mixed(q.value, q.salt));
}

int main(void) {
    rk_runtime *rt = test_cpu_runtime();
    rk_kernel_desc d = test_desc(RK_MODE_PERSISTENT, 16);
    rk_kernel *a, *b;
    CHECK_OK(rk_kernel_launch(rt, &d, &a));
    CHECK_OK(rk_kernel_activate(a));
    round_trip(a, 1);

    CHECK_STATUS(rk_runtime_destroy(rt), RK_BAD_STATE);
    CHECK_STR_CONTAINS(rk_last_error(), "1 kernel of this runtime is still alive");
    round_trip(a, 2);

    d.mode = RK_MODE_TRADITIONAL;
    CHECK_OK(rk_kernel_launch(rt, &d, &b));
    CHECK_OK(rk_kernel_activate(b));
    CHECK_STATUS(rk_runtime_destroy(rt), RK_BAD_STATE);
    CHECK_STR_CONTAINS(rk_last_error(), "2 kernels");
    round_trip(b, 3);
    round_trip(a, 4);

    CHECK_OK(rk_kernel_destroy(a));
    CHECK_STATUS(rk_runtime_destroy(rt), RK_BAD_STATE);
    CHECK_OK(rk_kernel_destroy(b));
    CHECK_OK(rk_runtime_destroy(rt));
    return 0;
}
