/* Terminating a pipeline. Sources first: everything accepted upstream is
 * delivered at the sink, in order. Sink first: what can no longer be
 * delivered is reported (RK_EMIT_CLOSED) by the stage that emitted it;
 * either way every message ends exactly once. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "k2k_test.h"

enum { COUNT = 1000, RING = 16 };

static rk_channel *launch_chain(k2k_env *env, rk_kernel **k) {
    k[0] = k2k_launch(env, "t1", "stage", 2048);
    k[1] = k2k_launch(env, "t2", "stage", 2048);
    k[2] = k2k_launch(env, "tsink", "sink", 2048);
    CHECK_OK(rk_channel_set_host_replies(k[0], RK_CHANNEL_REPLY_FAILURES));
    rk_channel *first = k2k_connect(k[0], 0, k[1], RK_CHANNEL_HOLD, RK_CHANNEL_REPLY_FAILURES, RING);
    k2k_connect(k[1], 0, k[2], RK_CHANNEL_HOLD, RK_CHANNEL_REPLY_ALL, RING);
    return first;
}

static void sources_first(k2k_env *env) {
    rk_kernel *k[3];
    launch_chain(env, k);
    for (int i = 0; i < 3; i++) CHECK_OK(rk_kernel_activate(k[i]));
    for (uint64_t i = 0; i < COUNT; i++) {
        k2k_msg m = k2k_make(0, i);
        CHECK_OK(rk_kernel_send(k[0], &m, sizeof m, K2K_SECONDS(10), NULL));
    }
    k2k_terminate_all(k, 3); /* replies are held for receive */
    for (uint64_t i = 0; i < COUNT; i++) {
        k2k_msg r;
        rk_reply_info info;
        k2k_receive(k[2], &r, &info);
        CHECK_EQ(info.status, 0);
        CHECK_U64_EQ(r.seq, i);
        CHECK_U64_EQ(r.check, k2k_check_after(i, 3));
    }
    k2k_msg r;
    for (int i = 0; i < 3; i++) CHECK_STATUS(rk_kernel_receive(k[i], &r, sizeof r, NULL, RK_NO_WAIT), RK_TERMINATED);
    k2k_destroy_all(k, 3);
}

static void sink_first(k2k_env *env) {
    rk_kernel *k[3];
    rk_channel *held = launch_chain(env, k);
    /* t2 held back: RING messages wait on t1 -> t2, t1 stops (HOLD). */
    CHECK_OK(rk_kernel_activate(k[0]));
    CHECK_OK(rk_kernel_activate(k[2]));
    for (uint64_t i = 0; i < COUNT; i++) {
        k2k_msg m = k2k_make(0, i);
        CHECK_OK(rk_kernel_send(k[0], &m, sizeof m, K2K_SECONDS(10), NULL));
    }
    /* The channel is full before anything terminates (a slow machine, a
     * sanitizer: t1 may not have got there yet). */
    rk_channel_stats st = {0};
    for (int i = 0; i < 4000 && st.depth < RING; i++) {
        CHECK_OK(rk_channel_stats_get(held, &st));
        if (st.depth < RING) usleep(5000);
    }
    CHECK_EQ(st.depth, RING);
    CHECK_OK(rk_kernel_terminate(k[2], K2K_SECONDS(20)));
    CHECK_OK(rk_kernel_terminate(k[1], K2K_SECONDS(20)));
    CHECK_OK(rk_kernel_terminate(k[0], K2K_SECONDS(20)));
    unsigned char *ended = calloc(COUNT, 1);
    CHECK(ended);
    uint64_t total = 0, per_kernel[3] = {0, 0, 0};
    for (int i = 0; i < 3; i++) {
        for (;;) {
            k2k_msg r;
            rk_reply_info info;
            rk_status s = rk_kernel_receive(k[i], &r, sizeof r, &info, RK_NO_WAIT);
            if (s == RK_TERMINATED) break;
            CHECK_OK(s);
            CHECK(r.seq < COUNT);
            CHECK_EQ(ended[r.seq], 0);
            ended[r.seq] = 1;
            /* Upstream of the sink, a message ends only by being reported. */
            if (i < 2) CHECK_EQ(info.status, RK_EMIT_CLOSED);
            per_kernel[i]++;
            total++;
        }
    }
    printf("sink first: %llu reported by t1, %llu by t2, %llu delivered\n", (unsigned long long)per_kernel[0],
           (unsigned long long)per_kernel[1], (unsigned long long)per_kernel[2]);
    CHECK_U64_EQ(total, COUNT);
    /* What waited on t1 -> t2 (at least RING: terminate activates t2 before
     * it closes its input, so t1 may refill the channel once) went no further. */
    CHECK_GE(per_kernel[1], RING);
    CHECK_U64_EQ(per_kernel[0] + per_kernel[1], COUNT);
    CHECK_U64_EQ(per_kernel[2], 0);
    free(ended);
    k2k_destroy_all(k, 3);
}

/* The sink alone terminates while the stages run: t2 sees its output
 * closed while it waits for channel messages (on CUDA, in the lean loop of
 * channel_solo.cu), and every message it takes after that is reported
 * (RK_EMIT_CLOSED), none lost. Session 14 found the lean loop's emit
 * writing such messages into the closed channel with RK_EMIT_OK. */
static void sink_first_running(k2k_env *env) {
    rk_kernel *k[3];
    rk_channel *first = launch_chain(env, k);
    for (int i = 0; i < 3; i++) CHECK_OK(rk_kernel_activate(k[i]));
    const uint64_t half = COUNT / 2;
    for (uint64_t i = 0; i < half; i++) { /* one at a time: the stages wait for channel messages */
        k2k_msg m = k2k_make(0, i), r;
        rk_reply_info info;
        CHECK_OK(rk_kernel_send(k[0], &m, sizeof m, K2K_SECONDS(10), NULL));
        k2k_receive(k[2], &r, &info);
        CHECK_EQ(info.status, 0);
        CHECK_U64_EQ(r.seq, i);
    }
    CHECK_OK(rk_kernel_terminate(k[2], K2K_SECONDS(20))); /* returns once t2 has seen the close */
    for (uint64_t i = half; i < COUNT; i++) {
        k2k_msg m = k2k_make(0, i);
        CHECK_OK(rk_kernel_send(k[0], &m, sizeof m, K2K_SECONDS(10), NULL));
    }
    /* t2 takes every one of them while it runs, before anything else terminates. */
    rk_channel_stats st = {0};
    for (int i = 0; i < 4000 && st.delivered < COUNT; i++) {
        CHECK_OK(rk_channel_stats_get(first, &st));
        if (st.delivered < COUNT) usleep(5000);
    }
    CHECK_U64_EQ(st.delivered, COUNT);
    CHECK_OK(rk_kernel_terminate(k[0], K2K_SECONDS(20)));
    CHECK_OK(rk_kernel_terminate(k[1], K2K_SECONDS(20)));
    uint64_t reported = 0;
    for (;;) {
        k2k_msg r;
        rk_reply_info info;
        rk_status s = rk_kernel_receive(k[1], &r, sizeof r, &info, RK_NO_WAIT);
        if (s == RK_TERMINATED) break;
        CHECK_OK(s);
        CHECK_EQ(info.status, RK_EMIT_CLOSED);
        CHECK(r.seq >= half && r.seq < COUNT);
        reported++;
    }
    printf("sink first while running: %llu delivered, %llu reported by t2\n", (unsigned long long)half,
           (unsigned long long)reported);
    CHECK_U64_EQ(reported, COUNT - half);
    k2k_msg r;
    CHECK_STATUS(rk_kernel_receive(k[0], &r, sizeof r, NULL, RK_NO_WAIT), RK_TERMINATED);
    CHECK_STATUS(rk_kernel_receive(k[2], &r, sizeof r, NULL, RK_NO_WAIT), RK_TERMINATED);
    k2k_destroy_all(k, 3);
}

int main(int argc, char **argv) {
    k2k_env env = k2k_open(argc, argv);
    sources_first(&env);
    sink_first(&env);
    sink_first_running(&env);
    k2k_close(&env);
    return 0;
}
