/* Integer constant expressions of the typed tree (after sema.c): the
 * value as the target would compute it, in the expression's type, or "not
 * a constant" for anything that is not, or whose value would be undefined
 * (division by zero, an out-of-range shift or float conversion). */
#include <stdint.h>

#include "tp.h"

int64_t rk__tp_truncate_to(int64_t v, const tp_type *ty) {
    switch (ty->size) {
    case 1:
        if (ty->kind == TY_BOOL) return v != 0;
        return ty->is_unsigned ? (int64_t)(uint8_t)v : (int64_t)(int8_t)v;
    case 2:
        return ty->is_unsigned ? (int64_t)(uint16_t)v : (int64_t)(int16_t)v;
    case 4:
        return ty->is_unsigned ? (int64_t)(uint32_t)v : (int64_t)(int32_t)v;
    default:
        return v;
    }
}

static bool eval(const tp_node *n, int64_t *out, int depth);

static bool eval_double(const tp_node *n, double *out, int depth) {
    if (n->kind == ND_FNUM) {
        *out = n->fval;
        return true;
    }
    if ((n->kind == ND_CONV || n->kind == ND_CAST) && rk__tp_is_flonum(n->ty)) {
        if (rk__tp_is_flonum(n->lhs->ty)) return eval_double(n->lhs, out, depth + 1);
        int64_t v;
        if (!eval(n->lhs, &v, depth + 1)) return false;
        *out = n->lhs->ty->is_unsigned ? (double)(uint64_t)v : (double)v;
        return true;
    }
    if (n->kind == ND_NEG && rk__tp_is_flonum(n->ty)) {
        if (!eval_double(n->lhs, out, depth + 1)) return false;
        *out = -*out;
        return true;
    }
    return false;
}

static bool eval(const tp_node *n, int64_t *out, int depth) {
    if (depth > 2 * TP_MAX_EXPR_DEPTH || !n->ty || !rk__tp_is_integer(n->ty)) return false;
    int64_t a, b;
    uint64_t ua, ub;
    bool u;
    switch (n->kind) {
    case ND_NUM: case ND_SIZEOF:
        *out = n->ival;
        return true;
    case ND_CONV: case ND_CAST:
        if (rk__tp_is_flonum(n->lhs->ty)) {
            double d;
            if (!eval_double(n->lhs, &d, depth + 1)) return false;
            if (!(d > -9.2e18 && d < 9.2e18)) return false; /* out of range: undefined */
            *out = rk__tp_truncate_to((int64_t)d, n->ty);
            return true;
        }
        if (!eval(n->lhs, &a, depth + 1)) return false;
        *out = rk__tp_truncate_to(a, n->ty);
        return true;
    case ND_NEG:
        if (!eval(n->lhs, &a, depth + 1)) return false;
        *out = rk__tp_truncate_to((int64_t)(0 - (uint64_t)a), n->ty);
        return true;
    case ND_PLUS:
        return eval(n->lhs, out, depth + 1);
    case ND_BITNOT:
        if (!eval(n->lhs, &a, depth + 1)) return false;
        *out = rk__tp_truncate_to(~a, n->ty);
        return true;
    case ND_NOT:
        if (!eval(n->lhs, &a, depth + 1)) return false;
        *out = !a;
        return true;
    case ND_LOGAND:
        if (!eval(n->lhs, &a, depth + 1)) return false;
        if (!a) return *out = 0, true;
        if (!eval(n->rhs, &b, depth + 1)) return false;
        *out = b != 0;
        return true;
    case ND_LOGOR:
        if (!eval(n->lhs, &a, depth + 1)) return false;
        if (a) return *out = 1, true;
        if (!eval(n->rhs, &b, depth + 1)) return false;
        *out = b != 0;
        return true;
    case ND_COND:
        if (!eval(n->cond, &a, depth + 1)) return false;
        return eval(a ? n->then : n->els, out, depth + 1);
    default:
        break;
    }
    if (!n->lhs || !n->rhs) return false;
    if (!eval(n->lhs, &a, depth + 1) || !eval(n->rhs, &b, depth + 1)) return false;
    ua = (uint64_t)a;
    ub = (uint64_t)b;
    u = n->lhs->ty->is_unsigned; /* operands have the common type */
    switch (n->kind) {
    case ND_ADD: *out = rk__tp_truncate_to((int64_t)(ua + ub), n->ty); return true;
    case ND_SUB: *out = rk__tp_truncate_to((int64_t)(ua - ub), n->ty); return true;
    case ND_MUL: *out = rk__tp_truncate_to((int64_t)(ua * ub), n->ty); return true;
    case ND_DIV: case ND_MOD:
        if (b == 0) return false;
        if (u) {
            uint64_t x = n->ty->size == 4 ? (uint32_t)ua : ua, y = n->ty->size == 4 ? (uint32_t)ub : ub;
            *out = rk__tp_truncate_to((int64_t)(n->kind == ND_DIV ? x / y : x % y), n->ty);
        } else {
            if (a == INT64_MIN && b == -1) return false;
            *out = rk__tp_truncate_to(n->kind == ND_DIV ? a / b : a % b, n->ty);
        }
        return true;
    case ND_BITAND: *out = a & b; return true;
    case ND_BITOR: *out = a | b; return true;
    case ND_BITXOR: *out = a ^ b; return true;
    case ND_SHL: case ND_SHR: {
        int width = n->ty->size * 8;
        if (b < 0 || b >= width) return false;
        if (n->kind == ND_SHL) {
            *out = rk__tp_truncate_to((int64_t)(ua << b), n->ty);
        } else if (n->ty->is_unsigned) {
            uint64_t x = width == 32 ? (uint32_t)ua : ua;
            *out = rk__tp_truncate_to((int64_t)(x >> b), n->ty);
        } else {
            *out = a < 0 ? ~(~a >> b) : a >> b;
        }
        return true;
    }
    case ND_EQ: *out = a == b; return true;
    case ND_NE: *out = a != b; return true;
    case ND_LT: *out = u ? ua < ub : a < b; return true;
    case ND_LE: *out = u ? ua <= ub : a <= b; return true;
    case ND_GT: *out = u ? ua > ub : a > b; return true;
    case ND_GE: *out = u ? ua >= ub : a >= b; return true;
    default:
        return false;
    }
}

bool rk__tp_eval_integer(const tp_node *node, int64_t *out) { return eval(node, out, 0); }
