/* The embedded ring-kernel template compiles with NVRTC around sample
 * handlers (no GPU needed), so a broken template fails CI; handlers with
 * mismatched sizes or errors are refused with a useful log. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cuda/cuda_ring_layout.h"
#include "cuda/nvrtc.h"
#include "cuda_test_util.h"

static const char echo_handler[] =
    "typedef struct Req { unsigned int v[16]; } Req;\n"
    "typedef struct Resp { unsigned int v[16]; } Resp;\n"
    "typedef struct State { unsigned long long count; } State;\n"
    "RK_HANDLER int echo(const Req *req, Resp *resp, State *state) {\n"
    "    for (int i = 0; i < 16; i++) resp->v[i] = req->v[i] * 3u + 1u;\n"
    "    atomic_add_u64(&state->count, 1);\n"
    "    return req->v[0] == 0xdeadu ? -7 : 0;\n"
    "}\n";

static const char odd_sizes_handler[] =
    "typedef struct Req { unsigned char b[5]; } Req;\n"
    "RK_HANDLER int tiny(const Req *req, unsigned char *resp, void *state) {\n"
    "    (void)state;\n"
    "    resp[0] = req->b[4];\n"
    "    return 0;\n"
    "}\n";

static const char error_handler[] =
    "RK_HANDLER int broken(const int *req, int *resp, void *state) {\n"
    "    *resp = *req + missing_variable;\n"
    "    return 0;\n"
    "}\n";

static char *compile(const char *handler, const char *name, uint32_t msg, uint32_t reply, uint32_t state,
                     rk_status expect, char **log) {
    rk__cuda_ring_layout l = rk__cuda_ring_layout_of(msg, reply, state);
    char *source = NULL;
    CHECK_OK(rk__cuda_ring_source(handler, name, &l, &source));
    char *image = NULL;
    size_t size = 0;
    CHECK_STATUS(rk__nvrtc_compile(source, "ring_kernel.cu", "sm_90", NULL, 0, &image, &size, log), expect);
    free(source);
    return image;
}

int main(void) {
    cuda_test_require_nvrtc();
    char *log = NULL;

    /* 64-byte messages and replies, state, atomics: both kernels are there. */
    char *image = compile(echo_handler, "echo", 64, 64, 8, RK_OK, &log);
    free(image);
    free(log);
    rk__cuda_ring_layout l = rk__cuda_ring_layout_of(64, 64, 8);
    char *source = NULL;
    CHECK_OK(rk__cuda_ring_source(echo_handler, "echo", &l, &source));
    char *ptx = NULL;
    size_t size = 0;
    CHECK_OK(rk__nvrtc_compile(source, "ring_kernel.cu", "compute_90", NULL, 0, &ptx, &size, NULL));
    CHECK_STR_CONTAINS(ptx, ".entry rk_ring_persistent");
    CHECK_STR_CONTAINS(ptx, ".entry rk_ring_batch");
    /* The queue words are read and written whole, 16 bytes at a time. */
    CHECK_STR_CONTAINS(ptx, "ld.volatile.global.v2.u64");
    CHECK_STR_CONTAINS(ptx, "st.volatile.global.v2.u64");
    free(ptx);
    free(source);

    /* Odd sizes, a void state and no reply type of its own. */
    image = compile(odd_sizes_handler, "tiny", 5, 1, 0, RK_OK, NULL);
    free(image);

    /* A request type larger than message_size is refused at compile time. */
    compile(echo_handler, "echo", 32, 64, 8, RK_COMPILE_FAILED, &log);
    CHECK_STR_CONTAINS(log, "larger than the kernel's message_size");
    free(log);

    /* Errors point at the handler's own line. */
    compile(error_handler, "broken", 4, 4, 0, RK_COMPILE_FAILED, &log);
    CHECK_STR_CONTAINS(log, "missing_variable");
    CHECK_STR_CONTAINS(log, "handler.cu(2)");
    free(log);

    /* A handler name that is not an identifier never reaches the compiler. */
    CHECK_STATUS(rk__cuda_ring_source(echo_handler, "echo; int x", &l, &source), RK_INVALID_ARGUMENT);
    return 0;
}
