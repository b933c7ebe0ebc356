/* Stencil kernels, target-neutral: which buffers are read at neighbour
 * offsets (each gets a shared-memory tile), how far (the halo), whether the
 * grid is 2-D or 3-D, and the tile. Emitters only lay out what this decides.
 *
 * A stencil body sees the grid only through its rk_grid_pos: thread and
 * block indices, barriers, warp operations and shared memory are refused,
 * because the CPU driver runs the same function one point at a time. */
#include <stdlib.h>
#include <string.h>

#include "tp.h"

typedef enum { ROLE_VALUE, ROLE_READ_BASE, ROLE_WRITE, ROLE_NEIGHBOUR } role;

typedef struct buffer_use {
    struct buffer_use *next;
    tp_obj *param;
    bool neighbour, written, escaped;
    tp_token *write_tok, *escape_tok;
} buffer_use;

typedef struct walker {
    tp_ctx *ctx;
    tp_obj *fn;
    tp_stencil *st;
    buffer_use *uses;
    bool is_3d;
    tp_node *farthest; /* the neighbour access with the largest offset */
} walker;

static buffer_use *use_of(walker *w, tp_obj *param) {
    for (buffer_use *u = w->uses; u; u = u->next)
        if (u->param == param) return u;
    buffer_use *u = rk__tp_alloc(w->ctx, sizeof *u);
    u->param = param;
    u->next = w->uses;
    w->uses = u;
    return u;
}

static bool is_buffer_param(const tp_node *n) {
    return n->kind == ND_VAR && n->obj->is_param && n->obj->ty->kind == TY_PTR;
}

static void walk_expr(walker *w, tp_node *n, role r);

static void neighbour(walker *w, tp_node *n, const tp_builtin *b) {
    tp_node *pos = n->args, *buf = pos ? pos->next : NULL;
    if (!buf) return;
    if (!is_buffer_param(buf)) {
        if (buf->ty && buf->ty->kind != TY_ERROR)
            rk__tp_error(w->ctx, buf->tok, "the buffer of '%s' must be a pointer parameter of the stencil kernel", b->name);
        walk_expr(w, buf, ROLE_VALUE);
        return;
    }
    use_of(w, buf->obj)->neighbour = true;
    int off[3] = {b->dx, b->dy, b->dz};
    if (n->builtin == TP_B_AT || n->builtin == TP_B_AT3) {
        tp_node *a = buf->next;
        for (int i = 0; a && i < 3; i++, a = a->next) {
            int64_t v = 0;
            if (a->ty && a->ty->kind == TY_ERROR) continue;
            if (!rk__tp_try_eval(w->ctx, a, &v)) {
                rk__tp_error(w->ctx, a->tok, "the offsets of '%s' must be integer constant expressions", b->name);
                v = 0;
            } else if (v < -64 || v > 64) {
                rk__tp_error(w->ctx, a->tok, "offset %lld is too large for a stencil (at most 64)", (long long)v);
                v = 0;
            }
            off[i] = (int)v;
        }
    }
    memcpy(n->off, off, sizeof off);
    n->buffer = buf->obj;
    int m = 0;
    for (int i = 0; i < 3; i++)
        if (abs(off[i]) > m) m = abs(off[i]);
    if (m > w->st->max_offset) {
        w->st->max_offset = m;
        w->farthest = n;
    }
}

static void walk_list(walker *w, tp_node *n, role r) {
    for (; n; n = n->next) walk_expr(w, n, r);
}

static void walk_expr(walker *w, tp_node *n, role r) {
    if (!n) return;
    switch (n->kind) {
    case ND_VAR:
        if (is_buffer_param(n)) {
            buffer_use *u = use_of(w, n->obj);
            if (r == ROLE_WRITE && !u->written) {
                u->written = true;
                u->write_tok = n->tok;
            } else if (r == ROLE_VALUE && !u->escaped) {
                u->escaped = true;
                u->escape_tok = n->tok;
            }
        }
        return;
    case ND_INDEX:
        walk_expr(w, n->lhs, r == ROLE_WRITE ? ROLE_WRITE : ROLE_READ_BASE);
        walk_expr(w, n->rhs, ROLE_VALUE);
        return;
    case ND_DEREF: case ND_ARROW:
        walk_expr(w, n->lhs, r == ROLE_WRITE ? ROLE_WRITE : ROLE_READ_BASE);
        return;
    case ND_MEMBER:
        walk_expr(w, n->lhs, r);
        return;
    case ND_ASSIGN: case ND_ASSIGN_OP:
        walk_expr(w, n->lhs, ROLE_WRITE);
        walk_expr(w, n->rhs, ROLE_VALUE);
        return;
    case ND_PRE_INC: case ND_PRE_DEC: case ND_POST_INC: case ND_POST_DEC: case ND_ADDR:
        walk_expr(w, n->lhs, ROLE_WRITE);
        return;
    case ND_CONV:
        walk_expr(w, n->lhs, r);
        return;
    case ND_BUILTIN: {
        const tp_builtin *b = &rk__tp_builtins[n->builtin];
        if (b->flags & (TP_BF_GRID | TP_BF_SYNC | TP_BF_WARP | TP_BF_RUNTIME) || n->builtin == TP_B_DYNAMIC_SHARED)
            rk__tp_error(w->ctx, n->tok,
                         "'%s' is not available in a stencil kernel, which sees the grid only through its rk_grid_pos",
                         b->name);
        if (b->flags & TP_BF_3D) w->is_3d = true;
        if (b->flags & TP_BF_NEIGHBOUR) {
            neighbour(w, n, b);
            for (tp_node *a = n->args ? n->args->next : NULL; a && (a = a->next);) walk_expr(w, a, ROLE_VALUE);
            return;
        }
        tp_node *a = n->args;
        for (int i = 0; a; a = a->next, i++) {
            /* Extra arguments (already reported by sema) are plain values. */
            if (i < b->nargs && b->args[i] == BT_POS) continue;
            walk_expr(w, a, (b->flags & TP_BF_ATOMIC) && i == 0 ? ROLE_WRITE : ROLE_VALUE);
        }
        return;
    }
    case ND_CALL: case ND_INIT_LIST:
        walk_list(w, n->args, ROLE_VALUE);
        return;
    case ND_COND:
        walk_expr(w, n->cond, ROLE_VALUE);
        walk_expr(w, n->then, r);
        walk_expr(w, n->els, r);
        return;
    case ND_SIZEOF:
        return;
    default:
        walk_expr(w, n->lhs, ROLE_VALUE);
        walk_expr(w, n->rhs, ROLE_VALUE);
        return;
    }
}

static void walk_stmt(walker *w, tp_node *n) {
    for (; n; n = n->next) {
        switch (n->kind) {
        case ND_BLOCK:
            walk_stmt(w, n->body);
            break;
        case ND_EXPR_STMT:
            walk_expr(w, n->lhs, ROLE_VALUE);
            break;
        case ND_DECL:
            if (n->obj->is_shared)
                rk__tp_error(w->ctx, n->tok, "RK_SHARED variables are not available in a stencil kernel (the tiles are its shared memory)");
            walk_expr(w, n->init, ROLE_VALUE);
            break;
        case ND_IF:
            walk_expr(w, n->cond, ROLE_VALUE);
            walk_stmt(w, n->then);
            walk_stmt(w, n->els);
            break;
        case ND_FOR:
            walk_stmt(w, n->init);
            walk_expr(w, n->cond, ROLE_VALUE);
            walk_expr(w, n->inc, ROLE_VALUE);
            walk_stmt(w, n->then);
            break;
        case ND_WHILE: case ND_DO:
            walk_expr(w, n->cond, ROLE_VALUE);
            walk_stmt(w, n->then);
            break;
        case ND_SWITCH:
            walk_expr(w, n->cond, ROLE_VALUE);
            walk_stmt(w, n->body);
            break;
        case ND_CASE: case ND_DEFAULT:
            walk_stmt(w, n->body);
            break;
        case ND_RETURN:
            walk_expr(w, n->lhs, ROLE_VALUE);
            break;
        default:
            break;
        }
    }
}

enum { MAX_STATIC_SHARED = 48 * 1024, MAX_THREADS = 1024 };

void rk__tp_analyze_stencil(tp_ctx *ctx, tp_obj *fn) {
    tp_stencil *st = rk__tp_alloc(ctx, sizeof *st);
    fn->stencil = st;
    for (tp_obj *p = fn->params; p; p = p->next)
        if (p->ty->kind == TY_GRID_POS && !st->pos) st->pos = p;
    walker w = {.ctx = ctx, .fn = fn, .st = st};
    walk_stmt(&w, fn->body);

    const rk_stencil_config *cfg = &ctx->desc->stencil;
    st->dims = cfg->tile[2] > 0 || w.is_3d ? 3 : 2;
    int def = st->dims == 3 ? 8 : 16;
    for (int i = 0; i < 3; i++) {
        uint32_t t = cfg->tile[i];
        st->tile[i] = t ? (t > 4096 ? 4096 : (int)t) : (i < st->dims ? def : 1);
    }
    if (st->dims == 2) st->tile[2] = 1;
    long threads = (long)st->tile[0] * st->tile[1] * st->tile[2];
    if (threads > MAX_THREADS)
        rk__tp_error(ctx, fn->tok, "stencil '%s': a %dx%dx%d tile is %ld threads per block; the limit is %d", fn->name,
                     st->tile[0], st->tile[1], st->tile[2], threads, MAX_THREADS);
    st->halo = cfg->halo ? (cfg->halo > 64 ? 64 : (int)cfg->halo) : st->max_offset;
    if (st->max_offset > st->halo && w.farthest)
        rk__tp_error(ctx, w.farthest->tok, "stencil '%s': this access reaches %d cells away, beyond the halo of %d",
                     fn->name, st->max_offset, st->halo);

    /* Tiles for buffers read at offsets; refuse in-place stencils. */
    tp_stencil_buffer **tail = &st->tiled;
    long shared = 0;
    for (tp_obj *p = fn->params; p; p = p->next) {
        buffer_use *u = NULL;
        for (buffer_use *x = w.uses; x; x = x->next)
            if (x->param == p) u = x;
        if (!u || !u->neighbour) continue;
        if (u->written)
            rk__tp_error(ctx, u->write_tok,
                         "stencil '%s': '%s' is read at neighbour offsets and also written; use separate input and output buffers",
                         fn->name, p->name);
        else if (u->escaped && !p->ty->base->is_const)
            rk__tp_error(ctx, u->escape_tok,
                         "stencil '%s': '%s' is read at neighbour offsets and may be written through this use; declare it const",
                         fn->name, p->name);
        tp_stencil_buffer *sb = rk__tp_alloc(ctx, sizeof *sb);
        sb->param = p;
        sb->written = u->written;
        sb->tile_name = rk__tp_format(ctx, "rk__tile_%s", p->name);
        *tail = sb;
        tail = &sb->next;
        long cells = 1;
        for (int i = 0; i < 3; i++) cells *= st->tile[i] + (i < st->dims ? 2 * st->halo : 0);
        shared += cells * rk__tp_unqual(p->ty->base)->size;
    }
    if (shared > MAX_STATIC_SHARED)
        rk__tp_error(ctx, fn->tok, "stencil '%s': its tiles need %ld bytes of shared memory; the limit is %d (use a smaller tile)",
                     fn->name, shared, MAX_STATIC_SHARED);
}
