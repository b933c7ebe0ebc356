/* Ring kernels on WebGPU (event-driven relaunch) through the public actor
 * API, with handlers written in WGSL: lifecycle, every reply checked,
 * handler errors counted, terminate with messages in flight, stateful
 * handlers processed in order, and what the backend refuses. */
#include "check.h"

#define MS 1000000ull
#define SEC 1000000000ull

typedef struct req_t {
    uint32_t a;
    float x;
    uint32_t pad[2];
} req_t;

typedef struct resp_t {
    uint32_t a2;
    float y;
} resp_t;

/* Stateless: one invocation per message. Fails (returns -7) when a == 13. */
static const char scale_handler[] =
    "fn scale(req: u32, resp: u32) -> i32 {\n"
    "    let a = rk_in[req];\n"
    "    let x = bitcast<f32>(rk_in[req + 1u]);\n"
    "    rk_out[resp] = a * 2u;\n"
    "    rk_out[resp + 1u] = bitcast<u32>(x * 3.0);\n"
    "    if (a == 13u) { return -7; }\n"
    "    return 0;\n"
    "}\n";

/* Stateful: replies with a running count and sum (state: count, sum). */
static const char count_handler[] =
    "fn count(req: u32, resp: u32) -> i32 {\n"
    "    rk_state[0] = rk_state[0] + 1u;\n"
    "    rk_state[1] = rk_state[1] + rk_in[req];\n"
    "    rk_out[resp] = rk_state[0];\n"
    "    rk_out[resp + 1u] = rk_state[1];\n"
    "    return 0;\n"
    "}\n";

static rk_runtime *open_or_skip(void) {
    const rk_backend *b = NULL;
    uint32_t count = 0;
    CHECK_OK(rk_backend_find("webgpu", &b));
    if (rk_backend_device_count(b, &count) != RK_OK || count == 0)
        RK_SKIP("webgpu backend unavailable: %s", rk_backend_unavailable_reason(b));
    rk_runtime *rt = NULL;
    rk_runtime_desc d = {.backend = "webgpu"};
    CHECK_OK(rk_runtime_create(&d, &rt));
    return rt;
}

static rk_kernel_desc scale_desc(uint32_t capacity) {
    return (rk_kernel_desc){.name = "scale", .handler_source = scale_handler, .handler_name = "scale",
                            .message_size = sizeof(req_t), .reply_size = sizeof(resp_t),
                            .queue_capacity = capacity};
}

static void check_scale_reply(uint64_t id, uint64_t first_id, const resp_t *r, const rk_reply_info *info) {
    uint32_t a = (uint32_t)(id - first_id);
    CHECK_EQ(info->id, id);
    CHECK_EQ(r->a2, 2 * a);
    CHECK_FLOAT_NEAR(r->y, (float)a * 0.25f * 3.0f, 0.0);
    CHECK_EQ(info->status, a == 13 ? -7 : 0);
}

static void test_lifecycle(rk_runtime *rt) {
    rk_kernel_desc d = scale_desc(64);
    rk_kernel *k = NULL;
    CHECK_OK(rk_kernel_launch(rt, &d, &k));
    CHECK_EQ(rk_kernel_get_state(k), RK_KERNEL_LAUNCHED);

    /* Messages sent while inactive wait. */
    enum { N = 40 };
    uint64_t first = 0;
    for (uint32_t i = 0; i < N; i++) {
        req_t r = {.a = i, .x = (float)i * 0.25f};
        uint64_t id = 0;
        CHECK_OK(rk_kernel_send(k, &r, sizeof r, RK_NO_WAIT, &id));
        if (i == 0) first = id;
        CHECK_EQ(id, first + i);
    }
    resp_t reply;
    rk_reply_info info;
    CHECK_STATUS(rk_kernel_receive(k, &reply, sizeof reply, &info, 20 * MS), RK_TIMEOUT);
    rk_kernel_stats st;
    CHECK_OK(rk_kernel_stats_get(k, &st));
    CHECK_EQ(st.input_depth, N);
    CHECK_U64_EQ(st.messages_processed, 0);
    CHECK_U64_EQ(st.launches, 0);
    CHECK(!st.is_active);

    /* Activate: every reply arrives, in order, with the handler's status. */
    CHECK_OK(rk_kernel_activate(k));
    CHECK_EQ(rk_kernel_get_state(k), RK_KERNEL_ACTIVE);
    for (uint32_t i = 0; i < N; i++) {
        CHECK_OK(rk_kernel_receive(k, &reply, sizeof reply, &info, 10 * SEC));
        check_scale_reply(first + i, first, &reply, &info);
    }
    CHECK_OK(rk_kernel_stats_get(k, &st));
    CHECK_U64_EQ(st.messages_processed, N);
    CHECK_U64_EQ(st.errors_encountered, 1);
    CHECK_U64_EQ(st.replies_received, N);
    CHECK_GE(st.launches, 1);
    CHECK(st.is_active);

    /* Deactivate: new messages wait again; reactivate: they are processed. */
    CHECK_OK(rk_kernel_deactivate(k));
    req_t r = {.a = 5, .x = 1.0f};
    uint64_t id = 0;
    CHECK_OK(rk_kernel_send(k, &r, sizeof r, RK_NO_WAIT, &id));
    CHECK_STATUS(rk_kernel_receive(k, &reply, sizeof reply, &info, 20 * MS), RK_TIMEOUT);
    CHECK_OK(rk_kernel_activate(k));
    CHECK_OK(rk_kernel_receive(k, &reply, sizeof reply, &info, 10 * SEC));
    CHECK_EQ(info.id, id);
    CHECK_EQ(reply.a2, 10);
    CHECK_FLOAT_NEAR(reply.y, 3.0, 0.0);

    CHECK_OK(rk_kernel_terminate(k, 10 * SEC));
    CHECK_EQ(rk_kernel_get_state(k), RK_KERNEL_TERMINATED);
    CHECK_OK(rk_kernel_stats_get(k, &st));
    CHECK(st.has_terminated);
    CHECK(st.should_terminate);
    CHECK_STATUS(rk_kernel_send(k, &r, sizeof r, RK_NO_WAIT, NULL), RK_TERMINATED);
    CHECK_OK(rk_kernel_destroy(k));
}

/* Many messages, a small queue, batches: every reply checked, and terminate
 * with messages still queued loses none of them. */
static void test_batches_and_terminate(rk_runtime *rt) {
    enum { N = 5000, CAP = 256 };
    rk_kernel_desc d = scale_desc(CAP);
    rk_kernel *k = NULL;
    CHECK_OK(rk_kernel_launch(rt, &d, &k));
    CHECK_OK(rk_kernel_activate(k));
    req_t *reqs = calloc(N, sizeof *reqs);
    resp_t *replies = calloc(N, sizeof *replies);
    rk_reply_info *infos = calloc(N, sizeof *infos);
    for (uint32_t i = 0; i < N; i++) reqs[i] = (req_t){.a = i, .x = (float)i * 0.25f};
    size_t sent = 0, got = 0;
    uint64_t first = 0;
    /* Send 4000 while receiving, then leave the last 1000 in flight for terminate. */
    while (sent < 4000) {
        size_t n = 0;
        uint64_t fid = 0;
        rk_status s = rk_kernel_send_batch(k, &reqs[sent], sizeof(req_t), 4000 - sent, RK_NO_WAIT, &n, &fid);
        CHECK(s == RK_OK || s == RK_TIMEOUT || s == RK_WOULD_BLOCK);
        if (sent == 0 && n) first = fid;
        sent += n;
        size_t r = 0;
        s = rk_kernel_receive_batch(k, &replies[got], sizeof(resp_t), &infos[got], N - got, RK_NO_WAIT, &r);
        CHECK(s == RK_OK || s == RK_TIMEOUT || s == RK_WOULD_BLOCK);
        got += r;
    }
    /* Now fill both queues without receiving: the sends stop when the input
     * queue stays full (the output queue holds CAP replies, the input CAP). */
    for (;;) {
        size_t n = 0;
        rk_status s = rk_kernel_send_batch(k, &reqs[sent], sizeof(req_t), N - sent, 50 * MS, &n, NULL);
        sent += n;
        if (s == RK_TIMEOUT || sent == N) break;
        CHECK_OK(s);
    }
    CHECK_LT(sent, N); /* it stopped because the queues were full */
    rk_kernel_stats before;
    CHECK_OK(rk_kernel_stats_get(k, &before));
    CHECK_GT(before.input_depth, 0); /* messages in flight when terminate starts */
    CHECK_OK(rk_kernel_terminate(k, 30 * SEC));
    /* Replies that were not taken yet are all still receivable. */
    for (;;) {
        size_t r = 0;
        rk_status s = rk_kernel_receive_batch(k, &replies[got], sizeof(resp_t), &infos[got], N - got, RK_NO_WAIT, &r);
        got += r;
        if (s != RK_OK || r == 0 || got == sent) break;
    }
    CHECK_EQ(got, sent);
    for (uint32_t i = 0; i < sent; i++) check_scale_reply(first + i, first, &replies[i], &infos[i]);
    rk_kernel_stats st;
    CHECK_OK(rk_kernel_stats_get(k, &st));
    CHECK_U64_EQ(st.messages_sent, sent);
    CHECK_U64_EQ(st.messages_processed, sent);
    CHECK_U64_EQ(st.errors_encountered, 1);
    CHECK_U64_EQ(st.replies_received, sent);
    CHECK_EQ(st.input_depth, 0);
    printf("%zu messages through a %d-slot kernel in %llu dispatches (%u in flight at terminate)\n", sent, CAP,
           (unsigned long long)st.launches, before.input_depth);
    CHECK_GE(st.launches, sent / CAP);
    CHECK_OK(rk_kernel_destroy(k));
    free(reqs);
    free(replies);
    free(infos);
}

/* An inactive kernel is activated to drain on terminate. */
static void test_terminate_inactive(rk_runtime *rt) {
    rk_kernel_desc d = scale_desc(16);
    rk_kernel *k = NULL;
    CHECK_OK(rk_kernel_launch(rt, &d, &k));
    for (uint32_t i = 0; i < 10; i++) {
        req_t r = {.a = i, .x = (float)i * 0.25f};
        CHECK_OK(rk_kernel_send(k, &r, sizeof r, RK_NO_WAIT, NULL));
    }
    CHECK_OK(rk_kernel_terminate(k, 10 * SEC));
    resp_t replies[16];
    rk_reply_info infos[16];
    size_t got = 0;
    CHECK_OK(rk_kernel_receive_batch(k, replies, sizeof(resp_t), infos, 16, RK_NO_WAIT, &got));
    CHECK_EQ(got, 10);
    for (uint32_t i = 0; i < 10; i++) check_scale_reply(infos[0].id + i, infos[0].id, &replies[i], &infos[i]);
    CHECK_OK(rk_kernel_destroy(k));
}

/* State persists across dispatches, and stateful handlers see messages in order. */
static void test_state(rk_runtime *rt) {
    rk_kernel_desc d = {.name = "count", .handler_source = count_handler, .handler_name = "count",
                        .message_size = 4, .reply_size = 8, .state_size = 8, .queue_capacity = 128};
    rk_kernel *k = NULL;
    CHECK_OK(rk_kernel_launch(rt, &d, &k));
    CHECK_OK(rk_kernel_activate(k));
    uint32_t sum = 0;
    for (uint32_t round = 0; round < 3; round++) {
        uint32_t vals[100];
        for (uint32_t i = 0; i < 100; i++) vals[i] = round * 100 + i;
        size_t n = 0;
        CHECK_OK(rk_kernel_send_batch(k, vals, sizeof vals[0], 100, 10 * SEC, &n, NULL));
        CHECK_EQ(n, 100);
        for (uint32_t i = 0; i < 100; i++) {
            uint32_t reply[2];
            CHECK_OK(rk_kernel_receive(k, reply, sizeof reply, NULL, 10 * SEC));
            sum += vals[i];
            CHECK_EQ(reply[0], round * 100 + i + 1);
            CHECK_EQ(reply[1], sum);
        }
    }
    CHECK_OK(rk_kernel_destroy(k));
}

/* Replies of zero bytes still carry the id and the handler's status. */
static void test_empty_replies(rk_runtime *rt) {
    rk_kernel_desc d = {.name = "sink", .handler_source = "fn sink(req: u32, resp: u32) -> i32 {\n"
                                                          "    return select(0, -1, rk_in[req] == 3u);\n}\n",
                        .handler_name = "sink", .message_size = 4, .reply_size = 0, .queue_capacity = 16};
    rk_kernel *k = NULL;
    CHECK_OK(rk_kernel_launch(rt, &d, &k));
    CHECK_OK(rk_kernel_activate(k));
    uint64_t first = 0;
    for (uint32_t i = 0; i < 8; i++) {
        uint64_t id = 0;
        CHECK_OK(rk_kernel_send(k, &i, sizeof i, RK_NO_WAIT, &id));
        if (i == 0) first = id;
    }
    for (uint32_t i = 0; i < 8; i++) {
        rk_reply_info info;
        CHECK_OK(rk_kernel_receive(k, NULL, 0, &info, 10 * SEC));
        CHECK_EQ(info.id, first + i);
        CHECK_EQ(info.status, i == 3 ? -1 : 0);
    }
    CHECK_OK(rk_kernel_destroy(k));
}

static void test_refusals(rk_runtime *rt) {
    rk_kernel *k = NULL;
    rk_kernel_desc d = scale_desc(16);
    d.mode = RK_MODE_PERSISTENT;
    CHECK_STATUS(rk_kernel_launch(rt, &d, &k), RK_UNSUPPORTED);
    CHECK_STR_CONTAINS(rk_last_error(), "relaunch");
    d.mode = RK_MODE_GRAPH;
    CHECK_STATUS(rk_kernel_launch(rt, &d, &k), RK_UNSUPPORTED);
    /* A WGSL error in the handler comes back with Dawn's message. */
    d = scale_desc(16);
    d.handler_source = "fn scale(req: u32, resp: u32) -> i32 { return undefined_thing; }\n";
    CHECK_STATUS(rk_kernel_launch(rt, &d, &k), RK_COMPILE_FAILED);
    CHECK_STR_CONTAINS(rk_last_error(), "undefined_thing");
    d = scale_desc(16);
    d.handler_name = "no_such_handler";
    CHECK_STATUS(rk_kernel_launch(rt, &d, &k), RK_COMPILE_FAILED);
    CHECK_STR_CONTAINS(rk_last_error(), "no_such_handler");
    CHECK(k == NULL);
}

int main(void) {
    rk_runtime *rt = open_or_skip();
    test_lifecycle(rt);
    test_batches_and_terminate(rt);
    test_terminate_inactive(rt);
    test_state(rt);
    test_empty_replies(rt);
    test_refusals(rt);
    CHECK_OK(rk_runtime_destroy(rt));
    printf("webgpu ring kernels: all checks passed\n");
    return 0;
}
