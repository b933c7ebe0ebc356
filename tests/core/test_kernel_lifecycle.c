/* Ring-kernel lifecycle on the CPU backend, both modes: inactive kernels
 * queue without processing, activate/deactivate, terminate with thousands of
 * messages in flight and nobody receiving, a receiver racing terminate,
 * sending after terminate, and the statistics. Terminating a kernel that
 * never ran is checked on every backend by tests/conformance
 * (actor.lifecycle.terminate_inactive). */
#include <pthread.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "kernel_test.h"

static void check_reply(const test_reply *r, const rk_reply_info *info, uint64_t index) {
    test_request q = test_make_request(index);
    CHECK_U64_EQ(info->id, index + 1);
    CHECK_EQ(info->status, 0);
    CHECK_U64_EQ(r->mixed, test_expected_mixed(q.value, q.salt));
}

static void send_range(rk_kernel *k, uint64_t from, uint64_t to) {
    for (uint64_t i = from; i < to; i++) {
        test_request q = test_make_request(i);
        uint64_t id = 0;
        CHECK_OK(rk_kernel_send(k, &q, sizeof q, SECONDS(10), &id));
        CHECK_U64_EQ(id, i + 1);
    }
}

/* Receives to..from in order (one worker keeps order) and checks each. */
static void receive_range(rk_kernel *k, uint64_t from, uint64_t to) {
    for (uint64_t i = from; i < to; i++) {
        test_reply r;
        rk_reply_info info;
        CHECK_OK(rk_kernel_receive(k, &r, sizeof r, &info, SECONDS(10)));
        check_reply(&r, &info, i);
    }
}

static void test_inactive_then_active(rk_runtime *rt, rk_exec_mode mode) {
    rk_kernel_desc d = test_desc(mode, 256);
    rk_kernel *k;
    CHECK_OK(rk_kernel_launch(rt, &d, &k));
    CHECK_EQ(rk_kernel_get_state(k), RK_KERNEL_LAUNCHED);

    /* Launched inactive: messages queue but nothing runs. */
    send_range(k, 0, 100);
    test_sleep_ms(30);
    rk_kernel_stats st = test_stats(k);
    CHECK_EQ(st.state, RK_KERNEL_LAUNCHED);
    CHECK(!st.is_active);
    CHECK_U64_EQ(st.messages_sent, 100);
    CHECK_U64_EQ(st.messages_processed, 0);
    CHECK_EQ(st.input_depth, 100);
    test_reply r;
    CHECK_STATUS(rk_kernel_receive(k, &r, sizeof r, NULL, RK_NO_WAIT), RK_WOULD_BLOCK);
    CHECK_STATUS(rk_kernel_receive(k, &r, sizeof r, NULL, MS(10)), RK_TIMEOUT);

    CHECK_OK(rk_kernel_activate(k));
    CHECK_OK(rk_kernel_activate(k)); /* again: no change */
    CHECK_EQ(rk_kernel_get_state(k), RK_KERNEL_ACTIVE);
    receive_range(k, 0, 100);
    st = test_stats(k);
    CHECK(st.is_active);
    CHECK_U64_EQ(st.messages_processed, 100);
    CHECK_U64_EQ(st.replies_received, 100);

    /* Deactivated: processing stops; what was sent waits. */
    CHECK_OK(rk_kernel_deactivate(k));
    CHECK_EQ(rk_kernel_get_state(k), RK_KERNEL_LAUNCHED);
    send_range(k, 100, 150);
    test_sleep_ms(30);
    st = test_stats(k);
    CHECK_U64_EQ(st.messages_processed, 100);
    CHECK_EQ(st.input_depth, 50);
    CHECK_STATUS(rk_kernel_receive(k, &r, sizeof r, NULL, MS(5)), RK_TIMEOUT);
    CHECK_OK(rk_kernel_activate(k));
    receive_range(k, 100, 150);

    /* The handler state (a running sum) lived through all of it. */
    uint64_t sum = 0;
    for (uint64_t i = 0; i < 150; i++) sum += test_make_request(i).value;
    send_range(k, 150, 151);
    rk_reply_info info;
    CHECK_OK(rk_kernel_receive(k, &r, sizeof r, &info, SECONDS(10)));
    CHECK_U64_EQ(r.running, sum + test_make_request(150).value);

    CHECK_OK(rk_kernel_terminate(k, SECONDS(10)));
    CHECK_EQ(rk_kernel_get_state(k), RK_KERNEL_TERMINATED);
    st = test_stats(k);
    CHECK(st.has_terminated);
    CHECK(st.should_terminate);
    CHECK_U64_EQ(st.messages_sent, 151);
    CHECK_U64_EQ(st.messages_processed, 151);
    CHECK_U64_EQ(st.replies_received, 151);
    CHECK_U64_EQ(st.errors_encountered, 0);
    CHECK_EQ(st.input_depth, 0);
    CHECK_EQ(st.output_depth, 0);
    if (mode == RK_MODE_PERSISTENT) CHECK_U64_EQ(st.launches, 1);
    else CHECK_GE(st.launches, 3); /* one per batch: the 100, the 50 and the last one at least */

    /* After terminate: no sends, no lifecycle changes; receive says so. */
    test_request q = test_make_request(0);
    CHECK_STATUS(rk_kernel_send(k, &q, sizeof q, RK_NO_WAIT, NULL), RK_TERMINATED);
    CHECK_STATUS(rk_kernel_send_batch(k, &q, sizeof q, 1, RK_NO_WAIT, NULL, NULL), RK_TERMINATED);
    CHECK_STATUS(rk_kernel_activate(k), RK_TERMINATED);
    CHECK_STATUS(rk_kernel_deactivate(k), RK_TERMINATED);
    CHECK_STATUS(rk_kernel_receive(k, &r, sizeof r, NULL, SECONDS(10)), RK_TERMINATED);
    CHECK_OK(rk_kernel_terminate(k, SECONDS(1))); /* again: fine */
    CHECK_U64_EQ(test_stats(k).messages_sent, 151);
    CHECK_OK(rk_kernel_destroy(k));
}

/* Terminate with every queue full and nobody receiving: replies move to the
 * held buffer so the drain can finish; every accepted message then has
 * exactly one reply. */
static void test_terminate_in_flight(rk_runtime *rt, rk_exec_mode mode, uint32_t workers) {
    enum { CAP = 1024 };
    rk_kernel_desc d = test_desc(mode, CAP);
    d.workers = workers;
    d.state_size = 0; /* several workers would share it */
    rk_kernel *k;
    CHECK_OK(rk_kernel_launch(rt, &d, &k));
    CHECK_OK(rk_kernel_activate(k));
    /* Input and output queues of each worker full: 2 * CAP per worker, more
     * than any one output queue holds. */
    size_t total = (size_t)2 * CAP * (workers ? workers : 1);
    test_request *q = calloc(total, sizeof *q);
    for (size_t i = 0; i < total; i++) q[i] = test_make_request(i);
    size_t sent = 0;
    uint64_t first = 0;
    CHECK_OK(rk_kernel_send_batch(k, q, sizeof *q, total, SECONDS(10), &sent, &first));
    CHECK_EQ(sent, total);
    CHECK_U64_EQ(first, 1);
    /* The queues are full now: one more does not fit. */
    CHECK_STATUS(rk_kernel_send(k, &q[0], sizeof q[0], MS(20), NULL), RK_TIMEOUT);

    CHECK_OK(rk_kernel_terminate(k, SECONDS(10)));
    rk_kernel_stats st = test_stats(k);
    CHECK_EQ(st.state, RK_KERNEL_TERMINATED);
    CHECK_U64_EQ(st.messages_processed, total);
    CHECK_EQ(st.output_depth, total); /* all held for receive */

    test_reply *r = calloc(total, sizeof *r);
    rk_reply_info *info = calloc(total, sizeof *info);
    unsigned char *seen = calloc(total, 1);
    size_t got = 0;
    while (got < total) {
        size_t n = 0;
        CHECK_OK(rk_kernel_receive_batch(k, r + got, sizeof *r, info + got, 300, SECONDS(10), &n));
        got += n;
    }
    for (size_t i = 0; i < total; i++) {
        CHECK_GE(info[i].id, 1);
        CHECK_LE(info[i].id, total);
        uint64_t index = info[i].id - 1;
        CHECK_EQ(seen[index], 0);
        seen[index] = 1;
        check_reply(&r[i], &info[i], index);
        if (workers <= 1 && i) CHECK_U64_EQ(info[i].id, info[i - 1].id + 1); /* in order */
    }
    size_t n = 0;
    CHECK_STATUS(rk_kernel_receive_batch(k, r, sizeof *r, info, 1, SECONDS(10), &n), RK_TERMINATED);
    CHECK_EQ(n, 0);
    st = test_stats(k);
    CHECK_U64_EQ(st.replies_received, total);
    CHECK_EQ(st.output_depth, 0);
    CHECK_OK(rk_kernel_destroy(k));
    free(q), free(r), free(info), free(seen);
}

/* A receiver thread takes replies while the main thread sends and then
 * terminates: held and queued replies interleave, still each once, in order. */
typedef struct receiver {
    rk_kernel *k;
    uint64_t expected_next; /* one worker: ids arrive in order */
    uint64_t count, bad;
    rk_status end;
} receiver;

static void *receiver_main(void *arg) {
    receiver *rc = arg;
    test_reply r[64];
    rk_reply_info info[64];
    for (;;) {
        size_t n = 0;
        rk_status s = rk_kernel_receive_batch(rc->k, r, sizeof r[0], info, 64, SECONDS(10), &n);
        if (s != RK_OK) {
            rc->end = s;
            return NULL;
        }
        for (size_t i = 0; i < n; i++) {
            test_request q = test_make_request(info[i].id - 1);
            rc->bad += info[i].id != rc->expected_next || r[i].mixed != test_expected_mixed(q.value, q.salt);
            rc->expected_next = info[i].id + 1;
        }
        rc->count += n;
    }
}

static void test_receiver_races_terminate(rk_runtime *rt, rk_exec_mode mode) {
    rk_kernel_desc d = test_desc(mode, 64);
    rk_kernel *k;
    CHECK_OK(rk_kernel_launch(rt, &d, &k));
    CHECK_OK(rk_kernel_activate(k));
    receiver rc = {.k = k, .expected_next = 1};
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, receiver_main, &rc), 0);
#ifdef RK_TEST_SANITIZED
    const uint64_t total = 3000;
#else
    const uint64_t total = 30000;
#endif
    for (uint64_t i = 0; i < total; i += 100) {
        test_request q[100];
        for (int j = 0; j < 100; j++) q[j] = test_make_request(i + (uint64_t)j);
        size_t sent = 0;
        CHECK_OK(rk_kernel_send_batch(k, q, sizeof q[0], 100, SECONDS(10), &sent, NULL));
    }
    CHECK_OK(rk_kernel_terminate(k, SECONDS(10)));
    pthread_join(t, NULL);
    CHECK_STATUS(rc.end, RK_TERMINATED);
    CHECK_U64_EQ(rc.bad, 0);
    CHECK_U64_EQ(rc.count, total);
    rk_kernel_stats st = test_stats(k);
    CHECK_U64_EQ(st.replies_received, total);
    CHECK_U64_EQ(st.messages_processed, total);
    CHECK_OK(rk_kernel_destroy(k));
}

/* Destroy without terminate, replies unread: nothing hangs or leaks. */
static void test_destroy_running(rk_runtime *rt, rk_exec_mode mode) {
    rk_kernel_desc d = test_desc(mode, 64);
    rk_kernel *k;
    CHECK_OK(rk_kernel_launch(rt, &d, &k));
    CHECK_OK(rk_kernel_activate(k));
    send_range(k, 0, 128);
    CHECK_OK(rk_kernel_destroy(k));
}

static double process_cpu_seconds(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec * 1e-6 + (double)u.ru_stime.tv_sec +
           (double)u.ru_stime.tv_usec * 1e-6;
}

/* An idle kernel, and a host blocked in receive on it, sleep rather than
 * spin: over 400 ms of waiting the process uses a small fraction of one
 * core. (CPU time, not wall time, so a loaded machine does not matter.) */
static void test_idle_does_not_spin(rk_runtime *rt) {
    rk_kernel_desc d = test_desc(RK_MODE_PERSISTENT, 64);
    d.workers = 2;
    d.state_size = 0;
    rk_kernel *k;
    CHECK_OK(rk_kernel_launch(rt, &d, &k));
    CHECK_OK(rk_kernel_activate(k));
    send_range(k, 0, 1);
    receive_range(k, 0, 1);
    test_sleep_ms(50); /* past the spin and yield phases */
    double before = process_cpu_seconds();
    test_reply r;
    CHECK_STATUS(rk_kernel_receive(k, &r, sizeof r, NULL, MS(400)), RK_TIMEOUT);
    double used = process_cpu_seconds() - before;
    fprintf(stderr, "idle: %.1f ms of CPU time in 400 ms of waiting\n", used * 1e3);
    CHECK_LT(used * 1e3, 100);
    /* It still wakes up at once for new work. */
    send_range(k, 1, 2);
    receive_range(k, 1, 2);
    CHECK_OK(rk_kernel_destroy(k));
}

int main(void) {
    rk_runtime *rt = test_cpu_runtime();
    static const rk_exec_mode modes[] = {RK_MODE_PERSISTENT, RK_MODE_TRADITIONAL};
    for (int m = 0; m < 2; m++) {
        rk_exec_mode mode = modes[m];
        fprintf(stderr, "mode %s\n", rk_exec_mode_name(mode));
        test_inactive_then_active(rt, mode);
        test_terminate_in_flight(rt, mode, 1);
        if (mode == RK_MODE_PERSISTENT) test_terminate_in_flight(rt, mode, 3);
        test_receiver_races_terminate(rt, mode);
        test_destroy_running(rt, mode);
    }
    test_idle_does_not_spin(rt);
    CHECK_OK(rk_runtime_destroy(rt));
    printf("kernel lifecycle: ok\n");
    return 0;
}
