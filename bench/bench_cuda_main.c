/* bench_cuda: the GPU ring-kernel benchmarks of bench_cuda.h as a table.
 *   bench_cuda [--quick] [--latency-only] [--kernels N] [--workers N] [--messages N] [--device cuda:0]
 * Exits 77 when there is no CUDA device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_cuda.h"

#ifndef RK_BENCH_COMMIT
#define RK_BENCH_COMMIT "unknown"
#endif

static void row_latency(const char *name, rk_status st, const rk_bench_cuda_latency *r) {
    if (st != RK_OK) {
        printf("| %-34s | failed: %s (%s) |\n", name, rk_status_name(st), rk_last_error());
        return;
    }
    printf("| %-34s | %9llu | %7.2f | %7.2f | %7.2f | %7.2f | %14s | %6llu |\n", name,
           (unsigned long long)r->messages, r->p50_us, r->p99_us, r->p999_us, r->mean_us, "", (unsigned long long)r->errors);
}

int main(int argc, char **argv) {
    bool quick = false, latency_only = false;
    uint32_t kernels = 4, workers = 0;
    uint64_t messages = 0;
    const char *device = "cuda:0";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) quick = true;
        else if (strcmp(argv[i], "--latency-only") == 0) latency_only = true;
        else if (strcmp(argv[i], "--kernels") == 0 && i + 1 < argc) kernels = (uint32_t)strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--workers") == 0 && i + 1 < argc) workers = (uint32_t)strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--messages") == 0 && i + 1 < argc) messages = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) device = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--quick] [--latency-only] [--kernels N] [--workers N] [--messages N] [--device cuda:0]\n",
                    argv[0]);
            return 2;
        }
    }
    rk_runtime *rt = NULL;
    rk_runtime_desc desc = {.backend = device};
    if (rk_runtime_create(&desc, &rt) != RK_OK) {
        fprintf(stderr, "bench_cuda: no CUDA device: %s\n", rk_last_error());
        return 77;
    }
    char dev[320], driver[64], date[32];
    rk_bench_cuda_describe(rt, dev, sizeof dev, driver, sizeof driver);
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    char worker_text[48] = "backend default";
    if (workers) snprintf(worker_text, sizeof worker_text, "%u GPU blocks per kernel", workers);
    printf("ringkernel CUDA benchmarks\ndevice: %s\ndriver: %s\ndate: %s\ncommit: %s\nworkers: %s\n\n", dev, driver,
           date, RK_BENCH_COMMIT, worker_text);
    printf("| %-34s | %9s | %7s | %7s | %7s | %7s | %14s | %6s |\n", "benchmark", "messages", "p50 µs", "p99 µs",
           "p99.9µs", "mean µs", "rate", "errors");
    printf("|%s|%s|%s|%s|%s|%s|%s|%s|\n", "------------------------------------", "----------:", "--------:",
           "--------:", "--------:", "--------:", "---------------:", "-------:");
    fflush(stdout);

    int failures = 0;
    rk_bench_cuda_opts o = {.messages = quick ? 5000 : messages, .workers = workers};
    rk_bench_cuda_latency lat;
    rk_status st = rk_bench_cuda_latency_run(rt, RK_MODE_PERSISTENT, &o, &lat);
    row_latency("round trip, persistent", st, &lat);
    failures += st != RK_OK || lat.errors;
    o.busy_poll = true;
    st = rk_bench_cuda_latency_run(rt, RK_MODE_PERSISTENT, &o, &lat);
    row_latency("round trip, persistent, busy-poll", st, &lat);
    failures += st != RK_OK || lat.errors;
    o.busy_poll = false;
    o.isolated = true;
    st = rk_bench_cuda_latency_run(rt, RK_MODE_PERSISTENT, &o, &lat);
    row_latency("round trip, persistent, isolated", st, &lat);
    failures += st != RK_OK || lat.errors;
    if (latency_only) {
        rk_runtime_destroy(rt);
        return failures ? 1 : 0;
    }
    rk_bench_cuda_opts ot = {.messages = quick ? 2000 : messages};
    st = rk_bench_cuda_latency_run(rt, RK_MODE_TRADITIONAL, &ot, &lat);
    row_latency("round trip, launch per command", st, &lat);
    failures += st != RK_OK || lat.errors;
    st = rk_bench_cuda_latency_run(rt, RK_MODE_GRAPH, &ot, &lat);
    row_latency("round trip, CUDA graph per command", st, &lat);
    failures += st != RK_OK || lat.errors;
    fflush(stdout);

    uint32_t counts[2] = {1, kernels};
    for (int i = 0; i < (kernels > 1 ? 2 : 1); i++) {
        rk_bench_cuda_opts tp = {.messages = quick ? 2000000 : messages, .kernels = counts[i], .workers = workers};
        rk_bench_cuda_throughput t;
        st = rk_bench_cuda_throughput_run(rt, &tp, &t);
        char name[64];
        snprintf(name, sizeof name, "throughput 64 B, %u kernel%s", counts[i], counts[i] > 1 ? "s" : "");
        if (st != RK_OK) {
            printf("| %-34s | failed: %s (%s) |\n", name, rk_status_name(st), rk_last_error());
        } else {
            char rate[32];
            snprintf(rate, sizeof rate, "%.1f M msg/s", t.messages_per_second / 1e6);
            printf("| %-34s | %9llu | %7s | %7s | %7s | %7s | %14s | %6llu |\n", name, (unsigned long long)t.messages,
                   "", "", "", "", rate, (unsigned long long)t.errors);
        }
        failures += st != RK_OK || t.errors;
        fflush(stdout);
    }

    uint32_t batches[2] = {256, 1};
    for (int i = 0; i < 2; i++) {
        rk_bench_cuda_opts so = {.messages = quick ? 200 : 0, .batch = batches[i]};
        rk_bench_cuda_send_cost c;
        st = rk_bench_cuda_send_cost_run(rt, &so, &c);
        char name[64];
        snprintf(name, sizeof name, "host cost of a send, batch %u", batches[i]);
        if (st != RK_OK) {
            printf("| %-34s | failed: %s (%s) |\n", name, rk_status_name(st), rk_last_error());
        } else {
            char rate[32];
            snprintf(rate, sizeof rate, "%.1f ns/msg", c.ns_per_message_p50);
            printf("| %-34s | %9llu | %7s | %7s | %7s | %7s | %14s | %6llu |\n", name,
                   (unsigned long long)c.calls * c.batch, "", "", "", "", rate, (unsigned long long)c.errors);
        }
        failures += st != RK_OK || c.errors;
    }
    rk_runtime_destroy(rt);
    return failures ? 1 : 0;
}
