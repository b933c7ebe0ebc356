/* The parser's expressions part: C's precedence levels, one function each.
 *
 *   expr        = assign ("," assign)*
 *   assign      = conditional (assign-op assign)?
 *   conditional = logor ("?" expr ":" conditional)?
 *   ... binary levels ...
 *   cast        = "(" type-name ")" cast | unary
 *   unary       = ("+" | "-" | "&" | "*" | "!" | "~") cast | ("++" | "--") unary
 *               | "sizeof" unary | "sizeof" "(" type-name ")" | "_Alignof" "(" type-name ")"
 *               | postfix
 *   postfix     = primary ("[" expr "]" | "." ident | "->" ident | "++" | "--")*
 *   primary     = "(" expr ")" | number | identifier ("(" args ")")? | __builtin_offsetof(...)
 */
#include <string.h>

#include "parse.h"

tp_node *rk__tp_new_node(parser *p, tp_node_kind kind, tp_token *tok) {
    tp_node *n = rk__tp_alloc(p->ctx, sizeof *n);
    n->kind = kind;
    n->tok = tok;
    n->depth = 1;
    return n;
}

static void set_depth(parser *p, tp_node *n, int child_depth) {
    n->depth = child_depth + 1;
    if (n->depth > TP_MAX_EXPR_DEPTH)
        rk__tp_p_fail(p, n->tok, "expression is too deeply nested (more than %d levels)", TP_MAX_EXPR_DEPTH);
}

static tp_node *new_unary(parser *p, tp_node_kind kind, tp_node *lhs, tp_token *tok) {
    tp_node *n = rk__tp_new_node(p, kind, tok);
    n->lhs = lhs;
    set_depth(p, n, lhs->depth);
    return n;
}

static tp_node *new_binary(parser *p, tp_node_kind kind, tp_node *lhs, tp_node *rhs, tp_token *tok) {
    tp_node *n = rk__tp_new_node(p, kind, tok);
    n->lhs = lhs;
    n->rhs = rhs;
    set_depth(p, n, lhs->depth > rhs->depth ? lhs->depth : rhs->depth);
    return n;
}

/* A placeholder for an expression that already has an error. */
static tp_node *error_node(parser *p, tp_token *tok) {
    tp_node *n = rk__tp_new_node(p, ND_NUM, tok);
    n->ty = &rk__tp_ty_error;
    n->sema_done = true;
    return n;
}

static tp_node *cast(parser *p);
static tp_node *unary(parser *p);

tp_node *rk__tp_expr(parser *p) {
    tp_node *n = rk__tp_assign(p);
    while (rk__tp_p_is(p, ",")) {
        tp_token *t = rk__tp_p_next(p);
        n = new_binary(p, ND_COMMA, n, rk__tp_assign(p), t);
    }
    return n;
}

tp_node *rk__tp_assign(parser *p) {
    static const struct {
        const char *op;
        tp_node_kind kind;
    } ops[] = {
        {"+=", ND_ADD}, {"-=", ND_SUB}, {"*=", ND_MUL}, {"/=", ND_DIV}, {"%=", ND_MOD},
        {"&=", ND_BITAND}, {"|=", ND_BITOR}, {"^=", ND_BITXOR}, {"<<=", ND_SHL}, {">>=", ND_SHR},
    };
    tp_node *lhs = rk__tp_conditional(p);
    if (rk__tp_p_is(p, "=")) {
        tp_token *t = rk__tp_p_next(p);
        rk__tp_p_enter(p, t);
        tp_node *n = new_binary(p, ND_ASSIGN, lhs, rk__tp_assign(p), t);
        rk__tp_p_leave(p);
        return n;
    }
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        if (!rk__tp_p_is(p, ops[i].op)) continue;
        tp_token *t = rk__tp_p_next(p);
        rk__tp_p_enter(p, t);
        tp_node *n = new_binary(p, ND_ASSIGN_OP, lhs, rk__tp_assign(p), t);
        rk__tp_p_leave(p);
        n->op = ops[i].kind;
        return n;
    }
    return lhs;
}

static tp_node *logor(parser *p);

tp_node *rk__tp_conditional(parser *p) {
    tp_node *cond = logor(p);
    if (!rk__tp_p_is(p, "?")) return cond;
    tp_token *t = rk__tp_p_next(p);
    rk__tp_p_enter(p, t);
    tp_node *n = rk__tp_new_node(p, ND_COND, t);
    n->cond = cond;
    n->then = rk__tp_expr(p);
    rk__tp_p_expect(p, ":");
    n->els = rk__tp_conditional(p);
    rk__tp_p_leave(p);
    int d = cond->depth;
    if (n->then->depth > d) d = n->then->depth;
    if (n->els->depth > d) d = n->els->depth;
    set_depth(p, n, d);
    return n;
}

/* Binary levels from loosest to tightest. */
typedef struct binop {
    const char *op;
    tp_node_kind kind;
} binop;

static const binop level_logor[] = {{"||", ND_LOGOR}, {NULL, 0}};
static const binop level_logand[] = {{"&&", ND_LOGAND}, {NULL, 0}};
static const binop level_bitor[] = {{"|", ND_BITOR}, {NULL, 0}};
static const binop level_bitxor[] = {{"^", ND_BITXOR}, {NULL, 0}};
static const binop level_bitand[] = {{"&", ND_BITAND}, {NULL, 0}};
static const binop level_equality[] = {{"==", ND_EQ}, {"!=", ND_NE}, {NULL, 0}};
static const binop level_relational[] = {{"<", ND_LT}, {"<=", ND_LE}, {">", ND_GT}, {">=", ND_GE}, {NULL, 0}};
static const binop level_shift[] = {{"<<", ND_SHL}, {">>", ND_SHR}, {NULL, 0}};
static const binop level_add[] = {{"+", ND_ADD}, {"-", ND_SUB}, {NULL, 0}};
static const binop level_mul[] = {{"*", ND_MUL}, {"/", ND_DIV}, {"%", ND_MOD}, {NULL, 0}};

static const binop *const levels[] = {
    level_logor, level_logand, level_bitor, level_bitxor, level_bitand,
    level_equality, level_relational, level_shift, level_add, level_mul,
};
enum { LEVELS = sizeof levels / sizeof levels[0] };

static tp_node *binary(parser *p, int level) {
    if (level == LEVELS) return cast(p);
    tp_node *n = binary(p, level + 1);
    for (;;) {
        const binop *hit = NULL;
        for (const binop *b = levels[level]; b->op; b++)
            if (rk__tp_p_is(p, b->op)) {
                hit = b;
                break;
            }
        if (!hit) return n;
        tp_token *t = rk__tp_p_next(p);
        n = new_binary(p, hit->kind, n, binary(p, level + 1), t);
    }
}

static tp_node *logor(parser *p) { return binary(p, 0); }

static tp_node *cast(parser *p) {
    if (rk__tp_p_is(p, "(") && rk__tp_is_typename(p, p->tok->next)) {
        tp_token *paren = rk__tp_p_next(p);
        rk__tp_p_enter(p, paren);
        tp_type *ty = rk__tp_typename(p);
        rk__tp_p_expect(p, ")");
        if (rk__tp_p_is(p, "{")) rk__tp_p_fail(p, paren, "compound literals are not supported");
        tp_node *n = new_unary(p, ND_CAST, cast(p), paren);
        n->cast_ty = ty;
        rk__tp_p_leave(p);
        return n;
    }
    return unary(p);
}

static tp_node *postfix(parser *p);

static tp_node *unary(parser *p) {
    static const struct {
        const char *op;
        tp_node_kind kind;
    } ops[] = {{"+", ND_PLUS}, {"-", ND_NEG}, {"&", ND_ADDR}, {"*", ND_DEREF}, {"!", ND_NOT}, {"~", ND_BITNOT}};
    tp_token *t = p->tok;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        if (!rk__tp_p_is(p, ops[i].op)) continue;
        rk__tp_p_next(p);
        rk__tp_p_enter(p, t);
        tp_node *n = new_unary(p, ops[i].kind, cast(p), t);
        rk__tp_p_leave(p);
        return n;
    }
    if (rk__tp_p_is(p, "++") || rk__tp_p_is(p, "--")) {
        rk__tp_p_next(p);
        rk__tp_p_enter(p, t);
        tp_node *n = new_unary(p, rk__tp_equal(t, "++") ? ND_PRE_INC : ND_PRE_DEC, unary(p), t);
        rk__tp_p_leave(p);
        return n;
    }
    if (rk__tp_p_is(p, "sizeof") || rk__tp_p_is(p, "_Alignof")) {
        bool is_alignof = rk__tp_equal(t, "_Alignof");
        rk__tp_p_next(p);
        tp_node *n = rk__tp_new_node(p, ND_SIZEOF, t);
        n->is_alignof = is_alignof;
        rk__tp_p_enter(p, t);
        if (rk__tp_p_is(p, "(") && rk__tp_is_typename(p, p->tok->next)) {
            rk__tp_p_next(p);
            n->cast_ty = rk__tp_typename(p);
            rk__tp_p_expect(p, ")");
        } else {
            if (is_alignof) rk__tp_p_fail(p, p->tok, "_Alignof needs a type name in parentheses");
            n->lhs = unary(p);
            set_depth(p, n, n->lhs->depth);
        }
        rk__tp_p_leave(p);
        return n;
    }
    return postfix(p);
}

static tp_token *member_name(parser *p) {
    if (p->tok->kind != TK_IDENT) rk__tp_p_fail(p, p->tok, "expected a member name");
    return rk__tp_p_next(p);
}

static tp_node *postfix(parser *p) {
    tp_node *node = rk__tp_primary(p);
    for (;;) {
        tp_token *t = p->tok;
        if (rk__tp_p_consume(p, "[")) {
            rk__tp_p_enter(p, t);
            tp_node *idx = rk__tp_expr(p);
            rk__tp_p_expect(p, "]");
            rk__tp_p_leave(p);
            node = new_binary(p, ND_INDEX, node, idx, t);
            continue;
        }
        if (rk__tp_p_consume(p, ".")) {
            node = new_unary(p, ND_MEMBER, node, member_name(p));
            continue;
        }
        if (rk__tp_p_consume(p, "->")) {
            node = new_unary(p, ND_ARROW, node, member_name(p));
            continue;
        }
        if (rk__tp_p_consume(p, "++")) {
            node = new_unary(p, ND_POST_INC, node, t);
            continue;
        }
        if (rk__tp_p_consume(p, "--")) {
            node = new_unary(p, ND_POST_DEC, node, t);
            continue;
        }
        if (rk__tp_p_is(p, "(")) {
            rk__tp_p_fail(p, t, "only named functions can be called (function pointers are not supported)");
        }
        return node;
    }
}

/* Arguments of a call, after the '('. */
static tp_node *call_args(parser *p, int *count, int *max_depth) {
    tp_node head = {0}, *cur = &head;
    *count = 0;
    *max_depth = 0;
    while (!rk__tp_p_consume(p, ")")) {
        if (cur != &head) rk__tp_p_expect(p, ",");
        cur = cur->next = rk__tp_assign(p);
        if (cur->depth > *max_depth) *max_depth = cur->depth;
        ++*count;
    }
    return head.next;
}

static tp_node *offsetof_expr(parser *p, tp_token *kw) {
    rk__tp_p_expect(p, "(");
    tp_type *ty = rk__tp_typename(p);
    rk__tp_p_expect(p, ",");
    int64_t offset = 0;
    tp_type *cur = ty;
    for (;;) {
        tp_token *name = member_name(p);
        tp_type *s = rk__tp_unqual(cur);
        if (s->kind != TY_STRUCT || !s->is_complete) {
            rk__tp_error(p->ctx, name, "offsetof needs a complete struct type");
            break;
        }
        tp_member *m = s->members;
        while (m && !(m->name->len == name->len && memcmp(m->name->loc, name->loc, (size_t)name->len) == 0)) m = m->next;
        if (!m) {
            rk__tp_error(p->ctx, name, "no member named '%.*s' in '%s'", name->len, name->loc,
                         rk__tp_type_name(p->ctx, s));
            break;
        }
        offset += m->offset;
        cur = m->ty;
        if (!rk__tp_p_consume(p, ".")) break;
    }
    while (!rk__tp_p_is(p, ")") && p->tok->kind != TK_EOF) rk__tp_p_next(p);
    rk__tp_p_expect(p, ")");
    tp_node *n = rk__tp_new_node(p, ND_NUM, kw);
    n->ival = offset;
    n->ty = &rk__tp_ty_ulong;
    n->sema_done = true;
    return n;
}

tp_node *rk__tp_primary(parser *p) {
    tp_ctx *ctx = p->ctx;
    tp_token *t = p->tok;
    if (rk__tp_p_is(p, "(")) {
        rk__tp_p_next(p);
        if (rk__tp_p_is(p, "{")) rk__tp_p_fail(p, t, "statement expressions are not supported");
        rk__tp_p_enter(p, t);
        tp_node *n = rk__tp_expr(p);
        rk__tp_p_expect(p, ")");
        rk__tp_p_leave(p);
        return n;
    }
    if (t->kind == TK_NUM) {
        rk__tp_p_next(p);
        bool fl = t->ty->kind == TY_FLOAT || t->ty->kind == TY_DOUBLE;
        tp_node *n = rk__tp_new_node(p, fl ? ND_FNUM : ND_NUM, t);
        n->ty = t->ty;
        n->ival = t->ival;
        n->fval = t->fval;
        n->sema_done = true;
        return n;
    }
    if (t->kind == TK_STR) {
        rk__tp_error(ctx, t, "string literals are not supported in kernels");
        while (p->tok->kind == TK_STR) rk__tp_p_next(p);
        return error_node(p, t);
    }
    if (rk__tp_p_is(p, "__builtin_offsetof")) {
        rk__tp_p_next(p);
        return offsetof_expr(p, t);
    }
    if (rk__tp_p_is(p, "_Generic")) rk__tp_p_fail(p, t, "_Generic is not supported");
    if (rk__tp_p_is(p, "asm") || rk__tp_p_is(p, "__asm__")) rk__tp_p_fail(p, t, "inline assembly is not supported");
    if (t->kind != TK_IDENT) rk__tp_p_fail(p, t, "expected an expression before '%.*s'", t->len > 40 ? 40 : t->len, t->loc);

    rk__tp_p_next(p);
    bool is_call = rk__tp_p_is(p, "(");
    scope_entry *e = rk__tp_lookup(p, t);
    tp_builtin_id bid;
    const tp_builtin *b = (e && !e->type_def) ? NULL : rk__tp_find_builtin(t->loc, t->len, &bid);
    if (e && e->enum_const) {
        tp_node *n = rk__tp_new_node(p, ND_NUM, t);
        n->ty = &rk__tp_ty_int;
        n->ival = e->enum_const->enum_val;
        n->sema_done = true;
        return n;
    }
    if (e && e->var) {
        if (e->var->is_function) {
            if (!is_call) {
                tp_node *n = rk__tp_new_node(p, ND_FUNC_NAME, t);
                n->obj = e->var;
                return n;
            }
            tp_token *paren = rk__tp_p_next(p);
            rk__tp_p_enter(p, paren);
            tp_node *n = rk__tp_new_node(p, ND_CALL, t);
            int depth;
            n->obj = e->var;
            n->args = call_args(p, &n->nargs, &depth);
            rk__tp_p_leave(p);
            set_depth(p, n, depth);
            return n;
        }
        tp_node *n = rk__tp_new_node(p, ND_VAR, t);
        n->obj = e->var;
        return n;
    }
    if (b) {
        if (!is_call) {
            rk__tp_error(ctx, t, "'%.*s' is a builtin function; it can only be called", t->len, t->loc);
            return error_node(p, t);
        }
        tp_token *paren = rk__tp_p_next(p);
        rk__tp_p_enter(p, paren);
        tp_node *n = rk__tp_new_node(p, ND_BUILTIN, t);
        int depth;
        n->builtin = bid;
        n->args = call_args(p, &n->nargs, &depth);
        rk__tp_p_leave(p);
        set_depth(p, n, depth);
        return n;
    }
    if (e && e->type_def) rk__tp_p_fail(p, t, "unexpected type name '%.*s'", t->len, t->loc);
    if (is_call) {
        const char *dsl = rk__tp_dsl_spelling(t->loc, t->len);
        if (rk__tp_is_host_library_function(t->loc, t->len))
            rk__tp_error(ctx, t, "'%.*s' is a host library function; kernels cannot call it", t->len, t->loc);
        else if (dsl)
            rk__tp_error(ctx, t, "call to undeclared function '%.*s'; the DSL's is %s", t->len, t->loc, dsl);
        else
            rk__tp_error(ctx, t, "call to undeclared function '%.*s'", t->len, t->loc);
        tp_token *paren = rk__tp_p_next(p);
        rk__tp_p_enter(p, paren);
        int count, depth;
        call_args(p, &count, &depth);
        rk__tp_p_leave(p);
        return error_node(p, t);
    }
    const char *dsl = rk__tp_dsl_spelling(t->loc, t->len);
    if (dsl)
        rk__tp_error(ctx, t, "use of undeclared identifier '%.*s'; the DSL's is %s", t->len, t->loc, dsl);
    else
        rk__tp_error(ctx, t, "use of undeclared identifier '%.*s'", t->len, t->loc);
    return error_node(p, t);
}

int64_t rk__tp_const_expr(parser *p, const char *what) {
    tp_node *n = rk__tp_conditional(p);
    int64_t v = 0;
    if (!rk__tp_eval_const(p->ctx, n, &v, what)) return 0;
    return v;
}
