/* The wave showcase's simulation compiles for CUDA with NVRTC (no GPU
 * needed): the full source rk_sim generates for it (the wave's physics,
 * the library's kernels, dsl.h's CUDA branch), down to cubins for the H100
 * and an older GPU so that ptxas checks the inline PTX. Both sources the
 * wave makes on CUDA: the persistent one, whose 512-thread blocks bound the
 * kernel's registers, and the traditional one (256). Exits 77 where NVRTC
 * cannot be loaded. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cuda/nvrtc.h"
#include "wave_sim.h"

static void compile(wave_pattern pattern, bool bounded) {
    wave_config cfg = {.device = "cuda", .pattern = pattern};
    char *source = NULL;
    rk_status s = wave_generate_source(&cfg, &source);
    if (s != RK_OK) fprintf(stderr, "%s\n", wave_last_error());
    CHECK_OK(s);
    CHECK_STR_CONTAINS(source, "wave_advance"); /* the wave's step, inside the library's kernels */

    char *ptx = NULL, *log = NULL;
    size_t size = 0;
    CHECK_OK(rk__nvrtc_compile(source, "wave.cu", "compute_90", NULL, 0, &ptx, &size, &log));
    for (const char *entry = "rk_sim_persistent\0rk_sim_step\0rk_sim_command\0"; *entry; entry += strlen(entry) + 1) {
        char want[64];
        snprintf(want, sizeof want, ".entry %s", entry);
        CHECK_STR_CONTAINS(ptx, want);
    }
    CHECK_STR_CONTAINS(ptx, "ld.relaxed.sys.u64"); /* tagged command words from the host's ring */
    CHECK_STR_CONTAINS(ptx, "st.release.sys");     /* answers the host polls */
    CHECK_STR_CONTAINS(ptx, "st.release.gpu.u64"); /* a band's progress, for the bands that wait for it */
    /* The persistent kernel's registers bounded for its 512-thread blocks. */
    CHECK((strstr(ptx, ".maxntid 512") != NULL) == bounded);
    if (log && *log) printf("NVRTC log:\n%s\n", log);
    free(ptx);
    free(log);

    /* A cubin for the H100 and one for an older GPU: ptxas accepts the inline PTX. */
    for (const char *arch = "sm_90\0sm_80\0"; *arch; arch += strlen(arch) + 1) {
        char *cubin = NULL;
        CHECK_OK(rk__nvrtc_compile(source, "wave.cu", arch, NULL, 0, &cubin, &size, NULL));
        CHECK(size > 64 && memcmp(cubin, "\x7f" "ELF", 4) == 0);
        printf("wave simulation, %s: %s cubin, %zu bytes\n", wave_pattern_name(pattern), arch, size);
        free(cubin);
    }
    free(source);
}

int main(void) {
    char reason[512];
    if (rk__nvrtc_probe(reason, sizeof reason) != RK_OK) RK_SKIP("NVRTC unavailable: %s", reason);
    compile(WAVE_PERSISTENT, true);
    compile(WAVE_TRADITIONAL, false);
    return 0;
}
