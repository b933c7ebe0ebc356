/* Attacks on the CPU backend's compile cache, one per test case (argv[1]).
 * Each case gets a fresh cache directory (RK_CACHE_DIR), plants something the
 * library did not write, compiles a kernel computing a + b, and checks that
 * the answer is right and nothing planted ran or was written through.
 *
 * The plants cover the cache's file names of this version (learned by
 * listing the cache after a first compile) and of the version before it
 * (<sha256(source)>.c, <key>.so, include/<hash>/ringkernel/dsl.h, temporary
 * names <name>.tmp.<pid>.<n>), so each case also fails on the old code. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cpu/cpu_device.h"
#include "cpu/cpu_test.h"

static char work[64], cache[128], source[512];

static void make_source(const char *name) {
    snprintf(source, sizeof source,
             "RK_KERNEL void add(int *out, int a, int b) { out[0] = a + b; }\n/* case %s, %ld */\n", name,
             (long)getpid());
}

/* Compiles source, runs add(40, 2), destroys the module; the status of the compile. */
static rk_status compile_and_add(rk_context *ctx, int *result) {
    rk_module *m = NULL;
    rk_status s = rk_module_compile(ctx, source, NULL, &m);
    if (s != RK_OK) return s;
    rk_function *fn = NULL;
    rk_buffer *buf = NULL;
    CHECK_OK(rk_module_get_function(m, "add", &fn));
    CHECK_OK(rk_buffer_alloc(ctx, sizeof(int), &buf));
    rk_arg args[] = {RK_ARG_BUF(buf), RK_ARG_INT(40), RK_ARG_INT(2)};
    rk_launch_desc d = launch_1d(1, 1, args, 3);
    CHECK_OK(rk_launch(fn, &d));
    CHECK_OK(rk_copy_to_host(ctx, result, buf, 0, sizeof *result, NULL));
    CHECK_OK(rk_context_synchronize(ctx));
    CHECK_OK(rk_buffer_free(buf));
    CHECK_OK(rk_module_destroy(m));
    return RK_OK;
}

static void check_adds(rk_context *ctx) {
    int result = 0;
    CHECK_OK(compile_and_add(ctx, &result));
    CHECK_EQ(result, 42);
}

static void write_text(const char *path, const char *text, const char *mode) {
    FILE *f = fopen(path, mode);
    CHECK(f != NULL);
    fputs(text, f);
    CHECK_EQ(fclose(f), 0);
}

static bool exists(const char *path) {
    struct stat st;
    return lstat(path, &st) == 0;
}

/* Calls fn on every regular file or symlink under dir (relative names). */
static void walk(const char *dir, const char *rel, void (*fn)(const char *path, const char *rel, void *), void *user) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char path[1024], sub[1024];
        /* a name that does not fit is not one of the cache's (short) files */
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path ||
            snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", e->d_name) >= (int)sizeof sub)
            continue;
        struct stat st;
        if (lstat(path, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) walk(path, sub, fn, user);
        else fn(path, sub, user);
    }
    closedir(d);
}

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* A shared object whose constructor creates marker and whose add() answers 7. */
static void build_evil_object(const char *so, const char *marker) {
    char c[600], cmd[2048];
    snprintf(c, sizeof c, "%s/evil.c", work);
    char text[1024];
    snprintf(text, sizeof text,
             "#include <fcntl.h>\n#include <unistd.h>\n"
             "__attribute__((constructor)) static void evil(void) { close(open(\"%s\", O_CREAT | O_WRONLY, 0600)); }\n"
             "void *rk__dsl_runtime;\n"
             "void add(int *out, int a, int b) { (void)a; (void)b; out[0] = 7; }\n",
             marker);
    write_text(c, text, "w");
    const char *cc = getenv("CC");
    snprintf(cmd, sizeof cmd, "%s -shared -fPIC -o '%s' '%s'", cc && *cc ? cc : "cc", so, c);
    CHECK_EQ(system(cmd), 0);
}

static void copy_file(const char *from, const char *to) {
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    CHECK(in && out);
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) CHECK_EQ(fwrite(buf, 1, n, out), n);
    fclose(in);
    CHECK_EQ(fclose(out), 0);
}

/* ---- the cases ------------------------------------------------------------------------ */

/* Old code compiled <sha256(source)[:32]>.c if present: plant other source there. */
static void case_planted_source(rk_context *ctx) {
    rk__sha256 h;
    char hex[65], path[600];
    rk__sha256_init(&h);
    rk__sha256_update(&h, source, strlen(source));
    rk__sha256_hex(&h, hex);
    snprintf(path, sizeof path, "%s/%.32s.c", cache, hex);
    write_text(path, "RK_KERNEL void add(int *out, int a, int b) { (void)a; (void)b; out[0] = 7; }\n", "w");
    check_adds(ctx);
}

static void replace_module(const char *path, const char *rel, void *user) {
    (void)rel;
    if (ends_with(path, ".so") || ends_with(path, ".rkmod")) {
        copy_file((const char *)user, path);
        printf("replaced %s\n", path);
    }
}

/* A module file in the cache replaced by another object: its constructor must not run. */
static void case_planted_object(rk_context *ctx) {
    char so[600], marker[600];
    snprintf(so, sizeof so, "%s/evil.so", work);
    snprintf(marker, sizeof marker, "%s/constructor-ran", work);
    build_evil_object(so, marker);
    check_adds(ctx); /* fills the cache */
    walk(cache, "", replace_module, so);
    check_adds(ctx);
    CHECK(!exists(marker));
}

static void tamper_header(const char *path, const char *rel, void *user) {
    (void)rel;
    if (ends_with(path, "/dsl.h")) {
        write_text(path, (const char *)user, "a");
        printf("appended to %s\n", path);
    }
}

/* Code appended to a dsl.h in the cache must not reach any later kernel. */
static void case_tampered_header(rk_context *ctx) {
    char marker[600], code[1024], planted[700];
    snprintf(marker, sizeof marker, "%s/header-code-ran", work);
    snprintf(code, sizeof code,
             "\nint open(const char *, int, ...);\n"
             "__attribute__((constructor)) static void rk_tampered(void) { open(\"%s\", 0100 | 01, 0600); }\n",
             marker);
    check_adds(ctx);
    /* and a copy where this version would look if it kept one */
    snprintf(planted, sizeof planted, "%s/ringkernel", cache);
    mkdir(planted, 0700);
    snprintf(planted, sizeof planted, "%s/ringkernel/dsl.h", cache);
    write_text(planted, "", "w");
    walk(cache, "", tamper_header, code);
    make_source("tampered-header-second");
    check_adds(ctx);
    CHECK(!exists(marker));
}

/* A cache directory open to everyone: not used itself; a private subdirectory is. */
static void case_foreign_directory(rk_context *ctx) {
    CHECK_EQ(chmod(cache, 0777), 0);
    if (geteuid() == 0) CHECK_EQ(chown(cache, 65534, 65534), 0); /* owned by nobody, as root can arrange */
    check_adds(ctx);
    char sub[600];
    snprintf(sub, sizeof sub, "%s/ringkernel-%lu", cache, (unsigned long)geteuid());
    struct stat st;
    CHECK_EQ(stat(sub, &st), 0);
    CHECK_EQ(st.st_mode & 0777, 0700);
    CHECK_EQ(st.st_uid, geteuid());
    DIR *d = opendir(cache);
    CHECK(d != NULL);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) { /* nothing but the subdirectory in the open directory */
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        printf("in the open directory: %s\n", e->d_name);
        CHECK(strncmp(e->d_name, "ringkernel-", 11) == 0);
    }
    closedir(d);

    /* A private subdirectory that is not private: refused, with a reason. */
    CHECK_EQ(chmod(sub, 0755), 0);
    make_source("foreign-directory-second");
    rk_module *m = NULL;
    CHECK_STATUS(rk_module_compile(ctx, source, NULL, &m), RK_IO_ERROR);
    CHECK_STR_CONTAINS(rk_last_error(), "refusing");
}

typedef struct name_list {
    char names[64][256];
    int count;
} name_list;

static void remember(const char *path, const char *rel, void *user) {
    (void)path;
    name_list *l = user;
    if (l->count < 64 && strlen(rel) < sizeof l->names[0]) memcpy(l->names[l->count++], rel, strlen(rel) + 1);
}

static void unlink_file(const char *path, const char *rel, void *user) {
    (void)rel;
    (void)user;
    unlink(path);
}

/* Symlinks at every name the cache writes (and the old code's temporary names
 * for them) must not be followed: the file they point at stays untouched. */
static void case_symlinked_temp(rk_context *ctx) {
    char victim[600];
    snprintf(victim, sizeof victim, "%s/victim", work);
    write_text(victim, "precious\n", "w");
    CHECK_EQ(chmod(victim, 0600), 0);
    check_adds(ctx);
    name_list names = {.count = 0};
    walk(cache, "", remember, &names);
    walk(cache, "", unlink_file, NULL);
    CHECK_GT(names.count, 0);
    int planted = 0;
    for (int i = 0; i < names.count; i++) {
        char path[1024];
        /* the directories a name lives in */
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/%s", cache, names.names[i]);
        for (char *s = dir + strlen(cache) + 1; (s = strchr(s, '/')) != NULL; s++) {
            *s = '\0';
            mkdir(dir, 0700);
            *s = '/';
        }
        snprintf(path, sizeof path, "%s/%s", cache, names.names[i]);
        planted += symlink(victim, path) == 0;
        for (int n = 0; n < 256; n++) {
            snprintf(path, sizeof path, "%s/%s.tmp.%ld.%d", cache, names.names[i], (long)getpid(), n);
            planted += symlink(victim, path) == 0;
        }
    }
    printf("planted %d symlinks\n", planted);
    check_adds(ctx);
    char text[64] = "";
    FILE *f = fopen(victim, "r");
    CHECK(f != NULL);
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    CHECK(strcmp(text, "precious\n") == 0);
}

static void truncate_module(const char *path, const char *rel, void *user) {
    (void)rel;
    if (!ends_with(path, ".so") && !ends_with(path, ".rkmod")) return;
    struct stat st;
    CHECK_EQ(stat(path, &st), 0);
    CHECK_EQ(truncate(path, st.st_size / 2), 0);
    *(int *)user += 1;
}

static void sum_module_sizes(const char *path, const char *rel, void *user) {
    (void)rel;
    struct stat st;
    if ((ends_with(path, ".so") || ends_with(path, ".rkmod")) && stat(path, &st) == 0) *(off_t *)user += st.st_size;
}

/* A truncated cached module is removed and rebuilt, not a failure forever. */
static void case_truncated_module(rk_context *ctx) {
    check_adds(ctx);
    off_t before = 0, after = 0;
    walk(cache, "", sum_module_sizes, &before);
    int truncated = 0;
    walk(cache, "", truncate_module, &truncated);
    CHECK_GT(truncated, 0);
    check_adds(ctx);
    walk(cache, "", sum_module_sizes, &after);
    CHECK_EQ(after, before); /* rebuilt in the cache too */
    check_adds(ctx);
}

/* The compiler runs under a memory limit: a handler including /dev/zero fails
 * fast with the limit named, instead of eating the machine's memory. */
static void case_compiler_memory_limit(rk_context *ctx) {
    CHECK_EQ(setenv("RK_COMPILE_MEMORY_MB", "256", 1), 0);
    snprintf(source, sizeof source, "#include \"/dev/zero\"\nRK_KERNEL void add(int *out) { out[0] = 1; }\n");
    rk_module *m = NULL;
    CHECK_STATUS(rk_module_compile(ctx, source, NULL, &m), RK_COMPILE_FAILED);
    CHECK_STR_CONTAINS(rk_last_error(), "memory limit of 256 MiB");
}

/* ... and a time limit: a compiler that never finishes is stopped. */
static void case_compiler_time_limit(rk_context *ctx) {
    char script[600];
    snprintf(script, sizeof script, "%s/slow-cc", work);
    write_text(script, "#!/bin/sh\nsleep 60\n", "w");
    CHECK_EQ(chmod(script, 0700), 0);
    CHECK_EQ(setenv("CC", script, 1), 0);
    CHECK_EQ(setenv("RK_COMPILE_SECONDS", "1", 1), 0);
    rk_module *m = NULL;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK_STATUS(rk_module_compile(ctx, source, NULL, &m), RK_COMPILE_FAILED);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("stopped after %.2f s\n", seconds);
    CHECK_STR_CONTAINS(rk_last_error(), "time limit of 1 s");
    CHECK(seconds < 10);
}

static const struct {
    const char *name;
    void (*run)(rk_context *);
} cases[] = {
    {"planted-source", case_planted_source},         {"planted-object", case_planted_object},
    {"tampered-header", case_tampered_header},       {"foreign-directory", case_foreign_directory},
    {"symlinked-temp", case_symlinked_temp},         {"truncated-module", case_truncated_module},
    {"compiler-memory-limit", case_compiler_memory_limit}, {"compiler-time-limit", case_compiler_time_limit},
};

static void remove_tree(const char *dir) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'", dir, dir);
    (void)!system(cmd);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s CASE\n", argv[0]);
        return 2;
    }
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (strcmp(cases[i].name, argv[1]) != 0) continue;
        snprintf(work, sizeof work, "/tmp/rk-poison-XXXXXX");
        CHECK(mkdtemp(work) != NULL);
        snprintf(cache, sizeof cache, "%s/cache", work);
        CHECK_EQ(mkdir(cache, 0700), 0);
        CHECK_EQ(setenv("RK_CACHE_DIR", cache, 1), 0);
        make_source(argv[1]);
        rk_context *ctx = cpu_context();
        cases[i].run(ctx);
        CHECK_OK(rk_context_destroy(ctx));
        remove_tree(work);
        printf("%s: ok\n", argv[1]);
        return 0;
    }
    fprintf(stderr, "%s: unknown case '%s'\n", argv[0], argv[1]);
    return 2;
}
