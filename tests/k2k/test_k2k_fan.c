/* Fan-out (one kernel emitting on two ports) and fan-in (two producers into
 * one kernel): per channel, every message once and in order. */
#include "k2k_test.h"

enum { COUNT = 3000 };

/* Receives COUNT replies from each of `sinks` sinks... checked per channel. */
static void fan_out(k2k_env *env) {
    rk_kernel *k[3] = {
        k2k_launch(env, "split", "fanout", 256),
        k2k_launch(env, "left", "sink", 256),
        k2k_launch(env, "right", "sink", 256),
    };
    CHECK_OK(rk_channel_set_host_replies(k[0], RK_CHANNEL_REPLY_FAILURES));
    k2k_connect(k[0], 0, k[1], RK_CHANNEL_HOLD, RK_CHANNEL_REPLY_ALL, 64);
    k2k_connect(k[0], 1, k[2], RK_CHANNEL_HOLD, RK_CHANNEL_REPLY_ALL, 64);
    for (int i = 0; i < 3; i++) CHECK_OK(rk_kernel_activate(k[i]));
    uint64_t sent = 0, got[2] = {0, 0};
    while (got[0] < COUNT || got[1] < COUNT) {
        if (sent < COUNT) {
            k2k_msg m = k2k_make(0, sent);
            if (rk_kernel_send(k[0], &m, sizeof m, RK_NO_WAIT, NULL) == RK_OK) sent++;
        }
        for (int s = 0; s < 2; s++) {
            k2k_msg r;
            rk_reply_info info;
            rk_status st = rk_kernel_receive(k[1 + s], &r, sizeof r, &info, RK_NO_WAIT);
            if (st == RK_WOULD_BLOCK) continue;
            CHECK_OK(st);
            CHECK_EQ(info.status, 0);
            CHECK_U64_EQ(r.seq, got[s]);
            CHECK_EQ(r.hops, 2);
            CHECK_U64_EQ(r.check, k2k_check_after(got[s], 2));
            got[s]++;
        }
    }
    k2k_terminate_all(k, 3);
    k2k_msg r;
    CHECK_STATUS(rk_kernel_receive(k[1], &r, sizeof r, NULL, RK_NO_WAIT), RK_TERMINATED); /* nothing twice */
    k2k_destroy_all(k, 3);
}

static void fan_in(k2k_env *env) {
    rk_kernel *k[3] = {
        k2k_launch(env, "p0", "stage", 256),
        k2k_launch(env, "p1", "stage", 256),
        k2k_launch(env, "join", "sink", 256),
    };
    rk_channel *ch[2];
    for (int p = 0; p < 2; p++) {
        CHECK_OK(rk_channel_set_host_replies(k[p], RK_CHANNEL_REPLY_FAILURES));
        ch[p] = k2k_connect(k[p], 0, k[2], RK_CHANNEL_HOLD, RK_CHANNEL_REPLY_ALL, 32);
    }
    uint32_t ids[2];
    for (int p = 0; p < 2; p++) {
        rk_channel_stats st;
        CHECK_OK(rk_channel_stats_get(ch[p], &st));
        ids[p] = st.id;
    }
    CHECK_NE(ids[0], ids[1]);
    for (int i = 0; i < 3; i++) CHECK_OK(rk_kernel_activate(k[i]));
    uint64_t sent[2] = {0, 0}, got[2] = {0, 0};
    while (got[0] + got[1] < 2u * COUNT) {
        for (int p = 0; p < 2; p++) {
            if (sent[p] == COUNT) continue;
            k2k_msg m = k2k_make((uint32_t)p, sent[p]);
            if (rk_kernel_send(k[p], &m, sizeof m, RK_NO_WAIT, NULL) == RK_OK) sent[p]++;
        }
        k2k_msg r;
        rk_reply_info info;
        rk_status st = rk_kernel_receive(k[2], &r, sizeof r, &info, RK_NO_WAIT);
        if (st == RK_WOULD_BLOCK) continue;
        CHECK_OK(st);
        CHECK(r.source < 2);
        CHECK_EQ(RK_CHANNEL_MESSAGE_CHANNEL(info.id), ids[r.source]); /* came over its producer's channel */
        CHECK_U64_EQ(r.seq, got[r.source]);                            /* in order per channel */
        CHECK_EQ(r.hops, 2);
        CHECK_U64_EQ(r.check, k2k_check_after(r.seq, 2));
        got[r.source]++;
    }
    k2k_terminate_all(k, 3);
    k2k_msg r;
    CHECK_STATUS(rk_kernel_receive(k[2], &r, sizeof r, NULL, RK_NO_WAIT), RK_TERMINATED);
    k2k_destroy_all(k, 3);
}

int main(int argc, char **argv) {
    k2k_env env = k2k_open(argc, argv);
    fan_out(&env);
    fan_in(&env);
    k2k_close(&env);
    return 0;
}
