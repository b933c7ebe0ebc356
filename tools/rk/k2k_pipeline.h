/* A chain of ring kernels for `rk demo pipeline` and `rk bench k2k`: either
 * connected by K2K channels (stage -> stage -> ... -> sink) or the same
 * kernels unconnected, with the host relaying each message (receive from
 * one kernel, send to the next). Every message is checked at the end. */
#ifndef RK_TOOL_K2K_PIPELINE_H
#define RK_TOOL_K2K_PIPELINE_H

#include <stdbool.h>
#include <stdint.h>

#include "ringkernel/channel.h"
#include "ringkernel/ringkernel.h"

enum { PIPE_MAX_STAGES = 16 };

typedef struct pipe_msg {
    uint32_t seq, hops, check;
    uint32_t pad[13];
} pipe_msg;

typedef struct pipeline {
    rk_runtime *rt;
    rk_kernel *k[PIPE_MAX_STAGES];
    rk_channel *ch[PIPE_MAX_STAGES]; /* ch[i]: stage i -> stage i + 1 (channels only) */
    unsigned stages;
    bool relay;     /* host relays between the kernels instead of channels */
    uint32_t queue; /* queue and channel capacity */
    bool spin;      /* latency probes spin on the host (a GPU backend: no worker threads to starve) */
} pipeline;

typedef struct pipe_result {
    uint64_t messages, wrong, missing;
    double seconds;
    double p50_ns, p99_ns; /* end-to-end, one message at a time (latency runs) */
} pipe_result;

/* The check word a message has after `stages` stages. */
uint32_t pipe_expected_check(uint32_t seq, unsigned stages);

/* Launches and activates `stages` kernels (channels unless relay). */
rk_status pipeline_open(pipeline *p, rk_runtime *rt, unsigned stages, bool relay, uint32_t queue);
void pipeline_close(pipeline *p);

/* Streams count messages through in batches, checking each at the end. */
rk_status pipeline_stream(pipeline *p, uint64_t count, uint32_t batch, pipe_result *out);
/* probes messages one at a time: end-to-end latency p50/p99. */
rk_status pipeline_latency(pipeline *p, uint64_t probes, pipe_result *out);
/* The hops alone: a channel chain of `stages` whose first channel holds
 * `count` messages (a power of two, its capacity) while the later stages are
 * inactive; then they are activated and the time until the sink has answered
 * all of them, each checked, is the rate. The source and the host's sending
 * are out of it; the host still receives every reply. device_check: the
 * sink checks each message on the device and answers only a wrong one, and
 * the clock stops when the last channel has delivered them all (the host's
 * receiving is out of it too). */
rk_status pipeline_burst(rk_runtime *rt, unsigned stages, uint32_t count, bool device_check, pipe_result *out);

/* `rk demo pipeline` (demo_pipeline.c). */
int rk_demo_pipeline(int argc, char **argv);

#endif
