/* The WGSL emitter: the typed tree as a WGSL module for the WebGPU backend.
 *
 * WGSL converts nothing implicitly, so every conversion C makes silently is
 * written out (i32(x), f32(x), select(0, 1, b) for a comparison used as an
 * int, x != 0 for an int used as a condition). WGSL has no general pointers:
 * a kernel's buffer parameters become module-scope storage variables, pointer
 * parameters of helpers are ptr<function, T> to local variables, and
 * RK_SHARED variables are var<workgroup> at module scope. WGSL has no 8-,
 * 16- or 64-bit integers nor f64: declarations of those types are refused
 * (double arithmetic written as literals and conversions runs in f32).
 *
 * Entry points follow the WebGPU backend's launch convention
 * (docs/webgpu.md): a kernel's pointer parameters bind, in order, to
 * @group(0) @binding(0..), its scalar parameters are members of one uniform
 * struct at the next binding. Global kernels get @workgroup_size(64) (8x8
 * when they use a y index, 4x4x4 with z); stencils get their tile and read
 * neighbours straight from storage with clamp-to-edge. A handler becomes a
 * WGSL function over ptr<function, T> plus an adapter rk_handle_NAME(req,
 * resp) that the WebGPU ring template (src/webgpu/ring_template.wgsl) calls:
 * it loads the request and state from the template's rk_in / rk_state words
 * at the host's byte offsets and stores the reply into rk_out, so message
 * layouts are the host's by construction (and checked to be WGSL's too). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp.h"

typedef enum name_kind {
    NK_PLAIN = 0,  /* a WGSL variable or value with this name */
    NK_BUFFER,     /* module-scope storage array: p[i], *p = p[0] */
    NK_PTR_ELEM,   /* ptr<function, T> to one value: *p, p[0], p->m */
    NK_PTR_ARRAY,  /* ptr<function, array<T, N>>: p[i] = (*p)[i] */
    NK_DROPPED,    /* the stencil grid position: no WGSL value */
} name_kind;

typedef struct name_entry {
    const tp_obj *obj;
    const char *name;
    name_kind kind;
    bool atomic; /* buffer or shared variable whose elements are atomic<T> */
    const char *offset; /* NK_BUFFER through a local pointer: the index it starts at */
} name_entry;

typedef struct emitter {
    tp_ctx *ctx;
    tp_buf *out;
    int indent;
    tp_obj *fn;
    tp_stencil *st;
    name_entry *names;
    int name_count, name_cap;
    int loop_var;        /* counter for generated loop variables */
    bool used[TP_B_COUNT];
    const tp_obj **atomic_roots; /* buffers/shared vars used by atomics */
    int atomic_count;
    /* Pointer parameters of helpers that receive whole arrays: the array type. */
    const tp_obj **array_params;
    tp_type **array_param_types;
    int array_param_count;
    const tp_obj *shared_fn; /* whose RK_SHARED locals declare_shared is naming */
    const tp_obj *find_obj;  /* mentions(): what to look for, and whether it was seen */
    bool found_obj;
    bool uses_int64; /* the output needs the 64-bit integer helpers */
    const tp_type *checked[64]; /* structs whose layout was checked, and the verdict */
    bool checked_ok[64];
    int checked_count;
} emitter;

static void put(emitter *e, const char *s) { rk__tp_buf_puts(e->out, s); }
#define PRINTF(e, ...) rk__tp_buf_printf((e)->out, __VA_ARGS__)

static void line_start(emitter *e) {
    for (int i = 0; i < e->indent; i++) put(e, "    ");
}

static void error(emitter *e, const tp_token *tok, const char *what) {
    rk__tp_error(e->ctx, tok, "%s (WGSL target)", what);
}

/* ---- names -------------------------------------------------------------------------- */

/* WGSL keywords, reserved words, and builtins the output itself calls. */
static const char *const reserved[] = {
    "abs", "acos", "acosh", "active", "alias", "array", "as", "asin", "asinh", "asm", "async", "atan", "atan2",
    "atanh", "atomic", "atomicAdd", "atomicAnd", "atomicCompareExchangeWeak", "atomicExchange", "atomicLoad",
    "atomicMax", "atomicMin", "atomicOr", "atomicStore", "atomicSub", "atomicXor", "attribute", "auto", "await",
    "become", "bitcast", "bool", "cast", "catch", "ceil", "clamp", "class", "co_await", "co_return", "co_yield",
    "coherent", "column_major", "common", "compile", "compile_fragment", "concept", "const_assert", "const_cast",
    "consteval", "constexpr", "constinit", "continuing", "cos", "cosh", "crate", "debugger", "decltype",
    "delete", "demote", "demote_to_helper", "diagnostic", "discard", "dot", "enable", "exp", "exp2", "explicit",
    "export", "extends", "extern", "external", "f16", "f32", "false", "fallthrough", "filter", "final", "finally",
    "floor", "fma", "fn", "friend", "from", "fxgroup", "get", "goto", "groupshared", "highp", "i32", "impl",
    "implements", "import", "inline", "instanceof", "interface", "layout", "length", "let", "log", "log2", "loop",
    "lowp", "macro", "macro_rules", "mat2x2", "mat2x3", "mat2x4", "mat3x2", "mat3x3", "mat3x4", "mat4x2",
    "mat4x3", "mat4x4", "match", "max", "mediump", "meta", "min", "mod", "module", "move", "mut", "mutable",
    "namespace", "new", "nil", "noexcept", "noinline", "nointerpolation", "non_coherent", "noncoherent",
    "noperspective", "null", "nullptr", "of", "operator", "override", "package", "packoffset", "partition",
    "pass", "patch", "pixelfragment", "pow", "precise", "precision", "premerge", "priv", "protected", "ptr", "pub",
    "public", "readonly", "ref", "regardless", "register", "reinterpret_cast", "require", "requires", "resource",
    "restrict", "round", "sampler", "sampler_comparison", "select", "self", "set", "shared", "sign", "sin", "sinh",
    "smooth", "snorm", "sqrt", "static", "static_assert", "static_cast", "std", "storageBarrier", "subroutine",
    "super", "tan", "tanh", "target", "template", "this", "thread_local", "throw", "trait", "true", "trunc", "try",
    "type", "typedef", "typeid", "typename", "typeof", "u32", "union", "unless", "unorm", "unsafe", "unsized",
    "use", "using", "var", "varying", "vec2", "vec3", "vec4", "virtual", "volatile", "wgsl", "where", "with",
    "workgroupBarrier", "writeonly", "yield",
};

static const char *wgsl_ident(emitter *e, const char *name) {
    if (!name) return "rk_unnamed";
    bool bad = name[0] == '_' && (name[1] == '_' || name[1] == '\0');
    for (size_t i = 0; !bad && i < sizeof reserved / sizeof reserved[0]; i++)
        if (strcmp(reserved[i], name) == 0) bad = true;
    return bad ? rk__tp_format(e->ctx, "rk_u_%s", name) : name;
}

static name_entry *find_name(emitter *e, const tp_obj *o) {
    for (int i = e->name_count - 1; i >= 0; i--)
        if (e->names[i].obj == o) return &e->names[i];
    return NULL;
}

static name_entry *add_name(emitter *e, const tp_obj *o, const char *name, name_kind kind) {
    if (e->name_count == e->name_cap) {
        int cap = e->name_cap ? e->name_cap * 2 : 64;
        name_entry *v = rk__tp_alloc(e->ctx, sizeof *v * (size_t)cap);
        if (e->name_count) memcpy(v, e->names, sizeof *v * (size_t)e->name_count);
        e->names = v;
        e->name_cap = cap;
    }
    name_entry *n = &e->names[e->name_count++];
    *n = (name_entry){.obj = o, .name = name, .kind = kind};
    /* Only storage buffers and workgroup variables hold WGSL atomics. */
    for (int i = 0; (kind == NK_BUFFER || o->is_shared) && i < e->atomic_count; i++)
        if (e->atomic_roots[i] == o) n->atomic = true;
    return n;
}

static const char *obj_name(emitter *e, const tp_obj *o) {
    name_entry *n = find_name(e, o);
    return n ? n->name : wgsl_ident(e, o->name);
}

static const char *member_name(emitter *e, const tp_member *m) {
    return wgsl_ident(e, rk__tp_strndup(e->ctx, m->name->loc, (size_t)m->name->len));
}

static const char *struct_name(emitter *e, const tp_type *ty) {
    const tp_type *s = ty->origin ? ty->origin : ty;
    return wgsl_ident(e, s->emit_name ? s->emit_name : "rk_unnamed_struct");
}

/* ---- types ----------------------------------------------------------------------------- */

static tp_type *unq(tp_type *t) { return rk__tp_unqual(t); }

/* Is this a type WGSL can hold? Reports the first problem at tok. */
static bool check_type(emitter *e, const tp_type *ty, const tp_token *tok, const char *what) {
    switch (ty->kind) {
    case TY_VOID: case TY_BOOL: case TY_INT: case TY_ENUM: case TY_FLOAT: case TY_GRID_POS: case TY_ERROR:
        return true;
    case TY_DOUBLE:
        rk__tp_warn(e->ctx, tok, "%s: WGSL has no f64; double runs as f32", what);
        return true;
    case TY_CHAR: case TY_SHORT:
        rk__tp_error(e->ctx, tok, "%s: WGSL has no 8- or 16-bit integers; use int32_t or uint32_t (WGSL target)",
                     what);
        return false;
    case TY_LONG: /* emulated as vec2<u32> (low word, high word) */
        return true;
    case TY_PTR: case TY_ARRAY:
        return check_type(e, ty->base, tok, what);
    case TY_STRUCT:
        return true; /* members are checked where the struct is defined */
    case TY_FUNC:
        return true;
    }
    return true;
}

static const char *scalar(const tp_type *ty) {
    switch (ty->kind) {
    case TY_BOOL: return "bool";
    case TY_CHAR: case TY_SHORT: case TY_INT: case TY_ENUM:
        return ty->is_unsigned ? "u32" : "i32";
    case TY_LONG: return "vec2<u32>";
    case TY_FLOAT: case TY_DOUBLE: return "f32";
    default: return NULL;
    }
}

/* The WGSL spelling of a value type. */
static const char *type_name(emitter *e, const tp_type *ty) {
    const char *s = scalar(ty);
    if (s) return s;
    switch (ty->kind) {
    case TY_STRUCT: return struct_name(e, ty);
    case TY_ARRAY:
        return rk__tp_format(e->ctx, "array<%s, %d>", type_name(e, ty->base), ty->array_len < 1 ? 1 : ty->array_len);
    case TY_PTR: return rk__tp_format(e->ctx, "ptr<function, %s>", type_name(e, ty->base));
    default: return "i32";
    }
}

/* WGSL's size and alignment for host-shareable types (scalars and what is
 * built of them): the numbers the host layout has to agree with. */
static void wgsl_layout(const tp_type *ty, int *size, int *align) {
    switch (ty->kind) {
    case TY_ARRAY: {
        int s, a;
        wgsl_layout(ty->base, &s, &a);
        int stride = (s + a - 1) / a * a;
        *size = stride * (ty->array_len < 1 ? 1 : ty->array_len);
        *align = a;
        return;
    }
    case TY_STRUCT: {
        int off = 0, maxa = 1;
        for (tp_member *m = unq((tp_type *)ty)->members; m; m = m->next) {
            int s, a;
            wgsl_layout(m->ty, &s, &a);
            off = (off + a - 1) / a * a + s;
            if (a > maxa) maxa = a;
        }
        *size = (off + maxa - 1) / maxa * maxa;
        *align = maxa;
        return;
    }
    case TY_LONG: /* vec2<u32> */
        *size = 8;
        *align = 8;
        return;
    default:
        *size = 4;
        *align = 4;
        return;
    }
}

/* Members must be 32-bit values (or arrays and structs of them), and each
 * must sit where WGSL puts it: the same bytes cross the host/device line. */
static bool check_struct_once(emitter *e, tp_type *ty);

static bool check_struct(emitter *e, tp_type *ty) {
    const tp_type *key = ty->origin ? ty->origin : ty;
    for (int i = 0; i < e->checked_count; i++)
        if (e->checked[i] == key) return e->checked_ok[i];
    bool ok = check_struct_once(e, ty);
    if (e->checked_count < 64) {
        e->checked[e->checked_count] = key;
        e->checked_ok[e->checked_count++] = ok;
    }
    return ok;
}

static bool check_struct_once(emitter *e, tp_type *ty) {
    bool ok = true;
    int off = 0;
    for (tp_member *m = ty->members; m; m = m->next) {
        const tp_type *leaf = m->ty;
        while (leaf->kind == TY_ARRAY) leaf = leaf->base;
        char *what = rk__tp_format(e->ctx, "member '%.*s' of struct '%s'", m->name->len, m->name->loc, struct_name(e, ty));
        if (leaf->kind == TY_BOOL) {
            rk__tp_error(e->ctx, m->name, "%s: bool has no host-shareable layout in WGSL; use uint32_t (WGSL target)",
                         what);
            ok = false;
            continue;
        }
        if (leaf->kind == TY_DOUBLE) {
            rk__tp_error(e->ctx, m->name, "%s: WGSL has no f64 (WGSL target)", what);
            ok = false;
            continue;
        }
        if (leaf->kind == TY_PTR) {
            rk__tp_error(e->ctx, m->name, "%s: pointers cannot be struct members in WGSL (WGSL target)", what);
            ok = false;
            continue;
        }
        if (!check_type(e, m->ty, m->name, what)) {
            ok = false;
            continue;
        }
        int s, a;
        wgsl_layout(m->ty, &s, &a);
        off = (off + a - 1) / a * a;
        if (off != m->offset) {
            rk__tp_error(e->ctx, m->name, "%s is at byte %d in C but %d in WGSL (WGSL target)", what, m->offset, off);
            ok = false;
        }
        off += s;
    }
    if (ok) {
        int s, a;
        wgsl_layout(ty, &s, &a);
        if (s != ty->size)
            rk__tp_error(e->ctx, ty->def_tok, "struct '%s' is %d bytes in C but %d in WGSL (WGSL target)",
                         struct_name(e, ty), ty->size, s);
    }
    return ok;
}

/* ---- literals ------------------------------------------------------------------------------ */

static void integer(emitter *e, int64_t v, const tp_type *ty) {
    ty = ty->origin ? ty->origin : ty;
    if (ty->kind == TY_BOOL) {
        put(e, v ? "true" : "false");
        return;
    }
    if (ty->kind == TY_FLOAT || ty->kind == TY_DOUBLE) {
        PRINTF(e, "%lld.0f", (long long)v);
        return;
    }
    if (ty->kind == TY_LONG) {
        PRINTF(e, "vec2<u32>(%uu, %uu)", (unsigned)(uint32_t)(uint64_t)v, (unsigned)(uint32_t)((uint64_t)v >> 32));
        return;
    }
    if (ty->is_unsigned) {
        PRINTF(e, "%lluu", (unsigned long long)(uint32_t)v);
        return;
    }
    v = (int32_t)v;
    if (v == INT32_MIN)
        put(e, "(-2147483647i - 1i)");
    else if (v < 0)
        PRINTF(e, "(%lldi)", (long long)v);
    else
        PRINTF(e, "%lldi", (long long)v);
}

static void float_literal(emitter *e, double v) {
    char buf[64];
    snprintf(buf, sizeof buf, "%.9g", (double)(float)v);
    if (!strpbrk(buf, ".eEn")) strcat(buf, ".0");
    if (strchr(buf, 'n') || strchr(buf, 'i')) { /* inf or nan: not WGSL literals */
        put(e, v != v ? "bitcast<f32>(0x7fc00000u)" : v > 0 ? "bitcast<f32>(0x7f800000u)" : "bitcast<f32>(0xff800000u)");
        return;
    }
    if (buf[0] == '-')
        PRINTF(e, "(%sf)", buf);
    else
        PRINTF(e, "%sf", buf);
}

/* The zero of a WGSL type, for initializer lists shorter than their type. */
static void zero_value(emitter *e, const tp_type *ty) { PRINTF(e, "%s()", type_name(e, unq((tp_type *)ty))); }

/* ---- expressions --------------------------------------------------------------------------- */

static void expr(emitter *e, tp_node *n);
static void cond(emitter *e, tp_node *n);
static void as_type(emitter *e, tp_node *n, const tp_type *to);

static bool is_comparison(tp_node_kind k) {
    return k == ND_EQ || k == ND_NE || k == ND_LT || k == ND_LE || k == ND_GT || k == ND_GE || k == ND_LOGAND ||
           k == ND_LOGOR || k == ND_NOT;
}

static const char *binary_op(tp_node_kind k) {
    switch (k) {
    case ND_ADD: return "+";
    case ND_SUB: return "-";
    case ND_MUL: return "*";
    case ND_DIV: return "/";
    case ND_MOD: return "%";
    case ND_BITAND: return "&";
    case ND_BITOR: return "|";
    case ND_BITXOR: return "^";
    case ND_SHL: return "<<";
    case ND_SHR: return ">>";
    case ND_EQ: return "==";
    case ND_NE: return "!=";
    case ND_LT: return "<";
    case ND_LE: return "<=";
    case ND_GT: return ">";
    case ND_GE: return ">=";
    case ND_LOGAND: return "&&";
    case ND_LOGOR: return "||";
    default: return NULL;
    }
}

/* Looks through conversions that do not change a pointer's target (array
 * decay, adding or dropping const). */
static tp_node *strip_ptr_conv(tp_node *n) {
    while ((n->kind == ND_CONV || n->kind == ND_CAST) && (n->ty->kind == TY_PTR) &&
           (n->lhs->ty->kind == TY_PTR || n->lhs->ty->kind == TY_ARRAY))
        n = n->lhs;
    return n;
}

/* Where a pointer expression points. base: the pointer-like thing; add: an
 * index offset (a list of +/- terms) for buffer arithmetic. */
typedef struct ptr_form {
    tp_node *base;
    tp_node *terms[8];
    bool negative[8];
    int nterms;
} ptr_form;

static bool pointer_form(emitter *e, tp_node *n, ptr_form *f) {
    n = strip_ptr_conv(n);
    if ((n->kind == ND_ADD || n->kind == ND_SUB) && n->ty->kind == TY_PTR) {
        tp_node *p = n->lhs, *i = n->rhs;
        if (n->kind == ND_ADD && strip_ptr_conv(p)->ty->kind != TY_PTR && strip_ptr_conv(p)->ty->kind != TY_ARRAY) {
            p = n->rhs;
            i = n->lhs;
        }
        if (!pointer_form(e, p, f)) return false;
        if (f->nterms == 8) return false;
        f->terms[f->nterms] = i;
        f->negative[f->nterms++] = n->kind == ND_SUB;
        return true;
    }
    f->base = n;
    return true;
}

/* Writes the element `index` (NULL = 0) of what pointer expression n points at. */
static void element(emitter *e, tp_node *n, tp_node *index, const tp_token *tok) {
    ptr_form f = {0};
    if (!pointer_form(e, n, &f)) {
        error(e, tok, "pointer arithmetic this complex is not available");
        put(e, "0");
        return;
    }
    tp_node *b = f.base;
    name_entry *ne = b->kind == ND_VAR ? find_name(e, b->obj) : NULL;
    bool indexable = (ne && (ne->kind == NK_BUFFER || ne->kind == NK_PTR_ARRAY)) || b->ty->kind == TY_ARRAY;
    if (!indexable && (f.nterms || index)) {
        /* p[0] and *(p + 0) are fine; anything else has no WGSL meaning. */
        int64_t v = 1;
        bool zero = !f.nterms && index && rk__tp_try_eval(e->ctx, index, &v) && v == 0;
        if (!zero) {
            error(e, tok, "indexing a pointer that does not point into a buffer or an array is not available");
            put(e, "0");
            return;
        }
        index = NULL;
    }
    if (b->kind == ND_ADDR) { /* *&x */
        expr(e, b->lhs);
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
        expr(e, b);
    else {
        error(e, tok, "a pointer that is not a buffer parameter, a local array or a pointer to a local is not available");
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
            as_type(e, f.terms[i], &rk__tp_ty_int);
            first = false;
        }
        if (index) {
            if (!first) put(e, " + ");
            if (!first || unq(index->ty)->kind == TY_LONG)
                as_type(e, index, &rk__tp_ty_int);
            else
                expr(e, index);
        }
    }
    put(e, "]");
}

/* The root variable of an lvalue: buf in buf[i], s in s.a[2]. */
static const tp_obj *lvalue_root(tp_node *n) {
    for (;;) {
        n = strip_ptr_conv(n);
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

static bool is_atomic_lvalue(emitter *e, tp_node *n) {
    const tp_obj *root = lvalue_root(n);
    name_entry *ne = root ? find_name(e, root) : NULL;
    return ne && ne->atomic;
}

/* An lvalue as a WGSL reference expression. */
static void lvalue(emitter *e, tp_node *n) {
    switch (n->kind) {
    case ND_VAR: {
        name_entry *ne = find_name(e, n->obj);
        if (ne && ne->kind == NK_PTR_ELEM) {
            PRINTF(e, "(*%s)", ne->name);
            return;
        }
        put(e, obj_name(e, n->obj));
        return;
    }
    case ND_INDEX: {
        bool lhs_is_ptr = n->lhs->ty->kind == TY_PTR || n->lhs->ty->kind == TY_ARRAY;
        tp_node *p = lhs_is_ptr ? n->lhs : n->rhs, *i = lhs_is_ptr ? n->rhs : n->lhs;
        p = strip_ptr_conv(p);
        if (p->ty->kind == TY_ARRAY && p->kind != ND_VAR) {
            /* an array member or element: s.a[i] */
            lvalue(e, p);
            put(e, "[");
            if (unq(i->ty)->kind == TY_LONG)
                as_type(e, i, &rk__tp_ty_int);
            else
                expr(e, i);
            put(e, "]");
            return;
        }
        element(e, p, i, n->tok);
        return;
    }
    case ND_DEREF:
        element(e, n->lhs, NULL, n->tok);
        return;
    case ND_MEMBER:
        lvalue(e, n->lhs);
        PRINTF(e, ".%s", member_name(e, n->member));
        return;
    case ND_ARROW:
        element(e, n->lhs, NULL, n->tok);
        PRINTF(e, ".%s", member_name(e, n->member));
        return;
    default:
        expr(e, n);
        return;
    }
}

/* One call argument for parameter p (NULL: unknown). */
static void one_arg(emitter *e, const tp_obj *p, tp_node *a) {
    if (p && p->ty->kind == TY_PTR) {
        /* Pointers to locals pass as WGSL pointers; whole arrays by reference. */
        tp_node *s = strip_ptr_conv(a);
        name_entry *ne = s->kind == ND_VAR ? find_name(e, s->obj) : NULL;
        if (s->kind == ND_ADDR) {
            put(e, "&");
            lvalue(e, s->lhs);
        } else if (s->ty->kind == TY_ARRAY) {
            put(e, "&");
            lvalue(e, s);
        } else if (ne && (ne->kind == NK_PTR_ELEM || ne->kind == NK_PTR_ARRAY)) {
            put(e, ne->name);
        } else {
            error(e, a->tok, "only pointers to local variables and local arrays can be passed to functions");
            put(e, "0");
        }
        return;
    }
    if (p)
        as_type(e, a, p->ty);
    else
        expr(e, a);
}

static void args_list(emitter *e, tp_obj *callee, tp_node *a) {
    bool first = true;
    tp_obj *p = callee ? callee->params : NULL;
    for (; a; a = a->next, p = p ? p->next : NULL) {
        if (a->ty->kind == TY_GRID_POS || (p && p->ty->kind == TY_GRID_POS)) continue;
        if (!first) put(e, ", ");
        first = false;
        one_arg(e, p, a);
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
            as_type(e, a, &rk__tp_ty_float);
        else if (b->args[i] == BT_INT)
            as_type(e, a, &rk__tp_ty_int);
        else if (b->args[i] == BT_UINT)
            as_type(e, a, &rk__tp_ty_uint);
        else
            expr(e, a);
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
    case TP_B_ATOMIC_EXCH_I32: op = "Exchange"; break;
    case TP_B_ATOMIC_CAS_I32: case TP_B_ATOMIC_CAS_U32: op = "CAS"; break;
    case TP_B_ATOMIC_ADD_U64: {
        /* Only a handler's function-scope state can take it: WGSL has no
         * 64-bit atomics in storage or workgroup memory. */
        tp_node *t = strip_ptr_conv(n->args);
        const tp_obj *root = lvalue_root(t->kind == ND_ADDR ? t->lhs : t);
        name_entry *ne = root ? find_name(e, root) : NULL;
        if (!ne || ne->kind == NK_BUFFER || root->is_shared) {
            error(e, n->tok, "atomic_add_u64: WGSL has no 64-bit atomics in buffers or shared memory (keep 32-bit "
                             "counters)");
            put(e, "vec2<u32>(0u, 0u)");
            return;
        }
        op = "Add";
        break;
    }
    case TP_B_ATOMIC_ADD_F32:
        error(e, n->tok, "atomic_add_f32: WGSL has no floating-point atomics");
        put(e, "0.0f");
        return;
    default: break;
    }
    tp_node *target = strip_ptr_conv(n->args);
    const char *t = n->builtin == TP_B_ATOMIC_ADD_U64 ? "u64"
                    : n->builtin == TP_B_ATOMIC_ADD_U32 || n->builtin == TP_B_ATOMIC_AND_U32 ||
                            n->builtin == TP_B_ATOMIC_OR_U32 || n->builtin == TP_B_ATOMIC_XOR_U32 ||
                            n->builtin == TP_B_ATOMIC_CAS_U32
                        ? "u32"
                        : "i32";
    const tp_type *vt = strcmp(t, "u64") == 0 ? &rk__tp_ty_ulong : t[0] == 'u' ? &rk__tp_ty_uint : &rk__tp_ty_int;
    bool device = is_atomic_lvalue(e, target->kind == ND_ADDR ? target->lhs : target);
    if (device) {
        if (strcmp(op, "CAS") == 0)
            put(e, "atomicCompareExchangeWeak(&");
        else
            PRINTF(e, "atomic%s(&", op);
        if (target->kind == ND_ADDR)
            lvalue(e, target->lhs);
        else
            element(e, target, NULL, n->tok); /* atomic_x(buf + i, v): the element buf[i] */
    } else {
        PRINTF(e, "rk_fn_atomic%s_%s(", op, t);
        if (target->kind == ND_ADDR) {
            put(e, "&");
            lvalue(e, target->lhs);
        } else {
            tp_node *s = target;
            name_entry *ne = s->kind == ND_VAR ? find_name(e, s->obj) : NULL;
            if (ne && ne->kind == NK_PTR_ELEM)
                put(e, ne->name);
            else {
                error(e, n->tok, "the target of an atomic must be &buffer[i], &shared or a pointer to a local");
                put(e, "0");
            }
        }
    }
    for (tp_node *a = n->args->next; a; a = a->next) {
        put(e, ", ");
        as_type(e, a, vt);
    }
    put(e, ")");
    if (device && strcmp(op, "CAS") == 0) put(e, ".old_value");
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
            const char *buf = n->buffer ? obj_name(e, n->buffer) : "rk_missing_buffer";
            name_entry *ne = n->buffer ? find_name(e, n->buffer) : NULL;
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
    case TP_B_BLOCK_IDX_X: put(e, "i32(rk_wid.x)"); return;
    case TP_B_BLOCK_IDX_Y: put(e, "i32(rk_wid.y)"); return;
    case TP_B_BLOCK_IDX_Z: put(e, "i32(rk_wid.z)"); return;
    case TP_B_BLOCK_DIM_X: put(e, "i32(rk_wgs.x)"); return;
    case TP_B_BLOCK_DIM_Y: put(e, "i32(rk_wgs.y)"); return;
    case TP_B_BLOCK_DIM_Z: put(e, "i32(rk_wgs.z)"); return;
    case TP_B_GRID_DIM_X: put(e, "i32(rk_nwg.x)"); return;
    case TP_B_GRID_DIM_Y: put(e, "i32(rk_nwg.y)"); return;
    case TP_B_GRID_DIM_Z: put(e, "i32(rk_nwg.z)"); return;
    case TP_B_WARP_SIZE: put(e, "32i"); return;
    case TP_B_LANE_ID: put(e, "i32((rk_lid.x + rk_wgs.x * (rk_lid.y + rk_wgs.y * rk_lid.z)) & 31u)"); return;
    case TP_B_SYNC_THREADS: put(e, "rk_sync_threads()"); return;
    case TP_B_THREAD_FENCE: put(e, "storageBarrier()"); return;
    case TP_B_THREAD_FENCE_BLOCK: put(e, "workgroupBarrier()"); return;
    case TP_B_DYNAMIC_SHARED:
        error(e, n->tok, "dynamic_shared: WGSL has no dynamic workgroup memory; declare an RK_SHARED array");
        put(e, "0");
        return;
    case TP_B_INFF: case TP_B_INF: put(e, "bitcast<f32>(0x7f800000u)"); return;
    case TP_B_NANF: put(e, "bitcast<f32>(0x7fc00000u)"); return;
    default: break;
    }
    if (b->flags & TP_BF_WARP) {
        error(e, n->tok, rk__tp_format(e->ctx, "%s: warp operations need WGSL subgroups, which this target does not "
                                               "enable", b->name));
        put(e, "0");
        return;
    }
    const char *m = math_name(n->builtin);
    if (!m) {
        error(e, n->tok, rk__tp_format(e->ctx, "%s has no WGSL equivalent", b->name));
        put(e, "0.0f");
        return;
    }
    PRINTF(e, "%s(", m);
    builtin_args(e, n);
    put(e, ")");
}

static void init_list(emitter *e, tp_node *n, const tp_type *ty) {
    ty = unq((tp_type *)ty);
    PRINTF(e, "%s(", type_name(e, ty));
    if (ty->kind == TY_ARRAY) {
        tp_node *a = n->args;
        for (int i = 0; i < ty->array_len; i++) {
            if (i) put(e, ", ");
            if (!a)
                zero_value(e, ty->base);
            else if (a->kind == ND_INIT_LIST)
                init_list(e, a, ty->base);
            else
                as_type(e, a, ty->base);
            if (a) a = a->next;
        }
    } else if (ty->kind == TY_STRUCT) {
        tp_node *a = n->args;
        for (tp_member *m = ty->members; m; m = m->next) {
            if (m != ty->members) put(e, ", ");
            if (!a)
                zero_value(e, m->ty);
            else if (a->kind == ND_INIT_LIST)
                init_list(e, a, m->ty);
            else
                as_type(e, a, m->ty);
            if (a) a = a->next;
        }
    } else if (n->args) {
        as_type(e, n->args, ty);
    }
    put(e, ")");
}

/* A value converted from its C type to `to`, explicitly. */
static void convert(emitter *e, tp_node *inner, const tp_type *to) {
    const tp_type *from = unq(inner->ty);
    to = unq((tp_type *)to);
    if (to->kind == TY_VOID) {
        expr(e, inner);
        return;
    }
    if (to->kind == TY_BOOL) {
        cond(e, inner);
        return;
    }
    if (to->kind == TY_PTR || from->kind == TY_PTR || from->kind == TY_ARRAY) {
        expr(e, inner); /* pointer-to-pointer: handled by whoever uses the pointer */
        return;
    }
    const char *ft = scalar(from), *tt = scalar(to);
    if (!tt || !ft) {
        expr(e, inner);
        return;
    }
    if (from->kind == TY_BOOL || is_comparison(inner->kind)) {
        if (to->kind == TY_LONG)
            put(e, "select(vec2<u32>(0u, 0u), vec2<u32>(1u, 0u), ");
        else
            PRINTF(e, "select(%s(0), %s(1), ", tt, tt);
        cond(e, inner);
        put(e, ")");
        return;
    }
    if (strcmp(ft, tt) == 0) {
        expr(e, inner);
        return;
    }
    /* Constants convert at emit time: no conversion call, exact value. */
    if (inner->kind == ND_SIZEOF && to->kind != TY_FLOAT && to->kind != TY_DOUBLE) {
        integer(e, inner->ival, to);
        return;
    }
    if (inner->kind == ND_NUM && to->kind == TY_LONG) {
        integer(e, inner->ty->is_unsigned && inner->ty->size == 4 ? (int64_t)(uint32_t)inner->ival : inner->ival, to);
        return;
    }
    /* 64-bit integers are vec2<u32> (low, high): conversions through helpers. */
    if (from->kind == TY_LONG) {
        if (to->kind == TY_FLOAT || to->kind == TY_DOUBLE) {
            PRINTF(e, "rk_%s64_to_f32(", from->is_unsigned ? "u" : "i");
            expr(e, inner);
            put(e, ")");
        } else {
            put(e, to->is_unsigned ? "(" : "i32((");
            expr(e, inner);
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
        expr(e, inner);
        put(e, from->is_unsigned && from->kind != TY_FLOAT && from->kind != TY_DOUBLE ? ", 0u)" : ")");
        return;
    }
    if (inner->kind == ND_NUM) {
        if (to->kind == TY_FLOAT || to->kind == TY_DOUBLE)
            float_literal(e, to->kind == TY_FLOAT ? (double)(float)(inner->ty->is_unsigned ? (double)(uint64_t)inner->ival : (double)inner->ival) : (double)inner->ival);
        else
            integer(e, to->is_unsigned ? (int64_t)(uint32_t)inner->ival : (int64_t)(int32_t)inner->ival, to);
        return;
    }
    PRINTF(e, "%s(", tt);
    expr(e, inner);
    put(e, ")");
}

static void as_type(emitter *e, tp_node *n, const tp_type *to) { convert(e, n, to); }

/* A condition: WGSL wants bool where C takes any scalar. */
static void cond(emitter *e, tp_node *n) {
    switch (n->kind) {
    case ND_EQ: case ND_NE: case ND_LT: case ND_LE: case ND_GT: case ND_GE:
        if (unq(n->lhs->ty)->kind == TY_LONG) {
            const char *lt = unq(n->lhs->ty)->is_unsigned ? "rk_ltu64" : "rk_lti64";
            tp_node *a = n->lhs, *b = n->rhs;
            switch (n->kind) {
            case ND_EQ: put(e, "all("); expr(e, a); put(e, " == "); expr(e, b); put(e, ")"); return;
            case ND_NE: put(e, "any("); expr(e, a); put(e, " != "); expr(e, b); put(e, ")"); return;
            case ND_LT: PRINTF(e, "%s(", lt); expr(e, a); put(e, ", "); expr(e, b); put(e, ")"); return;
            case ND_GT: PRINTF(e, "%s(", lt); expr(e, b); put(e, ", "); expr(e, a); put(e, ")"); return;
            case ND_LE: PRINTF(e, "!%s(", lt); expr(e, b); put(e, ", "); expr(e, a); put(e, ")"); return;
            default: PRINTF(e, "!%s(", lt); expr(e, a); put(e, ", "); expr(e, b); put(e, ")"); return;
            }
        }
        put(e, "(");
        expr(e, n->lhs);
        PRINTF(e, " %s ", binary_op(n->kind));
        expr(e, n->rhs);
        put(e, ")");
        return;
    case ND_LOGAND: case ND_LOGOR:
        put(e, "(");
        cond(e, n->lhs);
        PRINTF(e, " %s ", binary_op(n->kind));
        cond(e, n->rhs);
        put(e, ")");
        return;
    case ND_NOT:
        put(e, "!");
        cond(e, n->lhs);
        return;
    case ND_CONV: case ND_CAST:
        if (unq(n->ty)->kind == TY_BOOL || is_comparison(n->lhs->kind)) {
            cond(e, n->lhs);
            return;
        }
        break;
    default:
        break;
    }
    const tp_type *t = unq(n->ty);
    if (t->kind == TY_BOOL) {
        expr(e, n);
        return;
    }
    if (t->kind == TY_LONG) {
        put(e, "any(");
        expr(e, n);
        put(e, " != vec2<u32>(0u, 0u))");
        return;
    }
    put(e, "(");
    expr(e, n);
    if (t->kind == TY_FLOAT || t->kind == TY_DOUBLE)
        put(e, " != 0.0f)");
    else
        PRINTF(e, " != %s)", t->is_unsigned ? "0u" : "0i");
}

static void expr(emitter *e, tp_node *n) {
    if (is_comparison(n->kind)) { /* C gives int 0 or 1 */
        put(e, "select(0i, 1i, ");
        cond(e, n);
        put(e, ")");
        return;
    }
    switch (n->kind) {
    case ND_NUM:
        integer(e, n->ival, n->ty);
        return;
    case ND_SIZEOF:
        integer(e, n->ival, n->ty);
        return;
    case ND_FNUM:
        float_literal(e, n->fval);
        return;
    case ND_VAR: {
        if (n->obj->is_enum_const) {
            integer(e, n->obj->enum_val, &rk__tp_ty_int);
            return;
        }
        name_entry *ne = find_name(e, n->obj);
        if (ne && ne->kind == NK_PTR_ELEM && n->ty->kind != TY_PTR) {
            PRINTF(e, "(*%s)", ne->name);
            return;
        }
        if (ne && ne->atomic && n->ty->kind != TY_ARRAY && n->ty->kind != TY_PTR) {
            PRINTF(e, "atomicLoad(&%s)", ne->name);
            return;
        }
        put(e, obj_name(e, n->obj));
        return;
    }
    case ND_BITNOT:
        put(e, "(~");
        expr(e, n->lhs);
        put(e, ")");
        return;
    case ND_NEG:
        put(e, unq(n->ty)->kind == TY_LONG ? "rk_neg64(" : "(-");
        expr(e, n->lhs);
        put(e, ")");
        return;
    case ND_PLUS:
        expr(e, n->lhs);
        return;
    case ND_ADDR:
        put(e, "&");
        lvalue(e, n->lhs);
        return;
    case ND_INDEX: case ND_DEREF: case ND_MEMBER: case ND_ARROW:
        if (is_atomic_lvalue(e, n) && scalar(unq(n->ty))) {
            put(e, "atomicLoad(&");
            lvalue(e, n);
            put(e, ")");
        } else {
            lvalue(e, n);
        }
        return;
    case ND_SHL: case ND_SHR:
        if (unq(n->ty)->kind == TY_LONG) {
            PRINTF(e, "%s(", n->kind == ND_SHL ? "rk_shl64" : unq(n->ty)->is_unsigned ? "rk_shr64" : "rk_sar64");
            expr(e, n->lhs);
            put(e, ", ");
            as_type(e, n->rhs, &rk__tp_ty_uint);
            put(e, ")");
            return;
        }
        put(e, "(");
        expr(e, n->lhs);
        PRINTF(e, " %s ", binary_op(n->kind));
        as_type(e, n->rhs, &rk__tp_ty_uint);
        put(e, ")");
        return;
    case ND_ADD: case ND_SUB: case ND_MUL: case ND_DIV: case ND_MOD: case ND_BITAND: case ND_BITOR: case ND_BITXOR:
        if (n->ty->kind == TY_PTR) {
            error(e, n->tok, "a pointer value (pointer arithmetic outside an index or '*') is not available");
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
            expr(e, n->lhs);
            put(e, ", ");
            expr(e, n->rhs);
            put(e, ")");
            return;
        }
        put(e, "(");
        expr(e, n->lhs);
        PRINTF(e, " %s ", binary_op(n->kind));
        expr(e, n->rhs);
        put(e, ")");
        return;
    case ND_COND:
        PRINTF(e, "select(");
        as_type(e, n->els, n->ty);
        put(e, ", ");
        as_type(e, n->then, n->ty);
        put(e, ", ");
        cond(e, n->cond);
        put(e, ")");
        return;
    case ND_CALL:
        PRINTF(e, "%s(", obj_name(e, n->obj));
        args_list(e, n->obj->definition ? n->obj->definition : n->obj, n->args);
        put(e, ")");
        return;
    case ND_BUILTIN:
        builtin(e, n);
        return;
    case ND_CAST:
        check_type(e, n->cast_ty, n->tok, "cast");
        convert(e, n->lhs, n->cast_ty);
        return;
    case ND_CONV:
        convert(e, n->lhs, n->ty);
        return;
    case ND_INIT_LIST:
        init_list(e, n, n->ty);
        return;
    case ND_ASSIGN: case ND_ASSIGN_OP: case ND_PRE_INC: case ND_PRE_DEC: case ND_POST_INC: case ND_POST_DEC:
        error(e, n->tok, "an assignment or ++/-- inside an expression is not available; write it as its own statement");
        put(e, "0");
        return;
    case ND_COMMA:
        error(e, n->tok, "the comma operator inside an expression is not available");
        put(e, "0");
        return;
    case ND_FUNC_NAME:
        error(e, n->tok, "function values are not available");
        put(e, "0");
        return;
    default:
        put(e, "0");
        return;
    }
}

/* ---- statements ------------------------------------------------------------------------------ */

static void stmt(emitter *e, tp_node *n);
static void stmt_one(emitter *e, tp_node *n);

/* One assignment-like expression as a WGSL statement (no trailing ;). */
static void simple_stmt(emitter *e, tp_node *n) {
    switch (n->kind) {
    case ND_ASSIGN:
        if (is_atomic_lvalue(e, n->lhs) && scalar(unq(n->lhs->ty))) {
            put(e, "atomicStore(&");
            lvalue(e, n->lhs);
            put(e, ", ");
            as_type(e, n->rhs, n->lhs->ty);
            put(e, ")");
            return;
        }
        if (n->lhs->ty->kind == TY_PTR) {
            error(e, n->tok, "assigning a pointer is not available (WGSL pointers are fixed when declared)");
            return;
        }
        lvalue(e, n->lhs);
        put(e, " = ");
        if (n->rhs->kind == ND_INIT_LIST)
            init_list(e, n->rhs, n->lhs->ty);
        else
            as_type(e, n->rhs, n->lhs->ty);
        return;
    case ND_ASSIGN_OP: {
        if (is_atomic_lvalue(e, n->lhs)) {
            error(e, n->tok, "compound assignment to atomic memory is not available; use atomic_add_i32 and friends");
            return;
        }
        if (n->lhs->ty->kind == TY_PTR) {
            error(e, n->tok, "pointer arithmetic on a variable is not available");
            return;
        }
        /* a op= b: a = (T)((common)a op b), written as that expression so
         * every conversion and 64-bit helper applies. */
        tp_type *ct = n->cast_ty ? n->cast_ty : n->lhs->ty;
        tp_node lhs_in_ct = {.kind = ND_CONV, .ty = ct, .lhs = n->lhs, .tok = n->tok};
        tp_node bin = {.kind = n->op, .ty = ct, .tok = n->tok, .rhs = n->rhs,
                       .lhs = rk__tp_same_type(unq(ct), unq(n->lhs->ty)) ? n->lhs : &lhs_in_ct};
        lvalue(e, n->lhs);
        put(e, " = ");
        as_type(e, &bin, n->lhs->ty);
        return;
    }
    case ND_PRE_INC: case ND_POST_INC: case ND_PRE_DEC: case ND_POST_DEC: {
        bool inc = n->kind == ND_PRE_INC || n->kind == ND_POST_INC;
        const tp_type *t = unq(n->lhs->ty);
        if (t->kind == TY_PTR) {
            error(e, n->tok, "moving a pointer with ++/-- is not available");
            return;
        }
        if (is_atomic_lvalue(e, n->lhs)) {
            PRINTF(e, "atomic%s(&", inc ? "Add" : "Sub");
            lvalue(e, n->lhs);
            PRINTF(e, ", %s)", t->is_unsigned ? "1u" : "1i");
            return;
        }
        lvalue(e, n->lhs);
        if (t->kind == TY_LONG) {
            put(e, " = ");
            PRINTF(e, "%s(", inc ? "rk_add64" : "rk_sub64");
            lvalue(e, n->lhs);
            put(e, ", vec2<u32>(1u, 0u))");
        } else if (t->kind == TY_FLOAT || t->kind == TY_DOUBLE) {
            PRINTF(e, " %s 1.0f", inc ? "+=" : "-=");
        } else {
            put(e, inc ? "++" : "--");
        }
        return;
    }
    case ND_CALL:
        expr(e, n);
        return;
    case ND_BUILTIN: {
        const tp_builtin *b = &rk__tp_builtins[n->builtin];
        if (b->ret != BT_VOID && !(b->flags & TP_BF_ATOMIC)) put(e, "_ = ");
        expr(e, n);
        return;
    }
    case ND_CAST: case ND_CONV:
        if (unq(n->ty)->kind == TY_VOID) {
            if (n->lhs->kind == ND_VAR && n->lhs->obj->is_param) {
                name_entry *ne = find_name(e, n->lhs->obj);
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
    expr(e, n);
}

/* f(&s.a, &s.b): WGSL refuses two pointer arguments into one variable (its
 * alias rule goes by root variable), so at statement level the later ones go
 * through temporaries copied in before the call and out after it (exact
 * for distinct members, which do not overlap). Returns false if the call
 * needs nothing of the kind. */
static bool call_with_temps(emitter *e, tp_node *n) {
    enum { MAX = 8 };
    tp_node *args[MAX];
    const tp_obj *roots[MAX];
    int count = 0;
    tp_obj *callee = n->obj->definition ? n->obj->definition : n->obj;
    tp_obj *p = callee->params;
    for (tp_node *a = n->args; a && count < MAX; a = a->next, p = p ? p->next : NULL) {
        tp_node *s = strip_ptr_conv(a);
        if (!p || p->ty->kind != TY_PTR || s->kind != ND_ADDR) continue;
        args[count] = s;
        roots[count++] = lvalue_root(s->lhs);
    }
    bool any = false;
    bool temp[MAX] = {false};
    for (int i = 1; i < count; i++)
        for (int j = 0; j < i; j++)
            if (roots[i] && roots[i] == roots[j] && !temp[j]) temp[i] = any = true;
    if (!any) return false;
    int first = e->loop_var;
    for (int i = 0; i < count; i++) {
        if (!temp[i]) continue;
        line_start(e);
        PRINTF(e, "var rk_tmp%d: %s = ", first + i, type_name(e, unq(args[i]->lhs->ty)));
        expr(e, args[i]->lhs);
        put(e, ";\n");
    }
    e->loop_var += count;
    line_start(e);
    PRINTF(e, "%s(", obj_name(e, n->obj));
    bool sep = false;
    p = callee->params;
    int k = 0;
    for (tp_node *a = n->args; a; a = a->next, p = p ? p->next : NULL) {
        if (a->ty->kind == TY_GRID_POS || (p && p->ty->kind == TY_GRID_POS)) continue;
        if (sep) put(e, ", ");
        sep = true;
        tp_node *s = strip_ptr_conv(a);
        bool is_ptr_arg = p && p->ty->kind == TY_PTR && s->kind == ND_ADDR && k < count && args[k] == s;
        if (is_ptr_arg && temp[k]) {
            PRINTF(e, "&rk_tmp%d", first + k);
        } else {
            one_arg(e, p, a);
        }
        if (is_ptr_arg) k++;
    }
    put(e, ");\n");
    for (int i = 0; i < count; i++) {
        if (!temp[i]) continue;
        line_start(e);
        lvalue(e, args[i]->lhs);
        PRINTF(e, " = rk_tmp%d;\n", first + i);
    }
    return true;
}

/* An expression statement, split at commas. */
static void expr_stmt(emitter *e, tp_node *n) {
    if (n->kind == ND_CALL && call_with_temps(e, n)) return;
    if (n->kind == ND_COMMA) {
        expr_stmt(e, n->lhs);
        expr_stmt(e, n->rhs);
        return;
    }
    if ((n->kind == ND_CAST || n->kind == ND_CONV) && unq(n->ty)->kind == TY_VOID && n->lhs->kind == ND_VAR)
        return; /* (void)x; only silences a C warning */
    if (n->kind == ND_ASSIGN) {
        /* a = b = v: the inner assignment first, then a takes b's new value. */
        tp_node *inner = n->rhs;
        while (inner->kind == ND_CONV) inner = inner->lhs;
        if (inner->kind == ND_ASSIGN) {
            expr_stmt(e, inner);
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
static const char *shared_name(emitter *e, const tp_obj *fn, const tp_obj *var) {
    return rk__tp_format(e->ctx, "rk_shared_%s_%s", fn ? fn->name : "g", var->name);
}

static void decl(emitter *e, tp_node *n) {
    tp_obj *v = n->obj;
    if (v->is_shared) return; /* declared at module scope */
    if (v->is_static && !v->ty->is_const) {
        error(e, n->tok, "static local variables are not available (there is no per-kernel persistent storage)");
        return;
    }
    check_type(e, v->ty, v->tok, rk__tp_format(e->ctx, "variable '%s'", v->name));
    const char *name = wgsl_ident(e, v->name);
    if (v->ty->kind == TY_PTR && n->init) {
        /* A pointer into a buffer (T *p = buf + i, or &buf[i]): WGSL cannot
         * hold it, so p stands for the buffer from a fixed index on. */
        tp_node *init = strip_ptr_conv(n->init);
        tp_node *at = init->kind == ND_ADDR && init->lhs->kind == ND_INDEX ? init->lhs : NULL;
        ptr_form f = {0};
        tp_node *base = NULL;
        if (at) {
            bool l = at->lhs->ty->kind == TY_PTR || at->lhs->ty->kind == TY_ARRAY;
            if (pointer_form(e, l ? at->lhs : at->rhs, &f) && f.nterms < 8) {
                f.terms[f.nterms] = l ? at->rhs : at->lhs;
                f.negative[f.nterms++] = false;
                base = f.base;
            }
        } else if (pointer_form(e, init, &f)) {
            base = f.base;
        }
        name_entry *bn = base && base->kind == ND_VAR ? find_name(e, base->obj) : NULL;
        if (bn && bn->kind == NK_BUFFER) {
            const char *off = rk__tp_format(e->ctx, "rk_at_%s_%d", v->name, e->loop_var++);
            line_start(e);
            PRINTF(e, "let %s: i32 = %s", off, bn->offset ? bn->offset : "0i");
            for (int i = 0; i < f.nterms; i++) {
                PRINTF(e, " %s ", f.negative[i] ? "-" : "+");
                as_type(e, f.terms[i], &rk__tp_ty_int);
            }
            put(e, ";\n");
            name_entry *ne = add_name(e, v, bn->name, NK_BUFFER);
            ne->atomic = bn->atomic;
            ne->offset = off;
            return;
        }
    }
    if (v->ty->kind == TY_PTR) {
        /* A pointer to a local: a WGSL let of pointer type. */
        tp_node *init = n->init ? strip_ptr_conv(n->init) : NULL;
        if (!init || (init->kind != ND_ADDR && init->ty->kind != TY_ARRAY)) {
            error(e, n->tok, "a local pointer must be initialised with the address of a local variable or array");
            return;
        }
        add_name(e, v, name, init->ty->kind == TY_ARRAY ? NK_PTR_ARRAY : NK_PTR_ELEM);
        line_start(e);
        PRINTF(e, "let %s = &", name);
        lvalue(e, init->kind == ND_ADDR ? init->lhs : init);
        put(e, ";\n");
        return;
    }
    add_name(e, v, name, NK_PLAIN);
    line_start(e);
    PRINTF(e, "var %s: %s", name, type_name(e, unq(v->ty)));
    if (n->init) {
        put(e, " = ");
        if (n->init->kind == ND_INIT_LIST)
            init_list(e, n->init, v->ty);
        else
            as_type(e, n->init, v->ty);
    }
    put(e, ";\n");
}

static void block(emitter *e, tp_node *n) {
    put(e, "{\n");
    e->indent++;
    if (n->kind == ND_BLOCK)
        stmt(e, n->body);
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
        error(e, n->tok, "a switch on a 64-bit value is not available; switch on a 32-bit one");
        return;
    }
    line_start(e);
    put(e, "switch (");
    as_type(e, n->cond, unq(n->cond->ty)->is_unsigned ? &rk__tp_ty_uint : &rk__tp_ty_int);
    put(e, ") {\n");
    e->indent++;
    tp_node *s = n->body && n->body->kind == ND_BLOCK ? n->body->body : n->body;
    const tp_type *sel = unq(n->cond->ty)->is_unsigned ? &rk__tp_ty_uint : &rk__tp_ty_int;
    bool has_default = false, open = false;
    for (; s; s = s->next) {
        if (s->kind != ND_CASE && s->kind != ND_DEFAULT) {
            if (!open) {
                error(e, s->tok, "a statement before the first case label of a switch is not available");
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
                integer(e, body->ival, sel);
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
            if (nx) error(e, nx->tok, "falling through into the next case is not available; end the case with break");
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
    line_start(e);
    put(e, "{\n");
    e->indent++;
    if (!simple_init) stmt(e, n->init);
    if (simple_init && simple_inc) {
        line_start(e);
        put(e, "for (");
        if (n->init && n->init->kind == ND_DECL) {
            tp_obj *v = n->init->obj;
            check_type(e, v->ty, v->tok, rk__tp_format(e->ctx, "variable '%s'", v->name));
            const char *name = wgsl_ident(e, v->name);
            add_name(e, v, name, NK_PLAIN);
            PRINTF(e, "var %s: %s", name, type_name(e, unq(v->ty)));
            if (n->init->init) {
                put(e, " = ");
                as_type(e, n->init->init, v->ty);
            }
        } else if (n->init) {
            simple_stmt(e, n->init->lhs);
        }
        put(e, "; ");
        if (n->cond) cond(e, n->cond);
        put(e, "; ");
        if (n->inc) simple_stmt(e, n->inc);
        put(e, ") ");
        block(e, n->then);
        put(e, "\n");
    } else {
        if (simple_init && n->init) stmt(e, n->init);
        line_start(e);
        put(e, "loop {\n");
        e->indent++;
        if (n->cond) {
            line_start(e);
            put(e, "if (!");
            cond(e, n->cond);
            put(e, ") { break; }\n");
        }
        line_start(e);
        block(e, n->then);
        put(e, "\n");
        if (n->inc) {
            line_start(e);
            put(e, "continuing {\n");
            e->indent++;
            expr_stmt(e, n->inc);
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

static void stmt_one(emitter *e, tp_node *n) {
    switch (n->kind) {
    case ND_BLOCK:
        line_start(e);
        block(e, n);
        put(e, "\n");
        return;
    case ND_EXPR_STMT:
        expr_stmt(e, n->lhs);
        return;
    case ND_DECL:
        decl(e, n);
        return;
    case ND_IF:
        line_start(e);
        put(e, "if (");
        cond(e, n->cond);
        put(e, ") ");
        block(e, n->then);
        while (n->els && n->els->kind == ND_IF && !n->els->next) {
            n = n->els;
            put(e, " else if (");
            cond(e, n->cond);
            put(e, ") ");
            block(e, n->then);
        }
        if (n->els) {
            put(e, " else ");
            block(e, n->els);
        }
        put(e, "\n");
        return;
    case ND_FOR:
        for_stmt(e, n);
        return;
    case ND_WHILE:
        line_start(e);
        put(e, "while (");
        cond(e, n->cond);
        put(e, ") ");
        block(e, n->then);
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
        line_start(e);
        put(e, "break if !");
        cond(e, n->cond);
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
        error(e, n->tok, "a case label outside the top level of its switch is not available");
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
        line_start(e);
        put(e, "return");
        if (n->lhs && e->fn && unq(e->fn->ty->return_ty)->kind != TY_VOID) {
            put(e, " ");
            as_type(e, n->lhs, e->fn->ty->return_ty);
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

static void stmt(emitter *e, tp_node *n) {
    for (; n; n = n->next) stmt_one(e, n);
}

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
    tp_node *t = strip_ptr_conv(n->args);
    const tp_obj *root = lvalue_root(t->kind == ND_ADDR ? t->lhs : t);
    if (!root || !(root->is_param || root->is_shared)) return;
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
        tp_node *s = strip_ptr_conv(a);
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
    check_type(e, v->ty, v->tok, rk__tp_format(e->ctx, "shared variable '%s'", v->name));
    name_entry *ne = add_name(e, v, shared_name(e, e->shared_fn, v), NK_PLAIN);
    const tp_type *t = unq(v->ty);
    if (ne->atomic) {
        const tp_type *leaf = t->kind == TY_ARRAY ? unq(t->base) : t;
        const char *at = rk__tp_format(e->ctx, "atomic<%s>", leaf->is_unsigned ? "u32" : "i32");
        PRINTF(e, "var<workgroup> %s: %s;\n", ne->name,
               t->kind == TY_ARRAY ? rk__tp_format(e->ctx, "array<%s, %d>", at, t->array_len) : at);
    } else {
        PRINTF(e, "var<workgroup> %s: %s;\n", ne->name, type_name(e, t));
    }
}

/* ---- file-scope items ----------------------------------------------------------------------- */

static void struct_def(emitter *e, tp_type *ty) {
    check_struct(e, ty);
    PRINTF(e, "// %d bytes, as on the host\n", ty->size);
    PRINTF(e, "struct %s {\n", struct_name(e, ty));
    for (tp_member *m = ty->members; m; m = m->next) PRINTF(e, "    %s: %s,\n", member_name(e, m), type_name(e, unq(m->ty)));
    put(e, "}\n\n");
}

static void global_var(emitter *e, tp_obj *v) {
    check_type(e, v->ty, v->tok, rk__tp_format(e->ctx, "variable '%s'", v->name));
    if (v->is_shared) {
        e->shared_fn = NULL;
        tp_node d = {.kind = ND_DECL, .obj = v};
        declare_shared(e, &d);
        put(e, "\n");
        return;
    }
    const char *name = wgsl_ident(e, v->name);
    add_name(e, v, name, NK_PLAIN);
    const tp_type *t = unq(v->ty);
    /* Scalars are constants; tables are private copies so they can be indexed at run time. */
    if (scalar(t) && v->init && v->init->kind != ND_INIT_LIST)
        PRINTF(e, "const %s: %s = ", name, type_name(e, t));
    else
        PRINTF(e, "var<private> %s: %s = ", name, type_name(e, t));
    if (!v->init)
        zero_value(e, t);
    else if (v->init->kind == ND_INIT_LIST)
        init_list(e, v->init, t);
    else
        as_type(e, v->init, t);
    put(e, ";\n\n");
}

/* Scalar parameters copied into mutable locals (C parameters are variables). */
static void copy_params(emitter *e, tp_obj *fn, const char *from_struct) {
    for (tp_obj *p = fn->params; p; p = p->next) {
        if (p->ty->kind == TY_PTR || p->ty->kind == TY_GRID_POS || !p->name) continue;
        const char *name = wgsl_ident(e, p->name);
        line_start(e);
        if (from_struct)
            PRINTF(e, "var %s: %s = %s.%s;\n", name, type_name(e, unq(p->ty)), from_struct, name);
        else
            PRINTF(e, "var %s: %s = rk_p_%s;\n", name, type_name(e, unq(p->ty)), p->name);
        add_name(e, p, name, NK_PLAIN);
    }
}

static void helper_function(emitter *e, tp_obj *fn) {
    PRINTF(e, "fn %s(", wgsl_ident(e, fn->name));
    bool first = true;
    for (tp_obj *p = fn->params; p; p = p->next) {
        if (p->ty->kind == TY_GRID_POS) {
            if (p->name) add_name(e, p, "rk_pos", NK_DROPPED);
            continue;
        }
        if (!first) put(e, ", ");
        first = false;
        const char *pname = p->name ? p->name : rk__tp_format(e->ctx, "rk_unnamed%d", e->loop_var++);
        check_type(e, p->ty, p->tok, rk__tp_format(e->ctx, "parameter '%s'", pname));
        if (p->ty->kind == TY_PTR) {
            tp_type *arr = array_param_type(e, p);
            const char *name = wgsl_ident(e, pname);
            if (arr) {
                PRINTF(e, "%s: ptr<function, %s>", name, type_name(e, arr));
                add_name(e, p, name, NK_PTR_ARRAY);
            } else {
                PRINTF(e, "%s: ptr<function, %s>", name, type_name(e, unq(p->ty->base)));
                add_name(e, p, name, NK_PTR_ELEM);
            }
        } else {
            PRINTF(e, "rk_p_%s: %s", pname, type_name(e, unq(p->ty)));
        }
    }
    put(e, ")");
    tp_type *ret = unq(fn->ty->return_ty);
    check_type(e, ret, fn->tok, rk__tp_format(e->ctx, "the result of '%s'", fn->name));
    if (ret->kind != TY_VOID) PRINTF(e, " -> %s", type_name(e, ret));
    put(e, " {\n");
    e->indent = 1;
    copy_params(e, fn, NULL);
    stmt(e, fn->body->body);
    e->indent = 0;
    put(e, "}\n\n");
}

/* Workgroup size of a global kernel: 64, or 8x8 / 4x4x4 when it indexes in y / z. */
static void global_workgroup(const tp_obj *fn, int wg[3]) {
    static const tp_builtin_id z[] = {TP_B_THREAD_IDX_Z, TP_B_BLOCK_DIM_Z};
    static const tp_builtin_id y[] = {TP_B_THREAD_IDX_Y, TP_B_BLOCK_DIM_Y};
    if (uses_any(fn, z, 2)) {
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
            add_name(e, p, "rk_pos", NK_DROPPED);
            continue;
        }
        const char *pname = p->name ? p->name : "unnamed";
        if (p->ty->kind != TY_PTR) {
            if (p->ty->kind == TY_STRUCT || p->ty->kind == TY_ARRAY) {
                rk__tp_error(e->ctx, p->tok, "kernel '%s': a struct passed by value is not available as a kernel "
                                             "argument; pass a pointer to a buffer (WGSL target)", k);
            }
            if (unq(p->ty)->kind == TY_DOUBLE)
                rk__tp_error(e->ctx, p->tok, "kernel '%s': parameter '%s' is a double and WGSL has no f64; use float "
                                             "(WGSL target)", k, pname);
            else
                check_type(e, p->ty, p->tok, rk__tp_format(e->ctx, "parameter '%s'", pname));
            scalars = true;
            continue;
        }
        tp_type *elem = unq(p->ty->base);
        if (elem->kind != TY_DOUBLE) check_type(e, elem, p->tok, rk__tp_format(e->ctx, "buffer parameter '%s'", pname));
        if (elem->kind == TY_VOID || elem->kind == TY_PTR || elem->kind == TY_BOOL || elem->kind == TY_DOUBLE) {
            rk__tp_error(e->ctx, p->tok, "kernel '%s': buffer parameter '%s' needs a 32-bit element type or a struct "
                                         "(WGSL target)", k, pname);
        }
        const char *name = rk__tp_format(e->ctx, "%s_%s", k, pname);
        name_entry *ne = add_name(e, p, name, NK_BUFFER);
        const char *et = type_name(e, elem);
        if (ne->atomic) et = rk__tp_format(e->ctx, "atomic<%s>", elem->is_unsigned ? "u32" : "i32");
        PRINTF(e, "@group(0) @binding(%d) var<storage, %s> %s: array<%s>;\n", binding++,
               p->ty->base->is_const && !ne->atomic ? "read" : "read_write", name, et);
    }
    if (scalars) {
        PRINTF(e, "struct rk_args_%s {\n", k);
        for (tp_obj *p = fn->params; p; p = p->next)
            if (p->ty->kind != TY_PTR && p->ty->kind != TY_GRID_POS && p->name)
                PRINTF(e, "    %s: %s,\n", wgsl_ident(e, p->name), type_name(e, unq(p->ty)));
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
        PRINTF(e, "// Kernel '%s': launch with block (%d, %d, %d).\n", k, wg[0], wg[1], wg[2]);
    PRINTF(e, "@compute @workgroup_size(%d, %d, %d)\n", wg[0], wg[1], wg[2]);
    PRINTF(e, "fn %s(@builtin(local_invocation_id) rk_lid_in: vec3<u32>, @builtin(workgroup_id) rk_wid_in: vec3<u32>,\n"
              "        @builtin(num_workgroups) rk_nwg_in: vec3<u32>) {\n",
           wgsl_ident(e, k));
    e->indent = 1;
    line_start(e);
    put(e, "rk_lid = rk_lid_in;\n");
    line_start(e);
    put(e, "rk_wid = rk_wid_in;\n");
    line_start(e);
    put(e, "rk_nwg = rk_nwg_in;\n");
    line_start(e);
    PRINTF(e, "rk_wgs = vec3<u32>(%du, %du, %du);\n", wg[0], wg[1], wg[2]);
    /* Every binding stays in the "auto" layout even if the body ignores it. */
    for (tp_obj *p = fn->params; p; p = p->next) {
        if (p->ty->kind != TY_PTR) continue;
        line_start(e);
        PRINTF(e, "_ = &%s;\n", obj_name(e, p));
    }
    if (scalars) {
        line_start(e);
        PRINTF(e, "_ = rk_args_%s_v;\n", k);
        copy_params(e, fn, rk__tp_format(e->ctx, "rk_args_%s_v", k));
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
    stmt(e, fn->body->body);
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
            move_words(e, m->ty, rk__tp_format(e->ctx, "%s.%s", path, member_name(e, m)), array, base,
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
        const char *t = scalar(ty);
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
        if (pt[i]->kind == TY_STRUCT && !check_struct(e, pt[i])) layouts_ok = false;
    }
    /* The handler itself, over pointers to function-scope copies. */
    PRINTF(e, "fn %s(", wgsl_ident(e, fn->name));
    bool first = true;
    for (int i = 0; i < 3; i++) {
        if (pt[i]->kind == TY_VOID) {
            if (ps[i]->name) add_name(e, ps[i], "rk_void", NK_DROPPED);
            continue;
        }
        const char *name = wgsl_ident(e, ps[i]->name ? ps[i]->name : rk__tp_format(e->ctx, "rk_msg%d", i));
        PRINTF(e, "%s%s: ptr<function, %s>", first ? "" : ", ", name, type_name(e, pt[i]));
        add_name(e, ps[i], name, NK_PTR_ELEM);
        first = false;
    }
    put(e, ") -> i32 {\n");
    e->indent = 1;
    stmt(e, fn->body->body);
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
        PRINTF(e, "var %s: %s;\n", vars[i], type_name(e, pt[i]));
    }
    if (pt[0]->kind != TY_VOID) move_words(e, pt[0], vars[0], "rk_in", "rk_req", 0, true, req->tok);
    if (pt[2]->kind != TY_VOID && uses_state) move_words(e, pt[2], vars[2], "rk_state", "0u", 0, true, state->tok);
    line_start(e);
    PRINTF(e, "let rk_status_v = %s(", wgsl_ident(e, fn->name));
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

static void helpers(emitter *e, bool any_stencil) {
    if (e->uses_int64) put(e, int64_library);
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

void rk__tp_emit_wgsl(tp_ctx *ctx, tp_program *prog, tp_buf *out) {
    emitter e = {.ctx = ctx, .out = out};
    bool any_stencil = false;
    tp_buf kinds;
    rk__tp_buf_init(&kinds, ctx);
    for (tp_obj *fn = prog->functions; fn; fn = fn->next) {
        if (fn->body) {
            walk(&e, fn->body, note_builtin, 0);
            walk(&e, fn->body, note_array_args, 0);
            walk(&e, fn->body, note_int64, 0);
            for (tp_obj *p = fn->params; p; p = p->next)
                if (is64(p->ty)) e.uses_int64 = true;
        }
        if (fn->entry_kind == RK_TRANSPILE_STENCIL) any_stencil = true;
        if (fn->entry_kind != RK_TRANSPILE_AUTO)
            rk__tp_buf_printf(&kinds, "%s%s (%s)", kinds.len ? ", " : "", fn->name, rk_transpile_kind_name(fn->entry_kind));
    }
    const char *base = ctx->main_name ? strrchr(ctx->main_name, '/') : NULL;
    base = base ? base + 1 : ctx->main_name ? ctx->main_name : "<input>";
    PRINTF(&e, "// Generated by the ringkernel transpiler from %s (target: WGSL).\n", base);
    PRINTF(&e, "// Entry points: %s. Do not edit; edit the source and run rk transpile.\n", kinds.data);
    put(&e, "// Launch convention (docs/webgpu.md): buffer parameters bind to @group(0) @binding(0..) in order;\n"
            "// scalar parameters are one uniform struct at the next binding. Handlers are called by the\n"
            "// WebGPU ring template, which declares rk_in, rk_out and rk_state.\n\n");
    for (tp_item *it = prog->items; it; it = it->next)
        if ((it->kind == IT_STRUCT && is64(it->struct_ty)) || (it->kind == IT_VAR && is64(it->obj->ty)))
            e.uses_int64 = true;
    helpers(&e, any_stencil);
    for (tp_item *it = prog->items; it; it = it->next) {
        switch (it->kind) {
        case IT_STRUCT:
            struct_def(&e, it->struct_ty);
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
}
