/* Types and their layout. Sizes and alignments follow the x86-64 System V
 * ABI (LP64), which NVCC/NVRTC use for device code on the same host, so a
 * struct laid out here matches both the host and the device. */
#include <string.h>

#include "tp.h"

#define SCALAR_(kind_, size_, unsigned_) \
    {.kind = (kind_), .size = (size_), .align = (size_), .is_unsigned = (unsigned_), .is_complete = true}

tp_type rk__tp_ty_error = {.kind = TY_ERROR, .size = 1, .align = 1, .is_complete = true};
tp_type rk__tp_ty_void = {.kind = TY_VOID, .size = 1, .align = 1};
tp_type rk__tp_ty_bool = SCALAR_(TY_BOOL, 1, true);
tp_type rk__tp_ty_char = SCALAR_(TY_CHAR, 1, false); /* plain char is signed on x86-64 */
tp_type rk__tp_ty_schar = SCALAR_(TY_CHAR, 1, false);
tp_type rk__tp_ty_uchar = SCALAR_(TY_CHAR, 1, true);
tp_type rk__tp_ty_short = SCALAR_(TY_SHORT, 2, false);
tp_type rk__tp_ty_ushort = SCALAR_(TY_SHORT, 2, true);
tp_type rk__tp_ty_int = SCALAR_(TY_INT, 4, false);
tp_type rk__tp_ty_uint = SCALAR_(TY_INT, 4, true);
tp_type rk__tp_ty_long = SCALAR_(TY_LONG, 8, false);
tp_type rk__tp_ty_ulong = SCALAR_(TY_LONG, 8, true);
tp_type rk__tp_ty_float = SCALAR_(TY_FLOAT, 4, false);
tp_type rk__tp_ty_double = SCALAR_(TY_DOUBLE, 8, false);
/* Opaque: only the stencil builtins look inside. */
tp_type rk__tp_ty_grid_pos = {.kind = TY_GRID_POS, .size = 24, .align = 4, .is_complete = true};

bool rk__tp_is_integer(const tp_type *ty) {
    switch (ty->kind) {
    case TY_BOOL: case TY_CHAR: case TY_SHORT: case TY_INT: case TY_LONG: case TY_ENUM:
        return true;
    default:
        return false;
    }
}

bool rk__tp_is_flonum(const tp_type *ty) { return ty->kind == TY_FLOAT || ty->kind == TY_DOUBLE; }
bool rk__tp_is_arith(const tp_type *ty) { return rk__tp_is_integer(ty) || rk__tp_is_flonum(ty); }
bool rk__tp_is_scalar(const tp_type *ty) { return rk__tp_is_arith(ty) || ty->kind == TY_PTR; }
bool rk__tp_is_pointer_like(const tp_type *ty) { return ty->kind == TY_PTR || ty->kind == TY_ARRAY; }

tp_type *rk__tp_unqual(tp_type *ty) { return ty->origin ? ty->origin : ty; }

tp_type *rk__tp_copy_type(tp_ctx *ctx, const tp_type *ty) {
    tp_type *t = rk__tp_alloc(ctx, sizeof *t);
    *t = *ty;
    t->origin = ty->origin ? ty->origin : (tp_type *)ty;
    return t;
}

tp_type *rk__tp_qualified(tp_ctx *ctx, tp_type *ty, bool is_const, bool is_volatile, bool is_restrict) {
    if (!is_const && !is_volatile && !is_restrict) return ty;
    if ((ty->is_const || !is_const) && (ty->is_volatile || !is_volatile) && (ty->is_restrict || !is_restrict))
        return ty;
    tp_type *t = rk__tp_copy_type(ctx, ty);
    t->is_const |= is_const;
    t->is_volatile |= is_volatile;
    t->is_restrict |= is_restrict;
    return t;
}

tp_type *rk__tp_pointer_to(tp_ctx *ctx, tp_type *base) {
    tp_type *t = rk__tp_alloc(ctx, sizeof *t);
    t->kind = TY_PTR;
    t->size = t->align = 8;
    t->is_unsigned = true;
    t->base = base;
    t->is_complete = true;
    return t;
}

tp_type *rk__tp_array_of(tp_ctx *ctx, tp_type *base, int len) {
    tp_type *t = rk__tp_alloc(ctx, sizeof *t);
    t->kind = TY_ARRAY;
    int64_t size = (int64_t)base->size * (len < 0 ? 0 : len);
    t->size = size > INT32_MAX ? INT32_MAX : (int)size;
    t->align = base->align;
    t->base = base;
    t->array_len = len;
    t->is_complete = len >= 0;
    return t;
}

tp_type *rk__tp_func_type(tp_ctx *ctx, tp_type *return_ty) {
    tp_type *t = rk__tp_alloc(ctx, sizeof *t);
    t->kind = TY_FUNC;
    t->size = t->align = 1;
    t->return_ty = return_ty;
    return t;
}

tp_type *rk__tp_struct_type(tp_ctx *ctx) {
    tp_type *t = rk__tp_alloc(ctx, sizeof *t);
    t->kind = TY_STRUCT;
    t->size = 0;
    t->align = 1;
    return t;
}

tp_type *rk__tp_enum_type(tp_ctx *ctx) {
    tp_type *t = rk__tp_alloc(ctx, sizeof *t);
    t->kind = TY_ENUM;
    t->size = t->align = 4;
    t->is_complete = true;
    return t;
}

static int align_to(int n, int align) { return (n + align - 1) / align * align; }

void rk__tp_layout_struct(tp_type *ty) {
    int64_t offset = 0;
    int align = 1;
    for (tp_member *m = ty->members; m; m = m->next) {
        int a = m->ty->align > 0 ? m->ty->align : 1;
        offset = (offset + a - 1) / a * a;
        if (offset > INT32_MAX / 2) offset = INT32_MAX / 2; /* absurd sizes are refused elsewhere */
        m->offset = (int)offset;
        offset += m->ty->size;
        if (a > align) align = a;
    }
    if (offset > INT32_MAX / 2) offset = INT32_MAX / 2;
    ty->size = align_to((int)offset, align);
    ty->align = align;
    ty->is_complete = true;
}

bool rk__tp_same_type(const tp_type *a, const tp_type *b) {
    if (a == b) return true;
    if (a->origin) return rk__tp_same_type(a->origin, b);
    if (b->origin) return rk__tp_same_type(a, b->origin);
    if (a->kind != b->kind) return false;
    switch (a->kind) {
    case TY_CHAR: case TY_SHORT: case TY_INT: case TY_LONG:
        return a->is_unsigned == b->is_unsigned;
    case TY_VOID: case TY_BOOL: case TY_FLOAT: case TY_DOUBLE: case TY_GRID_POS: case TY_ERROR:
        return true;
    case TY_PTR:
        return a->base->is_const == b->base->is_const && a->base->is_volatile == b->base->is_volatile &&
               rk__tp_same_type(a->base, b->base);
    case TY_ARRAY:
        return a->array_len == b->array_len && rk__tp_same_type(a->base, b->base);
    case TY_FUNC: {
        if (!rk__tp_same_type(a->return_ty, b->return_ty) || a->param_count != b->param_count) return false;
        const tp_param_type *p = a->params, *q = b->params;
        for (; p && q; p = p->next, q = q->next)
            if (!rk__tp_same_type(p->ty, q->ty)) return false;
        return true;
    }
    default: /* struct and enum types are the same only when identical */
        return false;
    }
}

static int rank(const tp_type *ty) {
    switch (ty->kind) {
    case TY_BOOL: return 0;
    case TY_CHAR: return 1;
    case TY_SHORT: return 2;
    case TY_INT: case TY_ENUM: return 3;
    default: return 4;
    }
}

/* The usual arithmetic conversions (C11 6.3.1.8). */
tp_type *rk__tp_common_type(tp_type *a, tp_type *b) {
    a = rk__tp_unqual(a);
    b = rk__tp_unqual(b);
    if (a->kind == TY_DOUBLE || b->kind == TY_DOUBLE) return &rk__tp_ty_double;
    if (a->kind == TY_FLOAT || b->kind == TY_FLOAT) return &rk__tp_ty_float;
    /* Integer promotions first. */
    if (rank(a) < 3 || a->kind == TY_ENUM) a = &rk__tp_ty_int;
    if (rank(b) < 3 || b->kind == TY_ENUM) b = &rk__tp_ty_int;
    if (a->size != b->size) return a->size > b->size ? a : b;
    return a->is_unsigned ? a : b;
}

bool rk__tp_contains_pointer(const tp_type *ty) {
    switch (ty->kind) {
    case TY_PTR:
        return true;
    case TY_ARRAY:
        return rk__tp_contains_pointer(ty->base);
    case TY_STRUCT:
        for (tp_member *m = ty->members; m; m = m->next)
            if (rk__tp_contains_pointer(m->ty)) return true;
        return false;
    default:
        return false;
    }
}

static void type_name(tp_buf *b, const tp_type *ty) {
    switch (ty->kind) {
    case TY_PTR:
        type_name(b, ty->base);
        rk__tp_buf_puts(b, " *");
        if (ty->is_const) rk__tp_buf_puts(b, "const");
        return;
    case TY_ARRAY:
        type_name(b, ty->base);
        if (ty->array_len >= 0)
            rk__tp_buf_printf(b, "[%d]", ty->array_len);
        else
            rk__tp_buf_puts(b, "[]");
        return;
    case TY_FUNC:
        type_name(b, ty->return_ty);
        rk__tp_buf_puts(b, " (");
        for (tp_param_type *p = ty->params; p; p = p->next) {
            type_name(b, p->ty);
            if (p->next) rk__tp_buf_puts(b, ", ");
        }
        rk__tp_buf_puts(b, ")");
        return;
    default:
        break;
    }
    if (ty->is_const) rk__tp_buf_puts(b, "const ");
    if (ty->is_volatile) rk__tp_buf_puts(b, "volatile ");
    switch (ty->kind) {
    case TY_ERROR: rk__tp_buf_puts(b, "<error>"); break;
    case TY_VOID: rk__tp_buf_puts(b, "void"); break;
    case TY_BOOL: rk__tp_buf_puts(b, "_Bool"); break;
    case TY_CHAR: rk__tp_buf_puts(b, ty->is_unsigned ? "unsigned char" : "char"); break;
    case TY_SHORT: rk__tp_buf_puts(b, ty->is_unsigned ? "unsigned short" : "short"); break;
    case TY_INT: rk__tp_buf_puts(b, ty->is_unsigned ? "unsigned int" : "int"); break;
    case TY_LONG: rk__tp_buf_puts(b, ty->is_unsigned ? "unsigned long" : "long"); break;
    case TY_FLOAT: rk__tp_buf_puts(b, "float"); break;
    case TY_DOUBLE: rk__tp_buf_puts(b, "double"); break;
    case TY_ENUM: rk__tp_buf_puts(b, "enum"); break;
    case TY_GRID_POS: rk__tp_buf_puts(b, "rk_grid_pos"); break;
    case TY_STRUCT: {
        const tp_type *s = ty->origin ? ty->origin : ty;
        if (s->tag)
            rk__tp_buf_printf(b, "struct %.*s", s->tag->len, s->tag->loc);
        else if (s->emit_name)
            rk__tp_buf_printf(b, "%s", s->emit_name);
        else
            rk__tp_buf_puts(b, "struct <anonymous>");
        break;
    }
    default:
        break;
    }
}

char *rk__tp_type_name(tp_ctx *ctx, const tp_type *ty) {
    tp_buf b;
    rk__tp_buf_init(&b, ctx);
    type_name(&b, ty);
    return b.data;
}
