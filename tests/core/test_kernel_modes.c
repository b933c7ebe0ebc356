/* The same messages through every way of running a CPU ring kernel give the
 * same replies: persistent (one and several workers) and traditional
 * (a device-layer launch per batch), with the handler as a host function or
 * compiled from DSL source. The handler's state (a running sum) persists
 * across messages and batches. */
#include <stdlib.h>

#include "kernel_test.h"

#ifdef RK_TEST_SANITIZED
enum { COUNT = 2000 };
#else
enum { COUNT = 20000 };
#endif

typedef struct variant {
    const char *what;
    rk_exec_mode mode;
    bool from_source;
    uint32_t workers;
    bool stateful;
} variant;

/* Runs COUNT requests through one variant and returns the replies indexed
 * by request (id - 1). Sends and receives in uneven batches so queue
 * wrap-around and partial batches are exercised. */
static test_reply *run_variant(rk_runtime *rt, const variant *v) {
    rk_kernel_desc d = test_desc(v->mode, 256);
    if (v->from_source) {
        d.handler = NULL;
        d.handler_source = test_handler_source;
        d.handler_name = v->stateful ? "mix" : "mix_stateless";
    }
    d.workers = v->workers;
    if (!v->stateful) d.state_size = 0;
    rk_kernel *k;
    CHECK_OK(rk_kernel_launch(rt, &d, &k));
    CHECK_OK(rk_kernel_activate(k));

    test_request *q = calloc(COUNT, sizeof *q);
    test_reply *by_index = calloc(COUNT, sizeof *by_index);
    unsigned char *seen = calloc(COUNT, 1);
    for (size_t i = 0; i < COUNT; i++) q[i] = test_make_request(i);
    test_reply r[97];
    rk_reply_info info[97];
    size_t sent = 0, received = 0, step = 0;
    while (received < COUNT) {
        size_t want = 1 + (step++ * 37) % 150;
        if (want > COUNT - sent) want = COUNT - sent;
        size_t n = 0;
        uint64_t first = 0;
        if (want) {
            rk_status s = rk_kernel_send_batch(k, q + sent, sizeof *q, want, RK_NO_WAIT, &n, &first);
            CHECK(s == RK_OK || s == RK_WOULD_BLOCK);
            CHECK_U64_EQ(first, sent + 1);
            sent += n;
        }
        size_t got = 0;
        rk_status s = rk_kernel_receive_batch(k, r, sizeof r[0], info, 97, n ? RK_NO_WAIT : SECONDS(10), &got);
        CHECK(s == RK_OK || s == RK_WOULD_BLOCK);
        for (size_t i = 0; i < got; i++) {
            CHECK_GE(info[i].id, 1);
            CHECK_LE(info[i].id, sent);
            CHECK_EQ(info[i].status, 0);
            size_t index = (size_t)info[i].id - 1;
            CHECK_EQ(seen[index], 0);
            seen[index] = 1;
            by_index[index] = r[i];
        }
        received += got;
    }
    CHECK_OK(rk_kernel_terminate(k, SECONDS(10)));
    rk_kernel_stats st = test_stats(k);
    CHECK_U64_EQ(st.messages_processed, COUNT);
    CHECK_U64_EQ(st.replies_received, COUNT);
    fprintf(stderr, "%-36s %llu launches\n", v->what, (unsigned long long)st.launches);
    CHECK_OK(rk_kernel_destroy(k));
    free(q), free(seen);
    return by_index;
}

static void check_same(const test_reply *a, const test_reply *b, bool running_too) {
    for (size_t i = 0; i < COUNT; i++) {
        CHECK_U64_EQ(a[i].mixed, b[i].mixed);
        if (running_too) CHECK_U64_EQ(a[i].running, b[i].running);
    }
}

/* Short messages are zero-padded: a request of only its first field. */
static void test_short_message(rk_runtime *rt) {
    rk_kernel_desc d = test_desc(RK_MODE_PERSISTENT, 8);
    rk_kernel *k;
    CHECK_OK(rk_kernel_launch(rt, &d, &k));
    CHECK_OK(rk_kernel_activate(k));
    test_request full = {.value = 5, .salt = 77, .fail_with = -3};
    CHECK_OK(rk_kernel_send(k, &full, sizeof full, SECONDS(10), NULL));
    uint64_t value = 10;
    CHECK_OK(rk_kernel_send(k, &value, sizeof value, SECONDS(10), NULL)); /* salt and fail_with must read 0 */
    CHECK_OK(rk_kernel_send(k, NULL, 0, SECONDS(10), NULL));               /* all zero */
    test_reply r;
    rk_reply_info info;
    CHECK_OK(rk_kernel_receive(k, &r, sizeof r, &info, SECONDS(10)));
    CHECK_EQ(info.status, -3);
    CHECK_U64_EQ(r.mixed, 5u * 3u + 77u);
    CHECK_OK(rk_kernel_receive(k, &r, sizeof r, &info, SECONDS(10)));
    CHECK_EQ(info.status, 0);
    CHECK_U64_EQ(r.mixed, 30);
    CHECK_U64_EQ(r.running, 15);
    CHECK_OK(rk_kernel_receive(k, &r, sizeof r, &info, SECONDS(10)));
    CHECK_U64_EQ(info.id, 3);
    CHECK_U64_EQ(r.mixed, 0);
    CHECK_OK(rk_kernel_destroy(k));
}

/* A kernel without replies (reply_size 0) still answers each request. */
static void test_no_reply_payload(rk_runtime *rt) {
    rk_kernel_desc d = test_desc(RK_MODE_TRADITIONAL, 8);
    d.handler = NULL;
    d.handler_source =
        "RK_HANDLER int count(const uint32_t *req, void *resp, uint32_t *n) { (void)resp; *n += *req; return (int)*n; }\n";
    d.handler_name = "count";
    d.message_size = 4;
    d.reply_size = 0;
    d.state_size = 4;
    rk_kernel *k;
    CHECK_OK(rk_kernel_launch(rt, &d, &k));
    CHECK_OK(rk_kernel_activate(k));
    for (uint32_t i = 1; i <= 5; i++) CHECK_OK(rk_kernel_send(k, &i, sizeof i, SECONDS(10), NULL));
    rk_reply_info info[5];
    size_t got = 0;
    while (got < 5) {
        size_t n = 0;
        CHECK_OK(rk_kernel_receive_batch(k, NULL, 0, info + got, 5 - got, SECONDS(10), &n));
        got += n;
    }
    int32_t want[5] = {1, 3, 6, 10, 15};
    for (int i = 0; i < 5; i++) CHECK_EQ(info[i].status, want[i]);
    CHECK_OK(rk_kernel_destroy(k));
}

int main(void) {
    rk_runtime *rt = test_cpu_runtime();
    static const variant stateful[] = {
        {"persistent, host function", RK_MODE_PERSISTENT, false, 1, true},
        {"traditional, host function", RK_MODE_TRADITIONAL, false, 1, true},
        {"persistent, DSL source", RK_MODE_PERSISTENT, true, 1, true},
        {"traditional, DSL source", RK_MODE_TRADITIONAL, true, 1, true},
    };
    test_reply *reference = run_variant(rt, &stateful[0]);
    /* The state is a running sum of the values in id order. */
    uint64_t sum = 0;
    for (size_t i = 0; i < COUNT; i++) {
        test_request q = test_make_request(i);
        sum += q.value;
        CHECK_U64_EQ(reference[i].mixed, test_expected_mixed(q.value, q.salt));
        CHECK_U64_EQ(reference[i].running, sum);
    }
    for (size_t v = 1; v < sizeof stateful / sizeof stateful[0]; v++) {
        test_reply *other = run_variant(rt, &stateful[v]);
        check_same(reference, other, true);
        free(other);
    }
    /* Several workers share one state, so only the stateless part compares. */
    static const variant spread[] = {
        {"persistent, 4 workers", RK_MODE_PERSISTENT, false, 4, false},
        {"persistent, 3 workers, DSL source", RK_MODE_PERSISTENT, true, 3, false},
    };
    for (size_t v = 0; v < sizeof spread / sizeof spread[0]; v++) {
        test_reply *other = run_variant(rt, &spread[v]);
        check_same(reference, other, false);
        free(other);
    }
    free(reference);
    test_short_message(rt);
    test_no_reply_payload(rt);
    CHECK_OK(rk_runtime_destroy(rt));
    printf("kernel modes: ok\n");
    return 0;
}
