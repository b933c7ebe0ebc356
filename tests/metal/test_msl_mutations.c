/* Mutations of the MSL emitter's output must be caught: the same program
 * runs on the cpu executor and, through the msl-host executor, as MSL with
 * one edit (diff_env_set_msl_mutation):
 *   - a missing threadgroup barrier in a stencil (the tile is read before
 *     the other threads of the threadgroup have loaded it): the results
 *     differ from the CPU's;
 *   - a missing barrier in a threadgroup reduction: the results differ;
 *   - a threadgroup pointer passed where a device pointer is expected, and
 *     a write through a pointer into constant memory: clang++ rejects the
 *     MSL against the shim, as Metal would.
 * Each program first runs unmutated and must match the CPU. Skips (77)
 * without clang++. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "diff.h"

enum { NX = 37, NY = 29, N = NX * NY, GROUPS = 8, BLOCK = 64 };

static const char stencil_src[] =
    "#include <ringkernel/dsl_stencil.h>\n"
    "RK_KERNEL void smooth(const float *in, float *out, rk_grid_pos p) {\n"
    "    out[rk_pos_idx(p)] = 0.5f * rk_at(p, in, 0, 0) + 0.125f * (rk_north(p, in) + rk_south(p, in) +\n"
    "                         rk_east(p, in) + rk_west(p, in));\n"
    "}\n";

static const char reduce_src[] =
    "#include <ringkernel/dsl.h>\n"
    "static void add_into(int *slot, int v) { *slot += v; }\n"
    "RK_KERNEL void block_sums(const int *in, int *out) {\n"
    "    RK_SHARED int part[64];\n"
    "    int t = thread_idx_x();\n"
    "    part[t] = in[block_idx_x() * 64 + t];\n"
    "    sync_threads();\n"
    "    for (int s = 32; s > 0; s /= 2) {\n"
    "        if (t < s) add_into(&part[t], part[t + s]);\n"
    "        sync_threads();\n"
    "    }\n"
    "    if (t == 0) out[block_idx_x()] = part[0];\n"
    "}\n";

static const char table_src[] =
    "#include <ringkernel/dsl.h>\n"
    "static const int weights[4] = {1, 2, 3, 4};\n"
    "static int pick(const int *w, int i) { return w[i & 3]; }\n"
    "RK_KERNEL void weigh(const int *in, int *out, int n) {\n"
    "    int i = block_idx_x() * block_dim_x() + thread_idx_x();\n"
    "    if (i < n) out[i] = in[i] * pick(weights, i);\n"
    "}\n";

static float fin[N];
static int iin[GROUPS * BLOCK];

static diff_program stencil_program(void) {
    diff_program p = {.name = "smooth.c", .source = stencil_src, .buffer_count = 2, .launch_count = 1};
    p.buffers[0] = (diff_buffer){.name = "in", .type = DT_F32, .count = N, .init = fin};
    p.buffers[1] = (diff_buffer){.name = "out", .type = DT_F32, .count = N, .output = true, .ulp = 2};
    p.launches[0] = (diff_launch){.kernel = "smooth", .cells = {NX, NY, 1}, .args = {DIFF_BUF(0), DIFF_BUF(1)}, .arg_count = 2};
    return p;
}

static diff_program global_program(const char *name, const char *src, const char *kernel, bool with_n) {
    diff_program p = {.name = name, .source = src, .buffer_count = 2, .launch_count = 1};
    p.buffers[0] = (diff_buffer){.name = "in", .type = DT_I32, .count = GROUPS * BLOCK, .init = iin};
    p.buffers[1] = (diff_buffer){.name = "out", .type = DT_I32, .count = GROUPS * BLOCK, .output = true};
    p.launches[0] = (diff_launch){.kernel = kernel, .grid = {GROUPS, 1, 1}, .block = {BLOCK, 1, 1},
                                  .args = {DIFF_BUF(0), DIFF_BUF(1), DIFF_SCALAR(RK_ARG_INT(GROUPS * BLOCK))},
                                  .arg_count = with_n ? 3 : 2};
    return p;
}

/* Runs p on cpu and msl-host (mutated by find -> replace, or not when find
 * is NULL); returns the number of elements that differ, or -1 when msl-host
 * did not run (why says what happened). */
static long run(diff_env *env, const diff_program *p, const char *find, const char *replace, char *why, size_t size) {
    void *want[DIFF_MAX_BUFFERS] = {0}, *got[DIFF_MAX_BUFFERS] = {0};
    CHECK_EQ(diff_run(env, DIFF_CPU, p, want, why, size), DIFF_RAN);
    diff_env_set_msl_mutation(env, find, replace);
    diff_outcome o = diff_run(env, DIFF_MSL_HOST, p, got, why, size);
    diff_env_set_msl_mutation(env, NULL, NULL);
    long bad = -1;
    if (o == DIFF_RAN) {
        bad = 0;
        for (size_t b = 0; b < p->buffer_count; b++)
            if (p->buffers[b].output) bad += (long)diff_compare_buffer(p, b, "msl-host", got[b], "cpu", want[b], true);
        diff_free_outputs(p, got);
    }
    diff_free_outputs(p, want);
    return bad;
}

int main(void) {
    diff_env *env = diff_env_open(true, true);
    CHECK(env != NULL);
    if (!diff_exec_present(env, DIFF_MSL_HOST)) {
        printf("SKIP: the msl-host executor needs clang++\n");
        diff_env_close(env);
        return 77;
    }
    for (int i = 0; i < N; i++) fin[i] = (float)((i * 7919) % 1000) / 100.0f;
    for (int i = 0; i < GROUPS * BLOCK; i++) iin[i] = (i * 31) % 97 - 40;
    static char why[16384];

    diff_program st = stencil_program();
    CHECK_EQ(run(env, &st, NULL, NULL, why, sizeof why), 0);
    long bad = run(env, &st, "metal::threadgroup_barrier(metal::mem_flags::mem_threadgroup);", "", why, sizeof why);
    printf("stencil without its tile barrier: %ld of %d cells differ from the CPU\n", bad, N);
    CHECK_GT(bad, 0);

    diff_program red = global_program("block_sums.c", reduce_src, "block_sums", false);
    CHECK_EQ(run(env, &red, NULL, NULL, why, sizeof why), 0);
    bad = run(env, &red,
              "metal::threadgroup_barrier(metal::mem_flags::mem_device | metal::mem_flags::mem_threadgroup);", "",
              why, sizeof why);
    printf("reduction without its barriers: %ld block sums differ from the CPU\n", bad);
    CHECK_GT(bad, 0);

    /* The helper's pointer into threadgroup memory, declared as a device pointer. */
    bad = run(env, &red, "add_into(threadgroup int *slot", "add_into(device int *slot", why, sizeof why);
    CHECK_EQ(bad, -1);
    CHECK_STR_CONTAINS(why, "no matching function for call to 'add_into'");
    printf("threadgroup pointer where a device pointer is expected: rejected\n");

    /* A pointer into the constant table, declared writable and written. */
    diff_program tab = global_program("weigh.c", table_src, "weigh", true);
    CHECK_EQ(run(env, &tab, NULL, NULL, why, sizeof why), 0);
    bad = run(env, &tab, "return w[i & 3];", "return (w[i & 3] = 0);", why, sizeof why);
    CHECK_EQ(bad, -1);
    CHECK_STR_CONTAINS(why, "read-only");
    printf("write through a pointer into constant memory: rejected\n");
    bad = run(env, &tab, "pick(constant int *w", "pick(device const int *w", why, sizeof why);
    CHECK_EQ(bad, -1);
    CHECK_STR_CONTAINS(why, "no matching function for call to 'pick'");
    printf("constant table passed where a device pointer is expected: rejected\n");

    diff_env_close(env);
    return 0;
}
