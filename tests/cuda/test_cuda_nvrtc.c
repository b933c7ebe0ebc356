/* NVRTC compiles without a GPU: PTX and cubins, the embedded dsl.h, and
 * compile errors that come back with the compiler's log. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cuda/nvrtc.h"
#include "cuda_test_util.h"

static const char good[] =
    "#include \"ringkernel/dsl.h\"\n"
    "RK_KERNEL void scale(float *data, float factor, int n) {\n"
    "    int i = block_idx_x() * block_dim_x() + thread_idx_x();\n"
    "    if (i < n) data[i] *= factor;\n"
    "}\n";

static const char bad[] =
    "extern \"C\" __global__ void broken(int *p) {\n"
    "    p[0] = undeclared_name;\n"
    "}\n";

int main(void) {
    cuda_test_require_nvrtc();
    int major = 0, minor = 0;
    CHECK_OK(rk__nvrtc_version(&major, &minor));
    CHECK_GE(major, 11);

    /* PTX for a virtual architecture. */
    char *ptx = NULL, *log = NULL;
    size_t size = 0;
    CHECK_OK(rk__nvrtc_compile(good, "good.cu", "compute_90", NULL, 0, &ptx, &size, &log));
    CHECK(ptx != NULL && log != NULL);
    CHECK_EQ(strlen(ptx), size);
    CHECK_STR_CONTAINS(ptx, ".entry scale");
    CHECK_STR_CONTAINS(ptx, ".target sm_90");
    free(ptx);
    free(log);

    /* A cubin for a real architecture, with options passed through. */
    const char *options[] = {"-DUNUSED=1", "-lineinfo"};
    char *cubin = NULL;
    CHECK_OK(rk__nvrtc_compile(good, NULL, "sm_90", options, 2, &cubin, &size, NULL));
    CHECK_GT(size, 64);
    CHECK(memcmp(cubin, "\x7f" "ELF", 4) == 0);
    free(cubin);

    /* A compile error: the status, the log through log_out and rk_last_error. */
    char *out = NULL;
    CHECK_STATUS(rk__nvrtc_compile(bad, "bad.cu", "compute_90", NULL, 0, &out, &size, &log), RK_COMPILE_FAILED);
    CHECK(out == NULL);
    CHECK_STR_CONTAINS(log, "undeclared_name");
    CHECK_STR_CONTAINS(log, "bad.cu");
    CHECK_STR_CONTAINS(rk_last_error(), "undeclared_name");
    free(log);

    /* Bad arguments are refused with a reason. */
    CHECK_STATUS(rk__nvrtc_compile(good, NULL, "gfx90a", NULL, 0, &out, &size, NULL), RK_INVALID_ARGUMENT);
    CHECK_STATUS(rk__nvrtc_compile(NULL, NULL, "compute_90", NULL, 0, &out, &size, NULL), RK_NULL_ARGUMENT);
    CHECK_STATUS(rk__nvrtc_compile(good, NULL, "compute_90", NULL, 1, &out, &size, NULL), RK_NULL_ARGUMENT);
    return 0;
}
