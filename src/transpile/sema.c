/* The type checker: gives every expression its C type, makes every implicit
 * conversion an explicit ND_CONV node (emitters for languages without
 * implicit conversions, such as WGSL, print them), checks lvalues,
 * qualifiers and operand types, and folds sizeof. An expression with an
 * error gets TY_ERROR, which silences follow-on errors. */
#include <string.h>

#include "tp.h"

static tp_type *const ERR = &rk__tp_ty_error;

static void type_expr(tp_ctx *ctx, tp_node *n);

static bool is_err(const tp_node *n) { return n->ty && n->ty->kind == TY_ERROR; }

static tp_type *struct_of(tp_type *ty) { return rk__tp_unqual(ty); }

static tp_node *new_conv(tp_ctx *ctx, tp_node *n, tp_type *ty) {
    tp_node *c = rk__tp_alloc(ctx, sizeof *c);
    c->kind = ND_CONV;
    c->tok = n->tok;
    c->lhs = n;
    c->ty = ty;
    c->depth = n->depth + 1;
    c->sema_done = true;
    return c;
}

/* Converts n to ty when the types differ (ignoring qualifiers). */
static tp_node *conv(tp_ctx *ctx, tp_node *n, tp_type *ty) {
    if (is_err(n) || ty->kind == TY_ERROR) return n;
    tp_type *u = rk__tp_unqual(ty);
    if (rk__tp_same_type(rk__tp_unqual(n->ty), u)) return n;
    return new_conv(ctx, n, u);
}

/* The type an integer operand has after the integer promotions. */
static tp_type *promoted(tp_type *ty) {
    ty = rk__tp_unqual(ty);
    if (ty->kind == TY_BOOL || ty->kind == TY_CHAR || ty->kind == TY_SHORT || ty->kind == TY_ENUM) return &rk__tp_ty_int;
    return ty;
}

/* Arrays used as values are pointers to their first element. */
static tp_type *decayed(tp_ctx *ctx, tp_type *ty) {
    if (ty->kind == TY_ARRAY) return rk__tp_pointer_to(ctx, ty->base);
    return ty;
}

static bool is_lvalue(const tp_node *n) {
    switch (n->kind) {
    case ND_VAR:
        return !n->obj->is_function;
    case ND_DEREF: case ND_INDEX: case ND_ARROW:
        return true;
    case ND_MEMBER:
        return is_lvalue(n->lhs);
    default:
        return false;
    }
}

static const char *node_name(tp_ctx *ctx, const tp_node *n) {
    if (n->kind == ND_VAR && n->obj->name) return rk__tp_format(ctx, "'%s'", n->obj->name);
    return "this expression";
}

static bool check_modifiable(tp_ctx *ctx, tp_node *n, const tp_token *at, const char *what) {
    if (is_err(n)) return false;
    if (!is_lvalue(n)) {
        rk__tp_error(ctx, at, "%s needs an lvalue", what);
        return false;
    }
    if (n->ty->kind == TY_ARRAY) {
        rk__tp_error(ctx, at, "arrays cannot be assigned");
        return false;
    }
    if (n->ty->is_const) {
        rk__tp_error(ctx, at, "cannot assign to %s: its type is '%s'", node_name(ctx, n), rk__tp_type_name(ctx, n->ty));
        return false;
    }
    return true;
}

bool rk__tp_is_null_pointer_constant(tp_ctx *ctx, tp_node *n) {
    if (n->kind == ND_CAST && n->cast_ty->kind == TY_PTR && n->cast_ty->base->kind == TY_VOID)
        return rk__tp_is_null_pointer_constant(ctx, n->lhs);
    int64_t v;
    return n->ty && rk__tp_is_integer(n->ty) && rk__tp_try_eval(ctx, n, &v) && v == 0;
}

/* Pointee types compatible for assignment; sets *drops_quals when the
 * target loses a const or volatile the source had. */
static bool pointers_compatible(tp_type *to, tp_type *from, bool *drops_quals) {
    tp_type *tb = to->base, *fb = from->base;
    *drops_quals = (fb->is_const && !tb->is_const) || (fb->is_volatile && !tb->is_volatile);
    if (tb->kind == TY_VOID || fb->kind == TY_VOID) return true;
    return rk__tp_same_type(rk__tp_unqual(tb), rk__tp_unqual(fb));
}

tp_node *rk__tp_convert_for_assign(tp_ctx *ctx, tp_node *n, tp_type *ty, const char *context) {
    type_expr(ctx, n);
    if (is_err(n) || ty->kind == TY_ERROR) return n;
    tp_type *to = rk__tp_unqual(ty);
    tp_type *from = decayed(ctx, rk__tp_unqual(n->ty));
    if (rk__tp_is_arith(to) && rk__tp_is_arith(from)) return conv(ctx, n, to);
    if (to->kind == TY_BOOL && from->kind == TY_PTR) return conv(ctx, n, to);
    if (to->kind == TY_PTR) {
        if (from->kind == TY_PTR) {
            bool drops;
            if (!pointers_compatible(to, from, &drops)) {
                rk__tp_error(ctx, n->tok, "incompatible pointer types %s: '%s' and '%s'", context,
                             rk__tp_type_name(ctx, n->ty), rk__tp_type_name(ctx, ty));
                return n;
            }
            if (drops) {
                rk__tp_error(ctx, n->tok, "%s: '%s' to '%s' discards a qualifier", context,
                             rk__tp_type_name(ctx, n->ty), rk__tp_type_name(ctx, ty));
                return n;
            }
            return rk__tp_same_type(to, from) ? n : new_conv(ctx, n, to);
        }
        if (rk__tp_is_null_pointer_constant(ctx, n)) return new_conv(ctx, n, to);
        if (rk__tp_is_integer(from)) {
            rk__tp_error(ctx, n->tok, "%s makes a pointer from an integer without a cast", context);
            return n;
        }
    }
    if (to->kind == TY_STRUCT && from->kind == TY_STRUCT && struct_of(to) == struct_of(from)) return n;
    if (to->kind == TY_GRID_POS && from->kind == TY_GRID_POS) return n;
    rk__tp_error(ctx, n->tok, "incompatible types %s: '%s' and '%s'", context, rk__tp_type_name(ctx, n->ty),
                 rk__tp_type_name(ctx, ty));
    return n;
}

/* ---- expressions -------------------------------------------------------------- */

static void need_scalar(tp_ctx *ctx, tp_node *n, const char *what) {
    if (is_err(n)) return;
    tp_type *t = decayed(ctx, n->ty);
    if (!rk__tp_is_scalar(t)) rk__tp_error(ctx, n->tok, "%s must be a number or a pointer, not '%s'", what, rk__tp_type_name(ctx, n->ty));
}

/* Are l and r (n's unqualified operand types) arithmetic, or integers where
 * the operator takes only those? If not, an error at n, which types ERR. */
static bool arith_operands(tp_ctx *ctx, tp_node *n, const tp_type *l, const tp_type *r, bool integer_only) {
    bool ok = integer_only ? rk__tp_is_integer(l) && rk__tp_is_integer(r) : rk__tp_is_arith(l) && rk__tp_is_arith(r);
    if (!ok) {
        rk__tp_error(ctx, n->tok, "invalid operands to '%.*s' ('%s' and '%s')", n->tok->len, n->tok->loc,
                     rk__tp_type_name(ctx, n->lhs->ty), rk__tp_type_name(ctx, n->rhs->ty));
        n->ty = ERR;
    }
    return ok;
}

static void arith_binary(tp_ctx *ctx, tp_node *n, bool integer_only) {
    tp_type *l = rk__tp_unqual(n->lhs->ty), *r = rk__tp_unqual(n->rhs->ty);
    if (!arith_operands(ctx, n, l, r, integer_only)) return;
    tp_type *t = rk__tp_common_type(l, r);
    n->lhs = conv(ctx, n->lhs, t);
    n->rhs = conv(ctx, n->rhs, t);
    n->ty = t;
}

static bool complete_object(const tp_type *ty) {
    return ty->kind != TY_VOID && ty->kind != TY_FUNC && !(ty->kind == TY_STRUCT && !rk__tp_unqual((tp_type *)ty)->is_complete);
}

static void add_sub(tp_ctx *ctx, tp_node *n) {
    tp_type *l = decayed(ctx, rk__tp_unqual(n->lhs->ty)), *r = decayed(ctx, rk__tp_unqual(n->rhs->ty));
    if (rk__tp_is_arith(l) && rk__tp_is_arith(r)) {
        arith_binary(ctx, n, false);
        return;
    }
    if (l->kind == TY_PTR && rk__tp_is_integer(r)) {
        if (!complete_object(l->base)) {
            rk__tp_error(ctx, n->tok, "arithmetic on a pointer to '%s'", rk__tp_type_name(ctx, l->base));
            n->ty = ERR;
            return;
        }
        n->ty = l;
        return;
    }
    if (n->kind == ND_ADD && rk__tp_is_integer(l) && r->kind == TY_PTR) {
        if (!complete_object(r->base)) {
            rk__tp_error(ctx, n->tok, "arithmetic on a pointer to '%s'", rk__tp_type_name(ctx, r->base));
            n->ty = ERR;
            return;
        }
        n->ty = r;
        return;
    }
    if (n->kind == ND_SUB && l->kind == TY_PTR && r->kind == TY_PTR) {
        if (!rk__tp_same_type(rk__tp_unqual(l->base), rk__tp_unqual(r->base)) || !complete_object(l->base)) {
            rk__tp_error(ctx, n->tok, "subtracting pointers to different types ('%s' and '%s')",
                         rk__tp_type_name(ctx, n->lhs->ty), rk__tp_type_name(ctx, n->rhs->ty));
            n->ty = ERR;
            return;
        }
        n->ty = &rk__tp_ty_long;
        return;
    }
    rk__tp_error(ctx, n->tok, "invalid operands to '%.*s' ('%s' and '%s')", n->tok->len, n->tok->loc,
                 rk__tp_type_name(ctx, n->lhs->ty), rk__tp_type_name(ctx, n->rhs->ty));
    n->ty = ERR;
}

static void comparison(tp_ctx *ctx, tp_node *n) {
    tp_type *l = decayed(ctx, rk__tp_unqual(n->lhs->ty)), *r = decayed(ctx, rk__tp_unqual(n->rhs->ty));
    n->ty = &rk__tp_ty_int;
    if (rk__tp_is_arith(l) && rk__tp_is_arith(r)) {
        tp_type *t = rk__tp_common_type(l, r);
        n->lhs = conv(ctx, n->lhs, t);
        n->rhs = conv(ctx, n->rhs, t);
        return;
    }
    if (l->kind == TY_PTR && r->kind == TY_PTR) {
        bool drops;
        if (pointers_compatible(l, r, &drops)) return;
    } else if (l->kind == TY_PTR && rk__tp_is_null_pointer_constant(ctx, n->rhs)) {
        n->rhs = new_conv(ctx, n->rhs, l);
        return;
    } else if (r->kind == TY_PTR && rk__tp_is_null_pointer_constant(ctx, n->lhs)) {
        n->lhs = new_conv(ctx, n->lhs, r);
        return;
    }
    rk__tp_error(ctx, n->tok, "invalid operands to '%.*s' ('%s' and '%s')", n->tok->len, n->tok->loc,
                 rk__tp_type_name(ctx, n->lhs->ty), rk__tp_type_name(ctx, n->rhs->ty));
    n->ty = ERR;
}

static tp_member *find_member(tp_type *sty, const tp_token *name) {
    for (tp_member *m = struct_of(sty)->members; m; m = m->next)
        if (m->name->len == name->len && memcmp(m->name->loc, name->loc, (size_t)name->len) == 0) return m;
    return NULL;
}

static void member_access(tp_ctx *ctx, tp_node *n) {
    tp_type *sty = n->lhs->ty;
    if (n->kind == ND_ARROW) {
        tp_type *p = decayed(ctx, sty);
        if (p->kind != TY_PTR) {
            rk__tp_error(ctx, n->tok, "'->' needs a pointer to a struct, not '%s'", rk__tp_type_name(ctx, sty));
            n->ty = ERR;
            return;
        }
        sty = p->base;
    }
    if (sty->kind != TY_STRUCT) {
        rk__tp_error(ctx, n->tok, "member '%.*s' of something that is not a struct ('%s')", n->tok->len, n->tok->loc,
                     rk__tp_type_name(ctx, sty));
        n->ty = ERR;
        return;
    }
    if (!struct_of(sty)->is_complete) {
        rk__tp_error(ctx, n->tok, "member access into incomplete type '%s'", rk__tp_type_name(ctx, sty));
        n->ty = ERR;
        return;
    }
    tp_member *m = find_member(sty, n->tok);
    if (!m) {
        rk__tp_error(ctx, n->tok, "no member named '%.*s' in '%s'", n->tok->len, n->tok->loc, rk__tp_type_name(ctx, sty));
        n->ty = ERR;
        return;
    }
    n->member = m;
    n->ty = rk__tp_qualified(ctx, m->ty, sty->is_const, sty->is_volatile, false);
}

static void call(tp_ctx *ctx, tp_node *n) {
    tp_obj *fn = n->obj;
    tp_type *fty = fn->ty;
    if (fn->fn_kind == FN_KERNEL)
        rk__tp_error(ctx, n->tok, "kernel '%s' cannot be called from device code (dynamic parallelism is not supported)",
                     fn->name);
    if (n->nargs != fty->param_count) {
        rk__tp_error(ctx, n->tok, "'%s' takes %d argument%s, but %d %s given", fn->name, fty->param_count,
                     fty->param_count == 1 ? "" : "s", n->nargs, n->nargs == 1 ? "was" : "were");
        for (tp_node *a = n->args; a; a = a->next) type_expr(ctx, a);
        n->ty = rk__tp_unqual(fty->return_ty);
        return;
    }
    tp_node **slot = &n->args;
    tp_param_type *pt = fty->params;
    for (int i = 1; *slot && pt; i++, pt = pt->next) {
        tp_node *next = (*slot)->next;
        tp_node *a = rk__tp_convert_for_assign(ctx, *slot, pt->ty, rk__tp_format(ctx, "passing argument %d of '%s'", i, fn->name));
        a->next = next;
        *slot = a;
        slot = &a->next;
    }
    n->ty = rk__tp_unqual(fty->return_ty);
    /* The call graph, for the recursion check. */
    if (ctx->sema_fn) {
        tp_call_edge *e = rk__tp_alloc(ctx, sizeof *e);
        e->callee = fn;
        e->tok = n->tok;
        e->next = ctx->sema_fn->calls;
        ctx->sema_fn->calls = e;
    }
    fn->used = true;
}

static tp_type *bt_type(tp_ctx *ctx, tp_bt bt) {
    switch (bt) {
    case BT_VOID: return &rk__tp_ty_void;
    case BT_INT: return &rk__tp_ty_int;
    case BT_UINT: return &rk__tp_ty_uint;
    case BT_I64: return &rk__tp_ty_long;
    case BT_U64: return &rk__tp_ty_ulong;
    case BT_FLOAT: return &rk__tp_ty_float;
    case BT_DOUBLE: return &rk__tp_ty_double;
    case BT_VOIDPTR: return rk__tp_pointer_to(ctx, &rk__tp_ty_void);
    case BT_PINT: return rk__tp_pointer_to(ctx, &rk__tp_ty_int);
    case BT_PUINT: return rk__tp_pointer_to(ctx, &rk__tp_ty_uint);
    case BT_PU64: return rk__tp_pointer_to(ctx, &rk__tp_ty_ulong);
    case BT_PFLOAT: return rk__tp_pointer_to(ctx, &rk__tp_ty_float);
    case BT_PCUINT: return rk__tp_pointer_to(ctx, rk__tp_qualified(ctx, &rk__tp_ty_uint, true, false, false));
    case BT_PCU64: return rk__tp_pointer_to(ctx, rk__tp_qualified(ctx, &rk__tp_ty_ulong, true, false, false));
    default: return ERR;
    }
}

static void builtin_call(tp_ctx *ctx, tp_node *n) {
    const tp_builtin *b = &rk__tp_builtins[n->builtin];
    if (n->nargs != b->nargs) {
        rk__tp_error(ctx, n->tok, "'%s' takes %d argument%s, but %d %s given", b->name, b->nargs, b->nargs == 1 ? "" : "s",
                     n->nargs, n->nargs == 1 ? "was" : "were");
        for (tp_node *a = n->args; a; a = a->next)
            if (!(a->kind == ND_VAR && a->obj->ty->kind == TY_GRID_POS)) type_expr(ctx, a);
        n->ty = ERR;
        return;
    }
    tp_type *elem = ERR;
    tp_node **slot = &n->args;
    for (int i = 0; i < b->nargs && *slot; i++) {
        tp_node *a = *slot, *next = a->next;
        if (b->args[i] == BT_POS) {
            if (a->kind == ND_VAR && a->obj->ty->kind == TY_GRID_POS) {
                a->ty = a->obj->ty;
                a->sema_done = true;
            } else {
                type_expr(ctx, a);
                if (!is_err(a))
                    rk__tp_error(ctx, a->tok, "the first argument of '%s' must be the stencil kernel's rk_grid_pos parameter", b->name);
            }
        } else if (b->args[i] == BT_ANY_BUFFER) {
            type_expr(ctx, a);
            tp_type *t = decayed(ctx, a->ty);
            if (!is_err(a)) {
                if (t->kind != TY_PTR || !complete_object(t->base) || t->base->kind == TY_VOID)
                    rk__tp_error(ctx, a->tok, "the second argument of '%s' must be a pointer to %s", b->name,
                                 n->builtin == TP_B_RK_EMIT ? "the message" : "the grid's elements");
                else
                    elem = rk__tp_unqual(t->base);
            }
        } else {
            a = rk__tp_convert_for_assign(ctx, a, bt_type(ctx, b->args[i]),
                                          rk__tp_format(ctx, "passing argument %d of '%s'", i + 1, b->name));
            a->next = next;
            *slot = a;
        }
        slot = &a->next;
    }
    n->ty = b->ret == BT_ELEM ? elem : bt_type(ctx, b->ret);
}

static void sizeof_expr(tp_ctx *ctx, tp_node *n) {
    tp_type *ty = n->cast_ty;
    if (!ty) {
        type_expr(ctx, n->lhs);
        if (is_err(n->lhs)) {
            n->ty = ERR;
            return;
        }
        ty = n->lhs->ty;
    }
    const char *what = n->is_alignof ? "_Alignof" : "sizeof";
    n->ty = &rk__tp_ty_ulong;
    if (ty->kind == TY_ERROR) {
        n->ty = ERR;
    } else if (ty->kind == TY_VOID || ty->kind == TY_FUNC || (ty->kind == TY_STRUCT && !struct_of(ty)->is_complete) ||
               (ty->kind == TY_ARRAY && ty->array_len < 0)) {
        rk__tp_error(ctx, n->tok, "%s of incomplete type '%s'", what, rk__tp_type_name(ctx, ty));
        n->ty = ERR;
    } else if (ty->kind == TY_GRID_POS) {
        rk__tp_error(ctx, n->tok, "%s of rk_grid_pos is not defined (it has no layout on the GPU)", what);
        n->ty = ERR;
    } else {
        tp_type *u = ty->kind == TY_STRUCT ? struct_of(ty) : ty;
        n->ival = n->is_alignof ? u->align : u->size;
    }
}

static void cast_expr(tp_ctx *ctx, tp_node *n) {
    type_expr(ctx, n->lhs);
    tp_type *to = n->cast_ty;
    n->ty = rk__tp_unqual(to);
    if (is_err(n->lhs) || to->kind == TY_ERROR) {
        n->ty = ERR;
        return;
    }
    if (to->kind == TY_VOID) return;
    tp_type *from = decayed(ctx, n->lhs->ty);
    bool ok = false;
    if (rk__tp_is_arith(to) && rk__tp_is_arith(from))
        ok = true;
    else if (to->kind == TY_PTR && (from->kind == TY_PTR || rk__tp_is_integer(from)))
        ok = true;
    else if (rk__tp_is_integer(to) && from->kind == TY_PTR)
        ok = true;
    if (to->kind == TY_PTR && to->base->kind == TY_FUNC) ok = false;
    if (!ok) {
        rk__tp_error(ctx, n->tok, "cannot cast '%s' to '%s'", rk__tp_type_name(ctx, n->lhs->ty), rk__tp_type_name(ctx, to));
        n->ty = ERR;
    }
}

static void conditional(tp_ctx *ctx, tp_node *n) {
    type_expr(ctx, n->cond);
    type_expr(ctx, n->then);
    type_expr(ctx, n->els);
    need_scalar(ctx, n->cond, "the condition of '?:'");
    if (is_err(n->then) || is_err(n->els)) {
        n->ty = ERR;
        return;
    }
    tp_type *a = decayed(ctx, rk__tp_unqual(n->then->ty)), *b = decayed(ctx, rk__tp_unqual(n->els->ty));
    if (rk__tp_is_arith(a) && rk__tp_is_arith(b)) {
        tp_type *t = rk__tp_common_type(a, b);
        n->then = conv(ctx, n->then, t);
        n->els = conv(ctx, n->els, t);
        n->ty = t;
        return;
    }
    if (a->kind == TY_VOID && b->kind == TY_VOID) {
        n->ty = a;
        return;
    }
    if (a->kind == TY_STRUCT && b->kind == TY_STRUCT && struct_of(a) == struct_of(b)) {
        n->ty = a;
        return;
    }
    if (a->kind == TY_PTR && b->kind == TY_PTR) {
        bool drops;
        if (rk__tp_same_type(a, b)) {
            n->ty = a;
            return;
        }
        if (pointers_compatible(a, b, &drops) && !drops && (a->base->kind == TY_VOID || b->base->kind == TY_VOID)) {
            n->ty = a->base->kind == TY_VOID ? a : b;
            n->then = conv(ctx, n->then, n->ty);
            n->els = conv(ctx, n->els, n->ty);
            return;
        }
    }
    if (a->kind == TY_PTR && rk__tp_is_null_pointer_constant(ctx, n->els)) {
        n->ty = a;
        n->els = new_conv(ctx, n->els, a);
        return;
    }
    if (b->kind == TY_PTR && rk__tp_is_null_pointer_constant(ctx, n->then)) {
        n->ty = b;
        n->then = new_conv(ctx, n->then, b);
        return;
    }
    rk__tp_error(ctx, n->tok, "incompatible operand types in '?:' ('%s' and '%s')", rk__tp_type_name(ctx, n->then->ty),
                 rk__tp_type_name(ctx, n->els->ty));
    n->ty = ERR;
}

static void assign_op(tp_ctx *ctx, tp_node *n) {
    if (!check_modifiable(ctx, n->lhs, n->tok, "compound assignment")) {
        n->ty = ERR;
        return;
    }
    tp_type *l = rk__tp_unqual(n->lhs->ty), *r = decayed(ctx, rk__tp_unqual(n->rhs->ty));
    n->ty = l;
    if ((n->op == ND_ADD || n->op == ND_SUB) && l->kind == TY_PTR) {
        if (!rk__tp_is_integer(r)) {
            rk__tp_error(ctx, n->tok, "a pointer can only move by an integer");
            n->ty = ERR;
        } else if (!complete_object(l->base)) {
            rk__tp_error(ctx, n->tok, "arithmetic on a pointer to '%s'", rk__tp_type_name(ctx, l->base));
            n->ty = ERR;
        }
        n->cast_ty = l;
        return;
    }
    bool integer_only = n->op == ND_MOD || n->op == ND_BITAND || n->op == ND_BITOR || n->op == ND_BITXOR ||
                        n->op == ND_SHL || n->op == ND_SHR;
    if (!arith_operands(ctx, n, l, r, integer_only)) return;
    /* a op= b computes in the common type, then converts back to a's type;
     * cast_ty records the computation type for emitters that need it. */
    if (n->op == ND_SHL || n->op == ND_SHR) {
        n->cast_ty = promoted(l);
        n->rhs = conv(ctx, n->rhs, promoted(r));
    } else {
        n->cast_ty = rk__tp_common_type(l, r);
        n->rhs = conv(ctx, n->rhs, n->cast_ty);
    }
}

static void type_expr(tp_ctx *ctx, tp_node *n) {
    if (n->ty) return;
    switch (n->kind) {
    case ND_NUM: case ND_FNUM:
        if (!n->ty) n->ty = &rk__tp_ty_int;
        return;
    case ND_VAR:
        n->ty = n->obj->ty;
        if (n->ty->kind == TY_GRID_POS) {
            rk__tp_error(ctx, n->tok, "the grid position '%s' can only be passed to the rk_* stencil functions",
                         n->obj->name);
            n->ty = ERR;
        }
        return;
    case ND_FUNC_NAME:
        rk__tp_error(ctx, n->tok, "function pointers are not supported: '%s' is used as a value", n->obj->name);
        n->ty = ERR;
        return;
    default:
        break;
    }
    if (n->lhs) type_expr(ctx, n->lhs);
    if (n->rhs) type_expr(ctx, n->rhs);
    bool bad = (n->lhs && is_err(n->lhs)) || (n->rhs && is_err(n->rhs));
    if (bad && n->kind != ND_COND && n->kind != ND_CALL && n->kind != ND_BUILTIN && n->kind != ND_SIZEOF &&
        n->kind != ND_CAST) {
        n->ty = ERR;
        return;
    }

    switch (n->kind) {
    case ND_ADD: case ND_SUB:
        add_sub(ctx, n);
        return;
    case ND_MUL: case ND_DIV:
        arith_binary(ctx, n, false);
        return;
    case ND_MOD: case ND_BITAND: case ND_BITOR: case ND_BITXOR:
        arith_binary(ctx, n, true);
        return;
    case ND_SHL: case ND_SHR: {
        tp_type *l = rk__tp_unqual(n->lhs->ty), *r = rk__tp_unqual(n->rhs->ty);
        if (!rk__tp_is_integer(l) || !rk__tp_is_integer(r)) {
            rk__tp_error(ctx, n->tok, "invalid operands to '%.*s' ('%s' and '%s')", n->tok->len, n->tok->loc,
                         rk__tp_type_name(ctx, l), rk__tp_type_name(ctx, r));
            n->ty = ERR;
            return;
        }
        n->lhs = conv(ctx, n->lhs, promoted(l));
        n->rhs = conv(ctx, n->rhs, promoted(r));
        n->ty = promoted(l);
        return;
    }
    case ND_EQ: case ND_NE: case ND_LT: case ND_LE: case ND_GT: case ND_GE:
        comparison(ctx, n);
        return;
    case ND_LOGAND: case ND_LOGOR:
        need_scalar(ctx, n->lhs, "an operand of a logical operator");
        need_scalar(ctx, n->rhs, "an operand of a logical operator");
        n->ty = &rk__tp_ty_int;
        return;
    case ND_NOT:
        need_scalar(ctx, n->lhs, "the operand of '!'");
        n->ty = &rk__tp_ty_int;
        return;
    case ND_BITNOT:
        if (!rk__tp_is_integer(n->lhs->ty)) {
            rk__tp_error(ctx, n->tok, "invalid operand to '~' ('%s')", rk__tp_type_name(ctx, n->lhs->ty));
            n->ty = ERR;
            return;
        }
        n->ty = promoted(n->lhs->ty);
        n->lhs = conv(ctx, n->lhs, n->ty);
        return;
    case ND_NEG: case ND_PLUS:
        if (!rk__tp_is_arith(n->lhs->ty)) {
            rk__tp_error(ctx, n->tok, "invalid operand to unary '%.*s' ('%s')", n->tok->len, n->tok->loc,
                         rk__tp_type_name(ctx, n->lhs->ty));
            n->ty = ERR;
            return;
        }
        n->ty = rk__tp_is_integer(n->lhs->ty) ? promoted(n->lhs->ty) : rk__tp_unqual(n->lhs->ty);
        n->lhs = conv(ctx, n->lhs, n->ty);
        return;
    case ND_ADDR:
        if (!is_lvalue(n->lhs)) {
            rk__tp_error(ctx, n->tok, "cannot take the address of an rvalue");
            n->ty = ERR;
            return;
        }
        n->ty = rk__tp_pointer_to(ctx, n->lhs->ty);
        return;
    case ND_DEREF: {
        tp_type *t = decayed(ctx, n->lhs->ty);
        if (t->kind != TY_PTR) {
            rk__tp_error(ctx, n->tok, "indirection needs a pointer, not '%s'", rk__tp_type_name(ctx, n->lhs->ty));
            n->ty = ERR;
            return;
        }
        if (t->base->kind == TY_VOID) {
            rk__tp_error(ctx, n->tok, "dereferencing a 'void *'");
            n->ty = ERR;
            return;
        }
        n->ty = t->base;
        return;
    }
    case ND_INDEX: {
        tp_type *l = decayed(ctx, n->lhs->ty), *r = decayed(ctx, n->rhs->ty);
        tp_type *ptr = l->kind == TY_PTR ? l : r->kind == TY_PTR ? r : NULL;
        tp_type *idx = ptr == l ? r : l;
        if (!ptr || !rk__tp_is_integer(idx)) {
            rk__tp_error(ctx, n->tok, "subscript needs a pointer or array and an integer ('%s' and '%s')",
                         rk__tp_type_name(ctx, n->lhs->ty), rk__tp_type_name(ctx, n->rhs->ty));
            n->ty = ERR;
            return;
        }
        if (!complete_object(ptr->base)) {
            rk__tp_error(ctx, n->tok, "subscript of a pointer to '%s'", rk__tp_type_name(ctx, ptr->base));
            n->ty = ERR;
            return;
        }
        n->ty = ptr->base;
        return;
    }
    case ND_ASSIGN:
        if (!check_modifiable(ctx, n->lhs, n->tok, "assignment")) {
            n->ty = ERR;
            return;
        }
        n->rhs = rk__tp_convert_for_assign(ctx, n->rhs, n->lhs->ty, "in assignment");
        n->ty = rk__tp_unqual(n->lhs->ty);
        return;
    case ND_ASSIGN_OP:
        assign_op(ctx, n);
        return;
    case ND_PRE_INC: case ND_PRE_DEC: case ND_POST_INC: case ND_POST_DEC: {
        const char *what = n->kind == ND_PRE_INC || n->kind == ND_POST_INC ? "increment" : "decrement";
        if (!check_modifiable(ctx, n->lhs, n->tok, what)) {
            n->ty = ERR;
            return;
        }
        tp_type *t = rk__tp_unqual(n->lhs->ty);
        if (!rk__tp_is_arith(t) && !(t->kind == TY_PTR && complete_object(t->base))) {
            rk__tp_error(ctx, n->tok, "cannot %s a '%s'", what, rk__tp_type_name(ctx, t));
            n->ty = ERR;
            return;
        }
        n->ty = t;
        return;
    }
    case ND_COND:
        conditional(ctx, n);
        return;
    case ND_COMMA:
        n->ty = n->rhs->ty;
        return;
    case ND_MEMBER: case ND_ARROW:
        member_access(ctx, n);
        return;
    case ND_CALL:
        call(ctx, n);
        return;
    case ND_BUILTIN:
        builtin_call(ctx, n);
        return;
    case ND_CAST:
        cast_expr(ctx, n);
        return;
    case ND_SIZEOF:
        sizeof_expr(ctx, n);
        return;
    case ND_INIT_LIST:
        rk__tp_error(ctx, n->tok, "an initializer list is only allowed in a declaration");
        n->ty = ERR;
        return;
    default:
        rk__tp_error(ctx, n->tok, "internal error: untyped node %d", (int)n->kind);
        n->ty = ERR;
        return;
    }
}

void rk__tp_type_expr(tp_ctx *ctx, tp_node *node) { type_expr(ctx, node); }

/* ---- constant expressions (evaluated in sema_const.c) --------------------------- */

bool rk__tp_try_eval(tp_ctx *ctx, tp_node *node, int64_t *out) {
    type_expr(ctx, node);
    if (is_err(node)) return false;
    return rk__tp_eval_integer(node, out);
}

bool rk__tp_eval_const(tp_ctx *ctx, tp_node *node, int64_t *out, const char *what) {
    *out = 0;
    type_expr(ctx, node);
    if (is_err(node)) return false;
    if (!rk__tp_is_integer(node->ty)) {
        rk__tp_error(ctx, node->tok, "%s must be an integer constant expression", what);
        return false;
    }
    if (!rk__tp_eval_integer(node, out)) {
        rk__tp_error(ctx, node->tok, "%s is not an integer constant expression", what);
        return false;
    }
    return true;
}

/* ---- initializers ------------------------------------------------------------------ */

static tp_node *initializer(tp_ctx *ctx, tp_node *init, tp_type *ty);

static tp_node *list_initializer(tp_ctx *ctx, tp_node *init, tp_type *ty) {
    init->ty = rk__tp_unqual(ty);
    init->sema_done = true;
    tp_node **slot = &init->args;
    if (ty->kind == TY_ARRAY) {
        int i = 0;
        for (; *slot; slot = &(*slot)->next, i++) {
            if (i == ty->array_len) {
                rk__tp_error(ctx, (*slot)->tok, "excess elements in the array initializer");
                init->ty = ERR;
                break;
            }
            tp_node *next = (*slot)->next;
            *slot = initializer(ctx, *slot, ty->base);
            (*slot)->next = next;
        }
        return init;
    }
    tp_member *m = struct_of(ty)->members;
    for (; *slot; slot = &(*slot)->next, m = m->next) {
        if (!m) {
            rk__tp_error(ctx, (*slot)->tok, "excess elements in the struct initializer");
            init->ty = ERR;
            break;
        }
        tp_node *next = (*slot)->next;
        *slot = initializer(ctx, *slot, rk__tp_qualified(ctx, m->ty, ty->is_const, false, false));
        (*slot)->next = next;
    }
    return init;
}

static tp_node *initializer(tp_ctx *ctx, tp_node *init, tp_type *ty) {
    if (ty->kind == TY_ERROR) return init;
    if (ty->kind == TY_ARRAY || (ty->kind == TY_STRUCT && init->kind == ND_INIT_LIST)) {
        if (init->kind != ND_INIT_LIST) {
            type_expr(ctx, init);
            if (!is_err(init)) rk__tp_error(ctx, init->tok, "an array needs a brace-enclosed initializer");
            return init;
        }
        return list_initializer(ctx, init, ty);
    }
    if (init->kind == ND_INIT_LIST) {
        /* int x = {1}; is C: a scalar in braces. */
        if (init->nargs != 1) {
            rk__tp_error(ctx, init->tok, init->nargs ? "excess elements in a scalar initializer" : "empty scalar initializer");
            return init;
        }
        return initializer(ctx, init->args, ty);
    }
    return rk__tp_convert_for_assign(ctx, init, ty, "in initialization");
}

/* File-scope constants must be compile-time constants (CUDA puts them in
 * constant memory, which cannot be initialized at run time). */
static bool constant_initializer(tp_ctx *ctx, tp_node *n) {
    if (!n || !n->ty || n->ty->kind == TY_ERROR) return true; /* already reported */
    switch (n->kind) {
    case ND_NUM: case ND_FNUM: case ND_SIZEOF:
        return true;
    case ND_INIT_LIST:
        for (tp_node *a = n->args; a; a = a->next)
            if (!constant_initializer(ctx, a)) return false;
        return true;
    case ND_BUILTIN:
        return (rk__tp_builtins[n->builtin].flags & TP_BF_CONST) != 0;
    case ND_CONV: case ND_CAST:
        return rk__tp_is_arith(n->ty) && constant_initializer(ctx, n->lhs);
    case ND_NEG: case ND_PLUS: case ND_BITNOT: case ND_NOT:
        return constant_initializer(ctx, n->lhs);
    case ND_COND:
        return constant_initializer(ctx, n->cond) && constant_initializer(ctx, n->then) &&
               constant_initializer(ctx, n->els);
    case ND_ADD: case ND_SUB: case ND_MUL: case ND_DIV: case ND_MOD: case ND_BITAND: case ND_BITOR:
    case ND_BITXOR: case ND_SHL: case ND_SHR: case ND_EQ: case ND_NE: case ND_LT: case ND_LE: case ND_GT:
    case ND_GE: case ND_LOGAND: case ND_LOGOR:
        return rk__tp_is_arith(n->ty) && constant_initializer(ctx, n->lhs) && constant_initializer(ctx, n->rhs);
    default:
        return false;
    }
}

void rk__tp_sema_global(tp_ctx *ctx, tp_obj *var) {
    tp_obj *outer = ctx->sema_fn;
    ctx->sema_fn = NULL;
    var->init = initializer(ctx, var->init, var->ty);
    ctx->sema_fn = outer;
    if (!constant_initializer(ctx, var->init))
        rk__tp_error(ctx, var->init->tok, "the initializer of a file-scope constant must be a constant expression");
}

/* ---- statements ----------------------------------------------------------------- */

static void stmt(tp_ctx *ctx, tp_node *n);

static void condition(tp_ctx *ctx, tp_node *n, const char *what) {
    if (!n) return;
    type_expr(ctx, n);
    need_scalar(ctx, n, what);
}

static void switch_stmt(tp_ctx *ctx, tp_node *n) {
    type_expr(ctx, n->cond);
    tp_type *t = &rk__tp_ty_int;
    if (!is_err(n->cond)) {
        if (!rk__tp_is_integer(n->cond->ty)) {
            rk__tp_error(ctx, n->cond->tok, "a switch needs an integer, not '%s'", rk__tp_type_name(ctx, n->cond->ty));
        } else {
            t = promoted(n->cond->ty);
            n->cond = conv(ctx, n->cond, t);
        }
    }
    for (tp_node *c = n->case_next; c; c = c->case_next) {
        int64_t v;
        if (!rk__tp_eval_const(ctx, c->lhs, &v, "a case label")) continue;
        c->ival = rk__tp_truncate_to(v, t);
        c->ty = t;            /* the value's type, for emitters */
        c->sema_done = true;  /* has a value */
        for (tp_node *d = n->case_next; d != c; d = d->case_next)
            if (d->sema_done && d->ival == c->ival) {
                rk__tp_error(ctx, c->tok, "duplicate case value %lld", (long long)c->ival);
                break;
            }
    }
    stmt(ctx, n->body);
}

static void stmt(tp_ctx *ctx, tp_node *n) {
    for (; n; n = n->next) {
        switch (n->kind) {
        case ND_BLOCK:
            stmt(ctx, n->body);
            break;
        case ND_EXPR_STMT:
            type_expr(ctx, n->lhs);
            break;
        case ND_DECL:
            if (n->init) n->init = initializer(ctx, n->init, n->obj->ty);
            break;
        case ND_IF:
            condition(ctx, n->cond, "the condition of 'if'");
            stmt(ctx, n->then);
            stmt(ctx, n->els);
            break;
        case ND_FOR:
            stmt(ctx, n->init);
            condition(ctx, n->cond, "the condition of 'for'");
            if (n->inc) type_expr(ctx, n->inc);
            stmt(ctx, n->then);
            break;
        case ND_WHILE: case ND_DO:
            condition(ctx, n->cond, n->kind == ND_WHILE ? "the condition of 'while'" : "the condition of 'do'");
            stmt(ctx, n->then);
            break;
        case ND_SWITCH:
            switch_stmt(ctx, n);
            break;
        case ND_CASE: case ND_DEFAULT:
            stmt(ctx, n->body);
            break;
        case ND_RETURN: {
            tp_type *ret = ctx->sema_fn->ty->return_ty;
            if (!n->lhs) {
                if (ret->kind != TY_VOID) rk__tp_error(ctx, n->tok, "'%s' must return a value", ctx->sema_fn->name);
            } else if (ret->kind == TY_VOID) {
                type_expr(ctx, n->lhs);
                if (!is_err(n->lhs) && n->lhs->ty->kind != TY_VOID)
                    rk__tp_error(ctx, n->tok, "void function '%s' cannot return a value", ctx->sema_fn->name);
            } else {
                n->lhs = rk__tp_convert_for_assign(ctx, n->lhs, ret, "in return");
            }
            break;
        }
        default:
            break;
        }
    }
}

/* ---- can control reach the end of a function? ---- */

static bool completes(tp_ctx *ctx, const tp_node *n, int depth);

/* A break (or continue) in n that jumps out of the statement n belongs to:
 * inner loops own both, inner switches own breaks. */
static bool jumps_out(const tp_node *n, tp_node_kind jump, int depth) {
    for (; n && depth < TP_MAX_NESTING * 4; n = n->next) {
        switch (n->kind) {
        case ND_BREAK: case ND_CONTINUE: if (n->kind == jump) return true; break;
        case ND_BLOCK: if (jumps_out(n->body, jump, depth + 1)) return true; break;
        case ND_IF: if (jumps_out(n->then, jump, depth + 1) || jumps_out(n->els, jump, depth + 1)) return true; break;
        case ND_CASE: case ND_DEFAULT: if (jumps_out(n->body, jump, depth + 1)) return true; break;
        case ND_SWITCH: if (jump == ND_CONTINUE && jumps_out(n->body, jump, depth + 1)) return true; break;
        default: break;
        }
    }
    return false;
}

static bool breaks_out(const tp_node *n, int depth) { return jumps_out(n, ND_BREAK, depth); }

static bool always_true(tp_ctx *ctx, tp_node *cond) {
    int64_t v = 0;
    return !cond || (rk__tp_try_eval(ctx, cond, &v) && v != 0);
}

/* Can the list of statements starting at n finish without return? A
 * statement that cannot finish makes the rest unreachable, except for the
 * case labels of a switch body, which are entered from the switch. */
static bool list_completes(tp_ctx *ctx, const tp_node *n, int depth) {
    bool reachable = true;
    for (; n; n = n->next) {
        if (n->kind == ND_CASE || n->kind == ND_DEFAULT) reachable = true;
        if (reachable && !completes(ctx, n, depth + 1)) reachable = false;
    }
    return reachable;
}

static bool completes(tp_ctx *ctx, const tp_node *n, int depth) {
    if (!n || depth > TP_MAX_NESTING * 4) return true;
    switch (n->kind) {
    case ND_RETURN: case ND_BREAK: case ND_CONTINUE: return false;
    case ND_BLOCK: return list_completes(ctx, n->body, depth);
    case ND_IF: return !n->els || completes(ctx, n->then, depth + 1) || completes(ctx, n->els, depth + 1);
    case ND_WHILE: case ND_FOR: return !always_true(ctx, n->cond) || breaks_out(n->then, depth + 1);
    case ND_DO: /* the condition is reached only past the end of the body or by continue */
        return breaks_out(n->then, depth + 1) ||
               (!always_true(ctx, n->cond) &&
                (completes(ctx, n->then, depth + 1) || jumps_out(n->then, ND_CONTINUE, depth + 1)));
    case ND_SWITCH: {
        if (!n->default_case || breaks_out(n->body && n->body->kind == ND_BLOCK ? n->body->body : n->body, depth + 1))
            return true;
        return completes(ctx, n->body, depth + 1);
    }
    case ND_CASE: case ND_DEFAULT: return completes(ctx, n->body, depth + 1);
    default: return true;
    }
}

void rk__tp_sema_function(tp_ctx *ctx, tp_obj *fn) {
    ctx->sema_fn = fn;
    tp_type *ret = fn->ty->return_ty;
    if (ret->kind == TY_STRUCT && !struct_of(ret)->is_complete)
        rk__tp_error(ctx, fn->tok, "'%s' returns an incomplete type", fn->name);
    int errors = ctx->error_count;
    stmt(ctx, fn->body);
    /* C leaves the value undefined; NVRTC and -Werror=return-type refuse it. */
    if (ret->kind != TY_VOID && ctx->error_count == errors && completes(ctx, fn->body, 0))
        rk__tp_error(ctx, fn->tok, "non-void function '%s' can reach its end without returning a value", fn->name);
    ctx->sema_fn = NULL;
}
