/* rk bench groups "queue" and "kernel": the functions of bench/bench_cpu.h,
 * run with the settings the figures in docs/benchmarks.md use. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_report.h"
#include "cli.h"

#ifdef RK_HAVE_BENCH_CPU
#include "bench_cpu.h"

enum { QUICK_QUEUE = 200000, QUICK_THROUGHPUT = 50000, QUICK_LATENCY = 2000 };

static int add_or_fail(bench_report *rep, const bench_row *row) {
    if (!bench_report_add(rep, row)) {
        fprintf(stderr, "rk bench: out of memory\n");
        return RK_EXIT_FAILURE;
    }
    return row->errors ? RK_EXIT_FAILURE : RK_EXIT_OK;
}

static int queue_case(const bench_config *cfg, bench_report *rep, uint32_t slot, uint32_t batch) {
    char name[64];
    if (batch > 1)
        snprintf(name, sizeof name, "spsc queue %u B, batches of %u", slot, batch);
    else
        snprintf(name, sizeof name, "spsc queue %u B, one at a time", slot);
    bench_note(cfg, "queue: %s", name);
    rk_bench_queue_opts o = {.messages = cfg->messages ? cfg->messages : cfg->quick ? QUICK_QUEUE : 0,
                             .slot_size = slot,
                             .batch = batch};
    rk_bench_queue_result res;
    memset(&res, 0, sizeof res);
    rk_status s = rk_bench_queue_spsc(&o, &res);
    if (s != RK_OK) {
        cli_report_status("bench", name, s);
        return RK_EXIT_FAILURE;
    }
    bench_row row = bench_row_make("queue", name);
    row.messages = res.messages;
    row.seconds = res.seconds;
    row.rate = res.messages_per_second;
    row.bytes_per_second = res.bytes_per_second;
    row.errors = res.errors;
    return add_or_fail(rep, &row);
}

int bench_group_queue(const bench_config *cfg, bench_report *rep, bool requested) {
    (void)requested;
    int rc = RK_EXIT_OK, r;
    if ((r = queue_case(cfg, rep, 64, 1)) != RK_EXIT_OK) rc = r;
    if ((r = queue_case(cfg, rep, 64, 64)) != RK_EXIT_OK) rc = r;
    return rc;
}

typedef struct kernel_case {
    rk_exec_mode mode;
    uint32_t message_size;
    bool latency;
} kernel_case;

static int run_kernel_case(const bench_config *cfg, bench_report *rep, rk_runtime *rt, const char *backend,
                           const kernel_case *c) {
    char name[64];
    snprintf(name, sizeof name, "%s %s, %u B%s", c->latency ? "round trip" : "ring kernel",
             rk_exec_mode_name(c->mode), c->message_size, c->latency ? ", one at a time" : ", batches of 256");
    bench_note(cfg, "kernel: %s", name);
    rk_bench_kernel_opts o = {.message_size = c->message_size, .batch = 256, .mode = c->mode};
    if (c->latency)
        o.messages = cfg->quick ? QUICK_LATENCY : 0;
    else
        o.messages = cfg->messages ? cfg->messages : cfg->quick ? QUICK_THROUGHPUT : 0;
    rk_bench_kernel_result res;
    memset(&res, 0, sizeof res);
    rk_status s = c->latency ? rk_bench_kernel_latency(rt, &o, &res) : rk_bench_kernel_throughput(rt, &o, &res);
    bench_row row = bench_row_make("kernel", name);
    snprintf(row.backend, sizeof row.backend, "%s", backend);
    if (s == RK_UNSUPPORTED) {
        snprintf(row.note, sizeof row.note, "not supported by this backend");
        return bench_report_add(rep, &row) ? RK_EXIT_OK : RK_EXIT_FAILURE;
    }
    if (s != RK_OK) {
        cli_report_status("bench", name, s);
        return RK_EXIT_FAILURE;
    }
    row.messages = res.messages;
    row.seconds = res.seconds;
    row.rate = res.messages_per_second;
    if (!c->latency) row.bytes_per_second = res.messages_per_second * c->message_size;
    if (c->latency) {
        row.p50_us = res.p50_us;
        row.p99_us = res.p99_us;
    }
    row.errors = res.errors;
    row.launches = res.launches;
    return add_or_fail(rep, &row);
}

int bench_group_kernel(const bench_config *cfg, bench_report *rep, bool requested) {
    (void)requested;
    /* The figures we track are the CPU backend's; --backend or RK_BACKEND
     * point the same benchmarks at another. */
    const char *spec = cfg->backend;
    const char *env = getenv("RK_BACKEND");
    if (!spec && !(env && *env)) spec = "cpu";
    rk_runtime *rt = NULL;
    rk_runtime_desc desc = {.backend = spec};
    rk_status s = rk_runtime_create(&desc, &rt);
    if (s != RK_OK) {
        cli_report_status("bench", "kernel benchmarks: cannot use the backend", s);
        return cli_exit_for_selection(s);
    }
    rk_device_info info;
    memset(&info, 0, sizeof info);
    rk_context_device_info(rk_runtime_context(rt), &info);
    char backend[32];
    snprintf(backend, sizeof backend, "%s", rk_runtime_backend_name(rt));
    snprintf(rep->device, sizeof rep->device, "%s: %s", backend, info.name);

    /* A backend without persistent kernels (WebGPU) gets its own default,
     * event-driven relaunch, in those rows rather than "not supported". */
    if (cfg->handler_file) {
        int r = bench_handler_rows(cfg, rep, rt, backend);
        rk_runtime_destroy(rt);
        return r;
    }
    const rk_exec_mode resident = info.persistent_kernels ? RK_MODE_PERSISTENT : RK_MODE_DEFAULT;
    const kernel_case cases[] = {
        {resident, 64, false},
        {resident, 16, false},
        {RK_MODE_TRADITIONAL, 64, false},
        {resident, 64, true},
        {RK_MODE_TRADITIONAL, 64, true},
    };
    int rc = RK_EXIT_OK;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int r = run_kernel_case(cfg, rep, rt, backend, &cases[i]);
        if (r != RK_EXIT_OK) rc = r;
    }
    int r = bench_clients_rows(cfg, rep, rt, backend);
    if (r != RK_EXIT_OK) rc = r;
    rk_runtime_destroy(rt);
    return rc;
}

#else /* bench/bench_cpu.h not in this tree */

int bench_group_queue(const bench_config *cfg, bench_report *rep, bool requested) {
    (void)cfg, (void)rep;
    fprintf(stderr, "rk bench: the queue benchmarks are not built into this rk\n");
    return requested ? RK_EXIT_FAILURE : RK_EXIT_OK;
}

int bench_group_kernel(const bench_config *cfg, bench_report *rep, bool requested) {
    (void)cfg, (void)rep;
    fprintf(stderr, "rk bench: the ring kernel benchmarks are not built into this rk\n");
    return requested ? RK_EXIT_FAILURE : RK_EXIT_OK;
}

#endif
