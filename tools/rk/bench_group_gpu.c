/* rk bench groups "cuda" and "transpile": the functions of bench/bench_cuda.h
 * and bench/bench_transpile.h when this tree has them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_report.h"
#include "cli.h"

#ifdef RK_HAVE_BENCH_CUDA
#include "bench_cuda.h"
#include "bench_cuda_floor.h"

static bool add_failed(bench_report *rep, const char *name, rk_status s) {
    cli_report_status("bench", name, s);
    bench_row row = bench_row_make("cuda", name);
    snprintf(row.note, sizeof row.note, "failed: %s", rk_status_name(s));
    bench_report_add(rep, &row);
    return false;
}

/* A floor row (bench_cuda_floor.h), measured right before the rows it judges. */
static bool floor_row(const bench_config *cfg, bench_report *rep, rk_runtime *rt, const char *backend, bool pingpong,
                      bench_row *out) {
    const char *name = pingpong ? "floor: tagged-word ping-pong, mapped memory" : "floor: empty launch + synchronize";
    bench_note(cfg, "cuda: %s", name);
    rk_bench_cuda_floor r;
    uint64_t rounds = cfg->quick ? 2000 : 0;
    rk_status s = pingpong ? rk_bench_cuda_floor_pingpong(rt, rounds, &r) : rk_bench_cuda_floor_empty_launch(rt, rounds, &r);
    *out = bench_row_make("cuda", name);
    if (s != RK_OK) return add_failed(rep, name, s);
    snprintf(out->backend, sizeof out->backend, "%s", backend);
    out->is_floor = true;
    out->messages = r.rounds;
    out->p50_us = r.p50_us;
    out->p99_us = r.p99_us;
    out->errors = r.errors;
    snprintf(out->note, sizeof out->note, "mean %.2f us", r.mean_us);
    return bench_report_add(rep, out) && r.errors == 0;
}

static bool latency_row(const bench_config *cfg, bench_report *rep, rk_runtime *rt, const char *backend,
                        const char *name, rk_exec_mode mode, bool isolated, const bench_row *floor) {
    bench_note(cfg, "cuda: %s", name);
    rk_bench_cuda_opts o = {.messages = cfg->quick ? (mode == RK_MODE_PERSISTENT ? 5000 : 2000) : 0,
                            .isolated = isolated};
    rk_bench_cuda_latency r;
    memset(&r, 0, sizeof r);
    rk_status s = rk_bench_cuda_latency_run(rt, mode, &o, &r);
    if (s != RK_OK) return add_failed(rep, name, s);
    bench_row row = bench_row_make("cuda", name);
    snprintf(row.backend, sizeof row.backend, "%s", backend);
    row.messages = r.messages;
    row.p50_us = r.p50_us;
    row.p99_us = r.p99_us;
    row.errors = r.errors;
    row.launches = r.launches;
    snprintf(row.note, sizeof row.note, "p99.9 %.2f us, mean %.2f us, max %.2f us", r.p999_us, r.mean_us, r.max_us);
    if (!isnan(floor->p50_us)) {
        bench_row_against(&row, floor);
        size_t used = strlen(row.note);
        snprintf(row.note + used, sizeof row.note - used, "; p99 %.2fx the floor's", row.p99_us / floor->p99_us);
    }
    return bench_report_add(rep, &row) && r.errors == 0;
}

static bool throughput_row(const bench_config *cfg, bench_report *rep, rk_runtime *rt, const char *backend,
                           uint32_t kernels) {
    char name[64];
    snprintf(name, sizeof name, "throughput 64 B, %u kernel%s", kernels, kernels > 1 ? "s" : "");
    bench_note(cfg, "cuda: %s", name);
    rk_bench_cuda_opts o = {.messages = cfg->messages ? cfg->messages : cfg->quick ? 2000000 : 0, .kernels = kernels};
    rk_bench_cuda_throughput r;
    memset(&r, 0, sizeof r);
    rk_status s = rk_bench_cuda_throughput_run(rt, &o, &r);
    if (s != RK_OK) return add_failed(rep, name, s);
    bench_row row = bench_row_make("cuda", name);
    snprintf(row.backend, sizeof row.backend, "%s", backend);
    row.messages = r.messages;
    row.seconds = r.seconds;
    row.rate = r.messages_per_second;
    row.bytes_per_second = r.bytes_per_second;
    row.errors = r.errors;
    return bench_report_add(rep, &row) && r.errors == 0;
}

static bool send_cost_row(const bench_config *cfg, bench_report *rep, rk_runtime *rt, const char *backend) {
    const char *name = "host send cost, batches of 256";
    bench_note(cfg, "cuda: %s", name);
    rk_bench_cuda_opts o = {.messages = cfg->quick ? 200 : 0, .batch = 256};
    rk_bench_cuda_send_cost r;
    memset(&r, 0, sizeof r);
    rk_status s = rk_bench_cuda_send_cost_run(rt, &o, &r);
    if (s != RK_OK) return add_failed(rep, name, s);
    bench_row row = bench_row_make("cuda", name);
    snprintf(row.backend, sizeof row.backend, "%s", backend);
    row.messages = r.calls * r.batch;
    row.errors = r.errors;
    snprintf(row.note, sizeof row.note, "%.1f ns per message (p50), %.1f ns mean", r.ns_per_message_p50,
             r.ns_per_message_mean);
    return bench_report_add(rep, &row) && r.errors == 0;
}

int bench_group_cuda(const bench_config *cfg, bench_report *rep, bool requested) {
    /* --backend picks the GPU when it names one ("cuda:1"). */
    const char *spec = cfg->backend && strncmp(cfg->backend, "cuda", 4) == 0 ? cfg->backend : "cuda";
    rk_runtime *rt = NULL;
    rk_runtime_desc desc = {.backend = spec};
    rk_status s = rk_runtime_create(&desc, &rt);
    if (s != RK_OK) {
        if (requested) {
            cli_report_status("bench", "cuda benchmarks", s);
            return cli_exit_for_selection(s);
        }
        bench_row row = bench_row_make("cuda", "(skipped)");
        snprintf(row.note, sizeof row.note, "no CUDA device: %.120s", rk_last_error());
        bench_report_add(rep, &row);
        return RK_EXIT_OK;
    }
    char device[320], driver[64], backend[32];
    rk_bench_cuda_describe(rt, device, sizeof device, driver, sizeof driver);
    snprintf(backend, sizeof backend, "%s", rk_runtime_backend_name(rt));
    if (!rep->device[0]) snprintf(rep->device, sizeof rep->device, "%.31s: %.320s, driver %.63s", backend, device, driver);

    bool ok = true;
    bench_row pingpong, launch;
    ok &= floor_row(cfg, rep, rt, backend, true, &pingpong);
    ok &= latency_row(cfg, rep, rt, backend, "round trip persistent, 64 B", RK_MODE_PERSISTENT, false, &pingpong);
    /* Sent 5-15 us apart: a message lands at an arbitrary point of the
     * kernel's poll rather than right after the previous reply. */
    ok &= latency_row(cfg, rep, rt, backend, "round trip persistent, isolated", RK_MODE_PERSISTENT, true, &pingpong);
    ok &= floor_row(cfg, rep, rt, backend, false, &launch);
    ok &= latency_row(cfg, rep, rt, backend, "round trip launch per command", RK_MODE_TRADITIONAL, false, &launch);
    ok &= latency_row(cfg, rep, rt, backend, "round trip CUDA graph per command", RK_MODE_GRAPH, false, &launch);
    ok &= throughput_row(cfg, rep, rt, backend, 1);
    ok &= throughput_row(cfg, rep, rt, backend, 4);
    ok &= send_cost_row(cfg, rep, rt, backend);
    rk_runtime_destroy(rt);
    return ok ? RK_EXIT_OK : RK_EXIT_FAILURE;
}

#else

int bench_group_cuda(const bench_config *cfg, bench_report *rep, bool requested) {
    (void)cfg, (void)rep;
    if (requested) fprintf(stderr, "rk bench: the CUDA benchmarks are not built into this rk\n");
    return requested ? RK_EXIT_UNAVAILABLE : RK_EXIT_OK;
}

#endif

#ifdef RK_HAVE_BENCH_TRANSPILE
#include "bench_transpile.h"

int bench_group_transpile(const bench_config *cfg, bench_report *rep, bool requested) {
    (void)requested;
    int rc = RK_EXIT_OK;
    for (size_t i = 0; i < rk_bench_transpile_kernel_count(); i++) {
        const char *kernel = rk_bench_transpile_kernel_name(i);
        char name[64];
        snprintf(name, sizeof name, "transpile %s to CUDA", kernel);
        bench_note(cfg, "transpile: %s", name);
        rk_bench_transpile_opts o = {.kernel = kernel, .iterations = cfg->quick ? 50 : 0};
        rk_bench_transpile_result r;
        memset(&r, 0, sizeof r);
        rk_status s = rk_bench_transpile(&o, &r);
        bench_row row = bench_row_make("transpile", name);
        if (s != RK_OK) {
            cli_report_status("bench", name, s);
            snprintf(row.note, sizeof row.note, "failed: %s", rk_status_name(s));
            bench_report_add(rep, &row);
            rc = RK_EXIT_FAILURE;
            continue;
        }
        row.messages = r.iterations;
        row.seconds = r.seconds;
        row.rate = r.seconds > 0 ? (double)r.iterations / r.seconds : NAN;
        row.p50_us = r.p50_us;
        row.p99_us = r.p99_us;
        row.errors = r.errors;
        snprintf(row.note, sizeof row.note, "%s kernel, %zu B of source -> %zu B of CUDA, mean %.1f us", r.kind,
                 r.source_bytes, r.output_bytes, r.mean_us);
        if (!bench_report_add(rep, &row) || r.errors) rc = RK_EXIT_FAILURE;
    }
    return rc;
}

#else

int bench_group_transpile(const bench_config *cfg, bench_report *rep, bool requested) {
    (void)cfg, (void)rep;
    if (requested) fprintf(stderr, "rk bench: the transpiler benchmarks are not built into this rk\n");
    return requested ? RK_EXIT_UNAVAILABLE : RK_EXIT_OK;
}

#endif
