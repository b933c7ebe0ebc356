/* A WebGPU ring kernel (webgpu_ring.c), shared with its K2K channels
 * (webgpu_channel.c). */
#ifndef RK_WEBGPU_RING_H
#define RK_WEBGPU_RING_H

#include <pthread.h>
#include <stdatomic.h>

#include "webgpu_channel.h"
#include "webgpu_internal.h"

enum { PARALLEL_WORKGROUP = 64, MAX_BATCH = 4096, COUNTERS_BYTES = 16 };

typedef struct wg_ring {
    wg_context *c;
    uint32_t req_words, resp_words, state_words;
    uint32_t cap, max_batch, reply_bytes;
    bool sequential;

    WGPUShaderModule shader;
    WGPUComputePipeline pipeline;
    WGPUBindGroup group;
    WGPUBuffer in, out, status, state, counters, readback;
    uint64_t status_off, reply_off, emit_off; /* in readback; counters at 0 */

    pthread_t worker;
    bool worker_started;
    atomic_bool abort;   /* destroy gave up on a dispatch that does not finish */
    WGPUEnum map_status; /* the readback map's result (owned here, not on a stack: see run_batch) */

    /* Everything below is guarded by mu. */
    pthread_mutex_t mu;
    pthread_cond_t cv; /* wakes the worker */
    unsigned char *in_msgs; /* host input ring: cap slots of message_size bytes */
    uint64_t *in_ids;
    uint64_t in_head, in_tail;
    uint32_t in_flight;
    unsigned char *out_msgs; /* host output ring: cap replies */
    rk_reply_info *out_infos;
    uint64_t out_head, out_tail;
    bool active, should_terminate, has_terminated, stop;
    uint64_t processed, errors, launches;
    rk_status failure;
    char failure_reason[192];

    wg_links links; /* K2K channels (webgpu_channel.h) */

    /* Worker-only scratch. */
    uint32_t *batch;       /* [count, requests...] */
    uint64_t *batch_ids;
    bool *reply_all; /* per batch entry: its reply goes to the host even when it succeeded */
    unsigned char *result; /* copy of the mapped readback */
} wg_ring;

#endif
