/* The MSL emitter's statements: C's, with declarations in Metal's spelling
 * (a pointer carries its address space; RK_SHARED becomes threadgroup, which
 * Metal allows only in a kernel function). */
#include "emit_msl.h"

static void declare(msl_emitter *e, tp_node *n) {
    tp_obj *o = n->obj;
    if (o->is_shared) {
        if (e->fn && e->fn->entry_kind != RK_TRANSPILE_GLOBAL)
            rk__tp_error(e->ctx, o->tok, "'%s': Metal allows threadgroup memory (RK_SHARED) only in a kernel "
                                         "function, not in '%s' (MSL target)", o->name, e->fn->name);
        msl_put(e, "threadgroup ");
    }
    rk__msl_declaration(e, o->ty, rk__msl_obj_name(e, o), o->ty->kind == TY_PTR ? rk__msl_obj_space(e, o) : MS_NONE);
    if (n->init) {
        msl_put(e, " = ");
        if (n->init->kind == ND_INIT_LIST)
            rk__msl_init_list(e, n->init);
        else
            rk__msl_expr(e, n->init, MP_ASSIGN);
    }
}

static void string_literal(msl_emitter *e, const char *s) {
    msl_put(e, "\"");
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            MSL_PRINTF(e, "\\%c", *s);
        else if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
            MSL_PRINTF(e, "\\%03o", (unsigned char)*s);
        else
            rk__tp_buf_putn(e->out, s, 1);
    }
    msl_put(e, "\"");
}

/* The body of if/for/while: always braced. */
static void body(msl_emitter *e, tp_node *n) {
    msl_put(e, "{\n");
    e->indent++;
    if (n->kind == ND_BLOCK) {
        rk__msl_stmt(e, n->body);
    } else {
        tp_node *next = n->next;
        n->next = NULL;
        rk__msl_stmt(e, n);
        n->next = next;
    }
    e->indent--;
    msl_line(e);
    msl_put(e, "}");
}

static void for_stmt(msl_emitter *e, tp_node *n) {
    int decls = 0;
    for (tp_node *d = n->init; d; d = d->next) decls++;
    bool hoist = decls > 1; /* C++ allows one declaration in a for header */
    if (hoist) {
        msl_line(e);
        msl_put(e, "{\n");
        e->indent++;
        rk__msl_stmt(e, n->init);
    }
    msl_line(e);
    msl_put(e, "for (");
    if (!hoist && n->init) {
        if (n->init->kind == ND_DECL)
            declare(e, n->init);
        else
            rk__msl_expr(e, n->init->lhs, MP_COMMA);
    }
    msl_put(e, ";");
    if (n->cond) {
        msl_put(e, " ");
        rk__msl_expr(e, n->cond, MP_COMMA);
    }
    msl_put(e, ";");
    if (n->inc) {
        msl_put(e, " ");
        rk__msl_expr(e, n->inc, MP_COMMA);
    }
    msl_put(e, ") ");
    body(e, n->then);
    msl_put(e, "\n");
    if (hoist) {
        e->indent--;
        msl_line(e);
        msl_put(e, "}\n");
    }
}

static void keyword_expr(msl_emitter *e, const char *head, tp_node *x, const char *tail) {
    msl_put(e, head);
    rk__msl_expr(e, x, MP_COMMA);
    msl_put(e, tail);
}

void rk__msl_stmt(msl_emitter *e, tp_node *n) {
    for (; n; n = n->next) {
        switch (n->kind) {
        case ND_BLOCK:
            msl_line(e);
            body(e, n);
            msl_put(e, "\n");
            break;
        case ND_EXPR_STMT:
            msl_line(e);
            keyword_expr(e, "", n->lhs, ";\n");
            break;
        case ND_DECL:
            msl_line(e);
            declare(e, n);
            msl_put(e, ";\n");
            break;
        case ND_IF: {
            msl_line(e);
            keyword_expr(e, "if (", n->cond, ") ");
            body(e, n->then);
            tp_node *arm = n;
            while (arm->els && arm->els->kind == ND_IF && !arm->els->next) {
                arm = arm->els;
                keyword_expr(e, " else if (", arm->cond, ") ");
                body(e, arm->then);
            }
            if (arm->els) {
                msl_put(e, " else ");
                body(e, arm->els);
            }
            msl_put(e, "\n");
            break;
        }
        case ND_FOR: for_stmt(e, n); break;
        case ND_WHILE:
            msl_line(e);
            keyword_expr(e, "while (", n->cond, ") ");
            body(e, n->then);
            msl_put(e, "\n");
            break;
        case ND_DO:
            msl_line(e);
            msl_put(e, "do ");
            body(e, n->then);
            keyword_expr(e, " while (", n->cond, ");\n");
            break;
        case ND_SWITCH:
            msl_line(e);
            keyword_expr(e, "switch (", n->cond, ") ");
            body(e, n->body);
            msl_put(e, "\n");
            break;
        case ND_CASE: case ND_DEFAULT:
            e->indent--;
            msl_line(e);
            if (n->kind == ND_CASE) {
                msl_put(e, "case ");
                rk__msl_integer(e, n->ival, n->ty ? n->ty : &rk__tp_ty_long);
                msl_put(e, ":\n");
            } else {
                msl_put(e, "default:\n");
            }
            e->indent++;
            rk__msl_stmt(e, n->body);
            break;
        case ND_BREAK: msl_line(e); msl_put(e, "break;\n"); break;
        case ND_CONTINUE: msl_line(e); msl_put(e, "continue;\n"); break;
        case ND_RETURN:
            msl_line(e);
            if (n->lhs)
                keyword_expr(e, "return ", n->lhs, ";\n");
            else
                msl_put(e, "return;\n");
            break;
        case ND_NULL_STMT: msl_line(e); msl_put(e, ";\n"); break;
        case ND_STATIC_ASSERT:
            msl_line(e);
            msl_put(e, "static_assert(");
            rk__msl_expr(e, n->lhs, MP_ASSIGN);
            msl_put(e, ", ");
            string_literal(e, *n->message ? n->message : "static assertion");
            msl_put(e, ");\n");
            break;
        default: break;
        }
    }
}
