/* The kernel cache directory: private to the calling user (owned by the
 * effective uid, no group or other permission bits). A directory named by the
 * environment that is not private is never written to itself; its
 * subdirectory ringkernel-<uid> is used instead, and that one must be private
 * (created 0700 by us, or already ours and 0700) or the compile fails. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpu_compile_internal.h"

/* Creates the missing directories of path, each 0700. */
static rk_status mkdir_p(const char *path) {
    char *p = strdup(path);
    if (!p) return rk__fail(RK_OUT_OF_MEMORY, "cpu: out of memory");
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s) continue;
        char c = *s;
        *s = '\0';
        if (mkdir(p, 0700) != 0 && errno != EEXIST) {
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

static rk_status cache_path(char **out) {
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
    return RK_OK;
}

/* Why fd's directory is not private to us, or NULL when it is. */
static const char *not_private(int fd, struct stat *st) {
    if (fstat(fd, st) != 0) return "cannot be examined";
    if (!S_ISDIR(st->st_mode)) return "is not a directory";
    if (st->st_uid != geteuid()) return "is owned by another user";
    if (st->st_mode & (S_IRWXG | S_IRWXO)) return "is open to group or others";
    return NULL;
}

rk_status rk__cpu_cache_open(int *dirfd, char **path) {
    char *dir = NULL;
    rk_status s = cache_path(&dir);
    if (s == RK_OK) s = mkdir_p(dir);
    if (s != RK_OK) {
        free(dir);
        return s;
    }
    /* The named directory itself may be a symlink the user made; what it
     * leads to is checked below. */
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        s = rk__fail(RK_IO_ERROR, "cpu: cannot open the kernel cache directory %s: %s", dir, strerror(errno));
        free(dir);
        return s;
    }
    struct stat st;
    const char *why = not_private(fd, &st);
    if (!why) {
        *dirfd = fd;
        *path = dir;
        return RK_OK;
    }

    char sub[64];
    snprintf(sub, sizeof sub, "ringkernel-%lu", (unsigned long)geteuid());
    char *sub_path = NULL;
    if (asprintf(&sub_path, "%s/%s", dir, sub) < 0) {
        close(fd);
        free(dir);
        return rk__fail(RK_OUT_OF_MEMORY, "cpu: out of memory");
    }
    rk__log(RK_LOG_INFO, "cpu: the kernel cache directory %s %s (owner uid %lu, mode %03o): using its private "
            "subdirectory %s", dir, why, (unsigned long)st.st_uid, (unsigned)(st.st_mode & 0777), sub_path);
    if (mkdirat(fd, sub, 0700) != 0 && errno != EEXIST) {
        s = rk__fail(RK_IO_ERROR, "cpu: the kernel cache directory %s %s, and its private subdirectory %s cannot be "
                     "created: %s", dir, why, sub_path, strerror(errno));
    } else {
        /* O_NOFOLLOW: in a directory others can write, the name may be a planted symlink. */
        int sub_fd = openat(fd, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        const char *sub_why = sub_fd < 0 ? (errno == ELOOP ? "is a symlink" : strerror(errno)) : not_private(sub_fd, &st);
        if (sub_why) {
            s = rk__fail(RK_IO_ERROR, "cpu: the kernel cache directory %s %s, and its subdirectory %s %s: refusing to "
                         "use either (set RK_CACHE_DIR to a directory of your own, mode 0700)", dir, why, sub_path,
                         sub_why);
            if (sub_fd >= 0) close(sub_fd);
        } else {
            *dirfd = sub_fd;
            *path = sub_path;
            sub_path = NULL;
        }
    }
    close(fd);
    free(dir);
    free(sub_path);
    return s;
}
