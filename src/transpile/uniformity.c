/* Barriers in non-uniform control flow.
 *
 * Every thread of a block must reach each sync_threads() (and grid_sync()):
 * a barrier under a branch that depends on the thread index, or after a
 * 'return' / 'break' / 'continue' that does, deadlocks on CUDA, is undefined
 * on the CPU executor and makes WebGPU refuse the whole module. Such kernels
 * are refused here, for every target, at the barrier, naming the branch.
 *
 * WGSL is stricter than the kernel's meaning: it also calls a value read
 * from a read_write storage buffer or from workgroup memory non-uniform, even
 * when every thread reads the same word. A barrier under a branch on such a
 * value is refused for the WGSL target only.
 *
 * The analysis is flow-insensitive over a kernel's locals (a local is as
 * non-uniform as anything ever assigned to it, or assigned under a
 * non-uniform branch), to a fixed point, then one reporting pass walks the
 * statements with the taint of the control flow around them. Helpers are
 * checked from their call sites: a call to a helper that holds a barrier
 * counts as a barrier, and a helper's result is as non-uniform as its
 * arguments and whatever its body reads. */
#include <string.h>

#include "tp.h"

typedef enum taint { T_UNIFORM = 0, T_MEMORY = 1, T_THREAD = 2 } taint;

enum { MAX_TRACKED = 512 };

typedef struct checker {
    tp_ctx *ctx;
    bool wgsl;
    bool report;   /* the last pass: diagnostics on */
    bool changed;  /* a local's taint rose in this pass */
    const tp_obj *vars[MAX_TRACKED];
    taint var_taint[MAX_TRACKED];
    int var_count;
    taint after_return;          /* a return under a branch of this taint was passed */
    const tp_token *return_tok;
    taint loop_exit;             /* break/continue under such a branch in the current loop */
    const tp_token *loop_exit_tok;
    int switch_depth;            /* break inside a switch leaves the switch, not the loop */
    const tp_token *ctl_tok;     /* the branch that made the control flow non-uniform */
    struct fn_facts *fns;
    int fn_count;
    bool in_helper; /* checking a helper, not an entry point */
} checker;

static taint max_t(taint a, taint b) { return a > b ? a : b; }

static taint *var_slot(checker *c, const tp_obj *o) {
    for (int i = 0; i < c->var_count; i++)
        if (c->vars[i] == o) return &c->var_taint[i];
    if (c->var_count == MAX_TRACKED) return NULL;
    c->vars[c->var_count] = o;
    c->var_taint[c->var_count] = T_UNIFORM;
    return &c->var_taint[c->var_count++];
}

static void raise_var(checker *c, const tp_obj *o, taint t) {
    taint *s = o ? var_slot(c, o) : NULL;
    if (s && t > *s) {
        *s = t;
        c->changed = true;
    }
}

/* The local variable an lvalue or pointer expression stands for, if any. */
static const tp_obj *local_root(const tp_node *n) {
    while (n) {
        switch (n->kind) {
        case ND_VAR: return n->obj && n->obj->is_local && !n->obj->is_param && !n->obj->is_shared ? n->obj : NULL;
        case ND_INDEX: /* through a pointer: memory elsewhere, not the local */
            if (n->lhs && n->lhs->ty && n->lhs->ty->kind == TY_PTR) return NULL;
            n = n->lhs;
            break;
        case ND_MEMBER: case ND_ADDR: case ND_CONV: case ND_CAST: n = n->lhs; break;
        default: return NULL;
        }
    }
    return NULL;
}

/* Facts about each function, worked out once (the call graph has no cycles:
 * recursion is refused before this runs). */
typedef struct fn_facts {
    const tp_obj *fn;
    bool barrier;  /* it, or a function it calls, holds a barrier */
    taint sources; /* what its body reads besides its parameters */
} fn_facts;

static const fn_facts *facts_of(checker *c, const tp_obj *fn);

/* c NULL: only the body's own barriers, not its callees' (a cheap first look). */
static bool barrier_in(checker *c, const tp_node *n, int depth) {
    for (; n && depth < 4 * TP_MAX_EXPR_DEPTH; n = n->next) {
        if (n->kind == ND_BUILTIN && (rk__tp_builtins[n->builtin].flags & TP_BF_SYNC)) return true;
        if (c && n->kind == ND_CALL && n->obj && facts_of(c, n->obj)->barrier) return true;
        const tp_node *kids[] = {n->lhs, n->rhs, n->cond, n->then, n->els, n->init, n->inc, n->body,
                                 n->kind == ND_SWITCH ? NULL : n->args};
        for (size_t i = 0; i < sizeof kids / sizeof kids[0]; i++)
            if (barrier_in(c, kids[i], depth + 1)) return true;
    }
    return false;
}


/* The sources a body reads: thread indices, atomics and warp operations,
 * shared memory and writable globals. */
static taint sources_in(checker *c, const tp_node *n, int depth) {
    taint t = T_UNIFORM;
    for (; n && depth < 4 * TP_MAX_EXPR_DEPTH && t < T_THREAD; n = n->next) {
        if (n->kind == ND_BUILTIN) {
            unsigned f = rk__tp_builtins[n->builtin].flags;
            if (f & (TP_BF_ATOMIC | TP_BF_WARP)) t = T_THREAD;
            if (n->builtin == TP_B_THREAD_IDX_X || n->builtin == TP_B_THREAD_IDX_Y ||
                n->builtin == TP_B_THREAD_IDX_Z || n->builtin == TP_B_LANE_ID)
                t = T_THREAD;
        }
        if (n->kind == ND_VAR && n->obj && !n->obj->is_function && !n->obj->is_enum_const &&
            (n->obj->is_shared || (!n->obj->is_local && !n->obj->is_param && !n->obj->ty->is_const)))
            t = max_t(t, T_MEMORY);
        if (n->kind == ND_CALL && n->obj) t = max_t(t, facts_of(c, n->obj)->sources);
        const tp_node *kids[] = {n->lhs, n->rhs, n->cond, n->then, n->els, n->init, n->inc, n->body,
                                 n->kind == ND_SWITCH ? NULL : n->args};
        for (size_t i = 0; i < sizeof kids / sizeof kids[0]; i++) t = max_t(t, sources_in(c, kids[i], depth + 1));
    }
    return t;
}

static const fn_facts *facts_of(checker *c, const tp_obj *fn) {
    static const fn_facts none = {0};
    const tp_obj *d = fn->definition ? fn->definition : fn;
    for (int i = 0; i < c->fn_count; i++)
        if (c->fns[i].fn == d) return &c->fns[i];
    if (!d->body || c->fn_count == MAX_TRACKED) return &none;
    fn_facts f = {.fn = d, .barrier = barrier_in(c, d->body, 0), .sources = sources_in(c, d->body, 0)};
    c->fns[c->fn_count] = f;
    return &c->fns[c->fn_count++];
}

static taint expr_taint(checker *c, const tp_node *n, int depth);

/* A read through a kernel's pointer parameter: read-only buffers are uniform
 * storage to WGSL, read_write ones are not. */
static taint buffer_read(const tp_node *base) {
    while (base && (base->kind == ND_CONV || base->kind == ND_CAST)) base = base->lhs;
    if (!base || base->kind != ND_VAR || !base->obj || !base->obj->is_param) return T_UNIFORM;
    tp_type *t = base->obj->ty;
    if (t->kind != TY_PTR) return T_UNIFORM;
    return t->base && t->base->is_const ? T_UNIFORM : T_MEMORY;
}

static taint expr_taint(checker *c, const tp_node *n, int depth) {
    if (!n || depth > 4 * TP_MAX_EXPR_DEPTH) return T_UNIFORM;
    taint t = T_UNIFORM;
    switch (n->kind) {
    case ND_NUM: case ND_FNUM: case ND_SIZEOF: case ND_FUNC_NAME: return T_UNIFORM;
    case ND_VAR: {
        const tp_obj *o = n->obj;
        if (!o) return T_UNIFORM;
        if (o->is_shared) return T_MEMORY;
        if (o->is_local && !o->is_param) {
            taint *s = var_slot(c, o);
            return s ? *s : T_THREAD;
        }
        if (o->is_param) return T_UNIFORM; /* scalars: a uniform binding; pointers: the same buffer everywhere */
        return o->is_enum_const || o->ty->is_const ? T_UNIFORM : T_MEMORY;
    }
    case ND_BUILTIN: {
        unsigned f = rk__tp_builtins[n->builtin].flags;
        if (f & (TP_BF_ATOMIC | TP_BF_WARP)) return T_THREAD;
        switch (n->builtin) {
        case TP_B_THREAD_IDX_X: case TP_B_THREAD_IDX_Y: case TP_B_THREAD_IDX_Z: case TP_B_LANE_ID: return T_THREAD;
        /* A WGSL helper reads these from private copies, which its analysis calls non-uniform. */
        case TP_B_BLOCK_IDX_X: case TP_B_BLOCK_IDX_Y: case TP_B_BLOCK_IDX_Z:
        case TP_B_GRID_DIM_X: case TP_B_GRID_DIM_Y: case TP_B_GRID_DIM_Z: return c->in_helper ? T_MEMORY : T_UNIFORM;
        default: break;
        }
        for (const tp_node *a = n->args; a; a = a->next) t = max_t(t, expr_taint(c, a, depth + 1));
        if (f & TP_BF_NEIGHBOUR) t = max_t(t, T_MEMORY);
        return t;
    }
    case ND_CALL:
        for (const tp_node *a = n->args; a; a = a->next) t = max_t(t, expr_taint(c, a, depth + 1));
        if (n->obj) t = max_t(t, facts_of(c, n->obj)->sources);
        return t;
    case ND_DEREF:
        return max_t(expr_taint(c, n->lhs, depth + 1), buffer_read(n->lhs));
    case ND_INDEX:
        t = max_t(expr_taint(c, n->lhs, depth + 1), expr_taint(c, n->rhs, depth + 1));
        return max_t(t, buffer_read(n->lhs));
    case ND_ARROW:
        return max_t(expr_taint(c, n->lhs, depth + 1), buffer_read(n->lhs));
    default:
        break;
    }
    const tp_node *kids[] = {n->lhs, n->rhs, n->cond, n->then, n->els};
    for (size_t i = 0; i < sizeof kids / sizeof kids[0]; i++) t = max_t(t, expr_taint(c, kids[i], depth + 1));
    for (const tp_node *a = n->args; a; a = a->next) t = max_t(t, expr_taint(c, a, depth + 1));
    return t;
}

static void barrier(checker *c, const tp_node *n, taint ctl, const char *what) {
    if (!c->report || ctl == T_UNIFORM) return;
    const tp_token *b = c->ctl_tok;
    int line = b ? b->line : 0, col = b ? b->col : 0;
    if (ctl == T_THREAD)
        rk__tp_error(c->ctx, n->tok,
                     "%s is not reached by every thread of the block: the branch at %d:%d depends on the thread "
                     "index (or an atomic's or warp operation's result), so threads that leave it wait forever "
                     "(CUDA), run undefined (CPU) or make WebGPU refuse the module; move the barrier out of the "
                     "branch",
                     what, line, col);
    else if (c->wgsl)
        rk__tp_error(c->ctx, n->tok,
                     "%s under the branch at %d:%d, which depends on a value read from a writable buffer or shared "
                     "memory%s: WGSL requires barriers in uniform control flow and counts such reads as non-uniform; "
                     "branch on parameters, block_idx_*(), block_dim_*() or grid_dim_*()%s instead (WGSL target)",
                     what, line, col, c->in_helper ? ", or on block_idx_*() or grid_dim_*() in a helper" : "",
                     c->in_helper ? " in the kernel" : "");
}

/* Walks an expression: assignments raise their target's taint, barriers
 * (and calls to helpers with one) are checked against ctl. */
static void expr(checker *c, const tp_node *n, taint ctl, int depth) {
    if (!n || depth > 4 * TP_MAX_EXPR_DEPTH) return;
    switch (n->kind) {
    case ND_ASSIGN: case ND_ASSIGN_OP:
        raise_var(c, local_root(n->lhs), max_t(ctl, expr_taint(c, n->rhs, 0)));
        if (n->kind == ND_ASSIGN_OP) raise_var(c, local_root(n->lhs), expr_taint(c, n->lhs, 0));
        break;
    case ND_PRE_INC: case ND_PRE_DEC: case ND_POST_INC: case ND_POST_DEC:
        raise_var(c, local_root(n->lhs), ctl);
        break;
    case ND_BUILTIN:
        if (rk__tp_builtins[n->builtin].flags & TP_BF_SYNC)
            barrier(c, n, ctl, rk__tp_format(c->ctx, "%s()", rk__tp_builtins[n->builtin].name));
        if (rk__tp_builtins[n->builtin].flags & TP_BF_ATOMIC)
            for (const tp_node *a = n->args; a; a = a->next) raise_var(c, local_root(a), T_THREAD);
        break;
    case ND_CALL: {
        /* A helper may write through pointers to locals: they take everything it sees. */
        taint t = max_t(ctl, expr_taint(c, n, 0));
        for (const tp_node *a = n->args; a; a = a->next)
            if (a->ty && a->ty->kind == TY_PTR) raise_var(c, local_root(a), t);
        if (n->obj && facts_of(c, n->obj)->barrier)
            barrier(c, n, ctl, rk__tp_format(c->ctx, "the call of '%s', which holds a barrier,", n->obj->name));
        break;
    }
    case ND_COND: case ND_LOGAND: case ND_LOGOR: {
        /* The arms (and the right side) run only where the condition says. */
        expr(c, n->kind == ND_COND ? n->cond : n->lhs, ctl, depth + 1);
        taint inner = max_t(ctl, expr_taint(c, n->kind == ND_COND ? n->cond : n->lhs, 0));
        const tp_token *saved = c->ctl_tok;
        if (inner > ctl) c->ctl_tok = n->tok;
        if (n->kind == ND_COND) {
            expr(c, n->then, inner, depth + 1);
            expr(c, n->els, inner, depth + 1);
        } else {
            expr(c, n->rhs, inner, depth + 1);
        }
        c->ctl_tok = saved;
        return;
    }
    default:
        break;
    }
    expr(c, n->lhs, ctl, depth + 1);
    expr(c, n->rhs, ctl, depth + 1);
    for (const tp_node *a = n->args; a; a = a->next) expr(c, a, ctl, depth + 1);
}

static void stmts(checker *c, const tp_node *n, taint ctl);

/* Runs body under a branch of taint t (the condition at tok). */
static void branch(checker *c, const tp_node *body, taint ctl, taint t, const tp_token *tok) {
    const tp_token *saved = c->ctl_tok;
    if (t > ctl) c->ctl_tok = tok;
    stmts(c, body, max_t(ctl, t));
    c->ctl_tok = saved;
}

/* A loop: a break or continue under a non-uniform branch makes every
 * iteration after it non-uniform, so the body is walked again under it. */
static void loop(checker *c, const tp_node *n, taint ctl) {
    taint t = n->cond ? expr_taint(c, n->cond, 0) : T_UNIFORM;
    expr(c, n->cond, ctl, 0);
    taint saved_exit = c->loop_exit;
    const tp_token *saved_tok = c->loop_exit_tok;
    int saved_switch = c->switch_depth;
    c->switch_depth = 0;
    bool report = c->report;
    c->report = false;
    c->loop_exit = T_UNIFORM;
    branch(c, n->then, ctl, t, n->tok);
    taint exit = c->loop_exit;
    const tp_token *exit_tok = c->loop_exit_tok;
    c->report = report;
    taint inner = max_t(t, exit);
    branch(c, n->then, ctl, inner, exit > t ? exit_tok : n->tok);
    const tp_token *saved_ctl = c->ctl_tok;
    if (inner > ctl) c->ctl_tok = exit > t ? exit_tok : n->tok;
    expr(c, n->inc, max_t(ctl, inner), 0);
    c->ctl_tok = saved_ctl;
    c->loop_exit = saved_exit;
    c->loop_exit_tok = saved_tok;
    c->switch_depth = saved_switch;
}

static void stmts(checker *c, const tp_node *n, taint ctl) {
    for (; n; n = n->next) {
        taint here = max_t(ctl, c->after_return);
        if (c->after_return > ctl && !c->ctl_tok) c->ctl_tok = c->return_tok;
        switch (n->kind) {
        case ND_BLOCK: stmts(c, n->body, here); break;
        case ND_EXPR_STMT: expr(c, n->lhs, here, 0); break;
        case ND_DECL:
            if (n->init) {
                expr(c, n->init, here, 0);
                raise_var(c, n->obj, max_t(here, expr_taint(c, n->init, 0)));
            } else if (n->obj) {
                raise_var(c, n->obj, here);
            }
            break;
        case ND_IF: {
            expr(c, n->cond, here, 0);
            taint t = expr_taint(c, n->cond, 0);
            branch(c, n->then, here, t, n->tok);
            branch(c, n->els, here, t, n->tok);
            break;
        }
        case ND_FOR:
            stmts(c, n->init, here);
            loop(c, n, here);
            break;
        case ND_WHILE: case ND_DO:
            loop(c, n, here);
            break;
        case ND_SWITCH: {
            expr(c, n->cond, here, 0);
            c->switch_depth++;
            branch(c, n->body, here, expr_taint(c, n->cond, 0), n->tok);
            c->switch_depth--;
            break;
        }
        case ND_CASE: case ND_DEFAULT: stmts(c, n->body, here); break;
        case ND_RETURN:
            expr(c, n->lhs, here, 0);
            if (here > c->after_return) {
                c->after_return = here;
                c->return_tok = c->ctl_tok ? c->ctl_tok : n->tok;
            }
            break;
        case ND_BREAK: case ND_CONTINUE:
            if ((n->kind == ND_CONTINUE || c->switch_depth == 0) && here > c->loop_exit) {
                c->loop_exit = here;
                c->loop_exit_tok = c->ctl_tok ? c->ctl_tok : n->tok;
            }
            break;
        default:
            break;
        }
    }
}

static void check_function(checker *c, tp_obj *fn) {
    c->var_count = 0;
    for (int pass = 0; pass < 16; pass++) { /* locals' taints to a fixed point */
        c->changed = false;
        c->report = false;
        c->after_return = T_UNIFORM;
        c->return_tok = c->ctl_tok = NULL;
        stmts(c, fn->body, T_UNIFORM);
        if (!c->changed) break;
    }
    c->report = true;
    c->after_return = T_UNIFORM;
    c->return_tok = c->ctl_tok = NULL;
    stmts(c, fn->body, T_UNIFORM);
}

void rk__tp_check_uniformity(tp_ctx *ctx, tp_program *prog) {
    bool any = false; /* most kernels have no barrier: then nothing to allocate or walk */
    for (tp_obj *fn = prog->functions; fn && !any; fn = fn->next) any = fn->body && barrier_in(NULL, fn->body, 0);
    if (!any) return;
    checker c = {.ctx = ctx, .wgsl = ctx->desc->target == RK_TARGET_WGSL};
    c.fns = rk__tp_alloc(ctx, MAX_TRACKED * sizeof *c.fns);
    for (tp_obj *fn = prog->functions; fn; fn = fn->next) {
        if (!fn->body || !facts_of(&c, fn)->barrier) continue;
        if (fn->entry_kind == RK_TRANSPILE_HANDLER || fn->entry_kind == RK_TRANSPILE_STENCIL) continue;
        c.in_helper = fn->entry_kind != RK_TRANSPILE_GLOBAL;
        check_function(&c, fn);
    }
}
