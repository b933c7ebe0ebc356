/* Actor layer, lifecycle: every transition, legal and illegal, with the
 * status ringkernel.h promises for it, and the launch validation. */
#include <string.h>

#include "conformance.h"

/* LAUNCHED -> ACTIVE -> LAUNCHED -> ACTIVE -> TERMINATED; repeated calls
 * are no-ops; an inactive kernel queues without processing. */
static void legal_transitions(const conf_env *env) {
    rk_runtime *rt = conf_runtime(env);
    rk_kernel *k = conf_launch(rt, "mix", 64, RK_MODE_DEFAULT);
    conf_send_range(k, 0, 10);
    rk_kernel_stats st = conf_stats(k);
    CHECK_EQ(st.state, RK_KERNEL_LAUNCHED);
    CHECK(!st.is_active);
    CHECK_U64_EQ(st.messages_sent, 10);
    CHECK_U64_EQ(st.messages_processed, 0);
    conf_resp r;
    CHECK_STATUS(rk_kernel_receive(k, &r, sizeof r, NULL, RK_NO_WAIT), RK_WOULD_BLOCK);
    CHECK_STATUS(rk_kernel_receive(k, &r, sizeof r, NULL, CONF_MS(20)), RK_TIMEOUT);
    CHECK_OK(rk_kernel_deactivate(k)); /* already inactive: no change */
    CHECK_EQ(rk_kernel_get_state(k), RK_KERNEL_LAUNCHED);
    CHECK_OK(rk_kernel_activate(k));
    CHECK_OK(rk_kernel_activate(k));
    CHECK_EQ(rk_kernel_get_state(k), RK_KERNEL_ACTIVE);
    conf_receive_range(k, 0, 10);
    CHECK(conf_stats(k).is_active);
    CHECK_OK(rk_kernel_deactivate(k));
    CHECK_EQ(rk_kernel_get_state(k), RK_KERNEL_LAUNCHED);
    conf_send_range(k, 10, 15);
    CHECK_STATUS(rk_kernel_receive(k, &r, sizeof r, NULL, CONF_MS(20)), RK_TIMEOUT);
    CHECK_U64_EQ(conf_stats(k).messages_processed, 10);
    CHECK_OK(rk_kernel_activate(k));
    conf_receive_range(k, 10, 15);
    CHECK_OK(rk_kernel_terminate(k, CONF_SECONDS(20)));
    CHECK_EQ(rk_kernel_get_state(k), RK_KERNEL_TERMINATED);
    st = conf_stats(k);
    CHECK(st.should_terminate);
    CHECK(st.has_terminated);
    CHECK_OK(rk_kernel_terminate(k, CONF_SECONDS(1))); /* again: no change */
    CHECK_OK(rk_kernel_destroy(k));
    CHECK_OK(rk_runtime_destroy(rt));
}

/* Terminating an inactive kernel activates it to drain what was queued. */
static void terminate_inactive(const conf_env *env) {
    rk_runtime *rt = conf_runtime(env);
    rk_kernel *k = conf_launch(rt, "mix", 64, RK_MODE_DEFAULT);
    conf_send_range(k, 0, 20);
    CHECK_OK(rk_kernel_terminate(k, CONF_SECONDS(20)));
    CHECK_EQ(rk_kernel_get_state(k), RK_KERNEL_TERMINATED);
    conf_receive_range(k, 0, 20);
    conf_resp r;
    CHECK_STATUS(rk_kernel_receive(k, &r, sizeof r, NULL, CONF_MS(10)), RK_TERMINATED);
    CHECK_OK(rk_kernel_destroy(k));
    /* Destroying a kernel that was never activated or terminated. */
    k = conf_launch(rt, "mix", 64, RK_MODE_DEFAULT);
    conf_send_range(k, 0, 5);
    CHECK_OK(rk_kernel_destroy(k));
    CHECK_OK(rk_runtime_destroy(rt));
}

/* After terminate: activate, deactivate and send say RK_TERMINATED and
 * change nothing; receive gives the replies, then RK_TERMINATED. */
static void illegal_transitions(const conf_env *env) {
    rk_runtime *rt = conf_runtime(env);
    rk_kernel *k = conf_launch(rt, "mix", 64, RK_MODE_DEFAULT);
    CHECK_OK(rk_kernel_activate(k));
    conf_send_range(k, 0, 3);
    CHECK_OK(rk_kernel_terminate(k, CONF_SECONDS(20)));
    CHECK_STATUS(rk_kernel_activate(k), RK_TERMINATED);
    CHECK_STATUS(rk_kernel_deactivate(k), RK_TERMINATED);
    conf_req q = {.value = 1};
    CHECK_STATUS(rk_kernel_send(k, &q, sizeof q, RK_NO_WAIT, NULL), RK_TERMINATED);
    size_t sent = 99;
    CHECK_STATUS(rk_kernel_send_batch(k, &q, sizeof q, 1, RK_NO_WAIT, &sent, NULL), RK_TERMINATED);
    CHECK_EQ(sent, 0);
    CHECK_EQ(rk_kernel_get_state(k), RK_KERNEL_TERMINATED);
    conf_receive_range(k, 0, 3);
    conf_resp r;
    CHECK_STATUS(rk_kernel_receive(k, &r, sizeof r, NULL, RK_NO_WAIT), RK_TERMINATED);
    rk_kernel_stats st = conf_stats(k);
    CHECK_U64_EQ(st.messages_sent, 3);
    CHECK_U64_EQ(st.replies_received, 3);
    /* The runtime refuses to go while a kernel lives, and changes nothing. */
    CHECK_STATUS(rk_runtime_destroy(rt), RK_BAD_STATE);
    CHECK_OK(rk_kernel_destroy(k));
    /* NULL kernels, everywhere. */
    CHECK_STATUS(rk_kernel_activate(NULL), RK_NULL_ARGUMENT);
    CHECK_STATUS(rk_kernel_deactivate(NULL), RK_NULL_ARGUMENT);
    CHECK_STATUS(rk_kernel_terminate(NULL, 0), RK_NULL_ARGUMENT);
    CHECK_STATUS(rk_kernel_destroy(NULL), RK_NULL_ARGUMENT);
    CHECK_STATUS(rk_kernel_send(NULL, &q, sizeof q, 0, NULL), RK_NULL_ARGUMENT);
    CHECK_STATUS(rk_kernel_receive(NULL, &r, sizeof r, NULL, 0), RK_NULL_ARGUMENT);
    CHECK_STATUS(rk_kernel_stats_get(NULL, &st), RK_NULL_ARGUMENT);
    CHECK_OK(rk_runtime_destroy(rt));
}

static void expect_refused(rk_runtime *rt, rk_kernel_desc d, rk_status want) {
    rk_kernel *k = NULL;
    CHECK_STATUS(rk_kernel_launch(rt, &d, &k), want);
    CHECK(k == NULL);
}

static void launch_validation(const conf_env *env) {
    rk_runtime *rt = conf_runtime(env);
    rk_kernel_desc ok = conf_kernel_desc("mix", 16, RK_MODE_DEFAULT), d;
    /* A DSL handler's sizes: 0 takes the handler's, another value is refused
     * naming both (ringkernel.h, "Handler sizes and dialect"). */
    d = ok, d.message_size = 0, d.reply_size = 0;
    rk_kernel *sized = NULL;
    CHECK_OK(rk_kernel_launch(rt, &d, &sized));
    CHECK_OK(rk_kernel_destroy(sized));
    d = ok, d.message_size = ok.message_size + 4;
    expect_refused(rt, d, RK_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(rk_last_error(), "message_size");
    d = ok, d.message_size = 65537;
    expect_refused(rt, d, RK_INVALID_ARGUMENT);
    d = ok, d.reply_size = 65537;
    expect_refused(rt, d, RK_INVALID_ARGUMENT);
    d = ok, d.state_size = RK_MAX_STATE_SIZE + 1;
    expect_refused(rt, d, RK_INVALID_ARGUMENT);
    d = ok, d.queue_capacity = 0;
    expect_refused(rt, d, RK_BAD_CAPACITY);
    d = ok, d.queue_capacity = 3;
    expect_refused(rt, d, RK_BAD_CAPACITY);
    d = ok, d.handler_source = NULL;
    expect_refused(rt, d, RK_INVALID_ARGUMENT);
    d = ok, d.handler_name = NULL;
    expect_refused(rt, d, RK_NULL_ARGUMENT);
    d = ok, d.mode = (rk_exec_mode)99;
    expect_refused(rt, d, RK_INVALID_ARGUMENT);
    d = ok, d.ordered = true, d.workers = 2;
    expect_refused(rt, d, RK_INVALID_ARGUMENT);
    d = ok, d.handler_name = "no_such_handler";
    rk_kernel *k = NULL;
    rk_status s = rk_kernel_launch(rt, &d, &k);
    CHECK(s == RK_NOT_FOUND || s == RK_COMPILE_FAILED);
    CHECK(k == NULL);
    d = ok, d.handler_source = "this is not a handler {";
    s = rk_kernel_launch(rt, &d, &k);
    CHECK(s == RK_COMPILE_FAILED || s == RK_PARSE_ERROR);
    CHECK(rk_last_error()[0] != '\0');
    CHECK_STATUS(rk_kernel_launch(rt, NULL, &k), RK_NULL_ARGUMENT);
    CHECK_STATUS(rk_kernel_launch(NULL, &ok, &k), RK_NULL_ARGUMENT);
    CHECK_STATUS(rk_kernel_launch(rt, &ok, NULL), RK_NULL_ARGUMENT);
    CHECK_OK(rk_runtime_destroy(rt));
}

static const conf_check lifecycle_checks[] = {
    {"legal_transitions", legal_transitions, CONF_SHARED},
    {"terminate_inactive", terminate_inactive, CONF_SHARED},
    {"illegal_transitions", illegal_transitions, CONF_SHARED},
    {"launch_validation", launch_validation, CONF_SHARED},
};
CONF_GROUP(conf_group_actor_lifecycle, "actor.lifecycle", lifecycle_checks);
