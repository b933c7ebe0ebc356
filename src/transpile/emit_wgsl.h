/* What the WGSL emitter's files share (emit_wgsl.c drives; the others write
 * names and types, expressions and statements). Internal to the transpiler. */
#ifndef RK_TRANSPILE_EMIT_WGSL_H
#define RK_TRANSPILE_EMIT_WGSL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp.h"

typedef enum name_kind {
    NK_PLAIN = 0,  /* a WGSL variable or value with this name */
    NK_BUFFER,     /* module-scope storage array: p[i], *p = p[0] */
    NK_PTR_ELEM,   /* ptr<function, T> to one value: *p, p[0], p->m */
    NK_PTR_ARRAY,  /* ptr<function, array<T, N>>: p[i] = (*p)[i] */
    NK_DROPPED,    /* the stencil grid position: no WGSL value */
} name_kind;

/* Helpers the emitter finds it needs while writing functions; WGSL's
 * module-scope declarations may come in any order, so they follow. */
enum {
    LATE_NONFINITE = 1 << 0, /* rk_f32_inf_bits, rk_f32_nan_bits */
    LATE_ISNAN = 1 << 1,
    LATE_ISINF = 1 << 2,
    LATE_ISFINITE = 1 << 3,
    LATE_FFS = 1 << 4,
};

typedef struct name_entry {
    const tp_obj *obj;
    const char *name;
    name_kind kind;
    bool atomic; /* buffer or shared variable whose elements are atomic<T> */
    const char *offset; /* NK_BUFFER through a local pointer: the index it starts at */
} name_entry;

typedef struct emitter {
    tp_ctx *ctx;
    tp_buf *out;
    int indent;
    tp_obj *fn;
    tp_stencil *st;
    name_entry *names;
    int name_count, name_cap;
    int loop_var;        /* counter for generated loop variables */
    bool used[TP_B_COUNT];
    const tp_obj **atomic_roots; /* buffers/shared vars used by atomics */
    int atomic_count;
    /* Pointer parameters of helpers that receive whole arrays: the array type. */
    const tp_obj **array_params;
    tp_type **array_param_types;
    int array_param_count;
    const tp_obj *shared_fn; /* whose RK_SHARED locals declare_shared is naming */
    const tp_obj *find_obj;  /* mentions(): what to look for, and whether it was seen */
    bool found_obj;
    bool uses_int64; /* the output needs the 64-bit integer helpers */
    /* block_dim_*() must be uniform to WGSL's analysis (a loop bounded by it
     * may hold sync_threads; a private copy counts as non-uniform): global
     * kernels take their block from the override constants rk_block_x/y/z
     * (declared when has_block_overrides), which the WebGPU backend sets from
     * the launch; a stencil's body uses its tile as literals (kernel_wg).
     * grid_dim_*() in a kernel's body reads the num_workgroups builtin. */
    bool has_block_overrides;
    int kernel_wg[3];
    bool in_kernel, in_stencil;
    const tp_type *checked[64]; /* structs whose layout was checked, and the verdict */
    bool checked_ok[64];
    int checked_count;
    /* Expressions lowered into statements (emit_wgsl_lower.c): the node and
     * the temporary that holds its value. */
    unsigned late_helpers; /* LATE_*: helpers written after the functions that use them */
    const tp_node **lowered;
    const char **lowered_names;
    int lowered_count, lowered_cap;
    /* rk_emit: the message types emitted; helper rk_emit_K writes type K. */
    const tp_type *emit_types[16];
    int emit_type_count;
    /* wgsl_state_struct (emit_wgsl_state.c): the structs, where their bindings
     * start (-1 before a kernel takes one), every member and its object. */
    const tp_type *state_structs[8];
    int state_first_binding[8];
    int state_struct_count;
    const tp_member **state_members;
    tp_obj **state_objs;
    int state_count;
} emitter;

/* The index of rk_emit's helper for messages of type ty (emit_wgsl.c). */
int rk__wgsl_emit_helper(emitter *e, const tp_type *ty, const tp_token *tok);


/* Where a pointer expression points. base: the pointer-like thing; add: an
 * index offset (a list of +/- terms) for buffer arithmetic. */
typedef struct ptr_form {
    tp_node *base;
    tp_node *terms[8];
    bool negative[8];
    int nterms;
} ptr_form;

static inline void put(emitter *e, const char *s) { rk__tp_buf_puts(e->out, s); }
#define PRINTF(e, ...) rk__tp_buf_printf((e)->out, __VA_ARGS__)

static inline void line_start(emitter *e) {
    for (int i = 0; i < e->indent; i++) put(e, "    ");
}

/* Something C allows that this target cannot express: an error naming it. */
static inline void refuse(emitter *e, const tp_token *tok, const char *what) {
    rk__tp_error(e->ctx, tok, "%s (WGSL target)", what);
}

static inline tp_type *unq(tp_type *t) { return rk__tp_unqual(t); }

/* A pointer to void (const or not): a helper's parameter WGSL drops. */
static inline bool rk__wgsl_is_void_ptr(const tp_type *ty) {
    return ty && ty->kind == TY_PTR && ty->base && rk__tp_unqual(ty->base)->kind == TY_VOID;
}

/* ---- the state struct as bindings (emit_wgsl_state.c) ---- */

/* Rewrites s->m on state parameters, before anything is emitted. */
void rk__wgsl_state_prepare(emitter *e, tp_program *prog);
/* Is ty a pointer to a state struct (a parameter that WGSL drops)? */
bool rk__wgsl_is_state(const emitter *e, const tp_type *ty);
bool rk__wgsl_state_is_struct(const emitter *e, const tp_type *ty);
void rk__wgsl_state_bindings(emitter *e, const tp_obj *fn, const tp_obj *p, int *binding);
void rk__wgsl_state_keep(emitter *e, const tp_obj *p);

/* ---- names, types, layouts, literals (emit_wgsl_types.c) ---- */

/* A C identifier as a WGSL one: names WGSL reserves (or the output itself
 * calls) get an rk_u_ prefix. */
const char *rk__wgsl_ident(emitter *e, const char *name);
name_entry *rk__wgsl_find_name(emitter *e, const tp_obj *o);
name_entry *rk__wgsl_add_name(emitter *e, const tp_obj *o, const char *name, name_kind kind);
const char *rk__wgsl_obj_name(emitter *e, const tp_obj *o);
const char *rk__wgsl_member_name(emitter *e, const tp_member *m);
const char *rk__wgsl_struct_name(emitter *e, const tp_type *ty);
/* Is this a type WGSL can hold? Reports the first problem at tok. */
bool rk__wgsl_check_type(emitter *e, const tp_type *ty, const tp_token *tok, const char *what);
/* "i32", "u32", "f32", "bool", "vec2<u32>" (64-bit integers); NULL otherwise. */
const char *rk__wgsl_scalar(const tp_type *ty);
const char *rk__wgsl_type_name(emitter *e, const tp_type *ty);
/* WGSL's size and alignment of a host-shareable type. */
void rk__wgsl_layout(const tp_type *ty, int *size, int *align);
/* Members WGSL can hold, each where the host puts it (checked once per struct). */
bool rk__wgsl_check_struct(emitter *e, tp_type *ty);
void rk__wgsl_integer(emitter *e, int64_t v, const tp_type *ty);
void rk__wgsl_float_literal(emitter *e, double v);
void rk__wgsl_zero_value(emitter *e, const tp_type *ty);

/* ---- expressions (emit_wgsl_expr.c) ---- */

bool rk__wgsl_is_comparison(tp_node_kind k);
/* Looks through conversions that do not change what a pointer points at. */
tp_node *rk__wgsl_strip_ptr_conv(tp_node *n);
bool rk__wgsl_pointer_form(emitter *e, tp_node *n, ptr_form *f);
/* The element `index` (NULL = 0) of what pointer expression n points at. */
void rk__wgsl_element(emitter *e, tp_node *n, tp_node *index, const tp_token *tok);
/* The variable an lvalue or pointer expression starts from. */
const tp_obj *rk__wgsl_lvalue_root(tp_node *n);
bool rk__wgsl_is_atomic_lvalue(emitter *e, tp_node *n);
void rk__wgsl_lvalue(emitter *e, tp_node *n);
void rk__wgsl_one_arg(emitter *e, const tp_obj *p, tp_node *a);
void rk__wgsl_args_list(emitter *e, tp_obj *callee, tp_node *a);
void rk__wgsl_init_list(emitter *e, tp_node *n, const tp_type *ty);
/* A value converted from its C type to `to`, explicitly. */
void rk__wgsl_as_type(emitter *e, tp_node *n, const tp_type *to);
/* A condition: bool, as WGSL wants where C takes any scalar. */
void rk__wgsl_cond(emitter *e, tp_node *n);
/* x != x or x == x on floating values: C's NaN tests. */
bool rk__wgsl_is_self_comparison(const tp_node *n);
/* A value of the WGSL type of n's C type. */
void rk__wgsl_expr(emitter *e, tp_node *n);

/* ---- statements (emit_wgsl_stmt.c) ---- */

/* The module-scope name of an RK_SHARED variable of fn (NULL: file scope). */
const char *rk__wgsl_shared_name(emitter *e, const tp_obj *fn, const tp_obj *var);
void rk__wgsl_stmt(emitter *e, tp_node *n);
/* An expression statement (split at commas, lowered where it must be). */
void rk__wgsl_expr_stmt(emitter *e, tp_node *n);
/* f(&s.a, &s.b): does the call need copies for WGSL's alias rule? */
bool rk__wgsl_call_needs_temps(emitter *e, tp_node *n);
/* Writes the call as statements with those copies; its value, when result
 * is not NULL, into a new `let result`. */
void rk__wgsl_call_with_temps(emitter *e, tp_node *n, const char *result);

/* ---- lowering into statements (emit_wgsl_lower.c) ---- */

bool rk__wgsl_has_effects(const tp_node *n);
/* Does the expression hold something that must become statements? */
bool rk__wgsl_needs_lowering(emitter *e, const tp_node *n);
/* Writes those statements; the expression then reads their temporaries. */
void rk__wgsl_lower(emitter *e, tp_node *n);
/* The temporary holding a lowered node's value; NULL if it was not lowered. */
const char *rk__wgsl_lowered_name(const emitter *e, const tp_node *n);

#endif
