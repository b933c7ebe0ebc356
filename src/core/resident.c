/* resident.h: one set of hooks, registered once. */
#include "core/resident.h"

static const rk__resident_hooks *_Atomic hooks_in_use;

void rk__resident_register(const rk__resident_hooks *hooks) { hooks_in_use = hooks; }

void rk__resident_pause(rk_context *ctx) {
    const rk__resident_hooks *h = hooks_in_use;
    if (h && h->pause) h->pause(ctx);
}

rk_status rk__resident_resume(rk_context *ctx) {
    const rk__resident_hooks *h = hooks_in_use;
    return h && h->resume ? h->resume(ctx) : RK_OK;
}
