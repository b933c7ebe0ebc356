/* Inputs and setup shorthands shared by the corpus cases. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"

static uint64_t state = 0x9e3779b97f4a7c15ull;

uint32_t corpus_random(void) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(state >> 33);
}

enum { MAX_INPUTS = 256 };
static void *inputs[MAX_INPUTS];
static size_t input_count;

void *corpus_alloc(size_t bytes) {
    if (input_count == MAX_INPUTS) abort();
    void *p = calloc(1, bytes + 8);
    if (!p) abort();
    inputs[input_count++] = p;
    return p;
}

void corpus_free_inputs(void) {
    for (size_t i = 0; i < input_count; i++) free(inputs[i]);
    input_count = 0;
}

void *corpus_ints(size_t count, int32_t lo, int32_t hi) {
    int32_t *v = corpus_alloc(count * sizeof *v);
    /* In 64 bits: hi - lo + 1 overflows an int for the widest ranges. */
    uint64_t span = (uint64_t)((int64_t)hi - (int64_t)lo + 1);
    for (size_t i = 0; i < count; i++) v[i] = (int32_t)((int64_t)lo + (int64_t)(corpus_random() % span));
    return v;
}

void *corpus_floats(size_t count, float lo, float hi) {
    float *v = corpus_alloc(count * sizeof *v);
    for (size_t i = 0; i < count; i++) v[i] = lo + (hi - lo) * (float)(corpus_random() >> 8) / 16777216.0f;
    return v;
}

void corpus_buffer(diff_program *p, const char *name, diff_type t, size_t count, const void *init, bool output) {
    if (p->buffer_count == DIFF_MAX_BUFFERS) abort();
    p->buffers[p->buffer_count++] = (diff_buffer){.name = name, .type = t, .count = count, .init = init, .output = output};
}

void corpus_launch(diff_program *p, const char *kernel, uint32_t grid, uint32_t block, size_t argc, ...) {
    if (p->launch_count == DIFF_MAX_LAUNCHES || argc > DIFF_MAX_ARGS) abort();
    diff_launch *l = &p->launches[p->launch_count++];
    memset(l, 0, sizeof *l);
    l->kernel = kernel;
    l->grid = (rk_dim3){grid, 1, 1};
    l->block = (rk_dim3){block, 1, 1};
    va_list ap;
    va_start(ap, argc);
    for (size_t i = 0; i < argc; i++) l->args[i] = va_arg(ap, diff_arg);
    va_end(ap);
    l->arg_count = argc;
}
