/* WGSL: structs of buffer pointers as sets of bindings
 * (rk_transpile_desc.wgsl_state_struct; the simulation library's
 * rk_sim_state). WGSL has no pointers in structs, so such a struct is never
 * emitted: before anything is written, every `s->m` on a parameter of that
 * pointer type becomes a reference to a module-scope object rk_b_m (a
 * storage buffer for a pointer member, a constant the caller declares for
 * any other), the parameter is dropped from every signature and call, and a
 * kernel that takes it declares the buffers once, at the bindings after
 * those of the structs before it. The rest of the emitter then sees
 * ordinary buffer parameters. */
#include "emit_wgsl.h"

static const tp_type *origin(const tp_type *ty) { return ty->origin ? ty->origin : ty; }

/* Is the struct's tag one of the comma-separated names? */
static bool listed(const tp_type *ty, const char *names) {
    if (ty->kind != TY_STRUCT || !ty->tag) return false;
    for (const char *p = names; *p;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        if ((int)n == ty->tag->len && strncmp(ty->tag->loc, p, n) == 0) return true;
        if (!comma) break;
        p = comma + 1;
    }
    return false;
}

static int struct_index(const emitter *e, const tp_type *ty) {
    for (int i = 0; i < e->state_struct_count; i++)
        if (e->state_structs[i] == origin(ty)) return i;
    return -1;
}

bool rk__wgsl_state_is_struct(const emitter *e, const tp_type *ty) { return struct_index(e, ty) >= 0; }

bool rk__wgsl_is_state(const emitter *e, const tp_type *ty) {
    return e->state_struct_count && ty && ty->kind == TY_PTR && ty->base && struct_index(e, unq(ty->base)) >= 0;
}

static tp_obj *member_obj(const emitter *e, const tp_member *m) {
    for (int i = 0; i < e->state_count; i++)
        if (e->state_members[i] == m) return e->state_objs[i];
    return NULL;
}

/* s->m on a state parameter becomes the member's module-scope object. */
static void rewrite(emitter *e, tp_node *n, int depth) {
    for (; n && depth < 4 * TP_MAX_EXPR_DEPTH; n = n->next) {
        if (n->kind == ND_ARROW && n->lhs && n->lhs->kind == ND_VAR && n->lhs->obj &&
            rk__wgsl_is_state(e, n->lhs->obj->ty)) {
            tp_obj *o = member_obj(e, n->member);
            if (o) {
                n->kind = ND_VAR;
                n->obj = o;
                n->lhs = NULL;
                n->member = NULL;
            }
        }
        rewrite(e, n->lhs, depth + 1);
        rewrite(e, n->rhs, depth + 1);
        rewrite(e, n->cond, depth + 1);
        rewrite(e, n->then, depth + 1);
        rewrite(e, n->els, depth + 1);
        rewrite(e, n->init, depth + 1);
        rewrite(e, n->inc, depth + 1);
        rewrite(e, n->body, depth + 1);
        if (n->kind != ND_SWITCH) rewrite(e, n->args, depth + 1);
    }
}

void rk__wgsl_state_prepare(emitter *e, tp_program *prog) {
    const char *names = e->ctx->desc ? e->ctx->desc->wgsl_state_struct : NULL;
    if (!names || !*names) return;
    int members = 0;
    for (tp_item *it = prog->items; it; it = it->next) {
        if (it->kind != IT_STRUCT || !listed(it->struct_ty, names) || rk__wgsl_state_is_struct(e, it->struct_ty))
            continue;
        if (e->state_struct_count == (int)(sizeof e->state_structs / sizeof e->state_structs[0])) {
            rk__tp_error(e->ctx, it->struct_ty->tag, "too many state structs (WGSL target)");
            break;
        }
        e->state_structs[e->state_struct_count] = origin(it->struct_ty);
        e->state_first_binding[e->state_struct_count++] = -1;
        for (const tp_member *m = origin(it->struct_ty)->members; m; m = m->next) members++;
    }
    if (!members) return; /* a source without the structs has nothing to rewrite */
    e->state_objs = rk__tp_alloc(e->ctx, sizeof *e->state_objs * (size_t)members);
    e->state_members = rk__tp_alloc(e->ctx, sizeof *e->state_members * (size_t)members);
    for (int k = 0; k < e->state_struct_count; k++) {
        for (tp_member *m = e->state_structs[k]->members; m; m = m->next) {
            tp_obj *o = rk__tp_alloc(e->ctx, sizeof *o);
            o->name = rk__tp_format(e->ctx, "rk_b_%.*s", m->name->len, m->name->loc);
            o->tok = m->name;
            o->ty = m->ty;
            o->is_param = true; /* a buffer as a kernel's parameter would be (atomics may use it) */
            e->state_members[e->state_count] = m;
            e->state_objs[e->state_count++] = o;
            /* Registered before any function: these names stay for the whole module. */
            rk__wgsl_add_name(e, o, o->name, m->ty->kind == TY_PTR ? NK_BUFFER : NK_PLAIN);
        }
    }
    for (tp_obj *fn = prog->functions; fn; fn = fn->next)
        if (fn->body) rewrite(e, fn->body, 0);
}

/* A kernel's state parameter: its buffers at the next bindings, declared once per module. */
void rk__wgsl_state_bindings(emitter *e, const tp_obj *fn, const tp_obj *p, int *binding) {
    int k = struct_index(e, unq(p->ty->base));
    if (e->state_first_binding[k] >= 0 && e->state_first_binding[k] != *binding) {
        rk__tp_error(e->ctx, p->tok,
                     "kernel '%s': a state parameter must come where every kernel has it, before the "
                     "kernel's own buffers, so that its buffers keep their bindings (WGSL target)",
                     fn->name);
        return;
    }
    bool declare = e->state_first_binding[k] < 0;
    e->state_first_binding[k] = *binding;
    for (tp_member *m = e->state_structs[k]->members; m; m = m->next) {
        if (m->ty->kind != TY_PTR) continue;
        if (declare) {
            tp_obj *o = member_obj(e, m);
            name_entry *ne = rk__wgsl_find_name(e, o);
            tp_type *elem = unq(m->ty->base);
            if (elem->kind == TY_VOID || elem->kind == TY_PTR || elem->kind == TY_BOOL || elem->kind == TY_DOUBLE)
                rk__tp_error(e->ctx, m->name, "state member '%s' needs a 32-bit element type or a struct (WGSL target)",
                             o->name + 5);
            else
                rk__wgsl_check_type(e, elem, m->name, rk__tp_format(e->ctx, "state member '%s'", o->name + 5));
            const char *et = rk__wgsl_type_name(e, elem);
            if (ne && ne->atomic) et = rk__tp_format(e->ctx, "atomic<%s>", elem->is_unsigned ? "u32" : "i32");
            PRINTF(e, "@group(0) @binding(%d) var<storage, %s> %s: array<%s>;\n", *binding,
                   m->ty->base->is_const && !(ne && ne->atomic) ? "read" : "read_write", o->name, et);
        }
        (*binding)++;
    }
}

/* Keeps a state parameter's buffers in a kernel's "auto" layout. */
void rk__wgsl_state_keep(emitter *e, const tp_obj *p) {
    int k = struct_index(e, unq(p->ty->base));
    for (tp_member *m = e->state_structs[k]->members; m; m = m->next) {
        if (m->ty->kind != TY_PTR) continue;
        line_start(e);
        PRINTF(e, "_ = &%s;\n", member_obj(e, m)->name);
    }
}
