/* The corpus: realistic kernels (the .c files beside this header, written as a
 * user would) with plain C references. Each case sets up its program
 * (buffers, inputs, launches) and computes the expected outputs without the
 * DSL; test_diff_corpus.c runs it on every executor. */
#ifndef RK_CORPUS_H
#define RK_CORPUS_H

#include "diff.h"

typedef struct corpus_case {
    const char *file; /* under tests/transpile/corpus/ */
    /* Fills buffers and launches (p->name and p->source are set). Inputs come
     * from corpus_random(), so they are the same for every executor. */
    void (*setup)(diff_program *p);
    /* expected[i] starts as buffer i's initial contents; make it the output. */
    void (*reference)(const diff_program *p, void *expected[]);
    bool wgsl_refuses; /* uses what WGSL lacks (8/16-bit, double, warp operations) */
    /* A bug not fixed yet: the case still runs everywhere, and its failure is
     * reported loudly as EXPECTED FAILURE with this text instead of failing
     * the test; once it passes, the test fails until this is removed. */
    const char *known_bug;
} corpus_case;

/* file names a kernel under tests/transpile/corpus/, or under tests/ when it
 * has a directory ("portability/reduce.c"). */
extern const corpus_case corpus_compute[], corpus_stencil[], corpus_regress[], corpus_portable[];
extern const size_t corpus_compute_count, corpus_stencil_count, corpus_regress_count, corpus_portable_count;

/* Deterministic inputs: the same sequence for every run. */
uint32_t corpus_random(void);
/* A buffer of count random elements (freed by corpus_free_inputs at the end). */
void *corpus_ints(size_t count, int32_t lo, int32_t hi);
void *corpus_floats(size_t count, float lo, float hi);
void *corpus_alloc(size_t bytes);
void corpus_free_inputs(void);

/* Shorthands for setups and references. */
#define BUF(i) DIFF_BUF(i)
#define INT(v) DIFF_SCALAR(RK_ARG_INT(v))
#define FLT(v) DIFF_SCALAR(RK_ARG_FLOAT(v))
#define IN(p, i, T) ((const T *)(p)->buffers[i].init)
void corpus_buffer(diff_program *p, const char *name, diff_type t, size_t count, const void *init, bool output);
void corpus_launch(diff_program *p, const char *kernel, uint32_t grid, uint32_t block, size_t argc, ...);

#endif
