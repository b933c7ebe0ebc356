/* A random program generator for the DSL, in the spirit of Csmith and
 * YARPGen: every program is free of undefined behaviour and deterministic
 * under any schedule, so every executor must give the same outputs.
 *
 * How programs stay defined and deterministic:
 *   - integer +, -, *, unary minus and << wrap through unsigned; / and %
 *     go through helpers that guard 0 and INT_MIN / -1; shift counts are
 *     masked to 0..31;
 *   - float expressions are exact: every operand is a multiple of 1/16 of
 *     bounded size and the generator tracks each expression's magnitude
 *     and resolution so that no +, -, * rounds (a GPU fusing a multiply-add
 *     then gives the same bits); variables are clamped and quantized on
 *     assignment. Inexact operations (sqrtf, /) only feed the `approx`
 *     output, compared within a few ULP;
 *   - atomics are commutative (add, or, xor, min, max on counters) and their
 *     old value is only used multiplied by 0, so their count matters and
 *     their order does not; side effects in ?: arms, && / || and helper
 *     calls only touch variables the rest of the expression does not read;
 *   - barriers are at the top level of the kernel, where control is uniform;
 *   - loops have constant trip counts.
 *
 * Three shapes: a global kernel (shared memory, barriers, atomics), a stencil
 * kernel (neighbour reads through the stencil DSL) and a ring handler
 * (request, reply, state; driven over a sequence of messages). */
#ifndef RK_DIFF_GEN_H
#define RK_DIFF_GEN_H

#include "diff.h"

typedef struct diff_gen_program {
    diff_program program;
    char *source;     /* owned; program.source points here */
    void *inputs[DIFF_MAX_BUFFERS];
    /* Spans of the generated statements in source (byte offsets, [begin,
     * end)), for the reducer: deleting any set of them leaves valid code. */
    size_t (*spans)[2];
    size_t span_count;
} diff_gen_program;

/* Generates the program for seed (the same seed, the same program). */
void diff_gen(uint64_t seed, diff_gen_program *out);
void diff_gen_free(diff_gen_program *g);

/* The source with the spans marked in drop[] removed (malloc'ed). */
char *diff_gen_source_without(const diff_gen_program *g, const bool *drop);

#endif
