/* Device layer, kernels: launch shapes (1-D to 3-D grids, the device's
 * limits, zero), barriers, atomics, stream ordering and synchronization,
 * and the documented errors of compile, lookup and launch. The kernels are
 * written once in the DSL and compiled for each backend. */
#include <string.h>

#include "conformance.h"

/* RK_BLOCK_SIZE fixes the block of the kernels a launch runs everywhere:
 * WebGPU's workgroup size is part of the shader (device.h). */
static const char kernels[] = "RK_KERNEL RK_BLOCK_SIZE(64, 1, 1) void fill_value(uint32_t *out, uint32_t "
                              "n, uint32_t value) {\n"
                              "    uint32_t i = (uint32_t)(block_idx_x() * block_dim_x() + "
                              "thread_idx_x());\n"
                              "    if (i < n) out[i] = value + i;\n"
                              "}\n"
                              "RK_KERNEL RK_BLOCK_SIZE(64, 1, 1) void add_one(uint32_t *data, uint32_t "
                              "n) {\n"
                              "    uint32_t i = (uint32_t)(block_idx_x() * block_dim_x() + "
                              "thread_idx_x());\n"
                              "    if (i < n) data[i] = data[i] + 1u;\n"
                              "}\n"
                              "RK_KERNEL RK_BLOCK_SIZE(64, 1, 1) void grid_ids(uint32_t *out) {\n"
                              "    uint32_t block = (uint32_t)((block_idx_z() * grid_dim_y() + "
                              "block_idx_y()) * grid_dim_x() + block_idx_x());\n"
                              "    out[block * 64u + (uint32_t)thread_idx_x()] = block * 1000u + "
                              "(uint32_t)thread_idx_x() + 1u;\n"
                              "}\n"
                              "RK_KERNEL RK_BLOCK_SIZE(64, 1, 1) void reverse_blocks(uint32_t *data) {\n"
                              "    RK_SHARED uint32_t tile[64];\n"
                              "    int t = thread_idx_x();\n"
                              "    int base = block_idx_x() * 64;\n"
                              "    tile[t] = data[base + t];\n"
                              "    sync_threads();\n"
                              "    data[base + t] = tile[63 - t];\n"
                              "}\n"
                              "RK_KERNEL RK_BLOCK_SIZE(64, 1, 1) void atomics(uint32_t *count, int "
                              "*high, int *low, uint32_t *bits, uint32_t n) {\n"
                              "    uint32_t i = (uint32_t)(block_idx_x() * block_dim_x() + "
                              "thread_idx_x());\n"
                              "    if (i >= n) return;\n"
                              "    atomic_add_u32(count, 1u);\n"
                              "    atomic_max_i32(high, (int)i);\n"
                              "    atomic_min_i32(low, -(int)i);\n"
                              "    atomic_or_u32(&bits[i / 32u], 1u << (i % 32u));\n"
                              "}\n"
                              "RK_KERNEL void count_threads(uint32_t *count) {\n"
                              "    atomic_add_u32(count, 1u);\n"
                              "}\n";

typedef struct fixture {
    rk_context *ctx;
    rk_module *m;
    rk_device_info info;
} fixture;

static fixture open_fixture(const conf_env *env) {
    fixture f = {.ctx = conf_context(env)};
    CHECK_OK(rk_context_device_info(f.ctx, &f.info));
    f.m = conf_compile_dsl(f.ctx, kernels);
    return f;
}

static void close_fixture(fixture *f) {
    CHECK_OK(rk_module_destroy(f->m));
    CHECK_OK(rk_context_destroy(f->ctx));
}

static rk_launch_desc desc_1d(uint32_t blocks, const rk_arg *args, size_t n) {
    rk_launch_desc d = {.grid = RK_DIM3(blocks, 1, 1), .block = RK_DIM3(64, 1, 1), .args = args, .arg_count = n};
    return d;
}

static void read_u32(rk_context *ctx, rk_buffer *b, uint32_t *out, size_t n) {
    CHECK_OK(rk_context_synchronize(ctx));
    CHECK_OK(rk_copy_to_host(ctx, out, b, 0, n * sizeof *out, NULL));
}

/* A kernel that fills 1, odd and many elements, with a guard past the end. */
static void fill_sizes(const conf_env *env) {
    fixture f = open_fixture(env);
    rk_function *fill = conf_function(f.m, "fill_value");
    enum { MAX = 4099, GUARD = 8 };
    rk_buffer *b = NULL;
    CHECK_OK(rk_buffer_alloc(f.ctx, (MAX + GUARD) * 4, &b));
    static uint32_t got[MAX + GUARD];
    const uint32_t sizes[] = {1, 63, 64, 65, 1000, MAX};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        uint32_t n = sizes[s], value = 1000u * (uint32_t)(s + 1);
        static const uint32_t sentinel[MAX + GUARD] = {0};
        CHECK_OK(rk_copy_to_device(f.ctx, b, 0, sentinel, sizeof sentinel, NULL));
        rk_arg args[] = {RK_ARG_BUF(b), RK_ARG_UINT(n), RK_ARG_UINT(value)};
        rk_launch_desc d = desc_1d((n + 63) / 64, args, 3);
        CHECK_OK(rk_launch(fill, &d));
        read_u32(f.ctx, b, got, MAX + GUARD);
        for (uint32_t i = 0; i < n; i++) CHECK_EQ(got[i], value + i);
        for (uint32_t i = n; i < MAX + GUARD; i++) CHECK_EQ(got[i], 0);
    }
    CHECK_OK(rk_buffer_free(b));
    close_fixture(&f);
}

/* 1-D, 2-D and 3-D grids: every block and thread runs exactly once with the
 * right indices; and the largest z the device allows (up to 1024). */
static void launch_shapes(const conf_env *env) {
    fixture f = open_fixture(env);
    rk_function *ids = conf_function(f.m, "grid_ids");
    uint32_t zmax = f.info.max_grid_dim[2] < 1024 ? f.info.max_grid_dim[2] : 1024;
    const rk_dim3 grids[] = {RK_DIM3(1, 1, 1), RK_DIM3(7, 1, 1), RK_DIM3(3, 5, 1), RK_DIM3(2, 3, 4),
                             RK_DIM3(1, 1, zmax)};
    for (size_t g = 0; g < sizeof grids / sizeof grids[0]; g++) {
        uint32_t blocks = grids[g].x * grids[g].y * grids[g].z, n = blocks * 64;
        rk_buffer *b = NULL;
        CHECK_OK(rk_buffer_alloc(f.ctx, n * 4, &b));
        rk_arg args[] = {RK_ARG_BUF(b)};
        rk_launch_desc d = {.grid = grids[g], .block = RK_DIM3(64, 1, 1), .args = args, .arg_count = 1};
        CHECK_OK(rk_launch(ids, &d));
        uint32_t *got = malloc(n * 4);
        read_u32(f.ctx, b, got, n);
        for (uint32_t i = 0; i < n; i++) CHECK_EQ(got[i], (i / 64) * 1000u + i % 64 + 1);
        free(got);
        CHECK_OK(rk_buffer_free(b));
    }
    close_fixture(&f);
}

/* The largest block: max_threads_per_block threads all run, on every backend
 * (a transpiled WGSL kernel's workgroup size is an override constant, set
 * per launch: device.h). */
static void launch_max_block(const conf_env *env) {
    fixture f = open_fixture(env);
    rk_function *count = conf_function(f.m, "count_threads");
    rk_buffer *b = NULL;
    CHECK_OK(rk_buffer_alloc(f.ctx, 4, &b));
    rk_arg args[] = {RK_ARG_BUF(b)};
    uint32_t max = f.info.max_threads_per_block;
    if (max > f.info.max_block_dim[0]) max = f.info.max_block_dim[0];
    rk_launch_desc d = {.grid = RK_DIM3(2, 1, 1), .block = RK_DIM3(max, 1, 1), .args = args, .arg_count = 1};
    uint32_t got = 0;
    CHECK_OK(rk_launch(count, &d));
    read_u32(f.ctx, b, &got, 1);
    CHECK_EQ(got, 2 * max);
    CHECK_OK(rk_buffer_free(b));
    close_fixture(&f);
}

/* Zero and over-the-limit shapes are refused before anything runs. */
static void launch_errors(const conf_env *env) {
    fixture f = open_fixture(env);
    rk_function *fill = conf_function(f.m, "fill_value");
    rk_buffer *b = NULL;
    CHECK_OK(rk_buffer_alloc(f.ctx, 256, &b));
    rk_arg args[] = {RK_ARG_BUF(b), RK_ARG_UINT(64), RK_ARG_UINT(5)};
    rk_launch_desc ok = desc_1d(1, args, 3), d;
    for (int dim = 0; dim < 3; dim++) {
        d = ok;
        uint32_t *g = dim == 0 ? &d.grid.x : dim == 1 ? &d.grid.y : &d.grid.z;
        *g = 0;
        CHECK_STATUS(rk_launch(fill, &d), RK_BAD_LAUNCH_CONFIG);
        if (f.info.max_grid_dim[dim] < UINT32_MAX) {
            *g = f.info.max_grid_dim[dim] + 1;
            CHECK_STATUS(rk_launch(fill, &d), RK_BAD_LAUNCH_CONFIG);
        }
        d = ok;
        uint32_t *bl = dim == 0 ? &d.block.x : dim == 1 ? &d.block.y : &d.block.z;
        *bl = 0;
        CHECK_STATUS(rk_launch(fill, &d), RK_BAD_LAUNCH_CONFIG);
    }
    d = ok;
    d.block = RK_DIM3(f.info.max_threads_per_block + 1, 1, 1);
    CHECK_STATUS(rk_launch(fill, &d), RK_BAD_LAUNCH_CONFIG);
    d = ok;
    d.shared_memory = (size_t)f.info.max_shared_memory_per_block + 1;
    CHECK_STATUS(rk_launch(fill, &d), RK_BAD_LAUNCH_CONFIG);
    CHECK_STATUS(rk_launch(NULL, &ok), RK_NULL_ARGUMENT);
    CHECK_STATUS(rk_launch(fill, NULL), RK_NULL_ARGUMENT);
    /* Cooperative launches exist exactly where device_info says so. */
    d = ok;
    d.cooperative = true;
    if (f.info.cooperative_launch)
        CHECK_OK(rk_launch(fill, &d));
    else
        CHECK_STATUS(rk_launch(fill, &d), RK_UNSUPPORTED);
    uint32_t got[64];
    read_u32(f.ctx, b, got, 64);
    for (uint32_t i = 0; i < 64; i++) CHECK_EQ(got[i], f.info.cooperative_launch ? 5 + i : 0);
    CHECK_OK(rk_buffer_free(b));
    close_fixture(&f);
}

static void compile_errors(const conf_env *env) {
    rk_context *ctx = conf_context(env);
    rk_module *m = NULL;
    /* Not valid in any backend's kernel language: the compiler's log comes back.
     */
    CHECK_STATUS(rk_module_compile(ctx, "this is not a kernel {", NULL, &m), RK_COMPILE_FAILED);
    CHECK(m == NULL);
    CHECK(rk_last_error()[0] != '\0');
    CHECK_STATUS(rk_module_compile(ctx, NULL, NULL, &m), RK_NULL_ARGUMENT);
    CHECK_STATUS(rk_module_compile(ctx, "", NULL, NULL), RK_NULL_ARGUMENT);
    m = conf_compile_dsl(ctx, kernels);
    rk_function *fn = NULL;
    CHECK_STATUS(rk_module_get_function(m, "fill_valu", &fn), RK_NOT_FOUND);
    CHECK_STATUS(rk_module_get_function(m, NULL, &fn), RK_NULL_ARGUMENT);
    rk_function *a = conf_function(m, "fill_value"), *again = conf_function(m, "fill_value");
    CHECK(a == again); /* owned by the module: the same object */
    CHECK_OK(rk_module_destroy(m));
    CHECK_STATUS(rk_module_destroy(NULL), RK_NULL_ARGUMENT);
    /* Host-compiled kernels are the CPU backend's alone (device.h). */
    rk_host_kernel hk = {.name = "none", .fn = (void (*)(void))conf_pass_now};
    rk_status s = rk_module_from_host_kernels(ctx, &hk, 1, &m);
    if (conf_is(env, "cpu")) {
        CHECK_OK(s);
        CHECK_OK(rk_module_destroy(m));
    } else {
        CHECK_EQ(s, RK_UNSUPPORTED);
    }
    CHECK_OK(rk_context_destroy(ctx));
}

/* sync_threads is a barrier: each block reverses its tile through shared
 * memory. */
static void barrier(const conf_env *env) {
    fixture f = open_fixture(env);
    rk_function *rev = conf_function(f.m, "reverse_blocks");
    enum { BLOCKS = 16, N = BLOCKS * 64 };
    uint32_t in[N], got[N];
    for (uint32_t i = 0; i < N; i++) in[i] = i * 7u + 3u;
    rk_buffer *b = NULL;
    CHECK_OK(rk_buffer_alloc(f.ctx, sizeof in, &b));
    CHECK_OK(rk_copy_to_device(f.ctx, b, 0, in, sizeof in, NULL));
    rk_arg args[] = {RK_ARG_BUF(b)};
    rk_launch_desc d = desc_1d(BLOCKS, args, 1);
    CHECK_OK(rk_launch(rev, &d));
    read_u32(f.ctx, b, got, N);
    for (uint32_t i = 0; i < N; i++) CHECK_EQ(got[i], in[(i / 64) * 64 + 63 - i % 64]);
    CHECK_OK(rk_buffer_free(b));
    close_fixture(&f);
}

static void atomics(const conf_env *env) {
    fixture f = open_fixture(env);
    rk_function *at = conf_function(f.m, "atomics");
    enum { N = 1001 };
    rk_buffer *count = NULL, *high = NULL, *low = NULL, *bits = NULL;
    CHECK_OK(rk_buffer_alloc(f.ctx, 4, &count));
    CHECK_OK(rk_buffer_alloc(f.ctx, 4, &high));
    CHECK_OK(rk_buffer_alloc(f.ctx, 4, &low));
    CHECK_OK(rk_buffer_alloc(f.ctx, (N + 31) / 32 * 4, &bits));
    int32_t start_high = -1, start_low = 1;
    CHECK_OK(rk_copy_to_device(f.ctx, high, 0, &start_high, 4, NULL));
    CHECK_OK(rk_copy_to_device(f.ctx, low, 0, &start_low, 4, NULL));
    rk_arg args[] = {RK_ARG_BUF(count), RK_ARG_BUF(high), RK_ARG_BUF(low), RK_ARG_BUF(bits), RK_ARG_UINT(N)};
    rk_launch_desc d = desc_1d((N + 63) / 64, args, 5);
    for (int round = 0; round < 3; round++) CHECK_OK(rk_launch(at, &d));
    uint32_t c = 0, w[(N + 31) / 32];
    int32_t h = 0, l = 0;
    read_u32(f.ctx, count, &c, 1);
    CHECK_OK(rk_copy_to_host(f.ctx, &h, high, 0, 4, NULL));
    CHECK_OK(rk_copy_to_host(f.ctx, &l, low, 0, 4, NULL));
    CHECK_OK(rk_copy_to_host(f.ctx, w, bits, 0, sizeof w, NULL));
    CHECK_EQ(c, 3 * N);
    CHECK_EQ(h, N - 1);
    CHECK_EQ(l, -(N - 1));
    for (uint32_t i = 0; i < N; i++) CHECK((w[i / 32] >> (i % 32)) & 1u);
    CHECK_OK(rk_buffer_free(count));
    CHECK_OK(rk_buffer_free(high));
    CHECK_OK(rk_buffer_free(low));
    CHECK_OK(rk_buffer_free(bits));
    close_fixture(&f);
}

/* Copies and launches on a stream run in order; two streams do not mix up;
 * work queued on a destroyed stream still completes by the next context
 * synchronize; and the default stream orders as well. */
static void stream_order(const conf_env *env) {
    fixture f = open_fixture(env);
    rk_function *add = conf_function(f.m, "add_one");
    enum { N = 128, ROUNDS = 20 };
    rk_stream *s[2] = {NULL, NULL};
    rk_buffer *b[2] = {NULL, NULL};
    for (int i = 0; i < 2; i++) {
        CHECK_OK(rk_stream_create(f.ctx, &s[i]));
        CHECK_OK(rk_buffer_alloc(f.ctx, N * 4, &b[i]));
    }
    static uint32_t host[2][N], out[2][N];
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < 2; i++) {
            for (uint32_t j = 0; j < N; j++) host[i][j] = (uint32_t)(r * 1000 + i * 100000) + j;
            rk_arg args[] = {RK_ARG_BUF(b[i]), RK_ARG_UINT(N)};
            rk_launch_desc d = desc_1d(N / 64, args, 2);
            d.stream = s[i];
            CHECK_OK(rk_copy_to_device(f.ctx, b[i], 0, host[i], sizeof host[i], s[i]));
            CHECK_OK(rk_launch(add, &d));
            CHECK_OK(rk_launch(add, &d));
            CHECK_OK(rk_copy_to_host(f.ctx, out[i], b[i], 0, sizeof out[i], s[i]));
        }
        for (int i = 0; i < 2; i++) {
            CHECK_OK(rk_stream_synchronize(s[i]));
            for (uint32_t j = 0; j < N; j++) CHECK_EQ(out[i][j], host[i][j] + 2);
        }
    }
    /* queued work outlives its stream's handle */
    rk_arg args[] = {RK_ARG_BUF(b[0]), RK_ARG_UINT(N)};
    rk_launch_desc d = desc_1d(N / 64, args, 2);
    d.stream = s[0];
    for (int r = 0; r < 10; r++) CHECK_OK(rk_launch(add, &d));
    CHECK_OK(rk_stream_destroy(s[0]));
    CHECK_OK(rk_context_synchronize(f.ctx));
    CHECK_OK(rk_copy_to_host(f.ctx, out[0], b[0], 0, sizeof out[0], NULL));
    for (uint32_t j = 0; j < N; j++) CHECK_EQ(out[0][j], host[0][j] + 12);
    /* the default stream (NULL) */
    d.stream = NULL;
    for (int r = 0; r < 5; r++) CHECK_OK(rk_launch(add, &d));
    CHECK_OK(rk_copy_to_host(f.ctx, out[0], b[0], 0, sizeof out[0], NULL));
    CHECK_OK(rk_context_synchronize(f.ctx));
    for (uint32_t j = 0; j < N; j++) CHECK_EQ(out[0][j], host[0][j] + 17);
    CHECK_STATUS(rk_stream_synchronize(NULL), RK_NULL_ARGUMENT);
    CHECK_STATUS(rk_stream_destroy(NULL), RK_NULL_ARGUMENT);
    CHECK_STATUS(rk_stream_create(f.ctx, NULL), RK_NULL_ARGUMENT);
    CHECK_OK(rk_stream_destroy(s[1]));
    CHECK_OK(rk_buffer_free(b[0]));
    CHECK_OK(rk_buffer_free(b[1]));
    close_fixture(&f);
}

static const conf_check launch_checks[] = {
    {"fill_sizes", fill_sizes, CONF_SHARED},
    {"launch_shapes", launch_shapes, CONF_SHARED},
    {"launch_max_block", launch_max_block, CONF_SHARED},
    {"launch_errors", launch_errors, CONF_SHARED},
    {"compile_errors", compile_errors, CONF_SHARED},
    {"barrier", barrier, CONF_SHARED},
    {"atomics", atomics, CONF_SHARED},
    {"stream_order", stream_order, CONF_SHARED},
};
CONF_GROUP(conf_group_device_kernels, "device.kernels", launch_checks);
