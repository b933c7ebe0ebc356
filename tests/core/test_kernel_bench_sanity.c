/* The CPU benchmark functions (bench/bench_cpu.c) run end to end and every
 * message comes back right. Prints the figures; asserts nothing about time. */
#include "../../bench/bench_cpu.h"
#include "kernel_test.h"

int main(void) {
#ifdef RK_TEST_SANITIZED
    const uint64_t scale = 10;
#else
    const uint64_t scale = 1;
#endif
    rk_bench_queue_opts qo = {.messages = 2000000 / scale, .batch = 32};
    rk_bench_queue_result q;
    CHECK_OK(rk_bench_queue_spsc(&qo, &q));
    CHECK_U64_EQ(q.messages, qo.messages);
    CHECK_U64_EQ(q.errors, 0);
    CHECK_GT(q.messages_per_second, 0);
    printf("queue spsc, 64 B, batch 32: %.1f M msg/s\n", q.messages_per_second / 1e6);

    rk_runtime *rt = test_cpu_runtime();
    static const rk_exec_mode modes[] = {RK_MODE_PERSISTENT, RK_MODE_TRADITIONAL};
    for (int m = 0; m < 2; m++) {
        rk_bench_kernel_opts o = {.messages = 500000 / scale, .mode = modes[m]};
        rk_bench_kernel_result r;
        CHECK_OK(rk_bench_kernel_throughput(rt, &o, &r));
        CHECK_U64_EQ(r.messages, o.messages);
        CHECK_U64_EQ(r.errors, 0);
        if (modes[m] == RK_MODE_PERSISTENT) CHECK_U64_EQ(r.launches, 1);
        else CHECK_GE(r.launches, o.messages / 4096); /* at most a queue's worth per launch */
        printf("kernel %s throughput: %.2f M msg/s, %llu launches\n", rk_exec_mode_name(modes[m]),
               r.messages_per_second / 1e6, (unsigned long long)r.launches);

        rk_bench_kernel_opts l = {.messages = 20000 / scale, .mode = modes[m]};
        CHECK_OK(rk_bench_kernel_latency(rt, &l, &r));
        CHECK_U64_EQ(r.messages, l.messages);
        CHECK_U64_EQ(r.errors, 0);
        CHECK(r.p50_us > 0 && r.p50_us <= r.p90_us && r.p90_us <= r.p99_us && r.p99_us <= r.max_us);
        printf("kernel %s round trip: p50 %.2f us, p99 %.2f us\n", rk_exec_mode_name(modes[m]), r.p50_us, r.p99_us);
    }
    /* A sending thread and a receiving one (the floor's shape), 64 B. */
    rk_bench_kernel_opts two = {.messages = 200000 / scale, .message_size = 64, .mode = RK_MODE_PERSISTENT,
                                .host_threads = 2};
    rk_bench_kernel_result r;
    CHECK_OK(rk_bench_kernel_throughput(rt, &two, &r));
    CHECK_U64_EQ(r.messages, two.messages);
    CHECK_U64_EQ(r.errors, 0);
    printf("kernel persistent throughput, 64 B, 2 host threads: %.2f M msg/s\n", r.messages_per_second / 1e6);
    /* ... and two workers: rk bench's pipelined row, which skips on few cores. */
    two.workers = 2;
    CHECK_OK(rk_bench_kernel_throughput(rt, &two, &r));
    CHECK_U64_EQ(r.messages, two.messages);
    CHECK_U64_EQ(r.errors, 0);
    printf("kernel persistent throughput, 64 B, 2 host threads, 2 workers: %.2f M msg/s\n",
           r.messages_per_second / 1e6);
    rk_bench_kernel_opts three = {.host_threads = 3};
    CHECK_STATUS(rk_bench_kernel_throughput(rt, &three, &r), RK_INVALID_ARGUMENT);
    CHECK_STATUS(rk_bench_kernel_throughput(NULL, NULL, &r), RK_NULL_ARGUMENT);
    rk_bench_kernel_opts tiny = {.message_size = 4};
    CHECK_STATUS(rk_bench_kernel_latency(rt, &tiny, &r), RK_INVALID_ARGUMENT);
    CHECK_OK(rk_runtime_destroy(rt));
    return 0;
}
