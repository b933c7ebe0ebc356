/* The MSL emitter's expressions: C precedence kept, DSL calls as Metal
 * standard-library calls (qualified with metal:: so that a host C++ build
 * against the shim cannot pick a <math.h> overload instead), atomics through
 * casts to Metal's atomic types in the pointer's own address space, stencil
 * accessors as reads of the threadgroup tile. Metal has no double: a double
 * constant that C converts to float prints as the float it becomes, and any
 * other double is refused. */
#include <math.h>
#include <stdio.h>

#include "emit_msl.h"

static int binary_prec(tp_node_kind k) {
    switch (k) {
    case ND_MUL: case ND_DIV: case ND_MOD: return MP_MUL;
    case ND_ADD: case ND_SUB: return MP_ADD;
    case ND_SHL: case ND_SHR: return MP_SHIFT;
    case ND_LT: case ND_LE: case ND_GT: case ND_GE: return MP_REL;
    case ND_EQ: case ND_NE: return MP_EQ;
    case ND_BITAND: return MP_BITAND;
    case ND_BITXOR: return MP_BITXOR;
    case ND_BITOR: return MP_BITOR;
    case ND_LOGAND: return MP_LOGAND;
    case ND_LOGOR: return MP_LOGOR;
    default: return 0;
    }
}

/* Written out: inside braces (C++ forbids narrowing there), from void *, and
 * between pointers (the space analysis decides the target's space). */
static bool explicit_conv(msl_emitter *e, const tp_node *n) {
    if (e->in_init) return true;
    const tp_type *from = n->lhs->ty;
    return n->ty->kind == TY_PTR && from->kind == TY_PTR && from->base->kind == TY_VOID && n->ty->base->kind != TY_VOID;
}

static int prec(msl_emitter *e, const tp_node *n) {
    switch (n->kind) {
    case ND_COMMA: return MP_COMMA;
    case ND_ASSIGN: case ND_ASSIGN_OP: return MP_ASSIGN;
    case ND_COND: return MP_COND;
    case ND_NOT: case ND_BITNOT: case ND_NEG: case ND_PLUS: case ND_ADDR: case ND_DEREF: case ND_PRE_INC:
    case ND_PRE_DEC: case ND_CAST:
        return MP_UNARY;
    case ND_CONV: return explicit_conv(e, n) ? MP_UNARY : prec(e, n->lhs);
    case ND_NUM: return n->ival < 0 ? MP_UNARY : MP_POSTFIX;
    case ND_BUILTIN: return MP_UNARY; /* some print as casts: parenthesize them as operands */
    default: {
        int p = binary_prec(n->kind);
        return p ? p : MP_POSTFIX;
    }
    }
}

void rk__msl_integer(msl_emitter *e, int64_t v, const tp_type *ty) {
    ty = ty->origin ? ty->origin : ty;
    bool is64 = ty->size == 8;
    bool u = ty->is_unsigned && ty->kind != TY_BOOL;
    /* Metal's long is 64 bits: the l suffix, never ll (Metal has no long long). */
    if (!u && v < 0) {
        if ((is64 && v == INT64_MIN) || (!is64 && v == INT32_MIN)) {
            msl_put(e, is64 ? "(-9223372036854775807l - 1)" : "(-2147483647 - 1)");
            return;
        }
        MSL_PRINTF(e, "-%lld%s", (long long)-v, is64 ? "l" : "");
        return;
    }
    if (u)
        MSL_PRINTF(e, "%llu%s", is64 ? (unsigned long long)v : (unsigned long long)(uint32_t)v, is64 ? "ul" : "u");
    else
        MSL_PRINTF(e, "%lld%s", (long long)v, is64 ? "l" : "");
}

/* A finite float constant, spelled so that it reads back as the same float. */
static void float_literal(msl_emitter *e, double v) {
    char text[64];
    snprintf(text, sizeof text, "%.9g", v);
    bool has_point = strpbrk(text, ".e") != NULL;
    MSL_PRINTF(e, "%s%sf", text, has_point ? "" : ".0");
}

static void no_double(msl_emitter *e, const tp_node *n) {
    if (e->double_reported) return;
    e->double_reported = true;
    rk__tp_error(e->ctx, n->tok, "Metal has no double: this expression is computed in double in C (write float "
                                 "constants with an f suffix, and float functions such as sqrtf) (MSL target)");
}

/* A constant floating expression of type float: its value, or infinity/NaN by its bits. */
static bool float_constant(msl_emitter *e, const tp_node *n) {
    double v;
    if (!n->ty) return false;
    const tp_type *t = rk__tp_unqual(n->ty);
    bool foldable = n->kind == ND_FNUM || n->kind == ND_CONV || n->kind == ND_CAST || n->kind == ND_NEG ||
                    n->kind == ND_PLUS || n->kind == ND_BUILTIN;
    if (t->kind != TY_FLOAT || !foldable || !rk__tp_fold_float(n, &v)) return false;
    if (isnan(v))
        msl_put(e, "metal::as_type<float>(0x7fffffffu)");
    else if (isinf(v))
        msl_put(e, v > 0 ? "metal::as_type<float>(0x7f800000u)" : "metal::as_type<float>(0xff800000u)");
    else if (n->kind == ND_FNUM && n->tok->len > 0 && (n->tok->loc[n->tok->len - 1] == 'f' || n->tok->loc[n->tok->len - 1] == 'F'))
        rk__tp_buf_putn(e->out, n->tok->loc, (size_t)n->tok->len);
    else
        float_literal(e, v);
    return true;
}

static void args(msl_emitter *e, tp_node *a) {
    for (bool first = true; a; a = a->next, first = false) {
        if (!first) msl_put(e, ", ");
        rk__msl_expr(e, a, MP_ASSIGN);
    }
}

/* Arguments of an overloaded Metal function: what C converts implicitly is
 * cast, so overload resolution picks the function C would call. A float
 * that C widens to double for isnan() and friends stays float. */
static void builtin_args(msl_emitter *e, tp_node *a) {
    for (bool first = true; a; a = a->next, first = false) {
        if (!first) msl_put(e, ", ");
        if (a->kind == ND_CONV && rk__tp_is_arith(a->ty)) {
            const tp_type *to = rk__tp_unqual(a->ty), *from = rk__tp_unqual(a->lhs->ty);
            if (to->kind == TY_DOUBLE && from->kind == TY_FLOAT) {
                rk__msl_expr(e, a->lhs, MP_ASSIGN);
                continue;
            }
            msl_put(e, "(");
            rk__msl_declaration(e, a->ty, NULL, MS_NONE);
            msl_put(e, ")");
            rk__msl_expr(e, a->lhs, MP_UNARY);
        } else {
            rk__msl_expr(e, a, MP_ASSIGN);
        }
    }
}

static void tile_coord(msl_emitter *e, const char *base, int k) {
    msl_put(e, base);
    if (k > 0) MSL_PRINTF(e, " + %d", k);
    if (k < 0) MSL_PRINTF(e, " - %d", -k);
}

static void stencil_builtin(msl_emitter *e, tp_node *n) {
    tp_stencil *st = e->st;
    switch (n->builtin) {
    case TP_B_POS_IDX: msl_put(e, "rk__idx"); return;
    case TP_B_POS_X: msl_put(e, "rk__x"); return;
    case TP_B_POS_Y: msl_put(e, "rk__y"); return;
    case TP_B_POS_Z: msl_put(e, "rk__z"); return;
    case TP_B_POS_NX: msl_put(e, "rk__nx"); return;
    case TP_B_POS_NY: msl_put(e, "rk__ny"); return;
    case TP_B_POS_NZ: msl_put(e, "rk__nz"); return;
    default: break;
    }
    const char *tile = "rk__missing_tile";
    for (tp_stencil_buffer *b = st ? st->tiled : NULL; b; b = b->next)
        if (b->param == n->buffer) tile = b->tile_name;
    int h = st ? st->halo : 0;
    msl_put(e, tile);
    if (st && st->dims == 3) {
        msl_put(e, "[");
        tile_coord(e, "rk__tz", h + n->off[2]);
        msl_put(e, "]");
    }
    msl_put(e, "[");
    tile_coord(e, "rk__ty", h + n->off[1]);
    msl_put(e, "][");
    tile_coord(e, "rk__tx", h + n->off[0]);
    msl_put(e, "]");
}

/* Metal's atomic type for the word p points at, in p's space. */
static bool atomic_cast(msl_emitter *e, tp_node *n, tp_node *p) {
    msl_space s = rk__msl_expr_space(e, p);
    if (s != MS_DEVICE && s != MS_THREADGROUP) {
        rk__tp_error(e->ctx, n->tok, "%s: Metal's atomics work on device or threadgroup memory, and this pointer "
                                     "points into %s memory (MSL target)",
                     rk__tp_builtins[n->builtin].name, rk__msl_space_name(s == MS_NONE ? MS_THREAD : s));
        return false;
    }
    const tp_type *w = rk__tp_unqual(p->ty->base);
    const char *type = w->kind == TY_FLOAT ? "atomic_float" : w->is_unsigned ? "atomic_uint" : "atomic_int";
    MSL_PRINTF(e, "(%s metal::%s *)(", rk__msl_space_name(s), type);
    rk__msl_expr(e, p, MP_COMMA);
    msl_put(e, ")");
    return true;
}

static void atomic_rmw(msl_emitter *e, tp_node *n, const char *op) {
    MSL_PRINTF(e, "metal::atomic_%s_explicit(", op);
    if (!atomic_cast(e, n, n->args)) {
        msl_put(e, "0, 0, 0)");
        return;
    }
    if (n->args->next) {
        msl_put(e, ", ");
        builtin_args(e, n->args->next);
    }
    msl_put(e, ", metal::memory_order_relaxed)");
}

static void refuse(msl_emitter *e, tp_node *n, const char *why) {
    rk__tp_error(e->ctx, n->tok, "%s: %s (MSL target)", rk__tp_builtins[n->builtin].name, why);
    msl_put(e, "0");
}

/* <math.h> functions Metal's standard library lacks. */
static bool missing_in_metal(tp_builtin_id id) {
    switch (id) {
    case TP_B_CBRTF: case TP_B_EXPM1F: case TP_B_LOG1PF: case TP_B_ERFF: case TP_B_ERFCF: case TP_B_LGAMMAF:
    case TP_B_TGAMMAF: case TP_B_HYPOTF: case TP_B_REMAINDERF: case TP_B_LRINTF:
        return true;
    default: return false;
    }
}

static void ids_linear(msl_emitter *e) {
    msl_put(e, "(rk__id.tid.x + rk__id.bdim.x * (rk__id.tid.y + rk__id.bdim.y * rk__id.tid.z))");
}

static void builtin(msl_emitter *e, tp_node *n) {
    const tp_builtin *b = &rk__tp_builtins[n->builtin];
    if (b->flags & TP_BF_STENCIL) {
        stencil_builtin(e, n);
        return;
    }
    static const char *const axis[] = {"x", "y", "z"};
    const char *simple = NULL;
    switch (n->builtin) {
    case TP_B_THREAD_IDX_X: case TP_B_THREAD_IDX_Y: case TP_B_THREAD_IDX_Z:
        MSL_PRINTF(e, "(int)rk__id.tid.%s", axis[n->builtin - TP_B_THREAD_IDX_X]);
        return;
    case TP_B_BLOCK_IDX_X: case TP_B_BLOCK_IDX_Y: case TP_B_BLOCK_IDX_Z:
        MSL_PRINTF(e, "(int)rk__id.bid.%s", axis[n->builtin - TP_B_BLOCK_IDX_X]);
        return;
    case TP_B_BLOCK_DIM_X: case TP_B_BLOCK_DIM_Y: case TP_B_BLOCK_DIM_Z:
        MSL_PRINTF(e, "(int)rk__id.bdim.%s", axis[n->builtin - TP_B_BLOCK_DIM_X]);
        return;
    case TP_B_GRID_DIM_X: case TP_B_GRID_DIM_Y: case TP_B_GRID_DIM_Z:
        MSL_PRINTF(e, "(int)rk__id.gdim.%s", axis[n->builtin - TP_B_GRID_DIM_X]);
        return;
    case TP_B_WARP_SIZE: msl_put(e, "32"); return;
    case TP_B_LANE_ID:
        /* A SIMD-group is 32 consecutive threads of the linear index on Apple GPUs. */
        msl_put(e, "(int)(");
        ids_linear(e);
        msl_put(e, " & 31u)");
        return;
    case TP_B_SYNC_THREADS:
        msl_put(e, "metal::threadgroup_barrier(metal::mem_flags::mem_device | metal::mem_flags::mem_threadgroup)");
        return;
    case TP_B_SYNC_WARP: msl_put(e, "metal::simdgroup_barrier(metal::mem_flags::mem_threadgroup)"); return;
    case TP_B_THREAD_FENCE: case TP_B_THREAD_FENCE_BLOCK:
        MSL_PRINTF(e, "metal::atomic_thread_fence(metal::mem_flags::mem_device | metal::mem_flags::mem_threadgroup, "
                      "metal::memory_order_seq_cst, metal::thread_scope_%s)",
                   n->builtin == TP_B_THREAD_FENCE ? "device" : "threadgroup");
        return;
    case TP_B_GRID_SYNC: refuse(e, n, "Metal has no barrier across threadgroups"); return;
    case TP_B_LOAD_ACQUIRE_U32: case TP_B_LOAD_ACQUIRE_U64: case TP_B_STORE_RELEASE_U32:
    case TP_B_STORE_RELEASE_U64: case TP_B_LOAD_RELAXED_U64: case TP_B_STORE_RELAXED_U64:
    case TP_B_LOAD_ACQUIRE_GPU_U64: case TP_B_STORE_RELEASE_GPU_U64:
        refuse(e, n, "words shared with a running host need persistent kernels; Metal relaunches per batch instead");
        return;
    case TP_B_SLEEP_NS: refuse(e, n, "Metal kernels cannot sleep"); return;
    case TP_B_DYNAMIC_SHARED: refuse(e, n, "dynamic threadgroup memory is not supported by the MSL emitter yet"); return;
    case TP_B_RK_EMIT:
        rk__tp_error(e->ctx, n->tok, "rk_emit: kernel-to-kernel channels run on the CPU backend only so far "
                                     "(docs/channels.md)");
        msl_put(e, "0");
        return;
    case TP_B_ATOMIC_ADD_I32: case TP_B_ATOMIC_ADD_U32: case TP_B_ATOMIC_ADD_F32: atomic_rmw(e, n, "fetch_add"); return;
    case TP_B_ATOMIC_SUB_I32: atomic_rmw(e, n, "fetch_sub"); return;
    case TP_B_ATOMIC_MIN_I32: case TP_B_ATOMIC_MIN_U32: atomic_rmw(e, n, "fetch_min"); return;
    case TP_B_ATOMIC_MAX_I32: case TP_B_ATOMIC_MAX_U32: atomic_rmw(e, n, "fetch_max"); return;
    case TP_B_ATOMIC_AND_U32: atomic_rmw(e, n, "fetch_and"); return;
    case TP_B_ATOMIC_OR_U32: atomic_rmw(e, n, "fetch_or"); return;
    case TP_B_ATOMIC_XOR_U32: atomic_rmw(e, n, "fetch_xor"); return;
    case TP_B_ATOMIC_EXCH_I32: case TP_B_ATOMIC_EXCH_U32: atomic_rmw(e, n, "exchange"); return;
    case TP_B_ATOMIC_LOAD_I32: case TP_B_ATOMIC_LOAD_U32: atomic_rmw(e, n, "load"); return;
    case TP_B_ATOMIC_CAS_I32: case TP_B_ATOMIC_CAS_U32:
        msl_put(e, "rk__atomic_cas(");
        builtin_args(e, n->args);
        msl_put(e, ")");
        return;
    case TP_B_ATOMIC_ADD_U64:
        if (!e->only_handlers) {
            refuse(e, n, "Metal has no 64-bit atomic add (a program whose entry points are all handlers may use it: "
                         "the relaunch template runs a handler on one thread)");
            return;
        }
        msl_put(e, "rk__add_u64(");
        builtin_args(e, n->args);
        msl_put(e, ")");
        return;
    case TP_B_ABS_I32: simple = "metal::abs"; break;
    case TP_B_MIN_I32: case TP_B_MIN_U32: simple = "metal::min"; break;
    case TP_B_MAX_I32: case TP_B_MAX_U32: simple = "metal::max"; break;
    case TP_B_POPCOUNT_U32: simple = "(int)metal::popcount"; break;
    case TP_B_CLZ_U32: simple = "(int)metal::clz"; break;
    case TP_B_CTZ_U32: simple = "(int)metal::ctz"; break;
    case TP_B_FFS_U32: simple = "rk__ffs"; break;
    case TP_B_FLOAT_AS_UINT: simple = "metal::as_type<uint>"; break;
    case TP_B_UINT_AS_FLOAT: case TP_B_INT_AS_FLOAT: simple = "metal::as_type<float>"; break;
    case TP_B_FLOAT_AS_INT: simple = "metal::as_type<int>"; break;
    case TP_B_ISNAN: case TP_B_ISINF: case TP_B_ISFINITE:
        MSL_PRINTF(e, "(metal::%s(", b->name);
        builtin_args(e, n->args);
        msl_put(e, ") ? 1 : 0)");
        return;
    case TP_B_SHFL_F32: case TP_B_SHFL_I32: case TP_B_SHFL_DOWN_F32: case TP_B_SHFL_DOWN_I32: case TP_B_SHFL_XOR_F32:
    case TP_B_SHFL_XOR_I32: {
        const char *op = n->builtin == TP_B_SHFL_F32 || n->builtin == TP_B_SHFL_I32           ? "simd_shuffle"
                         : n->builtin == TP_B_SHFL_DOWN_F32 || n->builtin == TP_B_SHFL_DOWN_I32 ? "simd_shuffle_down"
                                                                                               : "simd_shuffle_xor";
        MSL_PRINTF(e, "metal::%s(", op);
        builtin_args(e, n->args);
        msl_put(e, ")");
        return;
    }
    case TP_B_WARP_ANY: case TP_B_WARP_ALL:
        MSL_PRINTF(e, "(metal::%s(", n->builtin == TP_B_WARP_ANY ? "simd_any" : "simd_all");
        rk__msl_expr(e, n->args, MP_EQ);
        msl_put(e, " != 0) ? 1 : 0)");
        return;
    case TP_B_WARP_BALLOT:
        msl_put(e, "(uint)(ulong)metal::simd_ballot(");
        rk__msl_expr(e, n->args, MP_EQ);
        msl_put(e, " != 0)");
        return;
    case TP_B_INFF: msl_put(e, "metal::as_type<float>(0x7f800000u)"); return;
    case TP_B_NANF: msl_put(e, "metal::as_type<float>(0x7fffffffu)"); return;
    default:
        if (missing_in_metal(n->builtin)) {
            refuse(e, n, "Metal's standard library has no such function");
            return;
        }
        if (b->ret == BT_DOUBLE || b->args[0] == BT_DOUBLE) {
            no_double(e, n);
            msl_put(e, "0");
            return;
        }
        /* sqrtf -> metal::sqrt: Metal's float overloads have the double names. */
        MSL_PRINTF(e, "metal::%.*s", (int)strlen(b->name) - 1, b->name);
        msl_put(e, "(");
        builtin_args(e, n->args);
        msl_put(e, ")");
        return;
    }
    msl_put(e, simple);
    msl_put(e, "(");
    builtin_args(e, n->args);
    msl_put(e, ")");
}

void rk__msl_init_list(msl_emitter *e, tp_node *n) {
    bool outer = e->in_init;
    e->in_init = true;
    msl_put(e, "{");
    for (tp_node *a = n->args; a; a = a->next) {
        if (a != n->args) msl_put(e, ", ");
        if (a->kind == ND_INIT_LIST)
            rk__msl_init_list(e, a);
        else
            rk__msl_expr(e, a, MP_ASSIGN);
    }
    msl_put(e, "}");
    e->in_init = outer;
}

/* Parentheses where C programmers misread the mix (and compilers warn). */
static int clarity(msl_emitter *e, const tp_node *parent, const tp_node *child, int min_prec) {
    int pp = binary_prec(parent->kind), cp = binary_prec(child->kind);
    if (!cp || child->kind == parent->kind) return min_prec;
    bool force = (pp == MP_LOGOR && cp == MP_LOGAND) ||
                 ((pp == MP_BITAND || pp == MP_BITXOR || pp == MP_BITOR || pp == MP_SHIFT) && cp != MP_LOGAND &&
                  cp != MP_LOGOR);
    return force ? prec(e, child) + 1 : min_prec;
}

static void unary(msl_emitter *e, const char *op, tp_node *operand) {
    msl_put(e, op);
    rk__msl_expr(e, operand, MP_UNARY);
}

/* A cast to ty, pointers keeping the space of the value they convert. */
static void cast_to(msl_emitter *e, const tp_type *ty, tp_node *value) {
    msl_put(e, "(");
    rk__msl_declaration(e, ty, NULL, ty->kind == TY_PTR ? rk__msl_expr_space(e, value) : MS_NONE);
    msl_put(e, ")");
}

void rk__msl_expr(msl_emitter *e, tp_node *n, int min_prec) {
    if (n->ty && rk__tp_unqual(n->ty)->kind == TY_DOUBLE && n->kind != ND_SIZEOF) {
        no_double(e, n);
        msl_put(e, "0");
        return;
    }
    if (n->kind != ND_NUM && float_constant(e, n)) return;
    int p = prec(e, n);
    bool paren = p < min_prec;
    if (paren) msl_put(e, "(");
    switch (n->kind) {
    case ND_NUM: rk__msl_integer(e, n->ival, n->ty); break;
    case ND_SIZEOF: rk__msl_integer(e, n->ival, &rk__tp_ty_ulong); break;
    case ND_FNUM: rk__tp_buf_putn(e->out, n->tok->loc, (size_t)n->tok->len); break;
    case ND_VAR: msl_put(e, rk__msl_obj_name(e, n->obj)); break;
    case ND_NOT: unary(e, "!", n->lhs); break;
    case ND_BITNOT: unary(e, "~", n->lhs); break;
    case ND_NEG:
        msl_put(e, "-");
        if (n->lhs->kind == ND_NEG || n->lhs->kind == ND_PRE_DEC || (n->lhs->kind == ND_NUM && n->lhs->ival < 0))
            msl_put(e, " ");
        rk__msl_expr(e, n->lhs, MP_UNARY);
        break;
    case ND_PLUS:
        msl_put(e, "+");
        if (n->lhs->kind == ND_PLUS || n->lhs->kind == ND_PRE_INC) msl_put(e, " ");
        rk__msl_expr(e, n->lhs, MP_UNARY);
        break;
    case ND_ADDR: unary(e, "&", n->lhs); break;
    case ND_DEREF: unary(e, "*", n->lhs); break;
    case ND_PRE_INC: unary(e, "++", n->lhs); break;
    case ND_PRE_DEC: unary(e, "--", n->lhs); break;
    case ND_POST_INC: rk__msl_expr(e, n->lhs, MP_POSTFIX); msl_put(e, "++"); break;
    case ND_POST_DEC: rk__msl_expr(e, n->lhs, MP_POSTFIX); msl_put(e, "--"); break;
    case ND_ASSIGN: case ND_ASSIGN_OP:
        rk__msl_expr(e, n->lhs, MP_UNARY);
        MSL_PRINTF(e, " %s= ", n->kind == ND_ASSIGN ? "" : rk__tp_binary_op(n->op, "?"));
        rk__msl_expr(e, n->rhs, MP_ASSIGN);
        break;
    case ND_COND:
        rk__msl_expr(e, n->cond, MP_LOGOR);
        msl_put(e, " ? ");
        rk__msl_expr(e, n->then, MP_COMMA);
        msl_put(e, " : ");
        rk__msl_expr(e, n->els, MP_COND);
        break;
    case ND_COMMA:
        rk__msl_expr(e, n->lhs, MP_COMMA);
        msl_put(e, ", ");
        rk__msl_expr(e, n->rhs, MP_ASSIGN);
        break;
    case ND_MEMBER: case ND_ARROW:
        rk__msl_expr(e, n->lhs, MP_POSTFIX);
        msl_put(e, n->kind == ND_MEMBER ? "." : "->");
        msl_put(e, rk__msl_member_name(e, n->member));
        break;
    case ND_INDEX:
        rk__msl_expr(e, n->lhs, MP_POSTFIX);
        msl_put(e, "[");
        rk__msl_expr(e, n->rhs, MP_COMMA);
        msl_put(e, "]");
        break;
    case ND_CALL: {
        tp_obj *callee = n->obj->definition ? n->obj->definition : n->obj;
        msl_put(e, rk__msl_obj_name(e, n->obj));
        msl_put(e, "(");
        args(e, n->args);
        if (rk__msl_needs_ids(e, callee)) msl_put(e, n->args ? ", rk__id" : "rk__id");
        msl_put(e, ")");
        break;
    }
    case ND_BUILTIN: builtin(e, n); break;
    case ND_CAST:
        cast_to(e, n->cast_ty, n->lhs);
        rk__msl_expr(e, n->lhs, MP_UNARY);
        break;
    case ND_CONV:
        if (explicit_conv(e, n)) {
            cast_to(e, n->ty, n->lhs);
            bool outer = e->in_init;
            e->in_init = false;
            rk__msl_expr(e, n->lhs, MP_UNARY);
            e->in_init = outer;
        } else {
            rk__msl_expr(e, n->lhs, paren ? MP_COMMA : min_prec);
        }
        break;
    case ND_INIT_LIST: rk__msl_init_list(e, n); break;
    default: {
        int bp = binary_prec(n->kind);
        if (!bp) {
            msl_put(e, "/* ? */0");
            break;
        }
        rk__msl_expr(e, n->lhs, clarity(e, n, n->lhs, bp));
        MSL_PRINTF(e, " %s ", rk__tp_binary_op(n->kind, "?"));
        rk__msl_expr(e, n->rhs, clarity(e, n, n->rhs, bp + 1));
        break;
    }
    }
    if (paren) msl_put(e, ")");
}
