/* rk_bench_transpile: wall time of rk_transpile, source text to CUDA text,
 * for the examples (copied here from examples/kernels/ so rk needs no files;
 * tests/transpile checks they still match the originals). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_transpile.h"

static const char SRC_VECTOR_SCALE[] =
    "/* The spec's first example: scale a vector in place.\n"
    " * On the CPU this is plain C; `rk transpile --target cuda` makes it a CUDA kernel. */\n"
    "#include <ringkernel/dsl.h>\n"
    "\n"
    "RK_KERNEL void vector_scale(float *data, float scale, int n) {\n"
    "    int idx = block_idx_x() * block_dim_x() + thread_idx_x();\n"
    "    if (idx >= n) return;\n"
    "    data[idx] = data[idx] * scale;\n"
    "}\n";

static const char SRC_LAPLACIAN[] =
    "/* The spec's stencil example: the 5-point Laplacian of a 2-D grid.\n"
    " *\n"
    " * A stencil kernel takes an rk_grid_pos and reads neighbours through it.\n"
    " * On the CPU, rk_stencil_run (dsl_stencil.h) calls it once per cell; the\n"
    " * transpiler turns it into a tiled CUDA kernel that loads each block's tile\n"
    " * and halo into shared memory. Cells outside the grid read as the nearest\n"
    " * edge cell (clamp-to-edge), on both. */\n"
    "#include <ringkernel/dsl_stencil.h>\n"
    "\n"
    "RK_KERNEL void laplacian(const float *input, float *output, rk_grid_pos p) {\n"
    "    float lap = rk_north(p, input) + rk_south(p, input) + rk_east(p, input) + rk_west(p, input) -\n"
    "                4.0f * input[rk_pos_idx(p)];\n"
    "    output[rk_pos_idx(p)] = lap;\n"
    "}\n";

static const char SRC_HEAT3D[] =
    "/* A 3-D stencil: one explicit step of heat diffusion with the 7-point\n"
    " * Laplacian, out = in + alpha * (sum of the six neighbours - 6 * in).\n"
    " * rk_up/rk_down make it 3-D; transpiled with the default 8x8x8 tile, or\n"
    " * e.g. `rk transpile --tile 16x8x4 heat3d.c`. */\n"
    "#include <ringkernel/dsl_stencil.h>\n"
    "\n"
    "RK_KERNEL void heat3d(const float *in, float *out, float alpha, rk_grid_pos p) {\n"
    "    float c = in[rk_pos_idx(p)];\n"
    "    float sum = rk_west(p, in) + rk_east(p, in) + rk_north(p, in) + rk_south(p, in) + rk_down(p, in) + rk_up(p, in);\n"
    "    out[rk_pos_idx(p)] = c + alpha * (sum - 6.0f * c);\n"
    "}\n";

static const char SRC_POLY_HANDLER[] =
    "/* A ring-kernel handler: each request carries a polynomial (up to degree 7)\n"
    " * and a point; the reply is the polynomial's value and slope there.\n"
    " *\n"
    " * On a GPU many lanes run the handler at once, so the state shared by all\n"
    " * messages is only changed with atomics. Request, reply and state are plain\n"
    " * structs whose layout is the same on the host and the device; the\n"
    " * transpiler checks it with static_asserts. Returning a negative value marks\n"
    " * the message as failed (its reply is still delivered). */\n"
    "#include <ringkernel/dsl.h>\n"
    "\n"
    "enum { POLY_MAX_DEGREE = 7 };\n"
    "\n"
    "typedef struct PolyRequest {\n"
    "    uint32_t id;\n"
    "    uint32_t degree;\n"
    "    float x;\n"
    "    float coeff[POLY_MAX_DEGREE + 1]; /* coeff[i] multiplies x^i */\n"
    "} PolyRequest;\n"
    "\n"
    "typedef struct PolyReply {\n"
    "    uint32_t id;\n"
    "    float value;\n"
    "    float slope;\n"
    "    int32_t status; /* 0, or -1 for a degree above POLY_MAX_DEGREE */\n"
    "} PolyReply;\n"
    "\n"
    "typedef struct PolyState {\n"
    "    uint64_t handled; /* messages seen */\n"
    "    uint64_t id_sum;  /* sum of their ids, a cheap check that none was lost */\n"
    "} PolyState;\n"
    "\n"
    "/* Horner's rule for the value and the derivative together. */\n"
    "RK_DEVICE void horner(const float *coeff, int degree, float x, float *value, float *slope) {\n"
    "    float v = 0.0f, d = 0.0f;\n"
    "    for (int i = degree; i >= 0; i--) {\n"
    "        d = d * x + v;\n"
    "        v = v * x + coeff[i];\n"
    "    }\n"
    "    *value = v;\n"
    "    *slope = d;\n"
    "}\n"
    "\n"
    "RK_HANDLER int poly_eval(const PolyRequest *req, PolyReply *reply, PolyState *state) {\n"
    "    atomic_add_u64(&state->handled, 1);\n"
    "    atomic_add_u64(&state->id_sum, req->id);\n"
    "    reply->id = req->id;\n"
    "    if (req->degree > POLY_MAX_DEGREE) {\n"
    "        reply->value = reply->slope = 0.0f;\n"
    "        reply->status = -1;\n"
    "        return -1;\n"
    "    }\n"
    "    horner(req->coeff, (int)req->degree, req->x, &reply->value, &reply->slope);\n"
    "    reply->status = 0;\n"
    "    return 0;\n"
    "}\n";

static const struct {
    const char *name;
    const char *source;
} kernels[] = {
    {"vector_scale", SRC_VECTOR_SCALE},
    {"laplacian", SRC_LAPLACIAN},
    {"heat3d", SRC_HEAT3D},
    {"poly_handler", SRC_POLY_HANDLER},
};
enum { KERNELS = sizeof kernels / sizeof kernels[0], WARMUP = 20, DEFAULT_ITERATIONS = 2000 };

size_t rk_bench_transpile_kernel_count(void) { return KERNELS; }

const char *rk_bench_transpile_kernel_name(size_t index) { return index < KERNELS ? kernels[index].name : NULL; }

/* The built-in copy of an example, for the test that keeps them in step. */
const char *rk_bench_transpile_kernel_source(size_t index);
const char *rk_bench_transpile_kernel_source(size_t index) { return index < KERNELS ? kernels[index].source : NULL; }

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

rk_status rk_bench_transpile(const rk_bench_transpile_opts *opts, rk_bench_transpile_result *out) {
    if (!out) return RK_NULL_ARGUMENT;
    const char *want = opts && opts->kernel ? opts->kernel : "laplacian";
    size_t k = 0;
    while (k < KERNELS && strcmp(kernels[k].name, want) != 0) k++;
    if (k == KERNELS) return RK_INVALID_ARGUMENT;
    uint32_t iterations = opts && opts->iterations ? opts->iterations : DEFAULT_ITERATIONS;
    double *samples = malloc(sizeof *samples * iterations);
    if (!samples) return RK_OUT_OF_MEMORY;

    memset(out, 0, sizeof *out);
    out->kernel = kernels[k].name;
    out->iterations = iterations;
    out->source_bytes = strlen(kernels[k].source);
    /* What a caller that transpiles at run time does: source text in, CUDA text out. */
    rk_transpile_desc desc = {.source = kernels[k].source, .path = kernels[k].name, .no_file_system = true,
                              .target = RK_TARGET_CUDA};
    char *first = NULL;
    for (uint32_t i = 0; i < WARMUP + iterations; i++) {
        double t0 = now_us();
        rk_transpile_result *r = NULL;
        rk_status s = rk_transpile(&desc, &r);
        double t1 = now_us();
        if (s != RK_OK) {
            out->errors++;
        } else if (!first) {
            first = strdup(rk_transpile_output(r, &out->output_bytes));
            out->kind = rk_transpile_kind_name(rk_transpile_kernel(r, 0)->kind);
        } else if (strcmp(first, rk_transpile_output(r, NULL)) != 0) {
            out->errors++;
        }
        rk_transpile_result_destroy(r);
        if (i >= WARMUP) samples[i - WARMUP] = t1 - t0;
    }
    free(first);
    double sum = 0;
    for (uint32_t i = 0; i < iterations; i++) sum += samples[i];
    qsort(samples, iterations, sizeof *samples, compare_doubles);
    out->seconds = sum / 1e6;
    out->mean_us = sum / iterations;
    out->min_us = samples[0];
    out->max_us = samples[iterations - 1];
    out->p50_us = samples[iterations / 2];
    out->p99_us = samples[(size_t)((double)iterations * 0.99) < iterations ? (size_t)((double)iterations * 0.99) : iterations - 1];
    if (!out->kind) out->kind = "?";
    free(samples);
    return out->errors ? RK_INTERNAL : RK_OK;
}
