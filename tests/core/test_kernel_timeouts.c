/* Every call that takes a timeout returns within it, in each CPU mode, while
 * the handler is busy for much longer (HANDLER_MS per request): RK_NO_WAIT
 * sends and receives return at once, a receive or terminate with a timeout
 * returns RK_TIMEOUT about when it should, and the handler never runs on
 * the calling thread. The replies still arrive afterwards. */
#include <pthread.h>
#include <stdatomic.h>

#include "reliability_test.h"

enum { HANDLER_MS = 1500 };
/* What "at once" and "about when it should" allow: well under HANDLER_MS,
 * so a call that waited for the handler fails. */
#define QUICK_S 1.0

static pthread_t caller;
static atomic_int ran_on_caller;

static int recording_handler(const void *request, void *reply, void *state) {
    if (pthread_equal(pthread_self(), caller)) atomic_store(&ran_on_caller, 1);
    return slow_handler(request, reply, state);
}

static void run(rk_runtime *rt, rk_exec_mode mode) {
    printf("%s\n", rk_exec_mode_name(mode));
    rk_kernel_desc d = test_desc(mode, 4);
    d.handler = recording_handler;
    rk_kernel *k;
    CHECK_OK(rk_kernel_launch(rt, &d, &k));
    CHECK_OK(rk_kernel_activate(k));
    test_request q = test_make_request(5);
    q.salt = HANDLER_MS;

    double t0 = seconds_now();
    CHECK_OK(rk_kernel_send(k, &q, sizeof q, RK_NO_WAIT, NULL));
    CHECK_OK(rk_kernel_send(k, &q, sizeof q, RK_NO_WAIT, NULL));
    double sends = seconds_now() - t0;

    test_reply p;
    t0 = seconds_now();
    CHECK_STATUS(rk_kernel_receive(k, &p, sizeof p, NULL, RK_NO_WAIT), RK_WOULD_BLOCK);
    double no_wait_receive = seconds_now() - t0;

    t0 = seconds_now();
    CHECK_STATUS(rk_kernel_receive(k, &p, sizeof p, NULL, MS(300)), RK_TIMEOUT);
    double timed_receive = seconds_now() - t0;

    rk_kernel_stats st = test_stats(k);
    CHECK_EQ(st.state, RK_KERNEL_ACTIVE);

    t0 = seconds_now();
    CHECK_STATUS(rk_kernel_terminate(k, MS(200)), RK_TIMEOUT);
    double timed_terminate = seconds_now() - t0;
    printf("  2 RK_NO_WAIT sends %.3f s, RK_NO_WAIT receive %.3f s, receive(300 ms) %.3f s, terminate(200 ms) %.3f s\n",
           sends, no_wait_receive, timed_receive, timed_terminate);
    CHECK(sends < QUICK_S);
    CHECK(no_wait_receive < QUICK_S);
    CHECK(timed_receive >= 0.3 && timed_receive < 0.3 + QUICK_S);
    CHECK(timed_terminate >= 0.2 && timed_terminate < 0.2 + QUICK_S);

    /* Both requests are still answered. */
    for (int i = 0; i < 2; i++) {
        rk_reply_info info;
        CHECK_OK(rk_kernel_receive(k, &p, sizeof p, &info, SECONDS(60)));
        CHECK_EQ(info.status, 0);
        CHECK_U64_EQ(p.mixed, test_expected_mixed(q.value, q.salt));
    }
    CHECK_OK(rk_kernel_terminate(k, SECONDS(60)));
    CHECK_OK(rk_kernel_destroy(k));
    CHECK_EQ(atomic_load(&ran_on_caller), 0);
}

int main(void) {
    caller = pthread_self();
    rk_runtime *rt = test_cpu_runtime();
    run(rt, RK_MODE_PERSISTENT);
    run(rt, RK_MODE_TRADITIONAL);
    CHECK_OK(rk_runtime_destroy(rt));
    return 0;
}
