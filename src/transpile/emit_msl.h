/* What the MSL emitter's files share (emit_msl.c drives and writes names,
 * types, file-scope items, kernels and the relaunch ring template;
 * emit_msl_stmt.c statements; emit_msl_expr.c expressions;
 * emit_msl_space.c decides the address space every pointer points into).
 * Internal to the transpiler. */
#ifndef RK_TRANSPILE_EMIT_MSL_H
#define RK_TRANSPILE_EMIT_MSL_H

#include <stdlib.h>
#include <string.h>

#include "tp.h"

/* Metal's address spaces. A pointer's is part of its type, and Metal has no
 * generic one: every pointer is given the space of what it points at. */
typedef enum msl_space { MS_NONE = 0, MS_THREAD, MS_DEVICE, MS_CONSTANT, MS_THREADGROUP, MS_CONFLICT } msl_space;

typedef struct msl_binding {
    const tp_obj *obj; /* a pointer object, or a function returning a pointer */
    msl_space space;
} msl_binding;

/* A growing list of bindings in the compilation's arena. */
typedef struct msl_bindings {
    msl_binding *items;
    int count, cap;
} msl_bindings;

typedef struct msl_emitter {
    tp_ctx *ctx;
    tp_buf *out;
    int indent;
    tp_obj *fn;     /* function being emitted */
    tp_stencil *st; /* its stencil analysis, if any */
    bool in_init;
    bool used[TP_B_COUNT];
    bool only_handlers; /* every entry point is a handler (one thread per dispatch) */
    msl_bindings spaces; /* each pointer's address space */
    bool changed; /* the space analysis learnt something this round */
    msl_bindings ids; /* memo of rk__msl_needs_ids: MS_THREAD = yes, MS_NONE = no */
    bool double_reported; /* "Metal has no double": once per function */
} msl_emitter;

static inline void msl_put(msl_emitter *e, const char *s) { rk__tp_buf_puts(e->out, s); }
#define MSL_PRINTF(e, ...) rk__tp_buf_printf((e)->out, __VA_ARGS__)
static inline void msl_line(msl_emitter *e) {
    for (int i = 0; i < e->indent; i++) msl_put(e, "    ");
}

/* C's precedence levels, lowest first. */
enum { MP_COMMA = 1, MP_ASSIGN, MP_COND, MP_LOGOR, MP_LOGAND, MP_BITOR, MP_BITXOR, MP_BITAND, MP_EQ, MP_REL, MP_SHIFT,
       MP_ADD, MP_MUL, MP_UNARY, MP_POSTFIX };

/* ---- names and types (emit_msl.c) ---- */
const char *rk__msl_obj_name(msl_emitter *e, tp_obj *o);
const char *rk__msl_member_name(msl_emitter *e, tp_member *m);
/* ty as a declaration of name (NULL: abstract); a pointer points into `space`. */
void rk__msl_declaration(msl_emitter *e, const tp_type *ty, const char *name, msl_space space);
const char *rk__msl_space_name(msl_space s);
/* Does fn (or what it calls) read the thread's position (rk__id)? */
bool rk__msl_needs_ids(msl_emitter *e, const tp_obj *fn);

/* ---- address spaces (emit_msl_space.c) ---- */
/* o's binding in list, or NULL; rk__msl_bind adds one (space MS_NONE) if missing. */
msl_binding *rk__msl_find(msl_bindings *list, const tp_obj *o);
msl_binding *rk__msl_bind(msl_emitter *e, msl_bindings *list, const tp_obj *o);
/* Decides every pointer's space; reports the programs Metal cannot express. */
void rk__msl_infer_spaces(msl_emitter *e, tp_program *prog);
msl_space rk__msl_obj_space(msl_emitter *e, const tp_obj *o);
/* The space a pointer-valued (or array) expression points into. */
msl_space rk__msl_expr_space(msl_emitter *e, const tp_node *n);

/* ---- statements (emit_msl_stmt.c) and expressions (emit_msl_expr.c) ---- */
void rk__msl_stmt(msl_emitter *e, tp_node *n);
void rk__msl_expr(msl_emitter *e, tp_node *n, int min_prec);
void rk__msl_init_list(msl_emitter *e, tp_node *n);
void rk__msl_integer(msl_emitter *e, int64_t v, const tp_type *ty);

#endif
