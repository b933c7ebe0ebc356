/* Resident launches: kernels that stay running on a device until told to
 * stop (persistent ring kernels, persistent simulations). Part of the
 * device layer, which knows nothing of what they are.
 *
 * On a backend whose module load or unload waits for every kernel running
 * in the context (CUDA: every rk context on a device shares the primary
 * context), a resident kernel would make that wait forever. So the backend
 * wraps every such section in rk__resident_pause / rk__resident_resume, and
 * whoever launches resident kernels registers an owner here: its pause
 * stops its kernels on the device (each saves its place and exits) and its
 * resume launches them again where they left off. */
#ifndef RK_CORE_RESIDENT_H
#define RK_CORE_RESIDENT_H

#include "core/backend_impl.h"

typedef struct rk__resident_owner {
    const char *name; /* for logs: "cuda ring kernels" */
    /* Stops the owner's resident kernels on ctx's device. RK_OK, or RK_HUNG
     * (with rk__fail's text) when one would not stop: the owner has then
     * failed that one and relaunched the others itself. */
    rk_status (*pause)(rk_context *ctx);
    /* Launches again what pause stopped; a launch that fails is reported by
     * its own kernel, so this cannot fail. */
    void (*resume)(rk_context *ctx);
} rk__resident_owner;

/* Idempotent; the owner must stay valid for the process's life. At most
 * RK__RESIDENT_MAX_OWNERS owners (the backends and libraries of this tree). */
#define RK__RESIDENT_MAX_OWNERS 8
void rk__resident_add_owner(const rk__resident_owner *owner);

/* The section around a module load or unload. Takes the process-wide
 * resident lock and pauses every owner's kernels on ctx's device (in the
 * order they registered). RK_OK: load, then call rk__resident_resume. Else
 * (RK_HUNG) the owners paused so far are resumed, the lock is released and
 * the caller must not load. */
rk_status rk__resident_pause(rk_context *ctx);
/* Resumes every owner (in reverse order) and releases the lock. */
void rk__resident_resume(rk_context *ctx);

/* The same lock, for an owner that launches and lists a resident kernel:
 * no section may start between the launch and the listing. */
void rk__resident_lock(void);
void rk__resident_unlock(void);

/* The older single-hook registration (the simulation library uses it): its
 * pause cannot fail and its resume's status is ignored (a simulation
 * reports a failed relaunch from every later call). */
typedef struct rk__resident_hooks {
    void (*pause)(rk_context *ctx);
    rk_status (*resume)(rk_context *ctx);
} rk__resident_hooks;
void rk__resident_register(const rk__resident_hooks *hooks);

#endif
