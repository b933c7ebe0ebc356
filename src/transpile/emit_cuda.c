/* The CUDA emitter: the typed tree as CUDA C++ for NVRTC or nvcc.
 *
 * The output is self-contained (no #include): DSL calls become CUDA
 * intrinsics, 64-bit integers are spelled long long (same size as the host's
 * long, and what atomicAdd takes), structs keep the host's layout and carry
 * static_asserts on size and alignment. Implicit conversions print as C++
 * does them implicitly, except where C++ is stricter than C (void * to T *,
 * and inside braces, where C++ forbids narrowing).
 *
 * Stencil kernels become tiled shared-memory kernels. A handler becomes a
 * __device__ function with its own name and typed signature,
 * int name(const Req *, Resp *, State *): what the CUDA backend's ring
 * template (src/device/cuda/ring.cu) calls through RK_HANDLER_FN. */
#include <stdlib.h>
#include <string.h>

#include "tp.h"

typedef struct emitter {
    tp_ctx *ctx;
    tp_buf *out;
    int indent;
    tp_obj *fn;      /* function being emitted */
    tp_stencil *st;  /* its stencil analysis, if any */
    bool in_init;    /* inside a brace initializer */
    bool used[TP_B_COUNT];
    int handlers;
} emitter;

/* ---- names ------------------------------------------------------------------- */

/* C++ keywords and CUDA names a C identifier might collide with. */
static const char *const reserved[] = {
    "abs", "alignas", "alignof", "and", "and_eq", "asm", "atomicAdd", "atomicAnd", "atomicCAS", "atomicExch",
    "atomicMax", "atomicMin", "atomicOr", "atomicSub", "atomicXor", "bitand", "bitor", "blockDim",
    "blockIdx", "bool", "catch", "char16_t", "char32_t", "char8_t", "class", "clock", "clock64", "compl",
    "concept", "const_cast", "consteval", "constexpr", "constinit", "co_await", "co_return", "co_yield",
    "decltype", "delete", "dim3", "dynamic_cast", "erfcinv", "erfcx", "erfinv", "exp10", "exp10f", "explicit",
    "export", "false", "fdividef", "friend", "gridDim", "isfinite", "isinf", "isnan", "labs", "llabs",
    "llmax", "llmin", "max", "min", "mutable", "namespace", "new", "noexcept", "norm", "normcdf", "normf",
    "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "rcbrt",
    "rcbrtf", "register", "reinterpret_cast", "requires", "rhypot", "rnorm", "rsqrt", "rsqrtf", "saturate",
    "signbit", "sincos", "sincosf", "sincospi", "sincospif", "sinpi", "sinpif", "cospi", "cospif",
    "static_assert", "static_cast", "template", "this", "thread_local", "threadIdx", "throw", "true", "try",
    "typeid", "typename", "ullmax", "ullmin", "umax", "umin", "using", "virtual", "warpSize", "wchar_t",
    "xor", "xor_eq",
};

static bool is_reserved(const char *name) {
    /* The table is small; a linear scan avoids needing it sorted by hand. */
    for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
        if (reserved[i][0] == name[0] && strcmp(reserved[i], name) == 0) return true;
    return false;
}

const char *rk__tp_cuda_name(tp_ctx *ctx, const char *name) {
    if (!name) return "";
    if (is_reserved(name)) return rk__tp_format(ctx, "rk__%s", name);
    return name;
}

/* Names are decided once per object and member. */
static const char *obj_name(emitter *e, tp_obj *o) {
    if (!o->emit_name) o->emit_name = rk__tp_cuda_name(e->ctx, o->name);
    return o->emit_name;
}

static const char *member_name(emitter *e, tp_member *m) {
    if (!m->emit_name) m->emit_name = rk__tp_cuda_name(e->ctx, rk__tp_strndup(e->ctx, m->name->loc, (size_t)m->name->len));
    return m->emit_name;
}

/* ---- output ------------------------------------------------------------------- */

static void put(emitter *e, const char *s) { rk__tp_buf_puts(e->out, s); }
static void putn(emitter *e, const char *s, size_t n) { rk__tp_buf_putn(e->out, s, n); }
#define PRINTF(e, ...) rk__tp_buf_printf((e)->out, __VA_ARGS__)

/* Acquire, release and relaxed accesses to a whole 32- or 64-bit word: one
 * inline-PTX helper each, named rk__ + the DSL function's name. */
typedef struct memory_word {
    tp_builtin_id id;
    bool store;
    int bits;
    const char *op; /* the PTX instruction, without its type */
} memory_word;

static const memory_word memory_words[] = {
    /* system scope: words shared with the host */
    {TP_B_LOAD_ACQUIRE_U32, false, 32, "ld.acquire.sys"},
    {TP_B_LOAD_ACQUIRE_U64, false, 64, "ld.acquire.sys"},
    {TP_B_STORE_RELEASE_U32, true, 32, "st.release.sys"},
    {TP_B_STORE_RELEASE_U64, true, 64, "st.release.sys"},
    /* relaxed: whole 8-byte words, no ordering, several in flight at once */
    {TP_B_LOAD_RELAXED_U64, false, 64, "ld.relaxed.sys"},
    {TP_B_STORE_RELAXED_U64, true, 64, "st.relaxed.sys"},
    /* GPU scope: words in device memory that only the device's blocks share */
    {TP_B_LOAD_ACQUIRE_GPU_U64, false, 64, "ld.acquire.gpu"},
    {TP_B_STORE_RELEASE_GPU_U64, true, 64, "st.release.gpu"},
};

static void memory_word_helper(emitter *e, const memory_word *w) {
    const char *type = w->bits == 32 ? "unsigned int" : "unsigned long long", *reg = w->bits == 32 ? "r" : "l";
    const char *name = rk__tp_builtins[w->id].name;
    if (w->store)
        PRINTF(e,
               "__device__ static inline void rk__%s(%s *p, %s v) {\n"
               "    asm volatile(\"%s.u%d [%%0], %%1;\" ::\"l\"(p), \"%s\"(v) : \"memory\");\n}\n\n",
               name, type, type, w->op, w->bits, reg);
    else
        PRINTF(e,
               "__device__ static inline %s rk__%s(const %s *p) {\n"
               "    %s v;\n"
               "    asm volatile(\"%s.u%d %%0, [%%1];\" : \"=%s\"(v) : \"l\"(p) : \"memory\");\n"
               "    return v;\n}\n\n",
               type, name, type, type, w->op, w->bits, reg);
}

static void line_start(emitter *e) {
    for (int i = 0; i < e->indent; i++) put(e, "    ");
}

/* ---- types --------------------------------------------------------------------- */

static const char *scalar_name(const tp_type *ty) {
    switch (ty->kind) {
    case TY_VOID: return "void";
    case TY_BOOL: return "bool";
    case TY_CHAR: return ty->is_unsigned ? "unsigned char" : "char";
    case TY_SHORT: return ty->is_unsigned ? "unsigned short" : "short";
    case TY_INT: case TY_ENUM: return ty->is_unsigned ? "unsigned int" : "int";
    case TY_LONG: return ty->is_unsigned ? "unsigned long long" : "long long";
    case TY_FLOAT: return "float";
    case TY_DOUBLE: return "double";
    default: return NULL;
    }
}

static const char *base_name(emitter *e, const tp_type *ty) {
    if (ty->kind == TY_STRUCT) {
        const tp_type *s = ty->origin ? ty->origin : ty;
        return s->emit_name ? s->emit_name : "rk__unnamed_struct";
    }
    const char *n = scalar_name(ty);
    (void)e;
    return n ? n : "int";
}

/* Writes a declaration of `name` (NULL: abstract) with type ty, C style. */
static void declaration(emitter *e, const tp_type *ty, const char *name) {
    /* Build the declarator inside out. */
    tp_buf d;
    rk__tp_buf_init(&d, e->ctx);
    if (name) rk__tp_buf_puts(&d, name);
    const tp_type *t = ty;
    for (int guard = 0; guard < 4 * TP_MAX_NESTING && (t->kind == TY_PTR || t->kind == TY_ARRAY); guard++) {
        if (t->kind == TY_PTR) {
            tp_buf n;
            rk__tp_buf_init(&n, e->ctx);
            rk__tp_buf_puts(&n, "*");
            if (t->is_const) rk__tp_buf_puts(&n, "const ");
            if (t->is_volatile) rk__tp_buf_puts(&n, "volatile ");
            if (t->is_restrict) rk__tp_buf_puts(&n, "__restrict__ ");
            if (n.data[n.len - 1] == ' ' && !d.len) n.data[--n.len] = '\0';
            rk__tp_buf_putn(&n, d.data, d.len);
            d = n;
            if (t->base->kind == TY_ARRAY) {
                tp_buf p;
                rk__tp_buf_init(&p, e->ctx);
                rk__tp_buf_printf(&p, "(%s)", d.data);
                d = p;
            }
        } else {
            rk__tp_buf_printf(&d, "[%d]", t->array_len < 0 ? 0 : t->array_len);
        }
        t = t->base;
    }
    if (t->is_const) put(e, "const ");
    if (t->is_volatile) put(e, "volatile ");
    put(e, base_name(e, t));
    if (d.len) {
        if (d.data[0] != '[') put(e, " ");
        putn(e, d.data, d.len);
    }
}

/* ---- expressions ---------------------------------------------------------------- */

enum { P_COMMA = 1, P_ASSIGN, P_COND, P_LOGOR, P_LOGAND, P_BITOR, P_BITXOR, P_BITAND, P_EQ, P_REL, P_SHIFT,
       P_ADD, P_MUL, P_UNARY, P_POSTFIX };

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

static void expr(emitter *e, tp_node *n, int min_prec);

static void integer(emitter *e, int64_t v, const tp_type *ty) {
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
        expr(e, a, P_ASSIGN);
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
            declaration(e, a->ty, NULL);
            put(e, ")");
            expr(e, a->lhs, P_UNARY);
        } else {
            expr(e, a, P_ASSIGN);
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
    case TP_B_SHFL_F32: case TP_B_SHFL_I32:
        put(e, "__shfl_sync(0xffffffffu, ");
        builtin_args(e, n->args);
        put(e, ")");
        return;
    case TP_B_SHFL_DOWN_F32: case TP_B_SHFL_DOWN_I32:
        put(e, "__shfl_down_sync(0xffffffffu, ");
        expr(e, n->args, P_ASSIGN);
        put(e, ", (unsigned int)(");
        expr(e, n->args->next, P_COMMA);
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
    case TP_B_INFF: put(e, "__int_as_float(0x7f800000)"); return;
    case TP_B_NANF: put(e, "__int_as_float(0x7fffffff)"); return;
    case TP_B_INF: put(e, "__longlong_as_double(0x7ff0000000000000ll)"); return;
    default:
        simple = b->name; /* <math.h>: CUDA has the same functions */
        break;
    }
    size_t len = strlen(simple);
    if (simple[len - 1] == ' ') {
        put(e, simple);
    } else {
        put(e, simple);
        put(e, "(");
    }
    builtin_args(e, n->args);
    put(e, ")");
}

static void init_list(emitter *e, tp_node *n) {
    bool outer = e->in_init;
    e->in_init = true;
    put(e, "{");
    for (tp_node *a = n->args; a; a = a->next) {
        if (a != n->args) put(e, ", ");
        if (a->kind == ND_INIT_LIST)
            init_list(e, a);
        else
            expr(e, a, P_ASSIGN);
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

static void expr(emitter *e, tp_node *n, int min_prec) {
    int p = prec(e, n);
    bool paren = p < min_prec;
    if (paren) put(e, "(");
    switch (n->kind) {
    case ND_NUM:
        integer(e, n->ival, n->ty);
        break;
    case ND_SIZEOF:
        integer(e, n->ival, &rk__tp_ty_ulong);
        break;
    case ND_FNUM:
        putn(e, n->tok->loc, (size_t)n->tok->len);
        break;
    case ND_VAR:
        put(e, obj_name(e, n->obj));
        break;
    case ND_NOT: put(e, "!"); expr(e, n->lhs, P_UNARY); break;
    case ND_BITNOT: put(e, "~"); expr(e, n->lhs, P_UNARY); break;
    case ND_NEG:
        put(e, "-");
        /* "- -x" and "- --x" must not fuse into "--" */
        if (n->lhs->kind == ND_NEG || n->lhs->kind == ND_PRE_DEC || (n->lhs->kind == ND_NUM && n->lhs->ival < 0)) put(e, " ");
        expr(e, n->lhs, P_UNARY);
        break;
    case ND_PLUS:
        put(e, "+");
        if (n->lhs->kind == ND_PLUS || n->lhs->kind == ND_PRE_INC) put(e, " ");
        expr(e, n->lhs, P_UNARY);
        break;
    case ND_ADDR: put(e, "&"); expr(e, n->lhs, P_UNARY); break;
    case ND_DEREF: put(e, "*"); expr(e, n->lhs, P_UNARY); break;
    case ND_PRE_INC: put(e, "++"); expr(e, n->lhs, P_UNARY); break;
    case ND_PRE_DEC: put(e, "--"); expr(e, n->lhs, P_UNARY); break;
    case ND_POST_INC: expr(e, n->lhs, P_POSTFIX); put(e, "++"); break;
    case ND_POST_DEC: expr(e, n->lhs, P_POSTFIX); put(e, "--"); break;
    case ND_ASSIGN:
        expr(e, n->lhs, P_UNARY);
        put(e, " = ");
        expr(e, n->rhs, P_ASSIGN);
        break;
    case ND_ASSIGN_OP:
        expr(e, n->lhs, P_UNARY);
        PRINTF(e, " %s= ", rk__tp_binary_op(n->op, "?"));
        expr(e, n->rhs, P_ASSIGN);
        break;
    case ND_COND:
        expr(e, n->cond, P_LOGOR);
        put(e, " ? ");
        expr(e, n->then, P_COMMA);
        put(e, " : ");
        expr(e, n->els, P_COND);
        break;
    case ND_COMMA:
        expr(e, n->lhs, P_COMMA);
        put(e, ", ");
        expr(e, n->rhs, P_ASSIGN);
        break;
    case ND_MEMBER:
        expr(e, n->lhs, P_POSTFIX);
        put(e, ".");
        put(e, member_name(e, n->member));
        break;
    case ND_ARROW:
        expr(e, n->lhs, P_POSTFIX);
        put(e, "->");
        put(e, member_name(e, n->member));
        break;
    case ND_INDEX:
        expr(e, n->lhs, P_POSTFIX);
        put(e, "[");
        expr(e, n->rhs, P_COMMA);
        put(e, "]");
        break;
    case ND_CALL:
        put(e, obj_name(e, n->obj));
        put(e, "(");
        args(e, n->args);
        put(e, ")");
        break;
    case ND_BUILTIN:
        builtin(e, n);
        break;
    case ND_CAST:
        put(e, "(");
        declaration(e, n->cast_ty, NULL);
        put(e, ")");
        expr(e, n->lhs, P_UNARY);
        break;
    case ND_CONV:
        if (explicit_conv(e, n)) {
            put(e, "(");
            declaration(e, n->ty, NULL);
            put(e, ")");
            bool outer = e->in_init;
            e->in_init = false;
            expr(e, n->lhs, P_UNARY);
            e->in_init = outer;
        } else {
            expr(e, n->lhs, paren ? P_COMMA : min_prec); /* parenthesized once, here */
        }
        break;
    case ND_INIT_LIST:
        init_list(e, n);
        break;
    default: {
        int bp = binary_prec(n->kind);
        if (!bp) {
            put(e, "/* ? */0");
            break;
        }
        expr(e, n->lhs, clarity(e, n, n->lhs, bp));
        PRINTF(e, " %s ", rk__tp_binary_op(n->kind, "?"));
        expr(e, n->rhs, clarity(e, n, n->rhs, bp + 1));
        break;
    }
    }
    if (paren) put(e, ")");
}

/* ---- statements -------------------------------------------------------------------- */

static void stmt(emitter *e, tp_node *n);

static void decl_stmt(emitter *e, tp_node *n) {
    line_start(e);
    if (n->obj->is_shared) put(e, "__shared__ ");
    declaration(e, n->obj->ty, obj_name(e, n->obj));
    if (n->init) {
        put(e, " = ");
        if (n->init->kind == ND_INIT_LIST)
            init_list(e, n->init);
        else
            expr(e, n->init, P_ASSIGN);
    }
    put(e, ";\n");
}

static void string_literal(emitter *e, const char *s) {
    put(e, "\"");
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            PRINTF(e, "\\%c", *s);
        else if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
            PRINTF(e, "\\%03o", (unsigned char)*s);
        else
            putn(e, s, 1);
    }
    put(e, "\"");
}

/* A statement used as the body of if/for/while: always braced. */
static void body(emitter *e, tp_node *n) {
    if (n->kind == ND_BLOCK) {
        put(e, "{\n");
        e->indent++;
        stmt(e, n->body);
        e->indent--;
        line_start(e);
        put(e, "}");
        return;
    }
    put(e, "{\n");
    e->indent++;
    tp_node *next = n->next;
    n->next = NULL;
    stmt(e, n);
    n->next = next;
    e->indent--;
    line_start(e);
    put(e, "}");
}

static void for_stmt(emitter *e, tp_node *n) {
    int decls = 0;
    for (tp_node *d = n->init; d; d = d->next) decls++;
    bool hoist = decls > 1;
    if (hoist) {
        /* C++ allows one declaration in a for header; hoist several into a block. */
        line_start(e);
        put(e, "{\n");
        e->indent++;
        stmt(e, n->init);
    }
    line_start(e);
    put(e, "for (");
    if (!hoist && n->init) {
        if (n->init->kind == ND_DECL) {
            if (n->init->obj->is_shared) put(e, "__shared__ ");
            declaration(e, n->init->obj->ty, obj_name(e, n->init->obj));
            if (n->init->init) {
                put(e, " = ");
                if (n->init->init->kind == ND_INIT_LIST)
                    init_list(e, n->init->init);
                else
                    expr(e, n->init->init, P_ASSIGN);
            }
        } else {
            expr(e, n->init->lhs, P_COMMA);
        }
    }
    put(e, ";");
    if (n->cond) {
        put(e, " ");
        expr(e, n->cond, P_COMMA);
    }
    put(e, ";");
    if (n->inc) {
        put(e, " ");
        expr(e, n->inc, P_COMMA);
    }
    put(e, ") ");
    body(e, n->then);
    put(e, "\n");
    if (hoist) {
        e->indent--;
        line_start(e);
        put(e, "}\n");
    }
}

static void stmt(emitter *e, tp_node *n) {
    for (; n; n = n->next) {
        switch (n->kind) {
        case ND_BLOCK:
            line_start(e);
            body(e, n);
            put(e, "\n");
            break;
        case ND_EXPR_STMT:
            line_start(e);
            expr(e, n->lhs, P_COMMA);
            put(e, ";\n");
            break;
        case ND_DECL:
            decl_stmt(e, n);
            break;
        case ND_IF:
            line_start(e);
            put(e, "if (");
            expr(e, n->cond, P_COMMA);
            put(e, ") ");
            body(e, n->then);
            while (n->els && n->els->kind == ND_IF && !n->els->next) {
                n = n->els;
                put(e, " else if (");
                expr(e, n->cond, P_COMMA);
                put(e, ") ");
                body(e, n->then);
            }
            if (n->els) {
                put(e, " else ");
                body(e, n->els);
            }
            put(e, "\n");
            break;
        case ND_FOR:
            for_stmt(e, n);
            break;
        case ND_WHILE:
            line_start(e);
            put(e, "while (");
            expr(e, n->cond, P_COMMA);
            put(e, ") ");
            body(e, n->then);
            put(e, "\n");
            break;
        case ND_DO:
            line_start(e);
            put(e, "do ");
            body(e, n->then);
            put(e, " while (");
            expr(e, n->cond, P_COMMA);
            put(e, ");\n");
            break;
        case ND_SWITCH:
            line_start(e);
            put(e, "switch (");
            expr(e, n->cond, P_COMMA);
            put(e, ") ");
            body(e, n->body);
            put(e, "\n");
            break;
        case ND_CASE: case ND_DEFAULT:
            e->indent--;
            line_start(e);
            if (n->kind == ND_CASE) {
                put(e, "case ");
                integer(e, n->ival, n->ty ? n->ty : &rk__tp_ty_long);
                put(e, ":\n");
            } else {
                put(e, "default:\n");
            }
            e->indent++;
            stmt(e, n->body);
            break;
        case ND_BREAK:
            line_start(e);
            put(e, "break;\n");
            break;
        case ND_CONTINUE:
            line_start(e);
            put(e, "continue;\n");
            break;
        case ND_RETURN:
            line_start(e);
            put(e, "return");
            if (n->lhs) {
                put(e, " ");
                expr(e, n->lhs, P_COMMA);
            }
            put(e, ";\n");
            break;
        case ND_NULL_STMT:
            line_start(e);
            put(e, ";\n");
            break;
        case ND_STATIC_ASSERT:
            line_start(e);
            put(e, "static_assert(");
            expr(e, n->lhs, P_ASSIGN);
            put(e, ", ");
            string_literal(e, *n->message ? n->message : "static assertion");
            put(e, ");\n");
            break;
        default:
            break;
        }
    }
}

/* ---- file-scope items ------------------------------------------------------------------ */

static void struct_def(emitter *e, tp_type *ty) {
    const char *name = ty->emit_name ? ty->emit_name : "rk__unnamed_struct";
    PRINTF(e, "struct %s {\n", name);
    for (tp_member *m = ty->members; m; m = m->next) {
        put(e, "    ");
        declaration(e, m->ty, member_name(e, m));
        put(e, ";\n");
    }
    put(e, "};\n");
    /* Layout must match the host's: the same bytes cross the boundary. */
    PRINTF(e, "static_assert(sizeof(%s) == %d, \"%s: size differs from the host layout\");\n", name, ty->size, name);
    PRINTF(e, "static_assert(alignof(%s) == %d, \"%s: alignment differs from the host layout\");\n\n", name, ty->align,
           name);
}

static void global_var(emitter *e, tp_obj *var) {
    /* Read-only tables live in constant memory. */
    if (var->is_static) put(e, "static ");
    put(e, "__constant__ ");
    declaration(e, var->ty, obj_name(e, var));
    if (var->init) {
        put(e, " = ");
        if (var->init->kind == ND_INIT_LIST)
            init_list(e, var->init);
        else
            expr(e, var->init, P_ASSIGN);
    }
    put(e, ";\n\n");
}

static void params(emitter *e, tp_obj *fn, bool skip_pos) {
    bool first = true;
    tp_param_type *pt = fn->ty->params;
    for (tp_obj *p = fn->params; p; p = p->next, pt = pt ? pt->next : NULL) {
        if (skip_pos && p->ty->kind == TY_GRID_POS) continue;
        if (!first) put(e, ", ");
        first = false;
        declaration(e, p->ty, p->name ? obj_name(e, p) : NULL);
    }
    if (first && !skip_pos) put(e, "void");
}

static void function_head(emitter *e, tp_obj *fn) {
    switch (fn->entry_kind) {
    case RK_TRANSPILE_GLOBAL:
        put(e, "extern \"C\" __global__ ");
        break;
    case RK_TRANSPILE_STENCIL:
        PRINTF(e, "extern \"C\" __global__ void __launch_bounds__(%d) ",
               fn->stencil->tile[0] * fn->stencil->tile[1] * fn->stencil->tile[2]);
        put(e, obj_name(e, fn));
        put(e, "(");
        params(e, fn, true);
        bool any = false;
        for (tp_obj *p = fn->params; p; p = p->next)
            if (p->ty->kind != TY_GRID_POS) any = true;
        PRINTF(e, "%sint rk__nx, int rk__ny", any ? ", " : "");
        if (fn->stencil->dims == 3) put(e, ", int rk__nz");
        put(e, ")");
        return;
    case RK_TRANSPILE_HANDLER:
        put(e, "__device__ ");
        break;
    default:
        if (fn->fn_kind == FN_DEVICE || fn->is_static) put(e, "static ");
        put(e, "__device__ ");
        if (fn->is_inline) put(e, "inline ");
        break;
    }
    tp_type *ret = fn->ty->return_ty;
    declaration(e, ret, NULL);
    PRINTF(e, " %s(", obj_name(e, fn));
    params(e, fn, false);
    put(e, ")");
}

/* The tiled stencil kernel around the user's body. */
static void stencil_body(emitter *e, tp_obj *fn) {
    tp_stencil *st = fn->stencil;
    int h = st->halo, d3 = st->dims == 3;
    int tw = st->tile[0], th = st->tile[1], td = st->tile[2];
    int lw = tw + 2 * h, lh = th + 2 * h, ld = d3 ? td + 2 * h : 1;
    for (tp_stencil_buffer *b = st->tiled; b; b = b->next) {
        line_start(e);
        put(e, "__shared__ ");
        declaration(e, rk__tp_unqual(b->param->ty->base), b->tile_name);
        if (d3) PRINTF(e, "[%d]", ld);
        PRINTF(e, "[%d][%d];\n", lh, lw);
    }
    line_start(e);
    PRINTF(e, "const int rk__tx = (int)threadIdx.x, rk__ty = (int)threadIdx.y%s;\n", d3 ? ", rk__tz = (int)threadIdx.z" : "");
    line_start(e);
    PRINTF(e, "const int rk__x = (int)blockIdx.x * %d + rk__tx;\n", tw);
    line_start(e);
    PRINTF(e, "const int rk__y = (int)blockIdx.y * %d + rk__ty;\n", th);
    if (d3) {
        line_start(e);
        PRINTF(e, "const int rk__z = (int)blockIdx.z * %d + rk__tz;\n", td);
    }
    if (st->tiled) {
        line_start(e);
        put(e, "/* Every thread helps load the tile and its halo; cells outside the grid\n");
        line_start(e);
        put(e, " * read the nearest cell on the edge (clamp-to-edge). */\n");
        line_start(e);
        if (d3)
            PRINTF(e, "for (int rk__i = (rk__tz * %d + rk__ty) * %d + rk__tx; rk__i < %d; rk__i += %d) {\n", th, tw,
                   lw * lh * ld, tw * th * td);
        else
            PRINTF(e, "for (int rk__i = rk__ty * %d + rk__tx; rk__i < %d; rk__i += %d) {\n", tw, lw * lh, tw * th);
        e->indent++;
        line_start(e);
        PRINTF(e, "const int rk__lx = rk__i %% %d, rk__ly = rk__i / %d %% %d", lw, lw, lh);
        if (d3) PRINTF(e, ", rk__lz = rk__i / %d", lw * lh);
        put(e, ";\n");
        line_start(e);
        PRINTF(e, "const int rk__gx = rk__clamp((int)blockIdx.x * %d - %d + rk__lx, rk__nx);\n", tw, h);
        line_start(e);
        PRINTF(e, "const int rk__gy = rk__clamp((int)blockIdx.y * %d - %d + rk__ly, rk__ny);\n", th, h);
        if (d3) {
            line_start(e);
            PRINTF(e, "const int rk__gz = rk__clamp((int)blockIdx.z * %d - %d + rk__lz, rk__nz);\n", td, h);
        }
        for (tp_stencil_buffer *b = st->tiled; b; b = b->next) {
            line_start(e);
            PRINTF(e, "%s%s[rk__ly][rk__lx] = %s[", b->tile_name, d3 ? "[rk__lz]" : "", obj_name(e, b->param));
            put(e, d3 ? "(rk__gz * rk__ny + rk__gy) * rk__nx + rk__gx];\n" : "rk__gy * rk__nx + rk__gx];\n");
        }
        e->indent--;
        line_start(e);
        put(e, "}\n");
        line_start(e);
        put(e, "__syncthreads();\n");
    }
    line_start(e);
    PRINTF(e, "if (rk__x >= rk__nx || rk__y >= rk__ny%s) return;\n", d3 ? " || rk__z >= rk__nz" : "");
    line_start(e);
    put(e, d3 ? "const int rk__idx = (rk__z * rk__ny + rk__y) * rk__nx + rk__x;\n" : "const int rk__idx = rk__y * rk__nx + rk__x;\n");
    line_start(e);
    put(e, "{\n");
    e->indent++;
    stmt(e, fn->body->body);
    e->indent--;
    line_start(e);
    put(e, "}\n");
}

static void function(emitter *e, tp_obj *fn, bool definition) {
    e->fn = fn;
    e->st = fn->stencil;
    if (!definition) {
        function_head(e, fn);
        put(e, ";\n\n");
        return;
    }
    if (fn->entry_kind == RK_TRANSPILE_STENCIL) {
        tp_stencil *st = fn->stencil;
        PRINTF(e, "/* Stencil '%s': %d-D, tile %dx%d%s, halo %d. Launch with block (%d, %d, %d) and grid\n", fn->name,
               st->dims, st->tile[0], st->tile[1], st->dims == 3 ? rk__tp_format(e->ctx, "x%d", st->tile[2]) : "",
               st->halo, st->tile[0], st->tile[1], st->tile[2]);
        PRINTF(e, " * (ceil(nx/%d), ceil(ny/%d), %s); the arguments are the parameters without the grid\n",
               st->tile[0], st->tile[1], st->dims == 3 ? rk__tp_format(e->ctx, "ceil(nz/%d)", st->tile[2]) : "1");
        PRINTF(e, " * position, then nx, ny%s. */\n", st->dims == 3 ? ", nz" : "");
    }
    function_head(e, fn);
    put(e, " {\n");
    e->indent = 1;
    if (fn->entry_kind == RK_TRANSPILE_STENCIL)
        stencil_body(e, fn);
    else
        stmt(e, fn->body->body);
    e->indent = 0;
    put(e, "}\n\n");
    e->fn = NULL;
    e->st = NULL;
}

/* Which builtins the program uses decides which helpers to emit. */
static void scan(emitter *e, tp_node *n, int depth) {
    for (; n && depth < 4 * TP_MAX_EXPR_DEPTH; n = n->next) {
        if (n->kind == ND_BUILTIN) e->used[n->builtin] = true;
        scan(e, n->lhs, depth + 1);
        scan(e, n->rhs, depth + 1);
        scan(e, n->cond, depth + 1);
        scan(e, n->then, depth + 1);
        scan(e, n->els, depth + 1);
        scan(e, n->init, depth + 1);
        scan(e, n->body, depth + 1);
        if (n->kind != ND_SWITCH) scan(e, n->args, depth + 1);
    }
}

void rk__tp_emit_cuda(tp_ctx *ctx, tp_program *prog, tp_buf *out) {
    emitter e = {.ctx = ctx, .out = out};
    bool any_stencil = false;
    tp_buf kinds;
    rk__tp_buf_init(&kinds, ctx);
    for (tp_obj *fn = prog->functions; fn; fn = fn->next) {
        if (fn->body) scan(&e, fn->body, 0);
        if (fn->entry_kind == RK_TRANSPILE_STENCIL) any_stencil = true;
        if (fn->entry_kind == RK_TRANSPILE_HANDLER) e.handlers++;
        if (fn->entry_kind != RK_TRANSPILE_AUTO && is_reserved(fn->name))
            rk__tp_error(ctx, fn->tok, "'%s' cannot name a kernel: it is reserved in CUDA C++", fn->name);
        rk__tp_note_entry_point(&kinds, fn);
    }
    for (tp_item *it = prog->items; it; it = it->next)
        if (it->kind == IT_VAR && it->obj->init) scan(&e, it->obj->init, 0);

    PRINTF(&e, "/* Generated by the ringkernel transpiler from %s (target: CUDA C++).\n", rk__tp_source_base_name(ctx));
    PRINTF(&e, " * Entry points: %s. Do not edit; edit the source and run rk transpile. */\n\n", kinds.data);
    if (any_stencil)
        put(&e, "__device__ static inline int rk__clamp(int v, int n) { return v < 0 ? 0 : (v >= n ? n - 1 : v); }\n\n");
    if (e.used[TP_B_GRID_SYNC])
        put(&e, "/* grid_sync(): a barrier across the whole grid, for cooperative launches (all blocks\n"
                " * resident). Thread 0 of each block arrives on a counter; the last to arrive resets it\n"
                " * and advances the generation the others wait for. The fences publish each block's\n"
                " * writes before it arrives and make the others' visible after it leaves. */\n"
                "__device__ unsigned int rk__grid_barrier[2]; /* arrivals, generation */\n"
                "__device__ static inline void rk__grid_sync(void) {\n"
                "    __syncthreads();\n"
                "    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {\n"
                "        volatile unsigned int *generation = &rk__grid_barrier[1];\n"
                "        unsigned int blocks = gridDim.x * gridDim.y * gridDim.z, seen = *generation;\n"
                "        __threadfence();\n"
                "        if (atomicAdd(&rk__grid_barrier[0], 1u) == blocks - 1u) {\n"
                "            atomicExch(&rk__grid_barrier[0], 0u);\n"
                "            __threadfence();\n"
                "            atomicAdd(&rk__grid_barrier[1], 1u);\n"
                "        } else {\n"
                "            while (*generation == seen) {\n"
                "            }\n"
                "        }\n"
                "        __threadfence();\n"
                "    }\n"
                "    __syncthreads();\n"
                "}\n\n");
    for (size_t i = 0; i < sizeof memory_words / sizeof memory_words[0]; i++)
        if (e.used[memory_words[i].id]) memory_word_helper(&e, &memory_words[i]);
    if (e.used[TP_B_DYNAMIC_SHARED])
        put(&e, "__device__ static inline void *rk__dynamic_shared(void) {\n"
                "    extern __shared__ unsigned char rk__dynamic_smem[];\n"
                "    return rk__dynamic_smem;\n}\n\n");

    for (tp_item *it = prog->items; it; it = it->next) {
        switch (it->kind) {
        case IT_STRUCT:
            struct_def(&e, it->struct_ty);
            break;
        case IT_VAR:
            global_var(&e, it->obj);
            break;
        case IT_STATIC_ASSERT:
            e.indent = 0;
            stmt(&e, it->node);
            put(&e, "\n");
            break;
        case IT_FUNC:
            /* node is set on the item where the body was parsed; other items
             * are prototypes. */
            function(&e, it->obj, it->node != NULL);
            break;
        }
    }
}
