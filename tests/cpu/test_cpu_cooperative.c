/* Cooperative launches on the CPU: grid_sync() is a real barrier across
 * blocks (a grid-wide reduction gives the right sum in every round only if
 * it is), grids larger than the worker count are refused, misuse is
 * reported rather than hanging, and a kernel polls host-mapped words. */
#include <stdatomic.h>
#include <stdlib.h>

#include "cpu_test.h"
#include "ringkernel/dsl.h"

enum { WORKERS = 4, ROUNDS = RK_TEST_TSAN ? 40 : 300, N = 4096 };

/* Round r: every block adds (r + 1) * in[i] over its share into its own
 * partial, meets the grid, then reads every block's partial. A barrier that
 * lets a block through early shows as a short sum. Partials alternate
 * between two rows so a block clears the row of round r + 1 while others
 * may still read the row of round r. */
RK_KERNEL void grid_sum(const int *in, int n, int *partial, int *out, int rounds) {
    int blocks = grid_dim_x(), b = block_idx_x(), t = thread_idx_x();
    int gid = b * block_dim_x() + t, stride = blocks * block_dim_x();
    for (int r = 0; r < rounds; r++) {
        int *row = partial + (r & 1) * blocks, *next_row = partial + ((r + 1) & 1) * blocks;
        int local = 0;
        for (int i = gid; i < n; i += stride) local += in[i] * (r + 1);
        atomic_add_i32(&row[b], local);
        grid_sync();
        if (t == 0) {
            int total = 0;
            for (int k = 0; k < blocks; k++) total += __atomic_load_n(&row[k], __ATOMIC_RELAXED);
            out[r * blocks + b] = total;
            next_row[b] = 0;
        }
        sync_threads();
    }
}

/* Block 1 returns at once; the others still meet at every grid_sync(). */
RK_KERNEL void early_exit(int *count, int rounds) {
    if (block_idx_x() == 1) return;
    for (int r = 0; r < rounds; r++) {
        if (thread_idx_x() == 0) atomic_add_i32(count, 1);
        grid_sync();
    }
}

/* Block 1 has a divergent barrier (a fault); the others wait at grid_sync(). */
RK_KERNEL void faulty_block(int *unused) {
    (void)unused;
    if (block_idx_x() == 1) {
        if (thread_idx_x() == 0) return;
        sync_threads();
        return;
    }
    grid_sync();
    grid_sync();
}

/* Host-mapped ping-pong, built from DSL source by the system compiler. */
static const char mapped_source[] =
    "RK_KERNEL void echo(uint32_t *words, int rounds) {\n"
    "    /* words[0]: host writes the round; words[32]: kernel answers 3 * round + 1 */\n"
    "    if (block_idx_x() == 0 && thread_idx_x() == 0) {\n"
    "        for (uint32_t r = 1; r <= (uint32_t)rounds; r++) {\n"
    "            while (load_acquire_u32(&words[0]) != r) sleep_ns(100);\n"
    "            store_release_u32(&words[32], 3u * r + 1u);\n"
    "        }\n"
    "    }\n"
    "    grid_sync();\n"
    "}\n";

static rk_launch_desc coop(uint32_t grid, uint32_t block, const rk_arg *args, size_t count, rk_stream *stream) {
    rk_launch_desc d = launch_1d(grid, block, args, count);
    d.cooperative = true;
    d.stream = stream;
    return d;
}

static void check_sums(const int *out, int blocks, int rounds, int base) {
    for (int r = 0; r < rounds; r++)
        for (int b = 0; b < blocks; b++)
            if (out[r * blocks + b] != base * (r + 1)) {
                fprintf(stderr, "round %d block %d saw %d, want %d\n", r, b, out[r * blocks + b], base * (r + 1));
                exit(1);
            }
}

int main(void) {
    setenv("RK_CPU_THREADS", "4", 1); /* a fixed worker count for the limit checks */
    rk_context *ctx = cpu_context();
    rk_device_info info;
    CHECK_OK(rk_context_device_info(ctx, &info));
    CHECK(info.cooperative_launch);

    rk_host_kernel kernels[] = {HOST_KERNEL(grid_sum), HOST_KERNEL(early_exit), HOST_KERNEL(faulty_block)};
    rk_module *m = NULL;
    rk_function *sum = NULL, *early = NULL, *faulty = NULL;
    CHECK_OK(rk_module_from_host_kernels(ctx, kernels, 3, &m));
    CHECK_OK(rk_module_get_function(m, "grid_sum", &sum));
    CHECK_OK(rk_module_get_function(m, "early_exit", &early));
    CHECK_OK(rk_module_get_function(m, "faulty_block", &faulty));

    int *in = malloc(N * sizeof *in), base = 0;
    CHECK(in);
    for (int i = 0; i < N; i++) base += in[i] = i % 7 - 2;
    rk_buffer *in_buf = NULL, *partial = NULL, *out = NULL, *partial2 = NULL, *out2 = NULL;
    CHECK_OK(rk_buffer_alloc(ctx, N * sizeof *in, &in_buf));
    CHECK_OK(rk_buffer_alloc(ctx, 2 * WORKERS * sizeof(int), &partial));
    CHECK_OK(rk_buffer_alloc(ctx, 2 * WORKERS * sizeof(int), &partial2));
    CHECK_OK(rk_buffer_alloc(ctx, (size_t)ROUNDS * WORKERS * sizeof(int), &out));
    CHECK_OK(rk_buffer_alloc(ctx, (size_t)ROUNDS * WORKERS * sizeof(int), &out2));
    CHECK_OK(rk_copy_to_device(ctx, in_buf, 0, in, N * sizeof *in, NULL));
    int *result = calloc((size_t)ROUNDS * WORKERS, sizeof *result);
    CHECK(result);

    /* 1. A grid-wide reduction over as many blocks as workers. */
    rk_arg args[] = {RK_ARG_BUF(in_buf), RK_ARG_INT(N), RK_ARG_BUF(partial), RK_ARG_BUF(out), RK_ARG_INT(ROUNDS)};
    rk_launch_desc d = coop(WORKERS, 64, args, 5, NULL);
    CHECK_OK(rk_launch(sum, &d));
    CHECK_OK(rk_context_synchronize(ctx));
    CHECK_OK(rk_copy_to_host(ctx, result, out, 0, (size_t)ROUNDS * WORKERS * sizeof(int), NULL));
    check_sums(result, WORKERS, ROUNDS, base);

    /* 2. More blocks than workers is refused, naming the limit; nothing runs. */
    d.grid.x = WORKERS + 1;
    CHECK_STATUS(rk_launch(sum, &d), RK_BAD_LAUNCH_CONFIG);
    CHECK_STR_CONTAINS(rk_last_error(), "cooperative grid of 5 blocks is over the CPU limit of 4");

    /* 3. Two cooperative grids of 3 blocks on two streams: 6 blocks > 4
     * workers, so the second waits for the first instead of deadlocking. */
    rk_stream *s1 = NULL, *s2 = NULL;
    CHECK_OK(rk_stream_create(ctx, &s1));
    CHECK_OK(rk_stream_create(ctx, &s2));
    int zero[2 * WORKERS] = {0};
    CHECK_OK(rk_copy_to_device(ctx, partial, 0, zero, sizeof zero, NULL));
    rk_arg args2[] = {RK_ARG_BUF(in_buf), RK_ARG_INT(N), RK_ARG_BUF(partial2), RK_ARG_BUF(out2), RK_ARG_INT(ROUNDS)};
    d = coop(3, 32, args, 5, s1);
    CHECK_OK(rk_launch(sum, &d));
    d = coop(3, 32, args2, 5, s2);
    CHECK_OK(rk_launch(sum, &d));
    CHECK_OK(rk_stream_synchronize(s1));
    CHECK_OK(rk_stream_synchronize(s2));
    CHECK_OK(rk_copy_to_host(ctx, result, out, 0, (size_t)ROUNDS * 3 * sizeof(int), NULL));
    check_sums(result, 3, ROUNDS, base);
    CHECK_OK(rk_copy_to_host(ctx, result, out2, 0, (size_t)ROUNDS * 3 * sizeof(int), NULL));
    check_sums(result, 3, ROUNDS, base);

    /* 4. A block that returns no longer counts at the barrier. */
    rk_buffer *counter = NULL;
    CHECK_OK(rk_buffer_alloc(ctx, sizeof(int), &counter));
    rk_arg cargs[] = {RK_ARG_BUF(counter), RK_ARG_INT(50)};
    d = coop(3, 16, cargs, 2, NULL);
    CHECK_OK(rk_launch(early, &d));
    CHECK_OK(rk_context_synchronize(ctx));
    int count = 0;
    CHECK_OK(rk_copy_to_host(ctx, &count, counter, 0, sizeof count, NULL));
    CHECK_EQ(count, 2 * 50);

    /* 5. grid_sync() outside a cooperative launch is a fault, not a hang. */
    d = launch_1d(2, 8, cargs, 2);
    CHECK_OK(rk_launch(early, &d));
    CHECK_STATUS(rk_context_synchronize(ctx), RK_DEVICE_FAULT);
    CHECK_STR_CONTAINS(rk_last_error(), "not cooperative");
    /* ...but a one-block grid is its own grid. */
    d = launch_1d(1, 8, cargs, 2);
    CHECK_OK(rk_launch(early, &d));
    CHECK_OK(rk_context_synchronize(ctx));

    /* 6. A block that faults releases the blocks waiting for it. */
    d = coop(3, 8, cargs, 1, NULL);
    CHECK_OK(rk_launch(faulty, &d));
    CHECK_STATUS(rk_context_synchronize(ctx), RK_DEVICE_FAULT);
    CHECK_STR_CONTAINS(rk_last_error(), "divergent barrier");

    /* 7. Host-mapped words, polled by a compiled DSL kernel while it runs. */
    rk_buffer *mapped = NULL;
    void *host = NULL;
    CHECK_STATUS(rk_buffer_alloc_mapped(ctx, 0, &mapped, &host), RK_INVALID_ARGUMENT);
    CHECK_STATUS(rk_buffer_alloc_mapped(ctx, 256, &mapped, NULL), RK_NULL_ARGUMENT);
    CHECK_OK(rk_buffer_alloc_mapped(ctx, 256, &mapped, &host));
    CHECK(host != NULL);
    CHECK_EQ(rk_buffer_size(mapped), 256);
    uint32_t *words = host;
    CHECK_EQ(words[0], 0);
    CHECK_EQ(words[63], 0);
    rk_module *echo_module = NULL;
    rk_function *echo = NULL;
    CHECK_OK(rk_module_compile(ctx, mapped_source, NULL, &echo_module));
    CHECK_OK(rk_module_get_function(echo_module, "echo", &echo));
    const int pings = RK_TEST_TSAN ? 200 : 2000;
    rk_arg eargs[] = {RK_ARG_BUF(mapped), RK_ARG_INT(pings)};
    d = coop(2, 4, eargs, 2, s1);
    CHECK_OK(rk_launch(echo, &d));
    for (uint32_t r = 1; r <= (uint32_t)pings; r++) {
        __atomic_store_n(&words[0], r, __ATOMIC_RELEASE);
        while (__atomic_load_n(&words[32], __ATOMIC_ACQUIRE) != 3u * r + 1u) {
        }
    }
    CHECK_OK(rk_stream_synchronize(s1));
    uint32_t last = 0;
    CHECK_OK(rk_copy_to_host(ctx, &last, mapped, 32 * sizeof(uint32_t), sizeof last, NULL));
    CHECK_EQ(last, 3u * (uint32_t)pings + 1u);

    CHECK_OK(rk_module_destroy(echo_module));
    CHECK_OK(rk_buffer_free(mapped));
    CHECK_OK(rk_buffer_free(counter));
    CHECK_OK(rk_stream_destroy(s1));
    CHECK_OK(rk_stream_destroy(s2));
    CHECK_OK(rk_buffer_free(in_buf));
    CHECK_OK(rk_buffer_free(partial));
    CHECK_OK(rk_buffer_free(partial2));
    CHECK_OK(rk_buffer_free(out));
    CHECK_OK(rk_buffer_free(out2));
    CHECK_OK(rk_module_destroy(m));
    CHECK_OK(rk_context_destroy(ctx));
    free(in);
    free(result);
    printf("cooperative launches: %d-round grid reduction, refusal, early exit, faults, mapped ping-pong x%d: ok\n",
           ROUNDS, pings);
    return 0;
}
