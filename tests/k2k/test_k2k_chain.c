/* A chain stage -> stage -> stage -> sink, connected while the kernels run:
 * every message arrives at the sink once, in order, with each stage's mark;
 * the host can still send into the middle of the chain and to the sink.
 * argv[2] = count (default 2000; scripts/device-k2k.sh runs a few dozen
 * under compute-sanitizer). */
#include <unistd.h>

#include "k2k_test.h"

int main(int argc, char **argv) {
    k2k_env env = k2k_open(argc, argv);
    const uint64_t count = argc > 2 ? strtoull(argv[2], NULL, 10) : 2000;
    CHECK(count > 0);
    rk_kernel *k[4] = {
        k2k_launch(&env, "s1", "stage", 64),
        k2k_launch(&env, "s2", "stage", 64),
        k2k_launch(&env, "s3", "stage", 64),
        k2k_launch(&env, "sink", "sink", 64),
    };
    k2k_step("kernels launched", 4);
    for (int i = 0; i < 4; i++) CHECK_OK(rk_kernel_activate(k[i]));
    /* The source's work goes on over the channel: answer the host only on failure. */
    CHECK_OK(rk_channel_set_host_replies(k[0], RK_CHANNEL_REPLY_FAILURES));
    rk_channel *ch[3];
    for (int i = 0; i < 3; i++)
        ch[i] = k2k_connect(k[i], 0, k[i + 1], RK_CHANNEL_HOLD, i == 2 ? RK_CHANNEL_REPLY_ALL : RK_CHANNEL_REPLY_FAILURES,
                            32);
    k2k_step("channels connected", 3);
    rk_channel_stats cs;
    CHECK_OK(rk_channel_stats_get(ch[2], &cs));

    /* Sending and receiving interleaved: the sink's host queue (64) is
     * smaller than count. */
    uint64_t sent = 0, got = 0;
    while (got < count) {
        if (sent < count) {
            k2k_msg m = k2k_make(0, sent);
            rk_status s = rk_kernel_send(k[0], &m, sizeof m, RK_NO_WAIT, NULL);
            if (s == RK_OK) sent++;
            else CHECK_STATUS(s, RK_WOULD_BLOCK);
        }
        k2k_msg r;
        rk_reply_info info;
        rk_status s = rk_kernel_receive(k[3], &r, sizeof r, &info, sent == count ? K2K_SECONDS(20) : RK_NO_WAIT);
        if (s == RK_WOULD_BLOCK || (s == RK_TIMEOUT && sent < count)) continue;
        CHECK_OK(s);
        CHECK_EQ(info.status, 0);
        CHECK_U64_EQ(r.seq, got);
        CHECK_EQ(r.hops, 4);
        CHECK_U64_EQ(r.check, k2k_check_after(got, 4));
        CHECK_U64_EQ(info.id, RK_CHANNEL_MESSAGE_ID(cs.id, got));
        CHECK(info.id & RK_CHANNEL_MESSAGE_BIT);
        CHECK_U64_EQ(RK_CHANNEL_MESSAGE_SEQ(info.id), got);
        CHECK_EQ(RK_CHANNEL_MESSAGE_CHANNEL(info.id), cs.id);
        got++;
        if (count <= 64 || got == count) k2k_step("received", got);
    }
    /* Intermediate stages answered nothing: every message succeeded. The
     * counts are the kernels' own, stored after a pass's emits and replies:
     * a moment after the sink's last reply (long under compute-sanitizer). */
    for (int i = 0; i < 3; i++) {
        k2k_msg r;
        CHECK_STATUS(rk_kernel_receive(k[i], &r, sizeof r, NULL, RK_NO_WAIT), RK_WOULD_BLOCK);
        CHECK_OK(rk_channel_stats_get(ch[i], &cs));
        for (uint64_t waited = 0; cs.delivered < count && waited < K2K_SECONDS(5); waited += 1000000) {
            usleep(1000);
            CHECK_OK(rk_channel_stats_get(ch[i], &cs));
        }
        CHECK_U64_EQ(cs.emitted, count);
        CHECK_U64_EQ(cs.delivered, count);
        CHECK_U64_EQ(cs.refused, 0);
        CHECK_EQ(cs.depth, 0);
        CHECK_EQ(cs.closed, RK_OK);
    }

    /* The host sends into the middle (two stages left) and to the sink. */
    k2k_msg m = k2k_make(1, 5000);
    CHECK_OK(rk_kernel_send(k[2], &m, sizeof m, K2K_SECONDS(5), NULL));
    k2k_msg r;
    rk_reply_info info;
    CHECK_OK(rk_kernel_receive(k[2], &r, sizeof r, &info, K2K_SECONDS(20))); /* host messages are answered */
    CHECK_EQ(info.status, 0);
    CHECK_EQ(r.hops, 1);
    k2k_receive(k[3], &r, &info);
    CHECK_U64_EQ(r.seq, 5000);
    CHECK_EQ(r.hops, 2);
    m = k2k_make(2, 6000);
    uint64_t id = 0;
    CHECK_OK(rk_kernel_send(k[3], &m, sizeof m, K2K_SECONDS(5), &id));
    k2k_receive(k[3], &r, &info);
    CHECK_U64_EQ(info.id, id);
    CHECK((info.id & RK_CHANNEL_MESSAGE_BIT) == 0);
    CHECK_EQ(r.hops, 1);

    k2k_step("terminating", 4);
    k2k_terminate_all(k, 4);
    k2k_step("destroying", 4);
    k2k_destroy_all(k, 4);
    k2k_step("done", 0);
    k2k_close(&env);
    return 0;
}
