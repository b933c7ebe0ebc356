/* Status codes returned by every fallible ringkernel call.
 *
 * One X-macro table generates the enum, the names and the messages, so a new
 * code is added in exactly one place. Details of a failure (a CUresult name, a
 * compiler log, which argument was NULL) are kept per thread and read with
 * rk_last_error().
 */
#ifndef RINGKERNEL_STATUS_H
#define RINGKERNEL_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

#define RK_STATUS_TABLE(X)                                                      \
    X(OK, 0, "success")                                                         \
    X(INVALID_ARGUMENT, -1, "invalid argument")                                 \
    X(NULL_ARGUMENT, -2, "a required pointer argument is NULL")                 \
    X(BAD_CAPACITY, -3, "queue capacity must be a non-zero power of two")       \
    X(MESSAGE_TOO_LARGE, -4, "message is larger than its queue slot")           \
    X(TERMINATED, -5, "the kernel has been terminated")                         \
    X(TIMEOUT, -6, "the operation timed out")                                   \
    X(WOULD_BLOCK, -7, "the queue is full or empty and no wait was allowed")    \
    X(UNKNOWN_BACKEND, -8, "no backend has that name")                          \
    X(BACKEND_UNAVAILABLE, -9, "the backend is not available on this machine")  \
    X(NO_DEVICE, -10, "no such device")                                         \
    X(COMPILE_FAILED, -11, "kernel source failed to compile")                   \
    X(NOT_FOUND, -12, "no function or symbol with that name")                   \
    X(BAD_LAUNCH_CONFIG, -13, "launch grid or block size is zero or over the device limit") \
    X(HANDLER_FAILED, -14, "the message handler reported an error")             \
    X(DEVICE_FAULT, -15, "the device faulted while running a kernel")           \
    X(HUNG, -16, "the kernel stopped making progress")                          \
    X(OUT_OF_MEMORY, -17, "out of memory")                                      \
    X(UNSUPPORTED, -18, "the operation is not supported by this backend")       \
    X(BAD_STATE, -19, "the object is not in a state that allows this operation") \
    X(OUT_OF_RANGE, -20, "offset or size is outside the buffer")                \
    X(IO_ERROR, -21, "an operating-system call failed")                         \
    X(INTERNAL, -22, "internal error")                                          \
    X(PARSE_ERROR, -23, "the source has errors")

typedef enum rk_status {
#define RK_STATUS_ENUM_(name, value, message) RK_##name = value,
    RK_STATUS_TABLE(RK_STATUS_ENUM_)
#undef RK_STATUS_ENUM_
} rk_status;

/* "RK_TIMEOUT" for RK_TIMEOUT; "RK_UNKNOWN_STATUS" for a value not in the table. */
const char *rk_status_name(rk_status status);

/* A one-line human description of the code itself. */
const char *rk_status_message(rk_status status);

/* Details of the last failure on the calling thread: which argument, which
 * driver error, the compiler's log. Never NULL; "" when there is nothing. The
 * text stays valid until the next ringkernel call on the same thread. */
const char *rk_last_error(void);

/* Optional log sink for info and error lines (for example why a backend is
 * unavailable). NULL restores the default, which prints nothing. Any
 * thread may set it while others log: each line goes to one whole (fn,
 * user) pair, and once this returns the previous callback has finished and
 * is not called again (its user data may be freed). The callback may run on
 * several threads at once. Called from inside a callback, this does nothing,
 * and lines logged from inside a callback are dropped. */
typedef enum rk_log_level { RK_LOG_DEBUG = 0, RK_LOG_INFO, RK_LOG_WARN, RK_LOG_ERROR } rk_log_level;
typedef void (*rk_log_fn)(rk_log_level level, const char *line, void *user);
void rk_set_log_callback(rk_log_fn fn, void *user);

#ifdef __cplusplus
}
#endif
#endif
