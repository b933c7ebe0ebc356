/* WGSL emitter: names, WGSL types and layouts (checked against the host's),
 * and literals. */
#include "emit_wgsl.h"

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

const char *rk__wgsl_ident(emitter *e, const char *name) {
    if (!name) return "rk_unnamed";
    bool bad = name[0] == '_' && (name[1] == '_' || name[1] == '\0');
    for (size_t i = 0; !bad && i < sizeof reserved / sizeof reserved[0]; i++)
        if (strcmp(reserved[i], name) == 0) bad = true;
    return bad ? rk__tp_format(e->ctx, "rk_u_%s", name) : name;
}

name_entry *rk__wgsl_find_name(emitter *e, const tp_obj *o) {
    for (int i = e->name_count - 1; i >= 0; i--)
        if (e->names[i].obj == o) return &e->names[i];
    return NULL;
}

name_entry *rk__wgsl_add_name(emitter *e, const tp_obj *o, const char *name, name_kind kind) {
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

const char *rk__wgsl_obj_name(emitter *e, const tp_obj *o) {
    name_entry *n = rk__wgsl_find_name(e, o);
    return n ? n->name : rk__wgsl_ident(e, o->name);
}

const char *rk__wgsl_member_name(emitter *e, const tp_member *m) {
    return rk__wgsl_ident(e, rk__tp_strndup(e->ctx, m->name->loc, (size_t)m->name->len));
}

const char *rk__wgsl_struct_name(emitter *e, const tp_type *ty) {
    const tp_type *s = ty->origin ? ty->origin : ty;
    return rk__wgsl_ident(e, s->emit_name ? s->emit_name : "rk_unnamed_struct");
}

/* ---- types ----------------------------------------------------------------------------- */

/* Is this a type WGSL can hold? Reports the first problem at tok. */
bool rk__wgsl_check_type(emitter *e, const tp_type *ty, const tp_token *tok, const char *what) {
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
        return rk__wgsl_check_type(e, ty->base, tok, what);
    case TY_STRUCT:
        return true; /* members are checked where the struct is defined */
    case TY_FUNC:
        return true;
    }
    return true;
}

const char *rk__wgsl_scalar(const tp_type *ty) {
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
const char *rk__wgsl_type_name(emitter *e, const tp_type *ty) {
    const char *s = rk__wgsl_scalar(ty);
    if (s) return s;
    switch (ty->kind) {
    case TY_STRUCT: return rk__wgsl_struct_name(e, ty);
    case TY_ARRAY:
        return rk__tp_format(e->ctx, "array<%s, %d>", rk__wgsl_type_name(e, ty->base), ty->array_len < 1 ? 1 : ty->array_len);
    case TY_PTR: return rk__tp_format(e->ctx, "ptr<function, %s>", rk__wgsl_type_name(e, ty->base));
    default: return "i32";
    }
}

/* WGSL's size and alignment for host-shareable types (scalars and what is
 * built of them): the numbers the host layout has to agree with. */
void rk__wgsl_layout(const tp_type *ty, int *size, int *align) {
    switch (ty->kind) {
    case TY_ARRAY: {
        int s, a;
        rk__wgsl_layout(ty->base, &s, &a);
        int stride = (s + a - 1) / a * a;
        *size = stride * (ty->array_len < 1 ? 1 : ty->array_len);
        *align = a;
        return;
    }
    case TY_STRUCT: {
        int off = 0, maxa = 1;
        for (tp_member *m = unq((tp_type *)ty)->members; m; m = m->next) {
            int s, a;
            rk__wgsl_layout(m->ty, &s, &a);
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

bool rk__wgsl_check_struct(emitter *e, tp_type *ty) {
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
        char *what = rk__tp_format(e->ctx, "member '%.*s' of struct '%s'", m->name->len, m->name->loc, rk__wgsl_struct_name(e, ty));
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
        if (!rk__wgsl_check_type(e, m->ty, m->name, what)) {
            ok = false;
            continue;
        }
        int s, a;
        rk__wgsl_layout(m->ty, &s, &a);
        off = (off + a - 1) / a * a;
        if (off != m->offset) {
            rk__tp_error(e->ctx, m->name, "%s is at byte %d in C but %d in WGSL (WGSL target)", what, m->offset, off);
            ok = false;
        }
        off += s;
    }
    if (ok) {
        int s, a;
        rk__wgsl_layout(ty, &s, &a);
        if (s != ty->size)
            rk__tp_error(e->ctx, ty->def_tok, "struct '%s' is %d bytes in C but %d in WGSL (WGSL target)",
                         rk__wgsl_struct_name(e, ty), ty->size, s);
    }
    return ok;
}

/* ---- literals ------------------------------------------------------------------------------ */

void rk__wgsl_integer(emitter *e, int64_t v, const tp_type *ty) {
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

void rk__wgsl_float_literal(emitter *e, double v) {
    char buf[64];
    snprintf(buf, sizeof buf, "%.9g", (double)(float)v);
    if (!strpbrk(buf, ".eEn")) strcat(buf, ".0");
    if (strchr(buf, 'n') || strchr(buf, 'i')) {
        /* inf or nan: no WGSL literal, and a constant expression that is
         * one invalidates the module, so the bits come from a variable. */
        e->late_helpers |= LATE_NONFINITE;
        put(e, v != v ? "bitcast<f32>(rk_f32_nan_bits)" : v > 0 ? "bitcast<f32>(rk_f32_inf_bits)"
                                                                 : "bitcast<f32>(rk_f32_inf_bits | 0x80000000u)");
        return;
    }
    if (buf[0] == '-')
        PRINTF(e, "(%sf)", buf);
    else
        PRINTF(e, "%sf", buf);
}

/* The zero of a WGSL type, for initializer lists shorter than their type. */
void rk__wgsl_zero_value(emitter *e, const tp_type *ty) { PRINTF(e, "%s()", rk__wgsl_type_name(e, unq((tp_type *)ty))); }
