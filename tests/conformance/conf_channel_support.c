/* Helpers of the channel checks: the DSL handlers, launching and
 * connecting, and waiting with a bound. */
#include <string.h>
#include <unistd.h>

#include "conf_channel.h"
#include "support/channel_handlers.h"


static bool listed_with_channels(const conf_env *env) {
    return conf_is(env, "cpu") || conf_is(env, "webgpu") || conf_is(env, "cuda");
}

rk_runtime *chan_runtime(const conf_env *env) {
    rk_runtime *rt = conf_runtime(env);
    if (listed_with_channels(env)) return rt;
    rk_kernel *a = chan_launch(rt, "probe_a", "sink", 16), *b = chan_launch(rt, "probe_b", "sink", 16);
    rk_channel_desc cd = {.message_size = sizeof(chan_msg)};
    rk_status s = rk_channel_connect(a, 0, b, &cd, NULL);
    CHECK_STATUS(s, RK_UNSUPPORTED);
    RK_SKIP("channel.h lists no channels for backend %s, and it refuses them: %s", env->backend, rk_last_error());
}

uint32_t chan_count(const conf_env *env, uint32_t cpu_count, uint32_t webgpu_count) {
    return conf_is(env, "webgpu") ? webgpu_count : cpu_count;
}

rk_kernel_desc chan_kernel_desc(const char *name, const char *handler, uint32_t capacity) {
    rk_kernel_desc d = {
        .name = name,
        .handler_source = channel_handlers_source,
        .handler_name = handler,
        .message_size = sizeof(chan_msg),
        .reply_size = sizeof(chan_msg),
        .queue_capacity = capacity,
        .workers = 1,
        .ordered = true, /* channel.h: CUDA channels need one worker warp */
    };
    return d;
}

rk_status chan_try_launch(rk_runtime *rt, const char *name, const char *handler, uint32_t capacity,
                          rk_kernel **out) {
    rk_kernel_desc d = chan_kernel_desc(name, handler, capacity);
    return rk_kernel_launch(rt, &d, out);
}

rk_kernel *chan_launch(rk_runtime *rt, const char *name, const char *handler, uint32_t capacity) {
    rk_kernel *k = NULL;
    CHECK_OK(chan_try_launch(rt, name, handler, capacity, &k));
    CHECK(k != NULL);
    return k;
}

rk_channel *chan_connect(rk_kernel *a, uint32_t port, rk_kernel *b, rk_channel_flow flow, rk_channel_replies replies,
                         uint32_t capacity) {
    rk_channel_desc cd = {.message_size = sizeof(chan_msg), .capacity = capacity, .flow = flow, .replies = replies};
    rk_channel *ch = NULL;
    CHECK_OK(rk_channel_connect(a, port, b, &cd, &ch));
    CHECK(ch != NULL);
    return ch;
}

rk_channel_stats chan_stats(rk_channel *ch) {
    rk_channel_stats st;
    memset(&st, 0, sizeof st);
    CHECK_OK(rk_channel_stats_get(ch, &st));
    return st;
}

void chan_wait_depth(rk_channel *ch, uint32_t depth) {
    rk_channel_stats st = chan_stats(ch);
    for (int i = 0; i < 4000 && st.depth != depth; i++) {
        usleep(5000);
        st = chan_stats(ch);
    }
    CHECK_EQ(st.depth, depth);
}

void chan_receive(rk_kernel *k, chan_msg *m, rk_reply_info *info) {
    CHECK_OK(rk_kernel_receive(k, m, sizeof *m, info, CONF_SECONDS(20)));
}

void chan_expect_in_order(rk_kernel *k, uint32_t count, int hops) {
    for (uint32_t i = 0; i < count; i++) {
        chan_msg r;
        rk_reply_info info;
        chan_receive(k, &r, &info);
        CHECK_EQ(info.status, 0);
        CHECK_U64_EQ(r.seq, i);
        CHECK_EQ(r.hops, hops);
    }
}

void chan_expect_no_reply(rk_kernel *k, rk_status expected) {
    chan_msg r;
    CHECK_STATUS(rk_kernel_receive(k, &r, sizeof r, NULL, RK_NO_WAIT), expected);
}

void chan_terminate_all(rk_kernel **ks, size_t n) {
    for (size_t i = 0; i < n; i++) CHECK_OK(rk_kernel_terminate(ks[i], CONF_SECONDS(20)));
}

void chan_destroy_all(rk_kernel **ks, size_t n) {
    for (size_t i = 0; i < n; i++) CHECK_OK(rk_kernel_destroy(ks[i]));
}
