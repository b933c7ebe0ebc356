/* What every emitter writes the same way, whatever the target: C's spelling
 * of a binary operator (CUDA and WGSL both keep it), the facts the header
 * comment of an output names (the source file, the entry points), and the
 * value of a constant floating expression (an infinite one must not be
 * written as a constant expression on either target). */
#include <math.h>
#include <string.h>

#include "tp.h"

const char *rk__tp_binary_op(tp_node_kind k, const char *otherwise) {
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
    default: return otherwise;
    }
}

const char *rk__tp_source_base_name(const tp_ctx *ctx) {
    const char *base = ctx->main_name ? strrchr(ctx->main_name, '/') : NULL;
    return base ? base + 1 : ctx->main_name ? ctx->main_name : "<input>";
}

void rk__tp_note_entry_point(tp_buf *list, const tp_obj *fn) {
    if (fn->entry_kind != RK_TRANSPILE_AUTO)
        rk__tp_buf_printf(list, "%s%s (%s)", list->len ? ", " : "", fn->name, rk_transpile_kind_name(fn->entry_kind));
}

/* The value of a constant floating expression, computed as C computes it
 * (float operations in float). */
static bool fold_float(const tp_node *n, double *v, int depth) {
    double a, b;
    if (depth > 64) return false;
    const tp_type *t = rk__tp_unqual(n->ty);
    switch (n->kind) {
    case ND_FNUM: *v = n->fval; break;
    case ND_NUM: *v = t->is_unsigned ? (double)(uint64_t)n->ival : (double)n->ival; break;
    case ND_BUILTIN:
        if (n->builtin == TP_B_INFF || n->builtin == TP_B_INF) *v = INFINITY;
        else if (n->builtin == TP_B_NANF) *v = NAN;
        else return false;
        break;
    case ND_CONV: case ND_CAST: case ND_PLUS:
        if (!rk__tp_is_arith(t) || !fold_float(n->lhs, v, depth + 1)) return false;
        break;
    case ND_NEG:
        if (!fold_float(n->lhs, &a, depth + 1)) return false;
        *v = -a;
        break;
    case ND_ADD: case ND_SUB: case ND_MUL: case ND_DIV:
        if (!rk__tp_is_flonum(t) || !fold_float(n->lhs, &a, depth + 1) || !fold_float(n->rhs, &b, depth + 1)) return false;
        *v = n->kind == ND_ADD ? a + b : n->kind == ND_SUB ? a - b : n->kind == ND_MUL ? a * b : a / b;
        break;
    default:
        return false;
    }
    if (t->kind == TY_FLOAT) *v = (double)(float)*v;
    return true;
}

bool rk__tp_fold_float(const tp_node *n, double *v) { return fold_float(n, v, 0); }
