/* Stopping a thread that is stuck in a handler.
 *
 * A handler is plain computation (as on a GPU), which is safe to cancel
 * asynchronously: the thread's stack is unwound from wherever it is, none of
 * the handler's remaining code runs. Threads that run handlers keep
 * cancellation disabled with the type set to asynchronous, and
 * rk__cpu_ring_run_batch enables it only around the handler calls, so a
 * cancel that arrives anywhere else (a queue, a lock, a condition wait)
 * stays pending until the thread leaves on its own.
 *
 * What is lost: the request being handled (answered with RK_HUNG), and
 * anything the handler held that is not plain memory (a lock it took, a
 * malloc in progress) stays as it was. */
#include <errno.h>
#include <time.h>

#include "cpu_ring_internal.h"

void rk__cpu_cancel_prepare_thread(void) {
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
}

bool rk__cpu_cancel_and_join(pthread_t thread) {
    pthread_cancel(thread);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until); /* pthread_timedjoin_np's clock */
    until.tv_sec += (time_t)(RK_CPU_CANCEL_GRACE_NS / 1000000000ull);
    int e;
    while ((e = pthread_timedjoin_np(thread, NULL, &until)) == EINTR) {
    }
    return e == 0;
}
