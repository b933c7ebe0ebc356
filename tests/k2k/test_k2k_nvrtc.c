/* The CUDA ring kernel around every K2K test handler compiles with NVRTC
 * for sm_90 (no GPU needed): rk_emit (dsl.h) meets its definition in the
 * template's channel code (src/device/cuda/channel.cu), so CI catches a
 * broken device side before the H100 run does. And ptxas keeps the
 * persistent kernel in registers: a spill (ptxas once chose 96 registers
 * for it) halved every K2K stream and the host relay on the H100. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda_ring_layout.h"
#include "cuda/nvrtc.h"
#include "k2k_test.h"

/* Bytes ptxas spilled in rk_ring_persistent, from its -v log; -1 when the
 * log does not say. */
static long persistent_spills(const char *log) {
    const char *f = log ? strstr(log, "Function properties for rk_ring_persistent") : NULL;
    const char *at = f ? strstr(f, " bytes spill stores") : NULL;
    if (!at) return -1;
    const char *num = at;
    while (num > f && num[-1] >= '0' && num[-1] <= '9') num--;
    return num < at ? strtol(num, NULL, 10) : -1;
}

static void compile(const char *name, uint32_t state) {
    rk__cuda_ring_layout l = rk__cuda_ring_layout_of(sizeof(k2k_msg), sizeof(k2k_msg), state);
    char *source = NULL, *image = NULL, *log = NULL;
    size_t size = 0;
    CHECK_OK(rk__cuda_ring_source(channel_handlers_source, name, &l, &source));
    const char *verbose[] = {"--ptxas-options=-v"};
    rk_status s = RK_OK;
    long spills = -1;
    /* Twice at most: on the H100 machine (session 12) one compile of eight
     * came back with an empty log once, which says nothing about spills. */
    for (int attempt = 0; attempt < 2 && spills < 0; attempt++) {
        free(image);
        free(log);
        image = log = NULL;
        s = rk__nvrtc_compile(source, "k2k_ring.cu", "sm_90", verbose, 1, &image, &size, &log);
        if (s != RK_OK) fprintf(stderr, "handler %s:\n%s\n", name, log ? log : "(no log)");
        CHECK_OK(s);
        CHECK(size > 0);
        spills = persistent_spills(log);
        if (spills < 0) {
            int major = 0, minor = 0;
            rk__nvrtc_version(&major, &minor);
            fprintf(stderr, "handler %s (state %u), attempt %d: NVRTC %d.%d gave a %zu-byte log without "
                    "rk_ring_persistent's properties\n", name, state, attempt + 1, major, minor, log ? strlen(log) : 0);
        }
    }
    if (spills != 0) fprintf(stderr, "handler %s (state %u): ptxas log:\n%s\n", name, state, log ? log : "(none)");
    CHECK(spills == 0);
    /* The channel code is in the module, not only declared. */
    CHECK(strstr(source, "rk__emit(unsigned port") != NULL);
    free(source);
    free(image);
    free(log);
}

int main(void) {
    char reason[512];
    if (rk__nvrtc_probe(reason, sizeof reason) != RK_OK) RK_SKIP("%s", reason);
    static const char *const handlers[] = {"stage", "fanout", "sink", "bounce", "wrong_size", "no_port", "crash"};
    for (size_t i = 0; i < sizeof handlers / sizeof handlers[0]; i++) compile(handlers[i], 0);
    compile("stage", 16); /* with state: one message per pass */
    printf("%zu handlers compiled for sm_90, and one with state\n", sizeof handlers / sizeof handlers[0]);
    return 0;
}
