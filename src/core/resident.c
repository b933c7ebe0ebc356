/* resident.h: a short list of owners, and one lock for every pause section. */
#include "core/resident.h"

#include <pthread.h>

typedef struct owner_slot {
    const rk__resident_owner *owner; /* or */
    const rk__resident_hooks *hooks;
} owner_slot;

static pthread_mutex_t section_lock = PTHREAD_MUTEX_INITIALIZER; /* pause .. resume */
static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;    /* the slots */
static owner_slot slots[RK__RESIDENT_MAX_OWNERS];
static size_t slot_count;

static void add_slot(owner_slot s) {
    pthread_mutex_lock(&list_lock);
    bool known = false;
    for (size_t i = 0; i < slot_count; i++)
        known |= (s.owner && slots[i].owner == s.owner) || (s.hooks && slots[i].hooks == s.hooks);
    if (!known && slot_count < RK__RESIDENT_MAX_OWNERS)
        slots[slot_count++] = s;
    else if (!known)
        rk__log(RK_LOG_ERROR, "resident launches: more than %d owners; one is not paused around module loads",
                RK__RESIDENT_MAX_OWNERS);
    pthread_mutex_unlock(&list_lock);
}

void rk__resident_add_owner(const rk__resident_owner *owner) { add_slot((owner_slot){.owner = owner}); }

void rk__resident_register(const rk__resident_hooks *hooks) { add_slot((owner_slot){.hooks = hooks}); }

static size_t snapshot(owner_slot *out) {
    pthread_mutex_lock(&list_lock);
    size_t n = slot_count;
    for (size_t i = 0; i < n; i++) out[i] = slots[i];
    pthread_mutex_unlock(&list_lock);
    return n;
}

static void resume_slots(rk_context *ctx, const owner_slot *s, size_t n) {
    while (n-- > 0) {
        if (s[n].owner)
            s[n].owner->resume(ctx);
        else if (s[n].hooks->resume)
            (void)s[n].hooks->resume(ctx);
    }
}

rk_status rk__resident_pause(rk_context *ctx) {
    pthread_mutex_lock(&section_lock);
    owner_slot s[RK__RESIDENT_MAX_OWNERS];
    size_t n = snapshot(s);
    for (size_t i = 0; i < n; i++) {
        if (s[i].hooks) {
            if (s[i].hooks->pause) s[i].hooks->pause(ctx);
            continue;
        }
        rk_status st = s[i].owner->pause(ctx);
        if (st != RK_OK) {
            resume_slots(ctx, s, i);
            pthread_mutex_unlock(&section_lock);
            return st;
        }
    }
    return RK_OK;
}

void rk__resident_resume(rk_context *ctx) {
    owner_slot s[RK__RESIDENT_MAX_OWNERS];
    size_t n = snapshot(s);
    resume_slots(ctx, s, n);
    pthread_mutex_unlock(&section_lock);
}

void rk__resident_lock(void) { pthread_mutex_lock(&section_lock); }

void rk__resident_unlock(void) { pthread_mutex_unlock(&section_lock); }
