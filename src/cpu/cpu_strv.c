/* A growable, NULL-terminated argv for running the compiler. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_compile_internal.h"

void rk__strv_push(rk__strv *v, const char *fmt, ...) {
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

void rk__strv_free(rk__strv *v) {
    for (size_t i = 0; i < v->count; i++) free(v->items[i]);
    free(v->items);
    memset(v, 0, sizeof *v);
}
