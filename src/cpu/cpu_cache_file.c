/* Files inside the private cache directory, always relative to its descriptor:
 * new files are created exclusively under random names (a planted file or
 * symlink at a predictable name is never opened), finished files are renamed
 * into place, and reads accept only regular files of ours that nobody else
 * can write. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpu_compile_internal.h"

rk_status rk__cpu_random_name(char *out, size_t size, const char *prefix, const char *suffix) {
    unsigned char bytes[8];
    size_t got = 0;
    while (got < sizeof bytes) {
        ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return rk__fail(RK_IO_ERROR, "cpu: getrandom: %s", strerror(errno));
        got += (size_t)n;
    }
    int n = snprintf(out, size, "%s%02x%02x%02x%02x%02x%02x%02x%02x%s", prefix, bytes[0], bytes[1], bytes[2],
                     bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], suffix);
    if (n < 0 || (size_t)n >= size) return rk__fail(RK_INTERNAL, "cpu: temporary name too long");
    return RK_OK;
}

static rk_status write_all(int fd, const char *name, const void *data, size_t size) {
    const unsigned char *p = data;
    while (size) {
        ssize_t n = write(fd, p, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return rk__fail(RK_IO_ERROR, "cpu: cannot write %s in the kernel cache: %s", name, strerror(errno));
        p += n;
        size -= (size_t)n;
    }
    return RK_OK;
}

rk_status rk__cpu_write_new(int dirfd, const char *name, const void *data, size_t size) {
    int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return rk__fail(RK_IO_ERROR, "cpu: cannot create %s in the kernel cache: %s", name, strerror(errno));
    rk_status st = write_all(fd, name, data, size);
    if (close(fd) != 0 && st == RK_OK)
        st = rk__fail(RK_IO_ERROR, "cpu: cannot write %s in the kernel cache: %s", name, strerror(errno));
    if (st != RK_OK) unlinkat(dirfd, name, 0);
    return st;
}

rk_status rk__cpu_write_replace(int dirfd, const char *name, const void *data, size_t size) {
    char tmp[64];
    rk_status st = rk__cpu_random_name(tmp, sizeof tmp, "tmp-", ".part");
    if (st == RK_OK) st = rk__cpu_write_new(dirfd, tmp, data, size);
    if (st != RK_OK) return st;
    if (renameat(dirfd, tmp, dirfd, name) != 0) {
        st = rk__fail(RK_IO_ERROR, "cpu: cannot rename %s to %s in the kernel cache: %s", tmp, name, strerror(errno));
        unlinkat(dirfd, tmp, 0);
    }
    return st;
}

rk_status rk__cpu_make_temp_dir(int dirfd, char name[64], int *fd) {
    for (int attempt = 0; attempt < 16; attempt++) {
        rk_status st = rk__cpu_random_name(name, 64, "build-", "");
        if (st != RK_OK) return st;
        if (mkdirat(dirfd, name, 0700) != 0) {
            if (errno == EEXIST) continue;
            return rk__fail(RK_IO_ERROR, "cpu: cannot create a build directory in the kernel cache: %s",
                            strerror(errno));
        }
        *fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (*fd >= 0) return RK_OK;
        rk_status fail = rk__fail(RK_IO_ERROR, "cpu: cannot open the build directory %s: %s", name, strerror(errno));
        unlinkat(dirfd, name, AT_REMOVEDIR);
        return fail;
    }
    return rk__fail(RK_IO_ERROR, "cpu: no free name for a build directory in the kernel cache");
}

/* Removes the entries of an open directory; subdirectories one level deep. */
static void empty_dir(int fd, int depth) {
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (unlinkat(fd, e->d_name, 0) == 0 || depth == 0) continue;
        int sub = openat(fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub >= 0) empty_dir(sub, depth - 1);
        unlinkat(fd, e->d_name, AT_REMOVEDIR);
    }
    closedir(d); /* closes fd */
}

void rk__cpu_remove_temp_dir(int dirfd, const char *name) {
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) empty_dir(fd, 1);
    unlinkat(dirfd, name, AT_REMOVEDIR);
}

rk_status rk__cpu_read_private(int dirfd, const char *name, size_t max_size, unsigned char **data, size_t *size) {
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return RK_NOT_FOUND; /* not an error: a cache miss */
        return rk__fail(RK_IO_ERROR, "cpu: cannot open %s in the kernel cache: %s", name, strerror(errno));
    }
    struct stat st;
    const char *why = NULL;
    if (fstat(fd, &st) != 0) why = strerror(errno);
    else if (!S_ISREG(st.st_mode)) why = "not a regular file";
    else if (st.st_uid != geteuid()) why = "owned by another user";
    else if (st.st_mode & (S_IWGRP | S_IWOTH)) why = "writable by group or others";
    else if (st.st_nlink != 1) why = "has other hard links";
    else if ((uint64_t)st.st_size > max_size) why = "too large";
    if (why) {
        close(fd);
        return rk__fail(RK_IO_ERROR, "cpu: %s in the kernel cache is not used: %s", name, why);
    }
    size_t want = (size_t)st.st_size, got = 0;
    unsigned char *buf = malloc(want ? want : 1);
    if (!buf) {
        close(fd);
        return rk__fail(RK_OUT_OF_MEMORY, "cpu: out of memory reading %s", name);
    }
    while (got < want) {
        ssize_t n = read(fd, buf + got, want - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += (size_t)n;
    }
    close(fd);
    if (got != want) {
        free(buf);
        return rk__fail(RK_IO_ERROR, "cpu: %s in the kernel cache changed while it was read", name);
    }
    *data = buf;
    *size = got;
    return RK_OK;
}
