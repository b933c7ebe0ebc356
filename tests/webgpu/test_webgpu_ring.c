/* Ring kernels on WebGPU with handlers written in WGSL itself: stateful
 * handlers processed in order, empty replies, and what the backend refuses
 * (with Dawn's message). The lifecycle, messages, batches and terminate
 * with messages in flight are checked on every backend by
 * tests/conformance. */
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
    test_state(rt);
    test_empty_replies(rt);
    test_refusals(rt);
    CHECK_OK(rk_runtime_destroy(rt));
    printf("webgpu ring kernels: all checks passed\n");
    return 0;
}
