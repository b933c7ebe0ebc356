/* The device layer on WebGPU: what is WebGPU's own (WGSL compile errors,
 * the binding convention, arguments that do not fit the bindings). What
 * every backend promises (memory, copies, launch shapes, streams) is in
 * tests/conformance. */
#include <math.h>

#include "webgpu_util.h"

static const char vector_scale_wgsl[] =
    "struct Params { scale: f32, n: i32 }\n"
    "@group(0) @binding(0) var<storage, read_write> data: array<f32>;\n"
    "@group(0) @binding(1) var<uniform> p: Params;\n"
    "@compute @workgroup_size(64)\n"
    "fn vector_scale(@builtin(global_invocation_id) gid: vec3<u32>) {\n"
    "    let idx = i32(gid.x);\n"
    "    if (idx >= p.n) { return; }\n"
    "    data[idx] = data[idx] * p.scale;\n"
    "}\n";

static void test_info(rk_context *ctx) {
    rk_device_info info;
    CHECK_OK(rk_context_device_info(ctx, &info));
    CHECK(strcmp(info.backend, "webgpu") == 0);
    CHECK(info.name[0] != '\0');
    CHECK(info.architecture[0] != '\0');
    CHECK(strcmp(info.architecture, "null") != 0); /* Dawn's Null adapter is refused */
    CHECK_GT(info.max_threads_per_block, 0);
    CHECK_GE(info.max_block_dim[0], 64);
    CHECK_GT(info.max_grid_dim[0], 0);
    CHECK(!info.persistent_kernels);
    printf("webgpu device: %s | vendor %s | %s | driver %s\n", info.name, info.vendor, info.architecture,
           info.driver);
}

static void test_compile_errors(rk_context *ctx) {
    rk_module *m = NULL;
    /* An undefined identifier on line 3: Dawn's (Tint's) message comes back. */
    const char *bad = "@group(0) @binding(0) var<storage, read_write> d: array<f32>;\n"
                      "@compute @workgroup_size(1) fn main() {\n"
                      "    d[0] = not_declared;\n"
                      "}\n";
    CHECK_STATUS(rk_module_compile(ctx, bad, NULL, &m), RK_COMPILE_FAILED);
    CHECK_STR_CONTAINS(rk_last_error(), "not_declared");
    CHECK_STR_CONTAINS(rk_last_error(), "3:");
    CHECK(m == NULL);
    CHECK_STATUS(rk_module_compile(ctx, "fn f() -> i32 { return 1 }", NULL, &m), RK_COMPILE_FAILED);
    CHECK_STATUS(rk_module_compile(ctx, "fn helper() {}\n", NULL, &m), RK_COMPILE_FAILED);
    CHECK_STR_CONTAINS(rk_last_error(), "no @compute entry point");
    const char *dir = "/tmp";
    rk_compile_options opts = {.include_dirs = &dir, .include_dir_count = 1};
    CHECK_STATUS(rk_module_compile(ctx, vector_scale_wgsl, &opts, &m), RK_UNSUPPORTED);

    CHECK_OK(rk_module_compile(ctx, vector_scale_wgsl, NULL, &m));
    rk_function *f = NULL;
    CHECK_STATUS(rk_module_get_function(m, "vector_scal", &f), RK_NOT_FOUND);
    CHECK_STR_CONTAINS(rk_last_error(), "vector_scale");
    CHECK_OK(rk_module_destroy(m));
}

static void test_vector_scale(rk_context *ctx) {
    enum { N = 1000 };
    float host[N], expect[N], got[N];
    for (int i = 0; i < N; i++) host[i] = (float)i * 0.37f - 50.0f;
    const float scale = 2.5f;
    for (int i = 0; i < N; i++) expect[i] = host[i] * scale;
    rk_module *m = NULL;
    rk_function *f = NULL;
    rk_buffer *buf = NULL;
    CHECK_OK(rk_module_compile(ctx, vector_scale_wgsl, NULL, &m));
    CHECK_OK(rk_module_get_function(m, "vector_scale", &f));
    CHECK_OK(rk_buffer_alloc(ctx, sizeof host, &buf));
    CHECK_OK(rk_copy_to_device(ctx, buf, 0, host, sizeof host, NULL));
    rk_arg args[] = {RK_ARG_BUF(buf), RK_ARG_FLOAT(scale), RK_ARG_INT(N)};
    rk_launch_desc d = {.grid = RK_DIM3((N + 63) / 64, 1, 1), .block = RK_DIM3(64, 1, 1), .args = args,
                        .arg_count = 3};
    CHECK_OK(rk_launch(f, &d));
    CHECK_OK(rk_context_synchronize(ctx));
    CHECK_OK(rk_copy_to_host(ctx, got, buf, 0, sizeof got, NULL));
    for (int i = 0; i < N; i++) CHECK_FLOAT_NEAR(got[i], expect[i], 0.0);

    /* twice more on a stream: launches are ordered */
    rk_stream *st = NULL;
    CHECK_OK(rk_stream_create(ctx, &st));
    d.stream = st;
    CHECK_OK(rk_launch(f, &d));
    args[1] = RK_ARG_FLOAT(-1.0f);
    CHECK_OK(rk_launch(f, &d));
    CHECK_OK(rk_stream_synchronize(st));
    CHECK_OK(rk_copy_to_host(ctx, got, buf, 0, sizeof got, NULL));
    for (int i = 0; i < N; i++) CHECK_FLOAT_NEAR(got[i], -(expect[i] * scale), 0.0);

    /* bad launch configurations are refused before anything runs */
    d.stream = NULL;
    d.block = RK_DIM3(32, 1, 1);
    CHECK_STATUS(rk_launch(f, &d), RK_BAD_LAUNCH_CONFIG);
    CHECK_STR_CONTAINS(rk_last_error(), "@workgroup_size(64, 1, 1)");
    d.block = RK_DIM3(64, 2, 1);
    CHECK_STATUS(rk_launch(f, &d), RK_BAD_LAUNCH_CONFIG);
    d.block = RK_DIM3(64, 1, 1);
    d.grid = RK_DIM3(0, 1, 1);
    CHECK_STATUS(rk_launch(f, &d), RK_BAD_LAUNCH_CONFIG);
    d.grid = RK_DIM3(UINT32_MAX, 1, 1);
    CHECK_STATUS(rk_launch(f, &d), RK_BAD_LAUNCH_CONFIG);
    d.grid = RK_DIM3(16, 1, 1);
    d.shared_memory = 1024;
    CHECK_STATUS(rk_launch(f, &d), RK_BAD_LAUNCH_CONFIG);
    d.shared_memory = 0;
    /* arguments that do not fit the shader's bindings */
    rk_arg wrong_type[] = {RK_ARG_BUF(buf), RK_ARG_INT(2), RK_ARG_INT(N)};
    d.args = wrong_type;
    CHECK_STATUS(rk_launch(f, &d), RK_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(rk_last_error(), "f32");
    rk_arg too_few[] = {RK_ARG_BUF(buf), RK_ARG_FLOAT(2)};
    d.args = too_few;
    d.arg_count = 2;
    CHECK_STATUS(rk_launch(f, &d), RK_INVALID_ARGUMENT);
    rk_arg no_buffer[] = {RK_ARG_FLOAT(2), RK_ARG_INT(N)};
    d.args = no_buffer;
    CHECK_STATUS(rk_launch(f, &d), RK_INVALID_ARGUMENT);
    rk_arg dbl[] = {RK_ARG_BUF(buf), RK_ARG_DOUBLE(2), RK_ARG_INT(N)};
    d.args = dbl;
    d.arg_count = 3;
    CHECK(rk_launch(f, &d) != RK_OK);
    /* nothing ran: the data is as before */
    CHECK_OK(rk_context_synchronize(ctx));
    CHECK_OK(rk_copy_to_host(ctx, got, buf, 0, sizeof got, NULL));
    for (int i = 0; i < N; i++) CHECK_FLOAT_NEAR(got[i], -(expect[i] * scale), 0.0);

    CHECK_OK(rk_stream_destroy(st));
    CHECK_OK(rk_buffer_free(buf));
    CHECK_OK(rk_module_destroy(m));
}

/* 64-bit scalars, 2-D workgroups, several entry points in one module, a
 * declared-but-unused binding, a define, and a workgroup size from a const. */
static void test_convention_details(rk_context *ctx) {
    const char *src = "const WG = 4u;\n"
                      "struct P { big: vec2<u32>, k: u32 }\n"
                      "@group(0) @binding(0) var<storage, read_write> out: array<u32>;\n"
                      "@group(0) @binding(1) var<storage, read> unused_in: array<u32>;\n"
                      "@group(0) @binding(2) var<uniform> p: P;\n"
                      "@compute @workgroup_size(WG, 2)\n"
                      "fn grid2d(@builtin(global_invocation_id) g: vec3<u32>,\n"
                      "          @builtin(num_workgroups) nw: vec3<u32>) {\n"
                      "    let w = nw.x * WG;\n"
                      "    out[g.y * w + g.x] = g.y * 100u + g.x + p.k + OFFSET;\n"
                      "}\n"
                      "@compute @workgroup_size(1)\n"
                      "fn words() { out[0] = p.big.x; out[1] = p.big.y; out[2] = p.k; }\n";
    const char *defs[] = {"OFFSET=1000u"};
    rk_compile_options opts = {.defines = defs, .define_count = 1};
    rk_module *m = NULL;
    rk_function *g = NULL, *w = NULL;
    CHECK_OK(rk_module_compile(ctx, src, &opts, &m));
    CHECK_OK(rk_module_get_function(m, "grid2d", &g));
    CHECK_OK(rk_module_get_function(m, "words", &w));
    rk_buffer *out = NULL, *in = NULL;
    CHECK_OK(rk_buffer_alloc(ctx, 64 * 4, &out));
    CHECK_OK(rk_buffer_alloc(ctx, 16, &in));
    rk_arg args[] = {RK_ARG_BUF(out), RK_ARG_BUF(in), RK_ARG_ULONG(0x1122334455667788ull), RK_ARG_UINT(7)};
    rk_launch_desc d = {.grid = RK_DIM3(2, 3, 1), .block = RK_DIM3(4, 2, 1), .args = args, .arg_count = 4};
    CHECK_OK(rk_launch(g, &d));
    uint32_t got[64];
    CHECK_OK(rk_copy_to_host(ctx, got, out, 0, sizeof got, NULL));
    for (uint32_t y = 0; y < 6; y++)
        for (uint32_t x = 0; x < 8; x++) CHECK_EQ(got[y * 8 + x], y * 100 + x + 7 + 1000);
    d.grid = RK_DIM3(1, 1, 1);
    d.block = RK_DIM3(1, 1, 1);
    CHECK_OK(rk_launch(w, &d));
    CHECK_OK(rk_copy_to_host(ctx, got, out, 0, 12, NULL));
    CHECK_EQ(got[0], 0x55667788u);
    CHECK_EQ(got[1], 0x11223344u);
    CHECK_EQ(got[2], 7);
    CHECK_OK(rk_buffer_free(out));
    CHECK_OK(rk_buffer_free(in));
    CHECK_OK(rk_module_destroy(m));
}

/* A workgroup size that names override constants takes the launch's block:
 * one pipeline per block, kept; a literal dimension beside them still fixes
 * its part of the block; a block the device cannot run is refused. A struct
 * by value binds as storage at the next buffer binding. */
static void test_override_blocks(rk_context *ctx) {
    const char *src = "override bx: u32 = 64u;\n"
                      "override by: u32;\n"
                      "struct S { a: f32, n: i32 }\n"
                      "@group(0) @binding(0) var<storage, read_write> out: array<u32>;\n"
                      "@group(0) @binding(1) var<storage, read> s: S;\n"
                      "@compute @workgroup_size(bx, by, 1)\n"
                      "fn fill(@builtin(local_invocation_index) l: u32, @builtin(workgroup_id) w: vec3<u32>) {\n"
                      "    let i = w.x * bx * by + l;\n"
                      "    out[i] = i * 10u + bx * 1000u + by * 100000u + u32(s.n) + u32(s.a);\n"
                      "}\n";
    rk_module *m = NULL;
    rk_function *f = NULL;
    CHECK_OK(rk_module_compile(ctx, src, NULL, &m));
    CHECK_OK(rk_module_get_function(m, "fill", &f));
    rk_buffer *out = NULL;
    enum { MAX = 1024 };
    CHECK_OK(rk_buffer_alloc(ctx, MAX * 4, &out));
    struct { float a; int32_t n; } sv = {2.0f, 5};
    rk_arg args[] = {RK_ARG_BUF(out), RK_ARG_STRUCT_OF(&sv, "fi")};
    static uint32_t got[MAX];
    const rk_dim3 blocks[] = {RK_DIM3(128, 1, 1), RK_DIM3(256, 1, 1), RK_DIM3(16, 16, 1), RK_DIM3(128, 1, 1)};
    for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++) {
        rk_launch_desc d = {.grid = RK_DIM3(3, 1, 1), .block = blocks[b], .args = args, .arg_count = 2};
        CHECK_OK(rk_launch(f, &d));
        uint32_t n = 3 * blocks[b].x * blocks[b].y;
        CHECK_OK(rk_copy_to_host(ctx, got, out, 0, n * 4, NULL));
        for (uint32_t i = 0; i < n; i++) CHECK_EQ(got[i], i * 10u + blocks[b].x * 1000u + blocks[b].y * 100000u + 7u);
    }
    rk_launch_desc d = {.grid = RK_DIM3(1, 1, 1), .block = RK_DIM3(64, 1, 2), .args = args, .arg_count = 2};
    CHECK_STATUS(rk_launch(f, &d), RK_BAD_LAUNCH_CONFIG);
    CHECK_STR_CONTAINS(rk_last_error(), "in z");
    d.block = RK_DIM3(2048, 1, 1);
    CHECK_STATUS(rk_launch(f, &d), RK_BAD_LAUNCH_CONFIG);
    CHECK_OK(rk_buffer_free(out));
    CHECK_OK(rk_module_destroy(m));
}

int main(void) {
    rk_context *ctx = webgpu_open_or_skip();
    test_override_blocks(ctx);
    test_info(ctx);
    test_compile_errors(ctx);
    test_vector_scale(ctx);
    test_convention_details(ctx);
    CHECK_OK(rk_context_destroy(ctx));
    printf("webgpu device layer: all checks passed\n");
    return 0;
}
