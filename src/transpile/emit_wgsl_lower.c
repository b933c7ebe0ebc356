/* WGSL emitter: what a WGSL expression cannot hold, lowered into statements
 * placed before the statement that uses it.
 *
 * WGSL's select() evaluates both arms, so a C conditional with a side effect
 * in an arm (a call, an atomic, an assignment) becomes a temporary set in an
 * if/else. && and || short-circuit in WGSL as in C, but when their right side
 * holds something lowered, the whole operator is lowered, so that the lowered
 * part runs only when C would run it. A strong compare-exchange (a loop around
 * WGSL's weak one), a call that needs copies of aliasing pointer arguments
 * and the comma operator are statements too. What moves ahead of its statement is only ever an
 * operand C leaves unsequenced against the rest of the expression: every
 * operator that sequences its operands (&&, ||, ?:) is lowered with it. */
#include "emit_wgsl.h"

static bool effects(const tp_node *n, int depth) {
    if (!n || depth > 4 * TP_MAX_EXPR_DEPTH) return false;
    switch (n->kind) {
    case ND_CALL: case ND_ASSIGN: case ND_ASSIGN_OP:
    case ND_PRE_INC: case ND_PRE_DEC: case ND_POST_INC: case ND_POST_DEC:
        return true;
    case ND_BUILTIN: {
        const tp_builtin *b = &rk__tp_builtins[n->builtin];
        if ((b->flags & (TP_BF_ATOMIC | TP_BF_SYNC | TP_BF_RUNTIME | TP_BF_WARP)) || b->ret == BT_VOID) return true;
        break;
    }
    default:
        break;
    }
    if (effects(n->lhs, depth + 1) || effects(n->rhs, depth + 1) || effects(n->cond, depth + 1) ||
        effects(n->then, depth + 1) || effects(n->els, depth + 1))
        return true;
    for (const tp_node *a = n->args; a; a = a->next)
        if (effects(a, depth + 1)) return true;
    return false;
}

bool rk__wgsl_has_effects(const tp_node *n) { return effects(n, 0); }

static bool is_device_cas(emitter *e, tp_node *n) {
    if (n->kind != ND_BUILTIN || (n->builtin != TP_B_ATOMIC_CAS_I32 && n->builtin != TP_B_ATOMIC_CAS_U32)) return false;
    tp_node *t = rk__wgsl_strip_ptr_conv(n->args);
    return rk__wgsl_is_atomic_lvalue(e, t->kind == ND_ADDR ? t->lhs : t);
}

static bool contains(emitter *e, const tp_node *n, int depth);

/* Is n itself lowered? */
static bool lowered_here(emitter *e, tp_node *n, int depth) {
    switch (n->kind) {
    case ND_COND: return effects(n->then, depth + 1) || effects(n->els, depth + 1);
    case ND_LOGAND: case ND_LOGOR: return contains(e, n->rhs, depth + 1);
    case ND_BUILTIN: return is_device_cas(e, n);
    case ND_CALL: return rk__wgsl_call_needs_temps(e, n);
    case ND_COMMA: return true;
    default: return false;
    }
}

static bool contains(emitter *e, const tp_node *cn, int depth) {
    tp_node *n = (tp_node *)cn;
    if (!n || depth > 4 * TP_MAX_EXPR_DEPTH) return false;
    if (lowered_here(e, n, depth)) return true;
    if (contains(e, n->lhs, depth + 1) || contains(e, n->rhs, depth + 1) || contains(e, n->cond, depth + 1) ||
        contains(e, n->then, depth + 1) || contains(e, n->els, depth + 1))
        return true;
    for (const tp_node *a = n->args; a; a = a->next)
        if (contains(e, a, depth + 1)) return true;
    return false;
}

bool rk__wgsl_needs_lowering(emitter *e, const tp_node *n) { return contains(e, n, 0); }

const char *rk__wgsl_lowered_name(const emitter *e, const tp_node *n) {
    for (int i = 0; i < e->lowered_count; i++)
        if (e->lowered[i] == n) return e->lowered_names[i];
    return NULL;
}

static const char *new_temp(emitter *e, tp_node *n) {
    const char *name = rk__tp_format(e->ctx, "rk_v%d", e->loop_var++);
    if (e->lowered_count == e->lowered_cap) {
        int cap = e->lowered_cap ? 2 * e->lowered_cap : 8;
        const tp_node **nodes = rk__tp_alloc(e->ctx, sizeof *nodes * (size_t)cap);
        const char **names = rk__tp_alloc(e->ctx, sizeof *names * (size_t)cap);
        if (e->lowered_count) {
            memcpy(nodes, e->lowered, sizeof *nodes * (size_t)e->lowered_count);
            memcpy(names, e->lowered_names, sizeof *names * (size_t)e->lowered_count);
        }
        e->lowered = nodes;
        e->lowered_names = names;
        e->lowered_cap = cap;
    }
    e->lowered[e->lowered_count] = n;
    e->lowered_names[e->lowered_count++] = name;
    return name;
}

static void lower(emitter *e, tp_node *n, int depth);

static tp_node *strip_conv(tp_node *n) {
    while (n->kind == ND_CONV) n = n->lhs;
    return n;
}

/* One arm of a lowered conditional: its effects, then its value into `name`
 * (NULL: the value is not used). An assignment or ++/-- at the top of the
 * arm is a statement, and its value that of the variable. */
static void arm(emitter *e, tp_node *a, const char *name, tp_type *ty) {
    tp_node *top = strip_conv(a);
    bool post = top->kind == ND_POST_INC || top->kind == ND_POST_DEC;
    bool assign = post || top->kind == ND_ASSIGN || top->kind == ND_ASSIGN_OP || top->kind == ND_PRE_INC ||
                  top->kind == ND_PRE_DEC;
    if (assign || !name) {
        if (name && post) { /* x++: the value before */
            line_start(e);
            PRINTF(e, "%s = ", name);
            rk__wgsl_as_type(e, top->lhs, ty);
            put(e, ";\n");
        }
        rk__wgsl_expr_stmt(e, top);
        if (name && !post) {
            line_start(e);
            PRINTF(e, "%s = ", name);
            rk__wgsl_as_type(e, top->lhs, ty);
            put(e, ";\n");
        }
        return;
    }
    lower(e, a, 0);
    line_start(e);
    PRINTF(e, "%s = ", name);
    rk__wgsl_as_type(e, a, ty);
    put(e, ";\n");
}

static void lower_cond(emitter *e, tp_node *n) {
    lower(e, n->cond, 0);
    bool value = unq(n->ty)->kind != TY_VOID;
    const char *name = new_temp(e, n);
    if (value) {
        line_start(e);
        PRINTF(e, "var %s: %s;\n", name, rk__wgsl_type_name(e, unq(n->ty)));
    }
    line_start(e);
    put(e, "if (");
    rk__wgsl_cond(e, n->cond);
    put(e, ") {\n");
    e->indent++;
    arm(e, n->then, value ? name : NULL, n->ty);
    e->indent--;
    line_start(e);
    put(e, "} else {\n");
    e->indent++;
    arm(e, n->els, value ? name : NULL, n->ty);
    e->indent--;
    line_start(e);
    put(e, "}\n");
}

static void lower_logical(emitter *e, tp_node *n) {
    lower(e, n->lhs, 0);
    const char *name = new_temp(e, n);
    line_start(e);
    PRINTF(e, "var %s: bool = ", name);
    rk__wgsl_cond(e, n->lhs);
    put(e, ";\n");
    line_start(e);
    PRINTF(e, "if (%s%s) {\n", n->kind == ND_LOGOR ? "!" : "", name);
    e->indent++;
    lower(e, n->rhs, 0);
    line_start(e);
    PRINTF(e, "%s = ", name);
    rk__wgsl_cond(e, n->rhs);
    put(e, ";\n");
    e->indent--;
    line_start(e);
    put(e, "}\n");
}

/* atomic_cas: C's (and CUDA's) compare-exchange is strong; WGSL's may fail
 * spuriously, so it is retried until it exchanges or sees another value. */
static void lower_cas(emitter *e, tp_node *n) {
    for (tp_node *a = n->args; a; a = a->next) lower(e, a, 0);
    const tp_type *vt = n->builtin == TP_B_ATOMIC_CAS_U32 ? &rk__tp_ty_uint : &rk__tp_ty_int;
    int k = e->loop_var++;
    tp_node *target = rk__wgsl_strip_ptr_conv(n->args);
    line_start(e);
    PRINTF(e, "let rk_cas_p%d = &", k);
    if (target->kind == ND_ADDR)
        rk__wgsl_lvalue(e, target->lhs);
    else
        rk__wgsl_element(e, target, NULL, n->tok);
    put(e, ";\n");
    line_start(e);
    PRINTF(e, "let rk_cas_cmp%d = ", k);
    rk__wgsl_as_type(e, n->args->next, vt);
    put(e, ";\n");
    line_start(e);
    PRINTF(e, "let rk_cas_new%d = ", k);
    rk__wgsl_as_type(e, n->args->next->next, vt);
    put(e, ";\n");
    const char *name = new_temp(e, n);
    line_start(e);
    PRINTF(e, "var %s: %s;\n", name, rk__wgsl_scalar(vt));
    line_start(e);
    PRINTF(e, "loop {\n");
    e->indent++;
    line_start(e);
    PRINTF(e, "let r = atomicCompareExchangeWeak(rk_cas_p%d, rk_cas_cmp%d, rk_cas_new%d);\n", k, k, k);
    line_start(e);
    PRINTF(e, "if (r.exchanged || r.old_value != rk_cas_cmp%d) { %s = r.old_value; break; }\n", k, name);
    e->indent--;
    line_start(e);
    put(e, "}\n");
}

/* (a, b): a as a statement, then b's value. */
static void lower_comma(emitter *e, tp_node *n) {
    rk__wgsl_expr_stmt(e, n->lhs);
    lower(e, n->rhs, 0);
    const char *name = new_temp(e, n);
    if (unq(n->ty)->kind == TY_VOID) {
        rk__wgsl_expr_stmt(e, n->rhs);
        return;
    }
    line_start(e);
    PRINTF(e, "let %s = ", name);
    rk__wgsl_as_type(e, n->rhs, n->ty);
    put(e, ";\n");
}

static void lower(emitter *e, tp_node *n, int depth) {
    if (!n || depth > 4 * TP_MAX_EXPR_DEPTH || rk__wgsl_lowered_name(e, n)) return;
    if (lowered_here(e, n, depth)) {
        switch (n->kind) {
        case ND_COND: lower_cond(e, n); return;
        case ND_LOGAND: case ND_LOGOR: lower_logical(e, n); return;
        case ND_BUILTIN: lower_cas(e, n); return;
        case ND_COMMA: lower_comma(e, n); return;
        default: {
            for (tp_node *a = n->args; a; a = a->next) lower(e, a, depth + 1);
            const char *name = new_temp(e, n);
            rk__wgsl_call_with_temps(e, n, unq(n->ty)->kind != TY_VOID ? name : NULL);
            return;
        }
        }
    }
    lower(e, n->lhs, depth + 1);
    lower(e, n->rhs, depth + 1);
    lower(e, n->cond, depth + 1);
    lower(e, n->then, depth + 1);
    lower(e, n->els, depth + 1);
    for (tp_node *a = n->args; a; a = a->next) lower(e, a, depth + 1);
}

void rk__wgsl_lower(emitter *e, tp_node *n) {
    if (n && contains(e, n, 0)) lower(e, n, 0);
}
