/* Compiling DSL C source with the system compiler: running it over many grid
 * shapes, compiler errors with their log, lookups, options, and the cache. */
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cpu/cpu_internal.h"
#include "cpu_test.h"

static const char vector_scale_src[] =
    "RK_KERNEL void vector_scale(float *data, float scale, int n) {\n"
    "    int idx = block_idx_x() * block_dim_x() + thread_idx_x();\n"
    "    if (idx >= n) return;\n"
    "    data[idx] = data[idx] * scale;\n"
    "}\n"
    "RK_HANDLER int twice(int x) { return 2 * x; }\n";

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void test_vector_scale(rk_context *ctx) {
    rk_module *m = NULL;
    rk_function *fn = NULL, *again = NULL;
    CHECK_OK(rk_module_compile(ctx, vector_scale_src, NULL, &m));
    CHECK_OK(rk_module_get_function(m, "vector_scale", &fn));
    CHECK_OK(rk_module_get_function(m, "vector_scale", &again));
    CHECK(fn == again);

    static const int sizes[] = {1, 31, 32, 33, 255, 256, 257, 1000, 4096, 100003};
    static const uint32_t blocks[] = {1, 32, 64, 96, 256, 1024};
    enum { PAD = 16 };
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        int n = sizes[si];
        size_t bytes = (size_t)(n + PAD) * sizeof(float);
        float *host = malloc(bytes);
        rk_buffer *buf = NULL;
        CHECK_OK(rk_buffer_alloc(ctx, bytes, &buf));
        for (size_t bi = 0; bi < sizeof blocks / sizeof blocks[0]; bi++) {
            uint32_t block = blocks[bi];
            if (block == 1 && n > 5000) continue; /* 100k one-thread blocks: covered by smaller sizes */
            for (int i = 0; i < n + PAD; i++) host[i] = (float)i;
            CHECK_OK(rk_copy_to_device(ctx, buf, 0, host, bytes, NULL));
            rk_arg args[] = {RK_ARG_BUF(buf), RK_ARG_FLOAT(2.5f), RK_ARG_INT(n)};
            rk_launch_desc d = launch_1d(((uint32_t)n + block - 1) / block, block, args, 3);
            CHECK_OK(rk_launch(fn, &d));
            CHECK_OK(rk_copy_to_host(ctx, host, buf, 0, bytes, NULL));
            CHECK_OK(rk_context_synchronize(ctx));
            for (int i = 0; i < n; i++) CHECK_FLOAT_NEAR(host[i], (float)i * 2.5f, 0.0);
            for (int i = n; i < n + PAD; i++) CHECK_FLOAT_NEAR(host[i], (float)i, 0.0); /* past n: untouched */
        }
        CHECK_OK(rk_buffer_free(buf));
        free(host);
    }

    /* exported non-kernel functions are reachable for ring handlers */
    void (*raw)(void) = NULL;
    CHECK_OK(rk__cpu_module_symbol(m, "twice", &raw));
    int (*twice)(int) = (int (*)(int))raw;
    CHECK_EQ(twice(21), 42);

    /* only the module's own functions: not libc's, not variables, not absent ones */
    CHECK_STATUS(rk_module_get_function(m, "no_such_kernel", &fn), RK_NOT_FOUND);
    CHECK_STR_CONTAINS(rk_last_error(), "no_such_kernel");
    CHECK_STATUS(rk_module_get_function(m, "printf", &fn), RK_NOT_FOUND);
    CHECK_STATUS(rk_module_get_function(m, "rk__dsl_runtime", &fn), RK_NOT_FOUND);
    CHECK_STATUS(rk__cpu_module_symbol(m, "memcpy", &raw), RK_NOT_FOUND);
    CHECK_OK(rk_module_destroy(m));
}

/* A 2-D grid of 2-D blocks: index arithmetic in every dimension. */
static void test_2d(rk_context *ctx) {
    static const char src[] =
        "#include <ringkernel/dsl.h> /* optional: kernels get it anyway */\n"
        "RK_KERNEL void fill(int *out, int width, int height) {\n"
        "    int x = block_idx_x() * block_dim_x() + thread_idx_x();\n"
        "    int y = block_idx_y() * block_dim_y() + thread_idx_y();\n"
        "    if (x >= width || y >= height) return;\n"
        "    out[y * width + x] = x * 1000 + y + grid_dim_x() * 1000000 + block_dim_z() * 100000000;\n"
        "}\n";
    rk_module *m = NULL;
    rk_function *fn = NULL;
    CHECK_OK(rk_module_compile(ctx, src, NULL, &m));
    CHECK_OK(rk_module_get_function(m, "fill", &fn));
    enum { W = 70, H = 45 };
    rk_buffer *buf = NULL;
    CHECK_OK(rk_buffer_alloc(ctx, W * H * sizeof(int), &buf));
    rk_arg args[] = {RK_ARG_BUF(buf), RK_ARG_INT(W), RK_ARG_INT(H)};
    rk_launch_desc d = {.grid = RK_DIM3((W + 15) / 16, (H + 7) / 8, 1), .block = RK_DIM3(16, 8, 1), .args = args,
                        .arg_count = 3};
    CHECK_OK(rk_launch(fn, &d));
    static int out[W * H];
    CHECK_OK(rk_copy_to_host(ctx, out, buf, 0, sizeof out, NULL));
    CHECK_OK(rk_context_synchronize(ctx));
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) CHECK_EQ(out[y * W + x], x * 1000 + y + 5 * 1000000 + 100000000);
    CHECK_OK(rk_buffer_free(buf));
    CHECK_OK(rk_module_destroy(m));
}

static void test_errors(rk_context *ctx) {
    static const char bad[] =
        "RK_KERNEL void broken(float *data) {\n"
        "    int i = thread_idx_x();\n"
        "    int j = ;\n"
        "    data[i] = 1.0f;\n"
        "}\n";
    rk_module *m = (rk_module *)1;
    CHECK_STATUS(rk_module_compile(ctx, bad, NULL, &m), RK_COMPILE_FAILED);
    CHECK(m == NULL);
    const char *log = rk_last_error();
    CHECK_STR_CONTAINS(log, ".c:3:"); /* the compiler's own message, with the line */
    CHECK_STR_CONTAINS(log, "error");
    CHECK_STR_CONTAINS(log, "exit code");

    /* a call to a function that exists nowhere is caught when linking */
    static const char undefined[] = "void nowhere_to_be_found(void);\n"
                                    "RK_KERNEL void k(void) { nowhere_to_be_found(); }\n";
    CHECK_STATUS(rk_module_compile(ctx, undefined, NULL, &m), RK_COMPILE_FAILED);
    CHECK_STR_CONTAINS(rk_last_error(), "nowhere_to_be_found");

    rk_compile_options o = {.optimization_level = 9};
    CHECK_STATUS(rk_module_compile(ctx, vector_scale_src, &o, &m), RK_INVALID_ARGUMENT);
    const char *null_define[] = {NULL};
    rk_compile_options o2 = {.defines = null_define, .define_count = 1};
    CHECK_STATUS(rk_module_compile(ctx, vector_scale_src, &o2, &m), RK_INVALID_ARGUMENT);

    const char *old_cc = getenv("CC");
    char *saved = old_cc ? strdup(old_cc) : NULL;
    CHECK_EQ(setenv("CC", "/nonexistent/bin/cc-for-ringkernel", 1), 0);
    static const char fresh[] = "RK_KERNEL void k_cc_missing(void) {}\n/* never cached */\n";
    CHECK_STATUS(rk_module_compile(ctx, fresh, NULL, &m), RK_COMPILE_FAILED);
    CHECK_STR_CONTAINS(rk_last_error(), "cc-for-ringkernel");
    if (saved) {
        setenv("CC", saved, 1);
        free(saved);
    } else {
        unsetenv("CC");
    }
}

/* Defines and include dirs reach the compiler; editing an included header is a new build. */
static void test_options(rk_context *ctx, const char *tmp) {
    char dir[512], header[600];
    snprintf(dir, sizeof dir, "%s/inc", tmp);
    CHECK_EQ(mkdir(dir, 0755), 0);
    snprintf(header, sizeof header, "%s/offset.h", dir);
    FILE *f = fopen(header, "w");
    CHECK(f != NULL);
    fputs("#define OFFSET 7\n", f);
    fclose(f);

    static const char src[] = "#include \"offset.h\"\n"
                              "RK_KERNEL void put(int *out) { out[0] = FACTOR * 10 + OFFSET; }\n";
    const char *dirs[] = {dir};
    const char *defines[] = {"FACTOR=4"};
    rk_compile_options o = {.include_dirs = dirs, .include_dir_count = 1, .defines = defines, .define_count = 1,
                            .optimization_level = 1, .debug_info = true};
    rk_buffer *buf = NULL;
    CHECK_OK(rk_buffer_alloc(ctx, sizeof(int), &buf));
    for (int round = 0; round < 2; round++) {
        rk_module *m = NULL;
        rk_function *fn = NULL;
        CHECK_OK(rk_module_compile(ctx, src, &o, &m));
        CHECK_OK(rk_module_get_function(m, "put", &fn));
        rk_arg args[] = {RK_ARG_BUF(buf)};
        rk_launch_desc d = launch_1d(1, 1, args, 1);
        CHECK_OK(rk_launch(fn, &d));
        int out = 0;
        CHECK_OK(rk_copy_to_host(ctx, &out, buf, 0, sizeof out, NULL));
        CHECK_OK(rk_context_synchronize(ctx));
        CHECK_EQ(out, round == 0 ? 47 : 49);
        CHECK_OK(rk_module_destroy(m));
        f = fopen(header, "w");
        CHECK(f != NULL);
        fputs("#define OFFSET 9\n", f);
        fclose(f);
    }
    CHECK_OK(rk_buffer_free(buf));
    unlink(header);
    rmdir(dir);
}

/* Modules of different sources loaded at the same time are different objects
 * (each load has a name of its own: dlopen matches loaded objects by name). */
static void test_two_modules(rk_context *ctx) {
    rk_module *one = NULL, *two = NULL;
    rk_function *fn = NULL;
    CHECK_OK(rk_module_compile(ctx, "RK_KERNEL void first_fn(int *o) { o[0] = 1; }\n", NULL, &one));
    CHECK_OK(rk_module_compile(ctx, "RK_KERNEL void second_fn(int *o) { o[0] = 2; }\n", NULL, &two));
    CHECK_OK(rk_module_get_function(one, "first_fn", &fn));
    CHECK_OK(rk_module_get_function(two, "second_fn", &fn));
    CHECK_STATUS(rk_module_get_function(two, "first_fn", &fn), RK_NOT_FOUND);
    CHECK_OK(rk_module_destroy(one));
    CHECK_OK(rk_module_destroy(two));
}

/* The second compile of a source loads the cached object: the compiler (a
 * wrapper that counts its runs) is not started again. */
static void test_cache(rk_context *ctx, const char *tmp) {
    char wrapper[600], counter[600];
    snprintf(wrapper, sizeof wrapper, "%s/counting-cc", tmp);
    snprintf(counter, sizeof counter, "%s/count", tmp);
    const char *old_cc = getenv("CC");
    char *saved = old_cc ? strdup(old_cc) : NULL;
    FILE *f = fopen(wrapper, "w");
    CHECK(f != NULL);
    fprintf(f, "#!/bin/sh\necho run >> '%s'\nexec %s \"$@\"\n", counter, saved ? saved : "cc");
    fclose(f);
    CHECK_EQ(chmod(wrapper, 0755), 0);
    CHECK_EQ(setenv("CC", wrapper, 1), 0);

    char src[256];
    snprintf(src, sizeof src, "RK_KERNEL void k(int *o) { o[0] = 5; }\n/* unique: %ld %lld */\n", (long)getpid(),
             (long long)time(NULL));
    double t0 = now_ms();
    rk_module *m1 = NULL, *m2 = NULL;
    CHECK_OK(rk_module_compile(ctx, src, NULL, &m1));
    double t1 = now_ms();
    CHECK_OK(rk_module_compile(ctx, src, NULL, &m2));
    double t2 = now_ms();
    struct stat st;
    CHECK_EQ(stat(counter, &st), 0);
    CHECK_EQ(st.st_size, 4); /* one "run\n": the second compile did not start the compiler */
    printf("compile: first %.1f ms, cached %.2f ms\n", t1 - t0, t2 - t1);
    CHECK_LT(t2 - t1, t1 - t0);
    rk_function *fn = NULL;
    CHECK_OK(rk_module_get_function(m2, "k", &fn));
    CHECK_OK(rk_module_destroy(m1));
    CHECK_OK(rk_module_destroy(m2));

    /* different options are a different object */
    const char *defines[] = {"UNUSED_FLAG=1"};
    rk_compile_options o = {.defines = defines, .define_count = 1};
    CHECK_OK(rk_module_compile(ctx, src, &o, &m1));
    CHECK_EQ(stat(counter, &st), 0);
    CHECK_EQ(st.st_size, 8);
    CHECK_OK(rk_module_destroy(m1));

    /* with include dirs and debug info: the preprocessor runs each time (its
     * output is hashed), the compiler only the first time */
    const char *dirs[] = {tmp};
    rk_compile_options inc = {.include_dirs = dirs, .include_dir_count = 1, .debug_info = true};
    for (int i = 0; i < 2; i++) {
        CHECK_OK(rk_module_compile(ctx, src, &inc, &m1));
        CHECK_OK(rk_module_destroy(m1));
    }
    CHECK_EQ(stat(counter, &st), 0);
    CHECK_EQ(st.st_size, 8 + 3 * 4);

    if (saved) {
        setenv("CC", saved, 1);
        free(saved);
    } else {
        unsetenv("CC");
    }
    unlink(counter);
    unlink(wrapper);
}

/* Threads compiling one new source at once all get a working module. */
typedef struct compile_job {
    rk_context *ctx;
    const char *src;
    rk_status status;
    int result;
} compile_job;

static void *compile_thread(void *arg) {
    compile_job *j = arg;
    rk_module *m = NULL;
    rk_function *fn = NULL;
    rk_buffer *buf = NULL;
    j->status = rk_module_compile(j->ctx, j->src, NULL, &m);
    if (j->status != RK_OK) return NULL;
    j->status = rk_module_get_function(m, "answer", &fn);
    if (j->status == RK_OK) j->status = rk_buffer_alloc(j->ctx, sizeof(int), &buf);
    if (j->status == RK_OK) {
        rk_arg args[] = {RK_ARG_BUF(buf)};
        rk_stream *s = NULL;
        j->status = rk_stream_create(j->ctx, &s);
        rk_launch_desc d = launch_1d(1, 1, args, 1);
        d.stream = s;
        if (j->status == RK_OK) j->status = rk_launch(fn, &d);
        if (j->status == RK_OK) j->status = rk_copy_to_host(j->ctx, &j->result, buf, 0, sizeof(int), s);
        if (j->status == RK_OK) j->status = rk_stream_synchronize(s);
        if (s) rk_stream_destroy(s);
        rk_buffer_free(buf);
    }
    rk_module_destroy(m);
    return NULL;
}

static void test_concurrent(rk_context *ctx) {
    char src[256];
    snprintf(src, sizeof src, "RK_KERNEL void answer(int *o) { o[0] = 42; }\n/* concurrent %ld %lld */\n",
             (long)getpid(), (long long)time(NULL));
    enum { T = 4 };
    pthread_t th[T];
    compile_job jobs[T];
    for (int i = 0; i < T; i++) {
        jobs[i] = (compile_job){.ctx = ctx, .src = src};
        CHECK_EQ(pthread_create(&th[i], NULL, compile_thread, &jobs[i]), 0);
    }
    for (int i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
        CHECK_OK(jobs[i].status);
        CHECK_EQ(jobs[i].result, 42);
    }
}

int main(void) {
    char tmp[] = "/tmp/rk-cpu-compile-XXXXXX";
    CHECK(mkdtemp(tmp) != NULL);
    rk_context *ctx = cpu_context();
    test_vector_scale(ctx);
    test_2d(ctx);
    test_errors(ctx);
    test_options(ctx, tmp);
    test_cache(ctx, tmp);
    test_two_modules(ctx);
    test_concurrent(ctx);
    CHECK_OK(rk_context_destroy(ctx));
    rmdir(tmp);
    printf("cpu compile: ok\n");
    return 0;
}
