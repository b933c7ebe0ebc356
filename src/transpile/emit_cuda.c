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
 * template (src/device/cuda/ring.cu) calls through RK_HANDLER_FN.
 * Expressions are in emit_cuda_expr.c. */
#include "emit_cuda.h"

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
const char *rk__cuda_obj_name(emitter *e, tp_obj *o) {
    if (!o->emit_name) o->emit_name = rk__tp_cuda_name(e->ctx, o->name);
    return o->emit_name;
}

const char *rk__cuda_member_name(emitter *e, tp_member *m) {
    if (!m->emit_name) m->emit_name = rk__tp_cuda_name(e->ctx, rk__tp_strndup(e->ctx, m->name->loc, (size_t)m->name->len));
    return m->emit_name;
}

/* ---- memory-word helpers ---------------------------------------------------------- */

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
void rk__cuda_declaration(emitter *e, const tp_type *ty, const char *name) {
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

/* ---- statements -------------------------------------------------------------------- */

static void stmt(emitter *e, tp_node *n);

static void decl_stmt(emitter *e, tp_node *n) {
    line_start(e);
    if (n->obj->is_shared) put(e, "__shared__ ");
    rk__cuda_declaration(e, n->obj->ty, rk__cuda_obj_name(e, n->obj));
    if (n->init) {
        put(e, " = ");
        if (n->init->kind == ND_INIT_LIST)
            rk__cuda_init_list(e, n->init);
        else
            rk__cuda_expr(e, n->init, P_ASSIGN);
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
            rk__cuda_declaration(e, n->init->obj->ty, rk__cuda_obj_name(e, n->init->obj));
            if (n->init->init) {
                put(e, " = ");
                if (n->init->init->kind == ND_INIT_LIST)
                    rk__cuda_init_list(e, n->init->init);
                else
                    rk__cuda_expr(e, n->init->init, P_ASSIGN);
            }
        } else {
            rk__cuda_expr(e, n->init->lhs, P_COMMA);
        }
    }
    put(e, ";");
    if (n->cond) {
        put(e, " ");
        rk__cuda_expr(e, n->cond, P_COMMA);
    }
    put(e, ";");
    if (n->inc) {
        put(e, " ");
        rk__cuda_expr(e, n->inc, P_COMMA);
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
            rk__cuda_expr(e, n->lhs, P_COMMA);
            put(e, ";\n");
            break;
        case ND_DECL:
            decl_stmt(e, n);
            break;
        case ND_IF:
            line_start(e);
            put(e, "if (");
            rk__cuda_expr(e, n->cond, P_COMMA);
            put(e, ") ");
            body(e, n->then);
            /* Its own cursor: the statement walk goes on from n->next. */
            tp_node *arm = n;
            while (arm->els && arm->els->kind == ND_IF && !arm->els->next) {
                arm = arm->els;
                put(e, " else if (");
                rk__cuda_expr(e, arm->cond, P_COMMA);
                put(e, ") ");
                body(e, arm->then);
            }
            if (arm->els) {
                put(e, " else ");
                body(e, arm->els);
            }
            put(e, "\n");
            break;
        case ND_FOR:
            for_stmt(e, n);
            break;
        case ND_WHILE:
            line_start(e);
            put(e, "while (");
            rk__cuda_expr(e, n->cond, P_COMMA);
            put(e, ") ");
            body(e, n->then);
            put(e, "\n");
            break;
        case ND_DO:
            line_start(e);
            put(e, "do ");
            body(e, n->then);
            put(e, " while (");
            rk__cuda_expr(e, n->cond, P_COMMA);
            put(e, ");\n");
            break;
        case ND_SWITCH:
            line_start(e);
            put(e, "switch (");
            rk__cuda_expr(e, n->cond, P_COMMA);
            put(e, ") ");
            body(e, n->body);
            put(e, "\n");
            break;
        case ND_CASE: case ND_DEFAULT:
            e->indent--;
            line_start(e);
            if (n->kind == ND_CASE) {
                put(e, "case ");
                rk__cuda_integer(e, n->ival, n->ty ? n->ty : &rk__tp_ty_long);
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
                rk__cuda_expr(e, n->lhs, P_COMMA);
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
            rk__cuda_expr(e, n->lhs, P_ASSIGN);
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
        rk__cuda_declaration(e, m->ty, rk__cuda_member_name(e, m));
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
    rk__cuda_declaration(e, var->ty, rk__cuda_obj_name(e, var));
    if (var->init) {
        put(e, " = ");
        if (var->init->kind == ND_INIT_LIST)
            rk__cuda_init_list(e, var->init);
        else
            rk__cuda_expr(e, var->init, P_ASSIGN);
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
        rk__cuda_declaration(e, p->ty, p->name ? rk__cuda_obj_name(e, p) : NULL);
    }
    if (first && !skip_pos) put(e, "void");
}

static void function_head(emitter *e, tp_obj *fn) {
    switch (fn->entry_kind) {
    case RK_TRANSPILE_GLOBAL:
        put(e, "extern \"C\" __global__ ");
        if (fn->block[0]) {
            PRINTF(e, "void __launch_bounds__(%d) ", fn->block[0] * fn->block[1] * fn->block[2]);
            put(e, rk__cuda_obj_name(e, fn));
            put(e, "(");
            params(e, fn, false);
            put(e, ")");
            return;
        }
        break;
    case RK_TRANSPILE_STENCIL:
        PRINTF(e, "extern \"C\" __global__ void __launch_bounds__(%d) ",
               fn->stencil->tile[0] * fn->stencil->tile[1] * fn->stencil->tile[2]);
        put(e, rk__cuda_obj_name(e, fn));
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
    rk__cuda_declaration(e, ret, NULL);
    PRINTF(e, " %s(", rk__cuda_obj_name(e, fn));
    params(e, fn, false);
    put(e, ")");
}

/* The tiled stencil kernel around the user's body (emit_stencil.c). */
static void tile_declare(void *e, const tp_type *ty, const char *name) { rk__cuda_declaration(e, ty, name); }
static const char *tile_name(void *e, tp_obj *o) { return rk__cuda_obj_name(e, o); }
static void tile_body(void *e, tp_node *n) { stmt(e, n); }

static void stencil_body(emitter *e, tp_obj *fn) {
    const tp_tile_target cuda = {
        .ctx = e->ctx, .out = e->out, .indent = &e->indent, .emitter = e,
        .shared = "__shared__ ", .thread_id = "threadIdx", .block_id = "blockIdx", .clamp = "rk__clamp",
        .barrier = "__syncthreads();\n",
        .load_comment = {"/* Every thread helps load the tile and its halo; cells outside the grid\n",
                         " * read the nearest cell on the edge (clamp-to-edge). */\n"},
        .declare = tile_declare, .name = tile_name, .body = tile_body,
    };
    rk__tp_emit_tiled_stencil(&cuda, fn->stencil, fn->body->body);
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
        scan(e, n->inc, depth + 1);
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
    if (e.used[TP_B_RK_EMIT])
        put(&e, "/* rk_emit: the CUDA ring kernel template (src/device/cuda/channel.cu) defines it. */\n"
                "__device__ int rk__emit(unsigned port, const void *message, unsigned size);\n\n");
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
