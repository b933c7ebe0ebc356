/* Whole files for tests: the one reader the tests share. Link read_file.c
 * (add it to the test's SOURCES). */
#ifndef RK_TEST_SUPPORT_READ_FILE_H
#define RK_TEST_SUPPORT_READ_FILE_H

#include <stddef.h>

/* The file at path as a NUL-terminated malloc'd string (size: its length,
 * may be NULL); NULL when it cannot be opened or memory runs out. */
char *rk_test_read_file(const char *path, size_t *size);

/* A file of the source tree, path relative to RK_SOURCE_DIR. A file the test
 * needs: when it cannot be read, the test fails (exit 1) naming it. */
char *rk_test_read_source(const char *relative);

#endif
