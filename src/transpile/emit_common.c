/* What every emitter writes the same way, whatever the target: C's spelling
 * of a binary operator (CUDA and WGSL both keep it) and the facts the header
 * comment of an output names (the source file, the entry points). */
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
