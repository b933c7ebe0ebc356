/* bench/bench_transpile.c carries copies of the examples (rk needs no files
 * at run time): they must equal examples/kernels/. Also runs the benchmark
 * function briefly; it checks results, not time. */
#include "bench_transpile.h"
#include "cases.h"
#include "check.h"

const char *rk_bench_transpile_kernel_source(size_t index);

int main(void) {
    CHECK_EQ(rk_bench_transpile_kernel_count(), 4);
    for (size_t i = 0; i < rk_bench_transpile_kernel_count(); i++) {
        const char *name = rk_bench_transpile_kernel_name(i);
        char rel[256];
        snprintf(rel, sizeof rel, "examples/kernels/%s.c", name);
        char *path = tp_case_path(rel);
        char *text = rk_test_read_file(path, NULL);
        CHECK(text != NULL);
        if (strcmp(text, rk_bench_transpile_kernel_source(i)) != 0) {
            fprintf(stderr, "bench/bench_transpile.c's copy of %s differs from %s\n", name, rel);
            return 1;
        }
        free(text);
        free(path);
        rk_bench_transpile_opts o = {.kernel = name, .iterations = 50};
        rk_bench_transpile_result r;
        CHECK_OK(rk_bench_transpile(&o, &r));
        CHECK_EQ(r.errors, 0);
        CHECK_EQ(r.iterations, 50);
        CHECK_GT(r.output_bytes, r.source_bytes / 2);
        CHECK(r.min_us <= r.p50_us && r.p50_us <= r.p99_us && r.p99_us <= r.max_us);
        printf("%-13s %-8s %zu -> %zu bytes (timing is rk bench's job)\n", r.kernel, r.kind, r.source_bytes, r.output_bytes);
    }
    rk_bench_transpile_opts bad = {.kernel = "nope"};
    rk_bench_transpile_result r;
    CHECK_STATUS(rk_bench_transpile(&bad, &r), RK_INVALID_ARGUMENT);
    return 0;
}
