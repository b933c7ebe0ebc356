/* Many clients per kernel on the CPU backend: 16 threads calling one kernel
 * with every reply checked against its caller's request, asynchronous
 * handles waited out of order, timeouts whose late replies are discarded
 * or kept, concurrent raw senders refused, raw receive refused once calls
 * are in use, calls racing terminate, and the latency statistics. */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "kernel_test.h"

enum { THREADS = 16 };

#ifdef RK_TEST_SANITIZED
enum { CALLS_PER_THREAD = 300 };
#else
enum { CALLS_PER_THREAD = 2000 };
#endif

/* Values unique per thread and call, so a misrouted reply cannot pass. */
static test_request request_for(unsigned thread, unsigned i) {
    test_request q = {.value = ((uint64_t)(thread + 1) << 32) | i, .salt = thread * 7u + i % 5u, .fail_with = 0};
    return q;
}

static rk_kernel *launch(rk_runtime *rt, rk_exec_mode mode, uint32_t capacity, bool activate) {
    rk_kernel_desc d = test_desc(mode, capacity);
    rk_kernel *k = NULL;
    CHECK_OK(rk_kernel_launch(rt, &d, &k));
    if (activate) CHECK_OK(rk_kernel_activate(k));
    return k;
}

/* ---- 16 threads, blocking calls ------------------------------------------------- */

typedef struct caller {
    rk_kernel *k;
    unsigned thread, calls;
    uint64_t last_id;
} caller;

static void *call_many(void *arg) {
    caller *c = arg;
    for (unsigned i = 0; i < c->calls; i++) {
        test_request q = request_for(c->thread, i);
        test_reply r;
        rk_reply_info info;
        CHECK_OK(rk_kernel_call(c->k, &q, sizeof q, &r, sizeof r, &info, SECONDS(30)));
        CHECK_U64_EQ(r.mixed, test_expected_mixed(q.value, q.salt));
        CHECK_EQ(info.status, 0);
        CHECK_GT(info.id, c->last_id); /* one thread's calls are accepted in its order */
        c->last_id = info.id;
    }
    return NULL;
}

static void test_many_callers(rk_runtime *rt, rk_exec_mode mode, unsigned calls) {
    rk_kernel *k = launch(rt, mode, 64, true);
    pthread_t threads[THREADS];
    caller callers[THREADS];
    for (unsigned t = 0; t < THREADS; t++) {
        callers[t] = (caller){.k = k, .thread = t, .calls = calls};
        CHECK_EQ(pthread_create(&threads[t], NULL, call_many, &callers[t]), 0);
    }
    for (unsigned t = 0; t < THREADS; t++) CHECK_EQ(pthread_join(threads[t], NULL), 0);
    rk_kernel_stats st = test_stats(k);
    CHECK_U64_EQ(st.messages_sent, (uint64_t)THREADS * calls);
    CHECK_U64_EQ(st.replies_received, (uint64_t)THREADS * calls);
    CHECK_U64_EQ(st.replies_discarded, 0);
    /* One in 16 is sampled. */
    CHECK_GE(st.latency_samples, (uint64_t)THREADS * calls / 16 - 1);
    CHECK_GT(st.latency_p50_ns, 0);
    CHECK_LE(st.latency_p50_ns, st.latency_p99_ns);
    CHECK_LE(st.latency_p99_ns, st.latency_max_ns);
    CHECK_OK(rk_kernel_terminate(k, SECONDS(10)));
    CHECK_OK(rk_kernel_destroy(k));
}

/* ---- asynchronous handles ------------------------------------------------------------ */

static void test_async_out_of_order(rk_runtime *rt) {
    enum { N = 40 };
    rk_kernel *k = launch(rt, RK_MODE_PERSISTENT, 64, true);
    rk_call *calls[N];
    for (unsigned i = 0; i < N; i++) {
        test_request q = request_for(0, i);
        CHECK_OK(rk_kernel_submit(k, &q, sizeof q, SECONDS(5), &calls[i]));
        CHECK_U64_EQ(rk_call_id(calls[i]), i + 1);
    }
    /* Last first, then the odd ones, then the even ones. */
    unsigned order[N], n = 0;
    order[n++] = N - 1;
    for (unsigned i = 1; i < N - 1; i += 2) order[n++] = i;
    for (unsigned i = 0; i < N - 1; i += 2) order[n++] = i;
    CHECK_EQ(n, N);
    for (unsigned j = 0; j < N; j++) {
        unsigned i = order[j];
        test_request q = request_for(0, i);
        test_reply r;
        rk_reply_info info;
        CHECK_OK(rk_call_wait(calls[i], &r, sizeof r, &info, SECONDS(10)));
        CHECK_U64_EQ(info.id, i + 1);
        CHECK_U64_EQ(r.mixed, test_expected_mixed(q.value, q.salt));
        /* The reply stays in the handle: waiting again gives it again. */
        memset(&r, 0, sizeof r);
        CHECK_OK(rk_call_wait(calls[i], &r, sizeof r, NULL, RK_NO_WAIT));
        CHECK_U64_EQ(r.mixed, test_expected_mixed(q.value, q.salt));
        CHECK_OK(rk_call_release(calls[i]));
    }
    /* Bad use is refused, not fatal. */
    test_reply r;
    CHECK_STATUS(rk_call_wait(NULL, &r, sizeof r, NULL, 0), RK_NULL_ARGUMENT);
    CHECK_STATUS(rk_call_release(NULL), RK_NULL_ARGUMENT);
    rk_call *call = NULL;
    test_request q = request_for(0, 99);
    CHECK_OK(rk_kernel_submit(k, &q, sizeof q, SECONDS(5), &call));
    CHECK_STATUS(rk_call_wait(call, &r, sizeof r - 1, NULL, SECONDS(5)), RK_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(rk_last_error(), "smaller than kernel 'test' reply_size");
    CHECK_OK(rk_call_wait(call, &r, sizeof r, NULL, SECONDS(5)));
    CHECK_OK(rk_call_release(call));
    CHECK_OK(rk_kernel_destroy(k));
}

/* ---- timeouts -------------------------------------------------------------------------- */

static void test_timeouts(rk_runtime *rt) {
    rk_kernel *k = launch(rt, RK_MODE_PERSISTENT, 64, false); /* inactive: nothing is answered yet */
    test_request q1 = request_for(1, 1), q2 = request_for(2, 2), q3 = request_for(3, 3);
    test_reply r;
    rk_reply_info info;
    /* A blocking call that times out: its late reply is discarded. */
    CHECK_STATUS(rk_kernel_call(k, &q1, sizeof q1, &r, sizeof r, &info, MS(20)), RK_TIMEOUT);
    CHECK_STR_CONTAINS(rk_last_error(), "no reply to request 1");
    /* A handle whose wait times out keeps waiting for its reply. */
    rk_call *call = NULL;
    CHECK_OK(rk_kernel_submit(k, &q2, sizeof q2, SECONDS(1), &call));
    CHECK_STATUS(rk_call_wait(call, &r, sizeof r, NULL, MS(20)), RK_TIMEOUT);
    CHECK_STATUS(rk_call_wait(call, &r, sizeof r, NULL, RK_NO_WAIT), RK_WOULD_BLOCK);
    CHECK_OK(rk_kernel_activate(k));
    CHECK_OK(rk_call_wait(call, &r, sizeof r, &info, SECONDS(10)));
    CHECK_U64_EQ(info.id, 2);
    CHECK_U64_EQ(r.mixed, test_expected_mixed(q2.value, q2.salt));
    CHECK_OK(rk_call_release(call));
    /* The next call gets its own reply, not the late one. */
    CHECK_OK(rk_kernel_call(k, &q3, sizeof q3, &r, sizeof r, &info, SECONDS(10)));
    CHECK_U64_EQ(info.id, 3);
    CHECK_U64_EQ(r.mixed, test_expected_mixed(q3.value, q3.salt));
    rk_kernel_stats st = test_stats(k);
    CHECK_U64_EQ(st.replies_discarded, 1); /* request 1's */
    CHECK_U64_EQ(st.messages_processed, 3);
    CHECK_OK(rk_kernel_destroy(k));
}

/* ---- raw senders at once; raw receive beside calls ---------------------------------------- */

typedef struct blocked_sender {
    rk_kernel *k;
    rk_status status;
    _Atomic bool inside;
} blocked_sender;

static void *send_into_full_queue(void *arg) {
    blocked_sender *b = arg;
    test_request q = request_for(0, 0);
    atomic_store(&b->inside, true);
    b->status = rk_kernel_send(b->k, &q, sizeof q, MS(400), NULL); /* the queue is full: waits */
    return NULL;
}

static void test_concurrent_raw_senders(rk_runtime *rt) {
    rk_kernel *k = launch(rt, RK_MODE_PERSISTENT, 4, false);
    for (unsigned i = 0; i < 4; i++) {
        test_request q = request_for(0, i);
        CHECK_OK(rk_kernel_send(k, &q, sizeof q, RK_NO_WAIT, NULL));
    }
    blocked_sender b = {.k = k};
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, send_into_full_queue, &b), 0);
    while (!atomic_load(&b.inside)) test_sleep_ms(1);
    test_sleep_ms(100); /* well inside its 400 ms wait */
    test_request q = request_for(1, 0);
    CHECK_STATUS(rk_kernel_send(k, &q, sizeof q, RK_NO_WAIT, NULL), RK_BAD_STATE);
    CHECK_STR_CONTAINS(rk_last_error(), "another thread is sending to kernel 'test'");
    size_t sent = 9;
    CHECK_STATUS(rk_kernel_send_batch(k, &q, sizeof q, 1, RK_NO_WAIT, &sent, NULL), RK_BAD_STATE);
    CHECK_EQ(sent, 0);
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK_EQ(b.status, RK_TIMEOUT);
    CHECK_U64_EQ(test_stats(k).messages_sent, 4); /* nothing slipped in */
    CHECK_OK(rk_kernel_destroy(k));
}

static void test_raw_receive_refused(rk_runtime *rt) {
    rk_kernel *k = launch(rt, RK_MODE_PERSISTENT, 64, true);
    test_request q = request_for(0, 1);
    test_reply r;
    CHECK_OK(rk_kernel_call(k, &q, sizeof q, &r, sizeof r, NULL, SECONDS(10)));
    CHECK_STATUS(rk_kernel_receive(k, &r, sizeof r, NULL, RK_NO_WAIT), RK_BAD_STATE);
    CHECK_STR_CONTAINS(rk_last_error(), "serves calls");
    size_t got = 0;
    CHECK_STATUS(rk_kernel_receive_batch(k, &r, sizeof r, NULL, 1, RK_NO_WAIT, &got), RK_BAD_STATE);
    /* A raw send is fire-and-forget now: its reply never reaches a caller. */
    CHECK_OK(rk_kernel_send(k, &q, sizeof q, SECONDS(1), NULL));
    test_request q2 = request_for(0, 2);
    rk_reply_info info;
    CHECK_OK(rk_kernel_call(k, &q2, sizeof q2, &r, sizeof r, &info, SECONDS(10)));
    CHECK_U64_EQ(info.id, 3);
    CHECK_U64_EQ(r.mixed, test_expected_mixed(q2.value, q2.salt));
    CHECK_U64_EQ(test_stats(k).replies_discarded, 1);
    CHECK_OK(rk_kernel_destroy(k));
}

/* ---- one waiter per handle --------------------------------------------------------------- */

typedef struct waiter {
    rk_call *call;
    rk_status status;
    _Atomic bool inside;
} waiter;

static void *wait_long(void *arg) {
    waiter *w = arg;
    test_reply r;
    atomic_store(&w->inside, true);
    w->status = rk_call_wait(w->call, &r, sizeof r, NULL, MS(400));
    return NULL;
}

static void test_second_waiter_refused(rk_runtime *rt) {
    rk_kernel *k = launch(rt, RK_MODE_PERSISTENT, 64, false);
    test_request q = request_for(0, 1);
    waiter w = {0};
    CHECK_OK(rk_kernel_submit(k, &q, sizeof q, SECONDS(1), &w.call));
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, wait_long, &w), 0);
    while (!atomic_load(&w.inside)) test_sleep_ms(1);
    test_sleep_ms(100);
    test_reply r;
    CHECK_STATUS(rk_call_wait(w.call, &r, sizeof r, NULL, MS(1)), RK_BAD_STATE);
    CHECK_STR_CONTAINS(rk_last_error(), "another thread is waiting on call 1");
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK_EQ(w.status, RK_TIMEOUT);
    CHECK_OK(rk_call_release(w.call));
    CHECK_OK(rk_kernel_destroy(k)); /* the pending call's handle is freed here */
}

/* ---- calls racing terminate --------------------------------------------------------------- */

typedef struct racer {
    rk_kernel *k;
    unsigned thread;
    unsigned answered, refused;
} racer;

static void *call_until_terminated(void *arg) {
    racer *c = arg;
    for (unsigned i = 0;; i++) {
        test_request q = request_for(c->thread, i);
        test_reply r;
        /* Half blocking calls, half handles. */
        rk_status s;
        if (i % 2) {
            s = rk_kernel_call(c->k, &q, sizeof q, &r, sizeof r, NULL, SECONDS(30));
        } else {
            rk_call *call = NULL;
            s = rk_kernel_submit(c->k, &q, sizeof q, SECONDS(30), &call);
            if (s == RK_OK) {
                CHECK_OK(rk_call_wait(call, &r, sizeof r, NULL, SECONDS(30)));
                CHECK_OK(rk_call_release(call));
            }
        }
        if (s == RK_TERMINATED) {
            c->refused++;
            return NULL;
        }
        CHECK_OK(s); /* accepted means answered: never a timeout */
        CHECK_U64_EQ(r.mixed, test_expected_mixed(q.value, q.salt));
        c->answered++;
    }
}

static void test_calls_across_terminate(rk_runtime *rt, rk_exec_mode mode) {
    enum { RACERS = 8 };
    rk_kernel *k = launch(rt, mode, 16, true);
    /* Handles submitted before terminate and waited after it. */
    rk_call *early[4];
    for (unsigned i = 0; i < 4; i++) {
        test_request q = request_for(100, i);
        CHECK_OK(rk_kernel_submit(k, &q, sizeof q, SECONDS(5), &early[i]));
    }
    pthread_t threads[RACERS];
    racer racers[RACERS];
    for (unsigned t = 0; t < RACERS; t++) {
        racers[t] = (racer){.k = k, .thread = t};
        CHECK_EQ(pthread_create(&threads[t], NULL, call_until_terminated, &racers[t]), 0);
    }
    test_sleep_ms(50);
    CHECK_OK(rk_kernel_terminate(k, SECONDS(30)));
    uint64_t answered = 0;
    for (unsigned t = 0; t < RACERS; t++) {
        CHECK_EQ(pthread_join(threads[t], NULL), 0);
        CHECK_EQ(racers[t].refused, 1);
        answered += racers[t].answered;
    }
    for (unsigned i = 0; i < 4; i++) {
        test_request q = request_for(100, i);
        test_reply r;
        CHECK_OK(rk_call_wait(early[i], &r, sizeof r, NULL, SECONDS(5)));
        CHECK_U64_EQ(r.mixed, test_expected_mixed(q.value, q.salt));
        CHECK_OK(rk_call_release(early[i]));
    }
    rk_kernel_stats st = test_stats(k);
    CHECK_EQ(st.state, RK_KERNEL_TERMINATED);
    CHECK_U64_EQ(st.messages_sent, answered + 4);
    CHECK_U64_EQ(st.messages_processed, answered + 4);
    CHECK_U64_EQ(st.replies_discarded, 0);
    test_request q = request_for(0, 0);
    test_reply r;
    CHECK_STATUS(rk_kernel_call(k, &q, sizeof q, &r, sizeof r, NULL, SECONDS(1)), RK_TERMINATED);
    CHECK_OK(rk_kernel_destroy(k));
}

/* The raw path is sampled too: ids 1, 17, 33, ... */
static void test_raw_latency_sampled(rk_runtime *rt) {
    rk_kernel *k = launch(rt, RK_MODE_PERSISTENT, 64, true);
    CHECK_U64_EQ(test_stats(k).latency_samples, 0);
    CHECK_U64_EQ(test_stats(k).latency_p50_ns, 0);
    for (unsigned i = 0; i < 40; i++) {
        test_request q = request_for(0, i);
        test_reply r;
        CHECK_OK(rk_kernel_send(k, &q, sizeof q, SECONDS(1), NULL));
        CHECK_OK(rk_kernel_receive(k, &r, sizeof r, NULL, SECONDS(10)));
    }
    test_request batch[40];
    for (unsigned i = 0; i < 40; i++) batch[i] = request_for(1, i);
    size_t sent = 0, got = 0;
    CHECK_OK(rk_kernel_send_batch(k, batch, sizeof batch[0], 40, SECONDS(1), &sent, NULL));
    test_reply replies[40];
    while (got < 40) {
        size_t n = 0;
        CHECK_OK(rk_kernel_receive_batch(k, replies, sizeof replies[0], NULL, 40 - got, SECONDS(10), &n));
        got += n;
    }
    rk_kernel_stats st = test_stats(k);
    CHECK_U64_EQ(st.latency_samples, 5); /* 1, 17, 33, then 49, 65 in the batch of 41 .. 80 */
    CHECK_GT(st.latency_p50_ns, 0);
    CHECK_LE(st.latency_p99_ns, st.latency_max_ns);
    CHECK_OK(rk_kernel_destroy(k));
}

/* ---- the cores warning ------------------------------------------------------------------ */

static _Atomic unsigned warnings;
static char last_warning[512];

static void capture_log(rk_log_level level, const char *line, void *user) {
    (void)user;
    if (level != RK_LOG_WARN || !strstr(line, "share")) return;
    if (atomic_fetch_add(&warnings, 1) == 0) snprintf(last_warning, sizeof last_warning, "%s", line);
}

static void test_cores_warning(rk_runtime *rt) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores >= 64) return; /* workers + 1 cannot exceed them */
    rk_set_log_callback(capture_log, NULL);
    rk_kernel_desc d = test_desc(RK_MODE_TRADITIONAL, 64);
    rk_kernel *k = NULL;
    CHECK_OK(rk_kernel_launch(rt, &d, &k)); /* no polling thread: no warning */
    CHECK_OK(rk_kernel_destroy(k));
    CHECK_EQ(atomic_load(&warnings), 0);
    d = test_desc(RK_MODE_PERSISTENT, 64);
    d.workers = (uint32_t)cores; /* plus the launching thread: one more than the cores */
    CHECK_OK(rk_kernel_launch(rt, &d, &k));
    CHECK_EQ(atomic_load(&warnings), 1);
    CHECK_STR_CONTAINS(last_warning, "persistent worker thread");
    CHECK_STR_CONTAINS(last_warning, "1 calling thread share");
    CHECK_OK(rk_kernel_activate(k));
    test_request q = request_for(0, 0);
    test_reply r;
    CHECK_OK(rk_kernel_call(k, &q, sizeof q, &r, sizeof r, NULL, SECONDS(10)));
    CHECK_OK(rk_kernel_destroy(k));
    CHECK_EQ(atomic_load(&warnings), 1); /* once per kernel */
    rk_set_log_callback(NULL, NULL);
}

static void test_ordered_needs_one_worker(rk_runtime *rt) {
    rk_kernel_desc d = test_desc(RK_MODE_PERSISTENT, 64);
    d.ordered = true;
    d.workers = 2;
    rk_kernel *k = NULL;
    CHECK_STATUS(rk_kernel_launch(rt, &d, &k), RK_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(rk_last_error(), "ordered kernels run one handler at a time, but workers is 2");
}

int main(void) {
    rk_runtime *rt = test_cpu_runtime();
    test_many_callers(rt, RK_MODE_PERSISTENT, CALLS_PER_THREAD);
    test_many_callers(rt, RK_MODE_TRADITIONAL, CALLS_PER_THREAD / 4);
    test_async_out_of_order(rt);
    test_timeouts(rt);
    test_concurrent_raw_senders(rt);
    test_raw_receive_refused(rt);
    test_second_waiter_refused(rt);
    test_calls_across_terminate(rt, RK_MODE_PERSISTENT);
    test_calls_across_terminate(rt, RK_MODE_TRADITIONAL);
    test_raw_latency_sampled(rt);
    test_cores_warning(rt);
    test_ordered_needs_one_worker(rt);
    CHECK_OK(rk_runtime_destroy(rt));
    return 0;
}
