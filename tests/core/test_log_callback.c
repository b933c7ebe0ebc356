/* rk_set_log_callback while other threads log: every line reaches a whole
 * (callback, user) pair, and once the setter returns the old callback is
 * never called again. Runs under TSan in CI. Failing calls log their
 * details at RK_LOG_DEBUG, so the loggers use a failing public call. */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "check.h"

typedef struct sink {
    _Atomic unsigned long lines;
    _Atomic int bad_user;
} sink;

static sink sinks[2];
static _Atomic bool stop;

static void log_a(rk_log_level level, const char *line, void *user) {
    (void)level;
    if (user != &sinks[0] || !strstr(line, "RK_NULL_ARGUMENT")) atomic_store(&sinks[0].bad_user, 1);
    atomic_fetch_add(&sinks[0].lines, 1);
}

static void log_b(rk_log_level level, const char *line, void *user) {
    (void)level;
    (void)line;
    if (user != &sinks[1]) atomic_store(&sinks[1].bad_user, 1);
    atomic_fetch_add(&sinks[1].lines, 1);
}

/* A callback that tries to replace itself: refused, no deadlock. */
static void log_reentrant(rk_log_level level, const char *line, void *user) {
    (void)level;
    (void)line;
    rk_set_log_callback(log_b, &sinks[1]);
    atomic_fetch_add((_Atomic unsigned long *)user, 1);
}

static void *logger(void *arg) {
    (void)arg;
    while (!atomic_load(&stop)) CHECK_STATUS(rk_buffer_free(NULL), RK_NULL_ARGUMENT);
    return NULL;
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void wait_for_lines(sink *s, unsigned long more) {
    unsigned long start = atomic_load(&s->lines);
    for (int i = 0; i < 2000 && atomic_load(&s->lines) < start + more; i++) sleep_ms(1);
    CHECK_GE(atomic_load(&s->lines), start + more);
}

int main(void) {
    enum { THREADS = 4, SWAPS = 200 };
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) CHECK_EQ(pthread_create(&t[i], NULL, logger, NULL), 0);
    for (int i = 0; i < SWAPS; i++) {
        rk_set_log_callback(i % 2 ? log_b : log_a, &sinks[i % 2]);
        if (i % 50 == 0) rk_set_log_callback(NULL, NULL);
    }
    /* Once set returns, the old callback is done: its count stays put. */
    rk_set_log_callback(log_a, &sinks[0]);
    wait_for_lines(&sinks[0], 100);
    rk_set_log_callback(log_b, &sinks[1]);
    unsigned long a_after = atomic_load(&sinks[0].lines);
    wait_for_lines(&sinks[1], 100);
    CHECK_U64_EQ(atomic_load(&sinks[0].lines), a_after);
    rk_set_log_callback(NULL, NULL);
    unsigned long b_after = atomic_load(&sinks[1].lines);
    sleep_ms(20);
    CHECK_U64_EQ(atomic_load(&sinks[1].lines), b_after);
    /* A callback that calls rk_set_log_callback: ignored, nothing hangs. */
    _Atomic unsigned long reentrant = 0;
    rk_set_log_callback(log_reentrant, (void *)&reentrant);
    for (int i = 0; i < 2000 && atomic_load(&reentrant) < 10; i++) sleep_ms(1);
    CHECK_GE(atomic_load(&reentrant), 10);
    CHECK_U64_EQ(atomic_load(&sinks[1].lines), b_after);
    rk_set_log_callback(NULL, NULL);
    atomic_store(&stop, true);
    for (int i = 0; i < THREADS; i++) CHECK_EQ(pthread_join(t[i], NULL), 0);
    CHECK_EQ(atomic_load(&sinks[0].bad_user), 0);
    CHECK_EQ(atomic_load(&sinks[1].bad_user), 0);
    printf("log callback: %lu + %lu lines through swapping callbacks, %lu through a reentrant one\n",
           atomic_load(&sinks[0].lines), atomic_load(&sinks[1].lines), atomic_load(&reentrant));
    return 0;
}
