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

int main(void) {
    char reason[256];
    if (rk__nvrtc_probe(reason, sizeof reason) != RK_OK) RK_SKIP("NVRTC is not available: %s", reason);
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
