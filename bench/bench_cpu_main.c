/* bench_cpu: prints the CPU figures (SPSC queue, ring-kernel throughput and
 * latency in both modes). `bench_cpu quick` runs smaller counts;
 * `bench_cpu rtt [N] [auto]` runs only N persistent round trips (default 200 k; auto: pinned as rk bench pins them),
 * the message path alone, for a profiler; `bench_cpu tput [N]` only the
 * persistent 64-byte throughput of rk bench (N messages, default 10 M;
 * `bench_cpu tput N 2`: a sending and a receiving host thread; `bench_cpu
 * tput N T W`: W worker threads in the kernel).
 * Each is preceded by its floor (bench_floor.h), as in rk bench. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_cpu.h"
#include "bench_floor.h"

static int report(const char *what, rk_status s) {
    if (s == RK_OK) return 0;
    fprintf(stderr, "%s: %s: %s\n", what, rk_status_name(s), rk_last_error());
    return 1;
}

static int round_trips_only(uint64_t n, const rk_bench_cpu_pair *pin) {
    rk_runtime *rt = NULL;
    rk_runtime_desc rd = {.backend = "cpu"};
    if (report("runtime", rk_runtime_create(&rd, &rt))) return 1;
    /* The floor right before, as rk bench measures it. */
    rk_bench_floor_result f;
    int failed = report("floor ping-pong", rk_bench_floor_pingpong(0, pin, &f));
    rk_bench_kernel_opts l = {.mode = RK_MODE_PERSISTENT, .message_size = 64, .messages = n, .pin = pin};
    rk_bench_kernel_result r;
    if (!failed) failed = report("kernel latency", rk_bench_kernel_latency(rt, &l, &r));
    if (!failed) {
        printf("round trip persistent 64 B: p50 %.3f us  p99 %.3f us  (%llu msgs, errors %llu)"
               "  floor p50 %.3f us  ratio %.2f\n",
               r.p50_us, r.p99_us, (unsigned long long)r.messages, (unsigned long long)r.errors, f.p50_ns / 1e3,
               r.p50_us * 1e3 / f.p50_ns);
        failed = r.errors != 0 || f.errors != 0;
    }
    rk_runtime_destroy(rt);
    return failed;
}

static int throughput_only(uint64_t n, uint32_t host_threads, uint32_t workers) {
    rk_runtime *rt = NULL;
    rk_runtime_desc rd = {.backend = "cpu"};
    if (report("runtime", rk_runtime_create(&rd, &rt))) return 1;
    rk_bench_floor_ring_opts fo = {.slot_size = 64, .batch = 256};
    rk_bench_floor_result f;
    int failed = report("floor ring", rk_bench_floor_ring(&fo, &f));
    rk_bench_kernel_opts o = {
        .mode = RK_MODE_PERSISTENT, .message_size = 64, .messages = n, .batch = 256, .host_threads = host_threads,
        .workers = workers};
    rk_bench_kernel_result r;
    if (!failed) failed = report("kernel throughput", rk_bench_kernel_throughput(rt, &o, &r));
    if (!failed) {
        printf("ring kernel persistent 64 B, batches of 256%s, %u worker%s: %.2f M msg/s  (%llu msgs, errors %llu)"
               "  floor %.2f M msg/s  ratio %.2f\n",
               host_threads == 2 ? ", sender + receiver threads" : "", workers ? workers : 1, workers > 1 ? "s" : "",
               r.messages_per_second / 1e6, (unsigned long long)r.messages, (unsigned long long)r.errors,
               f.messages_per_second / 1e6, r.messages_per_second / f.messages_per_second);
        failed = r.errors != 0 || f.errors != 0;
    }
    rk_runtime_destroy(rt);
    return failed;
}

/* The one-at-a-time and batched queue rows beside their floors, rounds
 * times alternated, with both threads of each on the CPUs of pin (NULL:
 * unpinned): how much of a ratio is where the threads ran. */
static int queue_pairs(const rk_bench_cpu_pair *pin, uint64_t n, unsigned rounds) {
    int failed = 0;
    if (pin)
        printf("threads on CPUs %d and %d\n", pin->first, pin->second);
    else
        printf("threads unpinned\n");
    for (unsigned i = 0; i < rounds; i++) {
        for (uint32_t batch = 1; batch <= 64; batch += 63) {
            rk_bench_floor_ring_opts fo = {.messages = n, .slot_size = 64, .batch = batch, .pin = pin};
            rk_bench_floor_result f;
            rk_bench_queue_opts qo = {.messages = n, .slot_size = 64, .batch = batch, .pin = pin};
            rk_bench_queue_result q;
            if (report("floor ring", rk_bench_floor_ring(&fo, &f)) || report("queue", rk_bench_queue_spsc(&qo, &q)))
                return 1;
            printf("  batch %2u: floor %7.2f M msg/s  queue %7.2f M msg/s  ratio %.2f  (errors %llu/%llu)\n", batch,
                   f.messages_per_second / 1e6, q.messages_per_second / 1e6,
                   q.messages_per_second / f.messages_per_second, (unsigned long long)f.errors,
                   (unsigned long long)q.errors);
            failed |= f.errors != 0 || q.errors != 0;
        }
    }
    return failed;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "qpin") == 0) {
        /* bench_cpu qpin [A B|auto|none] [N] [ROUNDS] */
        rk_bench_cpu_pair pair = {.first = -1, .second = -1, .workers = {-1, -1}};
        const rk_bench_cpu_pair *pin = NULL;
        int arg = 2;
        if (argc > 2 && strcmp(argv[2], "none") == 0) {
            arg = 3;
        } else if (argc > 2 && strcmp(argv[2], "auto") == 0) {
            if (!rk_bench_pick_cpu_pair(&pair)) return 77;
            pin = &pair;
            arg = 3;
        } else if (argc > 3) {
            pair.first = atoi(argv[2]);
            pair.second = atoi(argv[3]);
            pin = &pair;
            arg = 4;
        }
        unsigned long long n = argc > arg ? strtoull(argv[arg], NULL, 10) : 0;
        unsigned long rounds = argc > arg + 1 ? strtoul(argv[arg + 1], NULL, 10) : 3;
        return queue_pairs(pin, n ? n : 5000000u, rounds ? (unsigned)rounds : 3u);
    }
    if (argc > 1 && strcmp(argv[1], "tput") == 0) {
        unsigned long long n = argc > 2 ? strtoull(argv[2], NULL, 10) : 0;
        unsigned long threads = argc > 3 ? strtoul(argv[3], NULL, 10) : 1;
        unsigned long workers = argc > 4 ? strtoul(argv[4], NULL, 10) : 1;
        if (threads < 1 || threads > 2 || workers < 1 || workers > 64) {
            fprintf(stderr, "bench_cpu tput [N] [1|2] [WORKERS]: host threads must be 1 or 2, workers 1 to 64\n");
            return 2;
        }
        return throughput_only(n ? n : 10000000u, (uint32_t)threads, (uint32_t)workers);
    }
    if (argc > 1 && strcmp(argv[1], "rtt") == 0) {
        /* bench_cpu rtt [N] [auto]: auto pins both sides as rk bench does */
        unsigned long long n = argc > 2 ? strtoull(argv[2], NULL, 10) : 0;
        rk_bench_cpu_pair pair = {.first = -1, .second = -1, .workers = {-1, -1}};
        bool pinned = argc > 3 && strcmp(argv[3], "auto") == 0 && rk_bench_pick_cpu_pair(&pair);
        if (pinned) printf("threads on CPUs %d and %d\n", pair.first, pair.second);
        return round_trips_only(n ? n : 200000u, pinned ? &pair : NULL);
    }
    int quick = argc > 1 && strcmp(argv[1], "quick") == 0;
    int failed = 0;

    for (int b = 0; b < 3; b++) {
        static const uint32_t batches[] = {1, 32, 256};
        rk_bench_queue_opts o = {.messages = quick ? 2000000u : 20000000u, .batch = batches[b]};
        rk_bench_queue_result r;
        if (report("queue", rk_bench_queue_spsc(&o, &r))) {
            failed = 1;
            continue;
        }
        printf("queue spsc      slot 64 B  batch %3u : %8.1f M msg/s  %6.2f GB/s  errors %llu\n", batches[b],
               r.messages_per_second / 1e6, r.bytes_per_second / 1e9, (unsigned long long)r.errors);
        failed |= r.errors != 0;
    }

    rk_runtime *rt = NULL;
    rk_runtime_desc rd = {.backend = "cpu"};
    if (report("runtime", rk_runtime_create(&rd, &rt))) return 1;
    static const rk_exec_mode modes[] = {RK_MODE_PERSISTENT, RK_MODE_TRADITIONAL};
    for (int m = 0; m < 2; m++) {
        rk_bench_kernel_opts o = {.mode = modes[m]};
        if (quick || modes[m] == RK_MODE_TRADITIONAL) o.messages = 1000000;
        rk_bench_kernel_result r;
        if (!report("kernel throughput", rk_bench_kernel_throughput(rt, &o, &r))) {
            printf("kernel %-11s throughput, 16 B, batch 256 : %8.2f M msg/s  (%llu msgs, %llu launches, errors %llu)\n",
                   rk_exec_mode_name(modes[m]), r.messages_per_second / 1e6, (unsigned long long)r.messages,
                   (unsigned long long)r.launches, (unsigned long long)r.errors);
            failed |= r.errors != 0;
        } else {
            failed = 1;
        }
        rk_bench_kernel_opts l = {.mode = modes[m], .messages = quick ? 20000 : 200000};
        if (!report("kernel latency", rk_bench_kernel_latency(rt, &l, &r))) {
            printf("kernel %-11s round trip, one at a time  : p50 %6.2f us  p90 %6.2f us  p99 %6.2f us  max %8.1f us"
                   "  (errors %llu)\n",
                   rk_exec_mode_name(modes[m]), r.p50_us, r.p90_us, r.p99_us, r.max_us, (unsigned long long)r.errors);
            failed |= r.errors != 0;
        } else {
            failed = 1;
        }
    }
    rk_runtime_destroy(rt);
    return failed;
}
