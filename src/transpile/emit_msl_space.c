/* Address spaces for the MSL emitter. C has one kind of pointer; Metal has a
 * pointer into device, constant, threadgroup or thread memory, each its own
 * type, and no generic pointer to convert between them. So every pointer
 * object (local, parameter, a function's return value) gets the space of
 * what it is set to point at: kernel and handler parameters point into
 * device memory, RK_SHARED variables live in threadgroup memory, file-scope
 * tables in constant memory, everything else in thread memory. What flows
 * through initializers, assignments, call arguments and returns is
 * propagated until nothing changes; a pointer that is given two spaces (a
 * helper called once with a device and once with a threadgroup pointer) is
 * an error, as pointers to pointers and pointers in structs are. */
#include "emit_msl.h"

msl_binding *rk__msl_find(msl_bindings *list, const tp_obj *o) {
    for (int i = 0; i < list->count; i++)
        if (list->items[i].obj == o) return &list->items[i];
    return NULL;
}

msl_binding *rk__msl_bind(msl_emitter *e, msl_bindings *list, const tp_obj *o) {
    msl_binding *b = rk__msl_find(list, o);
    if (b) return b;
    if (list->count == list->cap) {
        int cap = list->cap ? 2 * list->cap : 32;
        msl_binding *n = rk__tp_alloc(e->ctx, (size_t)cap * sizeof *n);
        if (list->count) memcpy(n, list->items, (size_t)list->count * sizeof *n);
        list->items = n;
        list->cap = cap;
    }
    b = &list->items[list->count++];
    *b = (msl_binding){o, MS_NONE};
    return b;
}

msl_space rk__msl_obj_space(msl_emitter *e, const tp_obj *o) {
    const msl_binding *b = rk__msl_find(&e->spaces, o);
    return b ? b->space : MS_NONE;
}

static void set_space(msl_emitter *e, const tp_obj *o, msl_space s, const tp_token *where) {
    if (s == MS_NONE || s == MS_CONFLICT) return;
    msl_binding *b = rk__msl_bind(e, &e->spaces, o);
    if (b->space == s || b->space == MS_CONFLICT) return;
    if (b->space != MS_NONE) {
        rk__tp_error(e->ctx, where,
                     "'%s' would point into %s memory here and into %s memory elsewhere; Metal has no generic "
                     "pointer (MSL target)",
                     o->name ? o->name : "pointer", rk__msl_space_name(s), rk__msl_space_name(b->space));
        b->space = MS_CONFLICT;
        return;
    }
    b->space = s;
    e->changed = true;
}

static msl_space storage(const tp_obj *o) {
    if (o->is_shared) return MS_THREADGROUP;
    if (!o->is_local && !o->is_param) return MS_CONSTANT;
    return MS_THREAD;
}

static msl_space lvalue_space(msl_emitter *e, const tp_node *n);

msl_space rk__msl_expr_space(msl_emitter *e, const tp_node *n) {
    for (int guard = 0; n && guard < 4 * TP_MAX_EXPR_DEPTH; guard++) {
        if (n->ty && n->ty->kind == TY_ARRAY) return lvalue_space(e, n);
        switch (n->kind) {
        case ND_VAR: return rk__msl_obj_space(e, n->obj);
        case ND_CONV: case ND_CAST:
            if (!n->lhs->ty || !rk__tp_is_pointer_like(n->lhs->ty)) return MS_NONE;
            n = n->lhs;
            break;
        case ND_ADD: case ND_SUB:
            n = n->lhs->ty && rk__tp_is_pointer_like(n->lhs->ty) ? n->lhs : n->rhs;
            break;
        case ND_ADDR: return lvalue_space(e, n->lhs);
        case ND_COND: {
            msl_space a = rk__msl_expr_space(e, n->then), b = rk__msl_expr_space(e, n->els);
            return a == MS_NONE ? b : a;
        }
        case ND_ASSIGN: case ND_ASSIGN_OP: case ND_PRE_INC: case ND_PRE_DEC: case ND_POST_INC: case ND_POST_DEC:
            n = n->lhs;
            break;
        case ND_COMMA: n = n->rhs; break;
        case ND_CALL: return rk__msl_obj_space(e, n->obj->definition ? n->obj->definition : n->obj);
        case ND_BUILTIN: return n->builtin == TP_B_DYNAMIC_SHARED ? MS_THREADGROUP : MS_NONE;
        default: return MS_NONE;
        }
    }
    return MS_NONE;
}

static msl_space lvalue_space(msl_emitter *e, const tp_node *n) {
    for (int guard = 0; n && guard < 4 * TP_MAX_EXPR_DEPTH; guard++) {
        switch (n->kind) {
        case ND_VAR: return storage(n->obj);
        case ND_DEREF: case ND_ARROW: return rk__msl_expr_space(e, n->lhs);
        case ND_MEMBER: n = n->lhs; break;
        case ND_INDEX:
            if (n->lhs->ty && n->lhs->ty->kind == TY_ARRAY) {
                n = n->lhs;
                break;
            }
            return rk__msl_expr_space(e, n->lhs);
        case ND_CONV: case ND_CAST: n = n->lhs; break;
        default: return MS_NONE;
        }
    }
    return MS_NONE;
}

static bool is_pointer(const tp_type *ty) { return ty && ty->kind == TY_PTR; }

static tp_obj *params_of(tp_obj *fn) {
    fn = fn->definition ? fn->definition : fn;
    return fn->params;
}

/* One round over a function: what each pointer is set to. */
static void walk(msl_emitter *e, tp_obj *fn, tp_node *n, int depth) {
    for (; n && depth < 4 * TP_MAX_EXPR_DEPTH; n = n->next) {
        switch (n->kind) {
        case ND_DECL:
            if (is_pointer(n->obj->ty) && n->init && n->init->kind != ND_INIT_LIST)
                set_space(e, n->obj, rk__msl_expr_space(e, n->init), n->tok);
            break;
        case ND_ASSIGN:
            if (n->lhs->kind == ND_VAR && is_pointer(n->lhs->ty))
                set_space(e, n->lhs->obj, rk__msl_expr_space(e, n->rhs), n->tok);
            break;
        case ND_CALL: {
            tp_node *a = n->args;
            for (tp_obj *p = params_of(n->obj); p && a; p = p->next, a = a->next)
                if (is_pointer(p->ty)) set_space(e, p, rk__msl_expr_space(e, a), a->tok ? a->tok : n->tok);
            break;
        }
        case ND_RETURN:
            if (n->lhs && is_pointer(fn->ty->return_ty)) set_space(e, fn, rk__msl_expr_space(e, n->lhs), n->tok);
            break;
        default: break;
        }
        walk(e, fn, n->lhs, depth + 1);
        walk(e, fn, n->rhs, depth + 1);
        walk(e, fn, n->cond, depth + 1);
        walk(e, fn, n->then, depth + 1);
        walk(e, fn, n->els, depth + 1);
        walk(e, fn, n->init, depth + 1);
        walk(e, fn, n->inc, depth + 1);
        walk(e, fn, n->body, depth + 1);
        if (n->kind != ND_SWITCH) walk(e, fn, n->args, depth + 1);
    }
}

/* Types Metal cannot give a place: a pointer to a pointer, a pointer inside
 * a struct or an array. */
static bool nested_pointer(const tp_type *ty) {
    if (ty->kind == TY_PTR || ty->kind == TY_ARRAY) return rk__tp_contains_pointer(ty->base);
    return ty->kind == TY_STRUCT && rk__tp_contains_pointer(ty);
}

static void check_obj(msl_emitter *e, const tp_obj *o) {
    if (o->ty && nested_pointer(o->ty))
        rk__tp_error(e->ctx, o->tok, "'%s' holds a pointer inside a pointer, array or struct; the MSL emitter gives "
                                     "every pointer one address space and supports only plain pointers (MSL target)",
                     o->name ? o->name : "object");
}

static void check_decls(msl_emitter *e, tp_node *n, int depth) {
    for (; n && depth < 4 * TP_MAX_EXPR_DEPTH; n = n->next) {
        if (n->kind == ND_DECL) check_obj(e, n->obj);
        check_decls(e, n->then, depth + 1);
        check_decls(e, n->els, depth + 1);
        check_decls(e, n->init, depth + 1);
        check_decls(e, n->body, depth + 1);
    }
}

void rk__msl_infer_spaces(msl_emitter *e, tp_program *prog) {
    for (tp_obj *fn = prog->functions; fn; fn = fn->next) {
        if (!fn->body) continue;
        for (tp_obj *p = fn->params; p; p = p->next) {
            check_obj(e, p);
            /* Entry points' pointers are the buffers the host binds. */
            if (fn->entry_kind != RK_TRANSPILE_AUTO && is_pointer(p->ty)) set_space(e, p, MS_DEVICE, p->tok);
        }
        check_decls(e, fn->body, 0);
        if (is_pointer(fn->ty->return_ty) && fn->entry_kind != RK_TRANSPILE_AUTO) check_obj(e, fn);
    }
    for (tp_item *it = prog->items; it; it = it->next)
        if (it->kind == IT_VAR && rk__tp_contains_pointer(it->obj->ty))
            rk__tp_error(e->ctx, it->obj->tok, "'%s': a file-scope pointer has no place in Metal's constant "
                                               "tables (MSL target)", it->obj->name);
    /* Each round can only move a pointer from no space to one space (or to a
     * conflict), so the rounds are bounded by the number of pointers. */
    for (int round = 0; round < 10000; round++) {
        e->changed = false;
        for (tp_obj *fn = prog->functions; fn; fn = fn->next)
            if (fn->body) walk(e, fn, fn->body, 0);
        if (!e->changed) break;
    }
}
