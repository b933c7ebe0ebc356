/* The grid-wide barrier of a cooperative launch: one waiter per block (its
 * thread 0, after the block's own barrier), each block on its own worker.
 *
 * Arrival is counted under a mutex; the last block to arrive bumps the
 * generation, which the others first poll for the context's spin time
 * (yielding, since the host may share their cores) and then sleep on. A
 * block that returns no longer counts, and a failed launch breaks the
 * barrier, so a block never waits for one that will not come. */
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "cpu_device.h"

struct rk__cpu_grid_barrier {
    pthread_mutex_t lock;
    pthread_cond_t released;
    uint64_t expected;          /* blocks that have not returned; under lock */
    uint64_t arrived;           /* under lock */
    bool broken;                /* under lock */
    _Atomic uint64_t generation;
    uint64_t spin_ns;
};

rk_status rk__cpu_grid_barrier_create(uint64_t blocks, uint64_t spin_ns, rk__cpu_grid_barrier **out) {
    rk__cpu_grid_barrier *g = calloc(1, sizeof *g);
    if (!g) return rk__fail(RK_OUT_OF_MEMORY, "rk_launch: out of memory for a grid barrier");
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->released, NULL);
    g->expected = blocks;
    g->spin_ns = spin_ns;
    atomic_init(&g->generation, 0);
    *out = g;
    return RK_OK;
}

void rk__cpu_grid_barrier_destroy(rk__cpu_grid_barrier *g) {
    if (!g) return;
    pthread_cond_destroy(&g->released);
    pthread_mutex_destroy(&g->lock);
    free(g);
}

/* Under lock: opens the barrier for everyone waiting. */
static void release_locked(rk__cpu_grid_barrier *g) {
    g->arrived = 0;
    atomic_fetch_add(&g->generation, 1);
    pthread_cond_broadcast(&g->released);
}

void rk__cpu_grid_barrier_wait(rk__cpu_grid_barrier *g) {
    pthread_mutex_lock(&g->lock);
    if (g->broken) {
        pthread_mutex_unlock(&g->lock);
        return;
    }
    uint64_t gen = atomic_load(&g->generation);
    if (++g->arrived >= g->expected) {
        release_locked(g);
        pthread_mutex_unlock(&g->lock);
        return;
    }
    pthread_mutex_unlock(&g->lock);

    uint64_t start = rk__now_ns();
    for (unsigned i = 1;; i++) {
        if (atomic_load(&g->generation) != gen) return;
        if ((i & 15) == 0) {
            if (rk__now_ns() - start >= g->spin_ns) break;
            sched_yield();
        }
    }
    pthread_mutex_lock(&g->lock);
    while (atomic_load(&g->generation) == gen && !g->broken) pthread_cond_wait(&g->released, &g->lock);
    pthread_mutex_unlock(&g->lock);
}

void rk__cpu_grid_barrier_leave(rk__cpu_grid_barrier *g) {
    pthread_mutex_lock(&g->lock);
    if (g->expected) g->expected--;
    if (g->arrived && g->arrived >= g->expected) release_locked(g);
    pthread_mutex_unlock(&g->lock);
}

void rk__cpu_grid_barrier_break(rk__cpu_grid_barrier *g) {
    pthread_mutex_lock(&g->lock);
    g->broken = true;
    release_locked(g);
    pthread_mutex_unlock(&g->lock);
}
