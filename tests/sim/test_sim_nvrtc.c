/* The generated simulation kernels (rk_sim_persistent, rk_sim_step,
 * rk_sim_command) compile for CUDA with NVRTC, no GPU needed: the heat
 * example's source through rk_sim_generate_source, down to cubins for the
 * H100 and an older GPU, so ptxas checks dsl.h's inline PTX too. A compile
 * error in a user's step comes back with NVRTC's log. Exits 77 where NVRTC
 * cannot be loaded. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cuda/cuda_internal.h"
#include "cuda/nvrtc.h"
#include "heat3d.h"

int main(void) {
    char reason[512];
    if (rk__nvrtc_probe(reason, sizeof reason) != RK_OK) RK_SKIP("NVRTC unavailable: %s", reason);
    heat3d_config cfg = {.device = "cuda"};
    rk_sim_desc desc;
    heat3d_describe(&cfg, &desc);
    char *source = NULL;
    CHECK_OK(rk_sim_generate_source(&desc, &source));

    char *ptx = NULL, *log = NULL;
    size_t size = 0;
    CHECK_OK(rk__nvrtc_compile(source, "heat3d.cu", "compute_90", NULL, 0, &ptx, &size, &log));
    for (const char *entry = "rk_sim_persistent\0rk_sim_step\0rk_sim_command\0"; *entry; entry += strlen(entry) + 1) {
        char want[64];
        snprintf(want, sizeof want, ".entry %s", entry);
        CHECK_STR_CONTAINS(ptx, want);
    }
    CHECK_STR_CONTAINS(ptx, "ld.relaxed.sys.u64"); /* tagged command words from the host's ring */
    CHECK_STR_CONTAINS(ptx, "st.release.sys"); /* answers the host polls */
    CHECK_STR_CONTAINS(ptx, "st.release.gpu.u64"); /* a band's progress, for the bands that wait for it */
    if (log && *log) printf("NVRTC log:\n%s\n", log);
    free(ptx);
    free(log);
    for (const char *arch = "sm_90\0sm_80\0"; *arch; arch += strlen(arch) + 1) {
        char *cubin = NULL;
        CHECK_OK(rk__nvrtc_compile(source, "heat3d.cu", arch, NULL, 0, &cubin, &size, NULL));
        CHECK(size > 64 && memcmp(cubin, "\x7f" "ELF", 4) == 0);
        /* The cubin's parameter records (what launches are checked against on
         * drivers without cuFuncGetParamCount): every field, the scalars, the
         * ring, the board and rows, then each kernel's own. */
        uint32_t sizes[32];
        int state = (int)desc.field_count + 4;
        CHECK_EQ(rk__cuda_cubin_params(cubin, size, "rk_sim_step", sizes, 32), state + 2);
        CHECK_EQ(sizes[state], 4);     /* the command's number */
        CHECK_EQ(sizes[state + 1], 8); /* the steps before */
        CHECK_EQ(rk__cuda_cubin_params(cubin, size, "rk_sim_command", sizes, 32), state + 4);
        CHECK_EQ(rk__cuda_cubin_params(cubin, size, "rk_sim_persistent", sizes, 32), state + 5);
        for (int i = 0; i < state; i++) CHECK_EQ(sizes[i], i + 1 == state ? 4 : 8); /* pointers, then rows */
        printf("heat3d simulation kernels: %s cubin, %zu bytes\n", arch, size);
        free(cubin);
    }

    /* RK_CUDA_LINEINFO=1: the image names source lines (the library's
     * sim_device.c among them), so compute-sanitizer can report them. */
    CHECK(setenv("RK_CUDA_LINEINFO", "1", 1) == 0);
    CHECK_OK(rk__nvrtc_compile(source, "heat3d.cu", "compute_90", NULL, 0, &ptx, &size, NULL));
    CHECK_STR_CONTAINS(ptx, ".loc");
    CHECK_STR_CONTAINS(ptx, "sim_device.c");
    free(ptx);
    CHECK(unsetenv("RK_CUDA_LINEINFO") == 0);
    free(source);

    /* The words of a command on the wire: heat3d's payloads fit 16 bytes,
     * so its kernels read 8-word commands; one larger payload anywhere and
     * every command is 16 words, which must compile too. */
    CHECK_OK(rk_sim_generate_source(&desc, &source));
    CHECK_STR_CONTAINS(source, "#define RK_SIM_WORDS 8");
    free(source);
    rk_sim_command wide[RK_SIM_MAX_COMMANDS];
    CHECK(desc.command_count <= RK_SIM_MAX_COMMANDS);
    memcpy(wide, desc.commands, desc.command_count * sizeof wide[0]);
    wide[0].payload_size = 24;
    const rk_sim_command *narrow = desc.commands;
    desc.commands = wide;
    CHECK_OK(rk_sim_generate_source(&desc, &source));
    CHECK(strstr(source, "#define RK_SIM_WORDS 8") == NULL);
    CHECK_OK(rk__nvrtc_compile(source, "heat3d_wide.cu", "sm_90", NULL, 0, &ptx, &size, NULL));
    free(ptx);
    free(source);
    desc.commands = narrow;

    /* A step that does not compile: NVRTC's log names the problem. */
    desc.source = "RK_DEVICE void heat_step(const rk_sim_state *s, const rk_sim_region *r) { undefined_name; }\n";
    desc.command_count = 0;
    CHECK_OK(rk_sim_generate_source(&desc, &source));
    log = NULL;
    CHECK(rk__nvrtc_compile(source, "bad.cu", "compute_90", NULL, 0, &ptx, &size, &log) == RK_COMPILE_FAILED);
    CHECK(log != NULL);
    CHECK_STR_CONTAINS(log, "undefined_name");
    free(log);
    free(source);
    return 0;
}
