/* The CUDA emitter's expressions: C precedence kept (parentheses only
 * where needed, or where they make the output clearer), DSL calls as CUDA
 * intrinsics or the rk__ helpers emit_cuda.c writes, stencil accessors as
 * reads of the shared tile. */
#include <math.h>

#include "emit_cuda.h"
static int binary_prec(tp_node_kind k) {
    switch (k) {
    case ND_MUL: case ND_DIV: case ND_MOD: return P_MUL;
    case ND_ADD: case ND_SUB: return P_ADD;
    case ND_SHL: case ND_SHR: return P_SHIFT;
    case ND_LT: case ND_LE: case ND_GT: case ND_GE: return P_REL;
    case ND_EQ: case ND_NE: return P_EQ;
    case ND_BITAND: return P_BITAND;
    case ND_BITXOR: return P_BITXOR;
    case ND_BITOR: return P_BITOR;
    case ND_LOGAND: return P_LOGAND;
    case ND_LOGOR: return P_LOGOR;
    default: return 0;
    }
}

/* Does this implicit conversion need to be written out in C++? Inside braces
 * (no narrowing there) and from void * (C++ needs a cast); elsewhere C++
 * converts exactly as C does. */
static bool explicit_conv(emitter *e, const tp_node *n) {
    if (e->in_init) return true;
    const tp_type *from = n->lhs->ty;
    return n->ty->kind == TY_PTR && from->kind == TY_PTR && from->base->kind == TY_VOID && n->ty->base->kind != TY_VOID;
}

static int prec(emitter *e, const tp_node *n) {
    switch (n->kind) {
    case ND_COMMA: return P_COMMA;
    case ND_ASSIGN: case ND_ASSIGN_OP: return P_ASSIGN;
    case ND_COND: return P_COND;
    case ND_NOT: case ND_BITNOT: case ND_NEG: case ND_PLUS: case ND_ADDR: case ND_DEREF: case ND_PRE_INC:
    case ND_PRE_DEC: case ND_CAST:
        return P_UNARY;
    case ND_CONV:
        return explicit_conv(e, n) ? P_UNARY : prec(e, n->lhs);
    case ND_NUM:
        return n->ival < 0 ? P_UNARY : P_POSTFIX;
    case ND_BUILTIN: {
        /* builtins that print as casts */
        switch (n->builtin) {
        case TP_B_THREAD_IDX_X: case TP_B_THREAD_IDX_Y: case TP_B_THREAD_IDX_Z: case TP_B_BLOCK_IDX_X:
        case TP_B_BLOCK_IDX_Y: case TP_B_BLOCK_IDX_Z: case TP_B_BLOCK_DIM_X: case TP_B_BLOCK_DIM_Y:
        case TP_B_BLOCK_DIM_Z: case TP_B_GRID_DIM_X: case TP_B_GRID_DIM_Y: case TP_B_GRID_DIM_Z: case TP_B_LANE_ID:
            return P_UNARY;
        default:
            return P_POSTFIX;
        }
    }
    default: {
        int p = binary_prec(n->kind);
        return p ? p : P_POSTFIX;
    }
    }
}

void rk__cuda_integer(emitter *e, int64_t v, const tp_type *ty) {
    ty = ty->origin ? ty->origin : ty;
    bool is64 = ty->size == 8;
    bool u = ty->is_unsigned && ty->kind != TY_BOOL;
    if (!u && v < 0) {
        if ((is64 && v == INT64_MIN) || (!is64 && v == INT32_MIN)) {
            PRINTF(e, is64 ? "(-9223372036854775807ll - 1)" : "(-2147483647 - 1)");
            return;
        }
        PRINTF(e, "-%lld%s", (long long)-v, is64 ? "ll" : "");
        return;
    }
    if (u)
        PRINTF(e, "%llu%s", is64 ? (unsigned long long)v : (unsigned long long)(uint32_t)v, is64 ? "ull" : "u");
    else
        PRINTF(e, "%lld%s", (long long)v, is64 ? "ll" : "");
}

static void args(emitter *e, tp_node *a) {
    for (bool first = true; a; a = a->next, first = false) {
        if (!first) put(e, ", ");
        rk__cuda_expr(e, a, P_ASSIGN);
    }
}

/* Builtins are overloaded in CUDA (sqrt(float) and sqrt(double), atomicAdd
 * for each type): an argument C converts implicitly is cast explicitly so
 * overload resolution picks the function C would call. */
static void builtin_args(emitter *e, tp_node *a) {
    for (bool first = true; a; a = a->next, first = false) {
        if (!first) put(e, ", ");
        if (a->kind == ND_CONV && rk__tp_is_arith(a->ty)) {
            put(e, "(");
            rk__cuda_declaration(e, a->ty, NULL);
            put(e, ")");
            rk__cuda_expr(e, a->lhs, P_UNARY);
        } else {
            rk__cuda_expr(e, a, P_ASSIGN);
        }
    }
}

/* A coordinate in a tile: the thread's own cell plus halo plus offset. */
static void tile_coord(emitter *e, const char *base, int k) {
    put(e, base);
    if (k > 0) PRINTF(e, " + %d", k);
    if (k < 0) PRINTF(e, " - %d", -k);
}

static void stencil_builtin(emitter *e, tp_node *n) {
    tp_stencil *st = e->st;
    switch (n->builtin) {
    case TP_B_POS_IDX: put(e, "rk__idx"); return;
    case TP_B_POS_X: put(e, "rk__x"); return;
    case TP_B_POS_Y: put(e, "rk__y"); return;
    case TP_B_POS_Z: put(e, "rk__z"); return;
    case TP_B_POS_NX: put(e, "rk__nx"); return;
    case TP_B_POS_NY: put(e, "rk__ny"); return;
    case TP_B_POS_NZ: put(e, "rk__nz"); return;
    default: break;
    }
    const char *tile = "rk__missing_tile";
    for (tp_stencil_buffer *b = st ? st->tiled : NULL; b; b = b->next)
        if (b->param == n->buffer) tile = b->tile_name;
    int h = st ? st->halo : 0;
    put(e, tile);
    if (st && st->dims == 3) {
        put(e, "[");
        tile_coord(e, "rk__tz", h + n->off[2]);
        put(e, "]");
    }
    put(e, "[");
    tile_coord(e, "rk__ty", h + n->off[1]);
    put(e, "][");
    tile_coord(e, "rk__tx", h + n->off[0]);
    put(e, "]");
}

static void builtin(emitter *e, tp_node *n) {
    const tp_builtin *b = &rk__tp_builtins[n->builtin];
    if (b->flags & TP_BF_STENCIL) {
        stencil_builtin(e, n);
        return;
    }
    const char *simple = NULL;
    switch (n->builtin) {
    case TP_B_THREAD_IDX_X: put(e, "(int)threadIdx.x"); return;
    case TP_B_THREAD_IDX_Y: put(e, "(int)threadIdx.y"); return;
    case TP_B_THREAD_IDX_Z: put(e, "(int)threadIdx.z"); return;
    case TP_B_BLOCK_IDX_X: put(e, "(int)blockIdx.x"); return;
    case TP_B_BLOCK_IDX_Y: put(e, "(int)blockIdx.y"); return;
    case TP_B_BLOCK_IDX_Z: put(e, "(int)blockIdx.z"); return;
    case TP_B_BLOCK_DIM_X: put(e, "(int)blockDim.x"); return;
    case TP_B_BLOCK_DIM_Y: put(e, "(int)blockDim.y"); return;
    case TP_B_BLOCK_DIM_Z: put(e, "(int)blockDim.z"); return;
    case TP_B_GRID_DIM_X: put(e, "(int)gridDim.x"); return;
    case TP_B_GRID_DIM_Y: put(e, "(int)gridDim.y"); return;
    case TP_B_GRID_DIM_Z: put(e, "(int)gridDim.z"); return;
    case TP_B_WARP_SIZE: put(e, "32"); return;
    case TP_B_LANE_ID:
        /* The lane of the linear thread index, as the hardware numbers lanes. */
        put(e, "(int)((threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31u)");
        return;
    case TP_B_SYNC_THREADS: simple = "__syncthreads"; break;
    case TP_B_GRID_SYNC: simple = "rk__grid_sync"; break;
    case TP_B_LOAD_ACQUIRE_U32: case TP_B_LOAD_ACQUIRE_U64: case TP_B_STORE_RELEASE_U32:
    case TP_B_STORE_RELEASE_U64: case TP_B_LOAD_RELAXED_U64: case TP_B_STORE_RELAXED_U64:
    case TP_B_LOAD_ACQUIRE_GPU_U64: case TP_B_STORE_RELEASE_GPU_U64:
        put(e, "rk__"); /* memory_word_helper's name */
        simple = b->name;
        break;
    case TP_B_SLEEP_NS: simple = "__nanosleep"; break;
    case TP_B_THREAD_FENCE: simple = "__threadfence"; break;
    case TP_B_THREAD_FENCE_BLOCK: simple = "__threadfence_block"; break;
    case TP_B_DYNAMIC_SHARED: simple = "rk__dynamic_shared"; break;
    case TP_B_ATOMIC_ADD_I32: case TP_B_ATOMIC_ADD_U32: case TP_B_ATOMIC_ADD_U64: case TP_B_ATOMIC_ADD_F32:
        simple = "atomicAdd"; break;
    case TP_B_ATOMIC_SUB_I32: simple = "atomicSub"; break;
    case TP_B_ATOMIC_MIN_I32: simple = "atomicMin"; break;
    case TP_B_ATOMIC_MAX_I32: simple = "atomicMax"; break;
    case TP_B_ATOMIC_AND_U32: simple = "atomicAnd"; break;
    case TP_B_ATOMIC_OR_U32: simple = "atomicOr"; break;
    case TP_B_ATOMIC_XOR_U32: simple = "atomicXor"; break;
    case TP_B_ATOMIC_EXCH_I32: simple = "atomicExch"; break;
    case TP_B_ATOMIC_CAS_I32: case TP_B_ATOMIC_CAS_U32: simple = "atomicCAS"; break;
    case TP_B_ATOMIC_MIN_U32: simple = "atomicMin"; break;
    case TP_B_ATOMIC_MAX_U32: simple = "atomicMax"; break;
    case TP_B_ATOMIC_EXCH_U32: simple = "atomicExch"; break;
    case TP_B_ATOMIC_LOAD_I32: case TP_B_ATOMIC_LOAD_U32:
        /* relaxed: one access the compiler neither caches nor splits */
        PRINTF(e, "(*(volatile %s *)(", n->builtin == TP_B_ATOMIC_LOAD_I32 ? "int" : "unsigned int");
        rk__cuda_expr(e, n->args, P_COMMA);
        put(e, "))");
        return;
    case TP_B_ABS_I32: simple = "abs"; break;
    case TP_B_MIN_I32: case TP_B_MIN_U32: simple = "min"; break;
    case TP_B_MAX_I32: case TP_B_MAX_U32: simple = "max"; break;
    case TP_B_POPCOUNT_U32: simple = "__popc"; break;
    case TP_B_CLZ_U32: simple = "__clz((int)"; break;
    case TP_B_CTZ_U32: simple = "__clz((int)__brev("; break;
    case TP_B_FFS_U32: simple = "__ffs((int)"; break;
    case TP_B_FLOAT_AS_UINT: simple = "__float_as_uint"; break;
    case TP_B_UINT_AS_FLOAT: simple = "__uint_as_float"; break;
    case TP_B_FLOAT_AS_INT: simple = "__float_as_int"; break;
    case TP_B_INT_AS_FLOAT: simple = "__int_as_float"; break;
    case TP_B_ISNAN: case TP_B_ISINF: case TP_B_ISFINITE:
        /* 0 or 1, as the DSL's are on every target */
        PRINTF(e, "(%s(", b->name);
        builtin_args(e, n->args);
        put(e, ") ? 1 : 0)");
        return;
    case TP_B_SHFL_F32: case TP_B_SHFL_I32:
        put(e, "__shfl_sync(0xffffffffu, ");
        builtin_args(e, n->args);
        put(e, ")");
        return;
    case TP_B_SHFL_DOWN_F32: case TP_B_SHFL_DOWN_I32:
        put(e, "__shfl_down_sync(0xffffffffu, ");
        rk__cuda_expr(e, n->args, P_ASSIGN);
        put(e, ", (unsigned int)(");
        rk__cuda_expr(e, n->args->next, P_COMMA);
        put(e, "))");
        return;
    case TP_B_SHFL_XOR_F32: case TP_B_SHFL_XOR_I32:
        put(e, "__shfl_xor_sync(0xffffffffu, ");
        builtin_args(e, n->args);
        put(e, ")");
        return;
    case TP_B_WARP_ANY: simple = "__any_sync(0xffffffffu, "; break;
    case TP_B_WARP_ALL: simple = "__all_sync(0xffffffffu, "; break;
    case TP_B_WARP_BALLOT: simple = "__ballot_sync(0xffffffffu, "; break;
    case TP_B_SYNC_WARP: simple = "__syncwarp"; break;
    case TP_B_INFF: put(e, "__int_as_float(0x7f800000)"); return;
    case TP_B_NANF: put(e, "__int_as_float(0x7fffffff)"); return;
    case TP_B_INF: put(e, "__longlong_as_double(0x7ff0000000000000ll)"); return;
    case TP_B_RK_EMIT:
        /* Defined by the CUDA ring kernel template (src/device/cuda/channel.cu),
         * which dsl.h declares it for; the size is the message's. */
        put(e, "rk__emit((unsigned)(");
        rk__cuda_expr(e, n->args, 0);
        put(e, "), ");
        rk__cuda_expr(e, n->args->next, 0);
        put(e, ", (unsigned)sizeof(");
        rk__cuda_declaration(e, rk__tp_unqual(n->args->next->ty->base), "");
        put(e, "))");
        return;
    default:
        simple = b->name; /* <math.h>: CUDA has the same functions */
        break;
    }
    /* A name ending in ' ' or '(' has opened its argument list; every parenthesis it leaves open is closed
     * after the arguments. */
    size_t len = strlen(simple);
    put(e, simple);
    if (simple[len - 1] != ' ' && simple[len - 1] != '(') put(e, "(");
    builtin_args(e, n->args);
    int open = 0;
    for (const char *c = simple; *c; c++) open += *c == '(' ? 1 : *c == ')' ? -1 : 0;
    while (open-- > 0) put(e, ")");
    if (simple[len - 1] != ' ' && simple[len - 1] != '(') put(e, ")");
}

void rk__cuda_init_list(emitter *e, tp_node *n) {
    bool outer = e->in_init;
    e->in_init = true;
    put(e, "{");
    for (tp_node *a = n->args; a; a = a->next) {
        if (a != n->args) put(e, ", ");
        if (a->kind == ND_INIT_LIST)
            rk__cuda_init_list(e, a);
        else
            rk__cuda_expr(e, a, P_ASSIGN);
    }
    put(e, "}");
    e->in_init = outer;
}

/* The precedence an operand needs, adding parentheses where C programmers
 * misread the mix (and compilers warn): && inside ||, and arithmetic,
 * comparisons or other bitwise operators inside a bitwise operator or shift. */
static int clarity(emitter *e, const tp_node *parent, const tp_node *child, int min_prec) {
    int pp = binary_prec(parent->kind), cp = binary_prec(child->kind);
    if (!cp || child->kind == parent->kind) return min_prec;
    bool force = (pp == P_LOGOR && cp == P_LOGAND) ||
                 ((pp == P_BITAND || pp == P_BITXOR || pp == P_BITOR || pp == P_SHIFT) && cp != P_LOGAND && cp != P_LOGOR);
    return force ? prec(e, child) + 1 : min_prec;
}

/* Infinity or NaN by its bits: NVRTC warns about a constant expression
 * that overflows. */
static bool nonfinite_constant(emitter *e, tp_node *n) {
    double v;
    const tp_type *t = rk__tp_unqual(n->ty);
    if (!rk__tp_is_flonum(t) || n->kind == ND_BUILTIN || !rk__tp_fold_float(n, &v) || isfinite(v)) return false;
    if (t->kind == TY_FLOAT)
        put(e, v != v ? "__int_as_float(0x7fffffff)" : v > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float((int)0xff800000u)");
    else
        put(e, v != v  ? "__longlong_as_double(0x7ff8000000000000ll)"
               : v > 0 ? "__longlong_as_double(0x7ff0000000000000ll)"
                       : "__longlong_as_double((long long)0xfff0000000000000ull)");
    return true;
}

void rk__cuda_expr(emitter *e, tp_node *n, int min_prec) {
    if (nonfinite_constant(e, n)) return;
    int p = prec(e, n);
    bool paren = p < min_prec;
    if (paren) put(e, "(");
    switch (n->kind) {
    case ND_NUM:
        rk__cuda_integer(e, n->ival, n->ty);
        break;
    case ND_SIZEOF:
        rk__cuda_integer(e, n->ival, &rk__tp_ty_ulong);
        break;
    case ND_FNUM:
        putn(e, n->tok->loc, (size_t)n->tok->len);
        break;
    case ND_VAR:
        put(e, rk__cuda_obj_name(e, n->obj));
        break;
    case ND_NOT: put(e, "!"); rk__cuda_expr(e, n->lhs, P_UNARY); break;
    case ND_BITNOT: put(e, "~"); rk__cuda_expr(e, n->lhs, P_UNARY); break;
    case ND_NEG:
        put(e, "-");
        /* "- -x" and "- --x" must not fuse into "--" */
        if (n->lhs->kind == ND_NEG || n->lhs->kind == ND_PRE_DEC || (n->lhs->kind == ND_NUM && n->lhs->ival < 0)) put(e, " ");
        rk__cuda_expr(e, n->lhs, P_UNARY);
        break;
    case ND_PLUS:
        put(e, "+");
        if (n->lhs->kind == ND_PLUS || n->lhs->kind == ND_PRE_INC) put(e, " ");
        rk__cuda_expr(e, n->lhs, P_UNARY);
        break;
    case ND_ADDR: put(e, "&"); rk__cuda_expr(e, n->lhs, P_UNARY); break;
    case ND_DEREF: put(e, "*"); rk__cuda_expr(e, n->lhs, P_UNARY); break;
    case ND_PRE_INC: put(e, "++"); rk__cuda_expr(e, n->lhs, P_UNARY); break;
    case ND_PRE_DEC: put(e, "--"); rk__cuda_expr(e, n->lhs, P_UNARY); break;
    case ND_POST_INC: rk__cuda_expr(e, n->lhs, P_POSTFIX); put(e, "++"); break;
    case ND_POST_DEC: rk__cuda_expr(e, n->lhs, P_POSTFIX); put(e, "--"); break;
    case ND_ASSIGN:
        rk__cuda_expr(e, n->lhs, P_UNARY);
        put(e, " = ");
        rk__cuda_expr(e, n->rhs, P_ASSIGN);
        break;
    case ND_ASSIGN_OP:
        rk__cuda_expr(e, n->lhs, P_UNARY);
        PRINTF(e, " %s= ", rk__tp_binary_op(n->op, "?"));
        rk__cuda_expr(e, n->rhs, P_ASSIGN);
        break;
    case ND_COND:
        rk__cuda_expr(e, n->cond, P_LOGOR);
        put(e, " ? ");
        rk__cuda_expr(e, n->then, P_COMMA);
        put(e, " : ");
        rk__cuda_expr(e, n->els, P_COND);
        break;
    case ND_COMMA:
        rk__cuda_expr(e, n->lhs, P_COMMA);
        put(e, ", ");
        rk__cuda_expr(e, n->rhs, P_ASSIGN);
        break;
    case ND_MEMBER:
        rk__cuda_expr(e, n->lhs, P_POSTFIX);
        put(e, ".");
        put(e, rk__cuda_member_name(e, n->member));
        break;
    case ND_ARROW:
        rk__cuda_expr(e, n->lhs, P_POSTFIX);
        put(e, "->");
        put(e, rk__cuda_member_name(e, n->member));
        break;
    case ND_INDEX:
        rk__cuda_expr(e, n->lhs, P_POSTFIX);
        put(e, "[");
        rk__cuda_expr(e, n->rhs, P_COMMA);
        put(e, "]");
        break;
    case ND_CALL:
        put(e, rk__cuda_obj_name(e, n->obj));
        put(e, "(");
        args(e, n->args);
        put(e, ")");
        break;
    case ND_BUILTIN:
        builtin(e, n);
        break;
    case ND_CAST:
        put(e, "(");
        rk__cuda_declaration(e, n->cast_ty, NULL);
        put(e, ")");
        rk__cuda_expr(e, n->lhs, P_UNARY);
        break;
    case ND_CONV:
        if (explicit_conv(e, n)) {
            put(e, "(");
            rk__cuda_declaration(e, n->ty, NULL);
            put(e, ")");
            bool outer = e->in_init;
            e->in_init = false;
            rk__cuda_expr(e, n->lhs, P_UNARY);
            e->in_init = outer;
        } else {
            rk__cuda_expr(e, n->lhs, paren ? P_COMMA : min_prec); /* parenthesized once, here */
        }
        break;
    case ND_INIT_LIST:
        rk__cuda_init_list(e, n);
        break;
    default: {
        int bp = binary_prec(n->kind);
        if (!bp) {
            put(e, "/* ? */0");
            break;
        }
        rk__cuda_expr(e, n->lhs, clarity(e, n, n->lhs, bp));
        PRINTF(e, " %s ", rk__tp_binary_op(n->kind, "?"));
        rk__cuda_expr(e, n->rhs, clarity(e, n, n->rhs, bp + 1));
        break;
    }
    }
    if (paren) put(e, ")");
}
