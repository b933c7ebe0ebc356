/* Transpiler benchmark as a reusable function: times rk_transpile on a
 * typical kernel (the examples, built in) and returns the figures; printing
 * is the caller's job (`rk bench transpile`). Nothing here asserts on time. */
#ifndef RK_BENCH_TRANSPILE_H
#define RK_BENCH_TRANSPILE_H

#include <stddef.h>
#include <stdint.h>

#include "ringkernel/transpile.h"

typedef struct rk_bench_transpile_opts {
    const char *kernel;   /* one of rk_bench_transpile_kernel_name(); NULL = "laplacian" */
    uint32_t iterations;  /* timed transpilations; 0 = 2000 (after 20 untimed warm-up runs) */
} rk_bench_transpile_opts;

typedef struct rk_bench_transpile_result {
    const char *kernel;
    const char *kind;          /* "global", "stencil", "handler" */
    uint32_t iterations;
    size_t source_bytes;       /* the kernel's source, without the built-in headers */
    size_t output_bytes;       /* the CUDA produced */
    double seconds;            /* all timed iterations */
    double mean_us, p50_us, p99_us, min_us, max_us; /* per transpilation: source text to CUDA text */
    uint64_t errors;           /* transpilations that failed or changed output: must be 0 */
} rk_bench_transpile_result;

/* The built-in kernels: vector_scale, laplacian, heat3d, poly_handler. */
size_t rk_bench_transpile_kernel_count(void);
const char *rk_bench_transpile_kernel_name(size_t index);

/* opts may be NULL. RK_INVALID_ARGUMENT for an unknown kernel name. */
rk_status rk_bench_transpile(const rk_bench_transpile_opts *opts, rk_bench_transpile_result *out);

#endif
