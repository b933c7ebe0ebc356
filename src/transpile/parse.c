/* The parser's declarations part: scopes, declaration specifiers,
 * declarators, structs, enums, typedefs, initializers and the file-scope
 * loop with syntax-error recovery.
 *
 *   program    = (static-assert | declaration | function-definition)*
 *   declaration = declspec (declarator ("=" initializer)? ("," ...)*)? ";"
 */
#include <string.h>

#include "parse.h"

/* ---- tokens ---------------------------------------------------------------- */

bool rk__tp_p_is(parser *p, const char *s) { return p->tok->kind != TK_EOF && rk__tp_equal(p->tok, s); }

tp_token *rk__tp_p_next(parser *p) {
    tp_token *t = p->tok;
    if (t->kind != TK_EOF) p->tok = t->next;
    return t;
}

bool rk__tp_p_consume(parser *p, const char *s) {
    if (!rk__tp_p_is(p, s)) return false;
    rk__tp_p_next(p);
    return true;
}

_Noreturn void rk__tp_p_fail(parser *p, tp_token *tok, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *msg = rk__tp_vformat(p->ctx, fmt, ap);
    va_end(ap);
    rk__tp_syntax_error(p->ctx, tok, "%s", msg);
}

static const char *describe(parser *p, tp_token *tok) {
    if (tok->kind == TK_EOF) return "end of file";
    return rk__tp_format(p->ctx, "'%.*s'", tok->len > 40 ? 40 : tok->len, tok->loc);
}

void rk__tp_p_expect(parser *p, const char *s) {
    if (!rk__tp_p_consume(p, s)) rk__tp_p_fail(p, p->tok, "expected '%s' before %s", s, describe(p, p->tok));
}

void rk__tp_p_enter(parser *p, tp_token *tok) {
    if (++p->nesting > TP_MAX_NESTING) rk__tp_p_fail(p, tok, "nested too deeply (more than %d levels)", TP_MAX_NESTING);
}

void rk__tp_p_leave(parser *p) { p->nesting--; }

/* Generated code uses names that begin with rk__. */
static void check_reserved(parser *p, const tp_token *name) {
    if (name->len >= 4 && memcmp(name->loc, "rk__", 4) == 0)
        rk__tp_error(p->ctx, name, "identifiers beginning with 'rk__' are reserved for the transpiler");
}

/* ---- scopes ------------------------------------------------------------------ */

void rk__tp_push_scope(parser *p) {
    scope *s = rk__tp_alloc(p->ctx, sizeof *s);
    s->next = p->scope;
    p->scope = s;
}

void rk__tp_pop_scope(parser *p) { p->scope = p->scope->next; }

scope_entry *rk__tp_lookup(parser *p, const tp_token *name) {
    for (scope *s = p->scope; s; s = s->next) {
        scope_entry *e = rk__tp_map_get(&s->names, name->loc, name->len);
        if (e) return e;
    }
    return NULL;
}

static scope_entry *lookup_here(parser *p, const tp_token *name) {
    return rk__tp_map_get(&p->scope->names, name->loc, name->len);
}

scope_entry *rk__tp_declare(parser *p, const tp_token *name) {
    scope_entry *e = rk__tp_alloc(p->ctx, sizeof *e);
    rk__tp_map_put(p->ctx, &p->scope->names, name->loc, name->len, e);
    return e;
}

static tp_type *lookup_tag(parser *p, const tp_token *tag, bool here_only) {
    for (scope *s = p->scope; s; s = s->next) {
        tp_type *t = rk__tp_map_get(&s->tags, tag->loc, tag->len);
        if (t || here_only) return t;
    }
    return NULL;
}

bool rk__tp_is_typename(parser *p, const tp_token *tok) {
    static const char *const words[] = {
        "void", "_Bool", "char", "short", "int", "long", "float", "double", "signed", "unsigned",
        "struct", "union", "enum", "typedef", "static", "extern", "inline", "const", "volatile",
        "restrict", "__restrict", "__restrict__", "register", "auto", "_Thread_local", "_Atomic",
        "_Alignas", "_Noreturn", "_Complex", "_Imaginary", "__attribute__", "__rk_kernel", "__rk_block_size",
        "__rk_handler", "__rk_device", "__rk_shared", "__rk_grid_pos", "__inline", "__inline__",
        "typeof", "__typeof__", "__extension__",
    };
    if (tok->kind == TK_KEYWORD) {
        for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
            if (rk__tp_equal(tok, words[i])) return true;
        return false;
    }
    if (tok->kind != TK_IDENT) return false;
    scope_entry *e = rk__tp_lookup(p, tok);
    return e && e->type_def;
}

/* ---- declaration specifiers ------------------------------------------------- */

/* Skips a balanced (...) group starting at '('. */
static void skip_parens(parser *p) {
    tp_token *start = p->tok;
    rk__tp_p_expect(p, "(");
    int depth = 1;
    while (depth > 0) {
        if (p->tok->kind == TK_EOF) rk__tp_p_fail(p, start, "unbalanced parentheses");
        if (rk__tp_p_is(p, "(")) depth++;
        if (rk__tp_p_is(p, ")")) depth--;
        rk__tp_p_next(p);
    }
}

static tp_type *struct_decl(parser *p, tp_token *keyword);
static tp_type *enum_specifier(parser *p);

tp_type *rk__tp_declspec(parser *p, decl_attr *attr) {
    enum {
        VOID = 1 << 0, BOOL = 1 << 2, CHAR = 1 << 4, SHORT = 1 << 6, INT = 1 << 8, LONG = 1 << 10,
        FLOAT = 1 << 12, DOUBLE = 1 << 14, OTHER = 1 << 16, SIGNED = 1 << 17, UNSIGNED = 1 << 18,
    };
    tp_ctx *ctx = p->ctx;
    tp_type *ty = &rk__tp_ty_int;
    int counter = 0;
    bool is_const = false, is_volatile = false, is_restrict = false;
    tp_token *start = p->tok;

    while (rk__tp_is_typename(p, p->tok)) {
        tp_token *t = p->tok;
        /* storage classes and markers */
        if (rk__tp_equal(t, "typedef") || rk__tp_equal(t, "static") || rk__tp_equal(t, "extern") ||
            rk__tp_equal(t, "inline") || rk__tp_equal(t, "__inline") || rk__tp_equal(t, "__inline__") ||
            rk__tp_equal(t, "__rk_kernel") || rk__tp_equal(t, "__rk_handler") || rk__tp_equal(t, "__rk_device") ||
            rk__tp_equal(t, "__rk_shared") || rk__tp_equal(t, "_Thread_local")) {
            if (!attr) rk__tp_p_fail(p, t, "storage class not allowed here");
            rk__tp_p_next(p);
            if (rk__tp_equal(t, "typedef")) attr->is_typedef = true;
            else if (rk__tp_equal(t, "static")) { attr->is_static = true; attr->static_tok = t; }
            else if (rk__tp_equal(t, "extern")) { attr->is_extern = true; attr->extern_tok = t; }
            else if (rk__tp_equal(t, "__rk_shared")) { attr->is_shared = true; attr->shared_tok = t; }
            else if (rk__tp_equal(t, "_Thread_local"))
                rk__tp_error(ctx, t, "_Thread_local is a host-only construct; use RK_SHARED for per-block data");
            else if (rk__tp_equal(t, "__rk_kernel") || rk__tp_equal(t, "__rk_handler") || rk__tp_equal(t, "__rk_device")) {
                tp_fn_kind k = rk__tp_equal(t, "__rk_kernel") ? FN_KERNEL : rk__tp_equal(t, "__rk_handler") ? FN_HANDLER : FN_DEVICE;
                if (attr->fn_kind && attr->fn_kind != k) rk__tp_error(ctx, t, "a function has one kind: RK_KERNEL, RK_HANDLER or RK_DEVICE");
                attr->fn_kind = k;
                attr->kind_tok = t;
                if (k == FN_DEVICE) attr->is_inline = true;
            } else
                attr->is_inline = true;
            if (attr->is_typedef + attr->is_static + attr->is_extern > 1)
                rk__tp_error(ctx, t, "more than one storage class");
            continue;
        }
        if (rk__tp_equal(t, "__rk_block_size")) { /* RK_BLOCK_SIZE(x, y, z) */
            if (!attr) rk__tp_p_fail(p, t, "RK_BLOCK_SIZE is not allowed here");
            rk__tp_p_next(p);
            rk__tp_p_expect(p, "(");
            for (int i = 0; i < 3; i++) {
                if (i) rk__tp_p_expect(p, ",");
                attr->block[i] = (int)rk__tp_const_expr(p, "RK_BLOCK_SIZE");
            }
            rk__tp_p_expect(p, ")");
            attr->block_tok = t;
            continue;
        }
        if (rk__tp_equal(t, "register") || rk__tp_equal(t, "auto") || rk__tp_equal(t, "_Noreturn") ||
            rk__tp_equal(t, "__extension__")) {
            rk__tp_p_next(p);
            continue;
        }
        if (rk__tp_equal(t, "const")) { is_const = true; rk__tp_p_next(p); continue; }
        if (rk__tp_equal(t, "volatile")) { is_volatile = true; rk__tp_p_next(p); continue; }
        if (rk__tp_equal(t, "restrict") || rk__tp_equal(t, "__restrict") || rk__tp_equal(t, "__restrict__")) {
            is_restrict = true;
            rk__tp_p_next(p);
            continue;
        }
        if (rk__tp_equal(t, "_Atomic") || rk__tp_equal(t, "_Complex") || rk__tp_equal(t, "_Imaginary")) {
            rk__tp_error(ctx, t, "%.*s is not supported in kernels%s", t->len, t->loc,
                         rk__tp_equal(t, "_Atomic") ? "; use the atomic_* DSL functions" : "");
            rk__tp_p_next(p);
            if (rk__tp_equal(t, "_Atomic") && rk__tp_p_is(p, "(")) skip_parens(p);
            continue;
        }
        if (rk__tp_equal(t, "_Alignas") || rk__tp_equal(t, "__attribute__") || rk__tp_equal(t, "typeof") ||
            rk__tp_equal(t, "__typeof__")) {
            rk__tp_error(ctx, t, "%.*s is not supported in kernels", t->len, t->loc);
            rk__tp_p_next(p);
            if (rk__tp_p_is(p, "(")) skip_parens(p);
            if (rk__tp_equal(t, "typeof") || rk__tp_equal(t, "__typeof__")) {
                counter += OTHER;
                ty = &rk__tp_ty_error;
            }
            continue;
        }
        /* user-defined and special types */
        if (rk__tp_equal(t, "struct") || rk__tp_equal(t, "union") || rk__tp_equal(t, "enum") ||
            rk__tp_equal(t, "__rk_grid_pos") || t->kind == TK_IDENT) {
            if (counter) break; /* a typedef name after a type is the declared name */
            rk__tp_p_next(p);
            if (rk__tp_equal(t, "struct") || rk__tp_equal(t, "union"))
                ty = struct_decl(p, t);
            else if (rk__tp_equal(t, "enum"))
                ty = enum_specifier(p);
            else if (rk__tp_equal(t, "__rk_grid_pos"))
                ty = &rk__tp_ty_grid_pos;
            else
                ty = rk__tp_lookup(p, t)->type_def;
            counter += OTHER;
            continue;
        }
        rk__tp_p_next(p);
        if (rk__tp_equal(t, "void")) counter += VOID;
        else if (rk__tp_equal(t, "_Bool")) counter += BOOL;
        else if (rk__tp_equal(t, "char")) counter += CHAR;
        else if (rk__tp_equal(t, "short")) counter += SHORT;
        else if (rk__tp_equal(t, "int")) counter += INT;
        else if (rk__tp_equal(t, "long")) counter += LONG;
        else if (rk__tp_equal(t, "float")) counter += FLOAT;
        else if (rk__tp_equal(t, "double")) counter += DOUBLE;
        else if (rk__tp_equal(t, "signed")) counter |= SIGNED;
        else if (rk__tp_equal(t, "unsigned")) counter |= UNSIGNED;

        switch (counter) {
        case VOID: ty = &rk__tp_ty_void; break;
        case BOOL: ty = &rk__tp_ty_bool; break;
        case CHAR: case SIGNED + CHAR: ty = &rk__tp_ty_char; break;
        case UNSIGNED + CHAR: ty = &rk__tp_ty_uchar; break;
        case SHORT: case SHORT + INT: case SIGNED + SHORT: case SIGNED + SHORT + INT: ty = &rk__tp_ty_short; break;
        case UNSIGNED + SHORT: case UNSIGNED + SHORT + INT: ty = &rk__tp_ty_ushort; break;
        case INT: case SIGNED: case SIGNED + INT: ty = &rk__tp_ty_int; break;
        case UNSIGNED: case UNSIGNED + INT: ty = &rk__tp_ty_uint; break;
        case LONG: case LONG + INT: case LONG + LONG: case LONG + LONG + INT: case SIGNED + LONG:
        case SIGNED + LONG + INT: case SIGNED + LONG + LONG: case SIGNED + LONG + LONG + INT:
            ty = &rk__tp_ty_long; break;
        case UNSIGNED + LONG: case UNSIGNED + LONG + INT: case UNSIGNED + LONG + LONG:
        case UNSIGNED + LONG + LONG + INT:
            ty = &rk__tp_ty_ulong; break;
        case FLOAT: ty = &rk__tp_ty_float; break;
        case DOUBLE: ty = &rk__tp_ty_double; break;
        case LONG + DOUBLE:
            rk__tp_error(ctx, t, "long double is not supported");
            ty = &rk__tp_ty_double;
            break;
        default:
            rk__tp_p_fail(p, t, "invalid combination of type specifiers");
        }
    }
    if (counter == 0) {
        if (p->tok == start || (!attr || !(attr->is_static || attr->is_extern || attr->is_typedef || attr->fn_kind))) {
            const char *dsl = p->tok->kind == TK_IDENT ? rk__tp_dsl_spelling(p->tok->loc, p->tok->len) : NULL;
            if (dsl) rk__tp_p_fail(p, p->tok, "expected a type before %s; the DSL's is %s", describe(p, p->tok), dsl);
            rk__tp_p_fail(p, p->tok, "expected a type before %s", describe(p, p->tok));
        }
        rk__tp_error(ctx, p->tok, "type specifier missing (implicit int is not C11)");
    }
    return rk__tp_qualified(ctx, ty, is_const, is_volatile, is_restrict);
}

/* ---- structs and enums ------------------------------------------------------ */

/* A member's type, or the error type when it cannot be one. A member of an
 * incomplete type keeps no link to it: `struct S { struct S s; }` must not
 * leave S containing itself for the passes after the error to walk. */
static tp_type *check_member_type(parser *p, tp_type *ty, tp_token *name) {
    if (ty->kind == TY_FUNC)
        rk__tp_error(p->ctx, name, "a struct member cannot be a function");
    else if (ty->kind == TY_ARRAY && ty->array_len < 0)
        rk__tp_error(p->ctx, name, "flexible array members are not supported");
    else if (ty->kind == TY_VOID || (ty->kind == TY_STRUCT && !rk__tp_unqual(ty)->is_complete))
        rk__tp_error(p->ctx, name, "member '%.*s' has incomplete type '%s'", name->len, name->loc,
                     rk__tp_type_name(p->ctx, ty));
    else if (ty->kind == TY_GRID_POS)
        rk__tp_error(p->ctx, name, "rk_grid_pos cannot be a struct member");
    else
        return ty;
    return &rk__tp_ty_error;
}

static void struct_members(parser *p, tp_type *ty) {
    tp_member head = {0}, *cur = &head;
    int index = 0;
    rk__tp_p_enter(p, p->tok);
    while (!rk__tp_p_consume(p, "}")) {
        if (p->tok->kind == TK_EOF) rk__tp_p_fail(p, p->tok, "expected '}' at the end of the struct");
        if (rk__tp_p_is(p, "_Static_assert")) {
            rk__tp_static_assert(p);
            continue;
        }
        decl_attr attr = {0};
        tp_token *start = p->tok;
        tp_type *basety = rk__tp_declspec(p, &attr);
        if (attr.is_typedef || attr.is_static || attr.is_extern || attr.fn_kind || attr.is_shared || attr.is_inline)
            rk__tp_error(p->ctx, start, "storage classes and markers are not allowed on struct members");
        if (rk__tp_p_consume(p, ";")) {
            rk__tp_error(p->ctx, start, "anonymous struct members are not supported");
            continue;
        }
        bool first = true;
        while (first || rk__tp_p_consume(p, ",")) {
            first = false;
            tp_token *name = NULL;
            tp_token *at = p->tok;
            tp_type *mty = rk__tp_declarator(p, basety, &name);
            if (rk__tp_p_is(p, ":")) {
                rk__tp_error(p->ctx, p->tok, "bit-fields are not supported");
                rk__tp_p_next(p);
                rk__tp_const_expr(p, "bit-field width");
            }
            if (!name) {
                rk__tp_error(p->ctx, at, "a struct member needs a name");
                continue;
            }
            mty = check_member_type(p, mty, name);
            for (tp_member *m = head.next; m; m = m->next)
                if (m->name->len == name->len && memcmp(m->name->loc, name->loc, (size_t)name->len) == 0)
                    rk__tp_error(p->ctx, name, "duplicate member '%.*s'", name->len, name->loc);
            cur = cur->next = rk__tp_alloc(p->ctx, sizeof(tp_member));
            cur->ty = mty;
            cur->name = name;
            cur->index = index++;
        }
        rk__tp_p_expect(p, ";");
    }
    rk__tp_p_leave(p);
    ty->members = head.next;
    if (!ty->members) rk__tp_error(p->ctx, ty->def_tok, "empty structs are not supported (their size differs between C and CUDA)");
}

/* A unique, readable name for a struct in the output. */
static void name_struct(parser *p, tp_type *ty, const tp_token *typedef_name) {
    if (ty->emit_name) return;
    const tp_token *n = ty->tag ? ty->tag : typedef_name;
    const char *base = n ? rk__tp_strndup(p->ctx, n->loc, (size_t)n->len) : "rk_struct";
    const char *name = base;
    for (int i = 1; rk__tp_map_get(&p->ctx->struct_names, name, (int)strlen(name)); i++)
        name = rk__tp_format(p->ctx, "%s_%d", base, i);
    rk__tp_map_put(p->ctx, &p->ctx->struct_names, name, (int)strlen(name), ty);
    ty->emit_name = name;
}

static tp_type *struct_decl(parser *p, tp_token *keyword) {
    if (rk__tp_equal(keyword, "union")) rk__tp_error(p->ctx, keyword, "unions are not supported (WGSL and MSL have no equivalent)");
    tp_token *tag = NULL;
    if (p->tok->kind == TK_IDENT) tag = rk__tp_p_next(p);
    if (tag && !rk__tp_p_is(p, "{")) {
        tp_type *ty = lookup_tag(p, tag, false);
        if (ty) {
            if (ty->kind != TY_STRUCT) rk__tp_error(p->ctx, tag, "'%.*s' is not a struct tag", tag->len, tag->loc);
            return ty;
        }
        ty = rk__tp_struct_type(p->ctx);
        ty->tag = tag;
        ty->def_tok = tag;
        rk__tp_map_put(p->ctx, &p->scope->tags, tag->loc, tag->len, ty);
        return ty;
    }
    tp_token *brace = p->tok;
    rk__tp_p_expect(p, "{");
    tp_type *ty = NULL;
    if (tag) {
        ty = lookup_tag(p, tag, true);
        if (ty && ty->kind == TY_STRUCT && ty->is_being_defined) {
            rk__tp_error(p->ctx, tag, "nested redefinition of '%.*s'", tag->len, tag->loc);
            ty = NULL;
        } else if (ty && (ty->kind != TY_STRUCT || ty->is_complete)) {
            rk__tp_error(p->ctx, tag, "redefinition of '%.*s'", tag->len, tag->loc);
            ty = NULL;
        }
    }
    if (!ty) {
        ty = rk__tp_struct_type(p->ctx);
        ty->tag = tag;
        if (tag) rk__tp_map_put(p->ctx, &p->scope->tags, tag->loc, tag->len, ty);
    }
    ty->def_tok = tag ? tag : brace;
    /* While its members are read the struct is incomplete: a member of its
     * own type, or a nested definition of its tag, would make it contain
     * itself. */
    ty->is_being_defined = true;
    struct_members(p, ty);
    ty->is_being_defined = false;
    rk__tp_layout_struct(ty);
    if (ty->size > (1 << 24)) rk__tp_error(p->ctx, ty->def_tok, "struct is too large (%d bytes)", ty->size);
    /* Named now if tagged; an untagged struct takes its typedef's name. */
    if (tag) name_struct(p, ty, NULL);
    tp_item *item = rk__tp_alloc(p->ctx, sizeof *item);
    item->kind = IT_STRUCT;
    item->struct_ty = ty;
    *p->item_tail = item;
    p->item_tail = &item->next;
    return ty;
}

static tp_type *enum_specifier(parser *p) {
    tp_type *ty = rk__tp_enum_type(p->ctx);
    tp_token *tag = NULL;
    if (p->tok->kind == TK_IDENT) tag = rk__tp_p_next(p);
    if (tag && !rk__tp_p_is(p, "{")) {
        tp_type *t = lookup_tag(p, tag, false);
        if (!t) rk__tp_p_fail(p, tag, "unknown enum type 'enum %.*s'", tag->len, tag->loc);
        if (t->kind != TY_ENUM) rk__tp_p_fail(p, tag, "'%.*s' is not an enum tag", tag->len, tag->loc);
        return t;
    }
    rk__tp_p_expect(p, "{");
    int64_t val = 0;
    bool first = true;
    while (!rk__tp_p_consume(p, "}")) {
        if (!first) {
            rk__tp_p_expect(p, ",");
            if (rk__tp_p_consume(p, "}")) break;
        }
        first = false;
        tp_token *name = p->tok;
        if (name->kind != TK_IDENT) rk__tp_p_fail(p, name, "expected an enumerator name");
        rk__tp_p_next(p);
        if (rk__tp_p_consume(p, "=")) val = rk__tp_const_expr(p, "enumerator value");
        if (val < INT32_MIN || val > INT32_MAX) rk__tp_error(p->ctx, name, "enumerator value does not fit in int");
        if (lookup_here(p, name)) rk__tp_error(p->ctx, name, "redefinition of '%.*s'", name->len, name->loc);
        tp_obj *c = rk__tp_alloc(p->ctx, sizeof *c);
        c->name = rk__tp_strndup(p->ctx, name->loc, (size_t)name->len);
        c->tok = name;
        c->ty = &rk__tp_ty_int;
        c->is_enum_const = true;
        c->enum_val = (int32_t)val;
        rk__tp_declare(p, name)->enum_const = c;
        val = (int64_t)(int32_t)val + 1;
    }
    if (tag) rk__tp_map_put(p->ctx, &p->scope->tags, tag->loc, tag->len, ty);
    return ty;
}

/* ---- declarators ------------------------------------------------------------- */

static tp_type *pointers(parser *p, tp_type *ty) {
    while (rk__tp_p_consume(p, "*")) {
        ty = rk__tp_pointer_to(p->ctx, ty);
        for (;;) {
            if (rk__tp_p_consume(p, "const"))
                ty = rk__tp_qualified(p->ctx, ty, true, false, false);
            else if (rk__tp_p_consume(p, "volatile"))
                ty = rk__tp_qualified(p->ctx, ty, false, true, false);
            else if (rk__tp_p_consume(p, "restrict") || rk__tp_p_consume(p, "__restrict") ||
                     rk__tp_p_consume(p, "__restrict__"))
                ty = rk__tp_qualified(p->ctx, ty, false, false, true);
            else
                break;
        }
    }
    return ty;
}

static tp_type *type_suffix(parser *p, tp_type *ty);
static void check_declared_type(parser *p, tp_type *ty, tp_token *at);

static tp_type *func_params(parser *p, tp_type *ret) {
    tp_type *fn = rk__tp_func_type(p->ctx, ret);
    if (rk__tp_p_is(p, "void") && rk__tp_equal(p->tok->next, ")")) {
        rk__tp_p_next(p);
        rk__tp_p_next(p);
        return fn;
    }
    tp_param_type head = {0}, *cur = &head;
    tp_obj ohead = {0}, *ocur = &ohead;
    while (!rk__tp_p_consume(p, ")")) {
        if (cur != &head) rk__tp_p_expect(p, ",");
        if (rk__tp_p_is(p, "...")) {
            rk__tp_error(p->ctx, p->tok, "variadic functions are not supported");
            rk__tp_p_next(p);
            fn->is_variadic = true;
            rk__tp_p_expect(p, ")");
            break;
        }
        decl_attr attr = {0};
        tp_token *start = p->tok;
        tp_type *basety = rk__tp_declspec(p, &attr);
        if (attr.is_typedef || attr.is_static || attr.is_extern || attr.fn_kind || attr.is_inline)
            rk__tp_error(p->ctx, start, "storage classes and markers are not allowed on parameters");
        if (attr.is_shared) rk__tp_error(p->ctx, attr.shared_tok, "a parameter cannot be RK_SHARED");
        tp_token *name = NULL;
        tp_type *ty = rk__tp_declarator(p, basety, &name);
        /* Arrays and functions as parameters are pointers (C11 6.7.6.3). */
        if (ty->kind == TY_ARRAY)
            ty = rk__tp_qualified(p->ctx, rk__tp_pointer_to(p->ctx, ty->base), ty->is_const, ty->is_volatile,
                                  ty->is_restrict);
        else if (ty->kind == TY_FUNC)
            ty = rk__tp_pointer_to(p->ctx, ty);
        check_declared_type(p, ty, name ? name : start);
        cur = cur->next = rk__tp_alloc(p->ctx, sizeof(tp_param_type));
        cur->ty = ty;
        fn->param_count++;
        tp_obj *o = rk__tp_alloc(p->ctx, sizeof *o);
        o->ty = ty;
        o->tok = name ? name : start;
        o->name = name ? rk__tp_strndup(p->ctx, name->loc, (size_t)name->len) : NULL;
        if (name) check_reserved(p, name);
        o->is_param = o->is_local = true;
        ocur = ocur->next = o;
    }
    fn->params = head.next;
    fn->param_objs = ohead.next;
    return fn;
}

static tp_type *array_dims(parser *p, tp_type *ty) {
    tp_token *bracket = p->tok;
    rk__tp_p_next(p); /* [ */
    int64_t len = -1;
    while (rk__tp_p_is(p, "static") || rk__tp_p_is(p, "const") || rk__tp_p_is(p, "restrict")) rk__tp_p_next(p);
    if (!rk__tp_p_consume(p, "]")) {
        tp_node *n = rk__tp_conditional(p);
        int64_t v;
        if (!rk__tp_try_eval(p->ctx, n, &v)) {
            rk__tp_type_expr(p->ctx, n);
            if (n->ty->kind != TY_ERROR)
                rk__tp_error(p->ctx, bracket, "variable-length arrays are not supported: the size must be a constant expression");
            v = 1;
        } else if (v <= 0) {
            rk__tp_error(p->ctx, bracket, "array size must be positive");
            v = 1;
        } else if (v > (1 << 24)) {
            rk__tp_error(p->ctx, bracket, "array is too large (%lld elements)", (long long)v);
            v = 1;
        }
        len = v;
        rk__tp_p_expect(p, "]");
    }
    tp_type *base = type_suffix(p, ty);
    if (base->kind == TY_ARRAY && base->array_len < 0)
        rk__tp_error(p->ctx, bracket, "only the first dimension of an array may be omitted");
    if (base->kind == TY_VOID) rk__tp_error(p->ctx, bracket, "array of void");
    if (base->kind == TY_STRUCT && !rk__tp_unqual(base)->is_complete) {
        rk__tp_error(p->ctx, bracket, "array of incomplete type '%s'", rk__tp_type_name(p->ctx, base));
        base = &rk__tp_ty_error; /* no link back: the struct may be the one being defined */
    }
    if (base->kind == TY_FUNC) rk__tp_error(p->ctx, bracket, "array of functions");
    tp_type *arr = rk__tp_array_of(p->ctx, base, (int)len);
    if ((int64_t)base->size * (len < 0 ? 0 : len) > (1 << 30))
        rk__tp_error(p->ctx, bracket, "array is too large");
    return arr;
}

static tp_type *type_suffix(parser *p, tp_type *ty) {
    if (rk__tp_p_is(p, "(")) {
        tp_token *paren = rk__tp_p_next(p);
        rk__tp_p_enter(p, paren);
        tp_type *fn = func_params(p, ty);
        rk__tp_p_leave(p);
        if (ty->kind == TY_ARRAY || ty->kind == TY_FUNC)
            rk__tp_error(p->ctx, paren, "a function cannot return %s", ty->kind == TY_ARRAY ? "an array" : "a function");
        return fn;
    }
    if (rk__tp_p_is(p, "[")) {
        rk__tp_p_enter(p, p->tok);
        tp_type *t = array_dims(p, ty);
        rk__tp_p_leave(p);
        return t;
    }
    return ty;
}

tp_type *rk__tp_declarator(parser *p, tp_type *ty, tp_token **name) {
    rk__tp_p_enter(p, p->tok);
    ty = pointers(p, ty);
    *name = NULL;
    if (rk__tp_p_is(p, "(") && !rk__tp_is_typename(p, p->tok->next) && !rk__tp_equal(p->tok->next, ")")) {
        /* Nested declarator, e.g. (*p)[4]: the suffix after the parentheses
         * applies first, so skip the inner part, read the suffix, and come back. */
        tp_token *start = p->tok;
        skip_parens(p);
        tp_type *outer = type_suffix(p, ty);
        tp_token *after = p->tok;
        p->tok = start->next;
        tp_type *inner = rk__tp_declarator(p, outer, name);
        if (!rk__tp_p_is(p, ")")) rk__tp_p_fail(p, p->tok, "expected ')' in declarator");
        p->tok = after;
        rk__tp_p_leave(p);
        return inner;
    }
    if (p->tok->kind == TK_IDENT) *name = rk__tp_p_next(p);
    ty = type_suffix(p, ty);
    rk__tp_p_leave(p);
    return ty;
}

tp_type *rk__tp_typename(parser *p) {
    tp_type *base = rk__tp_declspec(p, NULL);
    tp_token *name = NULL;
    tp_token *at = p->tok;
    tp_type *ty = rk__tp_declarator(p, base, &name);
    if (name) rk__tp_p_fail(p, at, "unexpected name in a type");
    return ty;
}

/* Function pointers hide in many declarator shapes: find them all. */
static void check_declared_type(parser *p, tp_type *ty, tp_token *at) {
    for (int guard = 0; ty && guard < 4 * TP_MAX_NESTING; guard++) {
        if (ty->kind == TY_PTR && ty->base->kind == TY_FUNC) {
            rk__tp_error(p->ctx, at, "function pointers are not supported in kernels");
            return;
        }
        if (ty->kind == TY_FUNC) {
            ty = ty->return_ty; /* parameters were checked where they were declared */
        } else if (ty->kind == TY_PTR || ty->kind == TY_ARRAY) {
            ty = ty->base;
        } else {
            return;
        }
    }
}

/* ---- initializers ------------------------------------------------------------ */

tp_node *rk__tp_initializer(parser *p) {
    if (!rk__tp_p_is(p, "{")) return rk__tp_assign(p);
    tp_token *brace = rk__tp_p_next(p);
    rk__tp_p_enter(p, brace);
    tp_node *list = rk__tp_new_node(p, ND_INIT_LIST, brace);
    tp_node head = {0}, *cur = &head;
    while (!rk__tp_p_consume(p, "}")) {
        if (cur != &head) {
            rk__tp_p_expect(p, ",");
            if (rk__tp_p_consume(p, "}")) break;
        }
        if (rk__tp_p_is(p, ".") || rk__tp_p_is(p, "["))
            rk__tp_p_fail(p, p->tok, "designated initializers are not supported");
        cur = cur->next = rk__tp_initializer(p);
        list->nargs++;
    }
    list->args = head.next;
    rk__tp_p_leave(p);
    return list;
}

/* ---- _Static_assert ---------------------------------------------------------- */

tp_node *rk__tp_static_assert(parser *p) {
    tp_token *kw = rk__tp_p_next(p);
    rk__tp_p_expect(p, "(");
    tp_node *n = rk__tp_new_node(p, ND_STATIC_ASSERT, kw);
    n->lhs = rk__tp_conditional(p);
    n->message = "";
    if (rk__tp_p_consume(p, ",")) {
        if (p->tok->kind != TK_STR) rk__tp_p_fail(p, p->tok, "expected a string literal in _Static_assert");
        tp_buf b;
        rk__tp_buf_init(&b, p->ctx);
        while (p->tok->kind == TK_STR) rk__tp_buf_putn(&b, p->tok->str, strlen(p->tok->str)), rk__tp_p_next(p);
        n->message = b.data;
    }
    rk__tp_p_expect(p, ")");
    rk__tp_p_expect(p, ";");
    int64_t v;
    if (rk__tp_eval_const(p->ctx, n->lhs, &v, "_Static_assert condition") && !v)
        rk__tp_error(p->ctx, kw, "static assertion failed%s%s", *n->message ? ": " : "", n->message);
    n->ival = v;
    return n;
}

/* ---- declarations ------------------------------------------------------------ */

static tp_obj *new_obj(parser *p, tp_token *name, tp_type *ty) {
    check_reserved(p, name);
    tp_obj *o = rk__tp_alloc(p->ctx, sizeof *o);
    o->name = rk__tp_strndup(p->ctx, name->loc, (size_t)name->len);
    o->tok = name;
    o->ty = ty;
    return o;
}

static void declare_typedef(parser *p, tp_token *name, tp_type *ty) {
    check_reserved(p, name);
    scope_entry *old = lookup_here(p, name);
    if (old && !(old->type_def && rk__tp_same_type(old->type_def, ty)))
        rk__tp_error(p->ctx, name, "redefinition of '%.*s'", name->len, name->loc);
    if (ty->kind == TY_STRUCT && !ty->origin) name_struct(p, ty, name);
    rk__tp_declare(p, name)->type_def = ty;
}

/* Array length from an initializer list: int a[] = {1, 2, 3}. */
static tp_type *complete_from_init(parser *p, tp_type *ty, tp_node *init) {
    if (ty->kind != TY_ARRAY || ty->array_len >= 0 || !init || init->kind != ND_INIT_LIST) return ty;
    if (init->nargs == 0) {
        rk__tp_error(p->ctx, init->tok, "zero-length arrays are not supported");
        return rk__tp_array_of(p->ctx, ty->base, 1);
    }
    tp_type *t = rk__tp_array_of(p->ctx, ty->base, init->nargs);
    return rk__tp_qualified(p->ctx, t, ty->is_const, ty->is_volatile, false);
}

static bool is_const_object(const tp_type *ty) {
    while (ty->kind == TY_ARRAY) ty = ty->base;
    return ty->is_const;
}

static void check_object_type(parser *p, tp_type *ty, tp_token *name) {
    if (ty->kind == TY_VOID) {
        rk__tp_error(p->ctx, name, "variable '%.*s' has type void", name->len, name->loc);
    } else if (ty->kind == TY_STRUCT && !rk__tp_unqual(ty)->is_complete) {
        rk__tp_error(p->ctx, name, "variable '%.*s' has incomplete type '%s'", name->len, name->loc,
                     rk__tp_type_name(p->ctx, ty));
    } else if (ty->kind == TY_ARRAY && ty->array_len < 0) {
        rk__tp_error(p->ctx, name, "array '%.*s' needs a size", name->len, name->loc);
    } else if (ty->kind == TY_GRID_POS) {
        rk__tp_error(p->ctx, name, "rk_grid_pos can only be a stencil kernel's parameter");
    }
}

tp_node *rk__tp_local_declaration(parser *p) {
    decl_attr attr = {0};
    tp_token *start = p->tok;
    tp_type *basety = rk__tp_declspec(p, &attr);
    if (attr.fn_kind) rk__tp_error(p->ctx, attr.kind_tok, "RK_KERNEL, RK_HANDLER and RK_DEVICE mark file-scope functions");
    if (attr.is_static && !attr.is_typedef)
        rk__tp_error(p->ctx, attr.static_tok, "static local variables are not supported (use RK_SHARED for per-block data, or a file-scope const table)");
    if (attr.is_extern) rk__tp_error(p->ctx, attr.extern_tok, "extern declarations inside functions are not supported");
    tp_node head = {0}, *cur = &head;
    if (rk__tp_p_consume(p, ";")) return NULL;
    bool first = true;
    while (first || rk__tp_p_consume(p, ",")) {
        first = false;
        tp_token *name = NULL;
        tp_token *at = p->tok;
        tp_type *ty = rk__tp_declarator(p, basety, &name);
        if (!name) rk__tp_p_fail(p, at, "expected a variable name before %s", describe(p, at));
        check_declared_type(p, ty, name);
        if (attr.is_typedef) {
            declare_typedef(p, name, ty);
            continue;
        }
        if (ty->kind == TY_FUNC) {
            rk__tp_error(p->ctx, name, "function declarations inside functions are not supported");
            continue;
        }
        if (lookup_here(p, name)) rk__tp_error(p->ctx, name, "redefinition of '%.*s'", name->len, name->loc);
        tp_obj *var = new_obj(p, name, ty);
        var->is_local = true;
        var->is_shared = attr.is_shared;
        tp_node *init = NULL;
        if (rk__tp_p_is(p, "=")) {
            tp_token *eq = rk__tp_p_next(p);
            /* The name is in scope in its own initializer, as in C. */
            rk__tp_declare(p, name)->var = var;
            init = rk__tp_initializer(p);
            if (attr.is_shared) rk__tp_error(p->ctx, eq, "RK_SHARED variables cannot have an initializer");
            var->ty = ty = complete_from_init(p, ty, init);
        } else {
            rk__tp_declare(p, name)->var = var;
        }
        check_object_type(p, ty, name);
        *p->local_tail = var;
        p->local_tail = &var->next;
        tp_node *d = rk__tp_new_node(p, ND_DECL, name);
        d->obj = var;
        d->init = init;
        cur = cur->next = d;
    }
    rk__tp_p_expect(p, ";");
    (void)start;
    return head.next;
}

static void add_item(parser *p, tp_item_kind kind, tp_obj *obj, tp_node *node) {
    tp_item *item = rk__tp_alloc(p->ctx, sizeof *item);
    item->kind = kind;
    item->obj = obj;
    item->node = node;
    *p->item_tail = item;
    p->item_tail = &item->next;
}

static tp_obj *declare_function(parser *p, tp_token *name, tp_type *ty, decl_attr *attr) {
    tp_ctx *ctx = p->ctx;
    if (rk__tp_find_builtin(name->loc, name->len, NULL))
        rk__tp_error(ctx, name, "'%.*s' is a builtin function of the DSL or <math.h>; it cannot be redeclared",
                     name->len, name->loc);
    scope_entry *e = lookup_here(p, name);
    if (e && e->var && e->var->is_function) {
        tp_obj *fn = e->var;
        if (!rk__tp_same_type(fn->ty, ty)) {
            rk__tp_error(ctx, name, "conflicting types for '%.*s'", name->len, name->loc);
            rk__tp_note(ctx, fn->tok, "previous declaration is here");
        } else if (attr->fn_kind != fn->fn_kind && attr->fn_kind) {
            if (fn->fn_kind) {
                rk__tp_error(ctx, name, "'%.*s' was declared with a different kind marker", name->len, name->loc);
            } else {
                fn->fn_kind = attr->fn_kind;
                fn->kind_tok = attr->kind_tok;
            }
        }
        if (attr->block_tok) {
            memcpy(fn->block, attr->block, sizeof fn->block);
            fn->block_tok = attr->block_tok;
        }
        return fn;
    }
    if (e) rk__tp_error(ctx, name, "redefinition of '%.*s' as a different kind of symbol", name->len, name->loc);
    tp_obj *fn = new_obj(p, name, ty);
    fn->is_function = true;
    fn->fn_kind = attr->fn_kind;
    fn->kind_tok = attr->kind_tok;
    fn->is_static = attr->is_static;
    fn->is_inline = attr->is_inline;
    memcpy(fn->block, attr->block, sizeof fn->block);
    fn->block_tok = attr->block_tok;
    rk__tp_declare(p, name)->var = fn;
    *p->fn_tail = fn;
    p->fn_tail = &fn->next;
    return fn;
}

static void function_definition(parser *p, tp_obj *fn, tp_type *ty, tp_token *name) {
    tp_ctx *ctx = p->ctx;
    if (fn->body) {
        rk__tp_error(ctx, name, "redefinition of '%.*s'", name->len, name->loc);
        rk__tp_note(ctx, fn->tok, "previous definition is here");
    }
    tp_obj *def = fn;
    def->tok = name;
    def->ty = ty;
    p->fn = def;
    def->params = NULL;
    tp_obj *locals = NULL;
    p->local_tail = &locals;
    rk__tp_push_scope(p);
    tp_obj **ptail = &def->params;
    for (tp_obj *po = ty->param_objs; po; po = po->next) {
        tp_obj *param = rk__tp_alloc(ctx, sizeof *param);
        *param = *po;
        param->next = NULL;
        if (!param->name) {
            rk__tp_error(ctx, param->tok, "parameter name omitted in a function definition");
            param->name = rk__tp_format(ctx, "rk__unnamed%d", ++ctx->unique);
        } else {
            tp_token *pn = param->tok;
            if (lookup_here(p, pn)) rk__tp_error(ctx, pn, "redefinition of parameter '%.*s'", pn->len, pn->loc);
            rk__tp_declare(p, pn)->var = param;
        }
        if (param->ty->kind == TY_STRUCT && !rk__tp_unqual(param->ty)->is_complete)
            rk__tp_error(ctx, param->tok, "parameter has incomplete type '%s'", rk__tp_type_name(ctx, param->ty));
        *ptail = param;
        ptail = &param->next;
    }
    p->loop_depth = p->break_depth = 0;
    p->cur_switch = NULL;
    def->body = rk__tp_compound_stmt(p, false);
    rk__tp_pop_scope(p);
    p->fn = NULL;
    def->definition = def;
    rk__tp_sema_function(ctx, def);
}

static void global_variable(parser *p, tp_token *name, tp_type *ty, decl_attr *attr) {
    tp_ctx *ctx = p->ctx;
    if (attr->fn_kind) rk__tp_error(ctx, attr->kind_tok, "RK_KERNEL, RK_HANDLER and RK_DEVICE mark functions");
    if (attr->is_shared)
        rk__tp_error(ctx, attr->shared_tok, "RK_SHARED variables must be declared inside a function");
    else if (attr->is_extern)
        rk__tp_error(ctx, attr->extern_tok, "extern variables are not supported in kernels");
    scope_entry *e = lookup_here(p, name);
    if (e) rk__tp_error(ctx, name, "redefinition of '%.*s'", name->len, name->loc);
    if (rk__tp_find_builtin(name->loc, name->len, NULL))
        rk__tp_error(ctx, name, "'%.*s' is a builtin function of the DSL or <math.h>", name->len, name->loc);
    tp_obj *var = new_obj(p, name, ty);
    var->is_static = attr->is_static;
    tp_node *init = NULL;
    if (rk__tp_p_consume(p, "=")) {
        rk__tp_declare(p, name)->var = var;
        init = rk__tp_initializer(p);
        var->ty = ty = complete_from_init(p, ty, init);
    } else {
        rk__tp_declare(p, name)->var = var;
    }
    var->init = init;
    if (!attr->is_shared && !attr->is_extern) {
        if (!is_const_object(ty))
            rk__tp_error(ctx, name,
                         "file-scope variables must be const: kernels share no mutable globals (pass a buffer instead)");
        else if (!init)
            rk__tp_error(ctx, name, "a const file-scope variable needs an initializer");
    }
    check_object_type(p, ty, name);
    add_item(p, IT_VAR, var, NULL);
    if (init) rk__tp_sema_global(ctx, var);
}

static void top_level(parser *p) {
    tp_ctx *ctx = p->ctx;
    if (rk__tp_p_consume(p, ";")) return;
    if (rk__tp_p_is(p, "_Static_assert")) {
        add_item(p, IT_STATIC_ASSERT, NULL, rk__tp_static_assert(p));
        return;
    }
    if (rk__tp_p_is(p, "asm") || rk__tp_p_is(p, "__asm__"))
        rk__tp_p_fail(p, p->tok, "inline assembly is not supported");
    decl_attr attr = {0};
    tp_type *basety = rk__tp_declspec(p, &attr);
    if (rk__tp_p_consume(p, ";")) {
        if (attr.fn_kind) rk__tp_error(ctx, attr.kind_tok, "the kind marker needs a function");
        return;
    }
    bool first = true;
    while (first || rk__tp_p_consume(p, ",")) {
        tp_token *at = p->tok;
        tp_token *name = NULL;
        tp_type *ty = rk__tp_declarator(p, basety, &name);
        if (!name) rk__tp_p_fail(p, at, "expected a name before %s", describe(p, at));
        check_declared_type(p, ty, name);
        if (attr.is_typedef) {
            declare_typedef(p, name, ty);
        } else if (ty->kind == TY_FUNC) {
            if (attr.is_shared) rk__tp_error(ctx, attr.shared_tok, "RK_SHARED marks variables, not functions");
            tp_obj *fn = declare_function(p, name, ty, &attr);
            if (first && rk__tp_p_is(p, "{")) {
                function_definition(p, fn, ty, name);
                add_item(p, IT_FUNC, fn, fn->body);
                return;
            }
            if (!fn->params) {
                fn->params = ty->param_objs;
                fn->ty = ty;
            }
            add_item(p, IT_FUNC, fn, NULL);
        } else {
            global_variable(p, name, ty, &attr);
        }
        first = false;
    }
    rk__tp_p_expect(p, ";");
}

/* After a syntax error at file scope: skip from the declaration's start to
 * its end, keeping braces balanced. */
static void sync_top_level(parser *p, tp_token *start) {
    tp_token *t = start;
    int depth = 0;
    for (; t->kind != TK_EOF; t = t->next) {
        if (rk__tp_equal(t, "{")) {
            depth++;
        } else if (rk__tp_equal(t, "}")) {
            if (depth > 0 && --depth > 0) continue;
            t = t->next;
            break;
        } else if (rk__tp_equal(t, ";") && depth == 0) {
            t = t->next;
            break;
        }
    }
    p->tok = t;
}

tp_program *rk__tp_parse(tp_ctx *ctx, tp_token *tok) {
    tp_program *prog = rk__tp_alloc(ctx, sizeof *prog);
    parser *p = rk__tp_alloc(ctx, sizeof *p);
    p->ctx = ctx;
    p->tok = tok;
    p->prog = prog;
    p->item_tail = &prog->items;
    p->fn_tail = &prog->functions;
    rk__tp_push_scope(p);
    scope *file_scope = p->scope;
    jmp_buf here;
    jmp_buf *outer = ctx->recover;
    while (p->tok->kind != TK_EOF) {
        ctx->recover = &here;
        ctx->error_tok = NULL;
        p->decl_start = p->tok;
        if (setjmp(here) == 0) {
            top_level(p);
        } else {
            p->scope = file_scope;
            p->nesting = 0;
            p->fn = NULL;
            sync_top_level(p, p->decl_start);
        }
    }
    ctx->recover = outer;
    return prog;
}
