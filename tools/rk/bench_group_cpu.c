/* rk bench groups "queue" and "kernel": the functions of bench/bench_cpu.h,
 * run with the settings the figures in docs/benchmarks.md use. */
#include <sched.h>
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

/* The figures every measured row has. */
static void set_counts(bench_row *out, uint64_t messages, double seconds, double rate, uint64_t errors) {
    out->messages = messages;
    out->seconds = seconds;
    out->rate = rate;
    out->errors = errors;
}

/* The floors (bench_floor.h) and rows are measured into a bench_row; the
 * pair runner below reports them. */
static int floor_ring_measure(const bench_config *cfg, const char *group, uint32_t batch,
                              const rk_bench_cpu_pair *pin, bench_row *out) {
    char name[64];
    snprintf(name, sizeof name, "floor: bare spsc ring 64 B, %s", batch > 1 ? "batches" : "one at a time");
    if (batch > 1) snprintf(name, sizeof name, "floor: bare spsc ring 64 B, batches of %u", batch);
    bench_note(cfg, "%s: %s", group, name);
    rk_bench_floor_ring_opts o = {.messages = cfg->messages ? cfg->messages : cfg->quick ? QUICK_QUEUE : 0,
                                  .slot_size = 64, .batch = batch, .pin = pin};
    rk_bench_floor_result res;
    rk_status s = rk_bench_floor_ring(&o, &res);
    if (s != RK_OK) {
        cli_report_status("bench", name, s);
        return RK_EXIT_FAILURE;
    }
    *out = bench_row_make(group, name);
    out->is_floor = true;
    set_counts(out, res.messages, res.seconds, res.messages_per_second, res.errors);
    out->bytes_per_second = res.messages_per_second * 64;
    return RK_EXIT_OK;
}

static int floor_pingpong_measure(const bench_config *cfg, const rk_bench_cpu_pair *pin, bench_row *out) {
    const char *name = "floor: two-thread ping-pong, one word";
    bench_note(cfg, "kernel: %s", name);
    rk_bench_floor_result res;
    rk_status s = rk_bench_floor_pingpong(cfg->quick ? QUICK_LATENCY : 0, pin, &res);
    if (s != RK_OK) {
        cli_report_status("bench", name, s);
        return RK_EXIT_FAILURE;
    }
    *out = bench_row_make("kernel", name);
    out->is_floor = true;
    set_counts(out, res.messages, res.seconds, res.messages_per_second, res.errors);
    out->p50_us = res.p50_ns / 1e3;
    out->p99_us = res.p99_ns / 1e3;
    return RK_EXIT_OK;
}

/* WebGPU's floor (bench_floor.h): a bare dispatch + readback of batch
 * 64-byte messages, through the same runtime. */
static int floor_dispatch_measure(const bench_config *cfg, rk_runtime *rt, const char *backend, uint32_t batch,
                                  bench_row *out) {
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
    set_counts(out, res.messages, res.seconds, res.messages_per_second, res.errors);
    out->bytes_per_second = res.messages_per_second * 64;
    if (batch <= 1) {
        out->p50_us = res.p50_ns / 1e3;
        out->p99_us = res.p99_ns / 1e3;
    }
    return RK_EXIT_OK;
}

static int queue_measure(const bench_config *cfg, uint32_t slot, uint32_t batch, const rk_bench_cpu_pair *pin,
                         bench_row *out) {
    char name[64];
    if (batch > 1)
        snprintf(name, sizeof name, "spsc queue %u B, batches of %u", slot, batch);
    else
        snprintf(name, sizeof name, "spsc queue %u B, one at a time", slot);
    bench_note(cfg, "queue: %s", name);
    rk_bench_queue_opts o = {.messages = cfg->messages ? cfg->messages : cfg->quick ? QUICK_QUEUE : 0,
                             .slot_size = slot,
                             .batch = batch,
                             .pin = pin};
    rk_bench_queue_result res;
    memset(&res, 0, sizeof res);
    rk_status s = rk_bench_queue_spsc(&o, &res);
    if (s != RK_OK) {
        cli_report_status("bench", name, s);
        return RK_EXIT_FAILURE;
    }
    *out = bench_row_make("queue", name);
    set_counts(out, res.messages, res.seconds, res.messages_per_second, res.errors);
    out->bytes_per_second = res.bytes_per_second;
    return RK_EXIT_OK;
}

typedef struct kernel_case {
    rk_exec_mode mode;
    uint32_t message_size;
    bool latency;
    uint32_t workers;      /* 0: one */
    uint32_t host_threads; /* 2: a sending and a receiving thread (the floor's shape); else one does both */
} kernel_case;

/* Measures one kernel row; *unsupported when the backend has no such mode
 * (the row then carries only that note). */
static int kernel_measure(const bench_config *cfg, rk_runtime *rt, const char *backend, const kernel_case *c,
                          const rk_bench_cpu_pair *pin, bench_row *out, bool *unsupported) {
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
                              .host_threads = c->host_threads,
                              .pin = pin};
    if (c->latency)
        o.messages = cfg->quick ? QUICK_LATENCY : 0;
    else
        o.messages = cfg->messages ? cfg->messages : cfg->quick ? QUICK_THROUGHPUT : 0;
    rk_bench_kernel_result res;
    memset(&res, 0, sizeof res);
    rk_status s = c->latency ? rk_bench_kernel_latency(rt, &o, &res) : rk_bench_kernel_throughput(rt, &o, &res);
    *out = bench_row_make("kernel", name);
    snprintf(out->backend, sizeof out->backend, "%s", backend);
    *unsupported = s == RK_UNSUPPORTED;
    if (*unsupported) {
        snprintf(out->note, sizeof out->note, "not supported by this backend");
        return RK_EXIT_OK;
    }
    if (s != RK_OK) {
        cli_report_status("bench", name, s);
        return RK_EXIT_FAILURE;
    }
    set_counts(out, res.messages, res.seconds, res.messages_per_second, res.errors);
    if (!c->latency) out->bytes_per_second = res.messages_per_second * c->message_size;
    if (c->latency) {
        out->p50_us = res.p50_us;
        out->p99_us = res.p99_us;
    }
    out->launches = res.launches;
    return RK_EXIT_OK;
}

/* ---- a row beside its floor ------------------------------------------------- */

/* What one row and its floor measure. */
typedef struct bench_pair {
    const char *group;
    enum { FLOOR_RING, FLOOR_PINGPONG, FLOOR_DISPATCH } floor;
    uint32_t floor_batch;
    const kernel_case *kernel; /* a kernel row; NULL: a queue row of queue_batch */
    uint32_t queue_batch;
    rk_runtime *rt;            /* kernel rows and the dispatch floor */
    const char *backend;
    const rk_bench_cpu_pair *pin; /* the CPUs of the row's and the floor's two threads; NULL: unpinned */
} bench_pair;

static int measure_floor(const bench_config *cfg, const bench_pair *p, bench_row *out) {
    switch (p->floor) {
    case FLOOR_RING: return floor_ring_measure(cfg, p->group, p->floor_batch, p->pin, out);
    case FLOOR_PINGPONG: return floor_pingpong_measure(cfg, p->pin, out);
    default: return floor_dispatch_measure(cfg, p->rt, p->backend, p->floor_batch, out);
    }
}

enum { MAX_PAIRS = 15 };

/* Measures the floor and then the row, cfg->pairs times in turn, and reports
 * the pair whose ratio is the median, with every ratio in the row's note: on
 * a shared machine either side of one pair can move 2x, the median of
 * alternated pairs much less. Every run's wrong messages count. */
static int report_pair(const bench_config *cfg, bench_report *rep, const bench_pair *p) {
    uint32_t n = cfg->pairs ? (uint32_t)cfg->pairs : 1u;
    if (n > MAX_PAIRS) n = MAX_PAIRS;
    static const bench_row none;
    bench_row floors[MAX_PAIRS] = {none}, rows[MAX_PAIRS] = {none};
    uint64_t errors = 0;
    for (uint32_t i = 0; i < n; i++) {
        int r = measure_floor(cfg, p, &floors[i]);
        if (r != RK_EXIT_OK) return r;
        bool unsupported = false;
        r = p->kernel ? kernel_measure(cfg, p->rt, p->backend, p->kernel, p->pin, &rows[i], &unsupported)
                      : queue_measure(cfg, 64, p->queue_batch, p->pin, &rows[i]);
        if (r != RK_EXIT_OK) return r;
        if (unsupported) return bench_report_add(rep, &rows[i]) ? RK_EXIT_OK : RK_EXIT_FAILURE;
        bench_row_against(&rows[i], &floors[i]);
        errors += floors[i].errors + rows[i].errors;
    }
    char ratios[112] = "";
    for (uint32_t i = 0; i < n && n > 1; i++) {
        size_t used = strlen(ratios);
        snprintf(ratios + used, sizeof ratios - used, "%s%.2f", i ? ", " : "", rows[i].vs_floor);
    }
    /* The pairs in order of their ratio (an insertion sort of at most 15). */
    uint32_t order[MAX_PAIRS] = {0};
    for (uint32_t i = 0; i < n; i++) {
        uint32_t j = i;
        for (; j > 0 && rows[order[j - 1]].vs_floor > rows[i].vs_floor; j--) order[j] = order[j - 1];
        order[j] = i;
    }
    bench_row row = rows[order[n / 2]], floor = floors[order[n / 2]];
    char where[80] = "";
    if (p->pin) snprintf(where, sizeof where, "threads on CPUs %d and %d", p->pin->first, p->pin->second);
    if (p->pin && p->kernel && p->kernel->host_threads == 2)
        snprintf(where, sizeof where, "host threads on CPUs %d and %d, workers on %d and %d", p->pin->first,
                 p->pin->second, p->pin->workers[0], p->pin->workers[1]);
    if (n > 1)
        snprintf(row.note, sizeof row.note, "median of %u alternated pairs; ratios %s%s%s", n, ratios,
                 *where ? "; " : "", where);
    else if (*where && !*row.note)
        snprintf(row.note, sizeof row.note, "%s", where);
    row.errors = errors;
    int r = add_or_fail(rep, &floor);
    int t = add_or_fail(rep, &row);
    return r != RK_EXIT_OK ? r : t;
}

/* --cpus: "auto" (or unset) picks two CPUs of different cores, "none"
 * leaves the threads to the scheduler, "A,B" names them. Sets *pin to
 * storage, or NULL for unpinned; false (and a message) when the text is
 * neither or names a CPU this process may not use. */
static bool cpus_from_option(const char *text, rk_bench_cpu_pair *storage, const rk_bench_cpu_pair **pin) {
    *pin = NULL;
    if (!text || strcmp(text, "auto") == 0) {
        if (rk_bench_pick_cpu_pair(storage)) *pin = storage;
        return true;
    }
    if (strcmp(text, "none") == 0) return true;
    char *end = NULL;
    long a = strtol(text, &end, 10), b = -1;
    if (end != text && *end == ',') {
        const char *second = end + 1;
        b = strtol(second, &end, 10);
        if (end == second) b = -1;
    }
    if (a < 0 || b < 0 || *end != '\0') {
        fprintf(stderr, "rk bench: --cpus '%s': expected auto, none or two CPU numbers as A,B\n", text);
        return false;
    }
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        long bad = a >= CPU_SETSIZE || !CPU_ISSET(a, &set) ? a : b >= CPU_SETSIZE || !CPU_ISSET(b, &set) ? b : -1;
        if (bad >= 0) {
            fprintf(stderr, "rk bench: --cpus '%s': this process may not run on CPU %ld\n", text, bad);
            return false;
        }
    }
    storage->first = (int)a;
    storage->second = (int)b;
    storage->workers[0] = storage->workers[1] = -1;
    *pin = storage;
    return true;
}

int bench_group_queue(const bench_config *cfg, bench_report *rep, bool requested) {
    (void)requested;
    rk_bench_cpu_pair pair;
    const rk_bench_cpu_pair *pin;
    if (!cpus_from_option(cfg->cpus, &pair, &pin)) return RK_EXIT_USAGE;
    int rc = RK_EXIT_OK;
    for (uint32_t batch = 1; batch <= 64; batch *= 64) {
        bench_pair p = {.group = "queue", .floor = FLOOR_RING, .floor_batch = batch, .queue_batch = batch, .pin = pin};
        int r = report_pair(cfg, rep, &p);
        if (r != RK_EXIT_OK) rc = r;
    }
    return rc;
}

int bench_group_kernel(const bench_config *cfg, bench_report *rep, bool requested) {
    (void)requested;
    rk_bench_cpu_pair pair;
    const rk_bench_cpu_pair *pin;
    if (!cpus_from_option(cfg->cpus, &pair, &pin)) return RK_EXIT_USAGE;
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
    /* Each row right after its floor: the bare ring in batches of 256 for
     * throughput, the one-word ping-pong for round trips; on WebGPU a bare
     * dispatch + readback in batches of 256 and of one. */
    const bool webgpu = strcmp(backend, "webgpu") == 0;
    int rc = RK_EXIT_OK;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (cases[i].host_threads == 2 && !pipelined) continue;
        /* Pinned: the persistent rows of one host thread and one worker on
         * the CPU backend, and the pipelined row's four threads where four
         * cores were found (its floor on the host threads' two CPUs); the
         * launches' pool threads stay the scheduler's. */
        bool pinned = strcmp(backend, "cpu") == 0 && cases[i].mode == RK_MODE_PERSISTENT &&
                      (cases[i].host_threads != 2 || rk_bench_pin_has_workers(pin));
        bench_pair p = {.group = "kernel", .kernel = &cases[i], .rt = rt, .backend = backend,
                        .pin = pinned ? pin : NULL};
        p.floor = webgpu ? FLOOR_DISPATCH : cases[i].latency ? FLOOR_PINGPONG : FLOOR_RING;
        p.floor_batch = cases[i].latency ? 1 : 256;
        int r = report_pair(cfg, rep, &p);
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
