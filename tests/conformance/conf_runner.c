/* Runs every check on every backend asked for, each in its own child
 * process (a failed assert, a crash or a hang then costs one check), and
 * prints a table check x backend -> pass / skip / fail, or JSON. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conformance.h"

enum { MAX_BACKENDS = 8, REASON_SIZE = 240 };

typedef enum conf_result { CONF_PASS, CONF_SKIP, CONF_FAIL } conf_result;
static const char *const result_names[] = {"pass", "skip", "fail"};

typedef struct conf_outcome {
    conf_result result;
    double seconds;
    char reason[REASON_SIZE]; /* the child's last line on stderr */
} conf_outcome;

typedef struct conf_options {
    const char *backends[MAX_BACKENDS];
    size_t backend_count;
    const char *filter;
    bool json, verbose;
    unsigned timeout_s;
} conf_options;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Keeps the last non-empty line of text in out. */
static void last_line(const char *text, char *out, size_t size) {
    size_t end = strlen(text);
    while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r')) end--;
    size_t start = end;
    while (start > 0 && text[start - 1] != '\n') start--;
    size_t n = end - start < size - 1 ? end - start : size - 1;
    memcpy(out, text + start, n);
    out[n] = '\0';
}

static void probe_check(const conf_env *env) {
    rk_runtime *rt = conf_runtime(env);
    rk_device_info info;
    CHECK_OK(rk_context_device_info(rk_runtime_context(rt), &info));
    CHECK_OK(rk_runtime_destroy(rt));
    fprintf(stderr, "%s\n", info.name); /* the device, for the table's footer */
}

/* Turns a child's end (waitpid status) and its last line on stderr into an
 * outcome. */
static void judge(int status, const char *tail, const conf_options *o, conf_outcome *out) {
    last_line(tail, out->reason, sizeof out->reason);
    /* --verbose: the failing check's last words before its reason, too */
    if (o->verbose && !(WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 77)))
        fprintf(stderr, "---- the check's stderr, last lines ----\n%s\n----\n", tail);
    out->result = CONF_FAIL;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        out->result = CONF_PASS;
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
        out->result = CONF_SKIP;
        if (strncmp(out->reason, "SKIP: ", 6) == 0) memmove(out->reason, out->reason + 6, strlen(out->reason + 6) + 1);
    } else if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        char why[REASON_SIZE];
        if (sig == SIGALRM)
            snprintf(why, sizeof why, "timed out after %u s", o->timeout_s);
        else
            snprintf(why, sizeof why, "killed by signal %d (%s)", sig, strsignal(sig));
        if (out->reason[0]) {
            size_t len = strlen(why);
            snprintf(why + len, sizeof why - len, "; last: %.*s", (int)(sizeof why - len - 9), out->reason);
        }
        snprintf(out->reason, sizeof out->reason, "%s", why);
    }
}

/* The tail of what a child wrote to its stderr file. */
static void read_tail(FILE *f, char *text, size_t size) {
    fflush(f);
    long end = ftell(f);
    long from = end > (long)size - 1 ? end - (long)size + 1 : 0;
    size_t n = 0;
    if (end > 0 && fseek(f, from, SEEK_SET) == 0) n = fread(text, 1, size - 1, f);
    text[n] = '\0';
}

/* Forks a child whose stderr goes to err (and stdout too with --verbose). */
static pid_t spawn(FILE *err, int close_fd, const conf_options *o) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid != 0) return pid;
    if (close_fd >= 0) close(close_fd);
    dup2(fileno(err), STDERR_FILENO);
    int null_fd = open("/dev/null", O_WRONLY);
    if (o->verbose) null_fd = dup(STDERR_FILENO);
    if (null_fd >= 0) dup2(null_fd, STDOUT_FILENO);
    return 0;
}

static int wait_child(pid_t pid) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
}

/* Runs fn(env) in a child of its own; its stderr becomes the reason. */
static conf_outcome run_isolated(conf_check_fn fn, const conf_env *env, const conf_options *o) {
    conf_outcome out = {.result = CONF_FAIL};
    FILE *err = tmpfile();
    if (!err) {
        snprintf(out.reason, sizeof out.reason, "tmpfile: %s", strerror(errno));
        return out;
    }
    double t0 = now_s();
    pid_t pid = spawn(err, -1, o);
    if (pid == 0) {
        alarm(o->timeout_s);
        fn(env);
        exit(0);
    }
    int status = pid < 0 ? 0 : wait_child(pid);
    out.seconds = now_s() - t0;
    char tail[4096];
    read_tail(err, tail, sizeof tail);
    fclose(err);
    if (pid < 0) {
        snprintf(out.reason, sizeof out.reason, "fork: %s", strerror(errno));
        return out;
    }
    judge(status, tail, o, &out);
    return out;
}

/* Runs checks[from .. to) one after another in one child, which reports
 * each one that returns through a pipe. When the child ends early, the
 * check it was in is judged by how it ended. Returns the index after the
 * last check dealt with. */
static size_t run_shared(const conf_check **checks, size_t from, size_t to, const conf_env *env, const conf_options *o,
                         conf_outcome *out) {
    int fds[2];
    FILE *err = tmpfile();
    if (!err || pipe(fds) != 0) {
        out[from] = (conf_outcome){.result = CONF_FAIL};
        snprintf(out[from].reason, REASON_SIZE, "tmpfile or pipe: %s", strerror(errno));
        if (err) fclose(err);
        return from + 1;
    }
    double t0 = now_s();
    pid_t pid = spawn(err, fds[0], o);
    if (pid == 0) {
        for (size_t i = from; i < to; i++) {
            alarm(o->timeout_s);
            checks[i]->run(env);
            uint32_t done = (uint32_t)i;
            if (write(fds[1], &done, sizeof done) != (ssize_t)sizeof done) _exit(3);
        }
        exit(0);
    }
    close(fds[1]);
    size_t next = from;
    uint32_t done;
    while (pid > 0 && read(fds[0], &done, sizeof done) == (ssize_t)sizeof done && done == next) {
        double t = now_s();
        out[next] = (conf_outcome){.result = CONF_PASS, .seconds = t - t0};
        t0 = t;
        next++;
    }
    close(fds[0]);
    int status = pid > 0 ? wait_child(pid) : 0;
    if (next < to) {
        char tail[4096];
        read_tail(err, tail, sizeof tail);
        out[next].seconds = now_s() - t0;
        if (pid < 0)
            snprintf(out[next].reason, REASON_SIZE, "fork: %s", strerror(errno));
        else
            judge(status, tail, o, &out[next]);
        if (out[next].result == CONF_PASS) { /* ended at once without saying so: a
                                                check called _exit(0) */
            out[next].result = CONF_FAIL;
            snprintf(out[next].reason, REASON_SIZE, "the check ended its process without returning");
        }
        next++;
    }
    fclose(err);
    return next;
}

static int usage(FILE *f) {
    fprintf(f, "usage: rk conformance [--backend B]... [--check SUBSTRING] "
               "[--json] [--timeout S] [--verbose]\n"
               "Runs the conformance suite (tests/conformance) on each backend "
               "built into this library\n"
               "(or those named) and prints check x backend -> pass / skip / "
               "fail. A backend that is not\n"
               "present here is skipped. Exit: 0 nothing failed, 1 a check "
               "failed, 77 every backend skipped.\n");
    return f == stdout ? 0 : 2;
}

static int parse(int argc, char **argv, conf_options *o) {
    *o = (conf_options){.timeout_s = 120};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--json") == 0) {
            o->json = true;
        } else if (strcmp(a, "--verbose") == 0 || strcmp(a, "-v") == 0) {
            o->verbose = true;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            return usage(stdout) - 1;
        } else if (strcmp(a, "--backend") == 0 && v) {
            if (o->backend_count == MAX_BACKENDS) return usage(stderr);
            o->backends[o->backend_count++] = v;
            i++;
        } else if (strcmp(a, "--check") == 0 && v) {
            o->filter = v;
            i++;
        } else if (strcmp(a, "--timeout") == 0 && v && atoi(v) > 0) {
            o->timeout_s = (unsigned)atoi(v);
            i++;
        } else {
            fprintf(stderr, "rk conformance: unknown or incomplete option '%s'\n", a);
            return usage(stderr);
        }
    }
    for (size_t b = 0; b < o->backend_count; b++) {
        const rk_backend *found = NULL;
        /* Metal may be named before it is built here: its column then says skip. */
        if (rk_backend_find(o->backends[b], &found) != RK_OK && strcmp(o->backends[b], "metal") != 0) {
            fprintf(stderr, "rk conformance: no backend named '%s'\n", o->backends[b]);
            return 2;
        }
    }
    if (o->backend_count == 0) {
        for (size_t b = 0; b < rk_backend_count() && b < MAX_BACKENDS; b++)
            o->backends[o->backend_count++] = rk_backend_name(rk_backend_at(b));
    }
    return 0;
}

static bool selected(const conf_options *o, const conf_group *g, const conf_check *c) {
    if (!o->filter) return true;
    char full[160];
    snprintf(full, sizeof full, "%s.%s", g->name, c->name);
    return strstr(full, o->filter) != NULL;
}

static void json_string(const char *s) {
    putchar('"');
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            printf("\\%c", ch);
        else if (ch < 0x20)
            printf("\\u%04x", ch);
        else
            putchar(ch);
    }
    putchar('"');
}

int rk_conformance_main(int argc, char **argv) {
    conf_options o;
    int rc = parse(argc, argv, &o);
    if (rc != 0) return rc < 0 ? 0 : rc;

    size_t nb = o.backend_count, total = 0;
    for (size_t g = 0; g < conf_group_count; g++) total += conf_groups[g]->count;
    conf_outcome *results = calloc(total * nb + 1, sizeof *results);
    conf_outcome probes[MAX_BACKENDS];
    conf_outcome *outcomes = calloc(total + 1, sizeof *outcomes);
    const conf_check **picked = calloc(total + 1, sizeof *picked);
    const conf_group **picked_group = calloc(total + 1, sizeof *picked_group);
    size_t *picked_index = calloc(total + 1, sizeof *picked_index);
    CHECK(results && outcomes && picked && picked_group && picked_index);

    for (size_t b = 0; b < nb; b++) {
        conf_env env = {.backend = o.backends[b]};
        const rk_backend *found = NULL;
        if (rk_backend_find(env.backend, &found) != RK_OK) {
            probes[b] = (conf_outcome){.result = CONF_SKIP};
            snprintf(probes[b].reason, REASON_SIZE, "the %s backend is not built into this library", env.backend);
        } else {
            probes[b] = run_isolated(probe_check, &env, &o);
        }
        if (!o.json) fprintf(stderr, "%s: %s\n", env.backend, probes[b].reason);
        /* The selected checks, in order; runs of shared ones share a child. */
        size_t n = 0, i = 0;
        for (size_t g = 0; g < conf_group_count; g++)
            for (size_t c = 0; c < conf_groups[g]->count; c++, i++)
                if (selected(&o, conf_groups[g], &conf_groups[g]->checks[c])) {
                    picked[n] = &conf_groups[g]->checks[c];
                    picked_group[n] = conf_groups[g];
                    picked_index[n++] = i;
                }
        for (size_t k = 0; k < n;) {
            size_t end = k;
            if (probes[b].result != CONF_PASS) {
                outcomes[k] = probes[b];
                outcomes[k].seconds = 0;
                if (outcomes[k].result == CONF_FAIL)
                    snprintf(outcomes[k].reason, REASON_SIZE, "the backend did not open");
                end = k + 1;
            } else if (picked[k]->flags & CONF_OWN_PROCESS) {
                outcomes[k] = run_isolated(picked[k]->run, &env, &o);
                end = k + 1;
            } else {
                size_t to = k;
                while (to < n && !(picked[to]->flags & CONF_OWN_PROCESS)) to++;
                end = run_shared(picked, k, to, &env, &o, outcomes);
            }
            for (; k < end; k++) {
                results[picked_index[k] * nb + b] = outcomes[k];
                const conf_outcome *r = &outcomes[k];
                if (!o.json && probes[b].result == CONF_PASS)
                    fprintf(stderr, "  %-5s %s.%s %.2f s%s%s\n", result_names[r->result], picked_group[k]->name,
                            picked[k]->name, r->seconds, r->result == CONF_PASS ? "" : ": ",
                            r->result == CONF_PASS ? "" : r->reason);
            }
        }
    }

    size_t counts[MAX_BACKENDS][3] = {{0}};
    bool any_fail = false, any_ran = false;
    if (o.json)
        printf("{\"results\": [\n");
    else {
        printf("%-44s", "check");
        for (size_t b = 0; b < nb; b++) printf(" %-7s", o.backends[b]);
        printf("\n");
    }
    size_t i = 0;
    bool first = true;
    for (size_t g = 0; g < conf_group_count; g++) {
        const conf_group *grp = conf_groups[g];
        for (size_t c = 0; c < grp->count; c++, i++) {
            if (!selected(&o, grp, &grp->checks[c])) continue;
            char full[160];
            snprintf(full, sizeof full, "%s.%s", grp->name, grp->checks[c].name);
            if (!o.json) printf("%-44s", full);
            for (size_t b = 0; b < nb; b++) {
                const conf_outcome *r = &results[i * nb + b];
                counts[b][r->result]++;
                any_fail |= r->result == CONF_FAIL;
                any_ran |= r->result == CONF_PASS;
                if (!o.json) {
                    printf(" %-7s", result_names[r->result]);
                    continue;
                }
                printf("%s  {\"check\": ", first ? "" : ",\n");
                first = false;
                json_string(full);
                printf(", \"backend\": ");
                json_string(o.backends[b]);
                printf(", \"result\": \"%s\", \"seconds\": %.3f, \"reason\": ", result_names[r->result], r->seconds);
                json_string(r->result == CONF_PASS ? "" : r->reason);
                printf("}");
            }
            if (!o.json) printf("\n");
        }
    }
    if (o.json) {
        printf("\n], \"backends\": [\n");
        for (size_t b = 0; b < nb; b++) {
            printf("  {\"backend\": ");
            json_string(o.backends[b]);
            printf(", \"present\": %s, \"%s\": ", probes[b].result == CONF_PASS ? "true" : "false",
                   probes[b].result == CONF_PASS ? "device" : "reason");
            json_string(probes[b].reason);
            printf(", \"pass\": %zu, \"skip\": %zu, \"fail\": %zu}%s\n", counts[b][0], counts[b][1], counts[b][2],
                   b + 1 < nb ? "," : "");
        }
        printf("]}\n");
    } else {
        printf("\n");
        for (size_t b = 0; b < nb; b++)
            printf("%s: %zu pass, %zu skip, %zu fail; %s: %s\n", o.backends[b], counts[b][0], counts[b][1],
                   counts[b][2], probes[b].result == CONF_PASS ? "device" : "not run", probes[b].reason);
        i = 0;
        for (size_t g = 0; g < conf_group_count; g++) {
            const conf_group *grp = conf_groups[g];
            for (size_t c = 0; c < grp->count; c++, i++)
                for (size_t b = 0; b < nb; b++) {
                    const conf_outcome *r = &results[i * nb + b];
                    if (!selected(&o, grp, &grp->checks[c]) || r->result == CONF_PASS) continue;
                    if (probes[b].result != CONF_PASS) continue; /* said once above */
                    printf("%s %s.%s: %s: %s\n", o.backends[b], grp->name, grp->checks[c].name, result_names[r->result],
                           r->reason);
                }
        }
    }
    free(results);
    free(outcomes);
    free(picked);
    free(picked_group);
    free(picked_index);
    if (any_fail) return 1;
    return any_ran ? 0 : 77;
}
