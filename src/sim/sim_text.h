/* A growing string the simulation's source generators (sim_source.c for
 * CUDA and the CPU, sim_source_wgpu.c for WGSL) append formatted text to.
 * A failed allocation or format sets `failed`; later appends do nothing. */
#ifndef RK_SIM_TEXT_H
#define RK_SIM_TEXT_H

#include <stdbool.h>
#include <stddef.h>

typedef struct text {
    char *data;
    size_t len, cap;
    bool failed;
} text;

void rk__sim_text_add(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define add rk__sim_text_add /* short: the generators call it on nearly every line */

#endif
