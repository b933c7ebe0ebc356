/* What the CPU backend's compile path shares between its files:
 *
 *   cpu_compile.c       DSL C -> verified module bytes (key, flags, cache lookup)
 *   cpu_cache_dir.c     the private cache directory (owner and mode checked)
 *   cpu_cache_file.c    exclusive temporary files, checked reads, removal
 *   cpu_compiler_run.c  the system compiler under time and memory limits
 *   cpu_strv.c          a growable argv
 *
 * Everything inside the cache is reached through a directory descriptor, so a
 * path swapped under us after the checks leads nowhere else. */
#ifndef RK_CPU_COMPILE_INTERNAL_H
#define RK_CPU_COMPILE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "cpu_device.h"

/* ---- a growable argv (cpu_strv.c) ---------------------------------------------- */

typedef struct rk__strv {
    char **items; /* NULL-terminated once anything is pushed */
    size_t count, capacity;
    bool failed; /* out of memory: every later push is ignored */
} rk__strv;

void rk__strv_push(rk__strv *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rk__strv_free(rk__strv *v);

/* ---- the cache directory (cpu_cache_dir.c) --------------------------------------- */

/* Opens the cache directory: $RK_CACHE_DIR, else $XDG_CACHE_HOME/ringkernel,
 * else ~/.cache/ringkernel, created 0700. A directory that is not ours alone
 * (another owner, or group/other permission bits) is not used itself: its
 * subdirectory ringkernel-<uid> is, and that one must be private or the call
 * fails. *dirfd is an O_DIRECTORY descriptor; *path (malloc'ed) is for messages. */
rk_status rk__cpu_cache_open(int *dirfd, char **path);

/* ---- files inside the cache (cpu_cache_file.c) ------------------------------------- */

/* A fresh name "<prefix>XXXXXXXXXXXXXXXX<suffix>" from the kernel's random source. */
rk_status rk__cpu_random_name(char *out, size_t size, const char *prefix, const char *suffix);

/* Creates dirfd/name exclusively (O_CREAT|O_EXCL|O_NOFOLLOW, 0600) and writes data. */
rk_status rk__cpu_write_new(int dirfd, const char *name, const void *data, size_t size);

/* Writes data under a fresh temporary name, then renames it to dirfd/name. */
rk_status rk__cpu_write_replace(int dirfd, const char *name, const void *data, size_t size);

/* Creates a private (0700) temporary directory in dirfd; *fd opens it. */
rk_status rk__cpu_make_temp_dir(int dirfd, char name[64], int *fd);

/* Removes a temporary directory made by rk__cpu_make_temp_dir and what is in
 * it (files and one level of subdirectories: all we put there). */
void rk__cpu_remove_temp_dir(int dirfd, const char *name);

/* Reads dirfd/name without following a symlink, only if it is a regular file
 * of ours that nobody else can write (owner == euid, no group/other write
 * bits, one link) and at most max_size bytes. RK_NOT_FOUND when absent;
 * RK_IO_ERROR (with the reason) when present but not acceptable. */
rk_status rk__cpu_read_private(int dirfd, const char *name, size_t max_size, unsigned char **data, size_t *size);

/* ---- the compiler (cpu_compiler_run.c) ---------------------------------------------- */

typedef struct rk__compile_limits {
    unsigned seconds;   /* wall clock and CPU time, each */
    unsigned memory_mb; /* address space of every compiler process */
} rk__compile_limits;

/* The limits from RK_COMPILE_SECONDS and RK_COMPILE_MEMORY_MB (defaults 120 s, 4096 MiB). */
rk_status rk__compile_limits_get(rk__compile_limits *out);

/* name as execve needs it: as given when it has a slash, else the first
 * executable match on $PATH (execvp is not async-signal-safe); malloc'ed,
 * NULL when there is none. */
char *rk__find_program(const char *name);

/* Runs argv (argv[0] found on $PATH) in the directory workdir with stdin from
 * /dev/null, under the limits. A non-zero exit is RK_COMPILE_FAILED with the
 * compiler's output in the error text, naming a limit that was hit. */
rk_status rk__run_compiler(char *const argv[], int workdir, const rk__compile_limits *limits);

/* ---- the project headers built into the library (generated) ------------------------ */

typedef struct rk__embedded_header {
    const char *name; /* "ringkernel/dsl.h" */
    const char *data;
    const unsigned long *size;
} rk__embedded_header;

extern const rk__embedded_header rk__cpu_headers[];
extern const size_t rk__cpu_header_count;

/* ---- loading (cpu_compile.c) ------------------------------------------------------------ */

/* Compiles source (or reuses a verified cached build of the same bytes, flags
 * and compiler) and dlopens it. A cached module that fails to load is removed
 * and compiled once more. */
rk_status rk__cpu_compile_and_load(const char *source, const rk_compile_options *opts, void **handle);

#endif
