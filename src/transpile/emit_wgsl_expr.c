/* WGSL emitter: expressions. Every conversion C makes implicitly is written
 * out; pointers become buffer indexes or ptr<function, T>; 64-bit integers
 * go through the vec2<u32> helpers. */
#include <math.h>

#include "emit_wgsl.h"

/* ---- expressions --------------------------------------------------------------------------- */


bool rk__wgsl_is_comparison(tp_node_kind k) {
    return k == ND_EQ || k == ND_NE || k == ND_LT || k == ND_LE || k == ND_GT || k == ND_GE || k == ND_LOGAND ||
           k == ND_LOGOR || k == ND_NOT;
}

/* Looks through conversions that do not change a pointer's target (array
 * decay, adding or dropping const). */
tp_node *rk__wgsl_strip_ptr_conv(tp_node *n) {
    while ((n->kind == ND_CONV || n->kind == ND_CAST) && (n->ty->kind == TY_PTR) &&
           (n->lhs->ty->kind == TY_PTR || n->lhs->ty->kind == TY_ARRAY)) {
        /* A cast to another pointee type reinterprets memory: WGSL cannot,
         * so it stays, and whoever meets it refuses it. */
        if (!rk__tp_same_type(unq(n->ty->base), unq(n->lhs->ty->base))) break;
        n = n->lhs;
    }
    return n;
}

bool rk__wgsl_pointer_form(emitter *e, tp_node *n, ptr_form *f) {
    n = rk__wgsl_strip_ptr_conv(n);
    if ((n->kind == ND_ADD || n->kind == ND_SUB) && n->ty->kind == TY_PTR) {
        tp_node *p = n->lhs, *i = n->rhs;
        if (n->kind == ND_ADD && rk__wgsl_strip_ptr_conv(p)->ty->kind != TY_PTR && rk__wgsl_strip_ptr_conv(p)->ty->kind != TY_ARRAY) {
            p = n->rhs;
            i = n->lhs;
        }
        if (!rk__wgsl_pointer_form(e, p, f)) return false;
        if (f->nterms == 8) return false;
        f->terms[f->nterms] = i;
        f->negative[f->nterms++] = n->kind == ND_SUB;
        return true;
    }
    f->base = n;
    return true;
}

/* Writes the element `index` (NULL = 0) of what pointer expression n points at. */
void rk__wgsl_element(emitter *e, tp_node *n, tp_node *index, const tp_token *tok) {
    ptr_form f = {0};
    if (!rk__wgsl_pointer_form(e, n, &f)) {
        refuse(e, tok, "pointer arithmetic this complex is not available");
        put(e, "0");
        return;
    }
    tp_node *b = f.base;
    name_entry *ne = b->kind == ND_VAR ? rk__wgsl_find_name(e, b->obj) : NULL;
    bool indexable = (ne && (ne->kind == NK_BUFFER || ne->kind == NK_PTR_ARRAY)) || b->ty->kind == TY_ARRAY;
    if (!indexable && (f.nterms || index)) {
        /* p[0] and *(p + 0) are fine; anything else has no WGSL meaning. */
        int64_t v = 1;
        bool zero = !f.nterms && index && rk__tp_try_eval(e->ctx, index, &v) && v == 0;
        if (!zero) {
            refuse(e, tok, "indexing a pointer that does not point into a buffer or an array is not available");
            put(e, "0");
            return;
        }
        index = NULL;
    }
    if (b->kind == ND_ADDR) { /* *&x */
        rk__wgsl_expr(e, b->lhs);
        return;
    }
    if (ne && ne->kind == NK_PTR_ELEM) {
        PRINTF(e, "(*%s)", ne->name);
        return;
    }
    if (ne && ne->kind == NK_PTR_ARRAY)
        PRINTF(e, "(*%s)", ne->name);
    else if (ne && ne->kind == NK_BUFFER)
        put(e, ne->name);
    else if (b->ty->kind == TY_ARRAY)
        rk__wgsl_expr(e, b);
    else {
        refuse(e, tok, "a pointer that is not a buffer parameter, a local array or a pointer to a local is not available");
        put(e, "0");
        return;
    }
    put(e, "[");
    const char *start = ne && ne->kind == NK_BUFFER ? ne->offset : NULL;
    if (!f.nterms && !index) {
        put(e, start ? start : "0");
    } else {
        bool first = true;
        if (start) {
            put(e, start);
            first = false;
        }
        for (int i = 0; i < f.nterms; i++) {
            put(e, f.negative[i] ? " - " : first ? "" : " + ");
            rk__wgsl_as_type(e, f.terms[i], &rk__tp_ty_int);
            first = false;
        }
        if (index) {
            if (!first) put(e, " + ");
            if (!first || unq(index->ty)->kind == TY_LONG)
                rk__wgsl_as_type(e, index, &rk__tp_ty_int);
            else
                rk__wgsl_expr(e, index);
        }
    }
    put(e, "]");
}

/* The root variable of an lvalue: buf in buf[i], s in s.a[2]. */
const tp_obj *rk__wgsl_lvalue_root(tp_node *n) {
    for (;;) {
        n = rk__wgsl_strip_ptr_conv(n);
        switch (n->kind) {
        case ND_VAR: return n->obj;
        case ND_INDEX: {
            tp_node *p = n->lhs->ty->kind == TY_PTR || n->lhs->ty->kind == TY_ARRAY ? n->lhs : n->rhs;
            n = p;
            break;
        }
        case ND_MEMBER: n = n->lhs; break;
        case ND_ARROW: case ND_DEREF: n = n->lhs; break;
        case ND_ADD: case ND_SUB: n = n->lhs->ty->kind == TY_PTR ? n->lhs : n->rhs; break;
        case ND_ADDR: n = n->lhs; break;
        default: return NULL;
        }
    }
}

bool rk__wgsl_is_atomic_lvalue(emitter *e, tp_node *n) {
    const tp_obj *root = rk__wgsl_lvalue_root(n);
    name_entry *ne = root ? rk__wgsl_find_name(e, root) : NULL;
    return ne && ne->atomic;
}

/* An lvalue as a WGSL reference expression. */
void rk__wgsl_lvalue(emitter *e, tp_node *n) {
    switch (n->kind) {
    case ND_VAR: {
        name_entry *ne = rk__wgsl_find_name(e, n->obj);
        if (ne && ne->kind == NK_PTR_ELEM) {
            PRINTF(e, "(*%s)", ne->name);
            return;
        }
        put(e, rk__wgsl_obj_name(e, n->obj));
        return;
    }
    case ND_INDEX: {
        bool lhs_is_ptr = n->lhs->ty->kind == TY_PTR || n->lhs->ty->kind == TY_ARRAY;
        tp_node *p = lhs_is_ptr ? n->lhs : n->rhs, *i = lhs_is_ptr ? n->rhs : n->lhs;
        p = rk__wgsl_strip_ptr_conv(p);
        if (p->ty->kind == TY_ARRAY && p->kind != ND_VAR) {
            /* an array member or element: s.a[i] */
            rk__wgsl_lvalue(e, p);
            put(e, "[");
            if (unq(i->ty)->kind == TY_LONG)
                rk__wgsl_as_type(e, i, &rk__tp_ty_int);
            else
                rk__wgsl_expr(e, i);
            put(e, "]");
            return;
        }
        rk__wgsl_element(e, p, i, n->tok);
        return;
    }
    case ND_DEREF:
        rk__wgsl_element(e, n->lhs, NULL, n->tok);
        return;
    case ND_MEMBER:
        rk__wgsl_lvalue(e, n->lhs);
        PRINTF(e, ".%s", rk__wgsl_member_name(e, n->member));
        return;
    case ND_ARROW:
        rk__wgsl_element(e, n->lhs, NULL, n->tok);
        PRINTF(e, ".%s", rk__wgsl_member_name(e, n->member));
        return;
    default:
        rk__wgsl_expr(e, n);
        return;
    }
}

/* One call argument for parameter p (NULL: unknown). */
void rk__wgsl_one_arg(emitter *e, const tp_obj *p, tp_node *a) {
    if (p && p->ty->kind == TY_PTR) {
        /* Pointers to locals pass as WGSL pointers; whole arrays by reference. */
        tp_node *s = rk__wgsl_strip_ptr_conv(a);
        name_entry *ne = s->kind == ND_VAR ? rk__wgsl_find_name(e, s->obj) : NULL;
        const tp_obj *root = rk__wgsl_lvalue_root(s);
        name_entry *rn = root ? rk__wgsl_find_name(e, root) : NULL;
        if ((rn && rn->kind == NK_BUFFER) || (root && root->is_shared)) {
            /* The helper's parameter is a ptr<function, T>. */
            refuse(e, a->tok, "a pointer into a buffer or shared memory cannot be passed to a function; pass the "
                              "buffer and an index, or copy the value into a local");
            put(e, "0");
        } else if (s->kind == ND_ADDR) {
            put(e, "&");
            rk__wgsl_lvalue(e, s->lhs);
        } else if (s->ty->kind == TY_ARRAY) {
            put(e, "&");
            rk__wgsl_lvalue(e, s);
        } else if (ne && (ne->kind == NK_PTR_ELEM || ne->kind == NK_PTR_ARRAY)) {
            put(e, ne->name);
        } else {
            refuse(e, a->tok, "only pointers to local variables and local arrays can be passed to functions");
            put(e, "0");
        }
        return;
    }
    if (p)
        rk__wgsl_as_type(e, a, p->ty);
    else
        rk__wgsl_expr(e, a);
}

void rk__wgsl_args_list(emitter *e, tp_obj *callee, tp_node *a) {
    bool first = true;
    tp_obj *p = callee ? callee->params : NULL;
    for (; a; a = a->next, p = p ? p->next : NULL) {
        if (a->ty->kind == TY_GRID_POS || (p && p->ty->kind == TY_GRID_POS)) continue;
        if (p && rk__wgsl_is_state(e, p->ty)) continue; /* emit_wgsl_state.c */
        if (p && rk__wgsl_is_void_ptr(p->ty)) {
            if (rk__wgsl_has_effects(a)) refuse(e, a->tok, "an argument with side effects for a void pointer parameter");
            continue; /* the parameter is dropped (helper_function) */
        }
        if (!first) put(e, ", ");
        first = false;
        rk__wgsl_one_arg(e, p, a);
    }
}

/* Stencil neighbour index with clamp-to-edge, as the CUDA tile loads do. */
static void stencil_index(emitter *e, tp_node *n) {
    if (e->st && e->st->dims == 3)
        PRINTF(e, "(rk_clampi(rk_z + (%di), rk_nz) * rk_ny + rk_clampi(rk_y + (%di), rk_ny)) * rk_nx + "
                  "rk_clampi(rk_x + (%di), rk_nx)",
               n->off[2], n->off[1], n->off[0]);
    else
        PRINTF(e, "rk_clampi(rk_y + (%di), rk_ny) * rk_nx + rk_clampi(rk_x + (%di), rk_nx)", n->off[1], n->off[0]);
}

static const char *math_name(tp_builtin_id id) {
    switch (id) {
    case TP_B_SQRTF: case TP_B_SQRT: return "sqrt";
    case TP_B_SINF: case TP_B_SIN: return "sin";
    case TP_B_COSF: case TP_B_COS: return "cos";
    case TP_B_TANF: case TP_B_TAN: return "tan";
    case TP_B_ASINF: case TP_B_ASIN: return "asin";
    case TP_B_ACOSF: case TP_B_ACOS: return "acos";
    case TP_B_ATANF: case TP_B_ATAN: return "atan";
    case TP_B_SINHF: case TP_B_SINH: return "sinh";
    case TP_B_COSHF: case TP_B_COSH: return "cosh";
    case TP_B_TANHF: case TP_B_TANH: return "tanh";
    case TP_B_ASINHF: case TP_B_ASINH: return "asinh";
    case TP_B_ACOSHF: case TP_B_ACOSH: return "acosh";
    case TP_B_ATANHF: case TP_B_ATANH: return "atanh";
    case TP_B_EXPF: case TP_B_EXP: return "exp";
    case TP_B_EXP2F: case TP_B_EXP2: return "exp2";
    case TP_B_LOGF: case TP_B_LOG: return "log";
    case TP_B_LOG2F: case TP_B_LOG2: return "log2";
    case TP_B_FABSF: case TP_B_FABS: return "abs";
    case TP_B_FLOORF: case TP_B_FLOOR: return "floor";
    case TP_B_CEILF: case TP_B_CEIL: return "ceil";
    case TP_B_TRUNCF: case TP_B_TRUNC: return "trunc";
    case TP_B_RINTF: case TP_B_RINT: return "round"; /* WGSL rounds half to even, as rint does */
    case TP_B_POWF: case TP_B_POW: return "pow";
    case TP_B_FMINF: case TP_B_FMIN: return "min";
    case TP_B_FMAXF: case TP_B_FMAX: return "max";
    case TP_B_ATAN2F: case TP_B_ATAN2: return "atan2";
    case TP_B_FMAF: case TP_B_FMA: return "fma";
    /* helpers emitted into the module (see helpers()) */
    case TP_B_CBRTF: case TP_B_CBRT: return "rk_cbrt";
    case TP_B_EXPM1F: case TP_B_EXPM1: return "rk_expm1";
    case TP_B_LOG10F: case TP_B_LOG10: return "rk_log10";
    case TP_B_LOG1PF: case TP_B_LOG1P: return "rk_log1p";
    case TP_B_ROUNDF: case TP_B_ROUND: return "rk_roundf";
    case TP_B_FMODF: case TP_B_FMOD: return "rk_fmod";
    case TP_B_HYPOTF: case TP_B_HYPOT: return "rk_hypot";
    case TP_B_COPYSIGNF: case TP_B_COPYSIGN: return "rk_copysign";
    case TP_B_FDIMF: case TP_B_FDIM: return "rk_fdim";
    default: return NULL;
    }
}

static void builtin_args(emitter *e, tp_node *n) {
    const tp_builtin *b = &rk__tp_builtins[n->builtin];
    int i = 0;
    for (tp_node *a = n->args; a; a = a->next, i++) {
        if (i) put(e, ", ");
        if (b->args[i] == BT_FLOAT || b->args[i] == BT_DOUBLE)
            rk__wgsl_as_type(e, a, &rk__tp_ty_float);
        else if (b->args[i] == BT_INT)
            rk__wgsl_as_type(e, a, &rk__tp_ty_int);
        else if (b->args[i] == BT_UINT)
            rk__wgsl_as_type(e, a, &rk__tp_ty_uint);
        else
            rk__wgsl_expr(e, a);
    }
}

/* atomic_*(&x, ...): storage and workgroup memory get WGSL atomics; a
 * function-scope target (a handler's state) gets plain read-modify-write
 * helpers, since only one invocation touches it. */
static void atomic_builtin(emitter *e, tp_node *n) {
    const char *op = NULL;
    switch (n->builtin) {
    case TP_B_ATOMIC_ADD_I32: case TP_B_ATOMIC_ADD_U32: op = "Add"; break;
    case TP_B_ATOMIC_SUB_I32: op = "Sub"; break;
    case TP_B_ATOMIC_MIN_I32: op = "Min"; break;
    case TP_B_ATOMIC_MAX_I32: op = "Max"; break;
    case TP_B_ATOMIC_AND_U32: op = "And"; break;
    case TP_B_ATOMIC_OR_U32: op = "Or"; break;
    case TP_B_ATOMIC_XOR_U32: op = "Xor"; break;
    case TP_B_ATOMIC_EXCH_I32: case TP_B_ATOMIC_EXCH_U32: op = "Exchange"; break;
    case TP_B_ATOMIC_MIN_U32: op = "Min"; break;
    case TP_B_ATOMIC_MAX_U32: op = "Max"; break;
    case TP_B_ATOMIC_LOAD_I32: case TP_B_ATOMIC_LOAD_U32: op = "Load"; break;
    case TP_B_ATOMIC_CAS_I32: case TP_B_ATOMIC_CAS_U32: op = "CAS"; break;
    case TP_B_ATOMIC_ADD_U64: {
        /* Only a handler's function-scope state can take it: WGSL has no
         * 64-bit atomics in storage or workgroup memory. */
        tp_node *t = rk__wgsl_strip_ptr_conv(n->args);
        const tp_obj *root = rk__wgsl_lvalue_root(t->kind == ND_ADDR ? t->lhs : t);
        name_entry *ne = root ? rk__wgsl_find_name(e, root) : NULL;
        if (!ne || ne->kind == NK_BUFFER || root->is_shared) {
            refuse(e, n->tok, "atomic_add_u64: WGSL has no 64-bit atomics in buffers or shared memory (keep 32-bit "
                             "counters)");
            put(e, "vec2<u32>(0u, 0u)");
            return;
        }
        op = "Add";
        break;
    }
    case TP_B_ATOMIC_ADD_F32:
        refuse(e, n->tok, "atomic_add_f32: WGSL has no floating-point atomics");
        put(e, "0.0f");
        return;
    default:
        /* load_acquire_u32, store_release_u64 ...: ordering against the host
         * through mapped memory, which WebGPU has neither of. */
        refuse(e, n->tok, rk__tp_format(e->ctx, "%s: WGSL atomics are relaxed and WebGPU has no memory shared with "
                                               "the host while a kernel runs", rk__tp_builtins[n->builtin].name));
        put(e, "0u");
        return;
    }
    tp_node *target = rk__wgsl_strip_ptr_conv(n->args);
    const char *t = n->builtin == TP_B_ATOMIC_ADD_U64 ? "u64"
                    : n->builtin == TP_B_ATOMIC_ADD_U32 || n->builtin == TP_B_ATOMIC_AND_U32 ||
                            n->builtin == TP_B_ATOMIC_OR_U32 || n->builtin == TP_B_ATOMIC_XOR_U32 ||
                            n->builtin == TP_B_ATOMIC_CAS_U32 || n->builtin == TP_B_ATOMIC_MIN_U32 ||
                            n->builtin == TP_B_ATOMIC_MAX_U32 || n->builtin == TP_B_ATOMIC_EXCH_U32 ||
                            n->builtin == TP_B_ATOMIC_LOAD_U32
                        ? "u32"
                        : "i32";
    const tp_type *vt = strcmp(t, "u64") == 0 ? &rk__tp_ty_ulong : t[0] == 'u' ? &rk__tp_ty_uint : &rk__tp_ty_int;
    bool device = rk__wgsl_is_atomic_lvalue(e, target->kind == ND_ADDR ? target->lhs : target);
    if (device) {
        if (strcmp(op, "CAS") == 0) {
            /* Statement contexts lower it into a strong loop first
             * (emit_wgsl_lower.c); a weak exchange here would change its meaning. */
            refuse(e, n->tok, "atomic_cas in this position cannot be made strong; assign its result to a variable first");
            put(e, "0");
            return;
        }
        PRINTF(e, "atomic%s(&", op);
        if (target->kind == ND_ADDR)
            rk__wgsl_lvalue(e, target->lhs);
        else
            rk__wgsl_element(e, target, NULL, n->tok); /* atomic_x(buf + i, v): the element buf[i] */
    } else if (strcmp(op, "Load") == 0) {
        put(e, "("); /* function scope: the value itself */
        rk__wgsl_element(e, target, NULL, n->tok);
    } else {
        PRINTF(e, "rk_fn_atomic%s_%s(", op, t);
        if (target->kind == ND_ADDR) {
            put(e, "&");
            rk__wgsl_lvalue(e, target->lhs);
        } else {
            tp_node *s = target;
            name_entry *ne = s->kind == ND_VAR ? rk__wgsl_find_name(e, s->obj) : NULL;
            if (ne && ne->kind == NK_PTR_ELEM)
                put(e, ne->name);
            else {
                refuse(e, n->tok, "the target of an atomic must be &buffer[i], &shared or a pointer to a local");
                put(e, "0");
            }
        }
    }
    for (tp_node *a = n->args->next; a; a = a->next) {
        put(e, ", ");
        rk__wgsl_as_type(e, a, vt);
    }
    put(e, ")");
}


/* block_dim_*(): uniform for WGSL's analysis (see emitter.has_block_overrides). */
static void block_dim(emitter *e, int axis) {
    if (e->in_kernel && e->in_stencil)
        PRINTF(e, "%di", e->kernel_wg[axis]);
    else if (e->has_block_overrides)
        PRINTF(e, "i32(rk_block_%c)", "xyz"[axis]);
    else
        PRINTF(e, "i32(rk_wgs.%c)", "xyz"[axis]);
}

static void builtin(emitter *e, tp_node *n) {
    const tp_builtin *b = &rk__tp_builtins[n->builtin];
    if (b->flags & TP_BF_STENCIL) {
        switch (n->builtin) {
        case TP_B_POS_IDX: put(e, "rk_idx"); return;
        case TP_B_POS_X: put(e, "rk_x"); return;
        case TP_B_POS_Y: put(e, "rk_y"); return;
        case TP_B_POS_Z: put(e, "rk_z"); return;
        case TP_B_POS_NX: put(e, "rk_nx"); return;
        case TP_B_POS_NY: put(e, "rk_ny"); return;
        case TP_B_POS_NZ: put(e, "rk_nz"); return;
        default: {
            const char *buf = n->buffer ? rk__wgsl_obj_name(e, n->buffer) : "rk_missing_buffer";
            name_entry *ne = n->buffer ? rk__wgsl_find_name(e, n->buffer) : NULL;
            if (ne && ne->atomic) put(e, "atomicLoad(&");
            PRINTF(e, "%s[", buf);
            stencil_index(e, n);
            put(e, "]");
            if (ne && ne->atomic) put(e, ")");
            return;
        }
        }
    }
    if (b->flags & TP_BF_ATOMIC) {
        atomic_builtin(e, n);
        return;
    }
    switch (n->builtin) {
    case TP_B_THREAD_IDX_X: put(e, "i32(rk_lid.x)"); return;
    case TP_B_THREAD_IDX_Y: put(e, "i32(rk_lid.y)"); return;
    case TP_B_THREAD_IDX_Z: put(e, "i32(rk_lid.z)"); return;
    /* In a kernel's body the builtin itself: uniform to WGSL, unlike the private copy. */
    case TP_B_BLOCK_IDX_X: PRINTF(e, "i32(%s.x)", e->in_kernel ? "rk_wid_in" : "rk_wid"); return;
    case TP_B_BLOCK_IDX_Y: PRINTF(e, "i32(%s.y)", e->in_kernel ? "rk_wid_in" : "rk_wid"); return;
    case TP_B_BLOCK_IDX_Z: PRINTF(e, "i32(%s.z)", e->in_kernel ? "rk_wid_in" : "rk_wid"); return;
    case TP_B_BLOCK_DIM_X: block_dim(e, 0); return;
    case TP_B_BLOCK_DIM_Y: block_dim(e, 1); return;
    case TP_B_BLOCK_DIM_Z: block_dim(e, 2); return;
    case TP_B_GRID_DIM_X: PRINTF(e, "i32(%s.x)", e->in_kernel ? "rk_nwg_in" : "rk_nwg"); return;
    case TP_B_GRID_DIM_Y: PRINTF(e, "i32(%s.y)", e->in_kernel ? "rk_nwg_in" : "rk_nwg"); return;
    case TP_B_GRID_DIM_Z: PRINTF(e, "i32(%s.z)", e->in_kernel ? "rk_nwg_in" : "rk_nwg"); return;
    case TP_B_WARP_SIZE: put(e, "32i"); return;
    case TP_B_LANE_ID: put(e, "i32((rk_lid.x + rk_wgs.x * (rk_lid.y + rk_wgs.y * rk_lid.z)) & 31u)"); return;
    case TP_B_SYNC_THREADS: put(e, "rk_sync_threads()"); return;
    case TP_B_THREAD_FENCE: put(e, "storageBarrier()"); return;
    case TP_B_THREAD_FENCE_BLOCK: put(e, "workgroupBarrier()"); return;
    case TP_B_RK_EMIT: {
        /* rk_emit_K(port, pointer): the helper (emit_wgsl.c) writes the
         * message's words into the ring template's rk_emit buffer. */
        tp_node *msg = n->args->next;
        const tp_type *ty = rk__tp_unqual(msg->ty->base); /* sema: a pointer to a complete type */
        PRINTF(e, "rk_emit_%d(u32(", rk__wgsl_emit_helper(e, ty, n->tok));
        rk__wgsl_expr(e, n->args);
        put(e, "), ");
        rk__wgsl_expr(e, msg);
        put(e, ")");
        return;
    }
    case TP_B_DYNAMIC_SHARED:
        refuse(e, n->tok, "dynamic_shared: WGSL has no dynamic workgroup memory; declare an RK_SHARED array");
        put(e, "0");
        return;
    case TP_B_INFF: case TP_B_INF: rk__wgsl_float_literal(e, INFINITY); return;
    case TP_B_NANF: rk__wgsl_float_literal(e, NAN); return;
    case TP_B_ISNAN: case TP_B_ISINF: case TP_B_ISFINITE:
        put(e, "select(0i, 1i, ");
        rk__wgsl_cond(e, n);
        put(e, ")");
        return;
    default: break;
    }
    const char *simple = NULL;
    switch (n->builtin) {
    case TP_B_ABS_I32: simple = "abs"; break;
    case TP_B_MIN_I32: case TP_B_MIN_U32: simple = "min"; break;
    case TP_B_MAX_I32: case TP_B_MAX_U32: simple = "max"; break;
    case TP_B_POPCOUNT_U32: simple = "i32(countOneBits"; break;
    case TP_B_CLZ_U32: simple = "i32(countLeadingZeros"; break;
    case TP_B_CTZ_U32: simple = "i32(countTrailingZeros"; break;
    case TP_B_FFS_U32: simple = "rk_ffs"; e->late_helpers |= LATE_FFS; break;
    case TP_B_FLOAT_AS_UINT: simple = "bitcast<u32>"; break;
    case TP_B_UINT_AS_FLOAT: case TP_B_INT_AS_FLOAT: simple = "bitcast<f32>"; break;
    case TP_B_FLOAT_AS_INT: simple = "bitcast<i32>"; break;
    case TP_B_RSQRTF: simple = "inverseSqrt"; break;
    case TP_B_LDEXPF: simple = "ldexp"; break;
    case TP_B_LRINTF: simple = "rk_f32_to_i64(round"; break; /* round() is half to even, as lrintf in the default mode */
    default: break;
    }
    if (simple) {
        PRINTF(e, "%s(", simple);
        builtin_args(e, n);
        put(e, strchr(simple, '(') ? "))" : ")");
        return;
    }
    if (b->flags & TP_BF_WARP) {
        refuse(e, n->tok, rk__tp_format(e->ctx, "%s: warp operations need WGSL subgroups, which this target does not "
                                               "enable", b->name));
        put(e, "0");
        return;
    }
    const char *m = math_name(n->builtin);
    if (!m) {
        refuse(e, n->tok, rk__tp_format(e->ctx, "%s has no WGSL equivalent", b->name));
        put(e, "0.0f");
        return;
    }
    PRINTF(e, "%s(", m);
    builtin_args(e, n);
    put(e, ")");
}

void rk__wgsl_init_list(emitter *e, tp_node *n, const tp_type *ty) {
    ty = unq((tp_type *)ty);
    PRINTF(e, "%s(", rk__wgsl_type_name(e, ty));
    if (ty->kind == TY_ARRAY) {
        tp_node *a = n->args;
        for (int i = 0; i < ty->array_len; i++) {
            if (i) put(e, ", ");
            if (!a)
                rk__wgsl_zero_value(e, ty->base);
            else if (a->kind == ND_INIT_LIST)
                rk__wgsl_init_list(e, a, ty->base);
            else
                rk__wgsl_as_type(e, a, ty->base);
            if (a) a = a->next;
        }
    } else if (ty->kind == TY_STRUCT) {
        tp_node *a = n->args;
        for (tp_member *m = ty->members; m; m = m->next) {
            if (m != ty->members) put(e, ", ");
            if (!a)
                rk__wgsl_zero_value(e, m->ty);
            else if (a->kind == ND_INIT_LIST)
                rk__wgsl_init_list(e, a, m->ty);
            else
                rk__wgsl_as_type(e, a, m->ty);
            if (a) a = a->next;
        }
    } else if (n->args) {
        rk__wgsl_as_type(e, n->args, ty);
    }
    put(e, ")");
}

/* A value converted from its C type to `to`, explicitly. */
static void convert(emitter *e, tp_node *inner, const tp_type *to) {
    const tp_type *from = unq(inner->ty);
    to = unq((tp_type *)to);
    if (to->kind == TY_VOID) {
        rk__wgsl_expr(e, inner);
        return;
    }
    if (to->kind == TY_BOOL) {
        rk__wgsl_cond(e, inner);
        return;
    }
    if ((from->kind == TY_PTR || from->kind == TY_ARRAY) && to->kind != TY_PTR) {
        refuse(e, inner->tok, "converting a pointer to an integer is not available (WGSL pointers have no address)");
        put(e, "0");
        return;
    }
    if (to->kind == TY_PTR && rk__tp_is_integer(from) && !(inner->kind == ND_NUM && inner->ival == 0)) {
        refuse(e, inner->tok, "converting an integer to a pointer is not available (WGSL pointers have no address)");
        put(e, "0");
        return;
    }
    if (to->kind == TY_PTR || from->kind == TY_PTR || from->kind == TY_ARRAY) {
        rk__wgsl_expr(e, inner); /* pointer-to-pointer: handled by whoever uses the pointer */
        return;
    }
    const char *ft = rk__wgsl_scalar(from), *tt = rk__wgsl_scalar(to);
    if (!tt || !ft) {
        rk__wgsl_expr(e, inner);
        return;
    }
    if (from->kind == TY_BOOL || rk__wgsl_is_comparison(inner->kind)) {
        if (to->kind == TY_LONG)
            put(e, "select(vec2<u32>(0u, 0u), vec2<u32>(1u, 0u), ");
        else
            PRINTF(e, "select(%s(0), %s(1), ", tt, tt);
        rk__wgsl_cond(e, inner);
        put(e, ")");
        return;
    }
    if (strcmp(ft, tt) == 0) {
        rk__wgsl_expr(e, inner);
        return;
    }
    /* Constants convert at emit time: no conversion call, exact value. */
    if (inner->kind == ND_SIZEOF && to->kind != TY_FLOAT && to->kind != TY_DOUBLE) {
        rk__wgsl_integer(e, inner->ival, to);
        return;
    }
    if (inner->kind == ND_NUM && to->kind == TY_LONG) {
        rk__wgsl_integer(e, inner->ty->is_unsigned && inner->ty->size == 4 ? (int64_t)(uint32_t)inner->ival : inner->ival, to);
        return;
    }
    /* 64-bit integers are vec2<u32> (low, high): conversions through helpers. */
    if (from->kind == TY_LONG) {
        if (to->kind == TY_FLOAT || to->kind == TY_DOUBLE) {
            PRINTF(e, "rk_%s64_to_f32(", from->is_unsigned ? "u" : "i");
            rk__wgsl_expr(e, inner);
            put(e, ")");
        } else {
            put(e, to->is_unsigned ? "(" : "i32((");
            rk__wgsl_expr(e, inner);
            put(e, to->is_unsigned ? ").x" : ").x)");
        }
        return;
    }
    if (to->kind == TY_LONG) {
        if (from->kind == TY_FLOAT || from->kind == TY_DOUBLE)
            PRINTF(e, "rk_f32_to_%s64(", to->is_unsigned ? "u" : "i");
        else if (from->is_unsigned)
            put(e, "vec2<u32>(");
        else
            put(e, "rk_i64_from_i32(");
        rk__wgsl_expr(e, inner);
        put(e, from->is_unsigned && from->kind != TY_FLOAT && from->kind != TY_DOUBLE ? ", 0u)" : ")");
        return;
    }
    if (inner->kind == ND_NUM) {
        if (to->kind == TY_FLOAT || to->kind == TY_DOUBLE)
            rk__wgsl_float_literal(e, to->kind == TY_FLOAT ? (double)(float)(inner->ty->is_unsigned ? (double)(uint64_t)inner->ival : (double)inner->ival) : (double)inner->ival);
        else
            rk__wgsl_integer(e, to->is_unsigned ? (int64_t)(uint32_t)inner->ival : (int64_t)(int32_t)inner->ival, to);
        return;
    }
    PRINTF(e, "%s(", tt);
    rk__wgsl_expr(e, inner);
    put(e, ")");
}

void rk__wgsl_as_type(emitter *e, tp_node *n, const tp_type *to) { convert(e, n, to); }

/* (a op b) with both operands as they are: where WGSL and C agree on the types. */
static void infix(emitter *e, tp_node *n) {
    put(e, "(");
    rk__wgsl_expr(e, n->lhs);
    PRINTF(e, " %s ", rk__tp_binary_op(n->kind, NULL));
    rk__wgsl_expr(e, n->rhs);
    put(e, ")");
}

static bool same_value(const tp_node *a, const tp_node *b, int depth) {
    if (!a || !b || depth > 64 || a->kind != b->kind || rk__wgsl_has_effects(a)) return false;
    switch (a->kind) {
    case ND_VAR: return a->obj == b->obj;
    case ND_NUM: return a->ival == b->ival;
    case ND_MEMBER: case ND_ARROW: return a->member == b->member && same_value(a->lhs, b->lhs, depth + 1);
    case ND_CONV: case ND_DEREF: return same_value(a->lhs, b->lhs, depth + 1);
    case ND_INDEX: case ND_ADD: case ND_SUB: case ND_MUL:
        return same_value(a->lhs, b->lhs, depth + 1) && same_value(a->rhs, b->rhs, depth + 1);
    default: return false;
    }
}

bool rk__wgsl_is_self_comparison(const tp_node *n) {
    if (n->kind != ND_NE && n->kind != ND_EQ) return false;
    const tp_type *t = unq(n->lhs->ty);
    return (t->kind == TY_FLOAT || t->kind == TY_DOUBLE) && same_value(n->lhs, n->rhs, 0);
}

/* A condition: WGSL wants bool where C takes any scalar. */
void rk__wgsl_cond(emitter *e, tp_node *n) {
    const char *lowered = rk__wgsl_lowered_name(e, n);
    if (lowered && rk__wgsl_is_comparison(n->kind)) {
        put(e, lowered); /* && or ||: a bool */
        return;
    }
    if (!lowered && rk__wgsl_is_self_comparison(n)) { /* x != x, x == x: C's NaN tests */
        e->late_helpers |= LATE_ISNAN;
        put(e, n->kind == ND_NE ? "rk_isnan(" : "!rk_isnan(");
        rk__wgsl_as_type(e, n->lhs, &rk__tp_ty_float);
        put(e, ")");
        return;
    }
    switch (lowered ? ND_NULL_STMT : n->kind) {
    case ND_EQ: case ND_NE: case ND_LT: case ND_LE: case ND_GT: case ND_GE:
        if (unq(n->lhs->ty)->kind == TY_LONG) {
            const char *lt = unq(n->lhs->ty)->is_unsigned ? "rk_ltu64" : "rk_lti64";
            tp_node *a = n->lhs, *b = n->rhs;
            switch (n->kind) {
            case ND_EQ: put(e, "all("); rk__wgsl_expr(e, a); put(e, " == "); rk__wgsl_expr(e, b); put(e, ")"); return;
            case ND_NE: put(e, "any("); rk__wgsl_expr(e, a); put(e, " != "); rk__wgsl_expr(e, b); put(e, ")"); return;
            case ND_LT: PRINTF(e, "%s(", lt); rk__wgsl_expr(e, a); put(e, ", "); rk__wgsl_expr(e, b); put(e, ")"); return;
            case ND_GT: PRINTF(e, "%s(", lt); rk__wgsl_expr(e, b); put(e, ", "); rk__wgsl_expr(e, a); put(e, ")"); return;
            case ND_LE: PRINTF(e, "!%s(", lt); rk__wgsl_expr(e, b); put(e, ", "); rk__wgsl_expr(e, a); put(e, ")"); return;
            default: PRINTF(e, "!%s(", lt); rk__wgsl_expr(e, a); put(e, ", "); rk__wgsl_expr(e, b); put(e, ")"); return;
            }
        }
        infix(e, n);
        return;
    case ND_LOGAND: case ND_LOGOR:
        put(e, "(");
        rk__wgsl_cond(e, n->lhs);
        PRINTF(e, " %s ", rk__tp_binary_op(n->kind, NULL));
        rk__wgsl_cond(e, n->rhs);
        put(e, ")");
        return;
    case ND_NOT:
        put(e, "!");
        rk__wgsl_cond(e, n->lhs);
        return;
    case ND_BUILTIN:
        if (n->builtin == TP_B_ISNAN || n->builtin == TP_B_ISINF || n->builtin == TP_B_ISFINITE) {
            /* WGSL implementations may assume there are no NaNs or
             * infinities: the bits tell. */
            bool nan = n->builtin == TP_B_ISNAN, inf = n->builtin == TP_B_ISINF;
            e->late_helpers |= nan ? LATE_ISNAN : inf ? LATE_ISINF : LATE_ISFINITE;
            PRINTF(e, "%s(", nan ? "rk_isnan" : inf ? "rk_isinf" : "rk_isfinite");
            rk__wgsl_as_type(e, n->args, &rk__tp_ty_float);
            put(e, ")");
            return;
        }
        break;
    case ND_CONV: case ND_CAST:
        if (unq(n->ty)->kind == TY_BOOL || rk__wgsl_is_comparison(n->lhs->kind)) {
            rk__wgsl_cond(e, n->lhs);
            return;
        }
        break;
    default:
        break;
    }
    const tp_type *t = unq(n->ty);
    if (t->kind == TY_BOOL) {
        rk__wgsl_expr(e, n);
        return;
    }
    if (t->kind == TY_PTR || t->kind == TY_ARRAY) {
        refuse(e, n->tok, "testing a pointer against null is not available (WGSL pointers are never null)");
        put(e, "true");
        return;
    }
    if (t->kind == TY_LONG) {
        put(e, "any(");
        rk__wgsl_expr(e, n);
        put(e, " != vec2<u32>(0u, 0u))");
        return;
    }
    put(e, "(");
    rk__wgsl_expr(e, n);
    if (t->kind == TY_FLOAT || t->kind == TY_DOUBLE)
        put(e, " != 0.0f)");
    else
        PRINTF(e, " != %s)", t->is_unsigned ? "0u" : "0i");
}

void rk__wgsl_expr(emitter *e, tp_node *n) {
    const char *lowered = rk__wgsl_lowered_name(e, n);
    if (lowered && !rk__wgsl_is_comparison(n->kind)) {
        put(e, lowered);
        return;
    }
    double folded;
    if (rk__tp_is_flonum(unq(n->ty)) && n->kind != ND_FNUM && rk__tp_fold_float(n, &folded) && !isfinite(folded)) {
        rk__wgsl_float_literal(e, folded); /* 1.0f / 0.0f: WGSL refuses an infinite constant expression */
        return;
    }
    int64_t ival;
    if (n->kind != ND_NUM && rk__tp_is_integer(unq(n->ty)) && unq(n->ty)->kind != TY_LONG &&
        rk__tp_eval_integer(n, &ival)) {
        /* C's value (unsigned arithmetic wraps): WGSL refuses a constant
         * expression that overflows, e.g. 969u << 31u. */
        rk__wgsl_integer(e, ival, n->ty);
        return;
    }
    if (rk__wgsl_is_comparison(n->kind)) { /* C gives int 0 or 1 */
        put(e, "select(0i, 1i, ");
        rk__wgsl_cond(e, n);
        put(e, ")");
        return;
    }
    switch (n->kind) {
    case ND_NUM:
        rk__wgsl_integer(e, n->ival, n->ty);
        return;
    case ND_SIZEOF:
        rk__wgsl_integer(e, n->ival, n->ty);
        return;
    case ND_FNUM:
        rk__wgsl_float_literal(e, n->fval);
        return;
    case ND_VAR: {
        if (n->obj->is_enum_const) {
            rk__wgsl_integer(e, n->obj->enum_val, &rk__tp_ty_int);
            return;
        }
        name_entry *ne = rk__wgsl_find_name(e, n->obj);
        if (rk__wgsl_is_void_ptr(n->obj->ty) && n->obj->is_param) {
            refuse(e, n->tok, "a void pointer parameter has no WGSL value (it is dropped; only (void)p may name it)");
            put(e, "0");
            return;
        }
        if (ne && ne->kind == NK_PTR_ELEM && n->ty->kind != TY_PTR) {
            PRINTF(e, "(*%s)", ne->name);
            return;
        }
        if (ne && ne->atomic && n->ty->kind != TY_ARRAY && n->ty->kind != TY_PTR) {
            PRINTF(e, "atomicLoad(&%s)", ne->name);
            return;
        }
        put(e, rk__wgsl_obj_name(e, n->obj));
        return;
    }
    case ND_BITNOT:
        put(e, "(~");
        rk__wgsl_expr(e, n->lhs);
        put(e, ")");
        return;
    case ND_NEG:
        /* WGSL has no unary minus on u32: C's -u wraps, as 0u - u does. */
        put(e, unq(n->ty)->kind == TY_LONG ? "rk_neg64(" : unq(n->ty)->is_unsigned ? "(0u - " : "(-");
        rk__wgsl_expr(e, n->lhs);
        put(e, ")");
        return;
    case ND_PLUS:
        rk__wgsl_expr(e, n->lhs);
        return;
    case ND_ADDR:
        put(e, "&");
        rk__wgsl_lvalue(e, n->lhs);
        return;
    case ND_INDEX: case ND_DEREF: case ND_MEMBER: case ND_ARROW:
        if (rk__wgsl_is_atomic_lvalue(e, n) && rk__wgsl_scalar(unq(n->ty))) {
            put(e, "atomicLoad(&");
            rk__wgsl_lvalue(e, n);
            put(e, ")");
        } else {
            rk__wgsl_lvalue(e, n);
        }
        return;
    case ND_SHL: case ND_SHR:
        if (unq(n->ty)->kind == TY_LONG) {
            PRINTF(e, "%s(", n->kind == ND_SHL ? "rk_shl64" : unq(n->ty)->is_unsigned ? "rk_shr64" : "rk_sar64");
            rk__wgsl_expr(e, n->lhs);
            put(e, ", ");
            rk__wgsl_as_type(e, n->rhs, &rk__tp_ty_uint);
            put(e, ")");
            return;
        }
        put(e, "(");
        rk__wgsl_expr(e, n->lhs);
        PRINTF(e, " %s ", rk__tp_binary_op(n->kind, NULL));
        rk__wgsl_as_type(e, n->rhs, &rk__tp_ty_uint);
        put(e, ")");
        return;
    case ND_ADD: case ND_SUB: case ND_MUL: case ND_DIV: case ND_MOD: case ND_BITAND: case ND_BITOR: case ND_BITXOR:
        if (n->ty->kind == TY_PTR) {
            refuse(e, n->tok, "a pointer value (pointer arithmetic outside an index or '*') is not available");
            put(e, "0");
            return;
        }
        if (unq(n->ty)->kind == TY_LONG && n->kind != ND_BITAND && n->kind != ND_BITOR && n->kind != ND_BITXOR) {
            bool u = unq(n->ty)->is_unsigned;
            const char *f = n->kind == ND_ADD   ? "rk_add64"
                            : n->kind == ND_SUB ? "rk_sub64"
                            : n->kind == ND_MUL ? "rk_mul64"
                            : n->kind == ND_DIV ? (u ? "rk_udiv64" : "rk_idiv64")
                                                : (u ? "rk_umod64" : "rk_imod64");
            PRINTF(e, "%s(", f);
            rk__wgsl_expr(e, n->lhs);
            put(e, ", ");
            rk__wgsl_expr(e, n->rhs);
            put(e, ")");
            return;
        }
        infix(e, n);
        return;
    case ND_COND:
        PRINTF(e, "select(");
        rk__wgsl_as_type(e, n->els, n->ty);
        put(e, ", ");
        rk__wgsl_as_type(e, n->then, n->ty);
        put(e, ", ");
        rk__wgsl_cond(e, n->cond);
        put(e, ")");
        return;
    case ND_CALL:
        PRINTF(e, "%s(", rk__wgsl_obj_name(e, n->obj));
        rk__wgsl_args_list(e, n->obj->definition ? n->obj->definition : n->obj, n->args);
        put(e, ")");
        return;
    case ND_BUILTIN:
        builtin(e, n);
        return;
    case ND_CAST:
        rk__wgsl_check_type(e, n->cast_ty, n->tok, "cast");
        convert(e, n->lhs, n->cast_ty);
        return;
    case ND_CONV:
        convert(e, n->lhs, n->ty);
        return;
    case ND_INIT_LIST:
        rk__wgsl_init_list(e, n, n->ty);
        return;
    case ND_ASSIGN: case ND_ASSIGN_OP: case ND_PRE_INC: case ND_PRE_DEC: case ND_POST_INC: case ND_POST_DEC:
        refuse(e, n->tok, "an assignment or ++/-- inside an expression is not available; write it as its own statement");
        put(e, "0");
        return;
    case ND_COMMA:
        refuse(e, n->tok, "the comma operator inside an expression is not available");
        put(e, "0");
        return;
    case ND_FUNC_NAME:
        refuse(e, n->tok, "function values are not available");
        put(e, "0");
        return;
    default:
        put(e, "0");
        return;
    }
}
