/* The traditional pattern behind the ring-kernel API: messages collect in a
 * pinned batch buffer; a batch is copied in, run with one thread per message
 * (rk_ring_batch in ring.cu) and copied out, all on the kernel's own
 * non-blocking stream. RK_MODE_GRAPH replays the same three steps as a CUDA
 * graph, one graph per buffer and power-of-two batch size, captured on first
 * use; the kernel reads the real count from the batch's header.
 *
 * Two batch buffers take turns: one fills while the other is in flight. A
 * finished batch's replies move into the reply queue (queue_capacity
 * replies, as on the other backends), which frees its buffer at once; a
 * batch whose replies do not fit yet waits as DONE until the host receives.
 * Every call (send, receive, poll) makes progress: it notices a finished
 * batch and launches the next. A mutex guards it all; a launch costs
 * microseconds anyway. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda_ring.h"

enum { BATCH_THREADS = 128, HEADER = 16 };

typedef enum buffer_state { FREE, FILLING, IN_FLIGHT, DONE } buffer_state;

typedef struct batch_buffer {
    buffer_state state;
    unsigned char *in;   /* pinned: header, then messages in_stage apart */
    unsigned char *out;  /* pinned: replies out_stage apart, status after each */
    CUdeviceptr in_dev, out_dev;
    uint64_t *ids;
    uint32_t count;
    uint64_t sequence;   /* launch order: replies leave in that order */
    CUgraphExec graphs[32]; /* by log2 of the batch size */
} batch_buffer;

/* Replies of finished batches, in launch order, until the host takes them. */
typedef struct reply_queue {
    unsigned char *slots; /* capacity slots of out_stage bytes: reply, then status */
    uint64_t *ids;
    uint64_t head, tail;  /* taken by the host, written by pump */
} reply_queue;

typedef struct batch_ring {
    rk__cuda_context *ctx;
    rk__cuda_ring_layout l;
    uint32_t capacity;
    bool graph;
    CUstream stream;
    CUevent event;
    CUfunction fn;
    CUdeviceptr dev_in, dev_out, state;
    batch_buffer buf[2];
    reply_queue replies;
    int in_flight;       /* buffer index, or -1 */
    uint64_t next_sequence;
    bool active, terminate_requested;
    uint64_t processed, errors, launches;
    rk_status failure;
    char failure_reason[192];
    pthread_mutex_t lock;
} batch_ring;

static batch_ring *ring_of(rk_kernel *k) { return k->impl; }

static uint32_t log2_ceil(uint32_t v) {
    uint32_t n = 0;
    while ((1u << n) < v) n++;
    return n;
}

static void free_ring(batch_ring *r) {
    for (int b = 0; b < 2; b++) {
        for (int i = 0; i < 32; i++)
            if (r->buf[b].graphs[i]) rk__cuda.cuGraphExecDestroy(r->buf[b].graphs[i]);
        rk__cuda_pinned_free(r->ctx, r->buf[b].in);
        rk__cuda_pinned_free(r->ctx, r->buf[b].out);
        free(r->buf[b].ids);
    }
    if (r->event) rk__cuda.cuEventDestroy(r->event);
    if (r->stream) rk__cuda.cuStreamDestroy(r->stream);
    rk__cuda_device_free(r->ctx, r->dev_in);
    rk__cuda_device_free(r->ctx, r->dev_out);
    rk__cuda_device_free(r->ctx, r->state);
    free(r->replies.slots);
    free(r->replies.ids);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

static rk_status start(rk_kernel *k) {
    if (k->desc.ordered)
        return rk__fail(RK_UNSUPPORTED,
                        "rk_kernel_launch: kernel '%s' is ordered, but CUDA %s mode runs one thread per message; use "
                        "persistent mode",
                        k->name, rk_exec_mode_name(k->mode));
    rk__cuda_context *ctx = rk__cuda_ctx(k->ctx);
    batch_ring *r = calloc(1, sizeof *r);
    if (!r) return rk__fail(RK_OUT_OF_MEMORY, "out of memory");
    pthread_mutex_init(&r->lock, NULL);
    r->ctx = ctx;
    r->capacity = k->desc.queue_capacity;
    r->graph = k->mode == RK_MODE_GRAPH;
    r->in_flight = -1;
    CUmodule module = NULL;
    rk_status s = rk__cuda_ring_build(k, RK_CUDA_WARPS_PER_BLOCK, &r->l, &module);
    if (s == RK_OK) s = rk__cuda_get_function(module, "rk_ring_batch", &r->fn);
    const size_t in_bytes = HEADER + (size_t)r->capacity * r->l.in_stage;
    const size_t out_bytes = (size_t)r->capacity * r->l.out_stage;
    if (s == RK_OK) s = rk__cuda_device_alloc(ctx, in_bytes, &r->dev_in);
    if (s == RK_OK) s = rk__cuda_device_alloc(ctx, out_bytes, &r->dev_out);
    if (s == RK_OK) s = rk__cuda_device_alloc(ctx, k->desc.state_size ? k->desc.state_size : 16, &r->state);
    if (s == RK_OK) s = rk__cuda_ring_initial_state(k, r->state);
    for (int b = 0; b < 2 && s == RK_OK; b++) {
        s = rk__cuda_pinned_alloc(ctx, in_bytes, (void **)&r->buf[b].in, &r->buf[b].in_dev);
        if (s == RK_OK) s = rk__cuda_pinned_alloc(ctx, out_bytes, (void **)&r->buf[b].out, &r->buf[b].out_dev);
        if (s == RK_OK && !(r->buf[b].ids = calloc(r->capacity, sizeof(uint64_t))))
            s = rk__fail(RK_OUT_OF_MEMORY, "out of memory");
    }
    if (s == RK_OK && (!(r->replies.slots = malloc(out_bytes)) || !(r->replies.ids = calloc(r->capacity, sizeof(uint64_t)))))
        s = rk__fail(RK_OUT_OF_MEMORY, "out of memory");
    if (s == RK_OK) {
        CUresult res = rk__cuda.cuStreamCreate(&r->stream, RK_CU_STREAM_NON_BLOCKING);
        if (res == RK_CUDA_SUCCESS) res = rk__cuda.cuEventCreate(&r->event, RK_CU_EVENT_DISABLE_TIMING);
        if (res != RK_CUDA_SUCCESS) s = rk__cuda_fail(res, RK_INTERNAL, "creating the kernel's stream and event");
    }
    if (s != RK_OK) {
        free_ring(r);
        return s;
    }
    k->impl = r;
    return RK_OK;
}

static void fail(batch_ring *r, CUresult res, const char *where) {
    if (r->failure != RK_OK) return;
    rk__cuda_ring_fault(res, where, &r->failure, r->failure_reason, sizeof r->failure_reason);
}

/* The three steps of a batch of `count` messages (count rounded up to a
 * power of two when captured into a graph). */
static CUresult enqueue(batch_ring *r, batch_buffer *b, uint32_t count) {
    CUdeviceptr state = r->state, dev_in = r->dev_in, dev_out = r->dev_out;
    void *params[] = {&dev_in, &dev_out, &state};
    CUresult res = rk__cuda.cuMemcpyHtoDAsync(r->dev_in, b->in, HEADER + (size_t)count * r->l.in_stage, r->stream);
    if (res == RK_CUDA_SUCCESS)
        res = rk__cuda.cuLaunchKernel(r->fn, (count + BATCH_THREADS - 1) / BATCH_THREADS, 1, 1, BATCH_THREADS, 1, 1, 0,
                                      r->stream, params, NULL);
    if (res == RK_CUDA_SUCCESS)
        res = rk__cuda.cuMemcpyDtoHAsync(b->out, r->dev_out, (size_t)count * r->l.out_stage, r->stream);
    return res;
}

static CUresult graph_for(batch_ring *r, batch_buffer *b, uint32_t count, CUgraphExec *out) {
    uint32_t bucket = log2_ceil(count);
    if (b->graphs[bucket]) {
        *out = b->graphs[bucket];
        return RK_CUDA_SUCCESS;
    }
    CUgraph graph = NULL;
    CUresult res = rk__cuda.cuStreamBeginCapture(r->stream, RK_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
    if (res != RK_CUDA_SUCCESS) return res;
    CUresult steps = enqueue(r, b, 1u << bucket);
    res = rk__cuda.cuStreamEndCapture(r->stream, &graph);
    if (steps != RK_CUDA_SUCCESS) res = steps;
    if (res == RK_CUDA_SUCCESS) res = rk__cuda.cuGraphInstantiateWithFlags(&b->graphs[bucket], graph, 0);
    if (graph) rk__cuda.cuGraphDestroy(graph);
    *out = b->graphs[bucket];
    return res;
}

static void launch(batch_ring *r, int index) {
    batch_buffer *b = &r->buf[index];
    memcpy(b->in, &b->count, sizeof b->count);
    CUresult res;
    if (r->graph) {
        CUgraphExec exec = NULL;
        res = graph_for(r, b, b->count, &exec);
        if (res == RK_CUDA_SUCCESS) res = rk__cuda.cuGraphLaunch(exec, r->stream);
    } else {
        res = enqueue(r, b, b->count);
    }
    if (res == RK_CUDA_SUCCESS) res = rk__cuda.cuEventRecord(r->event, r->stream);
    if (res != RK_CUDA_SUCCESS) {
        fail(r, res, r->graph ? "replaying the batch graph" : "launching a batch");
        return;
    }
    b->state = IN_FLIGHT;
    b->sequence = r->next_sequence++;
    r->in_flight = index;
    r->launches++;
}

/* Moves finished batches' replies into the reply queue, oldest batch first,
 * while they fit; each buffer emptied so is free for new requests. */
static void queue_replies(batch_ring *r) {
    for (;;) {
        batch_buffer *b = NULL;
        for (int i = 0; i < 2; i++)
            if (r->buf[i].state == DONE && (!b || r->buf[i].sequence < b->sequence)) b = &r->buf[i];
        reply_queue *q = &r->replies;
        if (!b || r->capacity - (q->tail - q->head) < b->count) return;
        for (uint32_t i = 0; i < b->count; i++, q->tail++) {
            const size_t slot = (size_t)(q->tail & (r->capacity - 1));
            memcpy(q->slots + slot * r->l.out_stage, b->out + (size_t)i * r->l.out_stage, r->l.out_stage);
            q->ids[slot] = b->ids[i];
        }
        b->state = FREE;
    }
}

/* Notices a finished batch, launches a waiting one. Caller holds the lock. */
static void pump(batch_ring *r) {
    if (r->failure != RK_OK || rk__cuda_bind(r->ctx) != RK_OK) return;
    if (r->in_flight >= 0) {
        CUresult q = rk__cuda.cuEventQuery(r->event);
        if (q == RK_CUDA_ERROR_NOT_READY) return;
        if (q != RK_CUDA_SUCCESS) {
            fail(r, q, "a batch failed");
            return;
        }
        batch_buffer *b = &r->buf[r->in_flight];
        for (uint32_t i = 0; i < b->count; i++) {
            int32_t status;
            memcpy(&status, b->out + (size_t)i * r->l.out_stage + (r->l.reply_bytes + 3) / 4 * 4, sizeof status);
            if (status < 0) r->errors++;
        }
        r->processed += b->count;
        b->state = DONE;
        r->in_flight = -1;
    }
    queue_replies(r);
    if (!r->active) return;
    for (int i = 0; i < 2; i++)
        if (r->buf[i].state == FILLING && r->buf[i].count > 0) {
            launch(r, i);
            return;
        }
}

static batch_buffer *filling_buffer(batch_ring *r) {
    for (int i = 0; i < 2; i++)
        if (r->buf[i].state == FILLING) return &r->buf[i];
    for (int i = 0; i < 2; i++)
        if (r->buf[i].state == FREE) {
            r->buf[i].state = FILLING;
            r->buf[i].count = 0;
            return &r->buf[i];
        }
    return NULL;
}

static rk_status try_send(rk_kernel *k, const void *messages, size_t stride, size_t count, uint64_t first_id,
                          size_t *accepted) {
    batch_ring *r = ring_of(k);
    pthread_mutex_lock(&r->lock);
    pump(r);
    size_t n = 0;
    batch_buffer *b = filling_buffer(r);
    if (b && r->failure == RK_OK) {
        n = r->capacity - b->count;
        if (n > count) n = count;
        const unsigned char *m = messages;
        for (size_t i = 0; i < n; i++) {
            unsigned char *slot = b->in + HEADER + (size_t)(b->count + i) * r->l.in_stage;
            memcpy(slot, m + i * stride, r->l.msg_bytes);
            memset(slot + r->l.msg_bytes, 0, r->l.in_stage - r->l.msg_bytes);
            b->ids[b->count + i] = first_id + i;
        }
        b->count += (uint32_t)n;
        pump(r);
    }
    pthread_mutex_unlock(&r->lock);
    *accepted = n;
    return RK_OK;
}

static rk_status try_receive(rk_kernel *k, void *replies, size_t stride, rk_reply_info *infos, size_t max,
                             size_t *received) {
    batch_ring *r = ring_of(k);
    pthread_mutex_lock(&r->lock);
    pump(r);
    size_t n = 0;
    unsigned char *dst = replies;
    reply_queue *q = &r->replies;
    for (; n < max && q->head < q->tail; n++, q->head++) {
        const size_t slot = (size_t)(q->head & (r->capacity - 1));
        const unsigned char *src = q->slots + slot * r->l.out_stage;
        if (r->l.reply_bytes) memcpy(dst + n * stride, src, r->l.reply_bytes);
        int32_t status;
        memcpy(&status, src + (r->l.reply_bytes + 3) / 4 * 4, sizeof status);
        infos[n].id = q->ids[slot];
        infos[n].status = status;
        infos[n].reserved = 0;
    }
    if (n) pump(r); /* room in the reply queue: a waiting batch moves in */
    pthread_mutex_unlock(&r->lock);
    *received = n;
    return RK_OK;
}

static rk_status set_active(rk_kernel *k, bool active) {
    batch_ring *r = ring_of(k);
    pthread_mutex_lock(&r->lock);
    r->active = active;
    pump(r);
    pthread_mutex_unlock(&r->lock);
    return RK_OK;
}

static rk_status request_terminate(rk_kernel *k) {
    batch_ring *r = ring_of(k);
    pthread_mutex_lock(&r->lock);
    r->terminate_requested = true;
    pump(r);
    pthread_mutex_unlock(&r->lock);
    return RK_OK;
}

static rk_status poll(rk_kernel *k, rk__control *out) {
    batch_ring *r = ring_of(k);
    pthread_mutex_lock(&r->lock);
    pump(r);
    uint32_t waiting = 0, ready = (uint32_t)(r->replies.tail - r->replies.head);
    for (int i = 0; i < 2; i++) {
        const batch_buffer *b = &r->buf[i];
        if (b->state == FILLING || b->state == IN_FLIGHT) waiting += b->count;
        if (b->state == DONE) ready += b->count;
    }
    out->is_active = r->active;
    out->should_terminate = r->terminate_requested;
    out->has_terminated = r->terminate_requested && (waiting == 0 || r->failure != RK_OK);
    out->messages_processed = r->processed;
    out->errors_encountered = r->errors;
    out->launches = r->launches;
    out->input_depth = r->failure == RK_OK ? waiting : 0;
    out->output_depth = ready;
    out->failure = r->failure;
    if (r->failure != RK_OK) snprintf(out->failure_reason, sizeof out->failure_reason, "%s", r->failure_reason);
    pthread_mutex_unlock(&r->lock);
    return RK_OK;
}

static rk_status destroy(rk_kernel *k) {
    batch_ring *r = ring_of(k);
    if (!r) return RK_OK;
    if (rk__cuda_bind(r->ctx) == RK_OK && r->failure == RK_OK) rk__cuda.cuStreamSynchronize(r->stream);
    free_ring(r);
    k->impl = NULL;
    return RK_OK;
}

const rk__ring_iface rk__cuda_batch_ops = {
    .start = start,
    .try_send = try_send,
    .try_receive = try_receive,
    .set_active = set_active,
    .request_terminate = request_terminate,
    .poll = poll,
    .destroy = destroy,
};
