/* rk bench groups "cuda" and "transpile": the functions of bench/bench_cuda.h
 * and bench/bench_transpile.h when those exist in this tree. */
#include <stdio.h>

#include "bench_report.h"
#include "cli.h"

int bench_group_cuda(const bench_config *cfg, bench_report *rep, bool requested) {
    (void)cfg, (void)rep;
    if (requested) fprintf(stderr, "rk bench: the CUDA benchmarks are not built into this rk\n");
    return requested ? RK_EXIT_UNAVAILABLE : RK_EXIT_OK;
}

int bench_group_transpile(const bench_config *cfg, bench_report *rep, bool requested) {
    (void)cfg, (void)rep;
    if (requested) fprintf(stderr, "rk bench: the transpiler benchmarks are not built into this rk\n");
    return requested ? RK_EXIT_UNAVAILABLE : RK_EXIT_OK;
}
