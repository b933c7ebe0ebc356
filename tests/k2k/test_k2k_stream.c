/* Many messages through a 4-stage chain (stage -> stage -> stage -> sink):
 * every one arrives exactly once, in order, with each stage's mark.
 * argv[2] = count; default 10 M, 200 k under a sanitizer (CI time). */
#include <stdlib.h>

#include "k2k_test.h"

enum { CHUNK = 512 };

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    k2k_env env = k2k_open(argc, argv);
#ifdef K2K_SANITIZED
    uint64_t count = 200000;
#else
    uint64_t count = 10000000;
#endif
    if (argc > 2) count = strtoull(argv[2], NULL, 10);
    rk_kernel *k[4] = {
        k2k_launch(&env, "s1", "stage", 4096),
        k2k_launch(&env, "s2", "stage", 4096),
        k2k_launch(&env, "s3", "stage", 4096),
        k2k_launch(&env, "sink", "sink", 4096),
    };
    CHECK_OK(rk_channel_set_host_replies(k[0], RK_CHANNEL_REPLY_FAILURES));
    rk_channel *ch[3];
    for (int i = 0; i < 3; i++)
        ch[i] = k2k_connect(k[i], 0, k[i + 1], RK_CHANNEL_HOLD, i == 2 ? RK_CHANNEL_REPLY_ALL : RK_CHANNEL_REPLY_FAILURES,
                            4096);
    for (int i = 0; i < 4; i++) CHECK_OK(rk_kernel_activate(k[i]));
    rk_channel_stats last;
    CHECK_OK(rk_channel_stats_get(ch[2], &last));

    static k2k_msg out[CHUNK], in[CHUNK];
    static rk_reply_info infos[CHUNK];
    uint64_t sent = 0, got = 0;
    double t0 = now_s();
    while (got < count) {
        if (sent < count) {
            size_t n = count - sent < CHUNK ? (size_t)(count - sent) : CHUNK;
            for (size_t i = 0; i < n; i++) out[i] = k2k_make(0, sent + i);
            size_t accepted = 0;
            rk_status s = rk_kernel_send_batch(k[0], out, sizeof out[0], n, RK_NO_WAIT, &accepted, NULL);
            if (s != RK_OK) CHECK_STATUS(s, RK_WOULD_BLOCK);
            sent += accepted;
        }
        size_t n = 0;
        rk_status s = rk_kernel_receive_batch(k[3], in, sizeof in[0], infos, CHUNK,
                                              sent == count ? K2K_SECONDS(20) : RK_NO_WAIT, &n);
        if (s == RK_WOULD_BLOCK) continue;
        CHECK_OK(s);
        for (size_t i = 0; i < n; i++, got++) {
            if (in[i].seq != got || in[i].hops != 4 || in[i].check != k2k_check_after(got, 4) || infos[i].status != 0 ||
                RK_CHANNEL_MESSAGE_SEQ(infos[i].id) != got) {
                fprintf(stderr, "message %llu: seq %llu hops %u status %d\n", (unsigned long long)got,
                        (unsigned long long)in[i].seq, in[i].hops, infos[i].status);
                return 1;
            }
        }
    }
    double secs = now_s() - t0;
    printf("%llu messages through 4 stages in %.2f s: %.2f M msg/s\n", (unsigned long long)count, secs,
           (double)count / secs / 1e6);
    for (int i = 0; i < 3; i++) {
        CHECK_OK(rk_channel_stats_get(ch[i], &last));
        CHECK_U64_EQ(last.emitted, count);
        CHECK_U64_EQ(last.delivered, count);
    }
    k2k_msg r;
    CHECK_STATUS(rk_kernel_receive(k[0], &r, sizeof r, NULL, RK_NO_WAIT), RK_WOULD_BLOCK); /* no failures */
    k2k_terminate_all(k, 4);
    k2k_destroy_all(k, 4);
    k2k_close(&env);
    return 0;
}
