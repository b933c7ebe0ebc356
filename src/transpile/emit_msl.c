/* The MSL emitter: the typed tree as Metal Shading Language for
 * MTLDevice newLibraryWithSource (src/metal/).
 *
 * Kernels are `kernel` functions: a pointer parameter is a device buffer
 * ([[buffer(i)]] in parameter order), any other parameter is read from a
 * constant buffer at its index and copied into a local of the C name, then
 * come the thread's position attributes. Metal has no globals for those, so a
 * helper that reads them (directly or through its callees) takes them as a
 * trailing `rk__ids rk__id`. Every pointer carries the address space of what
 * it points at (emit_msl_space.c). Stencil kernels load their tile and halo
 * into threadgroup memory, as the CUDA ones do into shared memory. A handler
 * becomes an ordinary function int name(device const Req *, device Resp *,
 * device State *), followed by its relaunch ring kernel rk_ring_<name>: Metal
 * has no persistent kernels, so the host queues requests in device buffers
 * and dispatches the ring kernel per batch; it applies the handler to every
 * queued message in order. Metal has no double and no 64-bit atomics, and no
 * barrier across threadgroups: programs that need them are refused with a
 * diagnostic naming the MSL target. Expressions are in emit_msl_expr.c,
 * statements in emit_msl_stmt.c. */
#include "emit_msl.h"

/* ---- names ------------------------------------------------------------------------ */

/* C++ keywords, Metal's address spaces, types and the metal:: functions a C
 * name could collide with (the output says `using namespace metal`). */
static const char *const reserved[] = {
    "abs", "alignas", "alignof", "all", "and", "and_eq", "any", "as_type", "asm", "atomic_bool", "atomic_float",
    "atomic_int", "atomic_uint", "bitand", "bitor", "bool2", "bool3", "bool4", "catch", "char16_t", "char2", "char3",
    "char32_t", "char4", "char8_t", "clamp", "class", "clz", "compl", "concept", "const_cast", "constant", "constexpr",
    "cross", "ctz", "decltype", "degrees", "delete", "device", "distance", "dot", "dynamic_cast", "explicit", "export",
    "extract_bits", "false", "float2", "float3", "float4", "fract", "fragment", "friend", "half", "half2", "half3",
    "half4", "insert_bits", "int2", "int3", "int4", "kernel", "length", "long2", "long3", "long4", "max", "metal",
    "min", "mix", "mutable", "namespace", "new", "noexcept", "normalize", "not", "not_eq", "nullptr", "operator", "or",
    "or_eq", "popcount", "private", "protected", "public", "radians", "register", "reinterpret_cast", "reverse_bits",
    "rotate", "rsqrt", "sampler", "saturate", "select", "short2", "short3", "short4", "sign", "signbit", "smoothstep",
    "static_assert", "static_cast", "step", "template", "texture2d", "this", "thread", "thread_local", "threadgroup",
    "throw", "true", "try", "typeid", "typename", "uchar", "uchar2", "uchar3", "uchar4", "uint", "uint2", "uint3",
    "uint4", "ulong", "ulong2", "ulong3", "ulong4", "ushort", "ushort2", "ushort3", "ushort4", "using", "vertex",
    "virtual", "wchar_t", "xor", "xor_eq",
};

static bool is_reserved(const char *name) {
    for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
        if (reserved[i][0] == name[0] && strcmp(reserved[i], name) == 0) return true;
    return false;
}

static const char *msl_name(tp_ctx *ctx, const char *name) {
    if (!name) return "";
    return is_reserved(name) ? rk__tp_format(ctx, "rk__%s", name) : name;
}

const char *rk__msl_obj_name(msl_emitter *e, tp_obj *o) {
    if (o->definition && o->definition != o) o = o->definition;
    if (!o->emit_name) o->emit_name = msl_name(e->ctx, o->name);
    return o->emit_name;
}

const char *rk__msl_member_name(msl_emitter *e, tp_member *m) {
    if (!m->emit_name) m->emit_name = msl_name(e->ctx, rk__tp_strndup(e->ctx, m->name->loc, (size_t)m->name->len));
    return m->emit_name;
}

/* ---- types -------------------------------------------------------------------------- */

const char *rk__msl_space_name(msl_space s) {
    switch (s) {
    case MS_THREAD: return "thread";
    case MS_CONSTANT: return "constant";
    case MS_THREADGROUP: return "threadgroup";
    default: return "device";
    }
}

static const char *scalar_name(const tp_type *ty) {
    switch (ty->kind) {
    case TY_VOID: return "void";
    case TY_BOOL: return "bool";
    case TY_CHAR: return ty->is_unsigned ? "uchar" : "char";
    case TY_SHORT: return ty->is_unsigned ? "ushort" : "short";
    case TY_INT: case TY_ENUM: return ty->is_unsigned ? "uint" : "int";
    case TY_LONG: return ty->is_unsigned ? "ulong" : "long";
    case TY_FLOAT: return "float";
    case TY_DOUBLE: return "double"; /* refused where it is used (emit_msl_expr.c) */
    default: return NULL;
    }
}

static const char *base_name(const tp_type *ty) {
    if (ty->kind == TY_STRUCT) {
        const tp_type *s = ty->origin ? ty->origin : ty;
        return s->emit_name ? s->emit_name : "rk__unnamed_struct";
    }
    const char *n = scalar_name(ty);
    return n ? n : "int";
}

/* Arrays of scalars and structs, and one level of pointer (the space
 * analysis refuses deeper ones): "device const float *name", "float name[4][4]".
 * `space`: where a pointer points, or MS_CONSTANT for a constant table. */
void rk__msl_declaration(msl_emitter *e, const tp_type *ty, const char *name, msl_space space) {
    tp_buf dims;
    rk__tp_buf_init(&dims, e->ctx);
    bool pointer = false, const_ptr = false;
    const tp_type *t = ty;
    if (t->kind == TY_PTR) {
        pointer = true;
        const_ptr = t->is_const;
        t = t->base;
    }
    for (int guard = 0; guard < 4 * TP_MAX_NESTING && t->kind == TY_ARRAY; guard++) {
        rk__tp_buf_printf(&dims, "[%d]", t->array_len < 0 ? 0 : t->array_len);
        t = t->base;
    }
    if (pointer) MSL_PRINTF(e, "%s ", rk__msl_space_name(space == MS_NONE || space == MS_CONFLICT ? MS_DEVICE : space));
    if (t->is_const && space != MS_CONSTANT) msl_put(e, "const "); /* constant memory is read-only already */
    if (t->is_volatile) msl_put(e, "volatile ");
    msl_put(e, base_name(t));
    if (pointer) {
        /* A pointer to an array keeps C's parentheses: T (*name)[n]. */
        MSL_PRINTF(e, dims.len ? " (*%s%s)" : " *%s%s", const_ptr ? "const " : "", name ? name : "");
    } else if (name) {
        MSL_PRINTF(e, " %s", name);
    }
    if (dims.len) msl_put(e, dims.data);
}

/* ---- which functions need the thread's position ----------------------------------------- */

static bool reads_ids(msl_emitter *e, const tp_node *n, int depth) {
    for (; n && depth < 4 * TP_MAX_EXPR_DEPTH; n = n->next) {
        if (n->kind == ND_BUILTIN && ((rk__tp_builtins[n->builtin].flags & TP_BF_GRID) || n->builtin == TP_B_LANE_ID))
            return true;
        if (n->kind == ND_CALL && rk__msl_needs_ids(e, n->obj)) return true;
        if (reads_ids(e, n->lhs, depth + 1) || reads_ids(e, n->rhs, depth + 1) || reads_ids(e, n->cond, depth + 1) ||
            reads_ids(e, n->then, depth + 1) || reads_ids(e, n->els, depth + 1) || reads_ids(e, n->init, depth + 1) ||
            reads_ids(e, n->inc, depth + 1) || reads_ids(e, n->body, depth + 1) ||
            (n->kind != ND_SWITCH && reads_ids(e, n->args, depth + 1)))
            return true;
    }
    return false;
}

bool rk__msl_needs_ids(msl_emitter *e, const tp_obj *fn) {
    if (fn->definition) fn = fn->definition;
    const msl_binding *known = rk__msl_find(&e->ids, fn);
    if (known) return known->space == MS_THREAD;
    /* The call graph has no cycles (check.c refuses recursion): memoize "no", then walk. */
    rk__msl_bind(e, &e->ids, fn);
    bool yes = fn->body && reads_ids(e, fn->body, 0);
    rk__msl_find(&e->ids, fn)->space = yes ? MS_THREAD : MS_NONE; /* the walk may have moved the list */
    return yes;
}

/* ---- file-scope items ---------------------------------------------------------------------- */

static void struct_def(msl_emitter *e, tp_type *ty) {
    const char *name = ty->emit_name ? ty->emit_name : "rk__unnamed_struct";
    MSL_PRINTF(e, "struct %s {\n", name);
    for (tp_member *m = ty->members; m; m = m->next) {
        msl_put(e, "    ");
        rk__msl_declaration(e, m->ty, rk__msl_member_name(e, m), MS_DEVICE);
        msl_put(e, ";\n");
    }
    msl_put(e, "};\n");
    /* Layout must match the host's: the same bytes cross the boundary. */
    MSL_PRINTF(e, "static_assert(sizeof(%s) == %d, \"%s: size differs from the host layout\");\n", name, ty->size, name);
    MSL_PRINTF(e, "static_assert(alignof(%s) == %d, \"%s: alignment differs from the host layout\");\n\n", name,
               ty->align, name);
}

static void global_var(msl_emitter *e, tp_obj *var) {
    /* Read-only tables live in the constant address space. */
    msl_put(e, "constant ");
    rk__msl_declaration(e, var->ty, rk__msl_obj_name(e, var), MS_CONSTANT);
    if (var->init) {
        msl_put(e, " = ");
        if (var->init->kind == ND_INIT_LIST)
            rk__msl_init_list(e, var->init);
        else
            rk__msl_expr(e, var->init, MP_ASSIGN);
    }
    msl_put(e, ";\n\n");
}

static void param_decl(msl_emitter *e, tp_obj *p) {
    const char *name = p->name ? rk__msl_obj_name(e, p) : NULL;
    rk__msl_declaration(e, p->ty, name, p->ty->kind == TY_PTR ? rk__msl_obj_space(e, p) : MS_NONE);
}

static const char position_params[] =
    "uint3 rk__tid [[thread_position_in_threadgroup]], uint3 rk__bid [[threadgroup_position_in_grid]], "
    "uint3 rk__bdim [[threads_per_threadgroup]], uint3 rk__gdim [[threadgroups_per_grid]]";

/* A kernel's buffers: pointers as device buffers, other parameters from
 * constant buffers (copied into locals by kernel_locals). */
static int kernel_params(msl_emitter *e, tp_obj *fn) {
    int index = 0;
    for (tp_obj *p = fn->params; p; p = p->next) {
        if (p->ty->kind == TY_GRID_POS) continue;
        if (p->ty->kind == TY_PTR) {
            param_decl(e, p);
        } else {
            msl_put(e, "constant ");
            rk__msl_declaration(e, rk__tp_unqual(p->ty), NULL, MS_NONE);
            MSL_PRINTF(e, " &rk__arg_%d", index);
        }
        MSL_PRINTF(e, " [[buffer(%d)]], ", index++);
    }
    return index;
}

static void kernel_locals(msl_emitter *e, tp_obj *fn) {
    int index = 0;
    if (rk__msl_needs_ids(e, fn)) msl_put(e, "    const rk__ids rk__id = {rk__tid, rk__bid, rk__bdim, rk__gdim};\n");
    for (tp_obj *p = fn->params; p; p = p->next) {
        if (p->ty->kind == TY_GRID_POS) continue;
        if (p->ty->kind != TY_PTR && p->name && rk__tp_unqual(p->ty)->kind == TY_STRUCT) {
            /* A struct has no copy from constant to thread memory (its
             * implicit constructors take thread references): copy its bytes. */
            const char *name = rk__msl_obj_name(e, p);
            msl_put(e, "    ");
            rk__msl_declaration(e, rk__tp_unqual(p->ty), name, MS_NONE);
            msl_put(e, ";\n");
            MSL_PRINTF(e,
                       "    for (uint rk__k = 0; rk__k < sizeof(%s); rk__k++) ((thread uchar *)&%s)[rk__k] = "
                       "((constant uchar *)&rk__arg_%d)[rk__k];\n",
                       name, name, index);
        } else if (p->ty->kind != TY_PTR && p->name) {
            msl_put(e, "    ");
            rk__msl_declaration(e, p->ty, rk__msl_obj_name(e, p), MS_NONE);
            MSL_PRINTF(e, " = rk__arg_%d;\n", index);
        }
        index++;
    }
}

static void function_head(msl_emitter *e, tp_obj *fn) {
    rk__msl_declaration(e, fn->ty->return_ty, NULL, rk__msl_obj_space(e, fn));
    MSL_PRINTF(e, " %s(", rk__msl_obj_name(e, fn));
    bool first = true;
    for (tp_obj *p = fn->params; p; p = p->next, first = false) {
        if (!first) msl_put(e, ", ");
        param_decl(e, p);
    }
    if (rk__msl_needs_ids(e, fn)) msl_put(e, first ? "rk__ids rk__id" : ", rk__ids rk__id");
    msl_put(e, ")");
}

/* The tiled stencil kernel around the user's body (emit_stencil.c). */
static void tile_declare(void *e, const tp_type *ty, const char *name) { rk__msl_declaration(e, ty, name, MS_NONE); }
static const char *tile_name(void *e, tp_obj *o) { return rk__msl_obj_name(e, o); }
static void tile_body(void *e, tp_node *n) { rk__msl_stmt(e, n); }

static void stencil_body(msl_emitter *e, tp_obj *fn) {
    const tp_tile_target msl = {
        .ctx = e->ctx, .out = e->out, .indent = &e->indent, .emitter = e,
        .shared = "threadgroup ", .thread_id = "rk__tid", .block_id = "rk__bid", .clamp = "rk__clamp_edge",
        .barrier = "metal::threadgroup_barrier(metal::mem_flags::mem_threadgroup);\n",
        .load_comment = {"/* Every thread helps load the tile and its halo into threadgroup memory; cells\n",
                         " * outside the grid read the nearest cell on the edge (clamp-to-edge). */\n"},
        .declare = tile_declare, .name = tile_name, .body = tile_body,
    };
    rk__tp_emit_tiled_stencil(&msl, fn->stencil, fn->body->body);
}

static void kernel(msl_emitter *e, tp_obj *fn) {
    if (fn->entry_kind == RK_TRANSPILE_STENCIL) {
        tp_stencil *st = fn->stencil;
        MSL_PRINTF(e, "/* Stencil '%s': %d-D, tile %dx%d%s, halo %d. Dispatch threadgroups of (%d, %d, %d) threads,\n",
                   fn->name, st->dims, st->tile[0], st->tile[1],
                   st->dims == 3 ? rk__tp_format(e->ctx, "x%d", st->tile[2]) : "", st->halo, st->tile[0], st->tile[1],
                   st->tile[2]);
        MSL_PRINTF(e, " * (ceil(nx/%d), ceil(ny/%d), %s) of them; the buffers are the parameters without the grid\n",
                   st->tile[0], st->tile[1], st->dims == 3 ? rk__tp_format(e->ctx, "ceil(nz/%d)", st->tile[2]) : "1");
        MSL_PRINTF(e, " * position, then nx, ny%s. */\n", st->dims == 3 ? ", nz" : "");
    }
    int threads = fn->entry_kind == RK_TRANSPILE_STENCIL
                      ? fn->stencil->tile[0] * fn->stencil->tile[1] * fn->stencil->tile[2]
                      : fn->block[0] * fn->block[1] * fn->block[2];
    if (threads) MSL_PRINTF(e, "[[max_total_threads_per_threadgroup(%d)]] ", threads);
    MSL_PRINTF(e, "kernel void %s(", rk__msl_obj_name(e, fn));
    int index = kernel_params(e, fn);
    if (fn->entry_kind == RK_TRANSPILE_STENCIL) {
        MSL_PRINTF(e, "constant int &rk__nx [[buffer(%d)]], constant int &rk__ny [[buffer(%d)]], ", index, index + 1);
        if (fn->stencil->dims == 3) MSL_PRINTF(e, "constant int &rk__nz [[buffer(%d)]], ", index + 2);
    }
    MSL_PRINTF(e, "%s) {\n", position_params);
    kernel_locals(e, fn);
    e->indent = 1;
    if (fn->entry_kind == RK_TRANSPILE_STENCIL)
        stencil_body(e, fn);
    else
        rk__msl_stmt(e, fn->body->body);
    e->indent = 0;
    msl_put(e, "}\n\n");
}

/* The relaunch ring kernel that applies handler fn to a batch of queued messages. */
static void ring_kernel(msl_emitter *e, tp_obj *fn) {
    tp_obj *req = fn->params, *resp = req->next, *state = resp->next;
    int req_size = rk__tp_unqual(req->ty->base)->kind == TY_VOID ? 0 : req->ty->base->size;
    int resp_size = rk__tp_unqual(resp->ty->base)->kind == TY_VOID ? 0 : resp->ty->base->size;
    const char *name = rk__msl_obj_name(e, fn);
    MSL_PRINTF(e,
               "/* Relaunch ring kernel of handler '%s' (%d-byte requests, %d-byte replies). Dispatch one\n"
               " * thread per batch: it handles the queued messages head..tail in order (the state is\n"
               " * shared) and publishes the new head. Buffers: 0 control block, 1 requests and\n"
               " * 2 replies (capacity slots each), 3 the handler's status per slot, 4 the state. */\n",
               fn->name, req_size, resp_size);
    MSL_PRINTF(e, "kernel void rk_ring_%s(device rk__ring_control *rk__ctl [[buffer(0)]], "
                  "device const uchar *rk__in [[buffer(1)]], device uchar *rk__out [[buffer(2)]], "
                  "device int *rk__status [[buffer(3)]], device uchar *rk__state [[buffer(4)]], %s) {\n",
               name, position_params);
    if (rk__msl_needs_ids(e, fn)) msl_put(e, "    const rk__ids rk__id = {rk__tid, rk__bid, rk__bdim, rk__gdim};\n");
    msl_put(e, "    if (rk__tid.x != 0u || rk__tid.y != 0u || rk__tid.z != 0u || rk__bid.x != 0u || rk__bid.y != 0u ||\n"
               "        rk__bid.z != 0u)\n"
               "        return;\n"
               "    rk__ctl->dispatches += 1u;\n"
               "    if (rk__ctl->terminate != 0u || rk__ctl->active == 0u || rk__ctl->capacity == 0u) return;\n"
               "    uint rk__head = rk__ctl->head;\n"
               "    const uint rk__tail = rk__ctl->tail;\n"
               "    for (; rk__head != rk__tail; rk__head++) {\n"
               "        const uint rk__slot = rk__head % rk__ctl->capacity;\n");
    MSL_PRINTF(e, "        device uchar *rk__reply = rk__out + (ulong)rk__slot * %du;\n", resp_size);
    MSL_PRINTF(e, "        for (uint rk__b = 0u; rk__b < %du; rk__b++) rk__reply[rk__b] = 0;\n", resp_size);
    MSL_PRINTF(e, "        const int rk__rc = %s((", name);
    rk__msl_declaration(e, req->ty, NULL, MS_DEVICE);
    MSL_PRINTF(e, ")(rk__in + (ulong)rk__slot * %du), (", req_size);
    rk__msl_declaration(e, resp->ty, NULL, MS_DEVICE);
    msl_put(e, ")rk__reply, (");
    rk__msl_declaration(e, state->ty, NULL, MS_DEVICE);
    MSL_PRINTF(e, ")rk__state%s);\n", rk__msl_needs_ids(e, fn) ? ", rk__id" : "");
    msl_put(e, "        rk__status[rk__slot] = rk__rc;\n"
               "        rk__ctl->processed += 1u;\n"
               "        if (rk__rc != 0) rk__ctl->errors += 1u;\n"
               "    }\n"
               "    rk__ctl->head = rk__head;\n"
               "}\n\n");
}

static void function(msl_emitter *e, tp_obj *fn, bool definition) {
    e->fn = fn;
    e->st = fn->stencil;
    e->double_reported = false;
    if (fn->entry_kind == RK_TRANSPILE_GLOBAL || fn->entry_kind == RK_TRANSPILE_STENCIL) {
        if (definition) kernel(e, fn);
    } else if (!definition) {
        function_head(e, fn);
        msl_put(e, ";\n\n");
    } else {
        if (fn->entry_kind == RK_TRANSPILE_AUTO) msl_put(e, "static inline ");
        function_head(e, fn);
        msl_put(e, " {\n");
        e->indent = 1;
        rk__msl_stmt(e, fn->body->body);
        e->indent = 0;
        msl_put(e, "}\n\n");
        if (fn->entry_kind == RK_TRANSPILE_HANDLER) ring_kernel(e, fn);
    }
    e->fn = NULL;
    e->st = NULL;
}

/* ---- helpers the program needs ------------------------------------------------------------- */

static void scan(msl_emitter *e, tp_node *n, int depth) {
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

static void helpers(msl_emitter *e, bool any_stencil, bool any_handler) {
    msl_put(e, "/* The thread's position, for helpers that read it (Metal passes it to kernels only). */\n"
               "struct rk__ids {\n    uint3 tid, bid, bdim, gdim;\n};\n\n");
    if (any_stencil)
        msl_put(e, "static inline int rk__clamp_edge(int v, int n) { return v < 0 ? 0 : (v >= n ? n - 1 : v); }\n\n");
    if (e->used[TP_B_FFS_U32])
        msl_put(e, "static inline int rk__ffs(uint v) { return v == 0u ? 0 : (int)metal::ctz(v) + 1; }\n\n");
    if (e->used[TP_B_ATOMIC_CAS_I32] || e->used[TP_B_ATOMIC_CAS_U32]) {
        /* A strong compare-exchange returning the old value, as CUDA's atomicCAS. */
        static const char *const spaces[] = {"device", "threadgroup"};
        static const char *const types[][2] = {{"int", "atomic_int"}, {"uint", "atomic_uint"}};
        for (int s = 0; s < 2; s++)
            for (int t = 0; t < 2; t++)
                MSL_PRINTF(e,
                           "static inline %s rk__atomic_cas(%s %s *p, %s expected, %s desired) {\n"
                           "    const %s want = expected;\n"
                           "    while (!metal::atomic_compare_exchange_weak_explicit((%s metal::%s *)p, &expected, desired,\n"
                           "                                                         metal::memory_order_relaxed,\n"
                           "                                                         metal::memory_order_relaxed))\n"
                           "        if (expected != want) return expected;\n"
                           "    return want;\n}\n\n",
                           types[t][0], spaces[s], types[t][0], types[t][0], types[t][0], types[t][0], spaces[s],
                           types[t][1]);
    }
    if (e->used[TP_B_ATOMIC_ADD_U64] && e->only_handlers)
        msl_put(e, "/* Metal has no 64-bit atomic add; a handler runs on the ring kernel's one thread. */\n"
                   "static inline ulong rk__add_u64(device ulong *p, ulong v) {\n"
                   "    const ulong old = *p;\n    *p = old + v;\n    return old;\n}\n\n");
    if (any_handler)
        msl_put(e, "/* The relaunch ring kernels' control block, in a device buffer shared with the host. */\n"
                   "struct rk__ring_control {\n"
                   "    uint active;     /* host: 0 keeps messages queued */\n"
                   "    uint terminate;  /* host: 1 stops handling for good */\n"
                   "    uint capacity;   /* slots in each queue */\n"
                   "    uint head;       /* kernel: next message to handle */\n"
                   "    uint tail;       /* host: one past the last message queued */\n"
                   "    uint processed;  /* kernel: messages handled, over all dispatches */\n"
                   "    uint errors;     /* kernel: of those, how many returned non-zero */\n"
                   "    uint dispatches; /* kernel: dispatches seen */\n"
                   "};\n\n");
}

void rk__tp_emit_msl(tp_ctx *ctx, tp_program *prog, tp_buf *out) {
    msl_emitter e = {.ctx = ctx, .out = out, .only_handlers = true};
    bool any_stencil = false, any_handler = false;
    tp_buf kinds;
    rk__tp_buf_init(&kinds, ctx);
    for (tp_obj *fn = prog->functions; fn; fn = fn->next) {
        if (fn->body) scan(&e, fn->body, 0);
        if (fn->entry_kind == RK_TRANSPILE_STENCIL) any_stencil = true;
        if (fn->entry_kind == RK_TRANSPILE_HANDLER) any_handler = true;
        if (fn->entry_kind == RK_TRANSPILE_GLOBAL || fn->entry_kind == RK_TRANSPILE_STENCIL) e.only_handlers = false;
        if (fn->entry_kind != RK_TRANSPILE_AUTO && is_reserved(fn->name))
            rk__tp_error(ctx, fn->tok, "'%s' cannot name a kernel: it is reserved in Metal (MSL target)", fn->name);
        rk__tp_note_entry_point(&kinds, fn);
    }
    for (tp_item *it = prog->items; it; it = it->next)
        if (it->kind == IT_VAR && it->obj->init) scan(&e, it->obj->init, 0);
    rk__msl_infer_spaces(&e, prog);

    MSL_PRINTF(&e, "/* Generated by the ringkernel transpiler from %s (target: Metal Shading Language).\n",
               rk__tp_source_base_name(ctx));
    MSL_PRINTF(&e, " * Entry points: %s. Do not edit; edit the source and run rk transpile. */\n\n", kinds.data);
    msl_put(&e, "#include <metal_stdlib>\nusing namespace metal;\n\n");
    helpers(&e, any_stencil, any_handler);
    for (tp_item *it = prog->items; it; it = it->next) {
        switch (it->kind) {
        case IT_STRUCT: struct_def(&e, it->struct_ty); break;
        case IT_VAR: global_var(&e, it->obj); break;
        case IT_STATIC_ASSERT:
            e.indent = 0;
            rk__msl_stmt(&e, it->node);
            msl_put(&e, "\n");
            break;
        case IT_FUNC: function(&e, it->obj, it->node != NULL); break;
        }
    }
}
