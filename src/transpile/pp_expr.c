/* #if expressions: integer arithmetic in intmax_t/uintmax_t as C specifies,
 * with every overflowing or undefined case made harmless (wrapping, or an
 * error for division by zero). */
#include <string.h>

#include "tp.h"

typedef struct value {
    uint64_t bits;
    bool is_unsigned;
} value;

typedef struct evaluator {
    tp_ctx *ctx;
    tp_token *tok;
    const tp_token *directive;
    int depth;
    bool failed;
} evaluator;

static value conditional(evaluator *e);

static value make(uint64_t bits, bool u) { return (value){bits, u}; }
static int64_t as_signed(value v) { return (int64_t)v.bits; }

static void fail(evaluator *e, const tp_token *at, const char *msg) {
    if (!e->failed) rk__tp_error(e->ctx, at, "%s in #%.*s", msg, e->directive->len, e->directive->loc);
    e->failed = true;
}

static bool accept(evaluator *e, const char *op) {
    if (e->tok->kind != TK_PUNCT || !rk__tp_equal(e->tok, op)) return false;
    e->tok = e->tok->next;
    return true;
}

static value primary(evaluator *e) {
    tp_token *t = e->tok;
    if (e->failed) return make(0, false);
    if (accept(e, "(")) {
        if (++e->depth > TP_MAX_NESTING) {
            fail(e, t, "expression nested too deeply");
            return make(0, false);
        }
        value v = conditional(e);
        e->depth--;
        if (!accept(e, ")")) fail(e, e->tok, "expected ')'");
        return v;
    }
    if (t->kind == TK_NUM && t->ty) {
        e->tok = t->next;
        if (t->ty->kind == TY_FLOAT || t->ty->kind == TY_DOUBLE) {
            fail(e, t, "floating constant");
            return make(0, false);
        }
        return make((uint64_t)t->ival, t->ty->is_unsigned);
    }
    fail(e, t, t->kind == TK_EOF ? "expected an expression" : "unexpected token");
    return make(0, false);
}

static value unary(evaluator *e) {
    tp_token *t = e->tok;
    if (accept(e, "+") || accept(e, "-") || accept(e, "~") || accept(e, "!")) {
        if (++e->depth > TP_MAX_NESTING) {
            fail(e, t, "expression nested too deeply");
            return make(0, false);
        }
        value v = unary(e);
        e->depth--;
        switch (t->loc[0]) {
        case '-':
            return make(0 - v.bits, v.is_unsigned);
        case '~':
            return make(~v.bits, v.is_unsigned);
        case '!':
            return make(v.bits == 0, false);
        default:
            return v;
        }
    }
    return primary(e);
}

typedef enum { OP_MUL, OP_DIV, OP_MOD, OP_ADD, OP_SUB, OP_SHL, OP_SHR, OP_LT, OP_LE, OP_GT, OP_GE,
               OP_EQ, OP_NE, OP_AND, OP_XOR, OP_OR } binop;

static value apply(evaluator *e, binop op, value a, value b, const tp_token *at) {
    bool u = a.is_unsigned || b.is_unsigned;
    switch (op) {
    case OP_MUL: return make(a.bits * b.bits, u);
    case OP_DIV:
    case OP_MOD:
        if (b.bits == 0) {
            fail(e, at, "division by zero");
            return make(0, u);
        }
        if (u) return make(op == OP_DIV ? a.bits / b.bits : a.bits % b.bits, true);
        if (as_signed(a) == INT64_MIN && as_signed(b) == -1) return make(op == OP_DIV ? a.bits : 0, false);
        return make((uint64_t)(op == OP_DIV ? as_signed(a) / as_signed(b) : as_signed(a) % as_signed(b)), false);
    case OP_ADD: return make(a.bits + b.bits, u);
    case OP_SUB: return make(a.bits - b.bits, u);
    case OP_SHL:
    case OP_SHR: {
        if (b.bits >= 64) return make(op == OP_SHR && !a.is_unsigned && as_signed(a) < 0 ? UINT64_MAX : 0, a.is_unsigned);
        if (op == OP_SHL) return make(a.bits << b.bits, a.is_unsigned);
        if (a.is_unsigned || as_signed(a) >= 0) return make(a.bits >> b.bits, a.is_unsigned);
        return make(~(~a.bits >> b.bits), false); /* arithmetic shift */
    }
    case OP_LT: return make(u ? a.bits < b.bits : as_signed(a) < as_signed(b), false);
    case OP_LE: return make(u ? a.bits <= b.bits : as_signed(a) <= as_signed(b), false);
    case OP_GT: return make(u ? a.bits > b.bits : as_signed(a) > as_signed(b), false);
    case OP_GE: return make(u ? a.bits >= b.bits : as_signed(a) >= as_signed(b), false);
    case OP_EQ: return make(a.bits == b.bits, false);
    case OP_NE: return make(a.bits != b.bits, false);
    case OP_AND: return make(a.bits & b.bits, u);
    case OP_XOR: return make(a.bits ^ b.bits, u);
    case OP_OR: return make(a.bits | b.bits, u);
    }
    return make(0, false);
}

/* Binary operators by precedence level, tightest first. */
static const struct {
    const char *spelling;
    binop op;
    int level;
} binops[] = {
    {"*", OP_MUL, 0},  {"/", OP_DIV, 0},  {"%", OP_MOD, 0}, {"+", OP_ADD, 1}, {"-", OP_SUB, 1},
    {"<<", OP_SHL, 2}, {">>", OP_SHR, 2}, {"<=", OP_LE, 3}, {">=", OP_GE, 3}, {"<", OP_LT, 3},
    {">", OP_GT, 3},   {"==", OP_EQ, 4},  {"!=", OP_NE, 4}, {"&", OP_AND, 5}, {"^", OP_XOR, 6},
    {"|", OP_OR, 7},
};

static value binary(evaluator *e, int level) {
    if (level < 0) return unary(e);
    value lhs = binary(e, level - 1);
    for (;;) {
        tp_token *at = e->tok;
        bool found = false;
        for (size_t i = 0; i < sizeof binops / sizeof binops[0]; i++) {
            if (binops[i].level != level || !accept(e, binops[i].spelling)) continue;
            value rhs = binary(e, level - 1);
            lhs = apply(e, binops[i].op, lhs, rhs, at);
            found = true;
            break;
        }
        if (!found || e->failed) return lhs;
    }
}

static value logical_and(evaluator *e) {
    value v = binary(e, 7);
    while (accept(e, "&&")) {
        value r = binary(e, 7);
        v = make(v.bits && r.bits, false);
    }
    return v;
}

static value logical_or(evaluator *e) {
    value v = logical_and(e);
    while (accept(e, "||")) {
        value r = logical_and(e);
        v = make(v.bits || r.bits, false);
    }
    return v;
}

static value conditional(evaluator *e) {
    value c = logical_or(e);
    if (!accept(e, "?")) return c;
    if (++e->depth > TP_MAX_NESTING) {
        fail(e, e->tok, "expression nested too deeply");
        return make(0, false);
    }
    value a = conditional(e);
    if (!accept(e, ":")) fail(e, e->tok, "expected ':'");
    value b = conditional(e);
    e->depth--;
    return c.bits ? make(a.bits, a.is_unsigned || b.is_unsigned) : make(b.bits, a.is_unsigned || b.is_unsigned);
}

int64_t rk__tp_pp_eval(tp_ctx *ctx, tp_token *expr, const tp_token *directive) {
    evaluator e = {.ctx = ctx, .tok = expr, .directive = directive};
    value v = conditional(&e);
    if (!e.failed && e.tok->kind != TK_EOF) fail(&e, e.tok, "extra tokens at the end of the expression");
    return e.failed ? 0 : (int64_t)(v.bits != 0);
}
