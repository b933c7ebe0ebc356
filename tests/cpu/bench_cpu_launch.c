/* Figures for the CPU executor (a program, not a test):
 *   - launch overhead: an empty 1x1 kernel, launch + synchronize, and
 *     back-to-back launches with one synchronize at the end;
 *   - vector_scale over 1M floats (the spec's kernel, compiled from source);
 *   - a block reduction with 10 barriers per block over 1M ints (fiber switches).
 * Usage: cpu_launch_bench [iterations]   (RK_CPU_THREADS sets the executors) */
#include <time.h>

#include "cpu_test.h"

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static const char source[] =
    "RK_KERNEL void empty(void) {}\n"
    "RK_KERNEL void vector_scale(float *data, float scale, int n) {\n"
    "    int idx = block_idx_x() * block_dim_x() + thread_idx_x();\n"
    "    if (idx >= n) return;\n"
    "    data[idx] = data[idx] * scale;\n"
    "}\n"
    "RK_KERNEL void reduce(const int *in, long long *out) {\n"
    "    RK_SHARED long long partial[1024];\n"
    "    int t = thread_idx_x();\n"
    "    partial[t] = in[block_idx_x() * block_dim_x() + t];\n"
    "    sync_threads();\n"
    "    for (int s = block_dim_x() / 2; s > 0; s /= 2) {\n"
    "        if (t < s) partial[t] += partial[t + s];\n"
    "        sync_threads();\n"
    "    }\n"
    "    if (t == 0) out[block_idx_x()] = partial[0];\n"
    "}\n";

/* Median of reps timings of fn(arg), in microseconds. */
static double median_us(int reps, void (*fn)(void *), void *arg) {
    double *t = malloc((size_t)reps * sizeof *t);
    for (int r = 0; r < reps; r++) {
        double t0 = now_us();
        fn(arg);
        t[r] = now_us() - t0;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    double m = t[reps / 2];
    free(t);
    return m;
}

typedef struct run {
    rk_context *ctx;
    rk_function *fn;
    rk_launch_desc desc;
} run;

static void launch_sync(void *arg) {
    run *r = arg;
    CHECK_OK(rk_launch(r->fn, &r->desc));
    CHECK_OK(rk_context_synchronize(r->ctx));
}

int main(int argc, char **argv) {
    int iters = argc > 1 ? atoi(argv[1]) : 20000;
    rk_context *ctx = cpu_context();
    rk_device_info info;
    CHECK_OK(rk_context_device_info(ctx, &info));
    const char *threads = getenv("RK_CPU_THREADS");
    printf("device: %s (%u cores), executors: %s, %s\n", info.name, info.multiprocessors,
           threads ? threads : "one per core", info.driver);

    rk_module *m = NULL;
    rk_function *empty = NULL, *scale = NULL, *reduce = NULL;
    CHECK_OK(rk_module_compile(ctx, source, NULL, &m));
    CHECK_OK(rk_module_get_function(m, "empty", &empty));
    CHECK_OK(rk_module_get_function(m, "vector_scale", &scale));
    CHECK_OK(rk_module_get_function(m, "reduce", &reduce));

    run r = {.ctx = ctx, .fn = empty, .desc = launch_1d(1, 1, NULL, 0)};
    for (int i = 0; i < 1000; i++) launch_sync(&r); /* warm up: threads, fibers */
    double t0 = now_us();
    for (int i = 0; i < iters; i++) launch_sync(&r);
    double per_sync = (now_us() - t0) / iters;
    t0 = now_us();
    for (int i = 0; i < iters; i++) CHECK_OK(rk_launch(empty, &r.desc));
    CHECK_OK(rk_context_synchronize(ctx));
    double per_async = (now_us() - t0) / iters;
    printf("empty kernel 1x1:       %.2f us per launch+synchronize, %.2f us per launch back to back (%d launches)\n",
           per_sync, per_async, iters);

    enum { N = 1 << 20 };
    float *host = malloc(N * sizeof *host);
    for (int i = 0; i < N; i++) host[i] = (float)i;
    rk_buffer *buf = NULL;
    CHECK_OK(rk_buffer_alloc(ctx, N * sizeof *host, &buf));
    CHECK_OK(rk_copy_to_device(ctx, buf, 0, host, N * sizeof *host, NULL));
    rk_arg args[] = {RK_ARG_BUF(buf), RK_ARG_FLOAT(1.0f), RK_ARG_INT(N)};
    static const uint32_t blocks[] = {128, 256, 1024};
    for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++) {
        run v = {.ctx = ctx, .fn = scale, .desc = launch_1d(N / blocks[b], blocks[b], args, 3)};
        launch_sync(&v);
        double us = median_us(21, launch_sync, &v);
        printf("vector_scale 1M floats, block %4u: %.2f ms (%.1f ns per element)\n", blocks[b], us / 1e3,
               us * 1e3 / N);
    }
    CHECK_OK(rk_buffer_free(buf));
    free(host);

    rk_buffer *in = NULL, *out = NULL;
    CHECK_OK(rk_buffer_alloc(ctx, N * sizeof(int), &in));
    CHECK_OK(rk_buffer_alloc(ctx, (N / 1024) * sizeof(long long), &out));
    rk_arg rargs[] = {RK_ARG_BUF(in), RK_ARG_BUF(out)};
    run red = {.ctx = ctx, .fn = reduce, .desc = launch_1d(N / 1024, 1024, rargs, 2)};
    launch_sync(&red);
    double us = median_us(11, launch_sync, &red);
    printf("reduce 1M ints, block 1024 (11 barriers): %.2f ms (%.1f ns per thread per barrier)\n", us / 1e3,
           us * 1e3 / N / 11);
    CHECK_OK(rk_buffer_free(in));
    CHECK_OK(rk_buffer_free(out));

    CHECK_OK(rk_module_destroy(m));
    CHECK_OK(rk_context_destroy(ctx));
    return 0;
}
