/* Ordering on one backend (argv[1]: cpu, webgpu, cuda; 77 when it is not
 * here): an ordered kernel whose DSL handler keeps, in its state, the next
 * sequence number it expects per client and counts every message that comes
 * out of order. One sender: thousands of raw sends in batches, each reply
 * saying what the handler expected. Many clients: threads each submitting
 * handles back to back; each client's requests must reach the handler in
 * that client's order, and every reply reaches its caller. */
#include <pthread.h>
#include <time.h>

#include "kernel_test.h"

enum { CLIENTS = 4, BATCH = 64 };

#ifdef RK_TEST_SANITIZED
enum { SINGLE_MESSAGES = 2000, PER_CLIENT = 200 };
#else
enum { SINGLE_MESSAGES = 20000, PER_CLIENT = 1000 };
#endif

static const char order_source[] =
    "typedef struct Req { uint32_t client; uint32_t seq; } Req;\n"
    "typedef struct Resp { uint32_t expected; uint32_t bad; } Resp;\n"
    "typedef struct State { uint32_t next[4]; uint32_t bad; } State;\n"
    "RK_HANDLER int check_order(const Req *req, Resp *resp, State *state) {\n"
    "    uint32_t c = req->client & 3u;\n"
    "    uint32_t expected = state->next[c];\n"
    "    if (req->seq != expected) {\n"
    "        state->bad = state->bad + 1u;\n"
    "    }\n"
    "    state->next[c] = req->seq + 1u;\n"
    "    resp->expected = expected;\n"
    "    resp->bad = state->bad;\n"
    "    return 0;\n"
    "}\n";

typedef struct req { uint32_t client, seq; } req;
typedef struct resp { uint32_t expected, bad; } resp;

static rk_kernel *launch(rk_runtime *rt, uint32_t capacity) {
    rk_kernel_desc d = {
        .name = "order",
        .handler_source = order_source,
        .handler_name = "check_order",
        .message_size = sizeof(req),
        .reply_size = sizeof(resp),
        .state_size = 5 * sizeof(uint32_t),
        .queue_capacity = capacity,
        .ordered = true,
    };
    rk_kernel *k = NULL;
    CHECK_OK(rk_kernel_launch(rt, &d, &k));
    CHECK_OK(rk_kernel_activate(k));
    return k;
}

/* Raw sends from one thread, many in flight: handler order = send order,
 * and replies come back in send order. */
static void test_one_sender(rk_runtime *rt) {
    rk_kernel *k = launch(rt, 256);
    req batch[BATCH];
    uint32_t sent = 0, received = 0;
    while (received < SINGLE_MESSAGES) {
        if (sent < SINGLE_MESSAGES) {
            uint32_t n = SINGLE_MESSAGES - sent < BATCH ? SINGLE_MESSAGES - sent : BATCH;
            for (uint32_t i = 0; i < n; i++) batch[i] = (req){.client = 0, .seq = sent + i};
            size_t accepted = 0;
            rk_status s = rk_kernel_send_batch(k, batch, sizeof batch[0], n, RK_NO_WAIT, &accepted, NULL);
            CHECK(s == RK_OK || s == RK_WOULD_BLOCK);
            sent += (uint32_t)accepted;
        }
        resp replies[BATCH];
        rk_reply_info infos[BATCH];
        size_t got = 0;
        rk_status s = rk_kernel_receive_batch(k, replies, sizeof replies[0], infos, BATCH, MS(1), &got);
        CHECK(s == RK_OK || s == RK_TIMEOUT);
        for (size_t i = 0; i < got; i++, received++) {
            CHECK_U64_EQ(infos[i].id, received + 1u); /* replies in send order */
            CHECK_EQ(replies[i].expected, received);  /* the handler saw them in send order */
            CHECK_EQ(replies[i].bad, 0);
        }
    }
    CHECK_OK(rk_kernel_terminate(k, SECONDS(30)));
    CHECK_OK(rk_kernel_destroy(k));
}

typedef struct client {
    rk_kernel *k;
    uint32_t index;
} client;

/* Keeps a window of handles in flight, waiting on the oldest. */
static void *submit_in_order(void *arg) {
    client *c = arg;
    enum { WINDOW = 8 };
    rk_call *calls[WINDOW] = {0};
    for (uint32_t i = 0; i < PER_CLIENT + WINDOW; i++) {
        rk_call **slot = &calls[i % WINDOW];
        if (*slot) {
            resp r;
            uint32_t seq = i - WINDOW;
            CHECK_OK(rk_call_wait(*slot, &r, sizeof r, NULL, SECONDS(30)));
            CHECK_EQ(r.expected, seq); /* this client's previous request came just before */
            CHECK_OK(rk_call_release(*slot));
            *slot = NULL;
        }
        if (i < PER_CLIENT) {
            req q = {.client = c->index, .seq = i};
            CHECK_OK(rk_kernel_submit(c->k, &q, sizeof q, SECONDS(30), slot));
        }
    }
    return NULL;
}

static void test_many_clients(rk_runtime *rt) {
    rk_kernel *k = launch(rt, 64);
    pthread_t threads[CLIENTS];
    client clients[CLIENTS];
    for (uint32_t t = 0; t < CLIENTS; t++) {
        clients[t] = (client){.k = k, .index = t};
        CHECK_EQ(pthread_create(&threads[t], NULL, submit_in_order, &clients[t]), 0);
    }
    for (uint32_t t = 0; t < CLIENTS; t++) CHECK_EQ(pthread_join(threads[t], NULL), 0);
    /* One more call reads the out-of-order count the state holds. */
    req q = {.client = 0, .seq = PER_CLIENT};
    resp r;
    CHECK_OK(rk_kernel_call(k, &q, sizeof q, &r, sizeof r, NULL, SECONDS(30)));
    CHECK_EQ(r.bad, 0);
    CHECK_EQ(r.expected, PER_CLIENT);
    /* CUDA publishes its processed count after the replies: wait for it. */
    rk_kernel_stats st = test_stats(k);
    for (int tries = 0; tries < 500 && st.messages_processed < (uint64_t)CLIENTS * PER_CLIENT + 1u; tries++) {
        nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
        st = test_stats(k);
    }
    CHECK_U64_EQ(st.messages_processed, (uint64_t)CLIENTS * PER_CLIENT + 1u);
    CHECK_OK(rk_kernel_destroy(k));
}

int main(int argc, char **argv) {
    const char *backend = argc > 1 ? argv[1] : "cpu";
    rk_runtime *rt = NULL;
    rk_runtime_desc d = {.backend = backend};
    rk_status s = rk_runtime_create(&d, &rt);
    if (s == RK_BACKEND_UNAVAILABLE || s == RK_NO_DEVICE) RK_SKIP("%s: %s", backend, rk_last_error());
    CHECK_OK(s);
    test_one_sender(rt);
    test_many_clients(rt);
    CHECK_OK(rk_runtime_destroy(rt));
    return 0;
}
