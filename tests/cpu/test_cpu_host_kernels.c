/* Kernels compiled into the host program: every argument kind reaches the
 * kernel intact (more than fit in registers, so some go on the stack), the
 * module's lookups and errors, and DSL calls made outside any launch. */
#include <float.h>
#include <stdatomic.h>

#include "cpu/cpu_internal.h"
#include "cpu_test.h"
#include "ringkernel/dsl.h"

/* 18 arguments: integers and floats interleaved, past the 6 integer and 8 vector registers. */
RK_KERNEL void many_args(int32_t a, uint32_t b, int64_t c, uint64_t d, float e, double f, int64_t *ints,
                         double *reals, int32_t g, float h, uint64_t i, double j, int32_t k, float l, int64_t m,
                         double n, uint32_t o, float p) {
    if (thread_idx_x() != 0 || block_idx_x() != 0) return;
    ints[0] = a;
    ints[1] = (int64_t)b;
    ints[2] = c;
    ints[3] = (int64_t)d;
    ints[4] = g;
    ints[5] = (int64_t)i;
    ints[6] = k;
    ints[7] = m;
    ints[8] = (int64_t)o;
    reals[0] = e;
    reals[1] = f;
    reals[2] = h;
    reals[3] = j;
    reals[4] = l;
    reals[5] = n;
    reals[6] = p;
}

static atomic_int calls;

RK_KERNEL void no_args(void) { atomic_fetch_add(&calls, 1); }

/* Every thread of every block adds its global id: checks each runs exactly once. */
RK_KERNEL void id_sum(uint64_t *sum, uint64_t scale) {
    uint64_t id = (uint64_t)block_idx_x() * (uint64_t)block_dim_x() + (uint64_t)thread_idx_x();
    atomic_add_u64(sum, id * scale);
}

/* Structs by value of each x86-64 / AArch64 class: floats with an int (SSE
 * and integer halves), a large one (in memory), doubles; then plain scalars
 * after them must still arrive. */
typedef struct mixed { float x, y; int n; } mixed;
typedef struct big { int64_t a; double b; uint32_t c[5]; float d; } big;
typedef struct two_doubles { double a, b; } two_doubles;

RK_KERNEL void struct_args(mixed m, double *out, big b, two_doubles t, int tail, float ftail) {
    if (thread_idx_x() != 0 || block_idx_x() != 0) return;
    out[0] = m.x, out[1] = m.y, out[2] = m.n;
    out[3] = (double)b.a, out[4] = b.b, out[5] = b.c[0] + b.c[4], out[6] = b.d;
    out[7] = t.a, out[8] = t.b, out[9] = tail, out[10] = ftail;
}

/* Every thread of every block reads each struct, before and after a barrier
 * (so fibers park and resume with the call's stack arguments live): a
 * struct in memory must reach all of them, not only the first. */
RK_KERNEL void struct_every_thread(big b, int32_t *out, mixed m, two_doubles t) {
    int gid = block_idx_x() * block_dim_x() + thread_idx_x();
    int before = b.a == -(1ll << 40) && b.b == 0.25 && b.c[0] == 1 && b.c[4] == 1000 && b.d == 8.0f;
    sync_threads();
    int after = b.a == -(1ll << 40) && b.c[2] == 3 && b.d == 8.0f && m.x == 1.5f && m.n == 7 && t.b == -3.0;
    out[gid] = before + 2 * after;
}

RK_HANDLER int helper(int x) { return x + 1; }

static void test_struct_args(rk_context *ctx, rk_module *mod) {
    rk_function *fn = NULL;
    CHECK_OK(rk_module_get_function(mod, "struct_args", &fn));
    rk_buffer *out = NULL;
    CHECK_OK(rk_buffer_alloc(ctx, 11 * sizeof(double), &out));
    mixed m = {1.5f, -2.5f, 7};
    big b = {-(1ll << 40), 0.25, {1, 2, 3, 4, 1000}, 8.0f};
    two_doubles t = {1e100, -3.0};
    rk_arg args[] = {RK_ARG_STRUCT_OF(&m, "ffi"), RK_ARG_BUF(out), RK_ARG_STRUCT_OF(&b, "lduuuuuf"),
                     RK_ARG_STRUCT_OF(&t, "dd"), RK_ARG_INT(-9), RK_ARG_FLOAT(0.5f)};
    rk_launch_desc d = launch_1d(2, 3, args, sizeof args / sizeof args[0]);
    CHECK_OK(rk_launch(fn, &d));
    m.x = 99.0f; /* copied at rk_launch: later changes do not reach the kernel */
    double got[11];
    CHECK_OK(rk_copy_to_host(ctx, got, out, 0, sizeof got, NULL));
    CHECK_OK(rk_context_synchronize(ctx));
    const double want[11] = {1.5, -2.5, 7, -(double)(1ll << 40), 0.25, 1001, 8, 1e100, -3, -9, 0.5};
    for (int i = 0; i < 11; i++) CHECK(got[i] == want[i]);
    /* Field letters that do not describe the struct are refused before anything runs. */
    const char *bad[] = {"ff", "ffip", "ffx", "", "ffiffi"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        args[0] = RK_ARG_STRUCT_OF(&m, bad[i]);
        CHECK_STATUS(rk_launch(fn, &d), RK_INVALID_ARGUMENT);
    }
    CHECK_STR_CONTAINS(rk_last_error(), "lay out as 24 bytes but the struct is 12");
    args[0] = RK_ARG_STRUCT_OF(&m, "ffip");
    CHECK_STATUS(rk_launch(fn, &d), RK_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(rk_last_error(), "pointer member");
    args[0] = (rk_arg){.kind = RK_ARG_STRUCT, .value.structure = {.data = NULL, .size = 12, .fields = "ffi"}};
    CHECK_STATUS(rk_launch(fn, &d), RK_NULL_ARGUMENT);
    CHECK_OK(rk_buffer_free(out));
}

static void test_struct_args_every_thread(rk_context *ctx, rk_module *mod) {
    rk_function *fn = NULL;
    CHECK_OK(rk_module_get_function(mod, "struct_every_thread", &fn));
    enum { BLOCKS = 16, THREADS = 64 };
    rk_buffer *out = NULL;
    CHECK_OK(rk_buffer_alloc(ctx, BLOCKS * THREADS * sizeof(int32_t), &out));
    mixed m = {1.5f, -2.5f, 7};
    big b = {-(1ll << 40), 0.25, {1, 2, 3, 4, 1000}, 8.0f};
    two_doubles t = {1e100, -3.0};
    rk_arg args[] = {RK_ARG_STRUCT_OF(&b, "lduuuuuf"), RK_ARG_BUF(out), RK_ARG_STRUCT_OF(&m, "ffi"),
                     RK_ARG_STRUCT_OF(&t, "dd")};
    rk_launch_desc d = launch_1d(BLOCKS, THREADS, args, sizeof args / sizeof args[0]);
    for (int round = 0; round < 3; round++) { /* later launches reuse the fibers and their stacks */
        int32_t got[BLOCKS * THREADS] = {0};
        CHECK_OK(rk_copy_to_device(ctx, out, 0, got, sizeof got, NULL));
        CHECK_OK(rk_launch(fn, &d));
        CHECK_OK(rk_copy_to_host(ctx, got, out, 0, sizeof got, NULL));
        CHECK_OK(rk_context_synchronize(ctx));
        int bad = 0, first_bad = -1;
        for (int i = 0; i < BLOCKS * THREADS; i++)
            if (got[i] != 3 && bad++ == 0) first_bad = i;
        if (bad) fprintf(stderr, "struct by value: %d of %d threads saw wrong fields (first: thread %d, %d)\n", bad,
                         BLOCKS * THREADS, first_bad, got[first_bad]);
        CHECK_EQ(bad, 0);
    }
    CHECK_OK(rk_buffer_free(out));
}

static void test_args(rk_context *ctx, rk_module *mod) {
    rk_function *fn = NULL;
    CHECK_OK(rk_module_get_function(mod, "many_args", &fn));
    rk_buffer *ints = NULL, *reals = NULL;
    CHECK_OK(rk_buffer_alloc(ctx, 9 * sizeof(int64_t), &ints));
    CHECK_OK(rk_buffer_alloc(ctx, 7 * sizeof(double), &reals));
    rk_arg args[] = {
        RK_ARG_INT(INT32_MIN),       RK_ARG_UINT(UINT32_MAX),   RK_ARG_LONG(INT64_MIN), RK_ARG_ULONG(UINT64_MAX),
        RK_ARG_FLOAT(1.5f),          RK_ARG_DOUBLE(-2.25),      RK_ARG_BUF(ints),       RK_ARG_BUF(reals),
        RK_ARG_INT(-7),              RK_ARG_FLOAT(FLT_MAX),     RK_ARG_ULONG(1ull << 63), RK_ARG_DOUBLE(DBL_MIN),
        RK_ARG_INT(INT32_MAX),       RK_ARG_FLOAT(-0.125f),     RK_ARG_LONG(INT64_MAX), RK_ARG_DOUBLE(1e300),
        RK_ARG_UINT(0x80000001u),    RK_ARG_FLOAT(3.0e-3f),
    };
    rk_launch_desc d = launch_1d(3, 5, args, sizeof args / sizeof args[0]);
    CHECK_OK(rk_launch(fn, &d));
    int64_t gi[9];
    double gr[7];
    CHECK_OK(rk_copy_to_host(ctx, gi, ints, 0, sizeof gi, NULL));
    CHECK_OK(rk_copy_to_host(ctx, gr, reals, 0, sizeof gr, NULL));
    CHECK_OK(rk_context_synchronize(ctx));
    CHECK_EQ(gi[0], INT32_MIN);
    CHECK_U64_EQ(gi[1], UINT32_MAX);
    CHECK_EQ(gi[2], INT64_MIN);
    CHECK_U64_EQ((uint64_t)gi[3], UINT64_MAX);
    CHECK_EQ(gi[4], -7);
    CHECK_U64_EQ((uint64_t)gi[5], 1ull << 63);
    CHECK_EQ(gi[6], INT32_MAX);
    CHECK_EQ(gi[7], INT64_MAX);
    CHECK_U64_EQ(gi[8], 0x80000001u);
    CHECK(gr[0] == 1.5);
    CHECK(gr[1] == -2.25);
    CHECK(gr[2] == (double)FLT_MAX);
    CHECK(gr[3] == DBL_MIN);
    CHECK(gr[4] == -0.125);
    CHECK(gr[5] == 1e300);
    CHECK(gr[6] == (double)3.0e-3f);
    CHECK_OK(rk_buffer_free(ints));
    CHECK_OK(rk_buffer_free(reals));
}

static void test_every_thread_once(rk_context *ctx, rk_module *mod) {
    rk_function *fn = NULL;
    CHECK_OK(rk_module_get_function(mod, "id_sum", &fn));
    rk_buffer *sum = NULL;
    CHECK_OK(rk_buffer_alloc(ctx, sizeof(uint64_t), &sum));
    const uint64_t blocks = 2000, threads = 300;
    rk_arg args[] = {RK_ARG_BUF(sum), RK_ARG_ULONG(3)};
    rk_launch_desc d = launch_1d((uint32_t)blocks, (uint32_t)threads, args, 2);
    CHECK_OK(rk_launch(fn, &d));
    uint64_t got = 0;
    CHECK_OK(rk_copy_to_host(ctx, &got, sum, 0, sizeof got, NULL));
    CHECK_OK(rk_context_synchronize(ctx));
    uint64_t n = blocks * threads;
    CHECK_U64_EQ(got, 3 * (n * (n - 1) / 2));

    rk_function *none = NULL;
    CHECK_OK(rk_module_get_function(mod, "no_args", &none));
    atomic_store(&calls, 0);
    rk_launch_desc d0 = {.grid = RK_DIM3(3, 2, 2), .block = RK_DIM3(4, 2, 1)};
    CHECK_OK(rk_launch(none, &d0));
    CHECK_OK(rk_context_synchronize(ctx));
    CHECK_EQ(atomic_load(&calls), 3 * 2 * 2 * 4 * 2);
    CHECK_OK(rk_buffer_free(sum));
}

static void test_module_errors(rk_context *ctx, rk_module *mod) {
    rk_function *fn = NULL;
    CHECK_STATUS(rk_module_get_function(mod, "nope", &fn), RK_NOT_FOUND);
    CHECK_STR_CONTAINS(rk_last_error(), "nope");
    CHECK_STATUS(rk_module_get_function(mod, NULL, &fn), RK_NULL_ARGUMENT);

    void (*raw)(void) = NULL;
    CHECK_OK(rk__cpu_module_symbol(mod, "helper", &raw));
    CHECK_EQ(((int (*)(int))raw)(41), 42);
    CHECK_STATUS(rk__cpu_module_symbol(mod, "missing", &raw), RK_NOT_FOUND);
    CHECK_STATUS(rk__cpu_module_symbol(NULL, "helper", &raw), RK_NULL_ARGUMENT);

    rk_module *m = NULL;
    rk_host_kernel one[] = {HOST_KERNEL(no_args)};
    CHECK_STATUS(rk_module_from_host_kernels(ctx, one, 0, &m), RK_INVALID_ARGUMENT);
    rk_host_kernel unnamed[] = {{NULL, (void (*)(void))no_args}};
    CHECK_STATUS(rk_module_from_host_kernels(ctx, unnamed, 1, &m), RK_NULL_ARGUMENT);
    rk_host_kernel nofn[] = {{"x", NULL}};
    CHECK_STATUS(rk_module_from_host_kernels(ctx, nofn, 1, &m), RK_NULL_ARGUMENT);
    CHECK_STATUS(rk_module_from_host_kernels(ctx, NULL, 1, &m), RK_NULL_ARGUMENT);
}

/* Outside a launch the DSL sees one thread of one block. */
static void test_dsl_outside_launch(void) {
    CHECK_EQ(thread_idx_x(), 0);
    CHECK_EQ(block_idx_z(), 0);
    CHECK_EQ(block_dim_x(), 1);
    CHECK_EQ(grid_dim_y(), 1);
    CHECK_EQ(lane_id(), 0);
    sync_threads(); /* returns at once */
    CHECK_EQ(shfl_i32(17, 3), 17);
    CHECK_EQ(shfl_down_i32(-4, 1), -4);
    CHECK_EQ(warp_ballot(1), 1);
    CHECK_EQ(warp_ballot(0), 0);
    CHECK(warp_all(1));
    CHECK(!warp_any(0));
}

int main(void) {
    rk_context *ctx = cpu_context();
    rk_host_kernel kernels[] = {HOST_KERNEL(many_args), HOST_KERNEL(no_args), HOST_KERNEL(id_sum),
                                HOST_KERNEL(helper), HOST_KERNEL(struct_args), HOST_KERNEL(struct_every_thread)};
    rk_module *mod = NULL;
    CHECK_OK(rk_module_from_host_kernels(ctx, kernels, sizeof kernels / sizeof kernels[0], &mod));
    test_args(ctx, mod);
    test_struct_args(ctx, mod);
    test_struct_args_every_thread(ctx, mod);
    test_every_thread_once(ctx, mod);
    test_module_errors(ctx, mod);
    test_dsl_outside_launch();
    CHECK_OK(rk_module_destroy(mod));
    CHECK_OK(rk_context_destroy(ctx));
    printf("cpu host kernels: ok\n");
    return 0;
}
