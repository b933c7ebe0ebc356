/* CPU device layer: device info, buffer alignment, streams and their
 * ordering against launches, context synchronize. What every backend
 * promises (allocation, copies, errors) is in tests/conformance. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "cpu/cpu_internal.h"
#include "cpu_test.h"
#include "ringkernel/dsl.h"

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void test_device_info(rk_context *ctx) {
    rk_device_info info;
    const rk_backend *cpu = NULL;
    CHECK_OK(rk_backend_find("cpu", &cpu));
    CHECK_OK(rk_backend_device_info(cpu, 0, &info));
    CHECK(info.name[0] != '\0');
    CHECK(info.vendor[0] != '\0');
    CHECK_STR_CONTAINS(info.backend, "cpu");
    CHECK(info.driver[0] != '\0');
    struct utsname u;
    CHECK_EQ(uname(&u), 0);
    CHECK_STR_CONTAINS(info.architecture, u.machine);
    CHECK_GT(info.total_memory, 64u << 20);
    CHECK_GE(info.multiprocessors, 1);
    CHECK_LE(info.multiprocessors, sysconf(_SC_NPROCESSORS_CONF));
    CHECK_EQ(info.warp_size, 32);
    CHECK_EQ(info.max_threads_per_block, 1024);
    CHECK_EQ(info.max_block_dim[0], 1024);
    CHECK_EQ(info.max_block_dim[1], 1024);
    CHECK_EQ(info.max_block_dim[2], 64);
    CHECK_EQ(info.max_grid_dim[0], 2147483647);
    CHECK_EQ(info.max_grid_dim[1], 65535);
    CHECK_EQ(info.max_grid_dim[2], 65535);
    CHECK_GE(info.max_shared_memory_per_block, 48 * 1024);
    CHECK(info.persistent_kernels);
    CHECK(info.host_mapped_memory);
    CHECK(info.cooperative_launch);

    rk_device_info from_ctx;
    CHECK_OK(rk_context_device_info(ctx, &from_ctx));
    CHECK_EQ(memcmp(&info, &from_ctx, sizeof info), 0);
    CHECK(rk_context_backend(ctx) == cpu);
    CHECK_STATUS(rk_backend_device_info(cpu, 1, &info), RK_NO_DEVICE);
}

/* Allocation, copies and their errors on every backend: tests/conformance.
 * Here what only the CPU promises: buffers aligned for vector loads. */
static void test_alloc_alignment(rk_context *ctx) {
    rk_buffer *b = NULL;
    CHECK_OK(rk_buffer_alloc(ctx, 1 << 20, &b));
    unsigned char *data = rk__cpu_buffer_data(b);
    CHECK(data != NULL);
    CHECK_EQ((uintptr_t)data % 64, 0);
    CHECK_OK(rk_buffer_free(b));
}

/* ---- streams: ordering against launches ------------------------------------- */

static atomic_int gate;

/* Adds 1 to every element; thread 0 of block 0 first waits for the host to open the gate. */
RK_KERNEL void gated_add(int *data, int n) {
    if (thread_idx_x() == 0 && block_idx_x() == 0)
        while (!atomic_load(&gate)) sched_yield();
    int i = block_idx_x() * block_dim_x() + thread_idx_x();
    if (i < n) data[i] += 1;
}

static void test_stream_order(rk_context *ctx, rk_function *fn, rk_stream *stream) {
    enum { N = 10000 };
    static int in[N], out[N];
    for (int i = 0; i < N; i++) in[i] = i * 3;
    for (int i = 0; i < N; i++) out[i] = -1;
    rk_buffer *buf = NULL;
    CHECK_OK(rk_buffer_alloc(ctx, sizeof in, &buf));

    atomic_store(&gate, 0);
    rk_arg args[] = {RK_ARG_BUF(buf), RK_ARG_INT(N)};
    rk_launch_desc d = launch_1d((N + 127) / 128, 128, args, 2);
    d.stream = stream;
    CHECK_OK(rk_copy_to_device(ctx, buf, 0, in, sizeof in, stream));
    CHECK_OK(rk_launch(fn, &d)); /* returns while the kernel waits at the gate: asynchronous */
    CHECK_OK(rk_launch(fn, &d));
    CHECK_OK(rk_copy_to_host(ctx, out, buf, 0, sizeof out, stream));
    sleep_ms(30);
    /* The copy is queued behind the blocked launch: nothing written yet. */
    for (int i = 0; i < N; i++) CHECK_EQ(out[i], -1);
    atomic_store(&gate, 1);
    if (stream)
        CHECK_OK(rk_stream_synchronize(stream));
    else
        CHECK_OK(rk_context_synchronize(ctx));
    for (int i = 0; i < N; i++) CHECK_EQ(out[i], i * 3 + 2);
    CHECK_OK(rk_buffer_free(buf));
}

/* Two streams blocked at once; context synchronize waits for both. */
static void test_context_synchronize(rk_context *ctx, rk_function *fn) {
    enum { N = 1000 };
    rk_stream *s[2];
    rk_buffer *buf[2];
    static int out[2][N];
    atomic_store(&gate, 0);
    for (int k = 0; k < 2; k++) {
        CHECK_OK(rk_stream_create(ctx, &s[k]));
        CHECK_OK(rk_buffer_alloc(ctx, N * sizeof(int), &buf[k]));
        rk_arg args[] = {RK_ARG_BUF(buf[k]), RK_ARG_INT(N)};
        rk_launch_desc d = launch_1d(N / 100, 100, args, 2);
        d.stream = s[k];
        for (int r = 0; r <= k; r++) CHECK_OK(rk_launch(fn, &d));
        CHECK_OK(rk_copy_to_host(ctx, out[k], buf[k], 0, N * sizeof(int), s[k]));
    }
    sleep_ms(10);
    atomic_store(&gate, 1);
    CHECK_OK(rk_context_synchronize(ctx));
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < N; i++) CHECK_EQ(out[k][i], k + 1);
    for (int k = 0; k < 2; k++) {
        CHECK_OK(rk_buffer_free(buf[k]));
        CHECK_OK(rk_stream_destroy(s[k]));
    }
    /* a stream with nothing queued synchronizes at once */
    rk_stream *idle = NULL;
    CHECK_OK(rk_stream_create(ctx, &idle));
    CHECK_OK(rk_stream_synchronize(idle));
    CHECK_OK(rk_stream_destroy(idle));
    CHECK_STATUS(rk_stream_synchronize(NULL), RK_NULL_ARGUMENT);
}

/* Many small ops on one stream keep their order. */
static void test_stream_many_ops(rk_context *ctx, rk_function *fn) {
    rk_stream *s = NULL;
    rk_buffer *buf = NULL;
    enum { N = 64, ROUNDS = 200 };
    int host[N], out[N];
    CHECK_OK(rk_stream_create(ctx, &s));
    CHECK_OK(rk_buffer_alloc(ctx, sizeof host, &buf));
    atomic_store(&gate, 1);
    rk_arg args[] = {RK_ARG_BUF(buf), RK_ARG_INT(N)};
    rk_launch_desc d = launch_1d(2, 32, args, 2);
    d.stream = s;
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < N; i++) host[i] = r * 1000 + i;
        /* host is reused next round, so wait for the copy each time before changing it */
        CHECK_OK(rk_copy_to_device(ctx, buf, 0, host, sizeof host, s));
        CHECK_OK(rk_launch(fn, &d));
        CHECK_OK(rk_launch(fn, &d));
        CHECK_OK(rk_copy_to_host(ctx, out, buf, 0, sizeof out, s));
        CHECK_OK(rk_stream_synchronize(s));
        for (int i = 0; i < N; i++) CHECK_EQ(out[i], r * 1000 + i + 2);
    }
    CHECK_OK(rk_buffer_free(buf));
    CHECK_OK(rk_stream_destroy(s));
}

static void *open_gate_later(void *arg) {
    (void)arg;
    sleep_ms(30);
    atomic_store(&gate, 1);
    return NULL;
}

/* Destroying a stream finishes its queued work first. */
static void test_destroy_waits(rk_context *ctx, rk_function *fn) {
    enum { N = 1000 };
    rk_stream *s = NULL;
    rk_buffer *buf = NULL;
    CHECK_OK(rk_stream_create(ctx, &s));
    CHECK_OK(rk_buffer_alloc(ctx, N * sizeof(int), &buf));
    atomic_store(&gate, 0);
    rk_arg args[] = {RK_ARG_BUF(buf), RK_ARG_INT(N)};
    rk_launch_desc d = launch_1d(N / 100, 100, args, 2);
    d.stream = s;
    CHECK_OK(rk_launch(fn, &d));
    pthread_t opener;
    CHECK_EQ(pthread_create(&opener, NULL, open_gate_later, NULL), 0);
    CHECK_OK(rk_stream_destroy(s));
    const int *data = rk__cpu_buffer_data(buf);
    for (int i = 0; i < N; i++) CHECK_EQ(data[i], 1);
    pthread_join(opener, NULL);
    CHECK_OK(rk_buffer_free(buf));
}

int main(void) {
    rk_context *ctx = cpu_context();
    test_device_info(ctx);
    test_alloc_alignment(ctx);

    rk_host_kernel kernels[] = {HOST_KERNEL(gated_add)};
    rk_module *m = NULL;
    rk_function *fn = NULL;
    CHECK_OK(rk_module_from_host_kernels(ctx, kernels, 1, &m));
    CHECK_OK(rk_module_get_function(m, "gated_add", &fn));

    rk_stream *s = NULL;
    CHECK_OK(rk_stream_create(ctx, &s));
    test_stream_order(ctx, fn, s);
    test_stream_order(ctx, fn, NULL); /* the default stream */
    CHECK_OK(rk_stream_destroy(s));
    test_context_synchronize(ctx, fn);
    test_stream_many_ops(ctx, fn);

    test_destroy_waits(ctx, fn);
    CHECK_OK(rk_module_destroy(m));
    CHECK_OK(rk_context_destroy(ctx));
    printf("cpu device layer: ok\n");
    return 0;
}
