/* The wave showcase's kernels compile for CUDA with NVRTC (no GPU needed):
 * the same source the CPU runs, dsl.h's CUDA branch (system-scope relaxed
 * words, GPU-scope acquire and release) included, down to a cubin so ptxas checks the inline PTX.
 * Exits 77 where NVRTC cannot be loaded. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cuda/nvrtc.h"
#include "wave_sim.h"

int main(void) {
    char reason[512];
    if (rk__nvrtc_probe(reason, sizeof reason) != RK_OK) RK_SKIP("NVRTC unavailable: %s", reason);
    const char *source = wave_kernel_source();
    CHECK(source != NULL);

    char *ptx = NULL, *log = NULL;
    size_t size = 0;
    CHECK_OK(rk__nvrtc_compile(source, "wave.cu", "compute_90", NULL, 0, &ptx, &size, &log));
    for (const char *entry = "wave_persistent\0wave_step\0wave_inject\0"; *entry; entry += strlen(entry) + 1) {
        char want[64];
        snprintf(want, sizeof want, ".entry %s", entry);
        CHECK_STR_CONTAINS(ptx, want);
    }
    CHECK_STR_CONTAINS(ptx, "ld.relaxed.sys.u64"); /* reading tagged command words (host ring, log) */
    CHECK_STR_CONTAINS(ptx, "st.relaxed.sys.u64"); /* tagged replies the host polls, the log */
    CHECK_STR_CONTAINS(ptx, "st.release.gpu.u64"); /* a band publishes its progress */
    CHECK_STR_CONTAINS(ptx, "ld.acquire.gpu.u64"); /* its neighbours read it */
    CHECK(strstr(ptx, "membar.sys") == NULL && strstr(ptx, "fence.sc.sys") == NULL); /* no system-wide fence */
    if (log && *log) printf("NVRTC log:\n%s\n", log);
    free(ptx);
    free(log);

    /* A cubin for the H100 and one for an older GPU: ptxas accepts the inline PTX. */
    for (const char *arch = "sm_90\0sm_80\0"; *arch; arch += strlen(arch) + 1) {
        char *cubin = NULL;
        CHECK_OK(rk__nvrtc_compile(source, "wave.cu", arch, NULL, 0, &cubin, &size, NULL));
        CHECK(size > 64 && memcmp(cubin, "\x7f" "ELF", 4) == 0);
        printf("wave kernels: %s cubin, %zu bytes\n", arch, size);
        free(cubin);
    }
    return 0;
}
