/* Compiles DSL C source into a shared object with the system C compiler, and
 * keeps the result in a cache named by a content hash, so a second compile
 * of the same source loads the cached object without running the compiler.
 *
 *   cache dir:  $RK_CACHE_DIR, else $XDG_CACHE_HOME/ringkernel, else ~/.cache/ringkernel
 *   compiler:   $CC (split on blanks, no shell), else cc
 *   key:        SHA-256 of the flags, the compiler's identity, dsl.h and the source
 *               (the preprocessed source when the caller adds include dirs, so
 *               edits to their headers are seen)
 *
 * Files appear atomically (written to a unique temporary name, then renamed),
 * so processes and threads compiling the same source at once are safe.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cpu_device.h"

extern char **environ;

enum { LOG_LIMIT = 1 << 20 };

/* ---- a growable argv ------------------------------------------------------------ */

typedef struct strv {
    char **items;
    size_t count, capacity;
    bool failed;
} strv;

static void strv_push(strv *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void strv_push(strv *v, const char *fmt, ...) {
    if (v->failed) return;
    if (v->count + 2 > v->capacity) {
        size_t cap = v->capacity ? v->capacity * 2 : 16;
        char **items = realloc(v->items, cap * sizeof *items);
        if (!items) {
            v->failed = true;
            return;
        }
        v->items = items;
        v->capacity = cap;
    }
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0) {
        v->failed = true;
        return;
    }
    v->items[v->count++] = s;
    v->items[v->count] = NULL;
}

static void strv_free(strv *v) {
    for (size_t i = 0; i < v->count; i++) free(v->items[i]);
    free(v->items);
    memset(v, 0, sizeof *v);
}

/* ---- files ------------------------------------------------------------------------ */

static rk_status mkdir_p(const char *path) {
    char *p = strdup(path);
    if (!p) return rk__fail(RK_OUT_OF_MEMORY, "cpu: out of memory");
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s) continue;
        char c = *s;
        *s = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST) {
            rk_status st = rk__fail(RK_IO_ERROR, "cpu: cannot create the kernel cache directory %s: %s", p,
                                    strerror(errno));
            free(p);
            return st;
        }
        *s = c;
        if (!c) break;
    }
    free(p);
    return RK_OK;
}

/* A name no other thread or process will pick for its temporary file. */
static char *temp_name(const char *path) {
    static atomic_uint counter;
    char *t = NULL;
    if (asprintf(&t, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&counter, 1)) < 0) return NULL;
    return t;
}

static rk_status write_file_atomic(const char *path, const void *data, size_t size) {
    char *tmp = temp_name(path);
    if (!tmp) return rk__fail(RK_OUT_OF_MEMORY, "cpu: out of memory");
    rk_status st = RK_OK;
    FILE *f = fopen(tmp, "wb");
    if (!f || fwrite(data, 1, size, f) != size) st = rk__fail(RK_IO_ERROR, "cpu: cannot write %s: %s", tmp, strerror(errno));
    if (f && fclose(f) != 0 && st == RK_OK) st = rk__fail(RK_IO_ERROR, "cpu: cannot write %s: %s", tmp, strerror(errno));
    if (st == RK_OK && rename(tmp, path) != 0)
        st = rk__fail(RK_IO_ERROR, "cpu: cannot rename %s to %s: %s", tmp, path, strerror(errno));
    if (st != RK_OK) unlink(tmp);
    free(tmp);
    return st;
}

static rk_status read_file(const char *path, char **data, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return rk__fail(RK_IO_ERROR, "cpu: cannot read %s: %s", path, strerror(errno));
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap) break;
        char *bigger = realloc(buf, cap * 2);
        if (!bigger) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    fclose(f);
    if (!buf) return rk__fail(RK_OUT_OF_MEMORY, "cpu: out of memory reading %s", path);
    *data = buf;
    *size = n;
    return RK_OK;
}

static rk_status cache_dir(char **out) {
    const char *env = getenv("RK_CACHE_DIR");
    int n;
    if (env && *env) {
        n = asprintf(out, "%s", env);
    } else if ((env = getenv("XDG_CACHE_HOME")) && *env) {
        n = asprintf(out, "%s/ringkernel", env);
    } else if ((env = getenv("HOME")) && *env) {
        n = asprintf(out, "%s/.cache/ringkernel", env);
    } else {
        return rk__fail(RK_IO_ERROR, "cpu: no kernel cache directory: set RK_CACHE_DIR, XDG_CACHE_HOME or HOME");
    }
    if (n < 0) return rk__fail(RK_OUT_OF_MEMORY, "cpu: out of memory");
    rk_status st = mkdir_p(*out);
    if (st != RK_OK) {
        free(*out);
        *out = NULL;
    }
    return st;
}

/* <cache>/include/<hash of dsl.h>/ringkernel/dsl.h, from the copy built into the library. */
static rk_status dsl_include_dir(const char *cache, char **out) {
    rk__sha256 h;
    char hex[65];
    rk__sha256_init(&h);
    rk__sha256_update(&h, rk__cpu_dsl_header, rk__cpu_dsl_header_size);
    rk__sha256_hex(&h, hex);
    char *dir = NULL, *sub = NULL, *file = NULL;
    rk_status st = RK_OK;
    if (asprintf(&dir, "%s/include/%.16s", cache, hex) < 0) dir = NULL;
    if (dir && asprintf(&sub, "%s/ringkernel", dir) < 0) sub = NULL;
    if (sub && asprintf(&file, "%s/dsl.h", sub) < 0) file = NULL;
    if (!file) st = rk__fail(RK_OUT_OF_MEMORY, "cpu: out of memory");
    if (st == RK_OK && access(file, R_OK) != 0) {
        st = mkdir_p(sub);
        if (st == RK_OK) st = write_file_atomic(file, rk__cpu_dsl_header, rk__cpu_dsl_header_size);
    }
    free(sub);
    free(file);
    if (st != RK_OK) {
        free(dir);
        return st;
    }
    *out = dir;
    return RK_OK;
}

/* ---- the compiler ---------------------------------------------------------------------- */

/* $CC split on blanks: "ccache gcc -m64" is three words. */
static rk_status compiler_words(strv *argv) {
    const char *cc = getenv("CC");
    if (!cc || !*cc) cc = "cc";
    for (const char *p = cc; *p;) {
        while (*p == ' ' || *p == '\t') p++;
        size_t n = strcspn(p, " \t");
        if (n) strv_push(argv, "%.*s", (int)n, p);
        p += n;
    }
    if (argv->failed) return rk__fail(RK_OUT_OF_MEMORY, "cpu: out of memory");
    if (!argv->count) return rk__fail(RK_INVALID_ARGUMENT, "cpu: $CC names no compiler");
    return RK_OK;
}

/* Hashes where the compiler binary is and which build it is (size, mtime), so an
 * upgraded compiler does not reuse old objects, without running it on a hit. */
static void hash_compiler_identity(rk__sha256 *h, const char *prog) {
    char path[4096] = "";
    struct stat st;
    bool found = false;
    if (strchr(prog, '/')) {
        snprintf(path, sizeof path, "%s", prog);
        found = stat(path, &st) == 0;
    } else {
        const char *dirs = getenv("PATH");
        if (!dirs) dirs = "/usr/bin:/bin";
        for (const char *p = dirs; *p && !found;) {
            size_t n = strcspn(p, ":");
            snprintf(path, sizeof path, "%.*s/%s", (int)n, p, prog);
            found = stat(path, &st) == 0 && S_ISREG(st.st_mode);
            p += n + (p[n] == ':');
        }
    }
    rk__sha256_update(h, path, strlen(path) + 1);
    if (found) {
        long long facts[3] = {(long long)st.st_size, (long long)st.st_mtim.tv_sec, (long long)st.st_mtim.tv_nsec};
        rk__sha256_update(h, facts, sizeof facts);
    }
}

/* Runs argv with stdout and stderr into *log; *exit_code is -1 if it did not exit normally. */
static rk_status run_tool(char *const argv[], int *exit_code, char **log) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return rk__fail(RK_IO_ERROR, "cpu: pipe: %s", strerror(errno));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    pid_t pid;
    int e = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (e != 0) {
        close(fds[0]);
        return rk__fail(RK_COMPILE_FAILED, "cpu: cannot run the C compiler '%s': %s (set CC to a C compiler)", argv[0],
                        strerror(e));
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        char chunk[4096];
        ssize_t got = read(fds[0], chunk, sizeof chunk);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        if (!buf || n + (size_t)got + 1 > LOG_LIMIT) continue; /* keep draining so the child never blocks */
        if (n + (size_t)got + 1 > cap) {
            while (n + (size_t)got + 1 > cap) cap *= 2;
            char *bigger = realloc(buf, cap);
            if (!bigger) {
                free(buf);
                buf = NULL;
                continue;
            }
            buf = bigger;
        }
        memcpy(buf + n, chunk, (size_t)got);
        n += (size_t)got;
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            status = -1;
            break;
        }
    }
    if (buf) buf[n] = '\0';
    *log = buf;
    *exit_code = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return RK_OK;
}

/* Runs the compiler; a failure is RK_COMPILE_FAILED with its whole output. */
static rk_status compile(strv *argv) {
    int code = -1;
    char *log = NULL;
    uint64_t t0 = rk__now_ns();
    rk_status st = run_tool(argv->items, &code, &log);
    if (st != RK_OK) return st;
    if (code != 0) {
        st = rk__fail(RK_COMPILE_FAILED, "cpu: the C compiler '%s' failed (exit code %d). Its output:\n", argv->items[0],
                      code);
        rk__fail_append(log ? log : "(output not captured: out of memory)\n");
    } else {
        rk__log(RK_LOG_DEBUG, "cpu: ran %s in %.1f ms", argv->items[0], (double)(rk__now_ns() - t0) / 1e6);
    }
    free(log);
    return st;
}

/* The flags that decide what is built (hashed), without output or input names. */
static rk_status build_flags(strv *v, const char *include_dir, const rk_compile_options *opts) {
    rk_status st = compiler_words(v);
    if (st != RK_OK) return st;
    if (opts->optimization_level < 0 || opts->optimization_level > 3)
        return rk__fail(RK_INVALID_ARGUMENT, "rk_module_compile: optimization_level %d is not 0 (default) to 3",
                        opts->optimization_level);
    strv_push(v, "-std=c11");
    strv_push(v, "-O%d", opts->optimization_level ? opts->optimization_level : 2);
    if (opts->debug_info) strv_push(v, "-g");
    strv_push(v, "-fPIC");
    strv_push(v, "-DRK_CPU_MODULE");
    strv_push(v, "-I%s", include_dir);
    for (size_t i = 0; i < opts->include_dir_count; i++) {
        if (!opts->include_dirs[i] || !*opts->include_dirs[i])
            return rk__fail(RK_INVALID_ARGUMENT, "rk_module_compile: include dir %zu is NULL or empty", i);
        strv_push(v, "-I%s", opts->include_dirs[i]);
    }
    for (size_t i = 0; i < opts->define_count; i++) {
        const char *d = opts->defines[i];
        if (!d || !*d || *d == '=')
            return rk__fail(RK_INVALID_ARGUMENT, "rk_module_compile: define %zu is NULL, empty or has no name", i);
        strv_push(v, "-D%s", d);
    }
    /* Kernels need not include dsl.h themselves; its include guard makes a second include harmless. */
    strv_push(v, "-include");
    strv_push(v, "%s/ringkernel/dsl.h", include_dir);
    if (v->failed) return rk__fail(RK_OUT_OF_MEMORY, "cpu: out of memory");
    return RK_OK;
}

static rk_status copy_argv(strv *to, const strv *from) {
    for (size_t i = 0; i < from->count; i++) strv_push(to, "%s", from->items[i]);
    return to->failed ? rk__fail(RK_OUT_OF_MEMORY, "cpu: out of memory") : RK_OK;
}

/* With caller include dirs the source alone does not say what is compiled:
 * hash what the preprocessor makes of it. */
static rk_status hash_preprocessed(rk__sha256 *h, const strv *flags, const char *src_path) {
    strv argv = {0};
    char *out = NULL, *text = NULL;
    size_t size = 0;
    rk_status st = copy_argv(&argv, flags);
    if (st == RK_OK && !(out = temp_name(src_path))) st = rk__fail(RK_OUT_OF_MEMORY, "cpu: out of memory");
    if (st == RK_OK) {
        strv_push(&argv, "-E");
        strv_push(&argv, "-o");
        strv_push(&argv, "%s", out);
        strv_push(&argv, "%s", src_path);
        st = argv.failed ? rk__fail(RK_OUT_OF_MEMORY, "cpu: out of memory") : compile(&argv);
    }
    if (st == RK_OK) st = read_file(out, &text, &size);
    if (st == RK_OK) rk__sha256_update(h, text, size);
    if (out) unlink(out);
    free(out);
    free(text);
    strv_free(&argv);
    return st;
}

rk_status rk__cpu_compile_to_file(const char *source, const rk_compile_options *opts, char **so_path) {
    char *cache = NULL, *include_dir = NULL, *src_path = NULL, *so = NULL, *tmp = NULL;
    strv flags = {0}, argv = {0};
    rk__sha256 h;
    char hex[65], source_hex[65];
    rk_status st = cache_dir(&cache);
    if (st == RK_OK) st = dsl_include_dir(cache, &include_dir);
    if (st == RK_OK) st = build_flags(&flags, include_dir, opts);
    if (st != RK_OK) goto done;

    /* The source file is named by the source alone, so it is written once. */
    rk__sha256_init(&h);
    rk__sha256_update(&h, source, strlen(source));
    rk__sha256_hex(&h, source_hex);
    if (asprintf(&src_path, "%s/%.32s.c", cache, source_hex) < 0) {
        src_path = NULL;
        st = rk__fail(RK_OUT_OF_MEMORY, "cpu: out of memory");
        goto done;
    }
    if (access(src_path, R_OK) != 0 && (st = write_file_atomic(src_path, source, strlen(source))) != RK_OK) goto done;

    rk__sha256_init(&h);
    static const char tag[] = "ringkernel cpu module v1";
    rk__sha256_update(&h, tag, sizeof tag);
    for (size_t i = 0; i < flags.count; i++) rk__sha256_update(&h, flags.items[i], strlen(flags.items[i]) + 1);
    hash_compiler_identity(&h, flags.items[0]);
    rk__sha256_update(&h, rk__cpu_dsl_header, rk__cpu_dsl_header_size);
    rk__sha256_update(&h, source_hex, sizeof source_hex);
    if (opts->include_dir_count && (st = hash_preprocessed(&h, &flags, src_path)) != RK_OK) goto done;
    rk__sha256_hex(&h, hex);
    if (asprintf(&so, "%s/%.32s.so", cache, hex) < 0) {
        so = NULL;
        st = rk__fail(RK_OUT_OF_MEMORY, "cpu: out of memory");
        goto done;
    }
    if (access(so, R_OK) == 0) {
        rk__log(RK_LOG_DEBUG, "cpu: kernel cache hit %s", so);
        goto done;
    }

    if (!(tmp = temp_name(so))) {
        st = rk__fail(RK_OUT_OF_MEMORY, "cpu: out of memory");
        goto done;
    }
    st = copy_argv(&argv, &flags);
    if (st != RK_OK) goto done;
    strv_push(&argv, "-shared");
    strv_push(&argv, "-Wl,-z,defs"); /* an undefined function is a compile error, not a load error */
    strv_push(&argv, "-o");
    strv_push(&argv, "%s", tmp);
    strv_push(&argv, "%s", src_path);
    strv_push(&argv, "-lm");
    if (argv.failed) {
        st = rk__fail(RK_OUT_OF_MEMORY, "cpu: out of memory");
        goto done;
    }
    st = compile(&argv);
    if (st == RK_OK && rename(tmp, so) != 0)
        st = rk__fail(RK_IO_ERROR, "cpu: cannot rename %s to %s: %s", tmp, so, strerror(errno));
    if (st != RK_OK) unlink(tmp);

done:
    if (st == RK_OK) {
        *so_path = so;
        so = NULL;
    }
    strv_free(&flags);
    strv_free(&argv);
    free(cache);
    free(include_dir);
    free(src_path);
    free(so);
    free(tmp);
    return st;
}
