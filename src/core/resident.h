/* Kernels that stay resident outside the ring-kernel machinery (the
 * persistent simulations of src/sim) and must be stopped around a module
 * load or unload on a backend that waits for every running kernel of the
 * context (CUDA). The CUDA backend pauses its ring kernels there and calls
 * these around the same section, with its pause lock held; the simulation
 * library registers its pause and resume once. */
#ifndef RK_CORE_RESIDENT_H
#define RK_CORE_RESIDENT_H

#include "core/backend_impl.h"

typedef struct rk__resident_hooks {
    void (*pause)(rk_context *ctx);       /* stop the resident kernels on ctx's device */
    rk_status (*resume)(rk_context *ctx); /* launch them again */
} rk__resident_hooks;

/* Idempotent; the hooks must stay valid for the process's life. */
void rk__resident_register(const rk__resident_hooks *hooks);
void rk__resident_pause(rk_context *ctx);
rk_status rk__resident_resume(rk_context *ctx);

#endif
