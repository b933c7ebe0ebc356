/* sync_threads() is a real barrier: tree reductions through RK_SHARED and
 * through dynamic shared memory (both give wrong sums without one), repeated
 * barriers, 3-D blocks, compiled kernels, and divergent barriers reported
 * as faults instead of hanging. A warp that polls for another warp's work
 * (sleep_ns in its loop) lets that warp run, as on a GPU. */
#include "cpu_test.h"
#include "ringkernel/dsl.h"

/* Largest power of two below n (n >= 2), for reductions over any block size. */
static int half_span(int n) {
    int p = 1;
    while (p * 2 < n) p *= 2;
    return p;
}

/* Sum of in[block's range] into out[block] via static shared memory. */
RK_KERNEL void block_sum_static(const int *in, long long *out, int n) {
    RK_SHARED long long partial[1024];
    int t = thread_idx_x(), nt = block_dim_x();
    int i = block_idx_x() * nt + t;
    partial[t] = i < n ? in[i] : 0;
    sync_threads();
    for (int s = nt > 1 ? half_span(nt) : 0; s > 0; s /= 2) {
        if (t < s && t + s < nt) partial[t] += partial[t + s];
        sync_threads();
    }
    if (t == 0) out[block_idx_x()] = partial[0];
}

/* The same through dynamic shared memory sized by the launch. */
RK_KERNEL void block_sum_dynamic(const int *in, long long *out, int n) {
    long long *partial = dynamic_shared();
    int t = thread_idx_x(), nt = block_dim_x();
    int i = block_idx_x() * nt + t;
    partial[t] = i < n ? in[i] : 0;
    sync_threads();
    for (int s = nt > 1 ? half_span(nt) : 0; s > 0; s /= 2) {
        if (t < s && t + s < nt) partial[t] += partial[t + s];
        sync_threads();
    }
    if (t == 0) out[block_idx_x()] = partial[0];
}

/* Each round every thread reads its right neighbour's value, then all write:
 * after R rounds thread t holds the value of thread (t + R) mod nt. Needs a
 * barrier between the reads and the writes, and between the writes and the reads. */
RK_KERNEL void rotate(int *out, int rounds) {
    RK_SHARED int ring[1024];
    int t = thread_idx_x(), nt = block_dim_x();
    ring[t] = t + 1000 * block_idx_x();
    sync_threads();
    for (int r = 0; r < rounds; r++) {
        int v = ring[(t + 1) % nt];
        sync_threads();
        ring[t] = v;
        sync_threads();
    }
    out[block_idx_x() * nt + t] = ring[t];
}

/* 3-D block: each thread reports where it is; thread (0,0,0) counts the block after a barrier. */
RK_KERNEL void where_3d(int *out, int *count) {
    RK_SHARED int seen;
    int x = thread_idx_x(), y = thread_idx_y(), z = thread_idx_z();
    int bx = block_dim_x(), by = block_dim_y();
    int linear = x + bx * (y + by * z);
    int per_block = bx * by * block_dim_z();
    if (linear == 0) seen = 0;
    sync_threads();
    atomic_add_i32(&seen, 1);
    sync_threads();
    out[block_idx_x() * per_block + linear] = x | y << 10 | z << 20;
    if (linear == 0) count[block_idx_x()] = seen;
}

RK_KERNEL void divergent(int *out, int n) {
    (void)n;
    if (thread_idx_x() < 5) sync_threads(); /* threads 5.. never arrive */
    out[block_idx_x() * block_dim_x() + thread_idx_x()] = 1;
}

RK_KERNEL void early_exit(int *out, int n) {
    int i = block_idx_x() * block_dim_x() + thread_idx_x();
    if (i >= n) return; /* the last block's tail leaves before the barrier */
    out[i] = 1;
    sync_threads();
}

RK_KERNEL void barrier_vs_warp(int *out, int n) {
    (void)n;
    int t = thread_idx_x();
    if (t < 16)
        out[t] = shfl_i32(t, 0);
    else
        sync_threads();
}

/* Warp 0 polls, with a warp operation and a pause in its loop, until warp
 * 1 has set out[1]; out[0]: it saw it within n polls (two words per block).
 * The CPU backend runs a released warp before it starts the next one: only
 * the pause lets warp 1 start at all. */
RK_KERNEL void warps_wait(int *out, int n) {
    int t = thread_idx_x();
    out += 2 * block_idx_x();
    if (t < 32) {
        int polls = 0;
        while (!warp_any(atomic_add_i32(&out[1], 0) == 1) && polls < n) {
            sleep_ns(10);
            polls++;
        }
        if (t == 0) out[0] = polls < n;
    } else if (t == 32) {
        atomic_exch_i32(&out[1], 1);
    }
}

static const rk_host_kernel kernels[] = {
    HOST_KERNEL(block_sum_static), HOST_KERNEL(block_sum_dynamic), HOST_KERNEL(rotate),
    HOST_KERNEL(where_3d),         HOST_KERNEL(divergent),         HOST_KERNEL(early_exit),
    HOST_KERNEL(barrier_vs_warp),  HOST_KERNEL(warps_wait),
};

static rk_function *get(rk_module *m, const char *name) {
    rk_function *fn = NULL;
    CHECK_OK(rk_module_get_function(m, name, &fn));
    return fn;
}

static void check_sums(rk_context *ctx, rk_function *fn, bool dynamic) {
    static const int block_sizes[] = {1, 2, 3, 7, 32, 33, 64, 100, 255, 256, 500, 1000, 1023, 1024};
    enum { BLOCKS = 37 };
    for (size_t k = 0; k < sizeof block_sizes / sizeof block_sizes[0]; k++) {
        int nt = block_sizes[k];
        if (RK_TEST_TSAN && nt > 128) break;
        int n = BLOCKS * nt - nt / 3; /* a partial last block */
        int *in = malloc((size_t)n * sizeof *in);
        long long want[BLOCKS] = {0}, got[BLOCKS];
        for (int i = 0; i < n; i++) {
            in[i] = (i * 7919) % 1000 + 1;
            want[i / nt] += in[i];
        }
        rk_buffer *bin = NULL, *bout = NULL;
        CHECK_OK(rk_buffer_alloc(ctx, (size_t)n * sizeof *in, &bin));
        CHECK_OK(rk_buffer_alloc(ctx, sizeof got, &bout));
        CHECK_OK(rk_copy_to_device(ctx, bin, 0, in, (size_t)n * sizeof *in, NULL));
        rk_arg args[] = {RK_ARG_BUF(bin), RK_ARG_BUF(bout), RK_ARG_INT(n)};
        rk_launch_desc d = launch_1d(BLOCKS, (uint32_t)nt, args, 3);
        if (dynamic) d.shared_memory = (size_t)nt * sizeof(long long);
        CHECK_OK(rk_launch(fn, &d));
        CHECK_OK(rk_copy_to_host(ctx, got, bout, 0, sizeof got, NULL));
        CHECK_OK(rk_context_synchronize(ctx));
        for (int b = 0; b < BLOCKS; b++) {
            if (got[b] != want[b])
                fprintf(stderr, "%s: block size %d, block %d: sum %lld, want %lld\n", dynamic ? "dynamic" : "static",
                        nt, b, got[b], want[b]);
            CHECK_EQ(got[b], want[b]);
        }
        CHECK_OK(rk_buffer_free(bin));
        CHECK_OK(rk_buffer_free(bout));
        free(in);
    }
}

static void check_rotate(rk_context *ctx, rk_function *fn) {
    static const int sizes[] = {1, 5, 32, 97, 1024};
    enum { BLOCKS = 9, ROUNDS = 13 };
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int nt = sizes[k];
        if (RK_TEST_TSAN && nt > 128) break;
        rk_buffer *buf = NULL;
        size_t bytes = (size_t)BLOCKS * nt * sizeof(int);
        int *out = malloc(bytes);
        CHECK_OK(rk_buffer_alloc(ctx, bytes, &buf));
        rk_arg args[] = {RK_ARG_BUF(buf), RK_ARG_INT(ROUNDS)};
        rk_launch_desc d = launch_1d(BLOCKS, (uint32_t)nt, args, 2);
        CHECK_OK(rk_launch(fn, &d));
        CHECK_OK(rk_copy_to_host(ctx, out, buf, 0, bytes, NULL));
        CHECK_OK(rk_context_synchronize(ctx));
        for (int b = 0; b < BLOCKS; b++)
            for (int t = 0; t < nt; t++) CHECK_EQ(out[b * nt + t], (t + ROUNDS) % nt + 1000 * b);
        CHECK_OK(rk_buffer_free(buf));
        free(out);
    }
}

static void check_3d(rk_context *ctx, rk_function *fn) {
    enum { BX = 8, BY = 4, BZ = 3, PER = BX * BY * BZ, BLOCKS = 5 };
    rk_buffer *bout = NULL, *bcount = NULL;
    int out[BLOCKS * PER], count[BLOCKS];
    CHECK_OK(rk_buffer_alloc(ctx, sizeof out, &bout));
    CHECK_OK(rk_buffer_alloc(ctx, sizeof count, &bcount));
    rk_arg args[] = {RK_ARG_BUF(bout), RK_ARG_BUF(bcount)};
    rk_launch_desc d = {.grid = RK_DIM3(BLOCKS, 1, 1), .block = RK_DIM3(BX, BY, BZ), .args = args, .arg_count = 2};
    CHECK_OK(rk_launch(fn, &d));
    CHECK_OK(rk_copy_to_host(ctx, out, bout, 0, sizeof out, NULL));
    CHECK_OK(rk_copy_to_host(ctx, count, bcount, 0, sizeof count, NULL));
    CHECK_OK(rk_context_synchronize(ctx));
    for (int b = 0; b < BLOCKS; b++) {
        CHECK_EQ(count[b], PER);
        for (int z = 0; z < BZ; z++)
            for (int y = 0; y < BY; y++)
                for (int x = 0; x < BX; x++) CHECK_EQ(out[b * PER + x + BX * (y + BY * z)], x | y << 10 | z << 20);
    }
    CHECK_OK(rk_buffer_free(bout));
    CHECK_OK(rk_buffer_free(bcount));
}

static void check_warps_wait(rk_context *ctx, rk_function *fn) {
    for (int blocks = 1; blocks <= 3; blocks += 2) { /* 3: on several workers at once */
        rk_buffer *buf = NULL;
        int out[6] = {0};
        CHECK_OK(rk_buffer_alloc(ctx, sizeof out, &buf));
        rk_arg args[] = {RK_ARG_BUF(buf), RK_ARG_INT(10000)};
        rk_launch_desc d = launch_1d(1, 64, args, 2);
        d.grid = RK_DIM3((uint32_t)blocks, 1, 1);
        CHECK_OK(rk_launch(fn, &d));
        CHECK_OK(rk_copy_to_host(ctx, out, buf, 0, sizeof out, NULL));
        CHECK_OK(rk_context_synchronize(ctx));
        for (int b = 0; b < blocks; b++) {
            CHECK_EQ(out[2 * b + 1], 1);
            CHECK_EQ(out[2 * b], 1);
        }
        CHECK_OK(rk_buffer_free(buf));
    }
}

/* A bad barrier fails the launch at synchronize, names the problem, and
 * leaves the context working. */
static void check_fault(rk_context *ctx, rk_function *fn, uint32_t grid, uint32_t block, int n, const char *expect) {
    rk_stream *s = NULL;
    rk_buffer *buf = NULL;
    CHECK_OK(rk_stream_create(ctx, &s));
    CHECK_OK(rk_buffer_alloc(ctx, (size_t)grid * block * sizeof(int), &buf));
    rk_arg args[] = {RK_ARG_BUF(buf), RK_ARG_INT(n)};
    rk_launch_desc d = launch_1d(grid, block, args, 2);
    d.stream = s;
    CHECK_OK(rk_launch(fn, &d)); /* asynchronous: the fault shows at synchronize */
    CHECK_STATUS(rk_stream_synchronize(s), RK_DEVICE_FAULT);
    CHECK_STR_CONTAINS(rk_last_error(), expect);
    CHECK_STR_CONTAINS(rk_last_error(), "sync_threads");
    CHECK_OK(rk_stream_synchronize(s)); /* reported once */
    CHECK_OK(rk_buffer_free(buf));
    CHECK_OK(rk_stream_destroy(s));
}

int main(void) {
    /* Several workers even on a one-core machine, so blocks run concurrently. */
    setenv("RK_CPU_THREADS", RK_TEST_TSAN ? "2" : "4", 1);
    rk_context *ctx = cpu_context();
    rk_module *m = NULL;
    CHECK_OK(rk_module_from_host_kernels(ctx, kernels, sizeof kernels / sizeof kernels[0], &m));

    check_sums(ctx, get(m, "block_sum_static"), false);
    check_sums(ctx, get(m, "block_sum_dynamic"), true);
    check_rotate(ctx, get(m, "rotate"));
    check_3d(ctx, get(m, "where_3d"));
    check_warps_wait(ctx, get(m, "warps_wait"));

    check_fault(ctx, get(m, "divergent"), 1, 32, 0, "divergent");
    check_fault(ctx, get(m, "divergent"), 64, 64, 0, "divergent"); /* many blocks on several workers */
    check_fault(ctx, get(m, "early_exit"), 3, 100, 250, "returned without reaching it");
    check_fault(ctx, get(m, "barrier_vs_warp"), 2, 32, 0, "warp operation");
    /* still working after the faults */
    check_sums(ctx, get(m, "block_sum_static"), false);

    /* A faulting launch on the default stream shows at context synchronize. */
    rk_buffer *buf = NULL;
    CHECK_OK(rk_buffer_alloc(ctx, 32 * sizeof(int), &buf));
    rk_arg args[] = {RK_ARG_BUF(buf), RK_ARG_INT(0)};
    rk_launch_desc d = launch_1d(1, 32, args, 2);
    CHECK_OK(rk_launch(get(m, "divergent"), &d));
    CHECK_STATUS(rk_context_synchronize(ctx), RK_DEVICE_FAULT);
    CHECK_STR_CONTAINS(rk_last_error(), "'divergent'");
    CHECK_OK(rk_context_synchronize(ctx));
    CHECK_OK(rk_buffer_free(buf));

    /* The same reduction compiled from source. */
    static const char src[] =
        "RK_KERNEL void reduce(const int *in, long long *out, int n) {\n"
        "    RK_SHARED long long partial[1024];\n"
        "    int t = thread_idx_x(), nt = block_dim_x();\n"
        "    int i = block_idx_x() * nt + t;\n"
        "    partial[t] = i < n ? in[i] : 0;\n"
        "    sync_threads();\n"
        "    int s = 1;\n"
        "    while (s * 2 < nt) s *= 2;\n"
        "    for (; nt > 1 && s > 0; s /= 2) {\n"
        "        if (t < s && t + s < nt) partial[t] += partial[t + s];\n"
        "        sync_threads();\n"
        "    }\n"
        "    if (t == 0) out[block_idx_x()] = partial[0];\n"
        "}\n";
    rk_module *cm = NULL;
    CHECK_OK(rk_module_compile(ctx, src, NULL, &cm));
    check_sums(ctx, get(cm, "reduce"), false);
    CHECK_OK(rk_module_destroy(cm));

    CHECK_OK(rk_module_destroy(m));
    CHECK_OK(rk_context_destroy(ctx));
    printf("cpu barriers: ok\n");
    return 0;
}
