/* rk bench groups "queue" and "kernel": the functions of bench/bench_cpu.h,
 * run with the settings the figures in docs/benchmarks.md use. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_report.h"
#include "cli.h"

#ifdef RK_HAVE_BENCH_CPU
#include "bench_cpu.h"
#include "bench_floor.h"

enum { QUICK_QUEUE = 200000, QUICK_THROUGHPUT = 50000, QUICK_LATENCY = 2000 };

static int add_or_fail(bench_report *rep, const bench_row *row) {
    if (!bench_report_add(rep, row)) {
        fprintf(stderr, "rk bench: out of memory\n");
        return RK_EXIT_FAILURE;
    }
    return row->errors ? RK_EXIT_FAILURE : RK_EXIT_OK;
}

/* A floor row (bench_floor.h) measured now, right before the rows it judges. */
static int floor_ring_row(const bench_config *cfg, bench_report *rep, const char *group, uint32_t batch,
                          bench_row *out) {
    char name[64];
    snprintf(name, sizeof name, "floor: bare spsc ring 64 B, %s", batch > 1 ? "batches" : "one at a time");
    if (batch > 1) snprintf(name, sizeof name, "floor: bare spsc ring 64 B, batches of %u", batch);
    bench_note(cfg, "%s: %s", group, name);
    rk_bench_floor_ring_opts o = {.messages = cfg->messages ? cfg->messages : cfg->quick ? QUICK_QUEUE : 0,
                                  .slot_size = 64, .batch = batch};
    rk_bench_floor_result res;
    rk_status s = rk_bench_floor_ring(&o, &res);
    if (s != RK_OK) {
        cli_report_status("bench", name, s);
        return RK_EXIT_FAILURE;
    }
    *out = bench_row_make(group, name);
    out->is_floor = true;
    out->messages = res.messages;
    out->seconds = res.seconds;
    out->rate = res.messages_per_second;
    out->bytes_per_second = res.messages_per_second * 64;
    out->errors = res.errors;
    return add_or_fail(rep, out);
}

static int floor_pingpong_row(const bench_config *cfg, bench_report *rep, bench_row *out) {
    const char *name = "floor: two-thread ping-pong, one word";
    bench_note(cfg, "kernel: %s", name);
    rk_bench_floor_result res;
    rk_status s = rk_bench_floor_pingpong(cfg->quick ? QUICK_LATENCY : 0, &res);
    if (s != RK_OK) {
        cli_report_status("bench", name, s);
        return RK_EXIT_FAILURE;
    }
    *out = bench_row_make("kernel", name);
    out->is_floor = true;
    out->messages = res.messages;
    out->seconds = res.seconds;
    out->rate = res.messages_per_second;
    out->p50_us = res.p50_ns / 1e3;
    out->p99_us = res.p99_ns / 1e3;
    out->errors = res.errors;
    return add_or_fail(rep, out);
}

/* WebGPU's floor (bench_floor.h): a bare dispatch + readback of batch
 * 64-byte messages, through the same runtime, right before its rows. */
static int floor_dispatch_row(const bench_config *cfg, bench_report *rep, rk_runtime *rt, const char *backend,
                              uint32_t batch, bench_row *out) {
    char name[64];
    if (batch > 1)
        snprintf(name, sizeof name, "floor: dispatch + readback, batches of %u", batch);
    else
        snprintf(name, sizeof name, "floor: dispatch + readback, one message");
    bench_note(cfg, "kernel: %s", name);
    rk_bench_floor_result res;
    rk_status s = rk_bench_floor_dispatch(rt, cfg->quick ? 50 : batch > 1 ? 400 : 0, batch, &res);
    if (s != RK_OK) {
        cli_report_status("bench", name, s);
        return RK_EXIT_FAILURE;
    }
    *out = bench_row_make("kernel", name);
    snprintf(out->backend, sizeof out->backend, "%s", backend);
    out->is_floor = true;
    out->messages = res.messages;
    out->seconds = res.seconds;
    out->rate = res.messages_per_second;
    out->bytes_per_second = res.messages_per_second * 64;
    if (batch <= 1) {
        out->p50_us = res.p50_ns / 1e3;
        out->p99_us = res.p99_ns / 1e3;
    }
    out->errors = res.errors;
    return add_or_fail(rep, out);
}

static int queue_case(const bench_config *cfg, bench_report *rep, uint32_t slot, uint32_t batch,
                      const bench_row *floor) {
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
    bench_row_against(&row, floor);
    return add_or_fail(rep, &row);
}

int bench_group_queue(const bench_config *cfg, bench_report *rep, bool requested) {
    (void)requested;
    int rc = RK_EXIT_OK, r;
    bench_row floor;
    if ((r = floor_ring_row(cfg, rep, "queue", 1, &floor)) != RK_EXIT_OK) return r;
    if ((r = queue_case(cfg, rep, 64, 1, &floor)) != RK_EXIT_OK) rc = r;
    if ((r = floor_ring_row(cfg, rep, "queue", 64, &floor)) != RK_EXIT_OK) return r;
    if ((r = queue_case(cfg, rep, 64, 64, &floor)) != RK_EXIT_OK) rc = r;
    return rc;
}

typedef struct kernel_case {
    rk_exec_mode mode;
    uint32_t message_size;
    bool latency;
    uint32_t workers;      /* 0: one */
    uint32_t host_threads; /* 2: a sending and a receiving thread (the floor's shape); else one does both */
} kernel_case;

static int run_kernel_case(const bench_config *cfg, bench_report *rep, rk_runtime *rt, const char *backend,
                           const kernel_case *c, const bench_row *floor) {
    char name[112];
    char shape[64] = "";
    if (c->host_threads == 2) snprintf(shape, sizeof shape, ", sender + receiver threads, %u workers", c->workers);
    snprintf(name, sizeof name, "%s %s, %u B%s%s", c->latency ? "round trip" : "ring kernel",
             rk_exec_mode_name(c->mode), c->message_size, c->latency ? ", one at a time" : ", batches of 256", shape);
    bench_note(cfg, "kernel: %s", name);
    rk_bench_kernel_opts o = {.message_size = c->message_size,
                              .batch = 256,
                              .mode = c->mode,
                              .workers = c->workers,
                              .host_threads = c->host_threads};
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
    bench_row_against(&row, floor);
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
    /* The pipelined row (the floor's shape: one thread sends, one receives,
     * and two workers each read a request line and write a reply line, where
     * one worker would move two lines for every one a floor thread moves)
     * needs four busy threads: only where the process has the cores. */
    const bool pipelined = strcmp(backend, "cpu") == 0 && info.persistent_kernels && rk_bench_process_cores() >= 6;
    const kernel_case cases[] = {
        {resident, 64, false, 0, 0},
        {resident, 64, false, 2, 2},
        {resident, 16, false, 0, 0},
        {RK_MODE_TRADITIONAL, 64, false, 0, 0},
        {resident, 64, true, 0, 0},
        {RK_MODE_TRADITIONAL, 64, true, 0, 0},
    };
    /* The floors, measured right before: the bare ring in batches of 256 for
     * throughput, the one-word ping-pong for round trips; on WebGPU a bare
     * dispatch + readback in batches of 256 and of one. */
    bench_row ring_floor, pingpong_floor;
    int rc;
    if (strcmp(backend, "webgpu") == 0) {
        rc = floor_dispatch_row(cfg, rep, rt, backend, 256, &ring_floor);
        if (rc == RK_EXIT_OK) rc = floor_dispatch_row(cfg, rep, rt, backend, 1, &pingpong_floor);
    } else {
        rc = floor_ring_row(cfg, rep, "kernel", 256, &ring_floor);
        if (rc == RK_EXIT_OK) rc = floor_pingpong_row(cfg, rep, &pingpong_floor);
    }
    if (rc != RK_EXIT_OK) {
        rk_runtime_destroy(rt);
        return rc;
    }
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (cases[i].host_threads == 2 && !pipelined) continue;
        int r = run_kernel_case(cfg, rep, rt, backend, &cases[i], cases[i].latency ? &pingpong_floor : &ring_floor);
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
