/* What the CUDA emitter's files share (emit_cuda.c drives and writes names,
 * types, statements and file-scope items; emit_cuda_expr.c writes
 * expressions). Internal to the transpiler. */
#ifndef RK_TRANSPILE_EMIT_CUDA_H
#define RK_TRANSPILE_EMIT_CUDA_H

#include <stdlib.h>
#include <string.h>

#include "tp.h"

typedef struct emitter {
    tp_ctx *ctx;
    tp_buf *out;
    int indent;
    tp_obj *fn;      /* function being emitted */
    tp_stencil *st;  /* its stencil analysis, if any */
    bool in_init;    /* inside a brace initializer */
    bool used[TP_B_COUNT];
    int handlers;
} emitter;

static inline void put(emitter *e, const char *s) { rk__tp_buf_puts(e->out, s); }
static inline void putn(emitter *e, const char *s, size_t n) { rk__tp_buf_putn(e->out, s, n); }
#define PRINTF(e, ...) rk__tp_buf_printf((e)->out, __VA_ARGS__)

static inline void line_start(emitter *e) {
    for (int i = 0; i < e->indent; i++) put(e, "    ");
}

/* C's precedence levels, lowest first: what rk__cuda_expr parenthesizes below. */
enum { P_COMMA = 1, P_ASSIGN, P_COND, P_LOGOR, P_LOGAND, P_BITOR, P_BITXOR, P_BITAND, P_EQ, P_REL, P_SHIFT,
       P_ADD, P_MUL, P_UNARY, P_POSTFIX };

/* ---- names and types (emit_cuda.c) ---- */

/* Names are decided once per object and member. */
const char *rk__cuda_obj_name(emitter *e, tp_obj *o);
const char *rk__cuda_member_name(emitter *e, tp_member *m);
/* ty as a C++ declaration of name ("" for an abstract declarator). */
void rk__cuda_declaration(emitter *e, const tp_type *ty, const char *name);

/* ---- expressions (emit_cuda_expr.c) ---- */

/* n, parenthesized where its precedence is below min_prec. */
void rk__cuda_expr(emitter *e, tp_node *n, int min_prec);
void rk__cuda_init_list(emitter *e, tp_node *n);
/* An integer literal of type ty. */
void rk__cuda_integer(emitter *e, int64_t v, const tp_type *ty);

#endif
