/* Launch validation on the CPU device: bad shapes, too much shared memory and
 * bad arguments are refused before anything runs; the limits themselves work. */
#include <stdatomic.h>

#include "cpu_test.h"
#include "ringkernel/dsl.h"

static atomic_int runs;

RK_KERNEL void count_runs(int *unused) {
    (void)unused;
    atomic_fetch_add(&runs, 1);
}

/* Writes the whole dynamic shared area, then reads it back after a barrier. */
RK_KERNEL void fill_shared(int *ok, int bytes) {
    unsigned char *s = dynamic_shared();
    int t = thread_idx_x(), nt = block_dim_x();
    for (int i = t; i < bytes; i += nt) s[i] = (unsigned char)(i * 13 + block_idx_x());
    sync_threads();
    int good = 1;
    for (int i = (t + 1) % nt; i < bytes; i += nt) good &= s[i] == (unsigned char)(i * 13 + block_idx_x());
    if (!good) atomic_store((atomic_int *)ok, 0);
}

static void expect_refused(rk_function *fn, rk_launch_desc d, rk_status want, const char *text) {
    CHECK_STATUS(rk_launch(fn, &d), want);
    CHECK_STR_CONTAINS(rk_last_error(), text);
}

int main(void) {
    rk_context *ctx = cpu_context();
    rk_host_kernel kernels[] = {HOST_KERNEL(count_runs), HOST_KERNEL(fill_shared)};
    rk_module *m = NULL;
    rk_function *count = NULL, *fill = NULL;
    CHECK_OK(rk_module_from_host_kernels(ctx, kernels, 2, &m));
    CHECK_OK(rk_module_get_function(m, "count_runs", &count));
    CHECK_OK(rk_module_get_function(m, "fill_shared", &fill));
    rk_buffer *buf = NULL;
    CHECK_OK(rk_buffer_alloc(ctx, 64, &buf));
    rk_arg args[] = {RK_ARG_BUF(buf)};
    rk_launch_desc ok = launch_1d(1, 1, args, 1);

    rk_launch_desc d = ok;
    d.grid.x = 0;
    expect_refused(count, d, RK_BAD_LAUNCH_CONFIG, "grid dimension x is 0");
    d = ok;
    d.block.y = 0;
    expect_refused(count, d, RK_BAD_LAUNCH_CONFIG, "block dimension y is 0");
    d = ok;
    d.block.x = 1025;
    expect_refused(count, d, RK_BAD_LAUNCH_CONFIG, "1025");
    d = ok;
    d.block = RK_DIM3(32, 33, 1); /* each dimension fits, 1056 threads do not */
    expect_refused(count, d, RK_BAD_LAUNCH_CONFIG, "1056");
    d = ok;
    d.block.z = 65;
    expect_refused(count, d, RK_BAD_LAUNCH_CONFIG, "block dimension z");
    d = ok;
    d.grid.y = 65536;
    expect_refused(count, d, RK_BAD_LAUNCH_CONFIG, "grid dimension y");
    d = ok;
    d.shared_memory = 48 * 1024 + 1;
    expect_refused(count, d, RK_BAD_LAUNCH_CONFIG, "shared memory");
    d = ok;
    d.args = NULL;
    expect_refused(count, d, RK_NULL_ARGUMENT, "args");
    d = ok;
    rk_arg null_buffer[] = {RK_ARG_BUF(NULL)};
    d.args = null_buffer;
    expect_refused(count, d, RK_NULL_ARGUMENT, "argument 0");
    d = ok;
    rk_arg bad_kind[] = {{.kind = (rk_arg_kind)99}};
    d.args = bad_kind;
    expect_refused(count, d, RK_INVALID_ARGUMENT, "kind");
    d = ok;
    d.cooperative = true;
    d.grid.x = 2000; /* more blocks than worker threads (at most 1024) */
    expect_refused(count, d, RK_BAD_LAUNCH_CONFIG, "cooperative grid of 2000 blocks");
    CHECK_STATUS(rk_launch(NULL, &ok), RK_NULL_ARGUMENT);
    CHECK_STATUS(rk_launch(count, NULL), RK_NULL_ARGUMENT);

    /* nothing refused above ran */
    CHECK_OK(rk_context_synchronize(ctx));
    CHECK_EQ(atomic_load(&runs), 0);

    /* the limits themselves are accepted and work */
    d = ok;
    d.block = RK_DIM3(1024, 1, 1);
    CHECK_OK(rk_launch(count, &d));
    d.block = RK_DIM3(1, 1, 64);
    CHECK_OK(rk_launch(count, &d));
    d.block = RK_DIM3(1, 1, 1);
    d.grid = RK_DIM3(1, 65535, 1);
    CHECK_OK(rk_launch(count, &d));
    CHECK_OK(rk_context_synchronize(ctx));
    CHECK_EQ(atomic_load(&runs), 1024 + 64 + 65535);

    /* all 48 KiB of dynamic shared memory, per block, on several blocks at once */
    int one = 1;
    rk_buffer *flag = NULL;
    CHECK_OK(rk_buffer_alloc(ctx, sizeof one, &flag));
    CHECK_OK(rk_copy_to_device(ctx, flag, 0, &one, sizeof one, NULL));
    rk_arg fargs[] = {RK_ARG_BUF(flag), RK_ARG_INT(48 * 1024)};
    d = launch_1d(16, 64, fargs, 2);
    d.shared_memory = 48 * 1024;
    CHECK_OK(rk_launch(fill, &d));
    int result = 0;
    CHECK_OK(rk_copy_to_host(ctx, &result, flag, 0, sizeof result, NULL));
    CHECK_OK(rk_context_synchronize(ctx));
    CHECK_EQ(result, 1);

    CHECK_OK(rk_buffer_free(flag));
    CHECK_OK(rk_buffer_free(buf));
    CHECK_OK(rk_module_destroy(m));
    CHECK_OK(rk_context_destroy(ctx));
    printf("cpu launch validation: ok\n");
    return 0;
}
