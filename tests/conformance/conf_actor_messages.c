/* Actor layer, messages: round trips, a full queue, timeouts, batches, the
 * largest message, terminate with messages in flight (each accepted one
 * answered exactly once), the counters after handler errors, and ordering. */
#include <string.h>
#include <time.h>

#include "conformance.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void round_trips(const conf_env *env) {
    rk_runtime *rt = conf_runtime(env);
    rk_kernel *k = conf_launch(rt, "mix", 256, RK_MODE_DEFAULT);
    CHECK_OK(rk_kernel_activate(k));
    for (uint32_t round = 0; round < 10; round++) {
        conf_send_range(k, round * 100, round * 100 + 100);
        conf_receive_range(k, round * 100, round * 100 + 100);
    }
    /* a shorter message is zero-padded: fail_with reads 0 */
    uint32_t value = 41;
    rk_reply_info info;
    conf_resp r;
    CHECK_OK(rk_kernel_send(k, &value, sizeof value, CONF_SECONDS(5), NULL));
    CHECK_OK(rk_kernel_receive(k, &r, sizeof r, &info, CONF_SECONDS(20)));
    CHECK_EQ(info.status, 0);
    CHECK_EQ(r.value, conf_expect(41));
    CHECK_U64_EQ(info.id, 1001);
    CHECK_OK(rk_kernel_terminate(k, CONF_SECONDS(20)));
    CHECK_OK(rk_kernel_destroy(k));
    CHECK_OK(rk_runtime_destroy(rt));
}

/* An inactive kernel takes exactly queue_capacity messages; then a send
 * says WOULD_BLOCK (no wait) or TIMEOUT (within its timeout) and queues
 * nothing. */
static void full_queue(const conf_env *env) {
    rk_runtime *rt = conf_runtime(env);
    enum { CAP = 8 };
    rk_kernel *k = conf_launch(rt, "mix", CAP, RK_MODE_DEFAULT);
    conf_send_range(k, 0, CAP);
    conf_req q = {.value = 99};
    uint64_t id = 12345;
    CHECK_STATUS(rk_kernel_send(k, &q, sizeof q, RK_NO_WAIT, &id), RK_WOULD_BLOCK);
    double t0 = now_ms();
    CHECK_STATUS(rk_kernel_send(k, &q, sizeof q, CONF_MS(50), &id), RK_TIMEOUT);
    double waited = now_ms() - t0;
    CHECK(waited >= 45 && waited < 5000);
    size_t sent = 99;
    CHECK_STATUS(rk_kernel_send_batch(k, &q, sizeof q, 1, RK_NO_WAIT, &sent, NULL), RK_WOULD_BLOCK);
    CHECK_EQ(sent, 0);
    rk_kernel_stats st = conf_stats(k);
    CHECK_U64_EQ(st.messages_sent, CAP);
    CHECK_EQ(st.input_depth, CAP);
    CHECK_OK(rk_kernel_activate(k));
    conf_receive_range(k, 0, CAP);
    /* room again */
    conf_send_range(k, CAP, 2 * CAP);
    conf_receive_range(k, CAP, 2 * CAP);
    CHECK_OK(rk_kernel_destroy(k));
    CHECK_OK(rk_runtime_destroy(rt));
}

/* Every call with a timeout returns within it; RK_NO_WAIT does not wait. */
static void timeouts(const conf_env *env) {
    rk_runtime *rt = conf_runtime(env);
    rk_kernel *k = conf_launch(rt, "mix", 16, RK_MODE_DEFAULT);
    CHECK_OK(rk_kernel_activate(k));
    conf_resp r;
    double t0 = now_ms();
    CHECK_STATUS(rk_kernel_receive(k, &r, sizeof r, NULL, RK_NO_WAIT), RK_WOULD_BLOCK);
    CHECK(now_ms() - t0 < 1000);
    const uint64_t waits_ms[] = {1, 30, 200};
    for (size_t i = 0; i < 3; i++) {
        t0 = now_ms();
        CHECK_STATUS(rk_kernel_receive(k, &r, sizeof r, NULL, CONF_MS(waits_ms[i])), RK_TIMEOUT);
        double took = now_ms() - t0;
        CHECK(took >= (double)waits_ms[i] * 0.9);
        CHECK(took < (double)waits_ms[i] + 2000);
    }
    size_t got = 7;
    CHECK_STATUS(rk_kernel_receive_batch(k, &r, sizeof r, NULL, 4, CONF_MS(10), &got), RK_TIMEOUT);
    CHECK_EQ(got, 0);
    CHECK_OK(rk_kernel_destroy(k));
    CHECK_OK(rk_runtime_destroy(rt));
}

/* CUDA's persistent mode frees a queue slot when its reply is received, not
 * when the request is taken (ringkernel.h, queue_capacity). */
static bool in_flight_bound(const conf_env *env, rk_runtime *rt) {
    if (!conf_is(env, "cuda")) return false;
    rk_device_info info;
    if (rk_context_device_info(rk_runtime_context(rt), &info) != RK_OK) return false;
    return info.persistent_kernels && info.cooperative_launch;
}

static void batches(const conf_env *env) {
    rk_runtime *rt = conf_runtime(env);
    rk_kernel *k = conf_launch(rt, "mix", 128, RK_MODE_DEFAULT);
    enum { N = 300, STRIDE = 24 };
    static unsigned char msgs[N * STRIDE];
    for (uint32_t i = 0; i < N; i++) {
        conf_req q = {.value = i, .fail_with = i % 50 == 7 ? -3 : 0};
        memcpy(msgs + (size_t)i * STRIDE, &q, sizeof q);
    }
    size_t sent = 0, got = 0;
    uint64_t first = 0;
    /* Inactive, a batch larger than the queue: the queue's worth is taken. */
    CHECK_STATUS(rk_kernel_send_batch(k, msgs, STRIDE, N, RK_NO_WAIT, &sent, &first), RK_WOULD_BLOCK);
    CHECK_EQ(sent, 128);
    CHECK_U64_EQ(first, 1);
    CHECK_OK(rk_kernel_activate(k));
    static unsigned char replies[N * 16];
    rk_reply_info infos[N];
    size_t more = 0;
    if (in_flight_bound(env, rt)) {
        /* ringkernel.h, queue_capacity: the slots free as replies are received. */
        CHECK_STATUS(rk_kernel_send_batch(k, msgs + sent * STRIDE, STRIDE, 50, CONF_MS(200), &more, NULL),
                     RK_TIMEOUT);
        CHECK_EQ(more, 0);
        while (got < sent) {
            size_t n = 0;
            CHECK_OK(rk_kernel_receive_batch(k, replies + got * 16, 16, infos + got, sent - got, CONF_SECONDS(20), &n));
            got += n;
        }
    }
    CHECK_OK(rk_kernel_send_batch(k, msgs + sent * STRIDE, STRIDE, 50, CONF_SECONDS(20), &more, &first));
    CHECK_EQ(more, 50);
    CHECK_U64_EQ(first, 129);
    sent += more;
    while (got < sent) {
        size_t n = 0;
        CHECK_OK(rk_kernel_receive_batch(k, replies + got * 16, 16, infos + got, sent - got, CONF_SECONDS(20), &n));
        CHECK_GT(n, 0);
        got += n;
    }
    for (uint32_t i = 0; i < sent; i++) {
        conf_resp r;
        memcpy(&r, replies + (size_t)i * 16, sizeof r);
        CHECK_U64_EQ(infos[i].id, i + 1);
        CHECK_EQ(infos[i].status, i % 50 == 7 ? -3 : 0);
        CHECK_EQ(r.value, conf_expect(i));
    }
    CHECK_STATUS(rk_kernel_send_batch(k, msgs, sizeof(conf_req) - 1, 2, 0, &sent, NULL), RK_INVALID_ARGUMENT);
    CHECK_STATUS(rk_kernel_receive_batch(k, replies, sizeof(conf_resp) - 1, NULL, 2, 0, &got), RK_INVALID_ARGUMENT);
    conf_resp small;
    CHECK_STATUS(rk_kernel_receive(k, &small, sizeof small - 1, NULL, 0), RK_INVALID_ARGUMENT);
    CHECK_OK(rk_kernel_destroy(k));
    CHECK_OK(rk_runtime_destroy(rt));
}

/* message_size and reply_size at their maximum (65536): first and last
 * words make the round trip; one byte more is refused. */
static void max_message(const conf_env *env) {
    static const char big_source[] = "typedef struct { uint32_t w[16384]; } Big;\n"
                                     "RK_HANDLER int big(const Big *req, Big *resp, void *state) {\n"
                                     "    resp->w[0] = req->w[0] + 1u;\n"
                                     "    resp->w[8191] = req->w[8191] + 2u;\n"
                                     "    resp->w[16383] = req->w[16383] + 3u;\n"
                                     "    return 0;\n"
                                     "}\n";
    rk_runtime *rt = conf_runtime(env);
    rk_device_info info;
    CHECK_OK(rk_context_device_info(rk_runtime_context(rt), &info));
    if (conf_is(env, "webgpu") && info.software) {
        CHECK_OK(rk_runtime_destroy(rt));
        RK_SKIP("software Vulkan (%s): a 64 KiB WebGPU message takes minutes to "
                "build and run there "
                "(ringkernel.h, message_size); checked on hardware adapters",
                info.name);
    }
    rk_kernel_desc d = {.name = "big",
                        .handler_source = big_source,
                        .handler_name = "big",
                        .message_size = 65536,
                        .reply_size = 65536,
                        .queue_capacity = 4};
    rk_kernel *k = NULL;
    rk_status launched = rk_kernel_launch(rt, &d, &k);
    if (conf_is(env, "webgpu") && launched != RK_OK) {
        /* ringkernel.h, message_size: a driver may refuse the pipeline. */
        char why[256];
        snprintf(why, sizeof why, "%s", rk_last_error());
        CHECK(k == NULL);
        CHECK(!info.software); /* lavapipe builds it (slowly): a refusal there is a bug */
        CHECK(launched == RK_INTERNAL || launched == RK_COMPILE_FAILED);
        CHECK_OK(rk_runtime_destroy(rt));
        RK_SKIP("%s refuses a 64 KiB handler's pipeline (ringkernel.h, message_size): %.120s", info.name, why);
    }
    CHECK_OK(launched);
    CHECK_OK(rk_kernel_activate(k));
    uint32_t *msg = calloc(16384 + 1, 4), *reply = calloc(16384, 4);
    for (uint32_t i = 0; i < 6; i++) {
        msg[0] = i, msg[8191] = 100 + i, msg[16383] = 1000 + i;
        CHECK_OK(rk_kernel_send(k, msg, 65536, CONF_SECONDS(20), NULL));
        CHECK_OK(rk_kernel_receive(k, reply, 65536, NULL, CONF_SECONDS(20)));
        CHECK_EQ(reply[0], i + 1);
        CHECK_EQ(reply[8191], 102 + i);
        CHECK_EQ(reply[16383], 1003 + i);
    }
    CHECK_STATUS(rk_kernel_send(k, msg, 65537, RK_NO_WAIT, NULL), RK_MESSAGE_TOO_LARGE);
    free(msg);
    free(reply);
    CHECK_OK(rk_kernel_destroy(k));
    CHECK_OK(rk_runtime_destroy(rt));
}

/* Terminate while hundreds of messages are queued and nobody receives:
 * every accepted message is answered exactly once, and receive then says
 * RK_TERMINATED. */
static void terminate_in_flight(const conf_env *env) {
    rk_runtime *rt = conf_runtime(env);
    enum { N = 600 };
    rk_kernel *k = conf_launch(rt, "mix", 1024, RK_MODE_DEFAULT);
    CHECK_OK(rk_kernel_activate(k));
    conf_send_range(k, 0, N);
    CHECK_OK(rk_kernel_terminate(k, CONF_SECONDS(60)));
    static unsigned char seen[N];
    for (uint32_t i = 0; i < N; i++) {
        conf_resp r;
        rk_reply_info info;
        CHECK_OK(rk_kernel_receive(k, &r, sizeof r, &info, CONF_SECONDS(5)));
        CHECK(info.id >= 1 && info.id <= N);
        CHECK_EQ(seen[info.id - 1], 0);
        seen[info.id - 1] = 1;
        CHECK_EQ(r.value, conf_expect((uint32_t)info.id - 1));
    }
    conf_resp r;
    CHECK_STATUS(rk_kernel_receive(k, &r, sizeof r, NULL, CONF_MS(50)), RK_TERMINATED);
    rk_kernel_stats st = conf_stats(k);
    CHECK_U64_EQ(st.messages_sent, N);
    CHECK_U64_EQ(st.messages_processed, N);
    CHECK_U64_EQ(st.replies_received, N);
    CHECK_EQ(st.input_depth, 0);
    CHECK_OK(rk_kernel_destroy(k));
    CHECK_OK(rk_runtime_destroy(rt));
}

/* Handler errors are delivered with their value and counted; the kernel
 * keeps running. */
static void counters(const conf_env *env) {
    rk_runtime *rt = conf_runtime(env);
    rk_kernel *k = conf_launch(rt, "mix", 64, RK_MODE_DEFAULT);
    CHECK_OK(rk_kernel_activate(k));
    enum { N = 40 };
    for (uint32_t i = 0; i < N; i++) {
        conf_req q = {.value = i, .fail_with = i % 4 == 1 ? -(int32_t)(i + 1) : 0};
        CHECK_OK(rk_kernel_send(k, &q, sizeof q, CONF_SECONDS(20), NULL));
    }
    for (uint32_t i = 0; i < N; i++) {
        conf_resp r;
        rk_reply_info info;
        CHECK_OK(rk_kernel_receive(k, &r, sizeof r, &info, CONF_SECONDS(20)));
        CHECK_U64_EQ(info.id, i + 1);
        CHECK_EQ(info.status, i % 4 == 1 ? -(int32_t)(i + 1) : 0);
        CHECK_EQ(r.value, conf_expect(i));
    }
    rk_kernel_stats st = conf_stats(k);
    CHECK_EQ(st.state, RK_KERNEL_ACTIVE);
    CHECK_U64_EQ(st.messages_sent, N);
    CHECK_U64_EQ(st.messages_processed, N);
    CHECK_U64_EQ(st.errors_encountered, N / 4);
    CHECK_U64_EQ(st.replies_received, N);
    CHECK_EQ(st.input_depth, 0);
    CHECK_EQ(st.output_depth, 0);
    CHECK_EQ(st.failure, RK_OK);
    CHECK_GE(st.launches, 1);
    CHECK_GE(st.latency_samples, 1);
    CHECK_GT(st.latency_max_ns, 0);
    CHECK_OK(rk_kernel_destroy(k));
    CHECK_OK(rk_runtime_destroy(rt));
}

/* ordered = true: one handler at a time in send order, each seeing the
 * previous one's state (ringkernel.h, "Ordering"). */
static void ordered(const conf_env *env) {
    rk_runtime *rt = conf_runtime(env);
    rk_kernel_desc d = conf_kernel_desc("counted", 256, RK_MODE_DEFAULT);
    d.ordered = true;
    rk_kernel *k = NULL;
    CHECK_OK(rk_kernel_launch(rt, &d, &k));
    CHECK_OK(rk_kernel_activate(k));
    enum { N = 500 };
    conf_send_range(k, 0, 200);
    for (uint32_t i = 0; i < N; i++) {
        if (i + 200 < N) conf_send_range(k, i + 200, i + 201);
        conf_resp r;
        rk_reply_info info;
        CHECK_OK(rk_kernel_receive(k, &r, sizeof r, &info, CONF_SECONDS(20)));
        CHECK_U64_EQ(info.id, i + 1);
        CHECK_EQ(r.value, conf_expect(i));
        CHECK_EQ(r.count, i + 1);
    }
    CHECK_OK(rk_kernel_destroy(k));
    CHECK_OK(rk_runtime_destroy(rt));
}

static const conf_check message_checks[] = {
    {"round_trips", round_trips, CONF_SHARED}, {"full_queue", full_queue, CONF_SHARED},
    {"timeouts", timeouts, CONF_SHARED},       {"batches", batches, CONF_SHARED},
    {"max_message", max_message, CONF_SHARED}, {"terminate_in_flight", terminate_in_flight, CONF_SHARED},
    {"counters", counters, CONF_SHARED},       {"ordered", ordered, CONF_SHARED},
};
CONF_GROUP(conf_group_actor_messages, "actor.messages", message_checks);
