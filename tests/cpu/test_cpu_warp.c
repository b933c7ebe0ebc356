/* Warp emulation: shfl (index, down, xor), ballot, any and all over the 32
 * consecutive linear thread ids of a warp, checked lane by lane against a
 * model of CUDA's rules (a source lane outside the warp returns the caller's
 * own value; srcLane is taken mod 32; exited lanes do not vote). */
#include "cpu_test.h"
#include "ringkernel/dsl.h"

enum { K = 8 }; /* results per thread */

RK_KERNEL void warp_ops(const int *in, unsigned *out, int active_lanes) {
    int linear = thread_idx_x() + block_dim_x() * (thread_idx_y() + block_dim_y() * thread_idx_z());
    int per_block = block_dim_x() * block_dim_y() * block_dim_z();
    int i = block_idx_x() * per_block + linear;
    int lane = lane_id();
    if (lane >= active_lanes) return;
    unsigned *o = out + (size_t)i * K;
    int v = in[i];
    o[0] = warp_ballot(v % 3 == 0);
    o[1] = (unsigned)warp_any(v == 7);
    o[2] = (unsigned)warp_all(v > 5);
    if (active_lanes < 32) return; /* shuffles with exited lanes are undefined in CUDA */
    o[3] = (unsigned)shfl_i32(v, lane * 5 + 3);
    o[4] = (unsigned)shfl_down_i32(v, 4);
    o[5] = (unsigned)shfl_xor_i32(v, 5);
    int s = v;
    for (int off = 16; off > 0; off /= 2) s += shfl_down_i32(s, off);
    o[6] = (unsigned)s;
    float f = (float)v;
    for (int mask = 16; mask > 0; mask /= 2) f += shfl_xor_f32(f, mask);
    o[7] = (unsigned)f;
}

/* CUDA's answers for one warp whose first `lanes` lanes take part. */
static void model(const int *v, int lanes, bool shuffles, unsigned want[32][K]) {
    unsigned ballot = 0, any = 0, all_not = 0;
    for (int l = 0; l < lanes; l++) {
        ballot |= (unsigned)(v[l] % 3 == 0) << l;
        any |= (unsigned)(v[l] == 7) << l;
        all_not |= (unsigned)!(v[l] > 5) << l;
    }
    int s[32], s2[32];
    float f[32], f2[32];
    for (int l = 0; l < lanes; l++) {
        s[l] = v[l];
        f[l] = (float)v[l];
    }
    for (int off = 16; off > 0; off /= 2) {
        for (int l = 0; l < lanes; l++) s2[l] = s[l] + (l + off < lanes ? s[l + off] : s[l]);
        memcpy(s, s2, sizeof s);
    }
    for (int mask = 16; mask > 0; mask /= 2) {
        for (int l = 0; l < lanes; l++) f2[l] = f[l] + ((l ^ mask) < lanes ? f[l ^ mask] : f[l]);
        memcpy(f, f2, sizeof f);
    }
    for (int l = 0; l < lanes; l++) {
        want[l][0] = ballot;
        want[l][1] = any != 0;
        want[l][2] = all_not == 0;
        if (!shuffles) continue;
        int src = (l * 5 + 3) & 31;
        want[l][3] = (unsigned)(src < lanes ? v[src] : v[l]);
        want[l][4] = (unsigned)(l + 4 < lanes ? v[l + 4] : v[l]);
        want[l][5] = (unsigned)((l ^ 5) < lanes ? v[l ^ 5] : v[l]);
        want[l][6] = (unsigned)s[l];
        want[l][7] = (unsigned)f[l];
    }
}

static void run(rk_context *ctx, rk_function *fn, uint32_t blocks, rk_dim3 block, int active_lanes) {
    int per_block = (int)(block.x * block.y * block.z);
    int n = (int)blocks * per_block;
    int *in = malloc((size_t)n * sizeof *in);
    unsigned *out = malloc((size_t)n * K * sizeof *out);
    for (int i = 0; i < n; i++) in[i] = (int)(((unsigned)i * 2654435761u) >> 20) % 50 + 1;
    rk_buffer *bin = NULL, *bout = NULL;
    CHECK_OK(rk_buffer_alloc(ctx, (size_t)n * sizeof *in, &bin));
    CHECK_OK(rk_buffer_alloc(ctx, (size_t)n * K * sizeof *out, &bout));
    CHECK_OK(rk_copy_to_device(ctx, bin, 0, in, (size_t)n * sizeof *in, NULL));
    rk_arg args[] = {RK_ARG_BUF(bin), RK_ARG_BUF(bout), RK_ARG_INT(active_lanes)};
    rk_launch_desc d = {.grid = RK_DIM3(blocks, 1, 1), .block = block, .args = args, .arg_count = 3};
    CHECK_OK(rk_launch(fn, &d));
    CHECK_OK(rk_copy_to_host(ctx, out, bout, 0, (size_t)n * K * sizeof *out, NULL));
    CHECK_OK(rk_context_synchronize(ctx));
    bool shuffles = active_lanes >= 32;
    for (int b = 0; b < (int)blocks; b++) {
        for (int w = 0; w * 32 < per_block; w++) {
            int base = b * per_block + w * 32;
            int lanes = per_block - w * 32 < 32 ? per_block - w * 32 : 32;
            if (lanes > active_lanes) lanes = active_lanes;
            unsigned want[32][K];
            model(in + base, lanes, shuffles && lanes == 32, want);
            for (int l = 0; l < lanes; l++) {
                for (int k = 0; k < (shuffles && lanes == 32 ? K : 3); k++) {
                    unsigned got = out[(size_t)(base + l) * K + k];
                    if (got != want[l][k])
                        fprintf(stderr, "block %d warp %d lane %d result %d: got %u (0x%x), want %u (0x%x)\n", b, w, l,
                                k, got, got, want[l][k], want[l][k]);
                    CHECK_EQ(got, want[l][k]);
                }
            }
        }
    }
    CHECK_OK(rk_buffer_free(bin));
    CHECK_OK(rk_buffer_free(bout));
    free(in);
    free(out);
}

int main(void) {
    setenv("RK_CPU_THREADS", "3", 1);
    rk_context *ctx = cpu_context();
    rk_host_kernel kernels[] = {HOST_KERNEL(warp_ops)};
    rk_module *m = NULL;
    rk_function *fn = NULL;
    CHECK_OK(rk_module_from_host_kernels(ctx, kernels, 1, &m));
    CHECK_OK(rk_module_get_function(m, "warp_ops", &fn));

    run(ctx, fn, 20, RK_DIM3(256, 1, 1), 32);
    run(ctx, fn, 4, RK_DIM3(1024, 1, 1), 32);
    run(ctx, fn, 7, RK_DIM3(16, 4, 2), 32);  /* a warp spans two rows of x */
    run(ctx, fn, 5, RK_DIM3(40, 1, 1), 32);  /* a partial warp of 8 lanes: votes only */
    run(ctx, fn, 6, RK_DIM3(64, 1, 1), 20);  /* lanes 20..31 exit first: they do not vote */

    /* The same warp reduction compiled from source. */
    static const char src[] =
        "RK_KERNEL void warp_sum(const int *in, int *out) {\n"
        "    int i = block_idx_x() * block_dim_x() + thread_idx_x();\n"
        "    int v = in[i];\n"
        "    for (int off = 16; off > 0; off /= 2) v += shfl_down_i32(v, off);\n"
        "    if (lane_id() == 0) out[i / 32] = v;\n"
        "}\n";
    rk_module *cm = NULL;
    rk_function *sum = NULL;
    CHECK_OK(rk_module_compile(ctx, src, NULL, &cm));
    CHECK_OK(rk_module_get_function(cm, "warp_sum", &sum));
    enum { N = 128 * 32 };
    static int in[N], out[N / 32];
    for (int i = 0; i < N; i++) in[i] = i % 1000 - 300;
    rk_buffer *bin = NULL, *bout = NULL;
    CHECK_OK(rk_buffer_alloc(ctx, sizeof in, &bin));
    CHECK_OK(rk_buffer_alloc(ctx, sizeof out, &bout));
    CHECK_OK(rk_copy_to_device(ctx, bin, 0, in, sizeof in, NULL));
    rk_arg args[] = {RK_ARG_BUF(bin), RK_ARG_BUF(bout)};
    rk_launch_desc d = launch_1d(N / 512, 512, args, 2);
    CHECK_OK(rk_launch(sum, &d));
    CHECK_OK(rk_copy_to_host(ctx, out, bout, 0, sizeof out, NULL));
    CHECK_OK(rk_context_synchronize(ctx));
    for (int w = 0; w < N / 32; w++) {
        int want = 0;
        for (int l = 0; l < 32; l++) want += in[w * 32 + l];
        CHECK_EQ(out[w], want);
    }
    CHECK_OK(rk_buffer_free(bin));
    CHECK_OK(rk_buffer_free(bout));
    CHECK_OK(rk_module_destroy(cm));

    CHECK_OK(rk_module_destroy(m));
    CHECK_OK(rk_context_destroy(ctx));
    printf("cpu warps: ok\n");
    return 0;
}
