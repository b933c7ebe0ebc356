/* Runs the system C compiler under limits: an address-space limit and a CPU
 * time limit set in the child before exec (inherited by cc1, as and ld), and a
 * wall-clock limit after which the whole process group is killed. Input from
 * /dev/null, output and errors captured for the error text.
 *
 * fork + execve rather than posix_spawn: setrlimit must run in the child. The
 * child only makes async-signal-safe calls; the program path, argv and
 * environment are prepared before the fork. The address-space limit comes
 * last and only raw system calls follow it: a sanitizer's runtime wraps
 * libc calls such as dup2, write and _exit, and in a sanitized parent's child
 * those wrappers may need memory the limit no longer allows (TSan then kills the
 * child with "failed to allocate ... stack depot", seen in CI). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cpu_compile_internal.h"

extern char **environ;

enum { LOG_LIMIT = 1 << 20, DEFAULT_SECONDS = 120, DEFAULT_MEMORY_MB = 4096 };

static rk_status env_limit(const char *name, unsigned fallback, unsigned lo, unsigned hi, unsigned *out) {
    const char *v = getenv(name);
    if (!v || !*v) {
        *out = fallback;
        return RK_OK;
    }
    char *end = NULL;
    errno = 0;
    unsigned long n = v[0] >= '0' && v[0] <= '9' ? strtoul(v, &end, 10) : 0;
    if (!end || *end || errno || n < lo || n > hi)
        return rk__fail(RK_INVALID_ARGUMENT, "cpu: %s='%s' is not a whole number from %u to %u", name, v, lo, hi);
    *out = (unsigned)n;
    return RK_OK;
}

rk_status rk__compile_limits_get(rk__compile_limits *out) {
    rk_status s = env_limit("RK_COMPILE_SECONDS", DEFAULT_SECONDS, 1, 86400, &out->seconds);
    if (s == RK_OK) s = env_limit("RK_COMPILE_MEMORY_MB", DEFAULT_MEMORY_MB, 64, 1u << 24, &out->memory_mb);
    return s;
}

char *rk__find_program(const char *name) {
    if (strchr(name, '/')) return strdup(name);
    const char *dirs = getenv("PATH");
    if (!dirs || !*dirs) dirs = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = dirs; *p;) {
        size_t n = strcspn(p, ":");
        char *path = NULL;
        if (asprintf(&path, "%.*s/%s", (int)(n ? n : 1), n ? p : ".", name) < 0) return NULL;
        struct stat st;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0) return path;
        free(path);
        p += n + (p[n] == ':');
    }
    return NULL;
}

/* Reports errno to the parent through err and ends the child, by raw system
 * calls (see the top of the file). */
static _Noreturn void child_failed(int err) {
    int e = errno;
    (void)!syscall(SYS_write, err, &e, sizeof e);
    for (;;) syscall(SYS_exit_group, 127);
}

/* The child: a process group of its own (so a timeout kills cc1 too), the
 * working directory, the pipes, the limits; then exec. */
static _Noreturn void child(const char *prog, char *const argv[], int workdir, int out, int err,
                            const rk__compile_limits *limits) {
    struct rlimit as = {(rlim_t)limits->memory_mb << 20, (rlim_t)limits->memory_mb << 20};
    struct rlimit cpu = {limits->seconds, limits->seconds + 5};
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (setpgid(0, 0) != 0 || setrlimit(RLIMIT_CPU, &cpu) != 0 || fchdir(workdir) != 0 || null < 0 ||
        dup2(null, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
        child_failed(err);
    if (syscall(SYS_setrlimit, RLIMIT_AS, &as) != 0) child_failed(err);
    syscall(SYS_execve, prog, argv, environ);
    child_failed(err);
}

typedef struct captured {
    char *text;
    size_t len, cap;
} captured;

static void capture(captured *c, const char *chunk, size_t n) {
    if (c->len + n + 1 > LOG_LIMIT) return; /* keep draining so the child never blocks */
    if (c->len + n + 1 > c->cap) {
        size_t cap = c->cap ? c->cap : 4096;
        while (c->len + n + 1 > cap) cap *= 2;
        char *bigger = realloc(c->text, cap);
        if (!bigger) return;
        c->text = bigger;
        c->cap = cap;
    }
    memcpy(c->text + c->len, chunk, n);
    c->len += n;
    c->text[c->len] = '\0';
}

/* Reads the child's output until it closes the pipe; false if the deadline
 * passed first (the process group is then killed and drained). */
static bool drain(int fd, pid_t pid, uint64_t deadline_ns, captured *log) {
    bool in_time = true;
    for (;;) {
        uint64_t now = rk__now_ns();
        if (in_time && now >= deadline_ns) {
            in_time = false;
            kill(-pid, SIGKILL);
        }
        /* Something that left the process group may hold the pipe: stop waiting for it. */
        if (!in_time && now >= deadline_ns + 2000000000u) return false;
        int wait_ms = in_time ? (int)((deadline_ns - now) / 1000000u) + 1 : 1000;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, wait_ms);
        if (r < 0 && errno == EINTR) continue;
        if (r == 0) continue;
        char chunk[4096];
        ssize_t got = read(fd, chunk, sizeof chunk);
        if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (got <= 0) return in_time;
        capture(log, chunk, (size_t)got);
    }
}

static bool mentions(const char *log, const char *what) { return log && strstr(log, what) != NULL; }

rk_status rk__run_compiler(char *const argv[], int workdir, const rk__compile_limits *limits) {
    char *prog = rk__find_program(argv[0]);
    if (!prog)
        return rk__fail(RK_COMPILE_FAILED, "cpu: cannot run the C compiler '%s': not found on PATH (set CC to a C "
                        "compiler)", argv[0]);
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0) {
        free(prog);
        return rk__fail(RK_IO_ERROR, "cpu: pipe: %s", strerror(errno));
    }
    if (pipe2(err, O_CLOEXEC) != 0) {
        close(out[0]);
        close(out[1]);
        free(prog);
        return rk__fail(RK_IO_ERROR, "cpu: pipe: %s", strerror(errno));
    }
    uint64_t t0 = rk__now_ns();
    pid_t pid = fork();
    if (pid == 0) child(prog, argv, workdir, out[1], err[1], limits);
    int fork_errno = errno;
    close(out[1]);
    close(err[1]);
    if (pid < 0) {
        close(out[0]);
        close(err[0]);
        free(prog);
        return rk__fail(RK_IO_ERROR, "cpu: cannot start the C compiler: fork: %s", strerror(fork_errno));
    }
    setpgid(pid, pid); /* also here: kill(-pid) must work even if the child has not run yet */
    captured log = {0};
    bool in_time = drain(out[0], pid, t0 + (uint64_t)limits->seconds * 1000000000u, &log);
    close(out[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    kill(-pid, SIGKILL); /* anything the compiler left behind in its group */
    int exec_errno = 0;
    ssize_t got = read(err[0], &exec_errno, sizeof exec_errno);
    close(err[0]);

    rk_status st = RK_OK;
    const char *text = log.text ? log.text : "";
    if (got == (ssize_t)sizeof exec_errno) {
        st = rk__fail(RK_COMPILE_FAILED, "cpu: cannot run the C compiler '%s': %s (set CC to a C compiler)", prog,
                      strerror(exec_errno));
    } else if (!in_time) {
        st = rk__fail(RK_COMPILE_FAILED, "cpu: the C compiler '%s' was stopped after the time limit of %u s "
                      "(RK_COMPILE_SECONDS). Its output:\n", argv[0], limits->seconds);
        rk__fail_append(text);
    } else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU) {
        st = rk__fail(RK_COMPILE_FAILED, "cpu: the C compiler '%s' hit the CPU time limit of %u s "
                      "(RK_COMPILE_SECONDS). Its output:\n", argv[0], limits->seconds);
        rk__fail_append(text);
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        /* The driver reports a child's limit in its output, not its status. */
        char why[160] = "";
        if (mentions(text, "memory exhausted") || mentions(text, "out of memory") ||
            mentions(text, "Cannot allocate memory"))
            snprintf(why, sizeof why, " (it hit the memory limit of %u MiB, RK_COMPILE_MEMORY_MB)", limits->memory_mb);
        else if (mentions(text, "CPU time limit"))
            snprintf(why, sizeof why, " (it hit the CPU time limit of %u s, RK_COMPILE_SECONDS)", limits->seconds);
        if (WIFEXITED(status))
            st = rk__fail(RK_COMPILE_FAILED, "cpu: the C compiler '%s' failed (exit code %d)%s. Its output:\n",
                          argv[0], WEXITSTATUS(status), why);
        else
            st = rk__fail(RK_COMPILE_FAILED, "cpu: the C compiler '%s' was killed by signal %d%s. Its output:\n",
                          argv[0], WTERMSIG(status), why);
        rk__fail_append(log.text ? text : "(output not captured: out of memory)\n");
    } else {
        rk__log(RK_LOG_DEBUG, "cpu: ran %s in %.1f ms", argv[0], (double)(rk__now_ns() - t0) / 1e6);
    }
    free(log.text);
    free(prog);
    return st;
}
