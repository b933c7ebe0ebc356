/* rk demo's message loop: see demo_run.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "demo_run.h"

enum {
    PROBES_PER_CYCLE = 8, /* one-at-a-time round trips after each drained burst */
    MAX_PROBES = 1 << 20,
    MAX_REPORTED_ERRORS = 5,
};

volatile sig_atomic_t demo_interrupted;

static void report_wrong(demo_run *r, const char *fmt, const char *detail) {
    if (r->wrong + r->handler_errors + r->lost <= MAX_REPORTED_ERRORS) {
        progress_finish(&r->progress);
        fprintf(stderr, fmt, detail);
        fputc('\n', stderr);
    }
}

static void mark_sent(demo_run *r, uint64_t seq) {
    r->seen[(seq % DEMO_SEEN_BITS) / 8] |= (uint8_t)(1u << (seq % 8));
}

/* Checks one reply: it must answer a message that is outstanding, and its
 * content must be what the handler computes for that message. */
static void check_reply(demo_run *r, const demo_reply *reply, const rk_reply_info *info) {
    char why[160];
    uint64_t seq = info->id - r->base_id;
    uint8_t bit = (uint8_t)(1u << (seq % 8));
    uint8_t *slot = &r->seen[(seq % DEMO_SEEN_BITS) / 8];
    if (info->id < r->base_id || seq >= r->sent || !(*slot & bit)) {
        r->wrong++;
        snprintf(why, sizeof why, "reply with id %llu answers no outstanding message (duplicate or invented)",
                 (unsigned long long)info->id);
        report_wrong(r, "rk demo: %s", why);
        return;
    }
    *slot &= (uint8_t)~bit;
    if (info->status != 0) {
        r->handler_errors++;
        snprintf(why, sizeof why, "message %llu: handler returned %d", (unsigned long long)seq, (int)info->status);
        report_wrong(r, "rk demo: %s", why);
    } else if (!demo_check_reply(seq, reply, why, sizeof why)) {
        r->wrong++;
        report_wrong(r, "rk demo: wrong reply: %s", why);
    } else {
        r->verified++;
    }
}

/* Sends up to count messages starting at seq r->sent, without waiting. */
static rk_status send_some(demo_run *r, size_t count, size_t *accepted) {
    for (size_t i = 0; i < count; i++) demo_make_request(r->sent + i, &r->requests[i]);
    uint64_t first_id = 0;
    rk_status s = rk_kernel_send_batch(r->kernel, r->requests, sizeof(demo_request), count, RK_NO_WAIT, accepted,
                                       &first_id);
    if (s == RK_TIMEOUT || s == RK_WOULD_BLOCK) s = RK_OK;
    if (s != RK_OK || *accepted == 0) return s;
    if (!r->have_base) {
        r->base_id = first_id;
        r->have_base = true;
    } else if (first_id != r->base_id + r->sent) {
        fprintf(stderr, "rk demo: the kernel numbered message %llu as id %llu, expected %llu\n",
                (unsigned long long)r->sent, (unsigned long long)first_id,
                (unsigned long long)(r->base_id + r->sent));
        return RK_INTERNAL;
    }
    for (size_t i = 0; i < *accepted; i++) mark_sent(r, r->sent + i);
    r->sent += *accepted;
    return RK_OK;
}

/* Takes whatever replies are there (waiting up to timeout for the first). */
static rk_status receive_some(demo_run *r, uint64_t timeout_ns, size_t *got) {
    rk_status s = rk_kernel_receive_batch(r->kernel, r->replies, sizeof(demo_reply), r->infos, r->opt->batch,
                                          timeout_ns, got);
    if (s == RK_TIMEOUT || s == RK_WOULD_BLOCK) {
        *got = 0;
        return RK_OK;
    }
    if (s != RK_OK) return s;
    for (size_t i = 0; i < *got; i++) check_reply(r, &r->replies[i], &r->infos[i]);
    return RK_OK;
}

uint64_t demo_outstanding(const demo_run *r) {
    return r->sent - (r->verified + r->wrong + r->handler_errors);
}

static bool time_is_up(const demo_run *r, uint64_t now) {
    if (demo_interrupted) return true;
    if (r->opt->messages && r->sent >= r->opt->messages) return true;
    return now - r->start_ns >= (uint64_t)(r->opt->seconds * 1e9);
}

static void show_progress(demo_run *r, uint64_t now) {
    if (!progress_due(&r->progress, now)) return;
    double secs = (double)(now - r->start_ns) / 1e9;
    char rate[32], p50[32] = "-";
    cli_format_count(secs > 0 ? (double)r->verified / secs : 0, rate, sizeof rate);
    if (r->rtt_count) {
        uint64_t *copy = malloc(r->rtt_count * sizeof *copy);
        if (copy) {
            memcpy(copy, r->rtt_ns, r->rtt_count * sizeof *copy);
            cli_format_duration_ns(cli_percentile_u64(copy, r->rtt_count, 50), p50, sizeof p50);
            free(copy);
        }
    }
    progress_print(&r->progress, now, "  %5.1f s  %12llu replies verified  %9s msg/s  round trip p50 %-9s  errors %llu",
                   secs, (unsigned long long)r->verified, rate, p50,
                   (unsigned long long)(r->wrong + r->handler_errors + r->lost));
}

/* A burst: keeps up to the queue's capacity in flight until the burst size
 * is sent or time is up, then waits for every reply. */
static rk_status run_burst(demo_run *r, uint64_t burst) {
    uint64_t target = r->sent + burst;
    uint64_t last_progress_ns = cli_now_ns();
    for (;;) {
        uint64_t now = cli_now_ns();
        bool may_send = r->sent < target && !time_is_up(r, now);
        size_t accepted = 0, got = 0;
        if (may_send) {
            uint64_t room = r->opt->queue - demo_outstanding(r);
            uint64_t want = target - r->sent;
            if (r->opt->messages && r->opt->messages - r->sent < want) want = r->opt->messages - r->sent;
            if (want > room) want = room;
            if (want > r->opt->batch) want = r->opt->batch;
            if (want) {
                rk_status s = send_some(r, (size_t)want, &accepted);
                if (s != RK_OK) return s;
            }
        } else if (demo_outstanding(r) == 0) {
            return RK_OK;
        }
        /* Nothing to send: block briefly for replies instead of spinning. */
        rk_status s = receive_some(r, accepted ? RK_NO_WAIT : DEMO_MS, &got);
        if (s != RK_OK) return s;
        if (got || accepted) last_progress_ns = now;
        if (now - last_progress_ns > 5 * DEMO_SECOND) {
            r->lost += demo_outstanding(r);
            fprintf(stderr, "rk demo: no reply for 5 s with %llu messages outstanding\n",
                    (unsigned long long)demo_outstanding(r));
            return RK_HUNG;
        }
        show_progress(r, now);
    }
}

/* One message at a time, the queue otherwise empty: the round trip a single
 * request sees. */
static rk_status run_probes(demo_run *r, int count) {
    for (int i = 0; i < count && r->rtt_count < MAX_PROBES; i++) {
        uint64_t t0 = cli_now_ns();
        demo_make_request(r->sent, &r->requests[0]);
        uint64_t id = 0;
        rk_status s = rk_kernel_send(r->kernel, &r->requests[0], sizeof(demo_request), DEMO_SECOND, &id);
        if (s != RK_OK) return s;
        if (!r->have_base) {
            r->base_id = id;
            r->have_base = true;
        }
        mark_sent(r, r->sent);
        r->sent++;
        s = rk_kernel_receive(r->kernel, &r->replies[0], sizeof(demo_reply), &r->infos[0], 5 * DEMO_SECOND);
        uint64_t t1 = cli_now_ns();
        if (s == RK_TIMEOUT) {
            r->lost++;
            fprintf(stderr, "rk demo: no reply to a single message within 5 s\n");
            return RK_HUNG;
        }
        if (s != RK_OK) return s;
        check_reply(r, &r->replies[0], &r->infos[0]);
        r->rtt_ns[r->rtt_count++] = t1 - t0;
    }
    return RK_OK;
}

rk_status demo_run_loop(demo_run *r) {
    /* Bursts grow until one takes about 20 ms, so probes are spread evenly. */
    uint64_t burst = 1024;
    for (;;) {
        uint64_t t0 = cli_now_ns();
        rk_status s = run_burst(r, burst);
        if (s != RK_OK) return s;
        uint64_t took = cli_now_ns() - t0;
        if (took < 20 * DEMO_MS && burst < (1u << 24)) burst *= 2;
        if (time_is_up(r, cli_now_ns())) break;
        int probes = PROBES_PER_CYCLE;
        if (r->opt->messages && r->opt->messages - r->sent < (uint64_t)probes) probes = (int)(r->opt->messages - r->sent);
        s = run_probes(r, probes);
        if (s != RK_OK) return s;
        if (time_is_up(r, cli_now_ns())) break;
    }
    return RK_OK;
}

bool demo_run_init(demo_run *r, rk_kernel *kernel, const demo_options *opt) {
    memset(r, 0, sizeof *r);
    r->kernel = kernel;
    r->opt = opt;
    size_t batch = (size_t)r->opt->batch;
    r->seen = calloc(DEMO_SEEN_BITS / 8, 1);
    r->requests = calloc(batch, sizeof *r->requests);
    r->replies = calloc(batch, sizeof *r->replies);
    r->infos = calloc(batch, sizeof *r->infos);
    r->rtt_ns = calloc(MAX_PROBES, sizeof *r->rtt_ns);
    if (r->seen && r->requests && r->replies && r->infos && r->rtt_ns) return true;
    demo_run_free(r);
    return false;
}

void demo_run_free(demo_run *r) {
    free(r->seen);
    free(r->requests);
    free(r->replies);
    free(r->infos);
    free(r->rtt_ns);
    r->seen = NULL;
    r->requests = NULL;
    r->replies = NULL;
    r->infos = NULL;
    r->rtt_ns = NULL;
}

rk_status demo_run_finish(demo_run *r) {
    rk_status s = rk_kernel_terminate(r->kernel, 10 * DEMO_SECOND);
    if (s != RK_OK) return s;
    while (demo_outstanding(r) > 0) {
        size_t got = 0;
        rk_status rs = receive_some(r, 100 * DEMO_MS, &got);
        if (rs != RK_OK) return rs;
        if (got == 0) break;
    }
    r->lost += demo_outstanding(r);
    return RK_OK;
}

