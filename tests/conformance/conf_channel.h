/* Helpers of the channel checks (conf_channel_*.c): one message type and
 * one DSL source for every backend, kernels launched the way channel.h
 * says every backend accepts them (persistent where the backend has it,
 * one worker, ordered: CUDA's one worker warp). */
#ifndef RK_CONF_CHANNEL_H
#define RK_CONF_CHANNEL_H

#include "conformance.h"
#include "ringkernel/channel.h"

/* A message carries its source and sequence number and a check word every
 * stage updates, so a sink verifies each message end to end. */
typedef struct chan_msg {
    uint64_t seq;
    uint32_t source;
    uint32_t hops;  /* stages that handled it */
    uint64_t check; /* check * 31 + hops at every stage */
    int32_t ttl;    /* cycle: hops left */
    uint32_t flags; /* cycle: CHAN_DONE when ttl ran out */
} chan_msg;

enum { CHAN_DONE = 1u };

static inline uint64_t chan_check_after(uint64_t seq, unsigned stages) {
    uint64_t c = seq;
    for (unsigned h = 1; h <= stages; h++) c = c * 31u + h;
    return c;
}

static inline chan_msg chan_make(uint32_t source, uint64_t seq) {
    chan_msg m = {.seq = seq, .source = source, .check = seq};
    return m;
}

/* Opens env's backend for channel checks. A backend that channel.h does not
 * list as having channels must refuse them with RK_UNSUPPORTED: the check
 * then skips, saying so; cpu, webgpu and cuda must accept them. */
rk_runtime *chan_runtime(const conf_env *env);
/* Message counts: lavapipe runs a dispatch per batch in software, so the
 * WebGPU checks move fewer messages (same assertions). */
uint32_t chan_count(const conf_env *env, uint32_t cpu_count, uint32_t webgpu_count);

/* The channel checks' kernel: handler from the DSL source, one worker,
 * ordered; callers may change the mode, workers and order. */
rk_kernel_desc chan_kernel_desc(const char *name, const char *handler, uint32_t capacity);
rk_status chan_try_launch(rk_runtime *rt, const char *name, const char *handler, uint32_t capacity,
                          rk_kernel **out);
rk_kernel *chan_launch(rk_runtime *rt, const char *name, const char *handler, uint32_t capacity);
rk_channel *chan_connect(rk_kernel *a, uint32_t port, rk_kernel *b, rk_channel_flow flow, rk_channel_replies replies,
                         uint32_t capacity);
rk_channel_stats chan_stats(rk_channel *ch);
/* Waits (up to 20 s) until ch holds depth messages; checks it got there. */
void chan_wait_depth(rk_channel *ch, uint32_t depth);
/* One reply within 20 s. */
void chan_receive(rk_kernel *k, chan_msg *m, rk_reply_info *info);
/* Replies 0 .. count-1 in order, each handled without error after `hops` hops. */
void chan_expect_in_order(rk_kernel *k, uint32_t count, int hops);
/* Checks that k has no reply waiting (RK_WOULD_BLOCK, or RK_TERMINATED
 * once it has ended). */
void chan_expect_no_reply(rk_kernel *k, rk_status expected);
void chan_terminate_all(rk_kernel **ks, size_t n);
void chan_destroy_all(rk_kernel **ks, size_t n);

#endif
