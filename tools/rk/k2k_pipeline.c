/* See k2k_pipeline.h. */
#include "k2k_pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "ringkernel/channel.h"

extern const char rk_pipeline_handler_source[];

#define WAIT_NS ((uint64_t)20 * 1000000000u)

uint32_t pipe_expected_check(uint32_t seq, unsigned stages) {
    uint32_t c = seq;
    for (unsigned h = 1; h <= stages; h++) c = c * 31u + h;
    return c;
}

/* first_channel: the capacity of channel 1 -> 2 (0: queue); active: how
 * many stages, from the first, are activated. */
static rk_status open_chain(pipeline *p, rk_runtime *rt, unsigned stages, bool relay, uint32_t queue,
                            uint32_t first_channel, unsigned active, bool device_check) {
    memset(p, 0, sizeof *p);
    p->rt = rt;
    p->relay = relay;
    p->queue = queue;
    p->spin = strcmp(rk_runtime_backend_name(rt), "cpu") != 0;
    if (stages < 1 || stages > PIPE_MAX_STAGES) return RK_INVALID_ARGUMENT;
    rk_status s = RK_OK;
    for (unsigned i = 0; i < stages && s == RK_OK; i++) {
        char name[32];
        snprintf(name, sizeof name, "%s%u", relay ? "relay" : "stage", i + 1);
        rk_kernel_desc d = {
            .name = name,
            .handler_source = rk_pipeline_handler_source,
            /* Relayed kernels never emit: each is a sink the host moves on. */
            .handler_name = relay || i + 1 == stages ? (device_check ? "pipe_check_sink" : "pipe_sink") : "pipe_stage",
            .message_size = sizeof(pipe_msg),
            .reply_size = sizeof(pipe_msg),
            .queue_capacity = queue,
            .workers = 1,
            .ordered = true, /* CUDA: one worker warp per kernel, as channels need */
        };
        s = rk_kernel_launch(rt, &d, &p->k[i]);
        if (s == RK_OK) p->stages = i + 1;
    }
    for (unsigned i = 0; !relay && s == RK_OK && i + 1 < stages; i++) {
        rk_channel_desc cd = {.message_size = sizeof(pipe_msg), .capacity = i == 0 && first_channel ? first_channel : queue,
                              .replies = i + 2 == stages && !device_check ? RK_CHANNEL_REPLY_ALL : RK_CHANNEL_REPLY_FAILURES};
        s = rk_channel_connect(p->k[i], 0, p->k[i + 1], &cd, &p->ch[i]);
    }
    if (!relay && s == RK_OK && stages > 1) s = rk_channel_set_host_replies(p->k[0], RK_CHANNEL_REPLY_FAILURES);
    for (unsigned i = 0; s == RK_OK && i < active && i < stages; i++) s = rk_kernel_activate(p->k[i]);
    if (s != RK_OK) pipeline_close(p);
    return s;
}

rk_status pipeline_open(pipeline *p, rk_runtime *rt, unsigned stages, bool relay, uint32_t queue) {
    return open_chain(p, rt, stages, relay, queue, 0, stages, false);
}

void pipeline_close(pipeline *p) {
    for (unsigned i = 0; i < p->stages; i++) {
        rk_kernel_terminate(p->k[i], WAIT_NS);
        rk_kernel_destroy(p->k[i]);
        p->k[i] = NULL;
        p->ch[i] = NULL; /* a channel lives until both its kernels are destroyed */
    }
    p->stages = 0;
}

static void check_one(const pipeline *p, const pipe_msg *m, const rk_reply_info *info, uint32_t expect_seq,
                      pipe_result *out) {
    if (info->status != 0 || m->seq != expect_seq || m->hops != p->stages ||
        m->check != pipe_expected_check(expect_seq, p->stages))
        out->wrong++;
}

/* Relay: what kernel i has answered, on its way to kernel i + 1. Sends
 * never wait: on CUDA's persistent mode a queue's slots free only as its
 * replies are received, which this same loop does, so a waiting send could
 * wait for itself. What does not fit yet is held, in order, for the next
 * round. */
typedef struct relay_hold {
    pipe_msg *msgs;
    size_t count, sent;
} relay_hold;

/* Moves messages from kernel i to kernel i + 1. Returns how many it moved
 * (taken or passed on); *s is set on an error. */
static size_t relay_step(pipeline *p, unsigned i, relay_hold *h, rk_reply_info *infos, size_t max, rk_status *s) {
    size_t moved = 0;
    if (h->sent == h->count) {
        h->count = h->sent = 0;
        *s = rk_kernel_receive_batch(p->k[i], h->msgs, sizeof h->msgs[0], infos, max, RK_NO_WAIT, &h->count);
        if (*s == RK_WOULD_BLOCK || *s == RK_TIMEOUT) *s = RK_OK;
        if (*s != RK_OK || h->count == 0) return 0;
        moved += h->count;
    }
    size_t sent = 0;
    *s = rk_kernel_send_batch(p->k[i + 1], h->msgs + h->sent, sizeof h->msgs[0], h->count - h->sent, RK_NO_WAIT, &sent,
                              NULL);
    if (*s == RK_WOULD_BLOCK) *s = RK_OK;
    h->sent += sent;
    return moved + sent;
}

rk_status pipeline_stream(pipeline *p, uint64_t count, uint32_t batch, pipe_result *out) {
    memset(out, 0, sizeof *out);
    /* A batch never exceeds a queue: the relay holds one in flight per hop. */
    if (batch > p->queue / 2) batch = p->queue / 2 ? p->queue / 2 : 1;
    pipe_msg *buf = calloc(batch, sizeof *buf);
    rk_reply_info *infos = calloc(batch, sizeof *infos);
    relay_hold hold[PIPE_MAX_STAGES] = {{0}};
    bool no_memory = !buf || !infos;
    for (unsigned i = 0; p->relay && i + 1 < p->stages; i++) no_memory |= !(hold[i].msgs = calloc(batch, sizeof *buf));
    if (no_memory) {
        for (unsigned i = 0; i < PIPE_MAX_STAGES; i++) free(hold[i].msgs);
        free(buf);
        free(infos);
        return RK_OUT_OF_MEMORY;
    }
    rk_kernel *first = p->k[0], *last = p->k[p->stages - 1];
    uint64_t sent = 0, got = 0, start = cli_now_ns(), idle_since = 0;
    rk_status s = RK_OK;
    while (got < count && s == RK_OK) {
        bool moved = false;
        if (sent < count) {
            size_t n = count - sent < batch ? (size_t)(count - sent) : batch, accepted = 0;
            for (size_t i = 0; i < n; i++) buf[i] = (pipe_msg){.seq = (uint32_t)(sent + i), .check = (uint32_t)(sent + i)};
            s = rk_kernel_send_batch(first, buf, sizeof buf[0], n, RK_NO_WAIT, &accepted, NULL);
            if (s == RK_WOULD_BLOCK) s = RK_OK;
            sent += accepted;
            moved |= accepted > 0;
        }
        for (unsigned i = 0; p->relay && s == RK_OK && i + 1 < p->stages; i++)
            moved |= relay_step(p, i, &hold[i], infos, batch, &s) > 0;
        size_t n = 0;
        if (s == RK_OK) s = rk_kernel_receive_batch(last, buf, sizeof buf[0], infos, batch, RK_NO_WAIT, &n);
        if (s == RK_WOULD_BLOCK) s = RK_OK;
        for (size_t i = 0; i < n; i++, got++) check_one(p, &buf[i], &infos[i], (uint32_t)got, out);
        moved |= n > 0;
        uint64_t now = cli_now_ns();
        if (moved) idle_since = 0;
        else if (!idle_since) idle_since = now;
        else if (now - idle_since > WAIT_NS) break; /* nothing for 20 s: count the rest as missing */
    }
    out->seconds = (double)(cli_now_ns() - start) / 1e9;
    out->messages = got;
    out->missing = count - got;
    for (unsigned i = 0; i < PIPE_MAX_STAGES; i++) free(hold[i].msgs);
    free(buf);
    free(infos);
    return s;
}

/* On a GPU backend, a receive that spins on the host (no yield, no nap)
 * until the reply is there: a blocking receive yields the thread after 2 us
 * of spinning, and every chain here takes longer than that, so its p50
 * would include the scheduler's share. The same for one kernel, the chain
 * and the relay. On the CPU backend the spinning thread would take a core
 * from the kernels' workers: a blocking receive there. */
static rk_status receive_spin(const pipeline *p, rk_kernel *k, pipe_msg *r, rk_reply_info *info) {
    if (!p->spin) return rk_kernel_receive(k, r, sizeof *r, info, WAIT_NS);
    const uint64_t deadline = cli_now_ns() + WAIT_NS;
    for (uint32_t round = 1;; round++) {
        rk_status s = rk_kernel_receive(k, r, sizeof *r, info, RK_NO_WAIT);
        if (s != RK_WOULD_BLOCK && s != RK_TIMEOUT) return s;
        if ((round & 1023u) == 0 && cli_now_ns() > deadline) return RK_TIMEOUT;
    }
}

rk_status pipeline_latency(pipeline *p, uint64_t probes, pipe_result *out) {
    memset(out, 0, sizeof *out);
    uint64_t *ns = calloc(probes ? probes : 1, sizeof *ns);
    if (!ns) return RK_OUT_OF_MEMORY;
    rk_status s = RK_OK;
    uint64_t start = cli_now_ns();
    for (uint64_t i = 0; i < probes && s == RK_OK; i++) {
        pipe_msg m = {.seq = (uint32_t)i, .check = (uint32_t)i}, r;
        rk_reply_info info;
        uint64_t t0 = cli_now_ns();
        s = rk_kernel_send(p->k[0], &m, sizeof m, WAIT_NS, NULL);
        for (unsigned k = 0; p->relay && s == RK_OK && k + 1 < p->stages; k++) {
            s = receive_spin(p, p->k[k], &r, &info);
            if (s == RK_OK) s = rk_kernel_send(p->k[k + 1], &r, sizeof r, WAIT_NS, NULL);
        }
        if (s == RK_OK) s = receive_spin(p, p->k[p->stages - 1], &r, &info);
        ns[i] = cli_now_ns() - t0;
        if (s == RK_OK) {
            check_one(p, &r, &info, (uint32_t)i, out);
            out->messages++;
        }
    }
    out->seconds = (double)(cli_now_ns() - start) / 1e9;
    out->missing = probes - out->messages;
    out->p50_ns = cli_percentile_u64(ns, out->messages, 50);
    out->p99_ns = cli_percentile_u64(ns, out->messages, 99);
    free(ns);
    return s;
}

rk_status pipeline_burst(rk_runtime *rt, unsigned stages, uint32_t count, bool device_check, pipe_result *out) {
    memset(out, 0, sizeof *out);
    if (stages < 2 || count == 0 || (count & (count - 1u))) return RK_INVALID_ARGUMENT;
    enum { QUEUE = 4096, BATCH = 256 };
    pipeline p;
    /* Only the source runs at first: its emits fill the first channel. */
    rk_status s = open_chain(&p, rt, stages, false, QUEUE, count, 1, device_check);
    if (s != RK_OK) return s;
    pipe_msg *buf = calloc(BATCH, sizeof *buf);
    rk_reply_info *infos = calloc(BATCH, sizeof *infos);
    if (!buf || !infos) s = RK_OUT_OF_MEMORY;
    uint64_t sent = 0;
    while (s == RK_OK && sent < count) {
        size_t n = count - sent < BATCH ? (size_t)(count - sent) : BATCH, accepted = 0;
        for (size_t i = 0; i < n; i++) buf[i] = (pipe_msg){.seq = (uint32_t)(sent + i), .check = (uint32_t)(sent + i)};
        s = rk_kernel_send_batch(p.k[0], buf, sizeof buf[0], n, WAIT_NS, &accepted, NULL);
        sent += accepted;
    }
    /* Parked: every message waits in the first channel. */
    uint64_t deadline = cli_now_ns() + WAIT_NS;
    rk_channel_stats cs = {0};
    while (s == RK_OK) {
        s = rk_channel_stats_get(p.ch[0], &cs);
        if (s != RK_OK || cs.emitted >= count) break;
        if (cli_now_ns() > deadline) {
            fprintf(stderr, "rk: k2k burst: only %llu of %u messages reached the first channel\n",
                    (unsigned long long)cs.emitted, count);
            s = RK_TIMEOUT;
        }
        struct timespec nap = {0, 100000}; /* the CPU backend's workers need the cores */
        nanosleep(&nap, NULL);
    }
    /* Released, the sink first: the clock runs until the last reply is checked. */
    uint64_t got = 0, start = cli_now_ns();
    for (unsigned i = stages - 1; s == RK_OK && i >= 1; i--) s = rk_kernel_activate(p.k[i]);
    while (s == RK_OK && got < count && !device_check) {
        size_t n = 0;
        s = rk_kernel_receive_batch(p.k[stages - 1], buf, sizeof buf[0], infos, BATCH, WAIT_NS, &n);
        for (size_t i = 0; i < n; i++, got++) check_one(&p, &buf[i], &infos[i], (uint32_t)got, out);
    }
    if (device_check && s == RK_OK) {
        /* The sink checks each message itself and answers only a wrong one:
         * the clock runs until the last channel has delivered them all. */
        rk_channel *last = p.ch[stages - 2];
        rk_channel_stats cs = {0};
        uint64_t idle_since = cli_now_ns(), seen = 0;
        while (s == RK_OK) {
            s = rk_channel_stats_get(last, &cs);
            if (s != RK_OK || cs.delivered >= count) break;
            struct timespec nap = {0, 20000}; /* the CPU backend's workers need the cores */
            nanosleep(&nap, NULL);
            const uint64_t now = cli_now_ns();
            if (cs.delivered != seen) {
                seen = cs.delivered;
                idle_since = now;
            } else if (now - idle_since > WAIT_NS) {
                fprintf(stderr, "rk: k2k burst: the sink took %llu of %u messages, then nothing for 20 s\n",
                        (unsigned long long)cs.delivered, count);
                s = RK_TIMEOUT;
            }
        }
        got = s == RK_OK ? count : cs.delivered;
    }
    out->seconds = (double)(cli_now_ns() - start) / 1e9;
    if (device_check && s == RK_OK) {
        /* A wrong message comes back as a failed reply: none may. */
        for (;;) {
            size_t n = 0;
            rk_status r = rk_kernel_receive_batch(p.k[stages - 1], buf, sizeof buf[0], infos, BATCH, 200000000u, &n);
            if (r != RK_OK || n == 0) break;
            out->wrong += n;
        }
    }
    out->messages = got;
    out->missing = count - got;
    free(buf);
    free(infos);
    pipeline_close(&p);
    return s;
}
