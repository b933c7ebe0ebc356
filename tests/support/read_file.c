/* Reads whole files for the tests (read_file.h). */
#include "support/read_file.h"

#include <stdio.h>
#include <stdlib.h>

char *rk_test_read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (len + 1 == cap) {
            char *b = realloc(buf, cap *= 2);
            if (!b) free(buf);
            buf = b;
        }
    }
    fclose(f);
    if (buf) buf[len] = '\0';
    if (size) *size = len;
    return buf;
}

char *rk_test_read_source(const char *relative) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", RK_SOURCE_DIR, relative);
    char *text = rk_test_read_file(path, NULL);
    if (!text) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(1);
    }
    return text;
}
