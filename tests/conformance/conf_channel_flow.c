/* Channels, the graph (channel.h "Shape of the graph", "Replies"): a chain,
 * fan-out and fan-in; every message arrives once, in its channel's order,
 * with each stage's mark and the reply id channel.h defines. */
#include "conf_channel.h"

/* Sends seq [0, count) to src and takes count replies from sink in order,
 * interleaved (the sink's host queue is smaller than count). Each reply has
 * passed `stages` handlers and came over `last` (its id says so). */
static void pump_chain(rk_kernel *src, rk_kernel *sink, uint32_t count, unsigned stages, rk_channel *last) {
    const uint32_t last_id = chan_stats(last).id;
    uint32_t sent = 0, got = 0;
    while (got < count) {
        bool blocked = false;
        if (sent < count) {
            chan_msg m = chan_make(0, sent);
            rk_status s = rk_kernel_send(src, &m, sizeof m, RK_NO_WAIT, NULL);
            if (s == RK_OK) sent++;
            else {
                CHECK_STATUS(s, RK_WOULD_BLOCK);
                blocked = true;
            }
        }
        uint64_t wait = sent == count ? CONF_SECONDS(20) : blocked ? CONF_MS(2) : RK_NO_WAIT;
        chan_msg r;
        rk_reply_info info;
        rk_status s = rk_kernel_receive(sink, &r, sizeof r, &info, wait);
        if (sent < count && (s == RK_WOULD_BLOCK || s == RK_TIMEOUT)) continue;
        CHECK_OK(s);
        CHECK_EQ(info.status, 0);
        CHECK_U64_EQ(r.seq, got); /* in order, none lost, none twice */
        CHECK_EQ(r.hops, stages);
        CHECK_U64_EQ(r.check, chan_check_after(got, stages));
        CHECK_U64_EQ(info.id, RK_CHANNEL_MESSAGE_ID(last_id, got));
        CHECK(info.id & RK_CHANNEL_MESSAGE_BIT);
        CHECK_U64_EQ(RK_CHANNEL_MESSAGE_SEQ(info.id), got);
        CHECK_EQ(RK_CHANNEL_MESSAGE_CHANNEL(info.id), last_id);
        got++;
    }
    chan_msg r;
    CHECK_STATUS(rk_kernel_receive(sink, &r, sizeof r, NULL, CONF_MS(50)), RK_TIMEOUT); /* nothing more */
}

/* stage -> stage -> sink, connected while running. */
static void chain(const conf_env *env) {
    rk_runtime *rt = chan_runtime(env);
    const uint32_t count = chan_count(env, 2000, 150);
    rk_kernel *k[3] = {chan_launch(rt, "s1", "stage", 64), chan_launch(rt, "s2", "stage", 64),
                       chan_launch(rt, "sink", "sink", 64)};
    for (int i = 0; i < 3; i++) CHECK_OK(rk_kernel_activate(k[i]));
    CHECK_OK(rk_channel_set_host_replies(k[0], RK_CHANNEL_REPLY_FAILURES)); /* a pipeline source */
    rk_channel *ch[2] = {chan_connect(k[0], 0, k[1], RK_CHANNEL_HOLD, RK_CHANNEL_REPLY_FAILURES, 16),
                         chan_connect(k[1], 0, k[2], RK_CHANNEL_HOLD, RK_CHANNEL_REPLY_ALL, 16)};
    CHECK_NE(chan_stats(ch[0]).id, chan_stats(ch[1]).id);
    pump_chain(k[0], k[2], count, 3, ch[1]);
    for (int i = 0; i < 2; i++) {
        chan_expect_no_reply(k[i], RK_WOULD_BLOCK); /* every message succeeded: nothing answered */
        rk_channel_stats st = chan_stats(ch[i]);
        CHECK_U64_EQ(st.emitted, count);
        CHECK_U64_EQ(st.delivered, count);
        CHECK_U64_EQ(st.refused, 0);
        CHECK_EQ(st.depth, 0);
        CHECK_EQ(st.capacity, 16);
        CHECK_EQ(st.closed, RK_OK);
    }
    /* The host still sends into the middle of the chain and to the sink;
     * its own messages are answered with their send ids. */
    chan_msg m = chan_make(1, 5000), r;
    rk_reply_info info;
    CHECK_OK(rk_kernel_send(k[1], &m, sizeof m, CONF_SECONDS(5), NULL));
    chan_receive(k[1], &r, &info);
    CHECK_EQ(info.status, 0);
    CHECK_EQ(r.hops, 1);
    chan_receive(k[2], &r, &info);
    CHECK_U64_EQ(r.seq, 5000);
    CHECK_EQ(r.hops, 2);
    uint64_t id = 0;
    m = chan_make(2, 6000);
    CHECK_OK(rk_kernel_send(k[2], &m, sizeof m, CONF_SECONDS(5), &id));
    chan_receive(k[2], &r, &info);
    CHECK_U64_EQ(info.id, id);
    CHECK((info.id & RK_CHANNEL_MESSAGE_BIT) == 0);
    CHECK_EQ(r.hops, 1);
    chan_terminate_all(k, 3);
    chan_destroy_all(k, 3);
    CHECK_OK(rk_runtime_destroy(rt));
}

/* One kernel emitting on two ports: each destination gets every message
 * once, in order. */
static void fan_out(const conf_env *env) {
    rk_runtime *rt = chan_runtime(env);
    const uint32_t count = chan_count(env, 1000, 100);
    rk_kernel *k[3] = {chan_launch(rt, "split", "fanout", 64), chan_launch(rt, "left", "sink", 64),
                       chan_launch(rt, "right", "sink", 64)};
    CHECK_OK(rk_channel_set_host_replies(k[0], RK_CHANNEL_REPLY_FAILURES));
    chan_connect(k[0], 0, k[1], RK_CHANNEL_HOLD, RK_CHANNEL_REPLY_ALL, 16);
    chan_connect(k[0], 1, k[2], RK_CHANNEL_HOLD, RK_CHANNEL_REPLY_ALL, 16);
    for (int i = 0; i < 3; i++) CHECK_OK(rk_kernel_activate(k[i]));
    uint32_t sent = 0, got[2] = {0, 0};
    while (got[0] < count || got[1] < count) {
        bool progress = false;
        if (sent < count) {
            chan_msg m = chan_make(0, sent);
            rk_status s = rk_kernel_send(k[0], &m, sizeof m, RK_NO_WAIT, NULL);
            if (s == RK_OK) sent++, progress = true;
            else CHECK_STATUS(s, RK_WOULD_BLOCK);
        }
        for (int d = 0; d < 2; d++) {
            if (got[d] == count) continue;
            chan_msg r;
            rk_reply_info info;
            uint64_t wait = sent == count ? CONF_SECONDS(20) : progress ? RK_NO_WAIT : CONF_MS(2);
            rk_status s = rk_kernel_receive(k[1 + d], &r, sizeof r, &info, wait);
            if (sent < count && (s == RK_WOULD_BLOCK || s == RK_TIMEOUT)) continue;
            CHECK_OK(s);
            CHECK_EQ(info.status, 0);
            CHECK_U64_EQ(r.seq, got[d]);
            CHECK_EQ(r.hops, 2);
            CHECK_U64_EQ(r.check, chan_check_after(got[d], 2));
            got[d]++;
        }
    }
    chan_terminate_all(k, 3);
    for (int i = 0; i < 3; i++) chan_expect_no_reply(k[i], RK_TERMINATED); /* nothing twice */
    chan_destroy_all(k, 3);
    CHECK_OK(rk_runtime_destroy(rt));
}

/* Two producers into one kernel: per channel in order and once, each
 * reply's id naming the channel it came over; no order between channels. */
static void fan_in(const conf_env *env) {
    rk_runtime *rt = chan_runtime(env);
    const uint32_t count = chan_count(env, 1000, 100);
    rk_kernel *k[3] = {chan_launch(rt, "p0", "stage", 64), chan_launch(rt, "p1", "stage", 64),
                       chan_launch(rt, "join", "sink", 64)};
    uint32_t ids[2];
    for (int p = 0; p < 2; p++) {
        CHECK_OK(rk_channel_set_host_replies(k[p], RK_CHANNEL_REPLY_FAILURES));
        ids[p] = chan_stats(chan_connect(k[p], 0, k[2], RK_CHANNEL_HOLD, RK_CHANNEL_REPLY_ALL, 16)).id;
    }
    CHECK_NE(ids[0], ids[1]);
    for (int i = 0; i < 3; i++) CHECK_OK(rk_kernel_activate(k[i]));
    uint32_t sent[2] = {0, 0}, got[2] = {0, 0};
    while (got[0] + got[1] < 2u * count) {
        bool progress = false;
        for (int p = 0; p < 2; p++) {
            if (sent[p] == count) continue;
            chan_msg m = chan_make((uint32_t)p, sent[p]);
            rk_status s = rk_kernel_send(k[p], &m, sizeof m, RK_NO_WAIT, NULL);
            if (s == RK_OK) sent[p]++, progress = true;
            else CHECK_STATUS(s, RK_WOULD_BLOCK);
        }
        bool all_sent = sent[0] == count && sent[1] == count;
        chan_msg r;
        rk_reply_info info;
        rk_status s = rk_kernel_receive(k[2], &r, sizeof r, &info,
                                        all_sent ? CONF_SECONDS(20) : progress ? RK_NO_WAIT : CONF_MS(2));
        if (!all_sent && (s == RK_WOULD_BLOCK || s == RK_TIMEOUT)) continue;
        CHECK_OK(s);
        CHECK_EQ(info.status, 0);
        CHECK(r.source < 2);
        CHECK_EQ(RK_CHANNEL_MESSAGE_CHANNEL(info.id), ids[r.source]);
        CHECK_U64_EQ(RK_CHANNEL_MESSAGE_SEQ(info.id), got[r.source]);
        CHECK_U64_EQ(r.seq, got[r.source]);
        CHECK_EQ(r.hops, 2);
        CHECK_U64_EQ(r.check, chan_check_after(r.seq, 2));
        got[r.source]++;
    }
    chan_terminate_all(k, 3);
    chan_expect_no_reply(k[2], RK_TERMINATED);
    chan_destroy_all(k, 3);
    CHECK_OK(rk_runtime_destroy(rt));
}

static const conf_check flow_checks[] = {
    {"chain", chain, CONF_SHARED},
    {"fan_out", fan_out, CONF_SHARED},
    {"fan_in", fan_in, CONF_SHARED},
};
CONF_GROUP(conf_group_channel_flow, "channel.flow", flow_checks);
