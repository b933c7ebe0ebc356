/* WGSL emitter: statements (assignments as statements, declarations,
 * control flow: for/while/do/switch in WGSL's forms). */
#include "emit_wgsl.h"

/* ---- statements ------------------------------------------------------------------------------ */

static void stmt_one(emitter *e, tp_node *n);

/* One assignment-like expression as a WGSL statement (no trailing ;). */
static void simple_stmt(emitter *e, tp_node *n) {
    switch (n->kind) {
    case ND_ASSIGN:
        if (rk__wgsl_is_atomic_lvalue(e, n->lhs) && rk__wgsl_scalar(unq(n->lhs->ty))) {
            put(e, "atomicStore(&");
            rk__wgsl_lvalue(e, n->lhs);
            put(e, ", ");
            rk__wgsl_as_type(e, n->rhs, n->lhs->ty);
            put(e, ")");
            return;
        }
        if (n->lhs->ty->kind == TY_PTR) {
            refuse(e, n->tok, "assigning a pointer is not available (WGSL pointers are fixed when declared)");
            return;
        }
        rk__wgsl_lvalue(e, n->lhs);
        put(e, " = ");
        if (n->rhs->kind == ND_INIT_LIST)
            rk__wgsl_init_list(e, n->rhs, n->lhs->ty);
        else
            rk__wgsl_as_type(e, n->rhs, n->lhs->ty);
        return;
    case ND_ASSIGN_OP: {
        if (rk__wgsl_is_atomic_lvalue(e, n->lhs)) {
            refuse(e, n->tok, "compound assignment to atomic memory is not available; use atomic_add_i32 and friends");
            return;
        }
        if (n->lhs->ty->kind == TY_PTR) {
            refuse(e, n->tok, "pointer arithmetic on a variable is not available");
            return;
        }
        /* a op= b: a = (T)((common)a op b), written as that expression so
         * every conversion and 64-bit helper applies. */
        tp_type *ct = n->cast_ty ? n->cast_ty : n->lhs->ty;
        tp_node lhs_in_ct = {.kind = ND_CONV, .ty = ct, .lhs = n->lhs, .tok = n->tok};
        tp_node bin = {.kind = n->op, .ty = ct, .tok = n->tok, .rhs = n->rhs,
                       .lhs = rk__tp_same_type(unq(ct), unq(n->lhs->ty)) ? n->lhs : &lhs_in_ct};
        rk__wgsl_lvalue(e, n->lhs);
        put(e, " = ");
        rk__wgsl_as_type(e, &bin, n->lhs->ty);
        return;
    }
    case ND_PRE_INC: case ND_POST_INC: case ND_PRE_DEC: case ND_POST_DEC: {
        bool inc = n->kind == ND_PRE_INC || n->kind == ND_POST_INC;
        const tp_type *t = unq(n->lhs->ty);
        if (t->kind == TY_PTR) {
            refuse(e, n->tok, "moving a pointer with ++/-- is not available");
            return;
        }
        if (rk__wgsl_is_atomic_lvalue(e, n->lhs)) {
            PRINTF(e, "atomic%s(&", inc ? "Add" : "Sub");
            rk__wgsl_lvalue(e, n->lhs);
            PRINTF(e, ", %s)", t->is_unsigned ? "1u" : "1i");
            return;
        }
        rk__wgsl_lvalue(e, n->lhs);
        if (t->kind == TY_LONG) {
            put(e, " = ");
            PRINTF(e, "%s(", inc ? "rk_add64" : "rk_sub64");
            rk__wgsl_lvalue(e, n->lhs);
            put(e, ", vec2<u32>(1u, 0u))");
        } else if (t->kind == TY_FLOAT || t->kind == TY_DOUBLE) {
            PRINTF(e, " %s 1.0f", inc ? "+=" : "-=");
        } else {
            put(e, inc ? "++" : "--");
        }
        return;
    }
    case ND_CALL:
        rk__wgsl_expr(e, n);
        return;
    case ND_BUILTIN: {
        const tp_builtin *b = &rk__tp_builtins[n->builtin];
        if (b->ret != BT_VOID && !(b->flags & TP_BF_ATOMIC)) put(e, "_ = ");
        rk__wgsl_expr(e, n);
        return;
    }
    case ND_CAST: case ND_CONV:
        if (unq(n->ty)->kind == TY_VOID) {
            if (n->lhs->kind == ND_VAR && n->lhs->obj->is_param) {
                name_entry *ne = rk__wgsl_find_name(e, n->lhs->obj);
                if (ne && ne->kind == NK_DROPPED) return;
            }
            simple_stmt(e, n->lhs);
            return;
        }
        break;
    default:
        break;
    }
    if (n->ty && n->ty->kind == TY_PTR) return; /* a pointer expression has no effect */
    put(e, "_ = ");
    rk__wgsl_expr(e, n);
}

/* f(&s.a, &s.b): WGSL refuses two pointer arguments into one variable (its
 * alias rule goes by root variable), so the later ones go through
 * temporaries copied in before the call and out after it (exact for
 * distinct members, which do not overlap). */
enum { MAX_PTR_ARGS = 8 };
typedef struct ptr_args {
    tp_node *args[MAX_PTR_ARGS];
    bool temp[MAX_PTR_ARGS];
    int count;
} ptr_args;

static bool alias_args(tp_node *n, ptr_args *pa) {
    const tp_obj *roots[MAX_PTR_ARGS];
    pa->count = 0;
    tp_obj *callee = n->obj->definition ? n->obj->definition : n->obj;
    tp_obj *p = callee->params;
    for (tp_node *a = n->args; a && pa->count < MAX_PTR_ARGS; a = a->next, p = p ? p->next : NULL) {
        tp_node *s = rk__wgsl_strip_ptr_conv(a);
        if (!p || p->ty->kind != TY_PTR || s->kind != ND_ADDR) continue;
        pa->temp[pa->count] = false;
        pa->args[pa->count] = s;
        roots[pa->count++] = rk__wgsl_lvalue_root(s->lhs);
    }
    bool any = false;
    for (int i = 1; i < pa->count; i++)
        for (int j = 0; j < i; j++)
            if (roots[i] && roots[i] == roots[j] && !pa->temp[j]) pa->temp[i] = any = true;
    return any;
}

bool rk__wgsl_call_needs_temps(emitter *e, tp_node *n) {
    (void)e;
    ptr_args pa;
    return n->kind == ND_CALL && alias_args(n, &pa);
}

void rk__wgsl_call_with_temps(emitter *e, tp_node *n, const char *result) {
    ptr_args pa;
    alias_args(n, &pa);
    tp_node **args = pa.args;
    bool *temp = pa.temp;
    int count = pa.count;
    tp_obj *callee = n->obj->definition ? n->obj->definition : n->obj;
    tp_obj *p;
    int first = e->loop_var;
    for (int i = 0; i < count; i++) {
        if (!temp[i]) continue;
        line_start(e);
        PRINTF(e, "var rk_tmp%d: %s = ", first + i, rk__wgsl_type_name(e, unq(args[i]->lhs->ty)));
        rk__wgsl_expr(e, args[i]->lhs);
        put(e, ";\n");
    }
    e->loop_var += count;
    line_start(e);
    if (result) PRINTF(e, "let %s = ", result);
    PRINTF(e, "%s(", rk__wgsl_obj_name(e, n->obj));
    bool sep = false;
    p = callee->params;
    int k = 0;
    for (tp_node *a = n->args; a; a = a->next, p = p ? p->next : NULL) {
        if (a->ty->kind == TY_GRID_POS || (p && p->ty->kind == TY_GRID_POS)) continue;
        if (p && (rk__wgsl_is_state(e, p->ty) || rk__wgsl_is_void_ptr(p->ty))) continue; /* dropped parameters */
        if (sep) put(e, ", ");
        sep = true;
        tp_node *s = rk__wgsl_strip_ptr_conv(a);
        bool is_ptr_arg = p && p->ty->kind == TY_PTR && s->kind == ND_ADDR && k < count && args[k] == s;
        if (is_ptr_arg && temp[k]) {
            PRINTF(e, "&rk_tmp%d", first + k);
        } else {
            rk__wgsl_one_arg(e, p, a);
        }
        if (is_ptr_arg) k++;
    }
    put(e, ");\n");
    for (int i = 0; i < count; i++) {
        if (!temp[i]) continue;
        line_start(e);
        rk__wgsl_lvalue(e, args[i]->lhs);
        PRINTF(e, " = rk_tmp%d;\n", first + i);
    }
}

/* An expression statement, split at commas. */
void rk__wgsl_expr_stmt(emitter *e, tp_node *n) {
    if (n->kind == ND_COMMA) {
        rk__wgsl_expr_stmt(e, n->lhs);
        rk__wgsl_expr_stmt(e, n->rhs);
        return;
    }
    if (n->kind == ND_CALL && rk__wgsl_call_needs_temps(e, n)) {
        for (tp_node *a = n->args; a; a = a->next) rk__wgsl_lower(e, a);
        rk__wgsl_call_with_temps(e, n, NULL);
        return;
    }
    rk__wgsl_lower(e, n);
    if (rk__wgsl_lowered_name(e, n)) return; /* the whole statement became statements */
    if ((n->kind == ND_CAST || n->kind == ND_CONV) && unq(n->ty)->kind == TY_VOID && n->lhs->kind == ND_VAR)
        return; /* (void)x; only silences a C warning */
    if (n->kind == ND_ASSIGN) {
        /* a = b = v: the inner assignment first, then a takes b's new value. */
        tp_node *inner = n->rhs;
        while (inner->kind == ND_CONV) inner = inner->lhs;
        if (inner->kind == ND_ASSIGN) {
            rk__wgsl_expr_stmt(e, inner);
            tp_node copy = *n;
            tp_node value = *n->rhs;
            if (n->rhs->kind == ND_CONV) {
                value.lhs = inner->lhs;
                copy.rhs = &value;
            } else {
                copy.rhs = inner->lhs;
            }
            line_start(e);
            simple_stmt(e, &copy);
            put(e, ";\n");
            return;
        }
    }
    line_start(e);
    simple_stmt(e, n);
    put(e, ";\n");
}

/* Variables declared RK_SHARED live at module scope in WGSL. */
const char *rk__wgsl_shared_name(emitter *e, const tp_obj *fn, const tp_obj *var) {
    return rk__tp_format(e->ctx, "rk_shared_%s_%s", fn ? fn->name : "g", var->name);
}

static void decl(emitter *e, tp_node *n) {
    tp_obj *v = n->obj;
    if (v->is_shared) return; /* declared at module scope */
    if (v->is_static && !v->ty->is_const) {
        refuse(e, n->tok, "static local variables are not available (there is no per-kernel persistent storage)");
        return;
    }
    rk__wgsl_check_type(e, v->ty, v->tok, rk__tp_format(e->ctx, "variable '%s'", v->name));
    const char *name = rk__wgsl_ident(e, v->name);
    if (v->ty->kind == TY_PTR && n->init) {
        /* A pointer into a buffer (T *p = buf + i, or &buf[i]): WGSL cannot
         * hold it, so p stands for the buffer from a fixed index on. */
        tp_node *init = rk__wgsl_strip_ptr_conv(n->init);
        tp_node *at = init->kind == ND_ADDR && init->lhs->kind == ND_INDEX ? init->lhs : NULL;
        ptr_form f = {0};
        tp_node *base = NULL;
        if (at) {
            bool l = at->lhs->ty->kind == TY_PTR || at->lhs->ty->kind == TY_ARRAY;
            if (rk__wgsl_pointer_form(e, l ? at->lhs : at->rhs, &f) && f.nterms < 8) {
                f.terms[f.nterms] = l ? at->rhs : at->lhs;
                f.negative[f.nterms++] = false;
                base = f.base;
            }
        } else if (rk__wgsl_pointer_form(e, init, &f)) {
            base = f.base;
        }
        name_entry *bn = base && base->kind == ND_VAR ? rk__wgsl_find_name(e, base->obj) : NULL;
        if (bn && bn->kind == NK_BUFFER) {
            const char *off = rk__tp_format(e->ctx, "rk_at_%s_%d", v->name, e->loop_var++);
            line_start(e);
            PRINTF(e, "let %s: i32 = %s", off, bn->offset ? bn->offset : "0i");
            for (int i = 0; i < f.nterms; i++) {
                PRINTF(e, " %s ", f.negative[i] ? "-" : "+");
                rk__wgsl_as_type(e, f.terms[i], &rk__tp_ty_int);
            }
            put(e, ";\n");
            name_entry *ne = rk__wgsl_add_name(e, v, bn->name, NK_BUFFER);
            ne->atomic = bn->atomic;
            ne->offset = off;
            return;
        }
    }
    if (v->ty->kind == TY_PTR) {
        /* A pointer to a local: a WGSL let of pointer type. */
        tp_node *init = n->init ? rk__wgsl_strip_ptr_conv(n->init) : NULL;
        if (!init || (init->kind != ND_ADDR && init->ty->kind != TY_ARRAY)) {
            refuse(e, n->tok, "a local pointer must be initialised with the address of a local variable or array");
            return;
        }
        rk__wgsl_add_name(e, v, name, init->ty->kind == TY_ARRAY ? NK_PTR_ARRAY : NK_PTR_ELEM);
        line_start(e);
        PRINTF(e, "let %s = &", name);
        rk__wgsl_lvalue(e, init->kind == ND_ADDR ? init->lhs : init);
        put(e, ";\n");
        return;
    }
    rk__wgsl_lower(e, n->init);
    rk__wgsl_add_name(e, v, name, NK_PLAIN);
    line_start(e);
    PRINTF(e, "var %s: %s", name, rk__wgsl_type_name(e, unq(v->ty)));
    if (n->init) {
        put(e, " = ");
        if (n->init->kind == ND_INIT_LIST)
            rk__wgsl_init_list(e, n->init, v->ty);
        else
            rk__wgsl_as_type(e, n->init, v->ty);
    }
    put(e, ";\n");
}

static void block(emitter *e, tp_node *n) {
    put(e, "{\n");
    e->indent++;
    if (n->kind == ND_BLOCK)
        rk__wgsl_stmt(e, n->body);
    else
        stmt_one(e, n);
    e->indent--;
    line_start(e);
    put(e, "}");
}

/* Does this statement (not its siblings) always leave the case? */
static bool ends_flow(const tp_node *n) {
    if (!n) return false;
    if (n->kind == ND_BLOCK) {
        const tp_node *last = n->body;
        while (last && last->next) last = last->next;
        return ends_flow(last);
    }
    return n->kind == ND_BREAK || n->kind == ND_RETURN || n->kind == ND_CONTINUE;
}

/* C switch -> WGSL switch: adjacent labels merge; falling from one
 * non-empty case into the next has no WGSL form and is refused. */
static void switch_stmt(emitter *e, tp_node *n) {
    if (unq(n->cond->ty)->kind == TY_LONG) {
        refuse(e, n->tok, "a switch on a 64-bit value is not available; switch on a 32-bit one");
        return;
    }
    rk__wgsl_lower(e, n->cond);
    line_start(e);
    put(e, "switch (");
    rk__wgsl_as_type(e, n->cond, unq(n->cond->ty)->is_unsigned ? &rk__tp_ty_uint : &rk__tp_ty_int);
    put(e, ") {\n");
    e->indent++;
    tp_node *s = n->body && n->body->kind == ND_BLOCK ? n->body->body : n->body;
    const tp_type *sel = unq(n->cond->ty)->is_unsigned ? &rk__tp_ty_uint : &rk__tp_ty_int;
    bool has_default = false, open = false;
    for (; s; s = s->next) {
        if (s->kind != ND_CASE && s->kind != ND_DEFAULT) {
            if (!open) {
                refuse(e, s->tok, "a statement before the first case label of a switch is not available");
                continue;
            }
            stmt_one(e, s);
            continue;
        }
        if (open) {
            e->indent--;
            line_start(e);
            put(e, "}\n");
        }
        /* labels: case a: case b: default: ... */
        line_start(e);
        put(e, "case ");
        tp_node *body = s;
        bool first = true;
        while (body && (body->kind == ND_CASE || body->kind == ND_DEFAULT)) {
            if (!first) put(e, ", ");
            first = false;
            if (body->kind == ND_DEFAULT) {
                put(e, "default");
                has_default = true;
            } else {
                rk__wgsl_integer(e, body->ival, sel);
            }
            body = body->body;
        }
        put(e, ": {\n");
        e->indent++;
        open = true;
        if (body && body->kind != ND_NULL_STMT) stmt_one(e, body);
        /* the clause runs on to the next label: it must end in break/return/continue */
        tp_node *last = body;
        for (tp_node *t = s->next; t && t->kind != ND_CASE && t->kind != ND_DEFAULT; t = t->next) last = t;
        if (s->next && last && !ends_flow(last) && last->kind != ND_NULL_STMT) {
            tp_node *nx = s->next;
            while (nx && nx->kind != ND_CASE && nx->kind != ND_DEFAULT) nx = nx->next;
            if (nx) refuse(e, nx->tok, "falling through into the next case is not available; end the case with break");
        }
    }
    if (open) {
        e->indent--;
        line_start(e);
        put(e, "}\n");
    }
    if (!has_default) {
        line_start(e);
        put(e, "default: {}\n");
    }
    e->indent--;
    line_start(e);
    put(e, "}\n");
}

/* for (init; cond; inc): a WGSL for when init and inc are single simple
 * statements, else a loop with a continuing block. */
static void for_stmt(emitter *e, tp_node *n) {
    int inits = 0;
    for (tp_node *d = n->init; d; d = d->next) inits++;
    bool simple_inc = !n->inc || n->inc->kind != ND_COMMA;
    bool simple_init = inits == 0 || (inits == 1 && (n->init->kind == ND_DECL || n->init->kind == ND_EXPR_STMT) &&
                                      !(n->init->kind == ND_EXPR_STMT && n->init->lhs->kind == ND_COMMA) &&
                                      !(n->init->kind == ND_DECL && (n->init->obj->ty->kind == TY_PTR ||
                                                                      n->init->obj->is_shared)));
    /* Whatever must be lowered into statements needs the loop form. */
    if (n->init && rk__wgsl_needs_lowering(e, n->init->kind == ND_DECL ? n->init->init : n->init->lhs))
        simple_init = false;
    if (n->inc && rk__wgsl_needs_lowering(e, n->inc)) simple_inc = false;
    bool lowered_cond = n->cond && rk__wgsl_needs_lowering(e, n->cond);
    line_start(e);
    put(e, "{\n");
    e->indent++;
    if (!simple_init) rk__wgsl_stmt(e, n->init);
    if (simple_init && simple_inc && !lowered_cond) {
        line_start(e);
        put(e, "for (");
        if (n->init && n->init->kind == ND_DECL) {
            tp_obj *v = n->init->obj;
            rk__wgsl_check_type(e, v->ty, v->tok, rk__tp_format(e->ctx, "variable '%s'", v->name));
            const char *name = rk__wgsl_ident(e, v->name);
            rk__wgsl_add_name(e, v, name, NK_PLAIN);
            PRINTF(e, "var %s: %s", name, rk__wgsl_type_name(e, unq(v->ty)));
            if (n->init->init) {
                put(e, " = ");
                rk__wgsl_as_type(e, n->init->init, v->ty);
            }
        } else if (n->init) {
            simple_stmt(e, n->init->lhs);
        }
        put(e, "; ");
        if (n->cond) rk__wgsl_cond(e, n->cond);
        put(e, "; ");
        if (n->inc) simple_stmt(e, n->inc);
        put(e, ") ");
        block(e, n->then);
        put(e, "\n");
    } else {
        if (simple_init && n->init) rk__wgsl_stmt(e, n->init);
        line_start(e);
        put(e, "loop {\n");
        e->indent++;
        if (n->cond) {
            rk__wgsl_lower(e, n->cond);
            line_start(e);
            put(e, "if (!");
            rk__wgsl_cond(e, n->cond);
            put(e, ") { break; }\n");
        }
        line_start(e);
        block(e, n->then);
        put(e, "\n");
        if (n->inc) {
            line_start(e);
            put(e, "continuing {\n");
            e->indent++;
            rk__wgsl_expr_stmt(e, n->inc);
            e->indent--;
            line_start(e);
            put(e, "}\n");
        }
        e->indent--;
        line_start(e);
        put(e, "}\n");
    }
    e->indent--;
    line_start(e);
    put(e, "}\n");
}

/* head, the condition as a bool, then the block: if, else if and while. */
static void guarded_block(emitter *e, const char *head, tp_node *cond, tp_node *body) {
    put(e, head);
    rk__wgsl_cond(e, cond);
    put(e, ") ");
    block(e, body);
}

static void stmt_one(emitter *e, tp_node *n) {
    switch (n->kind) {
    case ND_BLOCK:
        line_start(e);
        block(e, n);
        put(e, "\n");
        return;
    case ND_EXPR_STMT:
        rk__wgsl_expr_stmt(e, n->lhs);
        return;
    case ND_DECL:
        decl(e, n);
        return;
    case ND_IF: {
        rk__wgsl_lower(e, n->cond);
        line_start(e);
        guarded_block(e, "if (", n->cond, n->then);
        /* Its own cursor: the statement walk goes on from n->next. An else-if
         * whose condition is lowered goes inside the else, after what it needs. */
        tp_node *arm = n;
        while (arm->els && arm->els->kind == ND_IF && !arm->els->next && !rk__wgsl_needs_lowering(e, arm->els->cond)) {
            arm = arm->els;
            guarded_block(e, " else if (", arm->cond, arm->then);
        }
        if (arm->els) {
            put(e, " else ");
            block(e, arm->els);
        }
        put(e, "\n");
        return;
    }
    case ND_FOR:
        for_stmt(e, n);
        return;
    case ND_WHILE:
        if (rk__wgsl_needs_lowering(e, n->cond)) {
            /* The condition's statements run before each test. */
            line_start(e);
            put(e, "loop {\n");
            e->indent++;
            rk__wgsl_lower(e, n->cond);
            line_start(e);
            put(e, "if (!");
            rk__wgsl_cond(e, n->cond);
            put(e, ") { break; }\n");
            line_start(e);
            block(e, n->then);
            put(e, "\n");
            e->indent--;
            line_start(e);
            put(e, "}\n");
            return;
        }
        line_start(e);
        guarded_block(e, "while (", n->cond, n->then);
        put(e, "\n");
        return;
    case ND_DO:
        line_start(e);
        put(e, "loop {\n");
        e->indent++;
        line_start(e);
        block(e, n->then);
        put(e, "\n");
        line_start(e);
        put(e, "continuing {\n");
        e->indent++;
        rk__wgsl_lower(e, n->cond);
        line_start(e);
        put(e, "break if !");
        rk__wgsl_cond(e, n->cond);
        put(e, ";\n");
        e->indent--;
        line_start(e);
        put(e, "}\n");
        e->indent--;
        line_start(e);
        put(e, "}\n");
        return;
    case ND_SWITCH:
        switch_stmt(e, n);
        return;
    case ND_CASE: case ND_DEFAULT:
        refuse(e, n->tok, "a case label outside the top level of its switch is not available");
        return;
    case ND_BREAK:
        line_start(e);
        put(e, "break;\n");
        return;
    case ND_CONTINUE:
        line_start(e);
        put(e, "continue;\n");
        return;
    case ND_RETURN:
        if (n->lhs && e->fn && unq(e->fn->ty->return_ty)->kind == TY_VOID) {
            rk__wgsl_expr_stmt(e, n->lhs); /* return f(); in a void function still calls f */
        } else {
            rk__wgsl_lower(e, n->lhs);
        }
        line_start(e);
        put(e, "return");
        if (n->lhs && e->fn && unq(e->fn->ty->return_ty)->kind != TY_VOID) {
            put(e, " ");
            rk__wgsl_as_type(e, n->lhs, e->fn->ty->return_ty);
        }
        put(e, ";\n");
        return;
    case ND_NULL_STMT:
        return;
    case ND_STATIC_ASSERT:
        line_start(e);
        put(e, "// static_assert checked by the transpiler\n");
        return;
    default:
        return;
    }
}

void rk__wgsl_stmt(emitter *e, tp_node *n) {
    for (; n; n = n->next) stmt_one(e, n);
}
