/* A cycle A -> B -> A. The all-HOLD version is refused at connect (it could
 * deadlock when full); with A -> B as REPORT it runs: a message bounces
 * until its ttl runs out at A, or A's emit finds the channel full and A
 * answers the host with RK_EMIT_FULL. Every message ends exactly once,
 * either way; nothing is dropped and nothing hangs. */
#include <stdlib.h>

#include "k2k_test.h"

enum { BURST = 100, COUNT = 3000, TTL = 5, RING = 4 };

typedef struct tally {
    unsigned char *ended; /* per seq: 0, or how it ended (1 done, 2 refused) */
    uint64_t done, refused;
} tally;

/* Takes one reply from A and records how its message ended, if it did. */
static bool take(rk_kernel *a, tally *t, uint64_t timeout) {
    k2k_msg r;
    rk_reply_info info;
    rk_status s = rk_kernel_receive(a, &r, sizeof r, &info, timeout);
    if (s == RK_WOULD_BLOCK) return false;
    CHECK_OK(s);
    if (info.status == 0 && !(r.flags & K2K_DONE)) return true; /* forwarded: still travelling */
    CHECK(r.seq < COUNT + BURST);
    CHECK_EQ(t->ended[r.seq], 0); /* exactly once */
    if (info.status == RK_EMIT_FULL) {
        t->ended[r.seq] = 2;
        t->refused++;
    } else {
        CHECK_EQ(info.status, 0);
        CHECK_EQ(r.ttl, 0);
        CHECK_EQ(r.hops, TTL);
        CHECK_U64_EQ(r.check, k2k_check_after(r.seq, TTL));
        t->ended[r.seq] = 1;
        t->done++;
    }
    return true;
}

int main(int argc, char **argv) {
    k2k_env env = k2k_open(argc, argv);

    /* All HOLD: refused, naming the cycle. */
    rk_kernel *c = k2k_launch(&env, "c", "bounce", 16), *d = k2k_launch(&env, "d", "bounce", 16);
    k2k_connect(c, 0, d, RK_CHANNEL_HOLD, RK_CHANNEL_REPLY_FAILURES, RING);
    rk_channel_desc cd = {.message_size = sizeof(k2k_msg), .flow = RK_CHANNEL_HOLD};
    CHECK_STATUS(rk_channel_connect(d, 0, c, &cd, NULL), RK_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(rk_last_error(), "cycle");
    CHECK_STR_CONTAINS(rk_last_error(), "'d' -> 'c' -> 'd'");
    /* The same edge as REPORT closes the cycle legally. */
    cd.flow = RK_CHANNEL_REPORT;
    CHECK_OK(rk_channel_connect(d, 0, c, &cd, NULL));
    CHECK_OK(rk_kernel_destroy(c));
    CHECK_OK(rk_kernel_destroy(d));

    rk_kernel *a = k2k_launch(&env, "a", "bounce", 4096), *b = k2k_launch(&env, "b", "bounce", 64);
    k2k_connect(a, 0, b, RK_CHANNEL_REPORT, RK_CHANNEL_REPLY_FAILURES, RING);
    k2k_connect(b, 0, a, RK_CHANNEL_HOLD, RK_CHANNEL_REPLY_ALL, RING);
    tally t = {.ended = calloc(COUNT + BURST, 1)};
    CHECK(t.ended);

    /* B held back: A's channel to B fills after RING messages, the rest of
     * the burst is answered RK_EMIT_FULL (deterministic backpressure). */
    CHECK_OK(rk_kernel_activate(a));
    for (uint64_t i = 0; i < BURST; i++) {
        k2k_msg m = k2k_make(0, COUNT + i);
        m.ttl = TTL;
        CHECK_OK(rk_kernel_send(a, &m, sizeof m, K2K_SECONDS(10), NULL));
    }
    while (t.refused < BURST - RING) CHECK(take(a, &t, K2K_SECONDS(60)));
    CHECK_U64_EQ(t.refused, BURST - RING);
    /* B runs: the RING messages travel on. One may still end refused: A's
     * emit back into the REPORT channel can find it full while B holds the
     * slots it took (seen under TSan). Each ends exactly once either way. */
    CHECK_OK(rk_kernel_activate(b));
    while (t.done + t.refused < BURST) CHECK(take(a, &t, K2K_SECONDS(60)));
    CHECK_GE(t.done, 1);

    /* Free running: backpressure as it comes; every message ends once. */
    uint64_t sent = 0;
    t.done = t.refused = 0;
    while (t.done + t.refused < COUNT) {
        if (sent < COUNT) {
            k2k_msg m = k2k_make(0, sent);
            m.ttl = TTL;
            rk_status s = rk_kernel_send(a, &m, sizeof m, RK_NO_WAIT, NULL);
            if (s == RK_OK) sent++;
            else CHECK_STATUS(s, RK_WOULD_BLOCK);
        }
        take(a, &t, sent == COUNT ? K2K_SECONDS(60) : RK_NO_WAIT);
    }
    printf("cycle: %llu done, %llu refused (full) of %d\n", (unsigned long long)t.done,
           (unsigned long long)t.refused, COUNT);
    rk_kernel *ks[2] = {a, b};
    k2k_terminate_all(ks, 2);
    k2k_destroy_all(ks, 2);
    free(t.ended);
    k2k_close(&env);
    return 0;
}
