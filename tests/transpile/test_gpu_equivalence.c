/* Transpiled kernels on a CUDA GPU give the results of the same sources on
 * the CPU, on random inputs at several sizes, including sizes that no tile
 * divides and several tile/halo configurations:
 *  - global kernels (vector_scale, reduce, features, grid_phases): the CUDA output of the
 *    transpiler through rk_module_compile on the GPU, the DSL source through
 *    rk_module_compile on the CPU backend;
 *  - stencils (laplacian, heat3d, blur): the tiled CUDA kernel against the
 *    CPU driver of dsl_stencil.h;
 *  - the poly_eval handler: called from a small test kernel and as a real
 *    CUDA ring kernel (the transpiled output as its handler_source), against
 *    direct calls on the host; plus the device's struct offsets against the
 *    host's offsetof.
 * Exits 77 (skipped) when no CUDA device can be used. */
#include <limits.h>
#include <math.h>
#include <stddef.h>

#include "cases.h"
#include "check.h"
#include "cpu_examples.h"

#include "poly_handler.c"

static rk_context *gpu, *cpu;
static rk_runtime *gpu_rt, *cpu_rt;
static int compared;

/* GPUs contract a * b + c into one fused multiply-add; the CPU build does
 * not. Differences stay within a few ulps of the operands' magnitude: the
 * comparisons use check_close with a small tolerance. */
#define RK_TEST_SEED 0x243f6a8885a308d3ull
#define RK_TEST_GOT "GPU"
#define RK_TEST_WANT "CPU"
#include "support/numeric.h"

static void check_close_f(const char *what, const float *got, const float *want, size_t n, double tol) {
    double *g = malloc(n * sizeof *g), *w = malloc(n * sizeof *w);
    for (size_t i = 0; i < n; i++) g[i] = got[i], w[i] = want[i];
    check_close(what, g, w, n, tol);
    free(g), free(w);
}

/* The transpiled CUDA for a source and configuration. */
static char *transpile(const char *relative, rk_transpile_kind kind, uint32_t tx, uint32_t ty, uint32_t tz,
                       uint32_t halo, rk_transpiled_kernel *info) {
    tp_case c = {"gpu", relative, kind, {tx, ty, tz}, halo};
    rk_transpile_result *r = tp_case_transpile(&c);
    CHECK(r != NULL);
    if (info) *info = *rk_transpile_kernel(r, 0);
    if (info) info->name = NULL; /* owned by the result */
    char *out = strdup(rk_transpile_output(r, NULL));
    rk_transpile_result_destroy(r);
    return out;
}

static rk_function *function(rk_context *ctx, const char *source, const char *name, rk_module **module) {
    CHECK_OK(rk_module_compile(ctx, source, NULL, module));
    rk_function *f = NULL;
    CHECK_OK(rk_module_get_function(*module, name, &f));
    return f;
}

static rk_buffer *upload(rk_context *ctx, const void *data, size_t size) {
    rk_buffer *b = NULL;
    CHECK_OK(rk_buffer_alloc(ctx, size, &b));
    if (data) CHECK_OK(rk_copy_to_device(ctx, b, 0, data, size, NULL));
    return b;
}

static void download(rk_context *ctx, void *dst, rk_buffer *b, size_t size) {
    CHECK_OK(rk_copy_to_host(ctx, dst, b, 0, size, NULL));
    CHECK_OK(rk_context_synchronize(ctx));
}

static void launch(rk_function *f, rk_dim3 grid, rk_dim3 block, size_t shared, const rk_arg *args, size_t count) {
    rk_launch_desc l = {.grid = grid, .block = block, .shared_memory = shared, .args = args, .arg_count = count};
    CHECK_OK(rk_launch(f, &l));
}

static uint32_t blocks(int n, uint32_t tile) { return (uint32_t)((n + (int)tile - 1) / (int)tile); }

/* ---- global kernels: the GPU against the CPU backend ---------------------------- */

static void vector_scale_case(void) {
    char *dsl = rk_test_read_source("examples/kernels/vector_scale.c");
    char *cuda = transpile("examples/kernels/vector_scale.c", RK_TRANSPILE_GLOBAL, 0, 0, 0, 0, NULL);
    rk_module *gm, *cm;
    rk_function *gf = function(gpu, cuda, "vector_scale", &gm), *cf = function(cpu, dsl, "vector_scale", &cm);
    static const int sizes[] = {1, 100, 256, 1000, 65537};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int n = sizes[s];
        size_t bytes = (size_t)n * sizeof(float);
        float *in = malloc(bytes), *g = malloc(bytes), *c = malloc(bytes);
        for (int i = 0; i < n; i++) in[i] = random_float();
        rk_buffer *gb = upload(gpu, in, bytes), *cb = upload(cpu, in, bytes);
        rk_arg ga[] = {RK_ARG_BUF(gb), RK_ARG_FLOAT(-2.5f), RK_ARG_INT(n)};
        rk_arg ca[] = {RK_ARG_BUF(cb), RK_ARG_FLOAT(-2.5f), RK_ARG_INT(n)};
        launch(gf, RK_DIM3(blocks(n, 128), 1, 1), RK_DIM3(128, 1, 1), 0, ga, 3);
        launch(cf, RK_DIM3(blocks(n, 128), 1, 1), RK_DIM3(128, 1, 1), 0, ca, 3);
        download(gpu, g, gb, bytes);
        download(cpu, c, cb, bytes);
        check_close_f("vector_scale", g, c, (size_t)n, 0);
        rk_buffer_free(gb), rk_buffer_free(cb);
        free(in), free(g), free(c);
    }
    printf("vector_scale: GPU = CPU backend at %zu sizes\n", sizeof sizes / sizeof sizes[0]);
    rk_module_destroy(gm), rk_module_destroy(cm);
    free(dsl), free(cuda);
}

static void reduce_case(void) {
    char *dsl = rk_test_read_source("tests/transpile/cases/reduce.c");
    char *cuda = transpile("tests/transpile/cases/reduce.c", RK_TRANSPILE_GLOBAL, 0, 0, 0, 0, NULL);
    rk_module *gm, *cm;
    rk_function *gf = function(gpu, cuda, "reduce", &gm), *cf = function(cpu, dsl, "reduce", &cm);
    static const int sizes[] = {1, 33, 256, 1000, 5000};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int n = sizes[s], block = 128, grid = (n + block - 1) / block, init = INT_MIN;
        int *in = malloc((size_t)n * sizeof *in), *gs = malloc((size_t)grid * sizeof *gs), *cs = malloc((size_t)grid * sizeof *cs);
        for (int i = 0; i < n; i++) in[i] = (int)(next_random() % 200001) - 100000;
        rk_buffer *gi = upload(gpu, in, (size_t)n * sizeof *in), *ci = upload(cpu, in, (size_t)n * sizeof *in);
        rk_buffer *go = upload(gpu, NULL, (size_t)grid * sizeof *gs), *co = upload(cpu, NULL, (size_t)grid * sizeof *cs);
        rk_buffer *gx = upload(gpu, &init, sizeof init), *cx = upload(cpu, &init, sizeof init);
        rk_arg ga[] = {RK_ARG_BUF(gi), RK_ARG_BUF(go), RK_ARG_BUF(gx), RK_ARG_INT(n)};
        rk_arg ca[] = {RK_ARG_BUF(ci), RK_ARG_BUF(co), RK_ARG_BUF(cx), RK_ARG_INT(n)};
        launch(gf, RK_DIM3((uint32_t)grid, 1, 1), RK_DIM3((uint32_t)block, 1, 1), 0, ga, 4);
        launch(cf, RK_DIM3((uint32_t)grid, 1, 1), RK_DIM3((uint32_t)block, 1, 1), 0, ca, 4);
        int gmax, cmax;
        download(gpu, gs, go, (size_t)grid * sizeof *gs);
        download(cpu, cs, co, (size_t)grid * sizeof *cs);
        download(gpu, &gmax, gx, sizeof gmax);
        download(cpu, &cmax, cx, sizeof cmax);
        for (int b = 0; b < grid; b++) CHECK_EQ(gs[b], cs[b]);
        CHECK_EQ(gmax, cmax);
        compared++;
        rk_buffer_free(gi), rk_buffer_free(ci), rk_buffer_free(go), rk_buffer_free(co), rk_buffer_free(gx), rk_buffer_free(cx);
        free(in), free(gs), free(cs);
    }
    printf("reduce: GPU = CPU backend at %zu sizes\n", sizeof sizes / sizeof sizes[0]);
    rk_module_destroy(gm), rk_module_destroy(cm);
    free(dsl), free(cuda);
}

/* A cooperative launch: grid_sync between phases and a release/acquire flag. */
static void grid_phases_case(void) {
    char *cuda = transpile("tests/transpile/cases/grid_phases.c", RK_TRANSPILE_GLOBAL, 0, 0, 0, 0, NULL);
    rk_module *m;
    rk_function *f = function(gpu, cuda, "grid_phases", &m);
    enum { BLOCKS = 16, ROUNDS = 5 };
    int out[BLOCKS * ROUNDS];
    uint32_t flag = 0;
    rk_buffer *bs = upload(gpu, NULL, BLOCKS * sizeof(int)), *bo = upload(gpu, NULL, sizeof out), *bf = upload(gpu, NULL, sizeof flag);
    rk_arg a[] = {RK_ARG_BUF(bs), RK_ARG_BUF(bo), RK_ARG_BUF(bf), RK_ARG_INT(ROUNDS)};
    rk_launch_desc l = {.grid = RK_DIM3(BLOCKS, 1, 1), .block = RK_DIM3(64, 1, 1), .args = a, .arg_count = 4,
                        .cooperative = true};
    CHECK_OK(rk_launch(f, &l));
    download(gpu, out, bo, sizeof out);
    download(gpu, &flag, bf, sizeof flag);
    for (int b = 0; b < BLOCKS; b++)
        for (int r = 0; r < ROUNDS; r++) CHECK_EQ(out[b * ROUNDS + r], ((b + 1) % BLOCKS) * 10 + r);
    CHECK_EQ(flag, ROUNDS);
    compared++;
    printf("grid_phases: %d blocks x %d rounds of grid_sync, as the CPU backend computes it\n", BLOCKS, ROUNDS);
    rk_buffer_free(bs), rk_buffer_free(bo), rk_buffer_free(bf);
    rk_module_destroy(m);
    free(cuda);
}

/* The features case: structs, a const table, helpers, switch, shared memory,
 * barriers, warp shuffles, atomics and dynamic shared memory. */
typedef struct Particle {
    float pos[3];
    float mass;
    int32_t kind;
    uint8_t flags;
    double energy;
} Particle;
struct Stats {
    int32_t counts[4];
    uint64_t total;
    float max_energy;
};

static void features_case(void) {
    char *dsl = rk_test_read_source("tests/transpile/cases/features.c");
    char *cuda = transpile("tests/transpile/cases/features.c", RK_TRANSPILE_GLOBAL, 0, 0, 0, 0, NULL);
    rk_module *gm, *cm;
    rk_function *gf = function(gpu, cuda, "features", &gm), *cf = function(cpu, dsl, "features", &cm);
    int n = 1000, block = 256, grid = (n + block - 1) / block;
    size_t pbytes = (size_t)n * sizeof(Particle), obytes = (size_t)(n + block / 32) * sizeof(float);
    Particle *ps = calloc((size_t)n, sizeof *ps), *gp = malloc(pbytes), *cp = malloc(pbytes);
    static const int kinds[] = {0, 4, 5, 9};
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++) ps[i].pos[k] = random_float();
        ps[i].mass = (float)(next_random() % 300) / 100.0f;
        ps[i].kind = kinds[next_random() % 4];
    }
    struct Stats zero = {0}, gst, cst;
    float *gout = malloc(obytes), *cout = malloc(obytes);
    rk_buffer *gpb = upload(gpu, ps, pbytes), *cpb = upload(cpu, ps, pbytes);
    rk_buffer *gsb = upload(gpu, &zero, sizeof zero), *csb = upload(cpu, &zero, sizeof zero);
    rk_buffer *gob = upload(gpu, NULL, obytes), *cob = upload(cpu, NULL, obytes);
    rk_arg ga[] = {RK_ARG_BUF(gpb), RK_ARG_BUF(gsb), RK_ARG_BUF(gob), RK_ARG_INT(n)};
    rk_arg ca[] = {RK_ARG_BUF(cpb), RK_ARG_BUF(csb), RK_ARG_BUF(cob), RK_ARG_INT(n)};
    size_t dyn = (size_t)block * sizeof(float);
    launch(gf, RK_DIM3((uint32_t)grid, 1, 1), RK_DIM3((uint32_t)block, 1, 1), dyn, ga, 4);
    launch(cf, RK_DIM3((uint32_t)grid, 1, 1), RK_DIM3((uint32_t)block, 1, 1), dyn, ca, 4);
    download(gpu, gp, gpb, pbytes);
    download(cpu, cp, cpb, pbytes);
    download(gpu, &gst, gsb, sizeof gst);
    download(cpu, &cst, csb, sizeof cst);
    download(gpu, gout, gob, obytes);
    download(cpu, cout, cob, obytes);
    for (int k = 0; k < 4; k++) CHECK_EQ(gst.counts[k], cst.counts[k]);
    CHECK_U64_EQ(gst.total, cst.total);
    for (int i = 0; i < n; i++) {
        CHECK_EQ(gp[i].flags, cp[i].flags);
        CHECK_FLOAT_NEAR(gp[i].energy, cp[i].energy, 1e-5 * (fabs(cp[i].energy) + 1.0));
    }
    /* Block sums (a tree in shared memory) and warp sums (added atomically in any order). */
    check_close_f("features", gout, cout, (size_t)(n + block / 32), 1e-4);
    printf("features: GPU = CPU backend (structs, switch, shared memory, shuffles, atomics)\n");
    rk_buffer_free(gpb), rk_buffer_free(cpb), rk_buffer_free(gsb), rk_buffer_free(csb), rk_buffer_free(gob), rk_buffer_free(cob);
    rk_module_destroy(gm), rk_module_destroy(cm);
    free(ps), free(gp), free(cp), free(gout), free(cout), free(dsl), free(cuda);
}

/* ---- stencils: the tiled CUDA kernel against the CPU driver --------------------- */

static void laplacian_case(uint32_t tx, uint32_t ty, uint32_t halo) {
    rk_transpiled_kernel k;
    char *cuda = transpile("examples/kernels/laplacian.c", RK_TRANSPILE_STENCIL, tx, ty, 0, halo, &k);
    rk_module *m;
    rk_function *f = function(gpu, cuda, "laplacian", &m);
    static const int sizes[][2] = {{1, 1}, {5, 3}, {16, 16}, {17, 31}, {100, 37}, {256, 256}, {1000, 3}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int nx = sizes[s][0], ny = sizes[s][1];
        size_t n = (size_t)nx * ny, bytes = n * sizeof(float);
        float *in = malloc(bytes), *g = malloc(bytes), *c = malloc(bytes);
        for (size_t i = 0; i < n; i++) in[i] = random_float();
        rk_buffer *bi = upload(gpu, in, bytes), *bo = upload(gpu, NULL, bytes);
        rk_arg a[] = {RK_ARG_BUF(bi), RK_ARG_BUF(bo), RK_ARG_INT(nx), RK_ARG_INT(ny)};
        launch(f, RK_DIM3(blocks(nx, k.tile[0]), blocks(ny, k.tile[1]), 1), RK_DIM3(k.tile[0], k.tile[1], 1), 0, a, 4);
        download(gpu, g, bo, bytes);
        cpu_laplacian(in, c, nx, ny);
        check_close_f("laplacian", g, c, n, 1e-5);
        rk_buffer_free(bi), rk_buffer_free(bo);
        free(in), free(g), free(c);
    }
    printf("laplacian, tile %ux%u halo %u: GPU = CPU driver at %zu sizes\n", k.tile[0], k.tile[1], k.halo,
           sizeof sizes / sizeof sizes[0]);
    rk_module_destroy(m);
    free(cuda);
}

static void heat3d_case(uint32_t tx, uint32_t ty, uint32_t tz) {
    rk_transpiled_kernel k;
    char *cuda = transpile("examples/kernels/heat3d.c", RK_TRANSPILE_STENCIL, tx, ty, tz, 0, &k);
    rk_module *m;
    rk_function *f = function(gpu, cuda, "heat3d", &m);
    static const int sizes[][3] = {{1, 1, 1}, {9, 7, 5}, {8, 8, 8}, {33, 17, 9}, {64, 64, 16}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int nx = sizes[s][0], ny = sizes[s][1], nz = sizes[s][2];
        size_t n = (size_t)nx * ny * nz, bytes = n * sizeof(float);
        float *in = malloc(bytes), *g = malloc(bytes), *c = malloc(bytes);
        for (size_t i = 0; i < n; i++) in[i] = random_float();
        rk_buffer *bi = upload(gpu, in, bytes), *bo = upload(gpu, NULL, bytes);
        rk_arg a[] = {RK_ARG_BUF(bi), RK_ARG_BUF(bo), RK_ARG_FLOAT(0.125f), RK_ARG_INT(nx), RK_ARG_INT(ny), RK_ARG_INT(nz)};
        launch(f, RK_DIM3(blocks(nx, k.tile[0]), blocks(ny, k.tile[1]), blocks(nz, k.tile[2])),
               RK_DIM3(k.tile[0], k.tile[1], k.tile[2]), 0, a, 6);
        download(gpu, g, bo, bytes);
        cpu_heat3d(in, c, 0.125f, nx, ny, nz);
        check_close_f("heat3d", g, c, n, 1e-5);
        rk_buffer_free(bi), rk_buffer_free(bo);
        free(in), free(g), free(c);
    }
    printf("heat3d, tile %ux%ux%u: GPU = CPU driver at %zu sizes\n", k.tile[0], k.tile[1], k.tile[2],
           sizeof sizes / sizeof sizes[0]);
    rk_module_destroy(m);
    free(cuda);
}

static void blur_case(void) {
    rk_transpiled_kernel k;
    char *cuda = transpile("tests/transpile/cases/blur.c", RK_TRANSPILE_STENCIL, 16, 8, 0, 0, &k);
    rk_module *m;
    rk_function *f = function(gpu, cuda, "blur", &m);
    static const int sizes[][2] = {{1, 1}, {3, 2}, {19, 23}, {64, 9}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int nx = sizes[s][0], ny = sizes[s][1];
        size_t n = (size_t)nx * ny, bytes = n * sizeof(double);
        double *a = malloc(bytes), *b = malloc(bytes), *g = malloc(bytes), *c = malloc(bytes);
        for (size_t i = 0; i < n; i++) a[i] = random_float(), b[i] = random_float();
        rk_buffer *ba = upload(gpu, a, bytes), *bb = upload(gpu, b, bytes), *bo = upload(gpu, NULL, bytes);
        rk_arg args[] = {RK_ARG_BUF(ba), RK_ARG_BUF(bb), RK_ARG_BUF(bo), RK_ARG_DOUBLE(0.3), RK_ARG_INT(nx), RK_ARG_INT(ny)};
        launch(f, RK_DIM3(blocks(nx, k.tile[0]), blocks(ny, k.tile[1]), 1), RK_DIM3(k.tile[0], k.tile[1], 1), 0, args, 6);
        download(gpu, g, bo, bytes);
        cpu_blur(a, b, c, 0.3, nx, ny);
        check_close("blur", g, c, n, 1e-12);
        rk_buffer_free(ba), rk_buffer_free(bb), rk_buffer_free(bo);
        free(a), free(b), free(g), free(c);
    }
    printf("blur (double, two tiles, halo %u): GPU = CPU driver at %zu sizes\n", k.halo, sizeof sizes / sizeof sizes[0]);
    rk_module_destroy(m);
    free(cuda);
}

/* ---- the handler ------------------------------------------------------------------- */

static PolyRequest make_request(uint32_t id) {
    PolyRequest r = {.id = id, .degree = next_random() % 10, .x = random_float() / 5.0f};
    for (int i = 0; i <= POLY_MAX_DEGREE; i++) r.coeff[i] = random_float();
    return r;
}

static void check_reply(const PolyReply *got, int got_status, const PolyReply *want, int want_status) {
    CHECK_EQ(got_status, want_status);
    CHECK_EQ(got->id, want->id);
    CHECK_EQ(got->status, want->status);
    double tol_v = 1e-4 * (fabs(want->value) + 1.0), tol_s = 1e-4 * (fabs(want->slope) + 1.0);
    CHECK_FLOAT_NEAR(got->value, want->value, tol_v);
    CHECK_FLOAT_NEAR(got->slope, want->slope, tol_s);
}

static const char HARNESS[] =
    "\nextern \"C\" __global__ void rk_test_poly(const PolyRequest *req, PolyReply *rep, PolyState *state,\n"
    "                                         int *status, int n) {\n"
    "    int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);\n"
    "    if (i < n) status[i] = poly_eval(&req[i], &rep[i], state);\n"
    "}\n"
    "#define OFF(s, m) ((unsigned long long)((const char *)&s.m - (const char *)&s))\n"
    "extern \"C\" __global__ void rk_test_layout(unsigned long long *out) {\n"
    "    PolyRequest q; PolyReply p; PolyState s;\n"
    "    out[0] = OFF(q, id); out[1] = OFF(q, degree); out[2] = OFF(q, x); out[3] = OFF(q, coeff);\n"
    "    out[4] = OFF(p, id); out[5] = OFF(p, value); out[6] = OFF(p, slope); out[7] = OFF(p, status);\n"
    "    out[8] = OFF(s, handled); out[9] = OFF(s, id_sum);\n"
    "}\n";

static void handler_case(void) {
    rk_transpiled_kernel k;
    char *cuda = transpile("examples/kernels/poly_handler.c", RK_TRANSPILE_HANDLER, 0, 0, 0, 0, &k);
    CHECK_EQ(k.request_size, sizeof(PolyRequest));
    CHECK_EQ(k.reply_size, sizeof(PolyReply));
    CHECK_EQ(k.state_size, sizeof(PolyState));
    size_t len = strlen(cuda);
    char *source = malloc(len + sizeof HARNESS);
    memcpy(source, cuda, len);
    memcpy(source + len, HARNESS, sizeof HARNESS);

    /* Struct offsets on the device = the host's. */
    rk_module *m;
    rk_function *lf = function(gpu, source, "rk_test_layout", &m);
    unsigned long long off[10], want[10] = {
        offsetof(PolyRequest, id), offsetof(PolyRequest, degree), offsetof(PolyRequest, x), offsetof(PolyRequest, coeff),
        offsetof(PolyReply, id),   offsetof(PolyReply, value),    offsetof(PolyReply, slope), offsetof(PolyReply, status),
        offsetof(PolyState, handled), offsetof(PolyState, id_sum)};
    rk_buffer *bl = upload(gpu, NULL, sizeof off);
    rk_arg la[] = {RK_ARG_BUF(bl)};
    launch(lf, RK_DIM3(1, 1, 1), RK_DIM3(1, 1, 1), 0, la, 1);
    download(gpu, off, bl, sizeof off);
    for (int i = 0; i < 10; i++) CHECK_U64_EQ(off[i], want[i]);
    rk_buffer_free(bl);

    /* Many lanes at once against direct calls on the host. */
    enum { N = 3000 };
    PolyRequest *reqs = malloc(N * sizeof *reqs);
    PolyReply *want_rep = malloc(N * sizeof *want_rep), *got_rep = malloc(N * sizeof *got_rep);
    int *want_status = malloc(N * sizeof(int)), *got_status = malloc(N * sizeof(int));
    PolyState want_state = {0}, got_state = {0};
    for (int i = 0; i < N; i++) {
        reqs[i] = make_request((uint32_t)i * 7u);
        want_status[i] = poly_eval(&reqs[i], &want_rep[i], &want_state);
    }
    rk_function *hf;
    CHECK_OK(rk_module_get_function(m, "rk_test_poly", &hf));
    rk_buffer *bq = upload(gpu, reqs, N * sizeof *reqs), *bp = upload(gpu, NULL, N * sizeof *got_rep);
    rk_buffer *bs = upload(gpu, &got_state, sizeof got_state), *bst = upload(gpu, NULL, N * sizeof(int));
    rk_arg ha[] = {RK_ARG_BUF(bq), RK_ARG_BUF(bp), RK_ARG_BUF(bs), RK_ARG_BUF(bst), RK_ARG_INT(N)};
    launch(hf, RK_DIM3(blocks(N, 128), 1, 1), RK_DIM3(128, 1, 1), 0, ha, 5);
    download(gpu, got_rep, bp, N * sizeof *got_rep);
    download(gpu, got_status, bst, N * sizeof(int));
    download(gpu, &got_state, bs, sizeof got_state);
    for (int i = 0; i < N; i++) check_reply(&got_rep[i], got_status[i], &want_rep[i], want_status[i]);
    CHECK_U64_EQ(got_state.handled, want_state.handled);
    CHECK_U64_EQ(got_state.id_sum, want_state.id_sum);
    compared++;
    printf("poly_eval from a test kernel: %d replies and the atomic state = direct calls; offsets = host's\n", N);
    rk_buffer_free(bq), rk_buffer_free(bp), rk_buffer_free(bs), rk_buffer_free(bst);
    rk_module_destroy(m);

    /* As a persistent CUDA ring kernel: the transpiled output is the handler source. */
    rk_kernel_desc kd = {.name = "poly", .handler_source = cuda, .handler_name = "poly_eval",
                         .message_size = sizeof(PolyRequest), .reply_size = sizeof(PolyReply),
                         .state_size = sizeof(PolyState), .queue_capacity = 1024};
    rk_kernel *ring = NULL;
    CHECK_OK(rk_kernel_launch(gpu_rt, &kd, &ring));
    CHECK_OK(rk_kernel_activate(ring));
    int sent = 0, received = 0;
    uint64_t first_id = 0;
    while (received < N) {
        if (sent < N) {
            uint64_t id;
            rk_status s = rk_kernel_send(ring, &reqs[sent], sizeof reqs[sent], RK_NO_WAIT, &id);
            if (s == RK_OK) {
                if (sent == 0) first_id = id;
                sent++;
                continue;
            }
            CHECK_STATUS(s, RK_WOULD_BLOCK);
        }
        PolyReply reply;
        rk_reply_info info;
        CHECK_OK(rk_kernel_receive(ring, &reply, sizeof reply, &info, 10000000000ull));
        uint64_t idx = info.id - first_id;
        CHECK_LT(idx, N);
        check_reply(&reply, info.status, &want_rep[idx], want_status[idx]);
        received++;
    }
    CHECK_OK(rk_kernel_terminate(ring, 10000000000ull));
    CHECK_OK(rk_kernel_destroy(ring));
    compared++;
    printf("poly_eval as a CUDA ring kernel (transpiled source in the ring template): %d replies match\n", N);
    free(reqs), free(want_rep), free(got_rep), free(want_status), free(got_status), free(source), free(cuda);
}

int main(void) {
    const rk_backend *backend;
    uint32_t device;
    if (rk_select_device("cuda", &backend, &device) != RK_OK) RK_SKIP("no CUDA device: %s", rk_last_error());
    rk_runtime_desc gd = {.backend = "cuda"}, cd = {.backend = "cpu"};
    if (rk_runtime_create(&gd, &gpu_rt) != RK_OK) RK_SKIP("cannot open the CUDA device: %s", rk_last_error());
    CHECK_OK(rk_runtime_create(&cd, &cpu_rt));
    gpu = rk_runtime_context(gpu_rt);
    cpu = rk_runtime_context(cpu_rt);
    rk_device_info info;
    CHECK_OK(rk_context_device_info(gpu, &info));
    printf("device: %s (%s, driver %s)\n", info.name, info.architecture, info.driver);

    vector_scale_case();
    reduce_case();
    features_case();
    grid_phases_case();
    laplacian_case(0, 0, 0);
    laplacian_case(8, 4, 2);
    laplacian_case(32, 8, 0);
    heat3d_case(0, 0, 0);
    heat3d_case(16, 8, 4);
    blur_case();
    handler_case();

    CHECK_OK(rk_runtime_destroy(gpu_rt));
    CHECK_OK(rk_runtime_destroy(cpu_rt));
    printf("GPU equivalence: %d comparisons passed\n", compared);
    return 0;
}
