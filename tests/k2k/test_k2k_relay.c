/* Channels between kernels of two runtimes, through the host relay:
 *     test_k2k_relay to <backend>     a CPU stage feeds a sink on <backend>
 *     test_k2k_relay from <backend>   a stage on <backend> feeds a CPU sink
 * Every message arrives once, in order, with both kernels' marks and the
 * channel's ids; a small channel keeps the source waiting on backpressure;
 * terminating source then destination delivers everything accepted, with
 * nothing received before. Skips (77) when <backend> is absent, or cannot
 * build the handler or be a relay source yet (said why). */
#include <unistd.h>

#include "k2k_test.h"

/* DRAINED fits what the queues and channels between source and sink hold. */
enum { COUNT = 3000, DRAINED = 60 };

static rk_runtime *open_runtime(const char *backend) {
    rk_runtime_desc d = {.backend = backend};
    rk_runtime *rt = NULL;
    rk_status s = rk_runtime_create(&d, &rt);
    if (s == RK_BACKEND_UNAVAILABLE || s == RK_NO_DEVICE || s == RK_UNKNOWN_BACKEND)
        RK_SKIP("backend %s: %s", backend, rk_last_error());
    CHECK_OK(s);
    return rt;
}

static rk_kernel *launch(rk_runtime *rt, const char *backend, const char *name, const char *handler) {
    rk_kernel *k = NULL;
    rk_status s = k2k_try_launch(rt, name, handler, 64, &k);
    if (s == RK_COMPILE_FAILED || s == RK_PARSE_ERROR || s == RK_UNSUPPORTED)
        RK_SKIP("backend %s cannot build handler '%s' yet: %s", backend, handler, rk_last_error());
    CHECK_OK(s);
    return k;
}

/* Sends COUNT messages to src while receiving them from dst. */
static void stream(rk_kernel *src, rk_kernel *dst, uint32_t channel_id) {
    uint64_t sent = 0, got = 0;
    while (got < COUNT) {
        if (sent < COUNT) {
            k2k_msg m = k2k_make(0, sent);
            rk_status s = rk_kernel_send(src, &m, sizeof m, RK_NO_WAIT, NULL);
            if (s == RK_OK) sent++;
            else CHECK_STATUS(s, RK_WOULD_BLOCK);
        }
        k2k_msg r;
        rk_reply_info info;
        rk_status s = rk_kernel_receive(dst, &r, sizeof r, &info, sent == COUNT ? K2K_SECONDS(20) : RK_NO_WAIT);
        if (s == RK_WOULD_BLOCK || (s == RK_TIMEOUT && sent < COUNT)) continue;
        CHECK_OK(s);
        CHECK_EQ(info.status, 0);
        CHECK_U64_EQ(r.seq, got);
        CHECK_EQ(r.hops, 2);
        CHECK_U64_EQ(r.check, k2k_check_after(got, 2));
        CHECK_U64_EQ(info.id, RK_CHANNEL_MESSAGE_ID(channel_id, got));
        got++;
    }
}

/* A relayed destination that crashes (CPU to CPU; the sanitizers own
 * SIGSEGV): every message ends once, answered by it (ok, or RK_DEVICE_FAULT
 * from the crash on) or counted undelivered on the channel; later emits
 * report RK_EMIT_FAULTED to the source's handler. */
static void faulting_destination(rk_runtime *src_rt, rk_runtime *dst_rt) {
#ifdef K2K_SANITIZED
    (void)src_rt, (void)dst_rt;
    printf("faulting destination: skipped (the sanitizer owns SIGSEGV)\n");
#else
    enum { FIRST = 12, LATER = 4 };
    rk_kernel *src = launch(src_rt, "cpu", "feeder", "stage"), *dst = launch(dst_rt, "cpu", "crasher", "crash");
    CHECK_OK(rk_channel_set_host_replies(src, RK_CHANNEL_REPLY_FAILURES));
    CHECK_OK(rk_kernel_activate(src));
    CHECK_OK(rk_kernel_activate(dst));
    rk_channel_desc cd = {.message_size = sizeof(k2k_msg), .capacity = 16, .replies = RK_CHANNEL_REPLY_ALL};
    rk_channel *ch = NULL;
    CHECK_OK(rk_channel_connect(src, 0, dst, &cd, &ch));
    for (uint64_t i = 0; i < FIRST; i++) {
        k2k_msg m = k2k_make(0, i);
        CHECK_OK(rk_kernel_send(src, &m, sizeof m, K2K_SECONDS(5), NULL));
    }
    rk_channel_stats st;
    for (int i = 0; i < 2000; i++) {
        CHECK_OK(rk_channel_stats_get(ch, &st));
        if (st.closed != RK_OK && st.emitted == FIRST) break;
        usleep(5000);
    }
    CHECK_EQ(st.closed, RK_DEVICE_FAULT);
    CHECK_U64_EQ(st.emitted, FIRST);
    uint64_t answered = 0;
    k2k_msg r;
    rk_reply_info info;
    while (rk_kernel_receive(dst, &r, sizeof r, &info, K2K_SECONDS(1)) == RK_OK) {
        CHECK_U64_EQ(RK_CHANNEL_MESSAGE_SEQ(info.id), answered); /* in order */
        CHECK_EQ(info.status, answered < 7 ? 0 : RK_DEVICE_FAULT);
        answered++;
    }
    CHECK_GE(answered, 8); /* up to the crash, at least */
    CHECK_U64_EQ(answered + (st.emitted - st.delivered), FIRST);
    for (uint64_t i = FIRST; i < FIRST + LATER; i++) {
        k2k_msg m = k2k_make(0, i);
        CHECK_OK(rk_kernel_send(src, &m, sizeof m, K2K_SECONDS(5), NULL));
        CHECK_OK(rk_kernel_receive(src, &r, sizeof r, &info, K2K_SECONDS(10)));
        CHECK_EQ(info.status, RK_EMIT_FAULTED);
        CHECK_U64_EQ(r.seq, i);
    }
    CHECK_OK(rk_kernel_terminate(src, K2K_SECONDS(10)));
    CHECK_OK(rk_kernel_destroy(src));
    CHECK_OK(rk_kernel_destroy(dst));
    printf("faulting destination: %llu answered, %llu undelivered, later emits reported\n",
           (unsigned long long)answered, (unsigned long long)(FIRST - answered));
#endif
}

int main(int argc, char **argv) {
    if (argc < 3 || (strcmp(argv[1], "to") != 0 && strcmp(argv[1], "from") != 0)) {
        fprintf(stderr, "usage: %s to|from <backend>\n", argv[0]);
        return 2;
    }
    bool to = strcmp(argv[1], "to") == 0;
    const char *other = argv[2];
    rk_runtime *cpu = open_runtime("cpu"), *peer = open_runtime(other);
    rk_runtime *src_rt = to ? cpu : peer, *dst_rt = to ? peer : cpu;
    const char *src_backend = to ? "cpu" : other, *dst_backend = to ? other : "cpu";
    rk_kernel *src = launch(src_rt, src_backend, "source", "stage");
    rk_kernel *dst = launch(dst_rt, dst_backend, "sink", "sink");
    rk_status s;
    CHECK_OK(rk_kernel_activate(src));
    CHECK_OK(rk_kernel_activate(dst));
    /* The source answers the host only on failure (where its backend can say so). */
    s = rk_channel_set_host_replies(src, RK_CHANNEL_REPLY_FAILURES);
    if (s != RK_UNSUPPORTED) CHECK_OK(s);

    rk_channel_desc cd = {.message_size = sizeof(k2k_msg), .capacity = 16, .replies = RK_CHANNEL_REPLY_ALL};
    rk_channel *ch = NULL;
    s = rk_channel_connect(src, 0, dst, &cd, &ch);
    if (s == RK_UNSUPPORTED) RK_SKIP("%s -> %s: %s", src_backend, dst_backend, rk_last_error());
    CHECK_OK(s);
    rk_channel_stats cs;
    CHECK_OK(rk_channel_stats_get(ch, &cs));
    CHECK_EQ(cs.capacity, 16);

    stream(src, dst, cs.id);
    CHECK_OK(rk_channel_stats_get(ch, &cs));
    CHECK_U64_EQ(cs.emitted, COUNT);
    CHECK_U64_EQ(cs.delivered, COUNT);
    CHECK_U64_EQ(cs.refused, 0);

    /* A second channel into the same sink is refused on the taken port. */
    CHECK_STATUS(rk_channel_connect(src, 0, dst, &cd, NULL), RK_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(rk_last_error(), "already connected");

    /* Terminate drains: DRAINED more, nothing received until both ended. */
    for (uint64_t i = 0; i < DRAINED; i++) {
        k2k_msg m = k2k_make(0, COUNT + i);
        CHECK_OK(rk_kernel_send(src, &m, sizeof m, K2K_SECONDS(20), NULL));
    }
    CHECK_OK(rk_kernel_terminate(src, K2K_SECONDS(20)));
    CHECK_OK(rk_kernel_terminate(dst, K2K_SECONDS(20)));
    for (uint64_t i = 0; i < DRAINED; i++) {
        k2k_msg r;
        rk_reply_info info;
        CHECK_OK(rk_kernel_receive(dst, &r, sizeof r, &info, K2K_SECONDS(5)));
        CHECK_U64_EQ(r.seq, COUNT + i);
        CHECK_EQ(r.hops, 2);
    }
    k2k_msg r;
    CHECK_STATUS(rk_kernel_receive(dst, &r, sizeof r, NULL, RK_NO_WAIT), RK_TERMINATED);
    CHECK_STATUS(rk_kernel_receive(src, &r, sizeof r, NULL, RK_NO_WAIT), RK_TERMINATED);

    CHECK_OK(rk_kernel_destroy(dst));
    CHECK_OK(rk_kernel_destroy(src));
    if (strcmp(other, "cpu") == 0) faulting_destination(src_rt, dst_rt);
    CHECK_OK(rk_runtime_destroy(peer));
    CHECK_OK(rk_runtime_destroy(cpu));
    printf("relay %s -> %s: %d messages in order, %d drained on terminate\n", src_backend, dst_backend, COUNT,
           DRAINED);
    return 0;
}
