/* Persistent ring kernels on CUDA: launched once, fed through pinned,
 * device-mapped host memory (see src/device/cuda/ring.cu for the protocol).
 *
 * Host side, per kernel:
 *  - the sender writes messages as tagged words and publishes `published`
 *    for the receiver only (the GPU needs no pointer: it checks tags);
 *  - the receiver checks tags of the next reply slots, copies replies out
 *    and publishes `received`, which is the sender's credit: position p is
 *    written only once reply p - capacity has been taken, so the GPU never
 *    waits for room in the output queue;
 *  - control words (active, terminate) have one writer each: the host.
 *    Counters, heartbeat and has_terminated have one writer: the GPU's
 *    control thread.
 *  - poll reads those, and every millisecond asks the driver whether the
 *    kernel is still running (a fault shows up there) and whether it still
 *    makes progress (the watchdog).
 *  - Running kernels are listed so that module loads can pause them: this
 *    file is an owner of resident launches (core/resident.h), which the
 *    device layer pauses around every module load and unload.
 *  - K2K (cuda_channel.c): replies to channel messages come through a
 *    queue of their own (crq), in the order the kernel wrote them; the host
 *    publishes its place in it for the GPU's credit. A pipeline source that
 *    answers only failures still gets every reply from the GPU (the
 *    position pairing needs them): the host skips the successful ones. */
#include <stdalign.h>
#include <stdatomic.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/resident.h"
#include "cuda/cuda_ring.h"
#include "cuda/cuda_ring_codec.h"

enum { QUERY_INTERVAL_NS = 1000000, HOST_CONTROL_BYTES = 4096 };

/* Running persistent kernels of the process, changed under the resident
 * lock (core/resident.h), which a pause section holds throughout. */
static struct persistent_ring *running_list;

typedef struct persistent_ring {
    const char *name;
    rk__cuda_context *ctx;
    rk__cuda_ring_layout l;
    uint32_t capacity, log2_capacity;
    uint64_t mask;
    uint32_t blocks, worker_warps, chunk;
    CUstream stream;
    CUfunction fn;
    void *host;           /* pinned block: control words, input queue, output queue */
    CUdeviceptr host_dev; /* the same, as the GPU sees it */
    uint64_t *in, *out, *crq;
    volatile uint64_t *hctl;
    CUdeviceptr dmem;     /* device control words, counters, staging, state */
    uint64_t *ids;        /* request id of each slot; host only */
    bool leaked;          /* memory still in use by a kernel that would not stop */
    rk__cuda_ring_args args; /* for relaunches after a pause */
    unsigned threads;
    size_t smem;
    /* Pausing, under the context's pause lock. */
    struct persistent_ring *next_running;
    bool paused;
    uint64_t pause_request;
    _Atomic bool pausing;   /* poll must not mistake a pause for an exit */
    _Atomic uint64_t launches;

    alignas(64) _Atomic uint64_t published; /* written by the sender */
    alignas(64) _Atomic uint64_t received;  /* written by the receiver */
    alignas(64) uint64_t recv_published;    /* the receiver's copy of published */
    uint64_t crq_received;                  /* the receiver's place in the channel-reply queue */
    pthread_mutex_t recv_lock;              /* the receiver's side, also taken by a sender that skips replies */
    _Atomic bool failures_only;             /* rk_channel_set_host_replies */
    _Atomic uint64_t error_replies;         /* replies taken with a nonzero status */

    /* Poll state (the core serializes poll calls). */
    alignas(64) _Atomic bool active, terminate_requested;
    bool stopped;         /* the driver says the kernel is no longer running */
    uint64_t last_query_ns, last_progress_ns, last_processed, last_heartbeat;
    uint64_t watchdog_ns;
    _Atomic int failure; /* rk_status, latched */
    char failure_reason[192];
} persistent_ring;

static persistent_ring *ring_of(rk_kernel *k) { return k->impl; }

static uint32_t log2_of(uint64_t v) {
    uint32_t n = 0;
    while ((1ull << n) < v) n++;
    return n;
}

static void free_ring(persistent_ring *r) {
    if (r->stream) rk__cuda.cuStreamDestroy(r->stream);
    pthread_mutex_destroy(&r->recv_lock);
    if (!r->leaked) {
        rk__cuda_pinned_free(r->ctx, r->host);
        rk__cuda_device_free(r->ctx, r->dmem);
    }
    free(r->ids);
    free(r);
}

/* A number from the environment (name), or fallback when unset or not a number. */
static uint32_t env_u32(const char *name, uint32_t fallback) {
    const char *env = getenv(name);
    if (!env || !*env) return fallback;
    char *end = NULL;
    unsigned long v = strtoul(env, &end, 10);
    return *end || v > UINT32_MAX ? fallback : (uint32_t)v;
}

/* Worker warps one block is built for: a kernel that runs one worker warp
 * (ordered, with state or RK_CUDA_ORDERED_WARPS 1) gets a block of two
 * warps, it and the control warp, which then runs on another SM
 * sub-partition (warp 1, not 8) and may use up to 255 registers, not 168
 * (session 14: the round trip of such a kernel 0.02-0.09 us shorter); an
 * ordered kernel of more warps than RK_CUDA_WARPS_PER_BLOCK, one block of
 * them (its turns and lanes are shared words); every other kernel, blocks of
 * RK_CUDA_WARPS_PER_BLOCK. */
static uint32_t block_warps_of(const rk_kernel *k) {
    if (!k->desc.ordered) return RK_CUDA_WARPS_PER_BLOCK;
    const uint32_t warps = k->desc.state_size ? 1u : rk__cuda_ordered_warps();
    return warps == 1 ? 1u : warps > RK_CUDA_WARPS_PER_BLOCK ? warps : RK_CUDA_WARPS_PER_BLOCK;
}

/* Messages per warp pass and whether staging fits in shared memory. */
static void choose_chunk(persistent_ring *r, const rk_kernel *k, size_t *per_warp, bool *shared) {
    uint32_t chunk = r->capacity < RK_CUDA_MAX_CHUNK ? r->capacity : RK_CUDA_MAX_CHUNK;
    /* ordered: one warp, one message per pass (send order, each handler
     * seeing the state the one before left). Without state, the lanes of one
     * warp taking up to 32 messages per pass in order are indistinguishable
     * from that (emits are published in lane order): K2K kernels run so. */
    if (k->desc.ordered && k->desc.state_size) chunk = 1;
    const size_t pair = (size_t)r->l.in_stage + r->l.out_stage;
    while (chunk > 1 && chunk * pair > 256 * 1024) chunk /= 2;
    r->chunk = chunk;
    *per_warp = chunk * pair;
    /* A wide block with the lanes: a raw buffer of one chunk's input slots
     * a warp, where a lanes pass copies its next slots ahead (channel.cu,
     * RK_LANES_RAW_BYTES; channel_lanes.cu). */
    if (r->l.lanes && r->l.block_warps > RK_CUDA_WARPS_PER_BLOCK)
        *per_warp += (size_t)RK_CUDA_MAX_CHUNK * r->l.in_ll * 8;
    uint32_t blocks = k->desc.workers ? k->desc.workers : RK_CUDA_DEFAULT_BLOCKS;
    const uint32_t wpb = r->l.block_warps;
    uint64_t warps = (uint64_t)blocks * wpb;
    /* More warps than chunks in the ring would only poll each other's slots. */
    uint64_t chunks = r->capacity / chunk;
    if (warps > chunks) warps = chunks;
    /* ordered: one block whose warps keep send order (with state: one warp). */
    if (k->desc.ordered) {
        const uint64_t want = k->desc.state_size ? 1 : rk__cuda_ordered_warps();
        warps = want < chunks ? want : chunks ? chunks : 1;
    }
    r->worker_warps = (uint32_t)warps;
    r->blocks = (uint32_t)((warps + wpb - 1) / wpb);
    /* Less the K2K link table, which the template keeps in static shared
     * memory. A wide ordered block (more than 8 warps) may go past 48 KiB
     * up to the device's opt-in limit (prepare_launch raises it). */
    size_t limit = RK_CUDA_SHARED_STAGING;
    if (wpb > RK_CUDA_WARPS_PER_BLOCK) {
        int optin = 0;
        if (rk__cuda.cuDeviceGetAttribute(&optin, RK_CU_ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, r->ctx->device) ==
                RK_CUDA_SUCCESS &&
            (size_t)optin > limit)
            limit = (size_t)optin;
    }
    *shared = (size_t)wpb * *per_warp + rk__cuda_channel_shared(wpb) <= limit;
}

/* Finds the kernel, checks it fits, and prepares its arguments. */
static rk_status prepare_launch(rk_kernel *k, persistent_ring *r, CUmodule module, size_t per_warp, bool shared) {
    rk_status s = rk__cuda_get_function(module, "rk_ring_persistent", &r->fn);
    if (s != RK_OK) return s;
    const uint32_t wpb = r->l.block_warps;
    const unsigned threads = 32 * (wpb + 1);
    const size_t smem = shared ? wpb * per_warp : 0;
    int per_sm = 0;
    CUresult res;
    if (smem + rk__cuda_channel_shared(wpb) > RK_CUDA_SHARED_STAGING) {
        res = rk__cuda.cuFuncSetAttribute(r->fn, RK_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem);
        if (res != RK_CUDA_SUCCESS)
            return rk__cuda_fail(res, RK_BAD_LAUNCH_CONFIG, "raising the shared-memory limit of a wide ordered kernel");
    }
    res = rk__cuda.cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, r->fn, (int)threads, smem);
    if (res != RK_CUDA_SUCCESS) return rk__cuda_fail(res, RK_INTERNAL, "occupancy of the ring kernel");
    if ((uint64_t)r->blocks > (uint64_t)per_sm * (uint64_t)r->ctx->sm_count)
        return rk__fail(RK_BAD_LAUNCH_CONFIG,
                        "kernel '%s': %u worker blocks cannot all be resident (%d per SM x %d SMs); ask for fewer "
                        "workers",
                        k->name, r->blocks, per_sm, r->ctx->sm_count);

    const size_t in_bytes = (size_t)r->capacity * r->l.in_ll * 8, out_offset = HOST_CONTROL_BYTES + in_bytes;
    const size_t crq_offset = out_offset + (size_t)r->capacity * r->l.out_ll * 8;
    const size_t dctl_bytes = RK_DCTL_WORDS * 8, counts_bytes = (size_t)r->worker_warps * RK_COUNT_WORDS * 8;
    const size_t stage_offset = dctl_bytes + counts_bytes;
    const size_t stage_bytes = shared ? 0 : (size_t)r->worker_warps * per_warp;
    const size_t state_offset = (stage_offset + stage_bytes + 255) & ~(size_t)255;
    r->args = (rk__cuda_ring_args){
        .in = r->host_dev + HOST_CONTROL_BYTES,
        .out = r->host_dev + out_offset,
        .hctl = r->host_dev,
        .dctl = r->dmem,
        .counts = r->dmem + dctl_bytes,
        .stage = shared ? 0 : r->dmem + stage_offset,
        .state = r->dmem + state_offset,
        .crq = r->host_dev + crq_offset,
        .capacity_mask = r->mask,
        .log2_capacity = r->log2_capacity,
        .chunk = r->chunk,
        .log2_chunk = log2_of(r->chunk),
        .worker_warps = r->worker_warps,
        .resume = 0,
        .turns = k->desc.ordered ? 1u : 0u,
        /* Tuning for measurements and sanitizer runs (docs/channels.md):
         * how long an ordered warp waits for its begin turn before it polls
         * again (0: the template's default), and a nap for idle warps. */
        .turn_wait_cycles = env_u32("RK_CUDA_TURN_WAIT_CYCLES", 0),
        .idle_nap_ns = env_u32("RK_CUDA_IDLE_NAP_NS", 0),
        /* When a lone worker warp plans its next channel begin (0: never). */
        .k2k_solo = env_u32("RK_CUDA_K2K_SOLO", RK__CUDA_SOLO_DEFAULT),
        /* Several warps of a chain stage without a begin turn (lanes; the
         * module has them only when built for several ordered warps). */
        .k2k_lanes = r->l.lanes ? RK__CUDA_LANES_USE : 0u,
    };
    r->threads = threads;
    r->smem = smem;
    return RK_OK;
}

/* Cooperative: every block resident at once, or an error now rather than
 * positions that no resident warp will ever serve. */
static CUresult launch(persistent_ring *r) {
    void *params[] = {&r->args};
    CUresult res = rk__cuda.cuLaunchCooperativeKernel(r->fn, r->blocks, 1, 1, r->threads, 1, 1, (unsigned)r->smem,
                                                      r->stream, params);
    if (res == RK_CUDA_SUCCESS) atomic_fetch_add(&r->launches, 1);
    return res;
}

static rk_status start(rk_kernel *k) {
    rk__cuda_context *ctx = rk__cuda_ctx(k->ctx);
    persistent_ring *r = aligned_alloc(64, (sizeof(persistent_ring) + 63) & ~(size_t)63);
    if (!r) return rk__fail(RK_OUT_OF_MEMORY, "out of memory");
    memset(r, 0, sizeof *r);
    r->ctx = ctx;
    r->capacity = k->desc.queue_capacity;
    r->log2_capacity = log2_of(r->capacity);
    r->mask = r->capacity - 1;
    r->watchdog_ns = rk__cuda_watchdog_ns();
    atomic_init(&r->published, 0);
    atomic_init(&r->received, 0);
    atomic_init(&r->failure, RK_OK);
    atomic_init(&r->pausing, false);
    atomic_init(&r->launches, 0);
    atomic_init(&r->failures_only, false);
    pthread_mutex_init(&r->recv_lock, NULL);

    CUmodule module = NULL;
    rk_status s = rk__cuda_ring_build(k, block_warps_of(k), &r->l, &module);
    size_t per_warp = 0;
    bool shared = false;
    if (s == RK_OK) choose_chunk(r, k, &per_warp, &shared);
    /* Before the launch: channels connected to this kernel later come from
     * the arena, which memcheck then counts among the kernel's allocations. */
    if (s == RK_OK) rk__cuda_channel_arena_reserve(ctx);

    const size_t in_bytes = (size_t)r->capacity * r->l.in_ll * 8;
    const size_t out_bytes = (size_t)r->capacity * r->l.out_ll * 8;
    const size_t crq_bytes = (size_t)r->capacity * r->l.crq_ll * 8;
    if (s == RK_OK)
        s = rk__cuda_pinned_alloc(ctx, HOST_CONTROL_BYTES + in_bytes + out_bytes + crq_bytes, &r->host, &r->host_dev);
    if (s == RK_OK) {
        r->hctl = r->host;
        r->in = (uint64_t *)((unsigned char *)r->host + HOST_CONTROL_BYTES);
        r->out = (uint64_t *)((unsigned char *)r->host + HOST_CONTROL_BYTES + in_bytes);
        r->crq = (uint64_t *)((unsigned char *)r->host + HOST_CONTROL_BYTES + in_bytes + out_bytes);
        size_t stage_bytes = shared ? 0 : (size_t)r->worker_warps * per_warp;
        size_t dbytes = RK_DCTL_WORDS * 8 + (size_t)r->worker_warps * RK_COUNT_WORDS * 8 + stage_bytes + 256 +
                        (k->desc.state_size ? k->desc.state_size : 16);
        s = rk__cuda_device_alloc(ctx, dbytes, &r->dmem);
    }
    if (s == RK_OK) {
        r->ids = calloc(r->capacity, sizeof *r->ids);
        if (!r->ids) s = rk__fail(RK_OUT_OF_MEMORY, "out of memory");
    }
    if (s == RK_OK) {
        CUresult res = rk__cuda.cuStreamCreate(&r->stream, RK_CU_STREAM_NON_BLOCKING);
        if (res != RK_CUDA_SUCCESS) s = rk__cuda_fail(res, RK_INTERNAL, "creating the ring kernel's stream");
    }
    if (s == RK_OK) s = prepare_launch(k, r, module, per_warp, shared);
    if (s == RK_OK) s = rk__cuda_ring_initial_state(k, r->args.state);
    if (s == RK_OK) {
        /* Launched and listed under the pause lock, so no module load can
         * start between the two and wait for this kernel. */
        r->name = k->name;
        rk__resident_add_owner(&rk__cuda_ring_resident);
        rk__resident_lock();
        CUresult res = launch(r);
        if (res == RK_CUDA_SUCCESS) {
            r->next_running = running_list;
            running_list = r;
        }
        rk__resident_unlock();
        if (res != RK_CUDA_SUCCESS)
            s = rk__cuda_fail(res, res == 720 || res == 701 ? RK_BAD_LAUNCH_CONFIG : RK_INTERNAL,
                              "launching the persistent ring kernel");
    }
    if (s != RK_OK) {
        free_ring(r);
        return s;
    }
    r->last_query_ns = r->last_progress_ns = rk__now_ns();
    rk__log(RK_LOG_DEBUG, "kernel '%s': persistent, %u blocks, %u worker warps, %u positions per pass, staging in %s",
            k->name, r->blocks, r->worker_warps, r->chunk, shared ? "shared memory" : "device memory");
    k->impl = r;
    return RK_OK;
}

static size_t take_replies(persistent_ring *r, unsigned char *dst, size_t stride, rk_reply_info *infos, size_t max,
                           bool skip_only);

static rk_status try_send(rk_kernel *k, const void *messages, size_t stride, size_t count, uint64_t first_id,
                          size_t *accepted) {
    persistent_ring *r = ring_of(k);
    if (atomic_load_explicit(&r->failures_only, memory_order_relaxed) &&
        atomic_load_explicit(&r->published, memory_order_relaxed) -
                atomic_load_explicit(&r->received, memory_order_acquire) >= r->capacity / 2) {
        /* A pipeline source: nobody receives its successful replies, so
         * the sender skips them to regain credit (a failure stays for receive). */
        pthread_mutex_lock(&r->recv_lock);
        take_replies(r, NULL, 0, NULL, SIZE_MAX, true);
        pthread_mutex_unlock(&r->recv_lock);
    }
    const uint64_t pos = atomic_load_explicit(&r->published, memory_order_relaxed);
    const uint64_t taken = atomic_load_explicit(&r->received, memory_order_acquire);
    const uint64_t room = r->capacity - (pos - taken);
    const size_t n = count < room ? count : (size_t)room;
    const unsigned char *m = messages;
    for (size_t i = 0; i < n; i++) {
        uint64_t p = pos + i;
        r->ids[p & r->mask] = first_id + i;
        rk__ring_encode(r->in + (p & r->mask) * r->l.in_ll, m + i * stride, r->l.msg_bytes, r->l.in_ll,
                        rk__ring_tag(p, r->log2_capacity));
    }
    atomic_store_explicit(&r->published, pos + n, memory_order_release);
    /* For the GPU too: a kernel with channel inputs reads its host queue
     * only when this count says a message waits (the control thread relays
     * it into device memory). A hint: the tags still decide, so the store
     * needs no fence beyond x86's store order (the slots were written first). */
    if (n) r->hctl[RK_HCTL_HOST_PUBLISHED] = pos + n;
    *accepted = n;
    return RK_OK;
}

/* Takes up to max replies from the output queue (receiver's lock held).
 * Successful replies are skipped when the kernel answers failures only;
 * skip_only: stop at the first failure instead of taking it. */
static size_t take_replies(persistent_ring *r, unsigned char *dst, size_t stride, rk_reply_info *infos, size_t max,
                           bool skip_only) {
    __asm__ __volatile__("" ::: "memory"); /* the GPU writes the output queue behind the compiler's back */
    const bool failures_only = atomic_load_explicit(&r->failures_only, memory_order_relaxed);
    uint64_t pos = atomic_load_explicit(&r->received, memory_order_relaxed);
    if (r->recv_published - pos < max || skip_only)
        r->recv_published = atomic_load_explicit(&r->published, memory_order_acquire);
    const uint32_t status_word = (r->l.reply_bytes + 3) / 4;
    size_t n = 0;
    while (n < max && pos < r->recv_published) {
        const volatile uint64_t *slot = r->out + (pos & r->mask) * r->l.out_ll;
        const uint32_t tag = rk__ring_tag(pos, r->log2_capacity);
        if (!rk__ring_current(slot, r->l.out_ll, tag)) break;
        const int32_t status = (int32_t)(uint32_t)slot[status_word];
        if (failures_only && status == 0) {
            pos++;
            continue;
        }
        if (skip_only) break;
        /* Payload and status in one pass; the status word follows the payload. */
        if (!rk__ring_take(dst + n * stride, slot, r->l.out_ll, r->l.reply_bytes, tag)) break;
        infos[n].id = r->ids[pos & r->mask];
        infos[n].status = status;
        infos[n].reserved = 0;
        if (status != 0) atomic_fetch_add_explicit(&r->error_replies, 1, memory_order_relaxed);
        n++;
        pos++;
    }
    if (pos != atomic_load_explicit(&r->received, memory_order_relaxed))
        atomic_store_explicit(&r->received, pos, memory_order_release);
    return n;
}

/* Takes up to max replies to channel messages (K2K), in the order the
 * kernel wrote them, and publishes the host's place for the GPU's credit. */
static size_t take_channel_replies(persistent_ring *r, unsigned char *dst, size_t stride, rk_reply_info *infos,
                                   size_t max) {
    const uint32_t status_word = (r->l.reply_bytes + 3) / 4;
    uint64_t pos = r->crq_received;
    size_t n = 0;
    while (n < max) {
        const volatile uint64_t *slot = r->crq + (pos & r->mask) * r->l.crq_ll;
        const uint32_t tag = rk__ring_tag(pos, r->log2_capacity);
        if (!rk__ring_current(slot, r->l.crq_ll, tag)) break;
        if (!rk__ring_take(dst + n * stride, slot, r->l.out_ll, r->l.reply_bytes, tag)) break;
        infos[n].id = (uint32_t)slot[r->l.out_ll] | (uint64_t)(uint32_t)slot[r->l.out_ll + 1] << 32;
        infos[n].status = (int32_t)(uint32_t)slot[status_word];
        infos[n].reserved = 0;
        n++;
        pos++;
    }
    if (n) {
        r->crq_received = pos;
        r->hctl[RK_HCTL_CR_RECEIVED] = pos;
    }
    return n;
}

static rk_status try_receive(rk_kernel *k, void *replies, size_t stride, rk_reply_info *infos, size_t max,
                             size_t *received) {
    persistent_ring *r = ring_of(k);
    pthread_mutex_lock(&r->recv_lock);
    size_t n = take_replies(r, replies, stride, infos, max, false);
    if (n < max) n += take_channel_replies(r, (unsigned char *)replies + n * stride, stride, infos + n, max - n);
    pthread_mutex_unlock(&r->recv_lock);
    *received = n;
    return RK_OK;
}

/* How long deactivate waits for the workers' passes that started active. */
#define DEACTIVATE_WAIT_NS 1000000000ull

static rk_status set_active(rk_kernel *k, bool active) {
    persistent_ring *r = ring_of(k);
    r->hctl[RK_HCTL_ACTIVE] = active ? 1 : 0;
    r->active = active;
    if (active) return RK_OK;
    /* Deactivate returns once no worker can take a message any more (each has
     * started a pass inactive), so a request sent after it waits; bounded, in
     * case a handler runs long or the kernel is gone. */
    const uint64_t deadline = rk__now_ns() + DEACTIVATE_WAIT_NS;
    while (r->hctl[RK_HCTL_ACTIVE_SEEN] != 0 && atomic_load(&r->failure) == RK_OK && !r->stopped &&
           rk__now_ns() < deadline)
        sched_yield();
    return RK_OK;
}

static rk_status request_terminate(rk_kernel *k) {
    persistent_ring *r = ring_of(k);
    /* No send is in flight (the core guarantees it): this is the final count. */
    r->hctl[RK_HCTL_TERMINATE] = atomic_load(&r->published) + 1;
    r->terminate_requested = true;
    return RK_OK;
}

static void latch_failure(persistent_ring *r, rk_status failure, const char *reason) {
    int expected = RK_OK;
    if (atomic_compare_exchange_strong(&r->failure, &expected, (int)failure))
        snprintf(r->failure_reason, sizeof r->failure_reason, "%s", reason);
}

/* Asks the driver about the kernel, and runs the watchdog. */
static void check_kernel(persistent_ring *r, uint64_t now, uint64_t processed, uint64_t heartbeat, bool terminated) {
    if (processed != r->last_processed || heartbeat != r->last_heartbeat) {
        /* The heartbeat proves the control thread runs; processed, the workers. */
        bool pending = atomic_load(&r->published) > processed;
        if (processed != r->last_processed || !pending || !r->active) r->last_progress_ns = now;
        r->last_processed = processed;
        r->last_heartbeat = heartbeat;
    } else if (atomic_load(&r->published) == processed || !r->active) {
        r->last_progress_ns = now; /* idle or paused: nothing to be late with */
    }
    if (atomic_load(&r->pausing)) {
        r->last_progress_ns = now; /* paused on purpose: not late */
        return;
    }
    if (now - r->last_query_ns < QUERY_INTERVAL_NS) return;
    r->last_query_ns = now;
    if (rk__cuda_bind(r->ctx) != RK_OK) return;
    const uint64_t launches = atomic_load(&r->launches);
    CUresult q = rk__cuda.cuStreamQuery(r->stream);
    /* A pause that began meanwhile also ends the launch: not a failure. */
    if (atomic_load(&r->pausing) || atomic_load(&r->launches) != launches) return;
    char reason[192];
    if (q != RK_CUDA_ERROR_NOT_READY) r->stopped = true;
    if (q != RK_CUDA_SUCCESS && q != RK_CUDA_ERROR_NOT_READY) {
        rk_status f;
        rk__cuda_ring_fault(q, "the persistent kernel stopped", &f, reason, sizeof reason);
        latch_failure(r, f, reason);
    } else if (q == RK_CUDA_SUCCESS && !terminated && !r->hctl[RK_HCTL_TERMINATED]) {
        latch_failure(r, RK_INTERNAL, "the persistent kernel exited without setting has_terminated");
    } else if (q == RK_CUDA_ERROR_NOT_READY && !terminated && now - r->last_progress_ns > r->watchdog_ns) {
        snprintf(reason, sizeof reason,
                 "no progress for %llu ms with %llu message(s) waiting (RK_CUDA_WATCHDOG_MS sets the limit)",
                 (unsigned long long)((now - r->last_progress_ns) / 1000000u),
                 (unsigned long long)(atomic_load(&r->published) - processed));
        latch_failure(r, RK_HUNG, reason);
    }
}

/* K2K: skips the successful replies a failures-only kernel will never hand
 * out (so they do not count as waiting), and counts the replies waiting in
 * the channel-reply queue. *received: the receiver's place afterwards. */
static uint32_t pending_extra(persistent_ring *r, uint64_t *received) {
    pthread_mutex_lock(&r->recv_lock);
    if (atomic_load_explicit(&r->failures_only, memory_order_relaxed))
        take_replies(r, NULL, 0, NULL, SIZE_MAX, true);
    *received = atomic_load(&r->received);
    uint32_t n = 0;
    for (uint64_t pos = r->crq_received; n < r->capacity; pos++, n++)
        if (!rk__ring_current(r->crq + (pos & r->mask) * r->l.crq_ll, r->l.crq_ll, rk__ring_tag(pos, r->log2_capacity)))
            break;
    pthread_mutex_unlock(&r->recv_lock);
    return n;
}

/* The first position at or after from (below published) whose reply the
 * kernel has not written yet. */
static uint64_t replies_ready(const persistent_ring *r, uint64_t from, uint64_t published) {
    while (from < published &&
           rk__ring_current(r->out + (from & r->mask) * r->l.out_ll, r->l.out_ll, rk__ring_tag(from, r->log2_capacity)))
        from++;
    return from;
}

static rk_status poll(rk_kernel *k, rk__control *out) {
    persistent_ring *r = ring_of(k);
    const uint64_t processed = r->hctl[RK_HCTL_PROCESSED];
    const uint64_t errors = r->hctl[RK_HCTL_ERRORS];
    const uint64_t heartbeat = r->hctl[RK_HCTL_HEARTBEAT];
    const bool terminated = r->hctl[RK_HCTL_TERMINATED] != 0;
    const uint64_t published = atomic_load(&r->published), received = atomic_load(&r->received);
    if (atomic_load(&r->failure) == RK_OK) check_kernel(r, rk__now_ns(), processed, heartbeat, terminated);

    out->failure = (rk_status)atomic_load(&r->failure);
    out->is_active = r->active;
    out->should_terminate = r->terminate_requested;
    /* A kernel that faulted has stopped for good: say so, so that terminate
     * and destroy need not wait for it. */
    out->has_terminated = terminated || (r->stopped && out->failure == RK_DEVICE_FAULT);
    /* The device publishes its counters every ~100 us (rk_control in
     * ring.cu); a reply the host sees proves its message was handled, so the
     * counts are never behind the replies. */
    const uint64_t seen = replies_ready(r, processed > received ? processed : received, published);
    const uint64_t error_replies = atomic_load_explicit(&r->error_replies, memory_order_relaxed);
    out->messages_processed = seen + r->hctl[RK_HCTL_CH_PROCESSED];
    out->errors_encountered = errors > error_replies ? errors : error_replies;
    out->launches = atomic_load(&r->launches);
    if (out->failure != RK_OK) {
        snprintf(out->failure_reason, sizeof out->failure_reason, "%s", r->failure_reason);
        /* Nothing more will be processed; count the replies that made it. */
        const uint64_t ready = replies_ready(r, received, published);
        out->input_depth = 0;
        out->output_depth = (uint32_t)(ready - received);
        out->messages_processed = (processed > ready ? processed : ready) + r->hctl[RK_HCTL_CH_PROCESSED];
        return RK_OK;
    }
    uint64_t done = seen < published ? seen : published;
    out->input_depth = (uint32_t)(published - done);
    uint64_t taken = received;
    const uint32_t channel_replies = pending_extra(r, &taken);
    out->output_depth = (uint32_t)(done > taken ? done - taken : 0) + channel_replies;
    return RK_OK;
}

static void unlist(persistent_ring *r) {
    rk__resident_lock();
    for (persistent_ring **p = &running_list; *p; p = &(*p)->next_running) {
        if (*p == r) {
            *p = r->next_running;
            break;
        }
    }
    rk__resident_unlock();
}

static rk_status destroy(rk_kernel *k) {
    persistent_ring *r = ring_of(k);
    if (!r) return RK_OK;
    rk_status s = RK_OK;
    unlist(r);
    if (rk__cuda_bind(r->ctx) == RK_OK) {
        if (!r->terminate_requested) {
            r->hctl[RK_HCTL_TERMINATE] = atomic_load(&r->published) + 1;
            r->hctl[RK_HCTL_ACTIVE] = 1;
        }
        /* Give a kernel that is stopping a moment; one that will not stop
         * keeps its memory (freeing it under a running kernel would be worse). */
        uint64_t deadline = rk__now_ns() + 200000000u;
        CUresult q;
        while ((q = rk__cuda.cuStreamQuery(r->stream)) == RK_CUDA_ERROR_NOT_READY && rk__now_ns() < deadline) {
        }
        if (q == RK_CUDA_ERROR_NOT_READY) {
            r->leaked = true;
            pthread_mutex_lock(&r->ctx->lock);
            r->ctx->stuck_kernels++;
            pthread_mutex_unlock(&r->ctx->lock);
            s = rk__fail(RK_HUNG, "rk_kernel_destroy: kernel '%s': the persistent kernel is still running (a handler "
                                  "that does not return); its memory is left in place", k->name);
            rk__log(RK_LOG_WARN, "%s", rk_last_error());
        }
    }
    free_ring(r);
    k->impl = NULL;
    rk__cuda_channel_detach(k);
    return s;
}

/* ---- K2K (cuda_channel.c) ------------------------------------------------------ */

bool rk__cuda_persistent_view(rk_kernel *k, rk__cuda_ring_view *out) {
    /* k->ring is the backend's dispatcher (cuda_ring.c); the mode picks these ops. */
    if (k->ring != &rk__cuda_ring_iface || k->mode != RK_MODE_PERSISTENT || !k->impl) return false;
    persistent_ring *r = ring_of(k);
    *out = (rk__cuda_ring_view){.ctx = r->ctx, .hctl = r->hctl, .layout = r->l, .worker_warps = r->worker_warps,
                                .chunk = r->chunk, .turns = r->args.turns != 0};
    return true;
}

static rk_status set_host_replies(rk_kernel *k, bool failures_only) {
    atomic_store_explicit(&ring_of(k)->failures_only, failures_only, memory_order_relaxed);
    return RK_OK;
}

const rk__ring_iface rk__cuda_persistent_ops = {
    .start = start,
    .try_send = try_send,
    .try_receive = try_receive,
    .set_active = set_active,
    .request_terminate = request_terminate,
    .poll = poll,
    .destroy = destroy,
    .channel_attach = rk__cuda_channel_attach,
    .set_host_replies = set_host_replies,
};

/* ---- pausing for module loads ------------------------------------------------ */

#define PAUSE_TIMEOUT_NS 5000000000ull

/* True while the kernel may still be running (not faulted, not finished). */
static bool running(persistent_ring *r) {
    return atomic_load(&r->failure) == RK_OK && rk__cuda.cuStreamQuery(r->stream) == RK_CUDA_ERROR_NOT_READY;
}

static void resume_rings(rk_context *base);

/* The resident owner's pause: called with the resident lock held. */
static rk_status pause_rings(rk_context *base) {
    rk__cuda_context *ctx = rk__cuda_ctx(base);
    persistent_ring *list = running_list;
    if (!list) return RK_OK;
    for (persistent_ring *r = list; r; r = r->next_running) {
        r->paused = false;
        if (r->ctx->cu != ctx->cu || !running(r)) continue;
        atomic_store(&r->pausing, true);
        r->hctl[RK_HCTL_PAUSE] = ++r->pause_request;
    }
    /* Each kernel stops once every warp has saved its place (or finished). */
    const uint64_t deadline = rk__now_ns() + PAUSE_TIMEOUT_NS;
    persistent_ring *stuck = NULL;
    for (persistent_ring *r = list; r; r = r->next_running) {
        if (!atomic_load(&r->pausing)) continue;
        CUresult q;
        while ((q = rk__cuda.cuStreamQuery(r->stream)) == RK_CUDA_ERROR_NOT_READY && rk__now_ns() < deadline) {
        }
        if (q == RK_CUDA_ERROR_NOT_READY) {
            stuck = r;
            continue;
        }
        r->paused = q == RK_CUDA_SUCCESS && r->hctl[RK_HCTL_PAUSED] == r->pause_request;
    }
    if (!stuck) return RK_OK;
    /* Some warps of a stuck kernel may have left already: it cannot go on. */
    char reason[192];
    snprintf(reason, sizeof reason, "did not pause within %llu s for a module load (a handler that never returns?)",
             (unsigned long long)(PAUSE_TIMEOUT_NS / 1000000000u));
    for (persistent_ring *r = list; r; r = r->next_running)
        if (atomic_load(&r->pausing) && !r->paused && rk__cuda.cuStreamQuery(r->stream) == RK_CUDA_ERROR_NOT_READY)
            latch_failure(r, RK_HUNG, reason);
    rk_status s = rk__fail(RK_HUNG, "cannot load or unload a CUDA module: ring kernel '%s' %s", stuck->name, reason);
    resume_rings(base);
    return s;
}

static void resume_rings(rk_context *base) {
    (void)base;
    for (persistent_ring *r = running_list; r; r = r->next_running) {
        if (r->paused) {
            r->hctl[RK_HCTL_PAUSE] = 0;
            r->args.resume = 1;
            CUresult res = rk__cuda.cuMemsetD8Async(r->args.dctl, 0, RK_DCTL_WORDS * 8, r->stream);
            if (res == RK_CUDA_SUCCESS) res = launch(r);
            if (res != RK_CUDA_SUCCESS) {
                char reason[192];
                rk_status f;
                rk__cuda_ring_fault(res, "relaunching after a pause", &f, reason, sizeof reason);
                latch_failure(r, f, reason);
            }
            r->paused = false;
        }
        atomic_store(&r->pausing, false);
    }
}

const rk__resident_owner rk__cuda_ring_resident = {
    .name = "cuda persistent ring kernels",
    .pause = pause_rings,
    .resume = resume_rings,
};
