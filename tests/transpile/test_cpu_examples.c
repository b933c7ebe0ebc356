/* The example sources on the CPU, against plain C references at several
 * sizes (including ones that no tile divides):
 *  - the stencils (laplacian, heat3d, and the blur case) as host C through
 *    the CPU driver of dsl_stencil.h;
 *  - vector_scale and the reduce case compiled by the CPU backend
 *    (rk_module_compile on a "cpu" context) and launched;
 *  - the poly_eval handler called directly, and as a ring kernel on the CPU
 *    backend with its source as handler_source. */
#include <limits.h>
#include <math.h>

#include "cases.h"
#include "check.h"
#include "cpu_examples.h"

#include "poly_handler.c"
#include "ringkernel/dsl_stencil.h"

#define RK_TEST_SEED 0x9e3779b97f4a7c15ull
#include "support/numeric.h"

static void check_close_f(const char *what, const float *got, const float *want, size_t n, double tol) {
    double *g = malloc(n * sizeof *g), *w = malloc(n * sizeof *w);
    for (size_t i = 0; i < n; i++) {
        g[i] = got[i];
        w[i] = want[i];
    }
    check_close(what, g, w, n, tol);
    free(g);
    free(w);
}

static void stencils(void) {
    static const int sizes2[][2] = {{1, 1}, {2, 3}, {16, 16}, {17, 5}, {33, 47}, {100, 3}};
    for (size_t s = 0; s < sizeof sizes2 / sizeof sizes2[0]; s++) {
        int nx = sizes2[s][0], ny = sizes2[s][1];
        size_t n = (size_t)nx * ny;
        float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out), *ref = malloc(n * sizeof *ref);
        for (size_t i = 0; i < n; i++) in[i] = random_float();
        cpu_laplacian(in, out, nx, ny);
        ref_laplacian(in, ref, nx, ny);
        check_close_f("laplacian", out, ref, n, 1e-6);
        double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *o = malloc(n * sizeof *o), *r = malloc(n * sizeof *r);
        for (size_t i = 0; i < n; i++) {
            a[i] = random_float();
            b[i] = random_float();
        }
        cpu_blur(a, b, o, 0.25, nx, ny);
        ref_blur(a, b, r, 0.25, nx, ny);
        check_close("blur", o, r, n, 1e-12);
        printf("laplacian and blur %dx%d: match the references\n", nx, ny);
        free(in), free(out), free(ref), free(a), free(b), free(o), free(r);
    }
    static const int sizes3[][3] = {{1, 1, 1}, {8, 8, 8}, {9, 7, 5}, {20, 3, 11}};
    for (size_t s = 0; s < sizeof sizes3 / sizeof sizes3[0]; s++) {
        int nx = sizes3[s][0], ny = sizes3[s][1], nz = sizes3[s][2];
        size_t n = (size_t)nx * ny * nz;
        float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out), *ref = malloc(n * sizeof *ref);
        for (size_t i = 0; i < n; i++) in[i] = random_float();
        cpu_heat3d(in, out, 0.1f, nx, ny, nz);
        ref_heat3d(in, ref, 0.1f, nx, ny, nz);
        check_close_f("heat3d", out, ref, n, 1e-6);
        printf("heat3d %dx%dx%d: matches the reference\n", nx, ny, nz);
        free(in), free(out), free(ref);
    }
    /* The driver visits nothing for an empty grid. */
    int visits = 0;
    rk_stencil_for_each(p, 0, 5, 1) visits += p.x + 1;
    CHECK_EQ(visits, 0);
}

static void backend_kernels(rk_context *ctx) {
    char *src = rk_test_read_source("examples/kernels/vector_scale.c");
    rk_module *m = NULL;
    CHECK_OK(rk_module_compile(ctx, src, NULL, &m));
    rk_function *f = NULL;
    CHECK_OK(rk_module_get_function(m, "vector_scale", &f));
    static const int sizes[] = {1, 255, 256, 1000, 4097};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int n = sizes[s];
        float *data = malloc((size_t)n * sizeof *data), *want = malloc((size_t)n * sizeof *want);
        for (int i = 0; i < n; i++) want[i] = (data[i] = random_float()) * 1.5f;
        rk_buffer *buf = NULL;
        CHECK_OK(rk_buffer_alloc(ctx, (size_t)n * sizeof *data, &buf));
        CHECK_OK(rk_copy_to_device(ctx, buf, 0, data, (size_t)n * sizeof *data, NULL));
        rk_arg args[] = {RK_ARG_BUF(buf), RK_ARG_FLOAT(1.5f), RK_ARG_INT(n)};
        rk_launch_desc l = {.grid = RK_DIM3((uint32_t)(n + 255) / 256, 1, 1), .block = RK_DIM3(256, 1, 1), .args = args, .arg_count = 3};
        CHECK_OK(rk_launch(f, &l));
        CHECK_OK(rk_copy_to_host(ctx, data, buf, 0, (size_t)n * sizeof *data, NULL));
        CHECK_OK(rk_context_synchronize(ctx));
        check_close_f("vector_scale (CPU backend)", data, want, (size_t)n, 0);
        CHECK_OK(rk_buffer_free(buf));
        free(data), free(want);
    }
    printf("vector_scale on the CPU backend: matches the reference at %zu sizes\n", sizeof sizes / sizeof sizes[0]);
    CHECK_OK(rk_module_destroy(m));
    free(src);

    src = rk_test_read_source("tests/transpile/cases/reduce.c");
    CHECK_OK(rk_module_compile(ctx, src, NULL, &m));
    CHECK_OK(rk_module_get_function(m, "reduce", &f));
    static const int rsizes[] = {1, 64, 100, 1000};
    for (size_t s = 0; s < sizeof rsizes / sizeof rsizes[0]; s++) {
        int n = rsizes[s], block = 64, grid = (n + block - 1) / block;
        int *in = malloc((size_t)n * sizeof *in), *sums = calloc((size_t)grid, sizeof *sums);
        int max = INT_MIN, want_max = INT_MIN;
        for (int i = 0; i < n; i++) {
            in[i] = (int)(next_random() % 2001) - 1000;
            if (in[i] > want_max) want_max = in[i];
        }
        rk_buffer *bin, *bsums, *bmax;
        CHECK_OK(rk_buffer_alloc(ctx, (size_t)n * sizeof *in, &bin));
        CHECK_OK(rk_buffer_alloc(ctx, (size_t)grid * sizeof *sums, &bsums));
        CHECK_OK(rk_buffer_alloc(ctx, sizeof max, &bmax));
        CHECK_OK(rk_copy_to_device(ctx, bin, 0, in, (size_t)n * sizeof *in, NULL));
        CHECK_OK(rk_copy_to_device(ctx, bmax, 0, &max, sizeof max, NULL));
        rk_arg args[] = {RK_ARG_BUF(bin), RK_ARG_BUF(bsums), RK_ARG_BUF(bmax), RK_ARG_INT(n)};
        rk_launch_desc l = {.grid = RK_DIM3((uint32_t)grid, 1, 1), .block = RK_DIM3((uint32_t)block, 1, 1), .args = args, .arg_count = 4};
        CHECK_OK(rk_launch(f, &l));
        CHECK_OK(rk_copy_to_host(ctx, sums, bsums, 0, (size_t)grid * sizeof *sums, NULL));
        CHECK_OK(rk_copy_to_host(ctx, &max, bmax, 0, sizeof max, NULL));
        CHECK_OK(rk_context_synchronize(ctx));
        for (int b = 0; b < grid; b++) {
            int want = 0;
            for (int i = b * block; i < n && i < (b + 1) * block; i++) want += in[i];
            CHECK_EQ(sums[b], want);
        }
        CHECK_EQ(max, want_max);
        rk_buffer_free(bin), rk_buffer_free(bsums), rk_buffer_free(bmax);
        free(in), free(sums);
    }
    printf("reduce (shared memory, barrier, warp shuffles, atomics) on the CPU backend: matches\n");
    CHECK_OK(rk_module_destroy(m));
    free(src);

    /* A cooperative launch: grid_sync between phases, a release/acquire flag. */
    src = rk_test_read_source("tests/transpile/cases/grid_phases.c");
    CHECK_OK(rk_module_compile(ctx, src, NULL, &m));
    CHECK_OK(rk_module_get_function(m, "grid_phases", &f));
    enum { BLOCKS = 2, ROUNDS = 3 };
    int out[BLOCKS * ROUNDS];
    uint32_t flag = 0;
    rk_buffer *bslots, *bout, *bflag;
    CHECK_OK(rk_buffer_alloc(ctx, BLOCKS * sizeof(int), &bslots));
    CHECK_OK(rk_buffer_alloc(ctx, sizeof out, &bout));
    CHECK_OK(rk_buffer_alloc(ctx, sizeof flag, &bflag));
    rk_arg args[] = {RK_ARG_BUF(bslots), RK_ARG_BUF(bout), RK_ARG_BUF(bflag), RK_ARG_INT(ROUNDS)};
    rk_launch_desc l = {.grid = RK_DIM3(BLOCKS, 1, 1), .block = RK_DIM3(4, 1, 1), .args = args, .arg_count = 4,
                        .cooperative = true};
    CHECK_OK(rk_launch(f, &l));
    CHECK_OK(rk_copy_to_host(ctx, out, bout, 0, sizeof out, NULL));
    CHECK_OK(rk_copy_to_host(ctx, &flag, bflag, 0, sizeof flag, NULL));
    CHECK_OK(rk_context_synchronize(ctx));
    for (int b = 0; b < BLOCKS; b++)
        for (int r = 0; r < ROUNDS; r++) CHECK_EQ(out[b * ROUNDS + r], ((b + 1) % BLOCKS) * 10 + r);
    CHECK_EQ(flag, ROUNDS);
    rk_buffer_free(bslots), rk_buffer_free(bout), rk_buffer_free(bflag);
    CHECK_OK(rk_module_destroy(m));
    free(src);
    printf("grid_phases (cooperative, grid_sync, release/acquire) on the CPU backend: matches\n");

    /* Tagged words through relaxed 64-bit loads and stores: a current tag
     * passes the payload, a stale one (the word of a run with another tag,
     * left there by a shorter launch) does not. */
    src = rk_test_read_source("tests/transpile/cases/tagged_words.c");
    CHECK_OK(rk_module_compile(ctx, src, NULL, &m));
    CHECK_OK(rk_module_get_function(m, "tagged_words", &f));
    enum { WORDS = 24, WBLOCK = 8 };
    uint64_t stale[WORDS];
    for (int i = 0; i < WORDS; i++) stale[i] = (uint64_t)6 << 32 | 1234u;
    uint32_t got[WORDS];
    uint64_t flags[WORDS / WBLOCK];
    rk_buffer *bwords, *bgot, *bflags;
    CHECK_OK(rk_buffer_alloc(ctx, sizeof stale, &bwords));
    CHECK_OK(rk_buffer_alloc(ctx, sizeof got, &bgot));
    CHECK_OK(rk_buffer_alloc(ctx, sizeof flags, &bflags));
    CHECK_OK(rk_copy_to_device(ctx, bwords, 0, stale, sizeof stale, NULL));
    const int n = WORDS - 3; /* the last block's last threads do not write: their words stay stale */
    rk_arg targs[] = {RK_ARG_BUF(bwords), RK_ARG_BUF(bgot), RK_ARG_BUF(bflags), RK_ARG_UINT(7), RK_ARG_INT(n)};
    rk_launch_desc tl = {.grid = RK_DIM3(WORDS / WBLOCK, 1, 1), .block = RK_DIM3(WBLOCK, 1, 1), .args = targs,
                         .arg_count = 5};
    CHECK_OK(rk_launch(f, &tl));
    CHECK_OK(rk_copy_to_host(ctx, got, bgot, 0, (size_t)n * sizeof *got, NULL));
    CHECK_OK(rk_copy_to_host(ctx, flags, bflags, 0, sizeof flags, NULL));
    CHECK_OK(rk_context_synchronize(ctx));
    for (int i = 0; i < n; i++) {
        int j = i / WBLOCK * WBLOCK + (i % WBLOCK + 1) % WBLOCK;
        CHECK_EQ(got[i], j < n ? (uint32_t)(j * 3) : 0xffffffffu);
    }
    for (int b = 0; b < WORDS / WBLOCK; b++) CHECK_EQ(flags[b], 7u);
    rk_buffer_free(bwords), rk_buffer_free(bgot), rk_buffer_free(bflags);
    CHECK_OK(rk_module_destroy(m));
    free(src);
    printf("tagged_words (relaxed 64-bit loads and stores, tag check, GPU-scope flag) on the CPU backend: matches\n");
}

static PolyRequest make_request(uint32_t id) {
    PolyRequest r = {.id = id, .degree = next_random() % 10, .x = random_float() / 5.0f};
    for (int i = 0; i <= POLY_MAX_DEGREE; i++) r.coeff[i] = random_float();
    return r;
}

/* The same handler through the actor API on the CPU backend. */
static void handler_ring(rk_runtime *rt) {
    char *src = rk_test_read_source("examples/kernels/poly_handler.c");
    rk_kernel_desc kd = {.name = "poly", .handler_source = src, .handler_name = "poly_eval",
                         .message_size = sizeof(PolyRequest), .reply_size = sizeof(PolyReply),
                         .state_size = sizeof(PolyState), .queue_capacity = 256};
    rk_kernel *k = NULL;
    CHECK_OK(rk_kernel_launch(rt, &kd, &k));
    CHECK_OK(rk_kernel_activate(k));
    enum { N = 500 };
    static PolyRequest reqs[N];
    static PolyReply want[N];
    static int want_status[N];
    PolyState state = {0};
    uint64_t first_id = 0;
    for (int i = 0; i < N; i++) {
        reqs[i] = make_request((uint32_t)i);
        want_status[i] = poly_eval(&reqs[i], &want[i], &state);
    }
    CHECK_EQ(state.handled, N);
    int received = 0;
    for (int i = 0; i < N || received < N;) {
        if (i < N) {
            uint64_t id;
            rk_status s = rk_kernel_send(k, &reqs[i], sizeof reqs[i], RK_NO_WAIT, &id);
            if (s == RK_OK) {
                if (i == 0) first_id = id;
                i++;
                continue;
            }
            CHECK_STATUS(s, RK_WOULD_BLOCK);
        }
        PolyReply reply;
        rk_reply_info info;
        CHECK_OK(rk_kernel_receive(k, &reply, sizeof reply, &info, 5000000000ull));
        uint64_t idx = info.id - first_id;
        CHECK_LT(idx, N);
        CHECK_EQ(info.status, want_status[idx]);
        CHECK_EQ(reply.id, want[idx].id);
        CHECK_EQ(reply.status, want[idx].status);
        CHECK(reply.value == want[idx].value && reply.slope == want[idx].slope);
        received++;
    }
    CHECK_OK(rk_kernel_terminate(k, 5000000000ull));
    CHECK_OK(rk_kernel_destroy(k));
    free(src);
    printf("poly_eval as a CPU ring kernel: %d replies match direct calls\n", N);
}

int main(void) {
    stencils();
    rk_runtime *rt = NULL;
    rk_runtime_desc rd = {.backend = "cpu"};
    CHECK_OK(rk_runtime_create(&rd, &rt));
    backend_kernels(rk_runtime_context(rt));
    handler_ring(rt);
    CHECK_OK(rk_runtime_destroy(rt));
    return 0;
}
