/* Compiles DSL C source into a shared object with the system C compiler and
 * keeps the result in a cache, trusting nothing in the cache it did not write:
 *
 *   cache dir:  private (cpu_cache_dir.c): $RK_CACHE_DIR, else $XDG_CACHE_HOME/ringkernel,
 *               else ~/.cache/ringkernel
 *   compiler:   $CC (split on blanks, no shell), else cc, under time and memory
 *               limits (cpu_compiler_run.c)
 *   key:        SHA-256 of the compiler's words and flags, the compiler's identity,
 *               every embedded project header (dsl.h is force-included), and the
 *               source (the preprocessed source when the caller adds include dirs,
 *               so edits to their headers are seen)
 *   entry:      <key>.rkmod = a header (magic, key, SHA-256 and size of the object)
 *               followed by the object's bytes
 *
 * Each compile writes the headers and the source afresh, with exclusive
 * creates, into a private build directory of its own; nothing the cache held
 * before is compiled or included. A cached entry is reused only if it is a
 * regular file of ours that nobody else can write, belongs to this key, and
 * its object's bytes hash to what the header says; those verified bytes are
 * what gets loaded (from a fresh private copy), so the entry cannot change
 * between the check and dlopen. An entry that fails any of this, or fails to
 * load, is removed and the source compiled once more. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpu_compile_internal.h"

enum { MAX_OBJECT_SIZE = 256 << 20, MAX_PREPROCESSED_SIZE = 64 << 20 };

static const char SOURCE_NAME[] = "kernel.c", OBJECT_NAME[] = "module.so", PREPROCESSED_NAME[] = "kernel.i";

/* ---- the entry format ------------------------------------------------------------- */

typedef struct entry_header {
    char magic[8];   /* "RKMOD02\n" */
    char key[64];    /* hex: which inputs this object was built from */
    char digest[64]; /* hex: SHA-256 of the object bytes that follow */
    uint64_t size;   /* bytes that follow */
} entry_header;

static const char ENTRY_MAGIC[8] = {'R', 'K', 'M', 'O', 'D', '0', '2', '\n'};

static void digest_hex(const void *data, size_t size, char out[65]) {
    rk__sha256 h;
    rk__sha256_init(&h);
    rk__sha256_update(&h, data, size);
    rk__sha256_hex(&h, out);
}

/* The object inside a cached entry, or NULL (with why) if the entry is not one we wrote for this key. */
static const unsigned char *entry_object(const unsigned char *entry, size_t size, const char key[65], size_t *object_size,
                                         const char **why) {
    entry_header h;
    if (size < sizeof h) {
        *why = "shorter than its header";
        return NULL;
    }
    memcpy(&h, entry, sizeof h);
    char digest[65];
    if (memcmp(h.magic, ENTRY_MAGIC, sizeof h.magic) != 0) *why = "not a ringkernel cache entry";
    else if (memcmp(h.key, key, sizeof h.key) != 0) *why = "built from other inputs";
    else if (h.size != size - sizeof h) *why = "truncated or extended";
    else if (digest_hex(entry + sizeof h, (size_t)h.size, digest), memcmp(digest, h.digest, sizeof h.digest) != 0)
        *why = "its object does not match its recorded SHA-256";
    else {
        *object_size = (size_t)h.size;
        return entry + sizeof h;
    }
    return NULL;
}

static rk_status store_entry(int dirfd, const char *name, const char key[65], const unsigned char *object, size_t size) {
    entry_header h;
    memcpy(h.magic, ENTRY_MAGIC, sizeof h.magic);
    memcpy(h.key, key, sizeof h.key);
    char digest[65];
    digest_hex(object, size, digest);
    memcpy(h.digest, digest, sizeof h.digest);
    h.size = size;
    unsigned char *entry = malloc(sizeof h + size);
    if (!entry) return rk__fail(RK_OUT_OF_MEMORY, "cpu: out of memory");
    memcpy(entry, &h, sizeof h);
    memcpy(entry + sizeof h, object, size);
    rk_status st = rk__cpu_write_replace(dirfd, name, entry, sizeof h + size);
    free(entry);
    return st;
}

/* dlopens exactly these bytes: a fresh private copy under a random name in
 * the cache directory, reached through its descriptor and removed once loaded.
 * The name must never repeat: dlopen returns an already loaded object whose
 * name matches without opening the file. */
static rk_status load_object(int cache_fd, const unsigned char *object, size_t size, void **handle) {
    char name[64], path[128];
    rk_status st = rk__cpu_random_name(name, sizeof name, "load-", ".so");
    if (st == RK_OK) st = rk__cpu_write_new(cache_fd, name, object, size);
    if (st != RK_OK) return st;
    snprintf(path, sizeof path, "/proc/self/fd/%d/%s", cache_fd, name);
    *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!*handle) st = rk__fail(RK_COMPILE_FAILED, "cpu: cannot load the compiled module: %s", dlerror());
    unlinkat(cache_fd, name, 0);
    return st;
}

/* ---- flags and key ------------------------------------------------------------------ */

/* $CC split on blanks: "ccache gcc -m64" is three words. */
static rk_status compiler_words(rk__strv *argv) {
    const char *cc = getenv("CC");
    if (!cc || !*cc) cc = "cc";
    for (const char *p = cc; *p;) {
        while (*p == ' ' || *p == '\t') p++;
        size_t n = strcspn(p, " \t");
        if (n) rk__strv_push(argv, "%.*s", (int)n, p);
        p += n;
    }
    if (argv->failed) return rk__fail(RK_OUT_OF_MEMORY, "cpu: out of memory");
    if (!argv->count) return rk__fail(RK_INVALID_ARGUMENT, "cpu: $CC names no compiler");
    return RK_OK;
}

/* Hashes where the compiler binary is and which build it is (size, mtime), so an
 * upgraded compiler does not reuse old objects, without running it on a hit. */
static void hash_compiler_identity(rk__sha256 *h, const char *prog) {
    char *path = rk__find_program(prog);
    struct stat st;
    const char *shown = path ? path : prog;
    rk__sha256_update(h, shown, strlen(shown) + 1);
    if (path && stat(path, &st) == 0) {
        long long facts[3] = {(long long)st.st_size, (long long)st.st_mtim.tv_sec, (long long)st.st_mtim.tv_nsec};
        rk__sha256_update(h, facts, sizeof facts);
    }
    free(path);
}

/* The compiler's words and the flags that decide what is built (hashed), without
 * output or input names. Paths inside the build directory are relative (the
 * compiler runs there); the caller's include dirs are made absolute. */
static rk_status build_flags(rk__strv *v, const rk_compile_options *opts) {
    rk_status st = compiler_words(v);
    if (st != RK_OK) return st;
    if (opts->optimization_level < 0 || opts->optimization_level > 3)
        return rk__fail(RK_INVALID_ARGUMENT, "rk_module_compile: optimization_level %d is not 0 (default) to 3",
                        opts->optimization_level);
    rk__strv_push(v, "-std=c11");
    rk__strv_push(v, "-O%d", opts->optimization_level ? opts->optimization_level : 2);
    if (opts->debug_info) rk__strv_push(v, "-g");
    rk__strv_push(v, "-fPIC");
    rk__strv_push(v, "-DRK_CPU_MODULE");
    rk__strv_push(v, "-I.");
    char cwd[4096];
    for (size_t i = 0; i < opts->include_dir_count; i++) {
        const char *dir = opts->include_dirs[i];
        if (!dir || !*dir) return rk__fail(RK_INVALID_ARGUMENT, "rk_module_compile: include dir %zu is NULL or empty", i);
        if (dir[0] == '/') {
            rk__strv_push(v, "-I%s", dir);
        } else {
            if (!getcwd(cwd, sizeof cwd))
                return rk__fail(RK_IO_ERROR, "rk_module_compile: include dir '%s' is relative and the current "
                                "directory is unknown: %s", dir, strerror(errno));
            rk__strv_push(v, "-I%s/%s", cwd, dir);
        }
    }
    for (size_t i = 0; i < opts->define_count; i++) {
        const char *d = opts->defines[i];
        if (!d || !*d || *d == '=')
            return rk__fail(RK_INVALID_ARGUMENT, "rk_module_compile: define %zu is NULL, empty or has no name", i);
        rk__strv_push(v, "-D%s", d);
    }
    /* Kernels need not include dsl.h themselves; its include guard makes a second include harmless. */
    rk__strv_push(v, "-include");
    rk__strv_push(v, "ringkernel/dsl.h");
    if (v->failed) return rk__fail(RK_OUT_OF_MEMORY, "cpu: out of memory");
    return RK_OK;
}

static void hash_inputs(rk__sha256 *h, const rk__strv *flags, const char *source) {
    static const char tag[] = "ringkernel cpu module v2";
    rk__sha256_init(h);
    rk__sha256_update(h, tag, sizeof tag);
    for (size_t i = 0; i < flags->count; i++) rk__sha256_update(h, flags->items[i], strlen(flags->items[i]) + 1);
    hash_compiler_identity(h, flags->items[0]);
    for (size_t i = 0; i < rk__cpu_header_count; i++) {
        const rk__embedded_header *e = &rk__cpu_headers[i];
        uint64_t size = *e->size;
        rk__sha256_update(h, e->name, strlen(e->name) + 1);
        rk__sha256_update(h, &size, sizeof size);
        rk__sha256_update(h, e->data, (size_t)size);
    }
    uint64_t size = strlen(source);
    rk__sha256_update(h, &size, sizeof size);
    rk__sha256_update(h, source, (size_t)size);
}

/* ---- one build directory ---------------------------------------------------------------- */

typedef struct build_dir {
    int cache_fd, fd; /* fd: -1 until made */
    char name[64];
} build_dir;

/* Makes the build directory and writes the headers and the source into it. */
static rk_status build_dir_make(build_dir *b, const char *source) {
    if (b->fd >= 0) return RK_OK;
    rk_status st = rk__cpu_make_temp_dir(b->cache_fd, b->name, &b->fd);
    if (st != RK_OK) return st;
    if (mkdirat(b->fd, "ringkernel", 0700) != 0)
        return rk__fail(RK_IO_ERROR, "cpu: cannot create a directory in the build directory %s: %s", b->name,
                        strerror(errno));
    for (size_t i = 0; i < rk__cpu_header_count && st == RK_OK; i++)
        st = rk__cpu_write_new(b->fd, rk__cpu_headers[i].name, rk__cpu_headers[i].data, *rk__cpu_headers[i].size);
    if (st == RK_OK) st = rk__cpu_write_new(b->fd, SOURCE_NAME, source, strlen(source));
    return st;
}

static void build_dir_remove(build_dir *b) {
    if (b->fd < 0) return;
    close(b->fd);
    rk__cpu_remove_temp_dir(b->cache_fd, b->name);
    b->fd = -1;
}

/* Runs flags + extra words + the source name in the build directory. */
static rk_status run_in(build_dir *b, const rk__strv *flags, const char *const *extra, const rk__compile_limits *limits) {
    rk__strv argv = {0};
    for (size_t i = 0; i < flags->count; i++) rk__strv_push(&argv, "%s", flags->items[i]);
    for (size_t i = 0; extra[i]; i++) rk__strv_push(&argv, "%s", extra[i]);
    rk_status st = argv.failed ? rk__fail(RK_OUT_OF_MEMORY, "cpu: out of memory") : rk__run_compiler(argv.items, b->fd, limits);
    rk__strv_free(&argv);
    return st;
}

/* Reads a file the compiler wrote in the (private) build directory. */
static rk_status read_output(build_dir *b, const char *name, size_t max, unsigned char **data, size_t *size) {
    if (fchmodat(b->fd, name, 0600, 0) != 0)
        return rk__fail(RK_COMPILE_FAILED, "cpu: the C compiler wrote no %s: %s", name, strerror(errno));
    rk_status st = rk__cpu_read_private(b->fd, name, max, data, size);
    return st == RK_NOT_FOUND ? rk__fail(RK_COMPILE_FAILED, "cpu: the C compiler wrote no %s", name) : st;
}

/* With caller include dirs the source alone does not say what is compiled:
 * hash what the preprocessor makes of it. */
static rk_status hash_preprocessed(rk__sha256 *h, build_dir *b, const rk__strv *flags, const char *source,
                                   const rk__compile_limits *limits) {
    static const char *const extra[] = {"-E", "-o", PREPROCESSED_NAME, SOURCE_NAME, NULL};
    unsigned char *text = NULL;
    size_t size = 0;
    rk_status st = build_dir_make(b, source);
    if (st == RK_OK) st = run_in(b, flags, extra, limits);
    if (st == RK_OK) st = read_output(b, PREPROCESSED_NAME, MAX_PREPROCESSED_SIZE, &text, &size);
    /* Line markers ("# 1 "/build-x3f.../"" with -g) name the build directory,
     * which differs every time: hash the text without them. */
    for (size_t i = 0; st == RK_OK && i < size;) {
        const unsigned char *nl = memchr(text + i, '\n', size - i);
        size_t end = nl ? (size_t)(nl - text) + 1 : size;
        if (text[i] != '#') rk__sha256_update(h, text + i, end - i);
        i = end;
    }
    free(text);
    return st;
}

static rk_status compile_object(build_dir *b, const rk__strv *flags, const char *source,
                                const rk__compile_limits *limits, unsigned char **object, size_t *size) {
    /* -z defs: an undefined function is a compile error, not a load error */
    static const char *const extra[] = {"-shared", "-Wl,-z,defs", "-o", OBJECT_NAME, SOURCE_NAME, "-lm", NULL};
    rk_status st = build_dir_make(b, source);
    if (st == RK_OK) st = run_in(b, flags, extra, limits);
    if (st == RK_OK) st = read_output(b, OBJECT_NAME, MAX_OBJECT_SIZE, object, size);
    return st;
}

/* ---- the cache ------------------------------------------------------------------------ */

/* Loads the cached entry if it is sound; RK_NOT_FOUND when there is none to use
 * (an unsound one is removed first). */
static rk_status load_cached(int cache_fd, const char *cache_path, const char *name, const char key[65], void **handle) {
    unsigned char *entry = NULL;
    size_t size = 0, object_size = 0;
    const char *why = NULL;
    rk_status st = rk__cpu_read_private(cache_fd, name, MAX_OBJECT_SIZE + sizeof(entry_header), &entry, &size);
    if (st == RK_NOT_FOUND) return st;
    char reason[512];
    if (st != RK_OK) {
        snprintf(reason, sizeof reason, "%s", rk_last_error());
    } else {
        const unsigned char *object = entry_object(entry, size, key, &object_size, &why);
        if (object && (st = load_object(cache_fd, object, object_size, handle)) == RK_OK) {
            free(entry);
            rk__log(RK_LOG_DEBUG, "cpu: kernel cache hit %s/%s", cache_path, name);
            return RK_OK;
        }
        snprintf(reason, sizeof reason, "%s", object ? rk_last_error() : why);
    }
    free(entry);
    rk__clear_error(); /* handled here: the call goes on */
    rk__log(RK_LOG_WARN, "cpu: removing the kernel cache entry %s/%s and compiling again: %s", cache_path, name, reason);
    if (unlinkat(cache_fd, name, 0) != 0 && errno != ENOENT)
        return rk__fail(RK_IO_ERROR, "cpu: the kernel cache entry %s/%s is unusable (%s) and cannot be removed: %s",
                        cache_path, name, reason, strerror(errno));
    return RK_NOT_FOUND;
}

rk_status rk__cpu_compile_and_load(const char *source, const rk_compile_options *opts, void **handle) {
    rk__compile_limits limits;
    rk__strv flags = {0};
    char *cache_path = NULL;
    build_dir b = {.cache_fd = -1, .fd = -1};
    unsigned char *object = NULL;
    size_t object_size = 0;
    rk_status st = rk__compile_limits_get(&limits);
    if (st == RK_OK) st = build_flags(&flags, opts);
    if (st == RK_OK) st = rk__cpu_cache_open(&b.cache_fd, &cache_path);
    if (st != RK_OK) goto done;

    rk__sha256 h;
    hash_inputs(&h, &flags, source);
    if (opts->include_dir_count && (st = hash_preprocessed(&h, &b, &flags, source, &limits)) != RK_OK) goto done;
    char key[65], name[80];
    rk__sha256_hex(&h, key);
    snprintf(name, sizeof name, "%.32s.rkmod", key);

    st = load_cached(b.cache_fd, cache_path, name, key, handle);
    if (st != RK_NOT_FOUND) goto done;
    st = compile_object(&b, &flags, source, &limits, &object, &object_size);
    if (st != RK_OK) goto done;
    /* A cache that cannot be written costs the next process a compile, nothing more. */
    if (store_entry(b.cache_fd, name, key, object, object_size) != RK_OK) {
        rk__log(RK_LOG_WARN, "cpu: the compiled module is not cached: %s", rk_last_error());
        rk__clear_error();
    }
    st = load_object(b.cache_fd, object, object_size, handle);

done:
    build_dir_remove(&b);
    if (b.cache_fd >= 0) close(b.cache_fd);
    rk__strv_free(&flags);
    free(cache_path);
    free(object);
    return st;
}
