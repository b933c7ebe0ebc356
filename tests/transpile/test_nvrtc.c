/* Every generated CUDA file compiles with NVRTC, without warnings (no GPU
 * needed): each case
 * as PTX for compute_90 and, for a real architecture's limits (registers,
 * shared memory), as an sm_90 cubin; each handler also inside the CUDA
 * backend's ring-kernel template, as the backend assembles it. Skips (77)
 * when NVRTC cannot be loaded. */
#include "cases.h"
#include "check.h"
#include "cuda/cuda_ring_layout.h"
#include "cuda/nvrtc.h"

static void compile(const char *what, const char *source, const char *arch) {
    char *image = NULL, *log = NULL;
    size_t size = 0;
    rk_status s = rk__nvrtc_compile(source, what, arch, NULL, 0, &image, &size, &log);
    if (s != RK_OK) {
        fprintf(stderr, "%s (%s): %s\n%s\n--- source ---\n%s\n", what, arch, rk_status_name(s), log ? log : "", source);
        exit(1);
    }
    CHECK(size > 0);
    /* Generated code compiles without warnings. */
    if (log && strstr(log, "warning")) {
        fprintf(stderr, "%s (%s): NVRTC warns:\n%s\n", what, arch, log);
        exit(1);
    }
    printf("%-22s %-10s %7zu bytes\n", what, arch, size);
    free(image);
    free(log);
}

/* dsl.h's CUDA part itself (what a kernel compiled without the transpiler
 * sees) with the builtins added for issue 21 and RK_BLOCK_SIZE. */
static void dsl_header_directly(void) {
    char *path = tp_case_path("include/ringkernel/dsl.h");
    char *header = rk_test_read_file(path, NULL);
    CHECK(header != NULL);
    static const char kernel[] =
        "\nRK_KERNEL RK_BLOCK_SIZE(32, 2, 1) void k(int *o, float *fo, unsigned *u) {\n"
        "    o[0] = abs_i32(o[1]) + min_i32(1, 2) + max_i32(1, 2) + popcount_u32(3u) + clz_u32(4u) + ctz_u32(8u) +\n"
        "           ffs_u32(0u) + (int)min_u32(1u, 2u) + (int)max_u32(1u, 2u);\n"
        "    u[0] = float_as_uint(fo[0]) + atomic_min_u32(u, 3u) + atomic_max_u32(u, 3u) + atomic_exch_u32(u, 1u) +\n"
        "           atomic_load_u32(u);\n"
        "    o[1] = atomic_load_i32(o) + isnan(fo[0]) + isinf(fo[1]) + isfinite(fo[2]);\n"
        "    fo[0] = uint_as_float(u[1]) + int_as_float(o[2]) + (float)float_as_int(fo[3]) + rsqrtf(fo[1]) + RK_PI_F +\n"
        "            (float)M_PI + ldexpf(fo[2], 3) + (float)lrintf(fo[3]);\n"
        "}\n";
    size_t n = strlen(header) + sizeof kernel;
    char *source = malloc(n);
    snprintf(source, n, "%s%s", header, kernel);
    char *image = NULL, *log = NULL;
    size_t size = 0;
    rk_status s = rk__nvrtc_compile(source, "dsl.h", "compute_90", NULL, 0, &image, &size, &log);
    if (s != RK_OK) fprintf(stderr, "dsl.h under NVRTC: %s\n%s\n", rk_status_name(s), log ? log : "");
    CHECK_OK(s);
    printf("%-22s %-10s %7zu bytes\n", "dsl.h directly", "compute_90", size);
    free(image), free(log), free(source), free(header), free(path);
}

int main(void) {
    char reason[256];
    if (rk__nvrtc_probe(reason, sizeof reason) != RK_OK) RK_SKIP("NVRTC is not available: %s", reason);
    dsl_header_directly();
    for (int i = 0; i < TP_CASE_COUNT; i++) {
        const tp_case *c = &tp_cases[i];
        rk_transpile_result *r = tp_case_transpile(c);
        CHECK(r != NULL);
        const char *cuda = rk_transpile_output(r, NULL);
        compile(c->name, cuda, "compute_90");
        compile(c->name, cuda, "sm_90");
        for (size_t k = 0; k < rk_transpile_kernel_count(r); k++) {
            const rk_transpiled_kernel *kern = rk_transpile_kernel(r, k);
            if (kern->kind != RK_TRANSPILE_HANDLER) continue;
            rk__cuda_ring_layout layout =
                rk__cuda_ring_layout_of(kern->request_size, kern->reply_size, kern->state_size);
            char *ring = NULL;
            CHECK_OK(rk__cuda_ring_source(cuda, kern->name, &layout, &ring));
            char what[128];
            snprintf(what, sizeof what, "%s in ring.cu", c->name);
            compile(what, ring, "compute_90");
            free(ring);
        }
        rk_transpile_result_destroy(r);
    }
    return 0;
}
