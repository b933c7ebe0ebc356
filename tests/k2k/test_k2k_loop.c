/* One kernel whose port 0 is connected to its own input (a REPORT channel:
 * a loop is a cycle). A message bounces TTL times through the kernel's own
 * channel, so one kernel exercises emit, the channel poll, the replies to
 * channel messages and, at terminate, the close handshake with itself.
 * Every message ends exactly once: done after TTL hops, or refused
 * (RK_EMIT_FULL) when the loop is full (the host keeps a few in flight). It needs no second kernel running
 * beside it, so compute-sanitizer can check the channel code even where it
 * runs kernels one at a time (scripts/device-k2k.sh).
 * argv[2] = count (default 2000). */
#include <stdlib.h>

#include "k2k_test.h"

enum { TTL = 3, RING = 16, IN_FLIGHT = 4 };

int main(int argc, char **argv) {
    k2k_env env = k2k_open(argc, argv);
    const uint64_t count = argc > 2 ? strtoull(argv[2], NULL, 10) : 2000;
    CHECK(count > 0);
    rk_kernel *k = k2k_launch(&env, "loop", "bounce", 64);
    rk_channel *ch = k2k_connect(k, 0, k, RK_CHANNEL_REPORT, RK_CHANNEL_REPLY_ALL, RING);
    k2k_step("launched and connected", 1);
    CHECK_OK(rk_kernel_activate(k));
    k2k_step("activated", 1);
    unsigned char *ended = calloc(count, 1);
    CHECK(ended);

    uint64_t sent = 0, done = 0, refused = 0, forwarded = 0;
    while (done + refused < count) {
        /* A few at a time: more would keep the loop full of first hops, and
         * every later hop would be refused (REPORT does that, by design). */
        if (sent < count && sent - done - refused < IN_FLIGHT) {
            k2k_msg m = k2k_make(0, sent);
            m.ttl = TTL;
            rk_status s = rk_kernel_send(k, &m, sizeof m, RK_NO_WAIT, NULL);
            if (s == RK_OK) sent++;
            else CHECK_STATUS(s, RK_WOULD_BLOCK);
        }
        k2k_msg r;
        rk_reply_info info;
        const bool wait = sent == count || sent - done - refused >= IN_FLIGHT;
        rk_status s = rk_kernel_receive(k, &r, sizeof r, &info, wait ? K2K_SECONDS(20) : RK_NO_WAIT);
        if (s == RK_WOULD_BLOCK) continue;
        CHECK_OK(s);
        if (info.status == 0 && !(r.flags & K2K_DONE)) { /* still bouncing */
            forwarded++;
            continue;
        }
        CHECK(r.seq < count);
        CHECK_EQ(ended[r.seq], 0); /* exactly once */
        if (info.status == RK_EMIT_FULL) {
            ended[r.seq] = 2;
            refused++;
        } else {
            CHECK_EQ(info.status, 0);
            CHECK_EQ(r.ttl, 0);
            CHECK_EQ(r.hops, TTL);
            CHECK_U64_EQ(r.check, k2k_check_after(r.seq, TTL));
            /* The last hop came over the loop channel: its id says so. */
            CHECK(info.id & RK_CHANNEL_MESSAGE_BIT);
            ended[r.seq] = 1;
            done++;
        }
        if (count <= 64) k2k_step("ended", done + refused);
    }
    CHECK(done > 0);
    rk_channel_stats cs;
    CHECK_OK(rk_channel_stats_get(ch, &cs));
    printf("loop: %llu done, %llu refused (full) of %llu; %llu forwarded replies; channel: %llu emitted, %llu "
           "delivered\n",
           (unsigned long long)done, (unsigned long long)refused, (unsigned long long)count,
           (unsigned long long)forwarded, (unsigned long long)cs.emitted, (unsigned long long)cs.delivered);
    /* Terminate closes the kernel's input, which is its own output: the
     * handshake with itself must not hang. */
    CHECK_OK(rk_kernel_terminate(k, K2K_SECONDS(20)));
    CHECK_OK(rk_channel_stats_get(ch, &cs));
    CHECK_U64_EQ(cs.emitted, cs.delivered);
    CHECK_OK(rk_kernel_destroy(k));
    free(ended);
    k2k_close(&env);
    return 0;
}
