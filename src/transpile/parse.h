/* The parser's shared state: declarations (parse.c), statements
 * (parse_stmt.c) and expressions (parse_expr.c). Names are resolved through
 * scopes while parsing, as C requires for typedef names. */
#ifndef RK_TRANSPILE_PARSE_H
#define RK_TRANSPILE_PARSE_H

#include "tp.h"

/* What a name means in a scope. */
typedef struct scope_entry {
    tp_obj *var;      /* variable, function or parameter */
    tp_type *type_def;/* typedef name */
    tp_obj *enum_const;
} scope_entry;

typedef struct scope {
    struct scope *next;
    tp_map names;
    tp_map tags; /* struct and enum tags */
} scope;

/* Storage classes and markers in front of a declaration. */
typedef struct decl_attr {
    bool is_typedef, is_static, is_extern, is_inline, is_shared;
    tp_fn_kind fn_kind;
    tp_token *kind_tok, *shared_tok, *static_tok, *extern_tok;
    int block[3];         /* RK_BLOCK_SIZE(x, y, z); 0 when absent */
    tp_token *block_tok;
} decl_attr;

typedef struct parser {
    tp_ctx *ctx;
    tp_token *tok;
    tp_token *decl_start; /* where the current file-scope declaration began */
    scope *scope;
    int nesting;
    tp_program *prog;
    tp_item **item_tail;
    tp_obj **fn_tail;
    /* the function being parsed */
    tp_obj *fn;
    tp_obj **local_tail;
    int loop_depth;   /* for continue */
    int break_depth;  /* loops and switches, for break */
    tp_node *cur_switch;
    bool in_switch_body; /* directly inside a switch's braces */
} parser;

/* tokens */
static inline tp_token *peek(parser *p) { return p->tok; }
bool rk__tp_p_is(parser *p, const char *s);
bool rk__tp_p_consume(parser *p, const char *s);
void rk__tp_p_expect(parser *p, const char *s);
tp_token *rk__tp_p_next(parser *p);
_Noreturn void rk__tp_p_fail(parser *p, tp_token *tok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void rk__tp_p_enter(parser *p, tp_token *tok);
void rk__tp_p_leave(parser *p);

/* scopes */
void rk__tp_push_scope(parser *p);
void rk__tp_pop_scope(parser *p);
scope_entry *rk__tp_lookup(parser *p, const tp_token *name);
scope_entry *rk__tp_declare(parser *p, const tp_token *name);
bool rk__tp_is_typename(parser *p, const tp_token *tok);

/* declarations */
tp_type *rk__tp_declspec(parser *p, decl_attr *attr);
/* name receives the declared identifier (NULL for an abstract declarator). */
tp_type *rk__tp_declarator(parser *p, tp_type *ty, tp_token **name);
tp_type *rk__tp_typename(parser *p);
/* Local declaration: ND_DECL statements chained by next (NULL for typedefs). */
tp_node *rk__tp_local_declaration(parser *p);
tp_node *rk__tp_static_assert(parser *p);

/* statements and expressions */
tp_node *rk__tp_compound_stmt(parser *p, bool new_scope);
tp_node *rk__tp_expr(parser *p);
tp_node *rk__tp_assign(parser *p);
tp_node *rk__tp_conditional(parser *p);
tp_node *rk__tp_primary(parser *p);
tp_node *rk__tp_initializer(parser *p);
tp_node *rk__tp_new_node(parser *p, tp_node_kind kind, tp_token *tok);
int64_t rk__tp_const_expr(parser *p, const char *what);

#endif
