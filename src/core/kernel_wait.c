/* Backoff for blocking calls: see kernel_wait.h. */
#include "kernel_wait.h"

#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "backend_impl.h"

void rk__backoff_init(rk__backoff *b, uint64_t timeout_ns) {
    b->timeout_ns = timeout_ns;
    b->deadline = 0;
    b->phase_start = 0;
    b->sleep_ns = RK__BACKOFF_SLEEP_MIN_NS;
    b->rounds = 0;
    b->spinning = timeout_ns != 0;
}

void rk__backoff_reset(rk__backoff *b) {
    b->phase_start = 0;
    b->sleep_ns = RK__BACKOFF_SLEEP_MIN_NS;
    b->rounds = 0;
    b->spinning = b->timeout_ns != 0; /* as at init: a wait that may not last looks at the clock at once */
}

uint64_t rk__backoff_now(rk__backoff *b) {
    uint64_t now = rk__now_ns();
    if (b->deadline == 0)
        b->deadline = b->timeout_ns > UINT64_MAX - now ? UINT64_MAX : now + b->timeout_ns;
    if (b->phase_start == 0) b->phase_start = now;
    return now;
}

bool rk__backoff_should_poll(const rk__backoff *b) {
    if (b->rounds == 0) return false;
    return b->rounds % RK__BACKOFF_POLL_EVERY == 0 || !b->spinning;
}

bool rk__backoff_spin(rk__backoff *b) {
    if (!b->spinning || (b->rounds + 1u) % RK__BACKOFF_CLOCK_EVERY == 0) return false;
    b->rounds++;
    rk__cpu_relax();
    return true;
}

bool rk__backoff_wait(rk__backoff *b) {
    if (rk__backoff_spin(b)) return true;
    return rk__backoff_wait_at(b, rk__backoff_now(b));
}

bool rk__backoff_wait_at(rk__backoff *b, uint64_t now) {
    if (now >= b->deadline) return false;
    b->rounds++;
    uint64_t waited = now - b->phase_start;
    b->spinning = waited < RK__BACKOFF_SPIN_NS;
    if (b->spinning) {
        /* One pause a look, as the floor's ping-pong does: a reply that
         * lands mid-streak is seen within a pause (tens of ns), not within
         * sixteen (up to a microsecond where a pause is ~140 cycles). */
        rk__cpu_relax();
        return true;
    }
    if (waited < RK__BACKOFF_YIELD_NS) {
        sched_yield();
        return true;
    }
    uint64_t left = b->deadline - now;
    uint64_t nap = b->sleep_ns < left ? b->sleep_ns : left;
    struct timespec ts = {.tv_sec = (time_t)(nap / 1000000000u), .tv_nsec = (long)(nap % 1000000000u)};
    nanosleep(&ts, NULL);
    if (b->sleep_ns < RK__BACKOFF_SLEEP_MAX_NS) b->sleep_ns *= 2;
    return true;
}

uint64_t rk__watchdog_ns(const char *env) {
    const char *text = getenv(env);
    char *end = NULL;
    unsigned long long ms = text && *text ? strtoull(text, &end, 10) : 0;
    /* Nonsense (not a number, 0, or so large it overflows) means the default. */
    if (!end || *end || ms == 0 || ms > UINT64_MAX / 1000000u) ms = 10000;
    return (uint64_t)ms * 1000000u;
}
