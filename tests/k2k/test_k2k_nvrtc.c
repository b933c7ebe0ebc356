/* The CUDA ring kernel around every K2K test handler compiles with NVRTC
 * for sm_90 (no GPU needed): rk_emit (dsl.h) meets its definition in the
 * template's channel code (src/device/cuda/channel.cu), so CI catches a
 * broken device side before the H100 run does. */
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda_ring_layout.h"
#include "cuda/nvrtc.h"
#include "k2k_test.h"

static void compile(const char *name, uint32_t state) {
    rk__cuda_ring_layout l = rk__cuda_ring_layout_of(sizeof(k2k_msg), sizeof(k2k_msg), state);
    char *source = NULL, *image = NULL, *log = NULL;
    size_t size = 0;
    CHECK_OK(rk__cuda_ring_source(channel_handlers_source, name, &l, &source));
    rk_status s = rk__nvrtc_compile(source, "k2k_ring.cu", "sm_90", NULL, 0, &image, &size, &log);
    if (s != RK_OK) fprintf(stderr, "handler %s:\n%s\n", name, log ? log : "(no log)");
    CHECK_OK(s);
    CHECK(size > 0);
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
