/* sim_registry.h: a list of running persistent simulations, and a pause
 * around module loads on backends that wait for running kernels. */
#include <string.h>

#include "sim/sim_registry.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t pause_lock = PTHREAD_MUTEX_INITIALIZER;
static rk_sim *running_list;

/* Only CUDA waits for running kernels when it loads or unloads a module. */
static bool loads_wait(const rk_context *ctx) {
    const rk_backend *b = rk_context_backend(ctx);
    return b && strcmp(rk_backend_name(b), "cuda") == 0;
}

void rk__sim_registry_add(rk_sim *sim) {
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

void rk__sim_registry_pause(rk_context *ctx, const rk_sim *except) {
    if (!loads_wait(ctx)) return;
    pthread_mutex_lock(&pause_lock);
    const rk_backend *backend = rk_context_backend(ctx);
    rk_device_info info;
    if (rk_context_device_info(ctx, &info) != RK_OK) return;
    pthread_mutex_lock(&lock);
    for (rk_sim *s = running_list; s; s = s->next) {
        s->paused = false;
        if (s == except || s->backend != backend || strcmp(s->info.name, info.name) != 0 || !s->running) continue;
        /* A kernel that does not stop keeps the load waiting: it is marked failed instead. */
        rk_status st = rk__sim_stop(s);
        if (st == RK_OK) s->paused = true;
        else s->failed = st;
    }
    pthread_mutex_unlock(&lock);
}

rk_status rk__sim_registry_resume(rk_context *ctx) {
    if (!loads_wait(ctx)) return RK_OK;
    rk_status first = RK_OK;
    pthread_mutex_lock(&lock);
    for (rk_sim *s = running_list; s; s = s->next) {
        if (!s->paused) continue;
        s->paused = false;
        rk_status st = rk__sim_launch_persistent(s);
        if (st != RK_OK) {
            s->failed = st;
            if (first == RK_OK) first = st;
        }
    }
    pthread_mutex_unlock(&lock);
    pthread_mutex_unlock(&pause_lock);
    return first;
}
