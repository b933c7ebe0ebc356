/* rk bench group "k2k": a 4-stage chain connected by K2K channels and, in
 * the same run, the same chain relayed through the host (receive from one
 * kernel, send to the next): throughput, per-hop latency p50 and p99, and
 * the ratio. Per hop = (percentile of the chain - p50 of one kernel) / 3, so
 * the host's own send and receive at the ends are not counted as hops.
 * A third row is the hops' own rate: messages parked in the first channel,
 * then released (pipeline_burst), so the source's host queue and the host's
 * sending, which bound the streamed rate, are out of it; a fourth the same
 * with the sink checking each message on the device, so the host's
 * receiving is out of it too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_report.h"
#include "cli.h"
#include "k2k_pipeline.h"

enum { STAGES = 4, QUEUE = 4096, BATCH = 256, BURST_MAX = 1u << 20 };

typedef struct k2k_figures {
    double rate, hop_p50_ns, hop_p99_ns, e2e_p50_ns, e2e_p99_ns;
    uint64_t messages, errors;
    double seconds;
} k2k_figures;

static rk_status measure(rk_runtime *rt, bool relay, uint64_t count, uint64_t probes, double single_p50,
                         k2k_figures *f) {
    pipeline p;
    rk_status s = pipeline_open(&p, rt, STAGES, relay, QUEUE);
    if (s != RK_OK) return s;
    pipe_result st, lt;
    s = pipeline_stream(&p, count, BATCH, &st);
    if (s == RK_OK) s = pipeline_latency(&p, probes, &lt);
    pipeline_close(&p);
    if (s != RK_OK) return s;
    f->rate = st.seconds > 0 ? (double)st.messages / st.seconds : 0;
    f->messages = st.messages;
    f->seconds = st.seconds;
    f->errors = st.wrong + st.missing + lt.wrong + lt.missing;
    f->e2e_p50_ns = lt.p50_ns;
    f->e2e_p99_ns = lt.p99_ns;
    /* Clamped: on a busy machine the chain's p50 can come out below one kernel's. */
    f->hop_p50_ns = lt.p50_ns > single_p50 ? (lt.p50_ns - single_p50) / (STAGES - 1) : 0.0;
    f->hop_p99_ns = lt.p99_ns > single_p50 ? (lt.p99_ns - single_p50) / (STAGES - 1) : 0.0;
    return RK_OK;
}

static int add_row(bench_report *rep, const char *backend, const char *name, const k2k_figures *f,
                   const char *note, bool latency) {
    bench_row row = bench_row_make("k2k", name);
    snprintf(row.backend, sizeof row.backend, "%s", backend);
    row.messages = f->messages;
    row.seconds = f->seconds;
    row.rate = f->rate;
    row.bytes_per_second = f->rate * sizeof(pipe_msg);
    if (latency) {
        row.p50_us = f->hop_p50_ns / 1e3;
        row.p99_us = f->hop_p99_ns / 1e3;
    }
    row.errors = f->errors;
    snprintf(row.note, sizeof row.note, "%s", note);
    if (!bench_report_add(rep, &row)) return RK_EXIT_FAILURE;
    return f->errors ? RK_EXIT_FAILURE : RK_EXIT_OK;
}

/* A burst parked in the first channel and released (sink_checks: the sink
 * checks each message on the device and answers only wrong ones). */
static rk_status measure_burst(rk_runtime *rt, uint32_t parked, bool sink_checks, k2k_figures *out) {
    pipe_result br;
    rk_status s = pipeline_burst(rt, STAGES, parked, sink_checks, &br);
    out->messages = br.messages;
    out->seconds = br.seconds;
    out->rate = br.seconds > 0 ? (double)br.messages / br.seconds : 0;
    out->errors = br.wrong + br.missing;
    return s;
}

int bench_group_k2k(const bench_config *cfg, bench_report *rep, bool requested) {
    const char *spec = cfg->backend;
    const char *env = getenv("RK_BACKEND");
    if (!spec && !(env && *env)) spec = "cpu";
    rk_runtime *rt = NULL;
    rk_runtime_desc desc = {.backend = spec};
    rk_status s = rk_runtime_create(&desc, &rt);
    if (s != RK_OK) {
        cli_report_status("bench", "k2k: cannot use the backend", s);
        return cli_exit_for_selection(s);
    }
    char backend[32];
    snprintf(backend, sizeof backend, "%s", rk_runtime_backend_name(rt));
    uint64_t count = cfg->messages ? cfg->messages : cfg->quick ? 5000 : 2000000;
    uint64_t probes = cfg->quick ? 100 : 5000;

    /* One kernel alone: the host's send + receive that every chain pays once. */
    bench_note(cfg, "k2k: one kernel, round trip");
    pipeline one;
    pipe_result single;
    s = pipeline_open(&one, rt, 1, false, QUEUE);
    if (s == RK_OK) {
        s = pipeline_latency(&one, probes, &single);
        pipeline_close(&one);
    }
    /* K2K_STAGE_SWEEP=1: the chain's p50 end to end at 2, 3 and 4 stages, so
     * the hop (the slope) is told apart from what the chain's ends cost
     * beyond one kernel's (the intercept), which the per-hop row spreads
     * over the hops. */
    const char *sweep = getenv("K2K_STAGE_SWEEP");
    for (unsigned n = 2; s == RK_OK && sweep && *sweep == '1' && n <= STAGES; n++) {
        pipeline sp;
        pipe_result sr;
        s = pipeline_open(&sp, rt, n, false, QUEUE);
        if (s != RK_OK) break;
        s = pipeline_latency(&sp, probes, &sr);
        pipeline_close(&sp);
        if (s == RK_OK)
            fprintf(stderr, "k2k stage sweep: %u stages p50 %.0f ns (one kernel %.0f ns)\n", n, sr.p50_ns,
                    single.p50_ns);
    }
    k2k_figures chain = {0}, relay = {0}, burst = {0}, hops = {0};
    if (s == RK_OK) {
        bench_note(cfg, "k2k: %d-stage chain over channels", STAGES);
        s = measure(rt, false, count, probes, single.p50_ns, &chain);
    }
    if (s == RK_OK) {
        bench_note(cfg, "k2k: the same chain relayed by the host");
        s = measure(rt, true, count, probes, single.p50_ns, &relay);
    }
    /* The largest power of two up to count (and 1 Mi: the first channel holds them all). */
    uint32_t parked = 1;
    while (parked * 2u <= count && parked * 2u <= BURST_MAX) parked *= 2u;
    if (s == RK_OK) {
        bench_note(cfg, "k2k: %u messages parked in the first channel, then released", parked);
        s = measure_burst(rt, parked, false, &burst);
    }
    if (s == RK_OK) {
        bench_note(cfg, "k2k: %u messages parked, released, checked by the sink on the device", parked);
        s = measure_burst(rt, parked, true, &hops);
    }
    char why[512]; /* rk_runtime_destroy clears rk_last_error() */
    snprintf(why, sizeof why, "%s", rk_last_error());
    rk_runtime_destroy(rt);
    if (s == RK_UNSUPPORTED) {
        fprintf(stderr, "rk bench: k2k: not on the %s backend: %s\n", backend, why);
        return requested ? RK_EXIT_UNAVAILABLE : RK_EXIT_OK;
    }
    if (s != RK_OK) {
        cli_report_status("bench", "k2k", s);
        return RK_EXIT_FAILURE;
    }
    char note[160];
    snprintf(note, sizeof note, "end to end p50 %.2f us, p99 %.2f us; one kernel %.2f us", chain.e2e_p50_ns / 1e3,
             chain.e2e_p99_ns / 1e3, single.p50_ns / 1e3);
    int rc = add_row(rep, backend, "4-stage chain, K2K channels (per hop)", &chain, note, true);
    snprintf(note, sizeof note, "relay/K2K: throughput x%.2f, per-hop latency x%.2f",
             relay.rate > 0 ? chain.rate / relay.rate : 0.0,
             chain.hop_p50_ns > 0 ? relay.hop_p50_ns / chain.hop_p50_ns : 0.0);
    int r2 = add_row(rep, backend, "4-stage chain, host relay (per hop)", &relay, note, true);
    snprintf(note, sizeof note, "%llu messages released from the first channel: 3 hops and the host receiving",
             (unsigned long long)burst.messages);
    int r3 = add_row(rep, backend, "4-stage chain, K2K channels, parked burst", &burst, note, false);
    snprintf(note, sizeof note, "%llu messages released from the first channel: 3 hops, checked by the sink on the "
             "device (the host receives only failures)", (unsigned long long)hops.messages);
    int r4 = add_row(rep, backend, "4-stage chain, K2K channels, parked burst, device only", &hops, note, false);
    bench_note(cfg, "k2k on %s: channels %.3f M msg/s, per hop p50 %.2f us p99 %.2f us; host relay %.3f M msg/s, "
           "per hop p50 %.2f us p99 %.2f us; K2K/relay throughput %.2fx, relay/K2K hop latency %.2fx; "
           "parked burst through the channels %.3f M msg/s (device only: %.3f M msg/s)\n",
           backend, chain.rate / 1e6, chain.hop_p50_ns / 1e3, chain.hop_p99_ns / 1e3, relay.rate / 1e6,
           relay.hop_p50_ns / 1e3, relay.hop_p99_ns / 1e3,
           relay.rate > 0 ? chain.rate / relay.rate : 0.0,
           chain.hop_p50_ns > 0 ? relay.hop_p50_ns / chain.hop_p50_ns : 0.0, burst.rate / 1e6, hops.rate / 1e6);
    return rc != RK_EXIT_OK ? rc : r2 != RK_EXIT_OK ? r2 : r3 != RK_EXIT_OK ? r3 : r4;
}
