/* Waiting without burning a core: spin briefly (a reply usually comes within
 * microseconds), then yield, then sleep in growing steps. Shared by the actor
 * layer's blocking calls and by backends that poll. */
#ifndef RK_KERNEL_WAIT_H
#define RK_KERNEL_WAIT_H

#include <stdbool.h>
#include <stdint.h>

/* A pause hint for spin loops. */
static inline void rk__cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

typedef struct rk__backoff {
    uint64_t timeout_ns;   /* as given to rk__backoff_init */
    uint64_t deadline;     /* absolute, rk__now_ns(); UINT64_MAX = never; 0 = not known yet (rk__backoff_now) */
    uint64_t phase_start;  /* when the current streak of waiting began; 0 = at the next clock read */
    uint64_t sleep_ns;     /* next sleep, once past the yield phase */
    unsigned rounds;       /* waits so far in this streak */
    bool spinning;         /* the last wait that read the clock was in the spin phase */
} rk__backoff;

/* Spin this long, then yield until the second mark, then sleep. While
 * spinning, the clock (and so the deadline) is read once in
 * RK__BACKOFF_CLOCK_EVERY waits: a clock read costs as much as a pause or
 * more (it was 23% of a profile of the round trip when read at every look). */
#define RK__BACKOFF_CLOCK_EVERY 16u
#define RK__BACKOFF_SPIN_NS 2000u
#define RK__BACKOFF_YIELD_NS 200000u
#define RK__BACKOFF_SLEEP_MIN_NS 20000u
#define RK__BACKOFF_SLEEP_MAX_NS 1000000u

/* A wait that may last (timeout_ns > 0) starts spinning without reading
 * the clock: most replies land within its first looks, and three clock
 * reads a round trip (init, the first look, the backoff's own) were a
 * fifth of a profile of the CPU round trip on the development VM. The
 * deadline is then timeout_ns from the first clock read, at most
 * RK__BACKOFF_CLOCK_EVERY pauses after the wait began. A wait that may not
 * last reads it at its first look. */
void rk__backoff_init(rk__backoff *b, uint64_t timeout_ns);
/* Progress was made: start spinning again (the deadline stays). */
void rk__backoff_reset(rk__backoff *b);
/* The clock, read once for this look; it also starts the deadline and the
 * streak where they wait for a first reading. */
uint64_t rk__backoff_now(rk__backoff *b);
/* Waits one step. Returns false, without waiting, once the deadline has
 * passed. */
bool rk__backoff_wait(rk__backoff *b);
/* The same after rk__backoff_spin said no and the caller read the clock
 * (rk__backoff_now) for this look: no second clock read. */
bool rk__backoff_wait_at(rk__backoff *b, uint64_t now);
/* The step of rk__backoff_wait that needs no clock: true after one pause
 * while spinning, except on the looks that read the clock. */
bool rk__backoff_spin(rk__backoff *b);
/* Whether a waiter should poll the backend this round: every round once
 * past spinning, but only every RK__BACKOFF_POLL_EVERY-th while spinning
 * (and not before the first wait), so a spinning host does not keep pulling
 * the device's or the worker's control lines away from it: on the CPU
 * backend a poll reads four queue indices and the worker's counters, each a
 * cache line the worker is writing. */
#define RK__BACKOFF_POLL_EVERY 16u
bool rk__backoff_should_poll(const rk__backoff *b);

#endif
