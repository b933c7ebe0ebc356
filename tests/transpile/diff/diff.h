/* Differential testing of the transpiler: one DSL program, several executors,
 * the same inputs, every output buffer compared.
 *
 * Executors (diff_exec.c):
 *   cpu        the DSL source as C on the CPU backend (the reference semantics)
 *   cuda-host  the transpiler's CUDA C++ compiled by g++ against
 *              cuda_host_shim.h and run by the CPU backend's executor
 *   wgsl       the transpiler's WGSL on the WebGPU backend (lavapipe in CI)
 *   cuda-gpu   the transpiler's CUDA C++ on a CUDA device
 *   msl-host   the transpiler's MSL compiled by clang++ against the Metal
 *              shim (tests/metal/shim) and run by the CPU backend's executor
 * An executor that is not present here is skipped with a note; a target that
 * refuses a program with "(WGSL target)" or "(MSL target)" is reported as refused, not failed.
 *
 * A program's launches run in order on the same buffers. Three kinds of
 * launch, after the kind of the entry point:
 *   global   grid and block as given, on every executor (WGSL kernels take
 *            their block from override constants);
 *   stencil  `cells` = nx, ny, nz; the tiled CUDA/WGSL kernels get nx, ny
 *            (, nz) after the arguments, the CPU runs a driver that visits
 *            every cell through dsl_stencil.h;
 *   handler  a driver calls the handler for messages 0..n-1 in order, one
 *            thread: args are the request, reply, state and status (int)
 *            buffers and the message count. */
#ifndef RK_DIFF_H
#define RK_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ringkernel/device.h"

typedef enum diff_type { DT_I8, DT_U8, DT_I16, DT_U16, DT_I32, DT_U32, DT_I64, DT_U64, DT_F32, DT_F64 } diff_type;

size_t diff_type_size(diff_type t);

typedef struct diff_buffer {
    const char *name;
    diff_type type;
    size_t count;
    const void *init; /* count elements, or NULL for zeros */
    bool output;      /* compared after the run */
    bool sorted;      /* compared as a multiset (an order the schedule decides) */
    /* Floats: bit-exact when both are 0; otherwise equal within ulp units in
     * the last place, or within abs_tol (for values that cancel to near 0). */
    uint32_t ulp;
    double abs_tol;
} diff_buffer;

enum { DIFF_MAX_ARGS = 16, DIFF_MAX_LAUNCHES = 8, DIFF_MAX_BUFFERS = 12 };

typedef struct diff_arg {
    int buffer;     /* index into the program's buffers, or -1 for scalar */
    rk_arg scalar;
} diff_arg;

#define DIFF_BUF(i) ((diff_arg){.buffer = (i)})
#define DIFF_SCALAR(a) ((diff_arg){.buffer = -1, .scalar = (a)})

typedef struct diff_launch {
    const char *kernel;
    rk_dim3 grid, block; /* global kernels */
    int cells[3];        /* stencils: nx, ny, nz (nz = 1 in 2-D) */
    diff_arg args[DIFF_MAX_ARGS];
    size_t arg_count;
} diff_launch;

typedef struct diff_program {
    const char *name;
    const char *source; /* DSL text, as a user writes it (includes dsl.h itself) */
    diff_buffer buffers[DIFF_MAX_BUFFERS];
    size_t buffer_count;
    diff_launch launches[DIFF_MAX_LAUNCHES];
    size_t launch_count;
} diff_program;

typedef enum diff_exec_id { DIFF_CPU, DIFF_CUDA_HOST, DIFF_WGSL, DIFF_CUDA_GPU, DIFF_MSL_HOST, DIFF_EXEC_COUNT } diff_exec_id;

const char *diff_exec_name(diff_exec_id id);

typedef enum diff_outcome {
    DIFF_RAN,         /* outputs filled */
    DIFF_REFUSED,     /* the target refuses the program with a diagnostic naming it */
    DIFF_UNAVAILABLE, /* the executor is not present on this machine */
    DIFF_FAILED,      /* transpile/compile/launch failed where it should not: a bug */
} diff_outcome;

typedef struct diff_env diff_env;

/* Opens every executor that is present; prints one line per missing one.
 * private_cache: compiled programs go to a scratch directory removed at
 * close (random programs), else to $RK_CACHE_DIR (the corpus: a second run
 * compiles nothing). */
diff_env *diff_env_open(bool quiet, bool private_cache);
void diff_env_close(diff_env *env);
bool diff_exec_present(const diff_env *env, diff_exec_id id);

/* Runs the program. On DIFF_RAN, outputs[i] (malloc'ed, caller frees) holds
 * buffer i's final contents for every buffer; on anything else `why` says
 * what happened. */
diff_outcome diff_run(diff_env *env, diff_exec_id id, const diff_program *p, void *outputs[], char *why,
                      size_t why_size);

/* Compares buffer b of got against want. Prints the first few differences
 * (program, executor, buffer, index, both values) to stderr when !quiet.
 * Returns the number of differing elements. */
size_t diff_compare_buffer(const diff_program *p, size_t b, const char *got_name, const void *got,
                           const char *want_name, const void *want, bool quiet);

/* Every output buffer of every executor that ran against the cpu executor (or
 * against expected[] when non-NULL). Returns the number of differences. */
size_t diff_compare_all(const diff_program *p, void *results[DIFF_EXEC_COUNT][DIFF_MAX_BUFFERS],
                        const diff_outcome outcome[DIFF_EXEC_COUNT], void *expected[], bool quiet);

void diff_free_outputs(const diff_program *p, void *outputs[]);

/* Mutation tests of the MSL emitter: from now on the msl-host executor
 * replaces every `find` in the MSL with `replace` before compiling it
 * (NULL: no more mutation). The strings must outlive the runs. */
void diff_env_set_msl_mutation(diff_env *env, const char *find, const char *replace);

#endif
