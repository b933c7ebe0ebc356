/* Every device-layer operation on CUDA: device info, buffers, the three
 * copies, streams, synchronize, NVRTC compile (and its errors and disk
 * cache), functions, ordinary and cooperative launch, and the refusal of a
 * cooperative grid that cannot be co-resident. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cuda_test_util.h"

static const char kernels[] =
    "#include \"ringkernel/dsl.h\"\n"
    "RK_KERNEL void scale(float *data, float factor, int n) {\n"
    "    int i = block_idx_x() * block_dim_x() + thread_idx_x();\n"
    "    if (i < n) data[i] = data[i] * factor;\n"
    "}\n"
    "RK_KERNEL void mark(unsigned int *flags) { atomic_add_u32(flags + block_idx_x(), 1u); }\n"
    "RK_KERNEL void reverse_shared(int *data) {\n"
    "    int *tile = (int *)dynamic_shared();\n"
    "    int n = block_dim_x();\n"
    "    tile[thread_idx_x()] = data[thread_idx_x()];\n"
    "    sync_threads();\n"
    "    data[thread_idx_x()] = tile[n - 1 - thread_idx_x()];\n"
    "}\n"
    "RK_KERNEL void wide(long long a, unsigned long long b, double c, unsigned int d, long long *out) {\n"
    "    out[0] = a; out[1] = (long long)b; out[2] = (long long)(c * 4.0); out[3] = d;\n"
    "}\n"
    "RK_KERNEL void big_shared(int *out) {\n"
    "    unsigned char *s = (unsigned char *)dynamic_shared();\n"
    "    s[60000] = 7; sync_threads(); out[0] = s[60000];\n"
    "}\n";

static int count_cache_files(const char *dir) {
    char path[512];
    snprintf(path, sizeof path, "%s/cuda", dir);
    DIR *d = opendir(path);
    if (!d) return 0;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strstr(e->d_name, ".bin") && !strstr(e->d_name, ".tmp")) n++;
    closedir(d);
    return n;
}

int main(void) {
    char cache[] = "/tmp/rk-cuda-cache-XXXXXX";
    CHECK(mkdtemp(cache) != NULL);
    setenv("RK_CACHE_DIR", cache, 1);
    rk_runtime *rt = cuda_test_runtime();
    rk_context *ctx = rk_runtime_context(rt);
    rk_device_info info;
    CHECK_OK(rk_context_device_info(ctx, &info));
    CHECK(strcmp(info.backend, "cuda") == 0);
    CHECK(info.persistent_kernels);
    printf("device: %s (%s), %s\n", info.name, info.architecture, info.driver);

    /* Buffers are zeroed; copies in, across and out, with offsets. */
    enum { N = 1 << 16 };
    float *host = malloc(N * sizeof(float)), *back = malloc(N * sizeof(float));
    for (int i = 0; i < N; i++) host[i] = (float)i * 0.5f - 7.0f;
    rk_buffer *a = NULL, *b = NULL;
    CHECK_OK(rk_buffer_alloc(ctx, N * sizeof(float), &a));
    CHECK_OK(rk_buffer_alloc(ctx, N * sizeof(float), &b));
    CHECK_EQ(rk_buffer_size(a), N * sizeof(float));
    memset(back, 0xff, N * sizeof(float));
    CHECK_OK(rk_copy_to_host(ctx, back, a, 0, N * sizeof(float), NULL));
    CHECK_OK(rk_context_synchronize(ctx));
    for (int i = 0; i < N; i++) CHECK_EQ(((unsigned *)back)[i], 0);
    CHECK_OK(rk_copy_to_device(ctx, a, 0, host, N * sizeof(float), NULL));
    CHECK_OK(rk_copy_device_to_device(ctx, b, 64, a, 0, (N - 16) * sizeof(float), NULL));
    CHECK_OK(rk_copy_to_host(ctx, back, b, 64, (N - 16) * sizeof(float), NULL));
    CHECK_OK(rk_context_synchronize(ctx));
    for (int i = 0; i < N - 16; i++) CHECK_FLOAT_NEAR(back[i], host[i], 0);
    CHECK_STATUS(rk_copy_to_host(ctx, back, b, 8, N * sizeof(float), NULL), RK_OUT_OF_RANGE);

    /* Streams: work ordered on a stream of our own. */
    rk_stream *stream = NULL;
    CHECK_OK(rk_stream_create(ctx, &stream));

    /* Compile, get functions, launch; the disk cache holds the module. */
    rk_module *module = NULL;
    CHECK_EQ(count_cache_files(cache), 0);
    CHECK_OK(rk_module_compile(ctx, kernels, NULL, &module));
    CHECK_EQ(count_cache_files(cache), 1);
    rk_module *again = NULL;
    CHECK_OK(rk_module_compile(ctx, kernels, NULL, &again)); /* from the cache */
    CHECK_EQ(count_cache_files(cache), 1);
    CHECK_OK(rk_module_destroy(again));
    const char *defines[] = {"UNUSED_FLAG=1"};
    rk_compile_options opts = {.defines = defines, .define_count = 1};
    CHECK_OK(rk_module_compile(ctx, kernels, &opts, &again)); /* other options: another entry */
    CHECK_EQ(count_cache_files(cache), 2);
    CHECK_OK(rk_module_destroy(again));

    rk_function *scale = NULL, *mark = NULL, *rev = NULL, *wide = NULL, *big = NULL, *missing = NULL;
    CHECK_OK(rk_module_get_function(module, "scale", &scale));
    CHECK_OK(rk_module_get_function(module, "mark", &mark));
    CHECK_OK(rk_module_get_function(module, "reverse_shared", &rev));
    CHECK_OK(rk_module_get_function(module, "wide", &wide));
    CHECK_OK(rk_module_get_function(module, "big_shared", &big));
    CHECK_STATUS(rk_module_get_function(module, "no_such_kernel", &missing), RK_NOT_FOUND);
    CHECK_STR_CONTAINS(rk_last_error(), "no_such_kernel");

    rk_arg args[] = {RK_ARG_BUF(a), RK_ARG_FLOAT(3.0f), RK_ARG_INT(N)};
    rk_launch_desc launch = {.grid = RK_DIM3((N + 255) / 256, 1, 1), .block = RK_DIM3(256, 1, 1),
                             .stream = stream, .args = args, .arg_count = 3};
    CHECK_OK(rk_launch(scale, &launch));
    CHECK_OK(rk_copy_to_host(ctx, back, a, 0, N * sizeof(float), stream));
    CHECK_OK(rk_stream_synchronize(stream));
    for (int i = 0; i < N; i++) CHECK_FLOAT_NEAR(back[i], host[i] * 3.0f, 1e-3);

    /* Argument count and sizes are checked against the kernel. */
    rk_arg too_few[] = {RK_ARG_BUF(a), RK_ARG_FLOAT(3.0f)};
    launch.args = too_few;
    launch.arg_count = 2;
    /* (A driver without cuFuncGetParamInfo cannot say; then nothing is checked.) */
    rk_status s = rk_launch(scale, &launch);
    if (s != RK_OK) {
        CHECK_EQ(s, RK_INVALID_ARGUMENT);
        CHECK_STR_CONTAINS(rk_last_error(), "kernel 'scale' takes 3 argument(s), 2 given");
    }
    const bool checked = s != RK_OK;
    rk_arg too_many[] = {RK_ARG_BUF(a), RK_ARG_FLOAT(3.0f), RK_ARG_INT(N), RK_ARG_INT(N)};
    launch.args = too_many;
    launch.arg_count = 4;
    s = rk_launch(scale, &launch);
    CHECK_EQ(s, checked ? RK_INVALID_ARGUMENT : RK_OK);
    if (checked) CHECK_STR_CONTAINS(rk_last_error(), "takes 3 argument(s), 4 given");
    rk_arg wrong_size[] = {RK_ARG_BUF(a), RK_ARG_DOUBLE(3.0), RK_ARG_INT(N)};
    launch.args = wrong_size;
    launch.arg_count = 3;
    s = rk_launch(scale, &launch);
    CHECK_EQ(s, checked ? RK_INVALID_ARGUMENT : RK_OK);
    if (checked) CHECK_STR_CONTAINS(rk_last_error(), "argument 1 of 'scale' is 4 bytes in the kernel, 8 given");
    printf("  argument checks: %s\n", checked ? "count and sizes refused before launch" : "driver cannot tell");
    CHECK_OK(rk_stream_synchronize(stream));

    /* 64-bit, unsigned and double arguments arrive intact. */
    rk_buffer *out = NULL;
    CHECK_OK(rk_buffer_alloc(ctx, 4 * sizeof(long long), &out));
    rk_arg wide_args[] = {RK_ARG_LONG(-5000000000LL), RK_ARG_ULONG(0x123456789abcULL), RK_ARG_DOUBLE(2.5),
                          RK_ARG_UINT(4000000000u), RK_ARG_BUF(out)};
    rk_launch_desc one = {.grid = RK_DIM3(1, 1, 1), .block = RK_DIM3(1, 1, 1), .args = wide_args, .arg_count = 5};
    CHECK_OK(rk_launch(wide, &one));
    long long w[4];
    CHECK_OK(rk_copy_to_host(ctx, w, out, 0, sizeof w, NULL));
    CHECK_OK(rk_context_synchronize(ctx));
    CHECK_EQ(w[0], -5000000000LL);
    CHECK_EQ(w[1], 0x123456789abcLL);
    CHECK_EQ(w[2], 10);
    CHECK_EQ(w[3], 4000000000LL);

    /* Dynamic shared memory, including over the 48 KiB default. */
    int ints[256];
    for (int i = 0; i < 256; i++) ints[i] = i * 7;
    rk_buffer *ib = NULL;
    CHECK_OK(rk_buffer_alloc(ctx, sizeof ints, &ib));
    CHECK_OK(rk_copy_to_device(ctx, ib, 0, ints, sizeof ints, NULL));
    rk_arg rev_args[] = {RK_ARG_BUF(ib)};
    rk_launch_desc rl = {.grid = RK_DIM3(1, 1, 1), .block = RK_DIM3(256, 1, 1), .shared_memory = sizeof ints,
                         .args = rev_args, .arg_count = 1};
    CHECK_OK(rk_launch(rev, &rl));
    CHECK_OK(rk_copy_to_host(ctx, ints, ib, 0, sizeof ints, NULL));
    CHECK_OK(rk_context_synchronize(ctx));
    for (int i = 0; i < 256; i++) CHECK_EQ(ints[i], (255 - i) * 7);
    rl.block = RK_DIM3(1, 1, 1);
    rl.shared_memory = 64 * 1024;
    CHECK_OK(rk_launch(big, &rl));
    CHECK_OK(rk_copy_to_host(ctx, ints, ib, 0, sizeof(int), NULL));
    CHECK_OK(rk_context_synchronize(ctx));
    CHECK_EQ(ints[0], 7);

    /* Cooperative: a grid that fits runs; one that cannot be co-resident is
     * refused and never runs (its flags stay zero). */
    uint32_t blocks = info.multiprocessors * 2;
    size_t flag_count = (size_t)info.multiprocessors * 64;
    rk_buffer *flags = NULL;
    CHECK_OK(rk_buffer_alloc(ctx, flag_count * sizeof(unsigned), &flags));
    rk_arg mark_args[] = {RK_ARG_BUF(flags)};
    rk_launch_desc coop = {.grid = RK_DIM3(blocks, 1, 1), .block = RK_DIM3(1024, 1, 1), .args = mark_args,
                           .arg_count = 1, .cooperative = true};
    CHECK_OK(rk_launch(mark, &coop));
    unsigned *seen = calloc(flag_count, sizeof *seen);
    CHECK_OK(rk_copy_to_host(ctx, seen, flags, 0, flag_count * sizeof *seen, NULL));
    CHECK_OK(rk_context_synchronize(ctx));
    for (uint32_t i = 0; i < blocks; i++) CHECK_EQ(seen[i], 1024);
    memset(seen, 0, flag_count * sizeof *seen);
    CHECK_OK(rk_copy_to_device(ctx, flags, 0, seen, flag_count * sizeof *seen, NULL));
    coop.grid = RK_DIM3((uint32_t)flag_count, 1, 1); /* 64 blocks of 1024 threads per SM cannot be resident */
    CHECK_STATUS(rk_launch(mark, &coop), RK_BAD_LAUNCH_CONFIG);
    CHECK_STR_CONTAINS(rk_last_error(), "co-resident");
    CHECK_OK(rk_context_synchronize(ctx));
    CHECK_OK(rk_copy_to_host(ctx, seen, flags, 0, flag_count * sizeof *seen, NULL));
    CHECK_OK(rk_context_synchronize(ctx));
    for (size_t i = 0; i < flag_count; i++) CHECK_EQ(seen[i], 0);

    /* A compile error comes back with NVRTC's log. */
    rk_module *broken = NULL;
    CHECK_STATUS(rk_module_compile(ctx, "extern \"C\" __global__ void k(int *p) { p[0] = not_declared; }", NULL,
                                   &broken),
                 RK_COMPILE_FAILED);
    CHECK_STR_CONTAINS(rk_last_error(), "not_declared");
    CHECK(broken == NULL);

    /* Launch limits are checked before the driver sees them. */
    rk_launch_desc bad = launch;
    bad.args = args;
    bad.block = RK_DIM3(2048, 1, 1);
    CHECK_STATUS(rk_launch(scale, &bad), RK_BAD_LAUNCH_CONFIG);

    CHECK_OK(rk_stream_destroy(stream));
    CHECK_OK(rk_module_destroy(module));
    CHECK_OK(rk_buffer_free(a));
    CHECK_OK(rk_buffer_free(b));
    CHECK_OK(rk_buffer_free(out));
    CHECK_OK(rk_buffer_free(ib));
    CHECK_OK(rk_buffer_free(flags));
    CHECK_OK(rk_runtime_destroy(rt));
    cuda_test_done();
    free(host);
    free(back);
    free(seen);
    printf("device layer: all operations checked\n");
    return 0;
}
