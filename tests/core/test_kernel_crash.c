/* A handler that crashes (SIGSEGV, SIGFPE) fails its kernel instead of the
 * process: the host sees FAILED with the signal named, every accepted
 * message still gets exactly one reply (RK_DEVICE_FAULT from the crash on),
 * nothing hangs, and the process's own signal handling is put back. */
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>

#include "kernel_test.h"

#ifdef RK_TEST_SANITIZED
int main(void) { RK_SKIP("the sanitizer owns SIGSEGV/SIGFPE; the crash guard is off in this build"); }
#else

enum { CRASH_AT = 50, TOTAL = 120 };

/* Crashes on the request whose value marks it: a NULL write, or an integer
 * division by zero, depending on salt. */
static int crashing_handler(const void *request, void *reply, void *state) {
    const test_request *q = request;
    if (q->value == 0xDEAD) {
        if (q->salt == 1) {
            volatile int numerator = 12345, zero = 0; /* both unknown: a real idiv */
            volatile int x = numerator / zero;
            (void)x;
        } else {
            volatile int *null = NULL;
            *null = 1;
        }
    }
    return test_handler(request, reply, state);
}

static void run(rk_runtime *rt, rk_exec_mode mode, uint32_t salt, const char *signal_name) {
    rk_kernel_desc d = test_desc(mode, 256);
    d.handler = crashing_handler;
    rk_kernel *k;
    CHECK_OK(rk_kernel_launch(rt, &d, &k));
    /* Queue everything first so the crash lands mid-batch. */
    for (uint64_t i = 0; i < TOTAL; i++) {
        test_request q = test_make_request(i);
        if (i == CRASH_AT) {
            q.value = 0xDEAD;
            q.salt = salt;
        }
        CHECK_OK(rk_kernel_send(k, &q, sizeof q, SECONDS(10), NULL));
    }
    CHECK_OK(rk_kernel_activate(k));
    for (uint64_t i = 0; i < TOTAL; i++) {
        test_reply r;
        rk_reply_info info;
        CHECK_OK(rk_kernel_receive(k, &r, sizeof r, &info, SECONDS(10)));
        CHECK_U64_EQ(info.id, i + 1);
        if (i < CRASH_AT) {
            test_request q = test_make_request(i);
            CHECK_EQ(info.status, 0);
            CHECK_U64_EQ(r.mixed, test_expected_mixed(q.value, q.salt));
        } else {
            CHECK_EQ(info.status, RK_DEVICE_FAULT);
        }
    }
    CHECK_EQ(rk_kernel_get_state(k), RK_KERNEL_FAILED);
    rk_kernel_stats st = test_stats(k);
    CHECK_EQ(st.state, RK_KERNEL_FAILED);
    CHECK_EQ(st.failure, RK_DEVICE_FAULT);
    CHECK_U64_EQ(st.messages_processed, CRASH_AT);
    CHECK_U64_EQ(st.errors_encountered, 1);
    CHECK_U64_EQ(st.messages_sent, TOTAL);

    test_request q = test_make_request(0);
    CHECK_STATUS(rk_kernel_send(k, &q, sizeof q, SECONDS(1), NULL), RK_DEVICE_FAULT);
    CHECK_STR_CONTAINS(rk_last_error(), "crashed with");
    CHECK_STR_CONTAINS(rk_last_error(), signal_name);
    CHECK_STR_CONTAINS(rk_last_error(), "request id 51");
    CHECK_STATUS(rk_kernel_activate(k), RK_DEVICE_FAULT);
    test_reply r;
    /* Every reply is out: receive says why no more will come, at once. */
    CHECK_STATUS(rk_kernel_receive(k, &r, sizeof r, NULL, SECONDS(30)), RK_DEVICE_FAULT);
    CHECK_STATUS(rk_kernel_terminate(k, SECONDS(10)), RK_DEVICE_FAULT);
    CHECK(test_stats(k).has_terminated);
    CHECK_OK(rk_kernel_destroy(k));
}

/* ---- a fault elsewhere in the process goes to the handler it had ---------- */

static _Atomic int hold_worker, worker_inside;
static sigjmp_buf own_env;
static volatile sig_atomic_t own_handler_ran;

static int blocking_handler(const void *request, void *reply, void *state) {
    atomic_store(&worker_inside, 1);
    while (atomic_load(&hold_worker)) test_sleep_ms(1);
    return test_handler(request, reply, state);
}

static void own_segv_handler(int sig, siginfo_t *info, void *uc) {
    (void)sig, (void)info, (void)uc;
    own_handler_ran = 1;
    siglongjmp(own_env, 1);
}

static void test_foreign_fault_is_passed_on(rk_runtime *rt) {
    struct sigaction own, seen;
    memset(&own, 0, sizeof own);
    own.sa_sigaction = own_segv_handler;
    own.sa_flags = SA_SIGINFO;
    sigemptyset(&own.sa_mask);
    CHECK_EQ(sigaction(SIGSEGV, &own, NULL), 0);

    rk_kernel_desc d = test_desc(RK_MODE_PERSISTENT, 16);
    d.handler = blocking_handler;
    rk_kernel *k;
    CHECK_OK(rk_kernel_launch(rt, &d, &k));
    CHECK_OK(rk_kernel_activate(k));
    atomic_store(&hold_worker, 1);
    test_request q = test_make_request(0);
    CHECK_OK(rk_kernel_send(k, &q, sizeof q, SECONDS(10), NULL));
    while (!atomic_load(&worker_inside)) test_sleep_ms(1);

    /* A worker is running a handler: the guard's handler is in place... */
    CHECK_EQ(sigaction(SIGSEGV, NULL, &seen), 0);
    CHECK(seen.sa_sigaction != own_segv_handler);
    /* ...and a fault on this (unguarded) thread still reaches ours. */
    if (sigsetjmp(own_env, 1) == 0) {
        volatile int *volatile null = NULL;
        *null = 1;
    }
    CHECK_EQ(own_handler_ran, 1);

    atomic_store(&hold_worker, 0);
    test_reply r;
    CHECK_OK(rk_kernel_receive(k, &r, sizeof r, NULL, SECONDS(10)));
    CHECK_OK(rk_kernel_destroy(k));
    /* Ours is back once no worker runs. */
    CHECK_EQ(sigaction(SIGSEGV, NULL, &seen), 0);
    CHECK((seen.sa_flags & SA_SIGINFO) && seen.sa_sigaction == own_segv_handler);
    signal(SIGSEGV, SIG_DFL);
}

static void check_default_handlers(void) {
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
    for (int i = 0; i < 4; i++) {
        struct sigaction sa;
        CHECK_EQ(sigaction(sigs[i], NULL, &sa), 0);
        CHECK(!(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == SIG_DFL);
    }
}

int main(void) {
    rk_runtime *rt = test_cpu_runtime();
    check_default_handlers();
    run(rt, RK_MODE_PERSISTENT, 0, "SIGSEGV");
    check_default_handlers(); /* put back once no kernel runs handlers */
    run(rt, RK_MODE_PERSISTENT, 1, "SIGFPE");
    run(rt, RK_MODE_TRADITIONAL, 0, "SIGSEGV");
    run(rt, RK_MODE_TRADITIONAL, 1, "SIGFPE");
    check_default_handlers();
    test_foreign_fault_is_passed_on(rt);
    check_default_handlers();
    CHECK_OK(rk_runtime_destroy(rt));
    printf("kernel crash: ok\n");
    return 0;
}
#endif
