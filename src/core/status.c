/* Status names and messages, per-thread error details, and the log sink. */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "backend_impl.h"

const char *rk_status_name(rk_status status) {
    switch (status) {
#define RK_STATUS_NAME_(name, value, message) \
    case RK_##name:                           \
        return "RK_" #name;
        RK_STATUS_TABLE(RK_STATUS_NAME_)
#undef RK_STATUS_NAME_
    }
    return "RK_UNKNOWN_STATUS";
}

const char *rk_status_message(rk_status status) {
    switch (status) {
#define RK_STATUS_MESSAGE_(name, value, message) \
    case RK_##name:                              \
        return message;
        RK_STATUS_TABLE(RK_STATUS_MESSAGE_)
#undef RK_STATUS_MESSAGE_
    }
    return "unknown status code";
}

/* Big enough for a typical compiler log; longer text is cut with a marker. */
enum { ERROR_TEXT_SIZE = 16384 };
static _Thread_local char error_text[ERROR_TEXT_SIZE];

const char *rk_last_error(void) { return error_text; }

void rk__clear_error(void) { error_text[0] = '\0'; }

static void append_text(const char *text) {
    size_t used = strlen(error_text);
    size_t room = sizeof error_text - used;
    size_t n = strlen(text);
    if (n < room) {
        memcpy(error_text + used, text, n + 1);
        return;
    }
    static const char cut[] = "\n[... cut]";
    if (room > sizeof cut) {
        memcpy(error_text + used, text, room - sizeof cut);
        memcpy(error_text + sizeof error_text - sizeof cut, cut, sizeof cut);
    }
}

rk_status rk__fail(rk_status status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error_text, sizeof error_text, fmt, ap);
    va_end(ap);
    rk__log(RK_LOG_DEBUG, "%s: %s", rk_status_name(status), error_text);
    return status;
}

void rk__fail_append(const char *text) {
    if (text) append_text(text);
}

/* The sink is read by every thread that logs and set by any: a read-write
 * lock keeps the pair (fn, user) consistent, and a callback runs under the
 * read lock, so once rk_set_log_callback returns the old one has finished
 * and is not called again. Logging threads do not wait for each other. */
static pthread_rwlock_t log_lock = PTHREAD_RWLOCK_INITIALIZER;
static rk_log_fn log_fn;
static void *log_user;
static _Atomic bool log_set; /* a cheap test before the lock: nothing to do when unset */
static _Thread_local bool in_callback;

void rk_set_log_callback(rk_log_fn fn, void *user) {
    if (in_callback) return; /* it would wait for itself (status.h) */
    pthread_rwlock_wrlock(&log_lock);
    log_fn = fn;
    log_user = user;
    atomic_store_explicit(&log_set, fn != NULL, memory_order_release);
    pthread_rwlock_unlock(&log_lock);
}

void rk__log(rk_log_level level, const char *fmt, ...) {
    if (!atomic_load_explicit(&log_set, memory_order_acquire) || in_callback) return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    pthread_rwlock_rdlock(&log_lock);
    if (log_fn) {
        in_callback = true;
        log_fn(level, line, log_user);
        in_callback = false;
    }
    pthread_rwlock_unlock(&log_lock);
}

uint64_t rk__now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
