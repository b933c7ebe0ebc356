/* Actor layer, bad input: every bad call to the ring-kernel API gets its
 * exact status and a message naming the problem, on every backend, and
 * nothing already queued is lost. */
#include <string.h>

#include "conformance.h"

static void expect_launch(rk_runtime *rt, const rk_kernel_desc *d, rk_status want, const char *words) {
    rk_kernel *k = (rk_kernel *)0x1;
    CHECK_STATUS(rk_kernel_launch(rt, d, &k), want);
    CHECK(k == NULL);
    CHECK_STR_CONTAINS(rk_last_error(), words);
}

static int host_handler(const void *request, void *reply, void *state) {
    (void)request, (void)reply, (void)state;
    return 0;
}

/* rk_kernel_launch's refusals, each with the words that say why. */
static void launch_messages(const conf_env *env) {
    rk_runtime *rt = conf_runtime(env);
    rk_kernel_desc good = conf_kernel_desc("mix", 16, RK_MODE_DEFAULT), d;
    rk_kernel *k = NULL;
    CHECK_STATUS(rk_kernel_launch(NULL, &good, &k), RK_NULL_ARGUMENT);
    CHECK_STR_CONTAINS(rk_last_error(), "rt is NULL");
    CHECK_STATUS(rk_kernel_launch(rt, NULL, &k), RK_NULL_ARGUMENT);
    CHECK_STR_CONTAINS(rk_last_error(), "desc is NULL");
    d = good, d.queue_capacity = 0;
    expect_launch(rt, &d, RK_BAD_CAPACITY, "queue_capacity is 0");
    d = good, d.queue_capacity = 1000;
    expect_launch(rt, &d, RK_BAD_CAPACITY, "queue_capacity is 1000 (must be a power of two");
    d = good, d.message_size = 65537;
    expect_launch(rt, &d, RK_INVALID_ARGUMENT, "message_size is 65537");
    d = good, d.reply_size = 65537;
    expect_launch(rt, &d, RK_INVALID_ARGUMENT, "reply_size is 65537");
    d = good, d.handler = host_handler;
    expect_launch(rt, &d, RK_INVALID_ARGUMENT, "more than one of handler_source, handler_file and handler");
    d = good, d.handler_source = NULL;
    expect_launch(rt, &d, RK_INVALID_ARGUMENT, "no handler");
    d = good, d.handler_name = NULL;
    expect_launch(rt, &d, RK_NULL_ARGUMENT, "handler_name is NULL");
    d = good, d.mode = (rk_exec_mode)42;
    expect_launch(rt, &d, RK_INVALID_ARGUMENT, "unknown execution mode 42");
    d = good, d.mode = (rk_exec_mode)-1;
    expect_launch(rt, &d, RK_INVALID_ARGUMENT, "unknown execution mode");
    d = good, d.handler_name = "no_such_handler";
    k = (rk_kernel *)0x1;
    rk_status s = rk_kernel_launch(rt, &d, &k);
    CHECK(s == RK_NOT_FOUND || s == RK_COMPILE_FAILED); /* as launch_validation: a GPU compiler may say it */
    CHECK(k == NULL);
    CHECK_STR_CONTAINS(rk_last_error(), "no_such_handler");
    d = good, d.handler_source = "RK_HANDLER int broken(const int *a, int *b, void *s) { return undeclared_thing; }\n";
    d.handler_name = "broken";
    k = (rk_kernel *)0x1;
    s = rk_kernel_launch(rt, &d, &k);
    CHECK(s == RK_COMPILE_FAILED || s == RK_PARSE_ERROR);
    CHECK(k == NULL);
    CHECK_STR_CONTAINS(rk_last_error(), "undeclared_thing");
    if (conf_is(env, "cpu")) { /* host-function handlers and worker threads: the CPU backend's */
        d = good, d.handler = host_handler, d.handler_source = NULL, d.handler_name = NULL, d.message_size = 0;
        expect_launch(rt, &d, RK_INVALID_ARGUMENT, "message_size is 0");
        d = good, d.workers = 1000;
        expect_launch(rt, &d, RK_INVALID_ARGUMENT, "1000 workers");
        d = good, d.mode = RK_MODE_TRADITIONAL, d.workers = 2;
        expect_launch(rt, &d, RK_INVALID_ARGUMENT, "workers");
    }
    CHECK_OK(rk_runtime_destroy(rt));
}

/* Every kernel call with a NULL kernel. */
static void null_kernel(const conf_env *env) {
    (void)env;
    conf_req q = {0};
    conf_resp r;
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

/* Bad calls on a kernel holding queued messages leave them all there, in
 * order, in each mode the backend runs. */
static void bad_calls_lose_nothing(const conf_env *env) {
    enum { CAP = 16 };
    rk_runtime *rt = conf_runtime(env);
    static const rk_exec_mode modes[] = {RK_MODE_DEFAULT, RK_MODE_TRADITIONAL};
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        rk_kernel *k = conf_launch(rt, "mix", CAP, modes[m]);
        conf_send_range(k, 0, 10);
        unsigned char big[sizeof(conf_req) + 1] = {0};
        CHECK_STATUS(rk_kernel_send(k, big, sizeof big, RK_NO_WAIT, NULL), RK_MESSAGE_TOO_LARGE);
        CHECK_STR_CONTAINS(rk_last_error(), "larger than kernel 'mix' message_size 8");
        CHECK_STATUS(rk_kernel_send(k, NULL, 4, RK_NO_WAIT, NULL), RK_NULL_ARGUMENT);
        CHECK_STATUS(rk_kernel_send_batch(k, big, 4, 1, RK_NO_WAIT, NULL, NULL), RK_INVALID_ARGUMENT);
        CHECK_STR_CONTAINS(rk_last_error(), "stride 4");
        CHECK_STATUS(rk_kernel_send_batch(k, NULL, sizeof(conf_req), 1, RK_NO_WAIT, NULL, NULL), RK_NULL_ARGUMENT);
        size_t n = 99;
        uint64_t first = 0;
        CHECK_OK(rk_kernel_send_batch(k, NULL, sizeof(conf_req), 0, RK_NO_WAIT, &n, &first)); /* nothing to do */
        CHECK_EQ(n, 0);
        CHECK_U64_EQ(first, 11);
        conf_req more[CAP];
        for (uint32_t i = 0; i < CAP; i++) more[i] = (conf_req){.value = 10 + i};
        CHECK_STATUS(rk_kernel_send_batch(k, more, sizeof more[0], CAP, RK_NO_WAIT, &n, &first), RK_WOULD_BLOCK);
        CHECK_EQ(n, CAP - 10);
        CHECK_U64_EQ(first, 11);
        CHECK_STATUS(rk_kernel_send(k, &more[0], sizeof more[0], RK_NO_WAIT, NULL), RK_WOULD_BLOCK);
        CHECK_STR_CONTAINS(rk_last_error(), "input queue is full");
        conf_resp r;
        CHECK_STATUS(rk_kernel_receive(k, &r, sizeof r - 1, NULL, RK_NO_WAIT), RK_INVALID_ARGUMENT);
        CHECK_STR_CONTAINS(rk_last_error(), "smaller than kernel 'mix' reply_size 8");
        CHECK_STATUS(rk_kernel_receive(k, NULL, sizeof r, NULL, RK_NO_WAIT), RK_NULL_ARGUMENT);
        CHECK_STATUS(rk_kernel_receive_batch(k, &r, sizeof r, NULL, 1, RK_NO_WAIT, NULL), RK_NULL_ARGUMENT);
        CHECK_OK(rk_kernel_receive_batch(k, &r, sizeof r, NULL, 0, RK_NO_WAIT, &n));
        CHECK_EQ(n, 0);
        CHECK_STATUS(rk_kernel_receive(k, &r, sizeof r, NULL, CONF_MS(10)), RK_TIMEOUT); /* inactive: nothing yet */
        CHECK_STR_CONTAINS(rk_last_error(), "no reply");
        rk_kernel_stats st = conf_stats(k);
        CHECK_U64_EQ(st.messages_sent, CAP);
        CHECK_EQ(st.input_depth, CAP);
        CHECK_OK(rk_kernel_activate(k));
        conf_receive_range(k, 0, CAP); /* ids 1..CAP, in order, each value's reply */
        CHECK_STATUS(rk_kernel_receive(k, &r, sizeof r, NULL, CONF_MS(5)), RK_TIMEOUT);
        CHECK_OK(rk_kernel_terminate(k, CONF_SECONDS(20)));
        st = conf_stats(k);
        CHECK_U64_EQ(st.messages_processed, CAP);
        CHECK_U64_EQ(st.replies_received, CAP);
        CHECK_OK(rk_kernel_destroy(k));
    }
    CHECK_OK(rk_runtime_destroy(rt));
}

static void names(const conf_env *env) {
    (void)env;
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

static const conf_check validation_checks[] = {
    {"launch_messages", launch_messages, CONF_SHARED},
    {"null_kernel", null_kernel, CONF_SHARED},
    {"bad_calls_lose_nothing", bad_calls_lose_nothing, CONF_SHARED},
    {"names", names, CONF_SHARED},
};
CONF_GROUP(conf_group_actor_validation, "actor.validation", validation_checks);
