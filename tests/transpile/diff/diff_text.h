/* A growable string for generated source text. */
#ifndef RK_DIFF_TEXT_H
#define RK_DIFF_TEXT_H

#include <stddef.h>

typedef struct diff_text {
    char *s;
    size_t len, cap;
} diff_text;

/* Appends; aborts on out of memory (test code). */
void diff_text_printf(diff_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
