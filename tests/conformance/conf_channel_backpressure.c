/* Channels, backpressure (channel.h "Backpressure"): a full destination
 * under HOLD stops the producer and then the host's send; under REPORT the
 * producer's emit says RK_EMIT_FULL and the handler reports it; a cycle of
 * HOLD channels is refused, one with a REPORT channel runs and drains.
 * Never a silent drop: every message is delivered or reported, once. */
#include <stdlib.h>

#include "conf_channel.h"

enum { RING = 8, SOURCE_QUEUE = 16 };

/* The destination is launched but not active, so the channel fills. */
static void hold_full_destination(const conf_env *env) {
    rk_runtime *rt = chan_runtime(env);
    rk_kernel *src = chan_launch(rt, "src", "stage", SOURCE_QUEUE), *dst = chan_launch(rt, "dst", "sink", 64);
    CHECK_OK(rk_channel_set_host_replies(src, RK_CHANNEL_REPLY_FAILURES));
    rk_channel *ch = chan_connect(src, 0, dst, RK_CHANNEL_HOLD, RK_CHANNEL_REPLY_ALL, RING);
    CHECK_OK(rk_kernel_activate(src));
    /* Send until the host is refused: first the channel fills (RING), then
     * the source takes nothing more and its host queue fills. A timeout is
     * believed only once the channel is full (a slow source may lag). */
    uint32_t accepted = 0;
    for (;;) {
        chan_msg m = chan_make(0, accepted);
        rk_status s = rk_kernel_send(src, &m, sizeof m, CONF_MS(300), NULL);
        if (s == RK_OK) {
            accepted++;
            CHECK_LE(accepted, RING + SOURCE_QUEUE); /* HOLD: nothing taken beyond the room */
            continue;
        }
        CHECK_STATUS(s, RK_TIMEOUT);
        chan_wait_depth(ch, RING);
        s = rk_kernel_send(src, &m, sizeof m, RK_NO_WAIT, NULL);
        if (s == RK_OK) {
            accepted++;
            continue;
        }
        CHECK_STATUS(s, RK_WOULD_BLOCK);
        break;
    }
    CHECK_GE(accepted, RING);
    chan_msg m = chan_make(0, accepted);
    CHECK_STATUS(rk_kernel_send(src, &m, sizeof m, CONF_MS(50), NULL), RK_TIMEOUT); /* still refused */
    rk_channel_stats st = chan_stats(ch);
    CHECK_U64_EQ(st.emitted, RING);
    CHECK_U64_EQ(st.delivered, 0);
    CHECK_U64_EQ(st.refused, 0); /* HOLD never refuses one emit per message */
    CHECK_EQ(st.depth, RING);
    chan_expect_no_reply(src, RK_WOULD_BLOCK); /* nothing failed */
    chan_expect_no_reply(dst, RK_WOULD_BLOCK); /* inactive: nothing handled */
    /* The destination starts: everything accepted arrives, in order. */
    CHECK_OK(rk_kernel_activate(dst));
    chan_expect_in_order(dst, accepted, 2);
    chan_msg r;
    CHECK_STATUS(rk_kernel_receive(dst, &r, sizeof r, NULL, CONF_MS(50)), RK_TIMEOUT);
    st = chan_stats(ch);
    CHECK_U64_EQ(st.emitted, accepted);
    CHECK_U64_EQ(st.delivered, accepted);
    CHECK_U64_EQ(st.refused, 0);
    rk_kernel *ks[2] = {src, dst};
    chan_terminate_all(ks, 2);
    chan_destroy_all(ks, 2);
    CHECK_OK(rk_runtime_destroy(rt));
}

/* REPORT: the first RING emits fill the channel, each later one returns
 * RK_EMIT_FULL, which the handler returns: its failure reply reaches the
 * host. Nothing waits, nothing is lost. */
static void report_full_destination(const conf_env *env) {
    enum { SENT = RING + 12 };
    rk_runtime *rt = chan_runtime(env);
    rk_kernel *src = chan_launch(rt, "src", "stage", 64), *dst = chan_launch(rt, "dst", "sink", 64);
    CHECK_OK(rk_channel_set_host_replies(src, RK_CHANNEL_REPLY_FAILURES));
    rk_channel *ch = chan_connect(src, 0, dst, RK_CHANNEL_REPORT, RK_CHANNEL_REPLY_ALL, RING);
    CHECK_OK(rk_kernel_activate(src));
    for (uint32_t i = 0; i < SENT; i++) {
        chan_msg m = chan_make(0, i);
        CHECK_OK(rk_kernel_send(src, &m, sizeof m, CONF_SECONDS(5), NULL));
    }
    for (uint32_t i = RING; i < SENT; i++) {
        chan_msg r;
        rk_reply_info info;
        chan_receive(src, &r, &info);
        CHECK_EQ(info.status, RK_EMIT_FULL);
        CHECK_U64_EQ(r.seq, i);
        CHECK_EQ(r.hops, 1);
    }
    chan_expect_no_reply(src, RK_WOULD_BLOCK);
    rk_channel_stats st = chan_stats(ch);
    CHECK_U64_EQ(st.emitted, RING);
    CHECK_U64_EQ(st.refused, SENT - RING);
    CHECK_EQ(st.depth, RING);
    CHECK_OK(rk_kernel_activate(dst));
    chan_expect_in_order(dst, RING, 2);
    /* Room again: the next message goes through. */
    chan_msg m = chan_make(0, SENT), r;
    rk_reply_info info;
    CHECK_OK(rk_kernel_send(src, &m, sizeof m, CONF_SECONDS(5), NULL));
    chan_receive(dst, &r, &info);
    CHECK_EQ(info.status, 0);
    CHECK_U64_EQ(r.seq, SENT);
    CHECK_STATUS(rk_kernel_receive(dst, &r, sizeof r, NULL, CONF_MS(50)), RK_TIMEOUT);
    chan_expect_no_reply(src, RK_WOULD_BLOCK);
    rk_kernel *ks[2] = {src, dst};
    chan_terminate_all(ks, 2);
    chan_destroy_all(ks, 2);
    CHECK_OK(rk_runtime_destroy(rt));
}

/* ---- a cycle a -> b -> a ------------------------------------------------ */

enum { TTL = 5, BURST = 20 };

typedef struct tally {
    unsigned char *ended; /* per seq: 0, or how it ended (1 done, 2 reported) */
    uint32_t size;
    uint32_t done, refused;
} tally;

/* Takes one reply from a (every message ends there) and records how its
 * message ended, if it did; false when none came within timeout. */
static bool take(rk_kernel *a, tally *t, uint64_t timeout) {
    chan_msg r;
    rk_reply_info info;
    rk_status s = rk_kernel_receive(a, &r, sizeof r, &info, timeout);
    if (s == RK_WOULD_BLOCK || s == RK_TIMEOUT) return false;
    CHECK_OK(s);
    if (info.status == 0 && !(r.flags & CHAN_DONE)) return true; /* forwarded: still travelling */
    CHECK(r.seq < t->size);
    CHECK_EQ(t->ended[r.seq], 0); /* exactly once */
    if (info.status == RK_EMIT_FULL) {
        t->ended[r.seq] = 2;
        t->refused++;
    } else {
        CHECK_EQ(info.status, 0);
        CHECK_EQ(r.ttl, 0);
        CHECK_EQ(r.hops, TTL);
        CHECK_U64_EQ(r.check, chan_check_after(r.seq, TTL));
        t->ended[r.seq] = 1;
        t->done++;
    }
    return true;
}

static void cycle(const conf_env *env) {
    rk_runtime *rt = chan_runtime(env);
    const uint32_t count = chan_count(env, 400, 40), ring = 4;
    /* All HOLD: refused, naming the cycle; the same edge as REPORT closes it. */
    rk_kernel *c = chan_launch(rt, "c", "bounce", 16), *d = chan_launch(rt, "d", "bounce", 16);
    chan_connect(c, 0, d, RK_CHANNEL_HOLD, RK_CHANNEL_REPLY_FAILURES, ring);
    rk_channel_desc cd = {.message_size = sizeof(chan_msg), .flow = RK_CHANNEL_HOLD};
    CHECK_STATUS(rk_channel_connect(d, 0, c, &cd, NULL), RK_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(rk_last_error(), "cycle");
    CHECK_STR_CONTAINS(rk_last_error(), "'d' -> 'c' -> 'd'");
    cd.flow = RK_CHANNEL_FLOW_DEFAULT; /* = HOLD */
    CHECK_STATUS(rk_channel_connect(d, 0, c, &cd, NULL), RK_INVALID_ARGUMENT);
    cd.flow = RK_CHANNEL_REPORT;
    CHECK_OK(rk_channel_connect(d, 0, c, &cd, NULL));
    CHECK_OK(rk_kernel_destroy(c));
    CHECK_OK(rk_kernel_destroy(d));

    /* a -> b REPORT, b -> a HOLD: a message bounces until its ttl runs out
     * at a, or a's emit finds the channel full and a reports it. */
    rk_kernel *a = chan_launch(rt, "a", "bounce", 256), *b = chan_launch(rt, "b", "bounce", 64);
    rk_channel *to_b = chan_connect(a, 0, b, RK_CHANNEL_REPORT, RK_CHANNEL_REPLY_FAILURES, ring);
    chan_connect(b, 0, a, RK_CHANNEL_HOLD, RK_CHANNEL_REPLY_ALL, ring);
    tally t = {.ended = calloc(count + BURST, 1), .size = count + BURST};
    CHECK(t.ended != NULL);
    /* b held back: the channel to b fills after `ring` messages and the rest
     * of the burst is reported (deterministic backpressure). */
    CHECK_OK(rk_kernel_activate(a));
    for (uint32_t i = 0; i < BURST; i++) {
        chan_msg m = chan_make(0, count + i);
        m.ttl = TTL;
        CHECK_OK(rk_kernel_send(a, &m, sizeof m, CONF_SECONDS(10), NULL));
    }
    while (t.refused < BURST - ring) {
        if (!take(a, &t, CONF_SECONDS(20))) {
            rk_channel_stats st = chan_stats(to_b);
            fprintf(stderr, "cycle: %u reported, %u done; a -> b emitted %llu delivered %llu refused %llu; b %s\n",
                    t.refused, t.done, (unsigned long long)st.emitted, (unsigned long long)st.delivered,
                    (unsigned long long)st.refused, rk_kernel_state_name(rk_kernel_get_state(b)));
            CHECK(!"a reported every message the full channel refused");
        }
    }
    CHECK_EQ(t.refused, BURST - ring);
    rk_channel_stats st = chan_stats(to_b);
    CHECK_U64_EQ(st.emitted, ring);
    CHECK_U64_EQ(st.refused, BURST - ring);
    /* b starts: the `ring` messages on the channel bounce on; each ends once,
     * done, or reported where a's emit found the channel full again (REPORT
     * may be conservative while b has not yet freed the slots it took). */
    CHECK_OK(rk_kernel_activate(b));
    while (t.done + t.refused < BURST) CHECK(take(a, &t, CONF_SECONDS(20)));
    /* Free running: the cycle drains; every message ends once. */
    uint32_t sent = 0;
    t.done = t.refused = 0;
    while (t.done + t.refused < count) {
        bool blocked = false;
        if (sent < count) {
            chan_msg m = chan_make(0, sent);
            m.ttl = TTL;
            rk_status s = rk_kernel_send(a, &m, sizeof m, RK_NO_WAIT, NULL);
            if (s == RK_OK) sent++;
            else {
                CHECK_STATUS(s, RK_WOULD_BLOCK);
                blocked = true;
            }
        }
        bool got = take(a, &t, sent == count ? CONF_SECONDS(20) : blocked ? CONF_MS(2) : RK_NO_WAIT);
        if (sent == count) CHECK(got); /* drains: no reply for 20 s means stuck */
    }
    for (uint32_t i = 0; i < count; i++) CHECK(t.ended[i] != 0);
    rk_kernel *ks[2] = {a, b};
    chan_terminate_all(ks, 2);
    chan_destroy_all(ks, 2);
    free(t.ended);
    CHECK_OK(rk_runtime_destroy(rt));
}

static const conf_check backpressure_checks[] = {
    {"hold_full_destination", hold_full_destination, CONF_SHARED},
    {"report_full_destination", report_full_destination, CONF_SHARED},
    {"cycle", cycle, CONF_SHARED},
};
CONF_GROUP(conf_group_channel_backpressure, "channel.backpressure", backpressure_checks);
