/* The WGSL emitter: the typed tree as a WGSL module for the WebGPU backend.
 *
 * WGSL converts nothing implicitly, so every conversion C makes silently is
 * written out (i32(x), f32(x), select(0, 1, b) for a comparison used as an
 * int, x != 0 for an int used as a condition). WGSL has no general pointers:
 * a kernel's buffer parameters become module-scope storage variables, pointer
 * parameters of helpers are ptr<function, T> to local variables, and
 * RK_SHARED variables are var<workgroup> at module scope. WGSL has no 8-
 * or 16-bit integers nor f64: declarations of those types are refused
 * (double arithmetic written as literals and conversions runs in f32);
 * 64-bit integers are emulated as vec2<u32> (low, high word).
 *
 * This file drives the emitter: whole-program scans, file-scope items,
 * kernels, handlers and the helper library; emit_wgsl_types.c,
 * emit_wgsl_expr.c and emit_wgsl_stmt.c write the rest (emit_wgsl.h).
 *
 * Entry points follow the WebGPU backend's launch convention
 * (docs/webgpu.md): a kernel's pointer parameters bind, in order, to
 * @group(0) @binding(0..), its scalar parameters are members of one uniform
 * struct at the next binding. Global kernels get @workgroup_size(rk_block_x,
 * rk_block_y, rk_block_z), override constants that the WebGPU backend sets
 * from the launch's block (any block runs, as on the CPU and CUDA); their
 * defaults are the first kernel's RK_BLOCK_SIZE, else 64 (8x8 when it uses a
 * y index, 4x4x4 with z). Stencils get their tile and read
 * neighbours straight from storage with clamp-to-edge. A handler becomes a
 * WGSL function over ptr<function, T> plus an adapter rk_handle_NAME(req,
 * resp) that the WebGPU ring template (src/webgpu/ring_template.wgsl) calls:
 * it loads the request and state from the template's rk_in / rk_state words
 * at the host's byte offsets and stores the reply into rk_out, so message
 * layouts are the host's by construction (and checked to be WGSL's too). */
#include "emit_wgsl.h"

/* ---- whole-program scans ------------------------------------------------------------------ */

typedef void (*visit_fn)(emitter *e, tp_node *n);

static void walk(emitter *e, tp_node *n, visit_fn f, int depth) {
    for (; n && depth < 4 * TP_MAX_EXPR_DEPTH; n = n->next) {
        f(e, n);
        walk(e, n->lhs, f, depth + 1);
        walk(e, n->rhs, f, depth + 1);
        walk(e, n->cond, f, depth + 1);
        walk(e, n->then, f, depth + 1);
        walk(e, n->els, f, depth + 1);
        walk(e, n->init, f, depth + 1);
        walk(e, n->inc, f, depth + 1);
        walk(e, n->body, f, depth + 1);
        if (n->kind != ND_SWITCH) walk(e, n->args, f, depth + 1);
    }
}

static void note_builtin(emitter *e, tp_node *n) {
    if (n->kind != ND_BUILTIN) return;
    e->used[n->builtin] = true;
    if (!(rk__tp_builtins[n->builtin].flags & TP_BF_ATOMIC) || !n->args) return;
    if (n->builtin == TP_B_ATOMIC_ADD_U64 || n->builtin == TP_B_ATOMIC_ADD_F32) return; /* refused for device memory */
    tp_node *t = rk__wgsl_strip_ptr_conv(n->args);
    const tp_obj *root = rk__wgsl_lvalue_root(t->kind == ND_ADDR ? t->lhs : t);
    if (!root || !(root->is_param || root->is_shared)) return;
    bool device = root->is_shared || (e->fn && (e->fn->entry_kind == RK_TRANSPILE_GLOBAL ||
                                                e->fn->entry_kind == RK_TRANSPILE_STENCIL));
    for (tp_node *m = t->kind == ND_ADDR ? t->lhs : t; device && m; m = m->kind == ND_INDEX ? m->lhs : NULL) {
        if (m->kind != ND_MEMBER && m->kind != ND_ARROW) continue;
        /* Its struct would need an atomic<T> member, which no other use of
         * the struct (a copy, an initializer) could then take. */
        rk__tp_error(e->ctx, n->tok, "%s on a member of a struct in a buffer or shared memory is not available (WGSL "
                                     "target); keep the counter in its own int or uint buffer",
                     rk__tp_builtins[n->builtin].name);
        return;
    }
    for (int i = 0; i < e->atomic_count; i++)
        if (e->atomic_roots[i] == root) return;
    const tp_obj **v = rk__tp_alloc(e->ctx, sizeof *v * (size_t)(e->atomic_count + 1));
    if (e->atomic_count) memcpy(v, e->atomic_roots, sizeof *v * (size_t)e->atomic_count);
    v[e->atomic_count++] = root;
    e->atomic_roots = v;
}

/* Helper functions whose pointer parameter receives whole arrays. */
static void note_array_args(emitter *e, tp_node *n) {
    if (n->kind != ND_CALL) return;
    tp_obj *callee = n->obj->definition ? n->obj->definition : n->obj;
    tp_obj *p = callee->params;
    for (tp_node *a = n->args; a && p; a = a->next, p = p->next) {
        if (p->ty->kind != TY_PTR) continue;
        tp_node *s = rk__wgsl_strip_ptr_conv(a);
        if (s->ty->kind != TY_ARRAY) continue;
        bool seen = false;
        for (int i = 0; i < e->array_param_count; i++) {
            if (e->array_params[i] != p) continue;
            seen = true;
            if (!rk__tp_same_type(e->array_param_types[i], unq(s->ty)))
                rk__tp_error(e->ctx, a->tok, "'%s' is called with arrays of different types for parameter '%s'; a WGSL "
                                             "pointer parameter takes one array type (WGSL target)", callee->name,
                             p->name ? p->name : "?");
        }
        if (seen) continue;
        const tp_obj **v = rk__tp_alloc(e->ctx, sizeof *v * (size_t)(e->array_param_count + 1));
        tp_type **t = rk__tp_alloc(e->ctx, sizeof *t * (size_t)(e->array_param_count + 1));
        if (e->array_param_count) {
            memcpy(v, e->array_params, sizeof *v * (size_t)e->array_param_count);
            memcpy(t, e->array_param_types, sizeof *t * (size_t)e->array_param_count);
        }
        v[e->array_param_count] = p;
        t[e->array_param_count++] = unq(s->ty);
        e->array_params = v;
        e->array_param_types = t;
    }
}

static tp_type *array_param_type(emitter *e, const tp_obj *p) {
    for (int i = 0; i < e->array_param_count; i++)
        if (e->array_params[i] == p) return e->array_param_types[i];
    return NULL;
}

/* Which builtins a function and everything it calls uses. */
static bool uses_builtin_rec(const tp_obj *fn, tp_builtin_id id, int depth);

static bool node_uses(const tp_node *n, tp_builtin_id id, int depth) {
    for (; n && depth < 4 * TP_MAX_EXPR_DEPTH; n = n->next) {
        if (n->kind == ND_BUILTIN && n->builtin == id) return true;
        if (n->kind == ND_CALL && uses_builtin_rec(n->obj->definition ? n->obj->definition : n->obj, id, depth + 1))
            return true;
        if (node_uses(n->lhs, id, depth + 1) || node_uses(n->rhs, id, depth + 1) || node_uses(n->cond, id, depth + 1) ||
            node_uses(n->then, id, depth + 1) || node_uses(n->els, id, depth + 1) || node_uses(n->init, id, depth + 1) ||
            node_uses(n->inc, id, depth + 1) || node_uses(n->body, id, depth + 1) ||
            (n->kind != ND_SWITCH && node_uses(n->args, id, depth + 1)))
            return true;
    }
    return false;
}

static bool uses_builtin_rec(const tp_obj *fn, tp_builtin_id id, int depth) {
    return fn && fn->body && depth < 64 && node_uses(fn->body, id, depth);
}

static bool uses_any(const tp_obj *fn, const tp_builtin_id *ids, int n) {
    for (int i = 0; i < n; i++)
        if (uses_builtin_rec(fn, ids[i], 0)) return true;
    return false;
}

/* Does any statement of the function mention obj? */
static void note_obj(emitter *e, tp_node *n) {
    if (n->kind == ND_VAR && n->obj == e->find_obj) e->found_obj = true;
}

static bool mentions(emitter *e, tp_node *body, const tp_obj *o) {
    e->find_obj = o;
    e->found_obj = false;
    walk(e, body, note_obj, 0);
    return e->found_obj;
}

/* RK_SHARED locals of a function: module-scope var<workgroup>. */
static void declare_shared(emitter *e, tp_node *n) {
    if (n->kind != ND_DECL || !n->obj->is_shared) return;
    tp_obj *v = n->obj;
    rk__wgsl_check_type(e, v->ty, v->tok, rk__tp_format(e->ctx, "shared variable '%s'", v->name));
    name_entry *ne = rk__wgsl_add_name(e, v, rk__wgsl_shared_name(e, e->shared_fn, v), NK_PLAIN);
    const tp_type *t = unq(v->ty);
    if (ne->atomic) {
        const tp_type *leaf = t->kind == TY_ARRAY ? unq(t->base) : t;
        const char *at = rk__tp_format(e->ctx, "atomic<%s>", leaf->is_unsigned ? "u32" : "i32");
        PRINTF(e, "var<workgroup> %s: %s;\n", ne->name,
               t->kind == TY_ARRAY ? rk__tp_format(e->ctx, "array<%s, %d>", at, t->array_len) : at);
    } else {
        PRINTF(e, "var<workgroup> %s: %s;\n", ne->name, rk__wgsl_type_name(e, t));
    }
}

/* ---- file-scope items ----------------------------------------------------------------------- */

static void struct_def(emitter *e, tp_type *ty) {
    rk__wgsl_check_struct(e, ty);
    PRINTF(e, "// %d bytes, as on the host\n", ty->size);
    PRINTF(e, "struct %s {\n", rk__wgsl_struct_name(e, ty));
    for (tp_member *m = ty->members; m; m = m->next) PRINTF(e, "    %s: %s,\n", rk__wgsl_member_name(e, m), rk__wgsl_type_name(e, unq(m->ty)));
    put(e, "}\n\n");
}

static void global_var(emitter *e, tp_obj *v) {
    rk__wgsl_check_type(e, v->ty, v->tok, rk__tp_format(e->ctx, "variable '%s'", v->name));
    if (v->is_shared) {
        e->shared_fn = NULL;
        tp_node d = {.kind = ND_DECL, .obj = v};
        declare_shared(e, &d);
        put(e, "\n");
        return;
    }
    const char *name = rk__wgsl_ident(e, v->name);
    rk__wgsl_add_name(e, v, name, NK_PLAIN);
    const tp_type *t = unq(v->ty);
    /* Scalars are constants; tables are private copies so they can be indexed at run time. */
    if (rk__wgsl_scalar(t) && v->init && v->init->kind != ND_INIT_LIST)
        PRINTF(e, "const %s: %s = ", name, rk__wgsl_type_name(e, t));
    else
        PRINTF(e, "var<private> %s: %s = ", name, rk__wgsl_type_name(e, t));
    if (!v->init)
        rk__wgsl_zero_value(e, t);
    else if (v->init->kind == ND_INIT_LIST)
        rk__wgsl_init_list(e, v->init, t);
    else
        rk__wgsl_as_type(e, v->init, t);
    put(e, ";\n\n");
}

/* Scalar parameters copied into mutable locals (C parameters are variables). */
static void copy_params(emitter *e, tp_obj *fn, const char *from_struct) {
    for (tp_obj *p = fn->params; p; p = p->next) {
        if (p->ty->kind == TY_PTR || p->ty->kind == TY_GRID_POS || !p->name) continue;
        if (from_struct && unq(p->ty)->kind == TY_STRUCT) continue; /* kernel_struct_params() */
        const char *name = rk__wgsl_ident(e, p->name);
        line_start(e);
        if (from_struct)
            PRINTF(e, "var %s: %s = %s.%s;\n", name, rk__wgsl_type_name(e, unq(p->ty)), from_struct, name);
        else
            PRINTF(e, "var %s: %s = rk_p_%s;\n", name, rk__wgsl_type_name(e, unq(p->ty)), p->name);
        rk__wgsl_add_name(e, p, name, NK_PLAIN);
    }
}

/* C lets a function with a result fall off its end (the value is then
 * undefined); WGSL wants a return on every path, so one is added. */
static void final_return(emitter *e, tp_obj *fn) {
    tp_type *ret = unq(fn->ty->return_ty);
    const tp_node *last = fn->body->body;
    while (last && last->next) last = last->next;
    if (ret->kind == TY_VOID || (last && last->kind == ND_RETURN)) return;
    put(e, "    return ");
    rk__wgsl_zero_value(e, ret);
    put(e, ";\n");
}

static void helper_function(emitter *e, tp_obj *fn) {
    PRINTF(e, "fn %s(", rk__wgsl_ident(e, fn->name));
    bool first = true;
    for (tp_obj *p = fn->params; p; p = p->next) {
        if (p->ty->kind == TY_GRID_POS) {
            if (p->name) rk__wgsl_add_name(e, p, "rk_pos", NK_DROPPED);
            continue;
        }
        if (rk__wgsl_is_state(e, p->ty)) continue; /* its members are module-scope bindings */
        /* WGSL has no void pointers; one that is never read (a handler's unused
         * payload) is dropped with its arguments. */
        if (rk__wgsl_is_void_ptr(p->ty)) continue;
        if (!first) put(e, ", ");
        first = false;
        const char *pname = p->name ? p->name : rk__tp_format(e->ctx, "rk_unnamed%d", e->loop_var++);
        rk__wgsl_check_type(e, p->ty, p->tok, rk__tp_format(e->ctx, "parameter '%s'", pname));
        if (p->ty->kind == TY_PTR) {
            tp_type *arr = array_param_type(e, p);
            const char *name = rk__wgsl_ident(e, pname);
            if (arr) {
                PRINTF(e, "%s: ptr<function, %s>", name, rk__wgsl_type_name(e, arr));
                rk__wgsl_add_name(e, p, name, NK_PTR_ARRAY);
            } else {
                PRINTF(e, "%s: ptr<function, %s>", name, rk__wgsl_type_name(e, unq(p->ty->base)));
                rk__wgsl_add_name(e, p, name, NK_PTR_ELEM);
            }
        } else {
            PRINTF(e, "rk_p_%s: %s", pname, rk__wgsl_type_name(e, unq(p->ty)));
        }
    }
    put(e, ")");
    tp_type *ret = unq(fn->ty->return_ty);
    rk__wgsl_check_type(e, ret, fn->tok, rk__tp_format(e->ctx, "the result of '%s'", fn->name));
    if (ret->kind != TY_VOID) PRINTF(e, " -> %s", rk__wgsl_type_name(e, ret));
    put(e, " {\n");
    e->indent = 1;
    copy_params(e, fn, NULL);
    rk__wgsl_stmt(e, fn->body->body);
    final_return(e, fn);
    e->indent = 0;
    put(e, "}\n\n");
}

/* Workgroup size of a global kernel: 64, or 8x8 / 4x4x4 when it indexes in y / z. */
static void global_workgroup(const tp_obj *fn, int wg[3]) {
    static const tp_builtin_id z[] = {TP_B_THREAD_IDX_Z, TP_B_BLOCK_DIM_Z};
    static const tp_builtin_id y[] = {TP_B_THREAD_IDX_Y, TP_B_BLOCK_DIM_Y};
    if (fn->block[0]) {
        memcpy(wg, fn->block, sizeof fn->block); /* RK_BLOCK_SIZE */
    } else if (uses_any(fn, z, 2)) {
        wg[0] = wg[1] = wg[2] = 4;
    } else if (uses_any(fn, y, 2)) {
        wg[0] = wg[1] = 8;
        wg[2] = 1;
    } else {
        wg[0] = 64;
        wg[1] = wg[2] = 1;
    }
}

/* Bindings and the argument struct of a kernel; returns whether it has scalars. */
static bool kernel_bindings(emitter *e, tp_obj *fn, bool stencil) {
    const char *k = fn->name;
    int binding = 0;
    bool scalars = stencil;
    for (tp_obj *p = fn->params; p; p = p->next) {
        if (p->ty->kind == TY_GRID_POS) {
            rk__wgsl_add_name(e, p, "rk_pos", NK_DROPPED);
            continue;
        }
        const char *pname = p->name ? p->name : "unnamed";
        if (rk__wgsl_is_state(e, p->ty)) {
            rk__wgsl_state_bindings(e, fn, p, &binding);
            continue;
        }
        if (unq(p->ty)->kind == TY_STRUCT) {
            /* By value (RK_ARG_STRUCT): its bytes in a storage binding of its own, in order with the buffers. */
            if (rk__wgsl_check_type(e, p->ty, p->tok, rk__tp_format(e->ctx, "struct parameter '%s'", pname)))
                PRINTF(e, "@group(0) @binding(%d) var<storage, read> %s_%s: %s;\n", binding++, k, pname,
                       rk__wgsl_type_name(e, unq(p->ty)));
            continue;
        }
        if (p->ty->kind != TY_PTR) {
            if (unq(p->ty)->kind == TY_DOUBLE)
                rk__tp_error(e->ctx, p->tok, "kernel '%s': parameter '%s' is a double and WGSL has no f64; use float "
                                             "(WGSL target)", k, pname);
            else
                rk__wgsl_check_type(e, p->ty, p->tok, rk__tp_format(e->ctx, "parameter '%s'", pname));
            scalars = true;
            continue;
        }
        tp_type *elem = unq(p->ty->base);
        if (elem->kind != TY_DOUBLE) rk__wgsl_check_type(e, elem, p->tok, rk__tp_format(e->ctx, "buffer parameter '%s'", pname));
        if (elem->kind == TY_VOID || elem->kind == TY_PTR || elem->kind == TY_BOOL || elem->kind == TY_DOUBLE) {
            rk__tp_error(e->ctx, p->tok, "kernel '%s': buffer parameter '%s' needs a 32-bit element type or a struct "
                                         "(WGSL target)", k, pname);
        }
        const char *name = rk__tp_format(e->ctx, "%s_%s", k, pname);
        name_entry *ne = rk__wgsl_add_name(e, p, name, NK_BUFFER);
        const char *et = rk__wgsl_type_name(e, elem);
        if (ne->atomic) et = rk__tp_format(e->ctx, "atomic<%s>", elem->is_unsigned ? "u32" : "i32");
        PRINTF(e, "@group(0) @binding(%d) var<storage, %s> %s: array<%s>;\n", binding++,
               p->ty->base->is_const && !ne->atomic ? "read" : "read_write", name, et);
    }
    if (scalars) {
        PRINTF(e, "struct rk_args_%s {\n", k);
        for (tp_obj *p = fn->params; p; p = p->next)
            if (p->ty->kind != TY_PTR && p->ty->kind != TY_GRID_POS && unq(p->ty)->kind != TY_STRUCT && p->name)
                PRINTF(e, "    %s: %s,\n", rk__wgsl_ident(e, p->name), rk__wgsl_type_name(e, unq(p->ty)));
        if (stencil) {
            put(e, "    rk_nx: i32,\n    rk_ny: i32,\n");
            if (fn->stencil->dims == 3) put(e, "    rk_nz: i32,\n");
        }
        put(e, "}\n");
        PRINTF(e, "@group(0) @binding(%d) var<uniform> rk_args_%s_v: rk_args_%s;\n", binding, k, k);
    }
    put(e, "\n");
    return scalars;
}

static void kernel(emitter *e, tp_obj *fn) {
    bool stencil = fn->entry_kind == RK_TRANSPILE_STENCIL;
    int wg[3];
    if (stencil) {
        for (int i = 0; i < 3; i++) wg[i] = fn->stencil->tile[i] > 0 ? fn->stencil->tile[i] : 1;
    } else {
        global_workgroup(fn, wg);
    }
    e->shared_fn = fn;
    walk(e, fn->body, declare_shared, 0);
    bool scalars = kernel_bindings(e, fn, stencil);
    const char *k = fn->name;
    if (stencil)
        PRINTF(e, "// Stencil '%s': %d-D, launch with block (%d, %d, %d) and grid ceil(nx/%d) x ceil(ny/%d) x %s;\n"
                  "// arguments: the buffers, then the scalars, then nx, ny%s.\n",
               k, fn->stencil->dims, wg[0], wg[1], wg[2], wg[0], wg[1],
               fn->stencil->dims == 3 ? rk__tp_format(e->ctx, "ceil(nz/%d)", wg[2]) : "1",
               fn->stencil->dims == 3 ? ", nz" : "");
    else
        PRINTF(e, "// Kernel '%s': launch with any block the device allows (the backend sets rk_block_x/y/z).\n", k);
    if (stencil)
        PRINTF(e, "@compute @workgroup_size(%d, %d, %d)\n", wg[0], wg[1], wg[2]);
    else
        put(e, "@compute @workgroup_size(rk_block_x, rk_block_y, rk_block_z)\n");
    PRINTF(e, "fn %s(@builtin(local_invocation_id) rk_lid_in: vec3<u32>, @builtin(workgroup_id) rk_wid_in: vec3<u32>,\n"
              "        @builtin(num_workgroups) rk_nwg_in: vec3<u32>) {\n",
           rk__wgsl_ident(e, k));
    e->indent = 1;
    line_start(e);
    put(e, "rk_lid = rk_lid_in;\n");
    line_start(e);
    put(e, "rk_wid = rk_wid_in;\n");
    line_start(e);
    put(e, "rk_nwg = rk_nwg_in;\n");
    line_start(e);
    if (stencil)
        PRINTF(e, "rk_wgs = vec3<u32>(%du, %du, %du);\n", wg[0], wg[1], wg[2]);
    else
        put(e, "rk_wgs = vec3<u32>(rk_block_x, rk_block_y, rk_block_z);\n");
    /* Every binding stays in the "auto" layout even if the body ignores it. */
    for (tp_obj *p = fn->params; p; p = p->next) {
        if (p->ty->kind != TY_PTR) continue;
        if (rk__wgsl_is_state(e, p->ty)) {
            rk__wgsl_state_keep(e, p);
            continue;
        }
        line_start(e);
        PRINTF(e, "_ = &%s;\n", rk__wgsl_obj_name(e, p));
    }
    if (scalars) {
        line_start(e);
        PRINTF(e, "_ = rk_args_%s_v;\n", k);
        copy_params(e, fn, rk__tp_format(e->ctx, "rk_args_%s_v", k));
    }
    for (tp_obj *p = fn->params; p; p = p->next) { /* structs by value, from their storage bindings */
        if (unq(p->ty)->kind != TY_STRUCT || !p->name) continue;
        const char *name = rk__wgsl_ident(e, p->name);
        line_start(e);
        PRINTF(e, "var %s: %s = %s_%s;\n", name, rk__wgsl_type_name(e, unq(p->ty)), k, p->name);
        rk__wgsl_add_name(e, p, name, NK_PLAIN);
    }
    if (stencil) {
        bool d3 = fn->stencil->dims == 3;
        line_start(e);
        PRINTF(e, "rk_nx = rk_args_%s_v.rk_nx;\n", k);
        line_start(e);
        PRINTF(e, "rk_ny = rk_args_%s_v.rk_ny;\n", k);
        line_start(e);
        if (d3)
            PRINTF(e, "rk_nz = rk_args_%s_v.rk_nz;\n", k);
        else
            put(e, "rk_nz = 1i;\n");
        line_start(e);
        PRINTF(e, "rk_x = i32(rk_wid.x * %du + rk_lid.x);\n", wg[0]);
        line_start(e);
        PRINTF(e, "rk_y = i32(rk_wid.y * %du + rk_lid.y);\n", wg[1]);
        line_start(e);
        PRINTF(e, "rk_z = i32(rk_wid.z * %du + rk_lid.z);\n", wg[2]);
        line_start(e);
        PRINTF(e, "if (rk_x >= rk_nx || rk_y >= rk_ny%s) { return; }\n", d3 ? " || rk_z >= rk_nz" : "");
        line_start(e);
        put(e, d3 ? "rk_idx = (rk_z * rk_ny + rk_y) * rk_nx + rk_x;\n" : "rk_idx = rk_y * rk_nx + rk_x;\n");
    }
    line_start(e);
    put(e, "{\n");
    e->indent++;
    memcpy(e->kernel_wg, wg, sizeof e->kernel_wg);
    e->in_kernel = true;
    e->in_stencil = stencil;
    rk__wgsl_stmt(e, fn->body->body);
    e->in_kernel = e->in_stencil = false;
    e->indent--;
    line_start(e);
    put(e, "}\n");
    e->indent = 0;
    put(e, "}\n\n");
}

/* ---- handlers ---------------------------------------------------------------------------------- */

/* Copies every 32-bit leaf of a value between a WGSL variable (path) and
 * the template's u32 word array at word index `base + offset/4`. */
static void move_words(emitter *e, const tp_type *ty, const char *path, const char *array, const char *base, int offset,
                       bool load, const tp_token *tok) {
    ty = unq((tp_type *)ty);
    switch (ty->kind) {
    case TY_STRUCT:
        for (tp_member *m = ty->members; m; m = m->next)
            move_words(e, m->ty, rk__tp_format(e->ctx, "%s.%s", path, rk__wgsl_member_name(e, m)), array, base,
                       offset + m->offset, load, tok);
        return;
    case TY_ARRAY: {
        int stride = unq(ty->base)->size;
        const char *i = rk__tp_format(e->ctx, "rk_i%d", e->loop_var++);
        line_start(e);
        PRINTF(e, "for (var %s = 0u; %s < %du; %s++) {\n", i, i, ty->array_len, i);
        e->indent++;
        /* the element's word index: base + (offset + i * stride) / 4 */
        const char *b = rk__tp_format(e->ctx, "%s + %s * %du", base, i, stride / 4);
        move_words(e, ty->base, rk__tp_format(e->ctx, "%s[%s]", path, i), array, b, offset, load, tok);
        e->indent--;
        line_start(e);
        put(e, "}\n");
        return;
    }
    case TY_LONG:
        line_start(e);
        if (load)
            PRINTF(e, "%s = vec2<u32>(%s[%s + %du], %s[%s + %du]);\n", path, array, base, offset / 4, array, base,
                   offset / 4 + 1);
        else
            PRINTF(e, "%s[%s + %du] = %s.x;\n%*s%s[%s + %du] = %s.y;\n", array, base, offset / 4, path, e->indent * 4, "",
                   array, base, offset / 4 + 1, path);
        return;
    case TY_INT: case TY_ENUM: case TY_FLOAT: {
        const char *t = rk__wgsl_scalar(ty);
        line_start(e);
        bool raw = strcmp(t, "u32") == 0;
        if (load)
            PRINTF(e, "%s = %s%s[%s + %du]%s;\n", path, raw ? "" : rk__tp_format(e->ctx, "bitcast<%s>(", t), array, base,
                   offset / 4, raw ? "" : ")");
        else
            PRINTF(e, "%s[%s + %du] = %s%s%s;\n", array, base, offset / 4, raw ? "" : "bitcast<u32>(", path,
                   raw ? "" : ")");
        return;
    }
    default:
        rk__tp_error(e->ctx, tok, "a handler message member of this type has no 32-bit WGSL form (WGSL target)");
        return;
    }
}

static void handler(emitter *e, tp_obj *fn) {
    tp_obj *req = fn->params, *resp = req ? req->next : NULL, *state = resp ? resp->next : NULL;
    if (!req || !resp || !state) return; /* check.c reported it */
    tp_obj *ps[3] = {req, resp, state};
    tp_type *pt[3];
    bool layouts_ok = true;
    for (int i = 0; i < 3; i++) {
        pt[i] = ps[i]->ty->kind == TY_PTR ? unq(ps[i]->ty->base) : &rk__tp_ty_void;
        if (pt[i]->kind == TY_STRUCT && !rk__wgsl_check_struct(e, pt[i])) layouts_ok = false;
    }
    /* The handler itself, over pointers to function-scope copies. */
    PRINTF(e, "fn %s(", rk__wgsl_ident(e, fn->name));
    bool first = true;
    for (int i = 0; i < 3; i++) {
        if (pt[i]->kind == TY_VOID) {
            if (ps[i]->name) rk__wgsl_add_name(e, ps[i], "rk_void", NK_DROPPED);
            continue;
        }
        const char *name = rk__wgsl_ident(e, ps[i]->name ? ps[i]->name : rk__tp_format(e->ctx, "rk_msg%d", i));
        PRINTF(e, "%s%s: ptr<function, %s>", first ? "" : ", ", name, rk__wgsl_type_name(e, pt[i]));
        rk__wgsl_add_name(e, ps[i], name, NK_PTR_ELEM);
        first = false;
    }
    put(e, ") -> i32 {\n");
    e->indent = 1;
    rk__wgsl_stmt(e, fn->body->body);
    final_return(e, fn);
    e->indent = 0;
    put(e, "}\n\n");

    if (!layouts_ok) return; /* the message types were reported */
    /* The adapter the ring template calls. */
    bool uses_state = pt[2]->kind != TY_VOID && mentions(e, fn->body, state);
    PRINTF(e, "// Ring entry for handler '%s': request %d bytes, reply %d bytes, state %d bytes.\n", fn->name,
           pt[0]->kind == TY_VOID ? 0 : pt[0]->size, pt[1]->kind == TY_VOID ? 0 : pt[1]->size,
           pt[2]->kind == TY_VOID ? 0 : pt[2]->size);
    PRINTF(e, "const rk_uses_state_%s: bool = %s;\n", fn->name, uses_state ? "true" : "false");
    PRINTF(e, "fn rk_handle_%s(rk_req: u32, rk_resp: u32) -> i32 {\n", fn->name);
    e->indent = 1;
    static const char *const vars[3] = {"rk_req_v", "rk_resp_v", "rk_state_v"};
    for (int i = 0; i < 3; i++) {
        if (pt[i]->kind == TY_VOID) continue;
        line_start(e);
        PRINTF(e, "var %s: %s;\n", vars[i], rk__wgsl_type_name(e, pt[i]));
    }
    if (pt[0]->kind != TY_VOID) move_words(e, pt[0], vars[0], "rk_in", "rk_req", 0, true, req->tok);
    if (pt[2]->kind != TY_VOID && uses_state) move_words(e, pt[2], vars[2], "rk_state", "0u", 0, true, state->tok);
    line_start(e);
    PRINTF(e, "let rk_status_v = %s(", rk__wgsl_ident(e, fn->name));
    first = true;
    for (int i = 0; i < 3; i++) {
        if (pt[i]->kind == TY_VOID) continue;
        PRINTF(e, "%s&%s", first ? "" : ", ", vars[i]);
        first = false;
    }
    put(e, ");\n");
    if (pt[1]->kind != TY_VOID) move_words(e, pt[1], vars[1], "rk_out", "rk_resp", 0, false, resp->tok);
    if (pt[2]->kind != TY_VOID && uses_state) move_words(e, pt[2], vars[2], "rk_state", "0u", 0, false, state->tok);
    line_start(e);
    put(e, "return rk_status_v;\n");
    e->indent = 0;
    put(e, "}\n\n");
}

/* ---- helpers the output may call ----------------------------------------------------------------- */

/* 64-bit integers as vec2<u32> (low word, high word), two's complement. */
static const char int64_library[] =
    "fn rk_add64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {\n"
    "    let lo = a.x + b.x;\n"
    "    return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));\n}\n"
    "fn rk_sub64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {\n"
    "    return vec2<u32>(a.x - b.x, a.y - b.y - select(0u, 1u, a.x < b.x));\n}\n"
    "fn rk_neg64(a: vec2<u32>) -> vec2<u32> { return rk_sub64(vec2<u32>(0u, 0u), a); }\n"
    "fn rk_mul32x32(a: u32, b: u32) -> vec2<u32> {\n"
    "    let a0 = a & 0xffffu; let a1 = a >> 16u; let b0 = b & 0xffffu; let b1 = b >> 16u;\n"
    "    let p00 = a0 * b0; let p01 = a0 * b1; let p10 = a1 * b0; let p11 = a1 * b1;\n"
    "    let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);\n"
    "    return vec2<u32>((p00 & 0xffffu) | (mid << 16u), p11 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u));\n}\n"
    "fn rk_mul64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {\n"
    "    let p = rk_mul32x32(a.x, b.x);\n"
    "    return vec2<u32>(p.x, p.y + a.x * b.y + a.y * b.x);\n}\n"
    "fn rk_shl64(a: vec2<u32>, s: u32) -> vec2<u32> {\n"
    "    let n = s & 63u;\n"
    "    if (n == 0u) { return a; }\n"
    "    if (n >= 32u) { return vec2<u32>(0u, a.x << (n - 32u)); }\n"
    "    return vec2<u32>(a.x << n, (a.y << n) | (a.x >> (32u - n)));\n}\n"
    "fn rk_shr64(a: vec2<u32>, s: u32) -> vec2<u32> {\n"
    "    let n = s & 63u;\n"
    "    if (n == 0u) { return a; }\n"
    "    if (n >= 32u) { return vec2<u32>(a.y >> (n - 32u), 0u); }\n"
    "    return vec2<u32>((a.x >> n) | (a.y << (32u - n)), a.y >> n);\n}\n"
    "fn rk_sar64(a: vec2<u32>, s: u32) -> vec2<u32> {\n"
    "    let n = s & 63u;\n"
    "    let hi = i32(a.y);\n"
    "    if (n == 0u) { return a; }\n"
    "    if (n >= 32u) { return vec2<u32>(u32(hi >> (n - 32u)), u32(hi >> 31u)); }\n"
    "    return vec2<u32>((a.x >> n) | (a.y << (32u - n)), u32(hi >> n));\n}\n"
    "fn rk_ltu64(a: vec2<u32>, b: vec2<u32>) -> bool { return a.y < b.y || (a.y == b.y && a.x < b.x); }\n"
    "fn rk_lti64(a: vec2<u32>, b: vec2<u32>) -> bool { return i32(a.y) < i32(b.y) || (a.y == b.y && a.x < b.x); }\n"
    "fn rk_udivmod64(n: vec2<u32>, d: vec2<u32>, want_rem: bool) -> vec2<u32> {\n"
    "    var q = vec2<u32>(0u, 0u);\n"
    "    var r = vec2<u32>(0u, 0u);\n"
    "    for (var i = 63i; i >= 0i; i--) {\n"
    "        r = rk_shl64(r, 1u);\n"
    "        r.x = r.x | (select(n.x >> u32(i), n.y >> u32(i - 32i), i >= 32i) & 1u);\n"
    "        if (!rk_ltu64(r, d)) {\n"
    "            r = rk_sub64(r, d);\n"
    "            if (i >= 32i) { q.y = q.y | (1u << u32(i - 32i)); } else { q.x = q.x | (1u << u32(i)); }\n"
    "        }\n"
    "    }\n"
    "    return select(q, r, want_rem);\n}\n"
    "fn rk_udiv64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return rk_udivmod64(a, b, false); }\n"
    "fn rk_umod64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return rk_udivmod64(a, b, true); }\n"
    "fn rk_abs64(a: vec2<u32>) -> vec2<u32> { return select(a, rk_neg64(a), i32(a.y) < 0i); }\n"
    "fn rk_idiv64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {\n"
    "    let q = rk_udivmod64(rk_abs64(a), rk_abs64(b), false);\n"
    "    return select(q, rk_neg64(q), (i32(a.y) < 0i) != (i32(b.y) < 0i));\n}\n"
    "fn rk_imod64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {\n"
    "    let r = rk_udivmod64(rk_abs64(a), rk_abs64(b), true);\n"
    "    return select(r, rk_neg64(r), i32(a.y) < 0i);\n}\n"
    "fn rk_i64_from_i32(x: i32) -> vec2<u32> { return vec2<u32>(u32(x), select(0u, 0xffffffffu, x < 0i)); }\n"
    "fn rk_u64_to_f32(a: vec2<u32>) -> f32 { return f32(a.y) * 4294967296.0f + f32(a.x); }\n"
    "fn rk_i64_to_f32(a: vec2<u32>) -> f32 {\n"
    "    return select(rk_u64_to_f32(a), -rk_u64_to_f32(rk_neg64(a)), i32(a.y) < 0i);\n}\n"
    "fn rk_f32_to_u64(f: f32) -> vec2<u32> {\n"
    "    let v = max(f, 0.0f);\n"
    "    let hi = floor(v / 4294967296.0f);\n"
    "    return vec2<u32>(u32(v - hi * 4294967296.0f), u32(hi));\n}\n"
    "fn rk_f32_to_i64(f: f32) -> vec2<u32> {\n"
    "    let m = rk_f32_to_u64(abs(f));\n"
    "    return select(m, rk_neg64(m), f < 0.0f);\n}\n"
    "fn rk_fn_atomicAdd_u64(p: ptr<function, vec2<u32>>, v: vec2<u32>) -> vec2<u32> {\n"
    "    let o = *p;\n"
    "    *p = rk_add64(o, v);\n"
    "    return o;\n}\n\n";

static bool is64(const tp_type *t) {
    while (t && (t->kind == TY_ARRAY || t->kind == TY_PTR)) t = t->base;
    if (!t) return false;
    if (t->kind == TY_STRUCT) {
        for (tp_member *m = unq((tp_type *)t)->members; m; m = m->next)
            if (is64(m->ty)) return true;
        return false;
    }
    return t->kind == TY_LONG;
}

static void note_int64(emitter *e, tp_node *n) {
    if (n->kind == ND_SIZEOF || n->kind == ND_NUM) return; /* constants fold to 32 bits where they are used so */
    if ((n->ty && is64(n->ty)) || (n->kind == ND_DECL && is64(n->obj->ty))) e->uses_int64 = true;
}

static void helpers(emitter *e, bool any_stencil, const tp_obj *first_global) {
    if (e->uses_int64) put(e, int64_library);
    if (first_global) {
        int wg[3];
        global_workgroup(first_global, wg);
        PRINTF(e, "// The block of a global kernel's launch: the WebGPU backend sets these per pipeline.\n"
                  "override rk_block_x: u32 = %du;\noverride rk_block_y: u32 = %du;\noverride rk_block_z: u32 = %du;\n",
               wg[0], wg[1], wg[2]);
        e->has_block_overrides = true;
    }
    put(e, "var<private> rk_lid: vec3<u32>;\nvar<private> rk_wid: vec3<u32>;\n"
           "var<private> rk_nwg: vec3<u32>;\nvar<private> rk_wgs: vec3<u32>;\n\n");
    if (any_stencil)
        put(e, "var<private> rk_x: i32;\nvar<private> rk_y: i32;\nvar<private> rk_z: i32;\n"
               "var<private> rk_nx: i32;\nvar<private> rk_ny: i32;\nvar<private> rk_nz: i32;\n"
               "var<private> rk_idx: i32;\n"
               "fn rk_clampi(v: i32, n: i32) -> i32 { return clamp(v, 0i, n - 1i); }\n\n");
    bool *u = e->used;
    if (u[TP_B_SYNC_THREADS]) put(e, "fn rk_sync_threads() { storageBarrier(); workgroupBarrier(); }\n");
    if (u[TP_B_CBRTF] || u[TP_B_CBRT]) put(e, "fn rk_cbrt(x: f32) -> f32 { return sign(x) * pow(abs(x), 1.0f / 3.0f); }\n");
    if (u[TP_B_EXPM1F] || u[TP_B_EXPM1]) put(e, "fn rk_expm1(x: f32) -> f32 { return exp(x) - 1.0f; }\n");
    if (u[TP_B_LOG10F] || u[TP_B_LOG10]) put(e, "fn rk_log10(x: f32) -> f32 { return log2(x) * 0.30102999566f; }\n");
    if (u[TP_B_LOG1PF] || u[TP_B_LOG1P]) put(e, "fn rk_log1p(x: f32) -> f32 { return log(1.0f + x); }\n");
    if (u[TP_B_ROUNDF] || u[TP_B_ROUND])
        put(e, "fn rk_roundf(x: f32) -> f32 { let t = trunc(x); return t + select(0.0f, sign(x), abs(x - t) >= 0.5f); }\n");
    if (u[TP_B_FMODF] || u[TP_B_FMOD]) put(e, "fn rk_fmod(x: f32, y: f32) -> f32 { return x - y * trunc(x / y); }\n");
    if (u[TP_B_HYPOTF] || u[TP_B_HYPOT]) put(e, "fn rk_hypot(x: f32, y: f32) -> f32 { return length(vec2<f32>(x, y)); }\n");
    if (u[TP_B_COPYSIGNF] || u[TP_B_COPYSIGN])
        put(e, "fn rk_copysign(x: f32, y: f32) -> f32 {\n"
               "    return bitcast<f32>((bitcast<u32>(x) & 0x7fffffffu) | (bitcast<u32>(y) & 0x80000000u));\n}\n");
    if (u[TP_B_FDIMF] || u[TP_B_FDIM]) put(e, "fn rk_fdim(x: f32, y: f32) -> f32 { return max(x - y, 0.0f); }\n");
    /* Atomics on function-scope values (a handler's state): one invocation
     * owns them, so plain read-modify-write is exact. */
    bool any_atomic = false;
    for (int i = 0; i < TP_B_COUNT; i++)
        if (u[i] && (rk__tp_builtins[i].flags & TP_BF_ATOMIC)) any_atomic = true;
    if (!any_atomic) {
        put(e, "\n");
        return;
    }
    static const char *const ops[][2] = {{"Add", "o + v"}, {"Sub", "o - v"}, {"Min", "min(o, v)"}, {"Max", "max(o, v)"},
                                         {"And", "o & v"}, {"Or", "o | v"},  {"Xor", "o ^ v"},      {"Exchange", "v"}};
    for (int t = 0; t < 2; t++) {
        const char *ty = t ? "u32" : "i32";
        for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
            PRINTF(e, "fn rk_fn_atomic%s_%s(p: ptr<function, %s>, v: %s) -> %s { let o = *p; *p = %s; return o; }\n",
                   ops[i][0], ty, ty, ty, ty, ops[i][1]);
        PRINTF(e, "fn rk_fn_atomicCAS_%s(p: ptr<function, %s>, c: %s, v: %s) -> %s { let o = *p; if (o == c) { *p = v; } "
                  "return o; }\n",
               ty, ty, ty, ty, ty);
    }
    put(e, "\n");
}

int rk__wgsl_emit_helper(emitter *e, const tp_type *ty, const tp_token *tok) {
    for (int i = 0; i < e->emit_type_count; i++)
        if (e->emit_types[i] == ty) return i;
    if (e->emit_type_count == (int)(sizeof e->emit_types / sizeof e->emit_types[0])) {
        rk__tp_error(e->ctx, tok, "rk_emit: more than 16 message types in one module (WGSL target)");
        return 0;
    }
    e->emit_types[e->emit_type_count] = ty;
    return e->emit_type_count++;
}

/* rk_emit's helpers over the ring template's rk_emit buffer (layout in
 * src/webgpu/webgpu_channel.h): per port a count, the room the host gave,
 * a status (0 = open, else what every emit returns), the message size, the
 * refused count, a stride and the first word of the port's region. One
 * invocation runs the batch in order, so plain increments are exact. */
static void emit_helpers(emitter *e) {
    for (int i = 0; i < e->emit_type_count; i++) {
        const tp_type *ty = e->emit_types[i];
        PRINTF(e, "fn rk_emit_%d(port: u32, m: ptr<function, %s>) -> i32 {\n", i, rk__wgsl_type_name(e, ty));
        put(e, "    if (port >= 8u) { return -12; }\n"
               "    let st = bitcast<i32>(rk_emit[16u + port]);\n"
               "    if (st == -12) { return st; }\n"
               "    var rc = st;\n");
        PRINTF(e, "    if (rc == 0 && rk_emit[24u + port] != %du) { rc = -1; }\n", ty->size);
        put(e, "    let n = rk_emit[port];\n"
               "    if (rc == 0 && n >= rk_emit[8u + port]) { rc = -7; }\n"
               "    if (rc != 0) { rk_emit[32u + port] += 1u; return rc; }\n"
               "    let rk_e = rk_emit[48u + port] + n * rk_emit[40u + port];\n");
        e->indent = 1;
        move_words(e, ty, "(*m)", "rk_emit", "rk_e", 0, false, NULL);
        e->indent = 0;
        put(e, "    rk_emit[port] = n + 1u;\n    return 0;\n}\n");
    }
}

static void late_helpers(emitter *e) {
    emit_helpers(e);
    unsigned h = e->late_helpers;
    if (h) put(e, "\n");
    if (h & LATE_NONFINITE)
        put(e, "var<private> rk_f32_inf_bits: u32 = 0x7f800000u;\nvar<private> rk_f32_nan_bits: u32 = 0x7fc00000u;\n");
    if (h & LATE_ISNAN) put(e, "fn rk_isnan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }\n");
    if (h & LATE_ISINF) put(e, "fn rk_isinf(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u; }\n");
    if (h & LATE_ISFINITE)
        put(e, "fn rk_isfinite(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) < 0x7f800000u; }\n");
    if (h & LATE_FFS) put(e, "fn rk_ffs(x: u32) -> i32 { return i32(firstTrailingBit(x) + 1u); }\n");
}

void rk__tp_emit_wgsl(tp_ctx *ctx, tp_program *prog, tp_buf *out) {
    emitter e = {.ctx = ctx, .out = out};
    bool any_stencil = false;
    const tp_obj *first_global = NULL;
    tp_buf kinds;
    rk__tp_buf_init(&kinds, ctx);
    rk__wgsl_state_prepare(&e, prog);
    for (tp_obj *fn = prog->functions; fn; fn = fn->next) {
        if (fn->body) {
            e.fn = fn; /* note_builtin: whether pointer parameters are buffers */
            walk(&e, fn->body, note_builtin, 0);
            e.fn = NULL;
            walk(&e, fn->body, note_array_args, 0);
            walk(&e, fn->body, note_int64, 0);
            for (tp_obj *p = fn->params; p; p = p->next)
                if (is64(p->ty)) e.uses_int64 = true;
        }
        if (fn->entry_kind == RK_TRANSPILE_STENCIL) any_stencil = true;
        if (fn->entry_kind == RK_TRANSPILE_GLOBAL && fn->body && !first_global) first_global = fn;
        rk__tp_note_entry_point(&kinds, fn);
    }
    PRINTF(&e, "// Generated by the ringkernel transpiler from %s (target: WGSL).\n", rk__tp_source_base_name(ctx));
    PRINTF(&e, "// Entry points: %s. Do not edit; edit the source and run rk transpile.\n", kinds.data);
    put(&e, "// Launch convention (docs/webgpu.md): buffer parameters, and structs passed by value, bind to\n"
            "// @group(0) @binding(0..) in order; scalar parameters are one uniform struct at the next binding;\n"
            "// global kernels take the launch's block as the overrides rk_block_x/y/z. Handlers are called by the\n"
            "// WebGPU ring template, which declares rk_in, rk_out and rk_state.\n\n");
    for (tp_item *it = prog->items; it; it = it->next)
        if ((it->kind == IT_STRUCT && is64(it->struct_ty)) || (it->kind == IT_VAR && is64(it->obj->ty)))
            e.uses_int64 = true;
    helpers(&e, any_stencil, first_global);
    for (tp_item *it = prog->items; it; it = it->next) {
        switch (it->kind) {
        case IT_STRUCT:
            if (!rk__wgsl_state_is_struct(&e, it->struct_ty)) struct_def(&e, it->struct_ty);
            break;
        case IT_VAR:
            if (!it->obj->is_enum_const && !it->obj->is_typedef) global_var(&e, it->obj);
            break;
        case IT_STATIC_ASSERT:
            break;
        case IT_FUNC: {
            tp_obj *fn = it->obj;
            if (!it->node || !fn->body) break; /* prototypes: WGSL needs none */
            int mark = e.name_count;
            e.fn = fn;
            e.st = fn->stencil;
            if (fn->entry_kind == RK_TRANSPILE_GLOBAL || fn->entry_kind == RK_TRANSPILE_STENCIL)
                kernel(&e, fn);
            else if (fn->entry_kind == RK_TRANSPILE_HANDLER)
                handler(&e, fn);
            else {
                e.shared_fn = fn;
                walk(&e, fn->body, declare_shared, 0);
                helper_function(&e, fn);
            }
            /* Locals and parameters go out of scope; module-scope shared names stay. */
            int keep = mark;
            for (int i = mark; i < e.name_count; i++)
                if (e.names[i].obj->is_shared) e.names[keep++] = e.names[i];
            e.name_count = keep;
            e.fn = NULL;
            e.st = NULL;
            break;
        }
        }
    }
    late_helpers(&e);
}
