/* Ring kernels on CUDA (work in progress: refused until the persistent path lands). */
#include "cuda/cuda_internal.h"

static rk_status resolve_mode(rk_context *ctx, rk_exec_mode requested, rk_exec_mode *out) {
    (void)ctx;
    (void)requested;
    (void)out;
    return rk__fail(RK_UNSUPPORTED, "ring kernels on CUDA are not available yet");
}

const rk__ring_iface rk__cuda_ring_iface = {.resolve_mode = resolve_mode};
