/* The worker pool: OS threads that share out the blocks of a grid.
 *
 * A grid is a job with an atomic "next block" counter; every participant
 * (the workers that wake for it and the stream thread that submitted it)
 * claims blocks until none are left. The submitter waits until no worker is
 * still inside the job, so the job can live on its stack. A one-block grid
 * wakes nobody: the stream thread runs it alone.
 *
 * A cooperative grid needs all its blocks running at once. A block in it
 * cannot finish before every block has started (they meet at grid_sync()),
 * so no participant takes a second block before each has one: it is enough
 * that grid - 1 workers are not held by other cooperative grids, which may
 * run forever. The submitter reserves them before queueing the job.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_device.h"

typedef struct grid_job {
    const rk__cpu_call *call;
    uint64_t total;
    _Atomic uint64_t next;
    atomic_bool failed;
    unsigned active;           /* workers inside; under the pool lock */
    rk_status status;          /* first failure; under the pool lock */
    char *error;               /* the submitter's buffer */
    pthread_cond_t idle;       /* active dropped to 0 */
    struct grid_job *next_job;
} grid_job;

struct rk__cpu_pool {
    pthread_mutex_t lock;
    pthread_cond_t work;
    grid_job *jobs;
    bool stopping;
    unsigned count;
    unsigned reserved;         /* workers promised to cooperative grids; under lock */
    pthread_cond_t unreserved; /* reserved dropped */
    pthread_t *threads;
};

static void record_failure(rk__cpu_pool *pool, grid_job *j, rk_status s, const char *error) {
    if (pool) pthread_mutex_lock(&pool->lock);
    if (j->status == RK_OK) {
        j->status = s;
        snprintf(j->error, RK_CPU_ERROR_TEXT, "%s", error);
    }
    atomic_store(&j->failed, true);
    if (pool) pthread_mutex_unlock(&pool->lock);
    /* Blocks of a cooperative grid that will never start must not be waited for. */
    if (j->call->grid_barrier) rk__cpu_grid_barrier_break(j->call->grid_barrier);
}

static void run_blocks(rk__cpu_pool *pool, rk__cpu_executor *ex, grid_job *j) {
    char error[RK_CPU_ERROR_TEXT];
    for (;;) {
        uint64_t i = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
        if (i >= j->total || atomic_load_explicit(&j->failed, memory_order_relaxed)) return;
        rk_status s = rk__cpu_run_block(ex, j->call, i, error);
        if (j->call->grid_barrier) rk__cpu_grid_barrier_leave(j->call->grid_barrier);
        if (s != RK_OK) {
            record_failure(pool, j, s, error);
            return;
        }
    }
}

static grid_job *find_job(rk__cpu_pool *pool) {
    for (grid_job *j = pool->jobs; j; j = j->next_job)
        if (atomic_load_explicit(&j->next, memory_order_relaxed) < j->total && !atomic_load(&j->failed)) return j;
    return NULL;
}

static void *worker_main(void *arg) {
    rk__cpu_pool *pool = arg;
    rk__cpu_executor *ex = NULL;
    /* Without an executor this worker cannot help; the submitters still finish every grid. */
    if (rk__cpu_executor_create(&ex) != RK_OK) return NULL;
    pthread_mutex_lock(&pool->lock);
    for (;;) {
        grid_job *j = find_job(pool);
        if (!j) {
            if (pool->stopping) break;
            pthread_cond_wait(&pool->work, &pool->lock);
            continue;
        }
        j->active++;
        pthread_mutex_unlock(&pool->lock);
        run_blocks(pool, ex, j);
        pthread_mutex_lock(&pool->lock);
        if (--j->active == 0) pthread_cond_broadcast(&j->idle);
    }
    pthread_mutex_unlock(&pool->lock);
    rk__cpu_executor_destroy(ex);
    return NULL;
}

rk_status rk__cpu_pool_create(unsigned workers, rk__cpu_pool **out) {
    rk__cpu_pool *pool = calloc(1, sizeof *pool);
    if (!pool) return rk__fail(RK_OUT_OF_MEMORY, "cpu: out of memory for the worker pool");
    pool->threads = calloc(workers ? workers : 1, sizeof *pool->threads);
    if (!pool->threads) {
        free(pool);
        return rk__fail(RK_OUT_OF_MEMORY, "cpu: out of memory for the worker pool");
    }
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->work, NULL);
    pthread_cond_init(&pool->unreserved, NULL);
    for (unsigned i = 0; i < workers; i++) {
        int e = pthread_create(&pool->threads[i], NULL, worker_main, pool);
        if (e != 0) {
            rk__cpu_pool_destroy(pool);
            return rk__fail(RK_IO_ERROR, "cpu: cannot start worker thread %u of %u: %s", i + 1, workers, strerror(e));
        }
        pool->count++;
    }
    *out = pool;
    return RK_OK;
}

void rk__cpu_pool_destroy(rk__cpu_pool *pool) {
    if (!pool) return;
    pthread_mutex_lock(&pool->lock);
    pool->stopping = true;
    pthread_cond_broadcast(&pool->work);
    pthread_mutex_unlock(&pool->lock);
    for (unsigned i = 0; i < pool->count; i++) pthread_join(pool->threads[i], NULL);
    pthread_cond_destroy(&pool->unreserved);
    pthread_cond_destroy(&pool->work);
    pthread_mutex_destroy(&pool->lock);
    free(pool->threads);
    free(pool);
}

rk_status rk__cpu_pool_run_grid(rk__cpu_pool *pool, rk__cpu_executor *caller, const rk__cpu_call *call,
                                char *error) {
    grid_job j = {
        .call = call,
        .total = (uint64_t)call->grid.x * call->grid.y * call->grid.z,
        .status = RK_OK,
        .error = error,
    };
    atomic_init(&j.next, 0);
    atomic_init(&j.failed, false);
    bool shared = pool && pool->count > 0 && j.total > 1;
    /* rk__cpu_launch refused cooperative grids larger than the workers plus this thread. */
    unsigned reserve = call->grid_barrier && shared ? (unsigned)(j.total - 1) : 0;
    if (shared) {
        pthread_cond_init(&j.idle, NULL);
        pthread_mutex_lock(&pool->lock);
        while (reserve && pool->count - pool->reserved < reserve) pthread_cond_wait(&pool->unreserved, &pool->lock);
        pool->reserved += reserve;
        grid_job **tail = &pool->jobs;
        while (*tail) tail = &(*tail)->next_job;
        *tail = &j;
        uint64_t helpers = j.total - 1 < pool->count ? j.total - 1 : pool->count;
        if (reserve)
            pthread_cond_broadcast(&pool->work);
        else
            for (uint64_t i = 0; i < helpers; i++) pthread_cond_signal(&pool->work);
        pthread_mutex_unlock(&pool->lock);
    }
    run_blocks(pool, caller, &j);
    if (shared) {
        pthread_mutex_lock(&pool->lock);
        while (j.active) pthread_cond_wait(&j.idle, &pool->lock);
        for (grid_job **p = &pool->jobs; *p; p = &(*p)->next_job) {
            if (*p == &j) {
                *p = j.next_job;
                break;
            }
        }
        if (reserve) {
            pool->reserved -= reserve;
            pthread_cond_broadcast(&pool->unreserved);
        }
        pthread_mutex_unlock(&pool->lock);
        pthread_cond_destroy(&j.idle);
    }
    return j.status;
}
