/* Every bad input to the ring-kernel API gets its exact status and a
 * message naming the problem, and nothing already queued is lost. */
#include <stdlib.h>

#include "kernel_test.h"

static void expect_launch(rk_runtime *rt, const rk_kernel_desc *d, rk_status want, const char *words) {
    rk_kernel *k = (rk_kernel *)0x1;
    CHECK_STATUS(rk_kernel_launch(rt, d, &k), want);
    CHECK(k == NULL);
    CHECK_STR_CONTAINS(rk_last_error(), words);
}

static void test_launch_refusals(rk_runtime *rt) {
    rk_kernel_desc good = test_desc(RK_MODE_PERSISTENT, 16);
    rk_kernel *k = NULL;
    CHECK_STATUS(rk_kernel_launch(NULL, &good, &k), RK_NULL_ARGUMENT);
    CHECK_STR_CONTAINS(rk_last_error(), "rt is NULL");
    CHECK_STATUS(rk_kernel_launch(rt, NULL, &k), RK_NULL_ARGUMENT);
    CHECK_STR_CONTAINS(rk_last_error(), "desc is NULL");
    CHECK_STATUS(rk_kernel_launch(rt, &good, NULL), RK_NULL_ARGUMENT);

    rk_kernel_desc d = good;
    d.queue_capacity = 0;
    expect_launch(rt, &d, RK_BAD_CAPACITY, "queue_capacity is 0");
    d.queue_capacity = 3;
    expect_launch(rt, &d, RK_BAD_CAPACITY, "power of two");
    d.queue_capacity = 1000;
    expect_launch(rt, &d, RK_BAD_CAPACITY, "queue_capacity is 1000");

    d = good;
    d.message_size = 0;
    expect_launch(rt, &d, RK_INVALID_ARGUMENT, "message_size is 0");
    d.message_size = 65537;
    expect_launch(rt, &d, RK_INVALID_ARGUMENT, "message_size is 65537");
    d = good;
    d.reply_size = 65537;
    expect_launch(rt, &d, RK_INVALID_ARGUMENT, "reply_size is 65537");

    d = good;
    d.handler_source = test_handler_source;
    d.handler_name = "mix";
    expect_launch(rt, &d, RK_INVALID_ARGUMENT, "more than one of handler_source, handler_file and handler");
    d.handler = NULL;
    d.handler_source = NULL;
    expect_launch(rt, &d, RK_INVALID_ARGUMENT, "no handler");
    d.handler_source = test_handler_source;
    d.handler_name = NULL;
    expect_launch(rt, &d, RK_NULL_ARGUMENT, "handler_name is NULL");
    d.handler_name = "no_such_handler";
    expect_launch(rt, &d, RK_NOT_FOUND, "no_such_handler");
    d.handler_source = "RK_HANDLER int broken(const int *a, int *b, void *s) { return undeclared_thing; }\n";
    d.handler_name = "broken";
    expect_launch(rt, &d, RK_COMPILE_FAILED, "undeclared_thing");

    d = good;
    d.mode = (rk_exec_mode)42;
    expect_launch(rt, &d, RK_INVALID_ARGUMENT, "unknown execution mode 42");
    d.mode = (rk_exec_mode)-1;
    expect_launch(rt, &d, RK_INVALID_ARGUMENT, "unknown execution mode");
    d.mode = RK_MODE_GRAPH;
    expect_launch(rt, &d, RK_UNSUPPORTED, "graph");
    d = good;
    d.workers = 1000;
    expect_launch(rt, &d, RK_INVALID_ARGUMENT, "1000 workers");
    d.mode = RK_MODE_TRADITIONAL;
    d.workers = 2;
    expect_launch(rt, &d, RK_INVALID_ARGUMENT, "workers");
}

static void test_null_kernel(void) {
    test_request q = {0};
    test_reply r;
    rk_kernel_stats st;
    size_t n = 7;
    CHECK_STATUS(rk_kernel_activate(NULL), RK_NULL_ARGUMENT);
    CHECK_STATUS(rk_kernel_deactivate(NULL), RK_NULL_ARGUMENT);
    CHECK_STATUS(rk_kernel_terminate(NULL, 0), RK_NULL_ARGUMENT);
    CHECK_STATUS(rk_kernel_destroy(NULL), RK_NULL_ARGUMENT);
    CHECK_STATUS(rk_kernel_send(NULL, &q, sizeof q, 0, NULL), RK_NULL_ARGUMENT);
    CHECK_STATUS(rk_kernel_send_batch(NULL, &q, sizeof q, 1, 0, &n, NULL), RK_NULL_ARGUMENT);
    CHECK_EQ(n, 0);
    CHECK_STATUS(rk_kernel_receive(NULL, &r, sizeof r, NULL, 0), RK_NULL_ARGUMENT);
    CHECK_STATUS(rk_kernel_receive_batch(NULL, &r, sizeof r, NULL, 1, 0, &n), RK_NULL_ARGUMENT);
    CHECK_STATUS(rk_kernel_stats_get(NULL, &st), RK_NULL_ARGUMENT);
    CHECK_EQ(rk_kernel_get_state(NULL), RK_KERNEL_FAILED);
    CHECK_STR_CONTAINS(rk_last_error(), "k is NULL");
}

/* Bad calls on a kernel holding queued messages leave them all there. */
static void test_bad_calls_lose_nothing(rk_runtime *rt, rk_exec_mode mode) {
    enum { CAP = 16 };
    rk_kernel_desc d = test_desc(mode, CAP);
    rk_kernel *k;
    CHECK_OK(rk_kernel_launch(rt, &d, &k));
    for (uint64_t i = 0; i < 10; i++) {
        test_request q = test_make_request(i);
        CHECK_OK(rk_kernel_send(k, &q, sizeof q, RK_NO_WAIT, NULL));
    }
    unsigned char big[sizeof(test_request) + 1] = {0};
    CHECK_STATUS(rk_kernel_send(k, big, sizeof big, RK_NO_WAIT, NULL), RK_MESSAGE_TOO_LARGE);
    CHECK_STR_CONTAINS(rk_last_error(), "larger than kernel 'test' message_size 16");
    CHECK_STATUS(rk_kernel_send(k, NULL, 4, RK_NO_WAIT, NULL), RK_NULL_ARGUMENT);
    CHECK_STATUS(rk_kernel_send_batch(k, big, 8, 1, RK_NO_WAIT, NULL, NULL), RK_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(rk_last_error(), "stride 8");
    CHECK_STATUS(rk_kernel_send_batch(k, NULL, 16, 1, RK_NO_WAIT, NULL, NULL), RK_NULL_ARGUMENT);
    size_t n = 99;
    uint64_t first = 0;
    CHECK_OK(rk_kernel_send_batch(k, NULL, 16, 0, RK_NO_WAIT, &n, &first)); /* nothing to do */
    CHECK_EQ(n, 0);
    CHECK_U64_EQ(first, 11);

    /* Fill the input queue; the next send cannot get in. */
    test_request more[CAP];
    for (int i = 0; i < CAP; i++) more[i] = test_make_request(10u + (uint64_t)i);
    CHECK_STATUS(rk_kernel_send_batch(k, more, sizeof more[0], CAP, RK_NO_WAIT, &n, &first), RK_WOULD_BLOCK);
    CHECK_EQ(n, CAP - 10);
    CHECK_U64_EQ(first, 11);
    CHECK_STATUS(rk_kernel_send(k, &more[0], sizeof more[0], RK_NO_WAIT, NULL), RK_WOULD_BLOCK);
    CHECK_STR_CONTAINS(rk_last_error(), "input queue is full");
    CHECK_STATUS(rk_kernel_send(k, &more[0], sizeof more[0], MS(10), NULL), RK_TIMEOUT);

    test_reply r;
    CHECK_STATUS(rk_kernel_receive(k, &r, sizeof r - 1, NULL, RK_NO_WAIT), RK_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(rk_last_error(), "smaller than kernel 'test' reply_size 16");
    CHECK_STATUS(rk_kernel_receive(k, NULL, sizeof r, NULL, RK_NO_WAIT), RK_NULL_ARGUMENT);
    CHECK_STATUS(rk_kernel_receive_batch(k, &r, 8, NULL, 1, RK_NO_WAIT, &n), RK_INVALID_ARGUMENT);
    CHECK_STATUS(rk_kernel_receive_batch(k, &r, sizeof r, NULL, 1, RK_NO_WAIT, NULL), RK_NULL_ARGUMENT);
    CHECK_OK(rk_kernel_receive_batch(k, &r, sizeof r, NULL, 0, RK_NO_WAIT, &n));
    CHECK_EQ(n, 0);
    CHECK_STATUS(rk_kernel_receive(k, &r, sizeof r, NULL, MS(10)), RK_TIMEOUT); /* inactive: nothing yet */
    CHECK_STR_CONTAINS(rk_last_error(), "no reply");

    rk_kernel_stats st = test_stats(k);
    CHECK_U64_EQ(st.messages_sent, CAP);
    CHECK_EQ(st.input_depth, CAP);

    /* Every accepted message is still there, in order, ids 1..CAP. */
    CHECK_OK(rk_kernel_activate(k));
    for (uint64_t i = 0; i < CAP; i++) {
        rk_reply_info info;
        CHECK_OK(rk_kernel_receive(k, &r, sizeof r, &info, SECONDS(10)));
        test_request q = test_make_request(i);
        CHECK_U64_EQ(info.id, i + 1);
        CHECK_U64_EQ(r.mixed, test_expected_mixed(q.value, q.salt));
    }
    CHECK_STATUS(rk_kernel_receive(k, &r, sizeof r, NULL, MS(5)), RK_TIMEOUT);
    CHECK_OK(rk_kernel_terminate(k, SECONDS(10)));
    st = test_stats(k);
    CHECK_U64_EQ(st.messages_processed, CAP);
    CHECK_U64_EQ(st.replies_received, CAP);
    CHECK_OK(rk_kernel_destroy(k));
}

static void test_names(void) {
    CHECK(strcmp(rk_exec_mode_name(RK_MODE_DEFAULT), "default") == 0);
    CHECK(strcmp(rk_exec_mode_name(RK_MODE_PERSISTENT), "persistent") == 0);
    CHECK(strcmp(rk_exec_mode_name(RK_MODE_TRADITIONAL), "traditional") == 0);
    CHECK(strcmp(rk_exec_mode_name(RK_MODE_GRAPH), "graph") == 0);
    CHECK(strcmp(rk_exec_mode_name((rk_exec_mode)99), "unknown") == 0);
    CHECK(strcmp(rk_kernel_state_name(RK_KERNEL_LAUNCHED), "launched") == 0);
    CHECK(strcmp(rk_kernel_state_name(RK_KERNEL_ACTIVE), "active") == 0);
    CHECK(strcmp(rk_kernel_state_name(RK_KERNEL_TERMINATING), "terminating") == 0);
    CHECK(strcmp(rk_kernel_state_name(RK_KERNEL_TERMINATED), "terminated") == 0);
    CHECK(strcmp(rk_kernel_state_name(RK_KERNEL_FAILED), "failed") == 0);
    CHECK(strcmp(rk_kernel_state_name((rk_kernel_state)0), "unknown") == 0);
}

int main(void) {
    rk_runtime *rt = test_cpu_runtime();
    test_launch_refusals(rt);
    test_null_kernel();
    test_bad_calls_lose_nothing(rt, RK_MODE_PERSISTENT);
    test_bad_calls_lose_nothing(rt, RK_MODE_TRADITIONAL);
    test_names();
    CHECK_OK(rk_runtime_destroy(rt));
    printf("kernel validation: ok\n");
    return 0;
}
