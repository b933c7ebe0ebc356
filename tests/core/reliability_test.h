/* Shared by the hang, timeout and destroy-order tests: a clock, a thread
 * count, handlers that take long or never return, and bounds loose enough
 * for a loaded two-core machine and for sanitizer builds. */
#ifndef RK_RELIABILITY_TEST_H
#define RK_RELIABILITY_TEST_H

#include <dirent.h>
#include <stdlib.h>

#include "kernel_test.h"

/* Scheduling noise allowed on top of a bound: sanitizer builds run 5-20x
 * slower, and the CI machine has two cores. */
#ifdef RK_TEST_SANITIZED
#define NOISE_S 20.0
#else
#define NOISE_S 5.0
#endif

/* The watchdog limit the tests set (RK_CPU_WATCHDOG_MS). */
#define WATCHDOG_MS 300u

/* A request with this value makes the handlers below never return. */
#define POISON 0xB10Cu

static inline double seconds_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Threads of this process, from /proc/self/task. */
static inline int thread_count(void) {
    DIR *d = opendir("/proc/self/task");
    CHECK(d != NULL);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n;
}

/* Waits (up to NOISE_S) for the thread count to come back to want: a
 * cancelled or joined thread may take a moment to leave the list. */
static inline int thread_count_settled(int want) {
    double until = seconds_now() + NOISE_S;
    int n;
    while ((n = thread_count()) != want && seconds_now() < until) test_sleep_ms(10);
    return n;
}

/* Plain computation that never returns on POISON (as a stuck GPU handler
 * would), test_handler otherwise. */
static inline int hanging_handler(const void *request, void *reply, void *state) {
    const test_request *q = request;
    if (q->value == POISON) {
        volatile unsigned long spin = 0;
        for (;;) spin++;
    }
    return test_handler(request, reply, state);
}

/* Busy for about q->salt milliseconds, then test_handler. */
static inline int slow_handler(const void *request, void *reply, void *state) {
    const test_request *q = request;
    double until = seconds_now() + q->salt / 1000.0;
    while (seconds_now() < until) {
    }
    return test_handler(request, reply, state);
}

static inline void set_test_watchdog(unsigned ms) {
    char text[32];
    snprintf(text, sizeof text, "%u", ms);
    CHECK(setenv("RK_CPU_WATCHDOG_MS", text, 1) == 0);
}

/* Starts the context's own threads (pool, streams) with one round trip, so
 * that a later thread count sees only the kernel's. */
static inline void warm_up_context(rk_runtime *rt) {
    rk_kernel_desc d = test_desc(RK_MODE_TRADITIONAL, 4);
    rk_kernel *warm;
    CHECK_OK(rk_kernel_launch(rt, &d, &warm));
    CHECK_OK(rk_kernel_activate(warm));
    test_request q = test_make_request(0);
    test_reply p;
    CHECK_OK(rk_kernel_send(warm, &q, sizeof q, RK_WAIT_FOREVER, NULL));
    CHECK_OK(rk_kernel_receive(warm, &p, sizeof p, NULL, SECONDS(30)));
    CHECK_OK(rk_kernel_destroy(warm));
}

#endif
