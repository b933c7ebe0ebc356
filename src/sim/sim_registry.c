/* sim_registry.h: a list of running persistent simulations, and the pause
 * and resume the CUDA backend calls around module loads (core/resident.h). */
#include "sim/sim_registry.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static rk_sim *running_list;

static const rk__resident_hooks hooks = {rk__sim_registry_pause, rk__sim_registry_resume};
static pthread_once_t hooks_once = PTHREAD_ONCE_INIT;
static void register_hooks(void) { rk__resident_register(&hooks); }

void rk__sim_registry_add(rk_sim *sim) {
    pthread_once(&hooks_once, register_hooks);
    pthread_mutex_lock(&lock);
    sim->next = running_list;
    running_list = sim;
    pthread_mutex_unlock(&lock);
}

void rk__sim_registry_remove(rk_sim *sim) {
    pthread_mutex_lock(&lock);
    for (rk_sim **p = &running_list; *p; p = &(*p)->next) {
        if (*p == sim) {
            *p = sim->next;
            break;
        }
    }
    sim->next = NULL;
    pthread_mutex_unlock(&lock);
}

void rk__sim_registry_pause(rk_context *ctx) { rk__sim_registry_pause_device(ctx->backend, ctx->device); }

rk_status rk__sim_registry_resume(rk_context *ctx) { return rk__sim_registry_resume_device(ctx->backend, ctx->device); }

void rk__sim_registry_pause_device(const rk_backend *backend, uint32_t device) {
    pthread_mutex_lock(&lock);
    for (rk_sim *s = running_list; s; s = s->next) {
        /* One that is not running keeps its mark: an enclosing section may
         * have paused it and will resume it. */
        if (s->backend != backend || s->device_index != device || !s->running) continue;
        s->paused = false;
        /* A kernel that does not stop keeps the load waiting: it is marked failed. */
        rk_status st = rk__sim_stop(s);
        if (st == RK_OK) s->paused = true;
        else s->failed = st;
    }
    pthread_mutex_unlock(&lock);
}

rk_status rk__sim_registry_resume_device(const rk_backend *backend, uint32_t device) {
    rk_status first = RK_OK;
    pthread_mutex_lock(&lock);
    for (rk_sim *s = running_list; s; s = s->next) {
        if (!s->paused || s->backend != backend || s->device_index != device) continue;
        s->paused = false;
        rk_status st = rk__sim_launch_persistent(s);
        if (st != RK_OK) {
            s->failed = st;
            if (first == RK_OK) first = st;
        }
    }
    pthread_mutex_unlock(&lock);
    return first;
}
