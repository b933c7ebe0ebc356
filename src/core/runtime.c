/* rk_runtime: a selected backend and device with an open context. */
#include <stdatomic.h>
#include <stdlib.h>

#include "kernel_internal.h"

struct rk_runtime {
    const rk_backend *backend;
    rk_context *ctx;
    _Atomic unsigned kernels; /* launched and not yet destroyed */
};

void rk__runtime_kernels_add(rk_runtime *rt, int delta) {
    if (delta > 0)
        atomic_fetch_add(&rt->kernels, (unsigned)delta);
    else
        atomic_fetch_sub(&rt->kernels, (unsigned)-delta);
}

const char *rk_version(void) { return "0.1.0"; }

rk_status rk_runtime_create(const rk_runtime_desc *desc, rk_runtime **out) {
    if (!out) return rk__fail(RK_NULL_ARGUMENT, "rk_runtime_create: out is NULL");
    *out = NULL;
    const rk_backend *backend = NULL;
    uint32_t device = 0;
    rk_status s = rk_select_device(desc ? desc->backend : NULL, &backend, &device);
    if (s != RK_OK) return s;
    rk_runtime *rt = calloc(1, sizeof *rt);
    if (!rt) return rk__fail(RK_OUT_OF_MEMORY, "rk_runtime_create: out of memory");
    rt->backend = backend;
    s = rk_context_create(backend, device, &rt->ctx);
    if (s != RK_OK) {
        free(rt);
        return s;
    }
    *out = rt;
    return RK_OK;
}

rk_status rk_runtime_destroy(rk_runtime *rt) {
    if (!rt) return rk__fail(RK_NULL_ARGUMENT, "rk_runtime_destroy: rt is NULL");
    /* Kernels use the context until they are destroyed: refuse rather than
     * free it under them. */
    unsigned alive = atomic_load(&rt->kernels);
    if (alive)
        return rk__fail(RK_BAD_STATE,
                        "rk_runtime_destroy: %u kernel%s of this runtime %s still alive; rk_kernel_destroy %s first",
                        alive, alive == 1 ? "" : "s", alive == 1 ? "is" : "are", alive == 1 ? "it" : "them");
    rk_context_destroy(rt->ctx);
    free(rt);
    return RK_OK;
}

rk_context *rk_runtime_context(rk_runtime *rt) { return rt ? rt->ctx : NULL; }

const char *rk_runtime_backend_name(const rk_runtime *rt) { return rt ? rt->backend->name : "(null)"; }
