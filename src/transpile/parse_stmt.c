/* The parser's statements part. Every block item is its own recovery point:
 * after a syntax error the parser skips to the end of that statement and
 * goes on, so one compilation reports every error.
 *
 *   stmt = "return" expr? ";" | "if" "(" expr ")" stmt ("else" stmt)?
 *        | "switch" "(" expr ")" stmt | "case" const-expr ":" stmt | "default" ":" stmt
 *        | "for" "(" (declaration | expr? ";") expr? ";" expr? ")" stmt
 *        | "while" "(" expr ")" stmt | "do" stmt "while" "(" expr ")" ";"
 *        | "break" ";" | "continue" ";" | "{" block-item* "}" | expr? ";"
 */
#include <string.h>

#include "parse.h"

static tp_node *stmt(parser *p);
static tp_node *block(parser *p, bool new_scope, bool switch_body);

typedef struct saved_state {
    scope *scope;
    int nesting, loop_depth, break_depth;
    tp_node *cur_switch;
    bool in_switch_body;
} saved_state;

static void save(parser *p, saved_state *s) {
    *s = (saved_state){p->scope, p->nesting, p->loop_depth, p->break_depth, p->cur_switch, p->in_switch_body};
}

static void restore(parser *p, const saved_state *s) {
    p->scope = s->scope;
    p->nesting = s->nesting;
    p->loop_depth = s->loop_depth;
    p->break_depth = s->break_depth;
    p->cur_switch = s->cur_switch;
    p->in_switch_body = s->in_switch_body;
}

/* After a syntax error inside a statement: skip from the statement's start
 * to its end, keeping braces balanced. */
static void sync_stmt(parser *p, tp_token *start) {
    tp_token *t = start;
    int depth = 0;
    for (; t->kind != TK_EOF; t = t->next) {
        if (rk__tp_equal(t, "{")) {
            depth++;
        } else if (rk__tp_equal(t, "}")) {
            if (depth == 0) break; /* closes the enclosing block: leave it */
            if (--depth == 0) {
                t = t->next;
                break;
            }
        } else if (rk__tp_equal(t, ";") && depth == 0) {
            t = t->next;
            break;
        }
    }
    p->tok = t;
}

static bool is_label(parser *p) {
    return p->tok->kind == TK_IDENT && rk__tp_equal(p->tok->next, ":") && !rk__tp_is_typename(p, p->tok);
}

static tp_node *block_item(parser *p) {
    if (rk__tp_p_is(p, "_Static_assert")) return rk__tp_static_assert(p);
    if (rk__tp_is_typename(p, p->tok) && !is_label(p)) {
        if (p->in_switch_body)
            rk__tp_error(p->ctx, p->tok,
                         "declarations directly inside a switch body are not supported; put the case's statements in braces");
        return rk__tp_local_declaration(p);
    }
    return stmt(p);
}

/* One block item with its own recovery point. Kept separate so no local of
 * the caller changes between setjmp and a longjmp. */
static tp_node *guarded_block_item(parser *p) {
    saved_state s;
    save(p, &s);
    tp_token *start = p->tok;
    jmp_buf here;
    jmp_buf *outer = p->ctx->recover;
    p->ctx->recover = &here;
    p->ctx->error_tok = NULL;
    if (setjmp(here) == 0) {
        tp_node *n = block_item(p);
        p->ctx->recover = outer;
        return n;
    }
    restore(p, &s);
    sync_stmt(p, start);
    p->ctx->recover = outer;
    return NULL;
}

static tp_node *block(parser *p, bool new_scope, bool switch_body) {
    tp_token *brace = p->tok;
    rk__tp_p_expect(p, "{");
    rk__tp_p_enter(p, brace);
    tp_node *n = rk__tp_new_node(p, ND_BLOCK, brace);
    if (new_scope) rk__tp_push_scope(p);
    bool outer_switch_body = p->in_switch_body;
    p->in_switch_body = switch_body;
    tp_node head = {0}, *cur = &head;
    while (!rk__tp_p_consume(p, "}")) {
        if (p->tok->kind == TK_EOF) rk__tp_p_fail(p, brace, "expected '}' to match this '{'");
        tp_node *item = guarded_block_item(p);
        if (item) {
            cur->next = item;
            while (cur->next) cur = cur->next;
        }
    }
    p->in_switch_body = outer_switch_body;
    if (new_scope) rk__tp_pop_scope(p);
    rk__tp_p_leave(p);
    n->body = head.next;
    return n;
}

tp_node *rk__tp_compound_stmt(parser *p, bool new_scope) { return block(p, new_scope, false); }

static tp_node *paren_expr(parser *p) {
    rk__tp_p_expect(p, "(");
    tp_node *e = rk__tp_expr(p);
    rk__tp_p_expect(p, ")");
    return e;
}

/* A statement that is the body of if/for/while/do/switch/case: a
 * declaration there is not C. */
static tp_node *sub_stmt(parser *p) {
    bool outer = p->in_switch_body;
    p->in_switch_body = false;
    if (rk__tp_is_typename(p, p->tok) && !is_label(p))
        rk__tp_p_fail(p, p->tok, "a declaration is not a statement; put it in braces");
    tp_node *n = stmt(p);
    p->in_switch_body = outer;
    return n;
}

static tp_node *stmt_inner(parser *p) {
    tp_ctx *ctx = p->ctx;
    tp_token *t = p->tok;

    if (rk__tp_p_consume(p, "return")) {
        tp_node *n = rk__tp_new_node(p, ND_RETURN, t);
        if (!rk__tp_p_consume(p, ";")) {
            n->lhs = rk__tp_expr(p);
            rk__tp_p_expect(p, ";");
        }
        return n;
    }
    if (rk__tp_p_consume(p, "if")) {
        tp_node *n = rk__tp_new_node(p, ND_IF, t);
        n->cond = paren_expr(p);
        n->then = sub_stmt(p);
        if (rk__tp_p_consume(p, "else")) n->els = sub_stmt(p);
        return n;
    }
    if (rk__tp_p_consume(p, "switch")) {
        tp_node *n = rk__tp_new_node(p, ND_SWITCH, t);
        n->cond = paren_expr(p);
        tp_node *outer = p->cur_switch;
        p->cur_switch = n;
        p->break_depth++;
        if (rk__tp_p_is(p, "{")) {
            n->body = block(p, true, true);
        } else {
            n->body = sub_stmt(p);
        }
        p->break_depth--;
        p->cur_switch = outer;
        return n;
    }
    if (rk__tp_p_consume(p, "case")) {
        tp_node *n = rk__tp_new_node(p, ND_CASE, t);
        n->lhs = rk__tp_conditional(p);
        if (rk__tp_p_is(p, "...")) rk__tp_p_fail(p, p->tok, "case ranges are not supported");
        rk__tp_p_expect(p, ":");
        if (!p->cur_switch) {
            rk__tp_error(ctx, t, "'case' label not within a switch statement");
        } else {
            tp_node **tail = &p->cur_switch->case_next;
            while (*tail) tail = &(*tail)->case_next;
            *tail = n;
        }
        n->body = rk__tp_p_is(p, "}") ? rk__tp_new_node(p, ND_NULL_STMT, p->tok) : sub_stmt(p);
        return n;
    }
    if (rk__tp_p_consume(p, "default")) {
        tp_node *n = rk__tp_new_node(p, ND_DEFAULT, t);
        rk__tp_p_expect(p, ":");
        if (!p->cur_switch)
            rk__tp_error(ctx, t, "'default' label not within a switch statement");
        else if (p->cur_switch->default_case)
            rk__tp_error(ctx, t, "multiple default labels in one switch");
        else
            p->cur_switch->default_case = n;
        n->body = rk__tp_p_is(p, "}") ? rk__tp_new_node(p, ND_NULL_STMT, p->tok) : sub_stmt(p);
        return n;
    }
    if (rk__tp_p_consume(p, "for")) {
        tp_node *n = rk__tp_new_node(p, ND_FOR, t);
        rk__tp_p_expect(p, "(");
        rk__tp_push_scope(p);
        if (rk__tp_is_typename(p, p->tok)) {
            n->init = rk__tp_local_declaration(p);
        } else if (!rk__tp_p_consume(p, ";")) {
            tp_node *e = rk__tp_new_node(p, ND_EXPR_STMT, p->tok);
            e->lhs = rk__tp_expr(p);
            n->init = e;
            rk__tp_p_expect(p, ";");
        }
        if (!rk__tp_p_is(p, ";")) n->cond = rk__tp_expr(p);
        rk__tp_p_expect(p, ";");
        if (!rk__tp_p_is(p, ")")) n->inc = rk__tp_expr(p);
        rk__tp_p_expect(p, ")");
        p->loop_depth++;
        p->break_depth++;
        n->then = sub_stmt(p);
        p->loop_depth--;
        p->break_depth--;
        rk__tp_pop_scope(p);
        return n;
    }
    if (rk__tp_p_consume(p, "while")) {
        tp_node *n = rk__tp_new_node(p, ND_WHILE, t);
        n->cond = paren_expr(p);
        p->loop_depth++;
        p->break_depth++;
        n->then = sub_stmt(p);
        p->loop_depth--;
        p->break_depth--;
        return n;
    }
    if (rk__tp_p_consume(p, "do")) {
        tp_node *n = rk__tp_new_node(p, ND_DO, t);
        p->loop_depth++;
        p->break_depth++;
        n->then = sub_stmt(p);
        p->loop_depth--;
        p->break_depth--;
        rk__tp_p_expect(p, "while");
        n->cond = paren_expr(p);
        rk__tp_p_expect(p, ";");
        return n;
    }
    if (rk__tp_p_consume(p, "break")) {
        if (p->break_depth == 0) rk__tp_error(ctx, t, "'break' outside a loop or switch");
        rk__tp_p_expect(p, ";");
        return rk__tp_new_node(p, ND_BREAK, t);
    }
    if (rk__tp_p_consume(p, "continue")) {
        if (p->loop_depth == 0) rk__tp_error(ctx, t, "'continue' outside a loop");
        rk__tp_p_expect(p, ";");
        return rk__tp_new_node(p, ND_CONTINUE, t);
    }
    if (rk__tp_p_is(p, "goto")) {
        rk__tp_error(ctx, t, "goto is not supported (WGSL has no equivalent); use structured control flow");
        while (!rk__tp_p_is(p, ";") && p->tok->kind != TK_EOF) rk__tp_p_next(p);
        rk__tp_p_expect(p, ";");
        return rk__tp_new_node(p, ND_NULL_STMT, t);
    }
    if (rk__tp_p_is(p, "asm") || rk__tp_p_is(p, "__asm__")) rk__tp_p_fail(p, t, "inline assembly is not supported");
    if (is_label(p)) {
        rk__tp_error(ctx, t, "labels are not supported (there is no goto)");
        rk__tp_p_next(p);
        rk__tp_p_next(p);
        if (rk__tp_p_is(p, "}")) return rk__tp_new_node(p, ND_NULL_STMT, t);
        return sub_stmt(p);
    }
    if (rk__tp_p_is(p, "{")) return block(p, true, false);
    if (rk__tp_p_consume(p, ";")) return rk__tp_new_node(p, ND_NULL_STMT, t);
    tp_node *n = rk__tp_new_node(p, ND_EXPR_STMT, t);
    n->lhs = rk__tp_expr(p);
    rk__tp_p_expect(p, ";");
    return n;
}

static tp_node *stmt(parser *p) {
    rk__tp_p_enter(p, p->tok);
    tp_node *n = stmt_inner(p);
    rk__tp_p_leave(p);
    return n;
}
