/* A kernel's parameters read from its cubin (src/cuda/cuda_params.c), on
 * NVRTC's own output, no GPU needed: the count and each size for kernels
 * of pointers, scalars of 1 to 8 bytes, a struct by value and none; "cannot
 * say" (-1) for PTX, an unknown kernel and a damaged image. Launches check
 * their arguments against this count where the driver has no
 * cuFuncGetParamCount, so it must be exact. Exits 77 without NVRTC. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cuda/cuda_internal.h"
#include "cuda/nvrtc.h"

static const char source[] =
    "struct big { char b[40]; };\n"
    "extern \"C\" __global__ void scale(float *a, float s, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) a[i] *= s;\n"
    "}\n"
    "extern \"C\" __global__ void none() {}\n"
    "extern \"C\" __global__ void mixed(double d, big b, char c, unsigned long long u, short h) {\n"
    "    if (c) *(double *)u = d + b.b[3] + h;\n"
    "}\n"
    "extern \"C\" __global__ void unused(int a, int b, int c) {}\n";

static void expect(const char *image, size_t size, const char *kernel, int count, const uint32_t *sizes) {
    uint32_t got[8] = {0};
    CHECK_EQ(rk__cuda_cubin_params(image, size, kernel, got, 8), count);
    for (int i = 0; i < count; i++) CHECK_EQ(got[i], sizes[i]);
}

int main(void) {
    char reason[512];
    if (rk__nvrtc_probe(reason, sizeof reason) != RK_OK) RK_SKIP("NVRTC unavailable: %s", reason);
    for (const char *arch = "sm_90\0sm_80\0"; *arch; arch += strlen(arch) + 1) {
        char *cubin = NULL;
        size_t size = 0;
        CHECK_OK(rk__nvrtc_compile(source, "params.cu", arch, NULL, 0, &cubin, &size, NULL));
        expect(cubin, size, "scale", 3, (const uint32_t[]){8, 4, 4});
        expect(cubin, size, "none", 0, NULL);
        expect(cubin, size, "mixed", 5, (const uint32_t[]){8, 40, 1, 8, 2});
        expect(cubin, size, "unused", 3, (const uint32_t[]){4, 4, 4}); /* parameters the body never reads count */
        uint32_t sizes[8];
        CHECK_EQ(rk__cuda_cubin_params(cubin, size, "nope", sizes, 8), -1);
        CHECK_EQ(rk__cuda_cubin_params(cubin, 40, "scale", sizes, 8), -1); /* cut short */
        CHECK_EQ(rk__cuda_cubin_params(NULL, 0, "scale", sizes, 8), -1);
        /* A count beyond max still comes back whole; sizes only up to max. */
        CHECK_EQ(rk__cuda_cubin_params(cubin, size, "mixed", sizes, 2), 5);
        CHECK_EQ(sizes[1], 40);
        free(cubin);
    }
    char *ptx = NULL;
    size_t size = 0;
    CHECK_OK(rk__nvrtc_compile(source, "params.cu", "compute_90", NULL, 0, &ptx, &size, NULL));
    uint32_t sizes[8];
    CHECK_EQ(rk__cuda_cubin_params(ptx, size, "scale", sizes, 8), -1); /* PTX: the driver alone can say */
    free(ptx);
    printf("cubin parameter records read for sm_90 and sm_80\n");
    return 0;
}
