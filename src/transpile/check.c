/* Whole-program checks after every function is typed: calls to functions
 * that are never defined, recursion (direct and mutual: GPUs have no
 * general call stack in WGSL/MSL and CUDA's is tiny), and the entry points:
 * which kind each is and whether its signature fits that kind. */
#include <string.h>

#include "tp.h"

static void undefined_callees(tp_ctx *ctx, tp_program *prog) {
    for (tp_obj *fn = prog->functions; fn; fn = fn->next) {
        for (tp_call_edge *e = fn->calls; e; e = e->next) {
            if (e->callee->body || e->callee->visit == -1) continue;
            e->callee->visit = -1; /* report once */
            rk__tp_error(ctx, e->tok,
                         "'%s' is declared but never defined; kernels can only call functions defined in the same source",
                         e->callee->name);
        }
    }
    for (tp_obj *fn = prog->functions; fn; fn = fn->next)
        if (fn->visit == -1) fn->visit = 0;
}

enum { WHITE = 0, GREY = 1, BLACK = 2 };

/* Depth-first search; an edge to a GREY function closes a cycle. The path
 * is kept so the message can name every function in the cycle. */
static void visit(tp_ctx *ctx, tp_obj *fn, tp_obj **path, int depth) {
    fn->visit = GREY;
    path[depth] = fn;
    for (tp_call_edge *e = fn->calls; e; e = e->next) {
        tp_obj *callee = e->callee;
        if (!callee->body) continue;
        if (callee->visit == GREY) {
            if (callee == fn) {
                rk__tp_error(ctx, e->tok, "recursion is not supported: '%s' calls itself", fn->name);
                continue;
            }
            tp_buf b;
            rk__tp_buf_init(&b, ctx);
            int start = depth;
            while (start > 0 && path[start] != callee) start--;
            for (int i = start; i <= depth; i++) rk__tp_buf_printf(&b, "'%s' calls ", path[i]->name);
            rk__tp_buf_printf(&b, "'%s'", callee->name);
            rk__tp_error(ctx, e->tok, "recursion is not supported: %s", b.data);
        } else if (callee->visit == WHITE && depth + 1 < 4096) {
            visit(ctx, callee, path, depth + 1);
        }
    }
    fn->visit = BLACK;
}

static void recursion(tp_ctx *ctx, tp_program *prog) {
    int count = 0;
    for (tp_obj *fn = prog->functions; fn; fn = fn->next) count++;
    tp_obj **path = rk__tp_alloc(ctx, sizeof(tp_obj *) * (size_t)(count + 1));
    for (tp_obj *fn = prog->functions; fn; fn = fn->next)
        if (fn->body && fn->visit == WHITE) visit(ctx, fn, path, 0);
}

static int grid_pos_params(const tp_obj *fn) {
    int n = 0;
    for (tp_obj *p = fn->params; p; p = p->next)
        if (p->ty->kind == TY_GRID_POS) n++;
    return n;
}

static void check_message_type(tp_ctx *ctx, tp_obj *fn, tp_obj *param, const char *role, bool want_const) {
    tp_type *t = param->ty;
    if (t->kind != TY_PTR) {
        rk__tp_error(ctx, param->tok, "handler '%s': the %s parameter must be a pointer", fn->name, role);
        return;
    }
    tp_type *base = t->base;
    if (want_const && !base->is_const && base->kind != TY_VOID)
        rk__tp_warn(ctx, param->tok, "handler '%s': the request should be a pointer to const", fn->name);
    if (base->kind == TY_VOID) return;
    if (base->kind == TY_STRUCT && !rk__tp_unqual(base)->is_complete) {
        rk__tp_error(ctx, param->tok, "handler '%s': the %s type is incomplete", fn->name, role);
        return;
    }
    if (rk__tp_contains_pointer(rk__tp_unqual(base)))
        rk__tp_error(ctx, param->tok,
                     "handler '%s': the %s type contains a pointer, which means nothing on the other side of the host/device boundary",
                     fn->name, role);
    if (rk__tp_unqual(base)->size > 65536)
        rk__tp_error(ctx, param->tok, "handler '%s': the %s type is larger than 65536 bytes", fn->name, role);
}

static void check_handler(tp_ctx *ctx, tp_obj *fn) {
    tp_type *ret = rk__tp_unqual(fn->ty->return_ty);
    if (ret->kind != TY_INT || ret->is_unsigned)
        rk__tp_error(ctx, fn->tok, "handler '%s' must return int (0 = success, negative = failed)", fn->name);
    if (fn->ty->param_count != 3) {
        rk__tp_error(ctx, fn->tok, "handler '%s' must take (const Request *req, Reply *reply, State *state)", fn->name);
        return;
    }
    tp_obj *req = fn->params, *resp = req->next, *state = resp->next;
    check_message_type(ctx, fn, req, "request", true);
    check_message_type(ctx, fn, resp, "reply", false);
    check_message_type(ctx, fn, state, "state", false);
    if (resp->ty->kind == TY_PTR && resp->ty->base->is_const)
        rk__tp_error(ctx, resp->tok, "handler '%s': the reply must be writable (not const)", fn->name);
}

static rk_transpile_kind classify(tp_obj *fn) {
    if (fn->fn_kind == FN_HANDLER) return RK_TRANSPILE_HANDLER;
    if (fn->fn_kind == FN_KERNEL) return grid_pos_params(fn) ? RK_TRANSPILE_STENCIL : RK_TRANSPILE_GLOBAL;
    return RK_TRANSPILE_AUTO;
}

/* ---- shared memory against the target's limit ---- */

static long shared_in(const tp_node *n, int depth) {
    long bytes = 0;
    for (; n && depth < 4 * TP_MAX_EXPR_DEPTH; n = n->next) {
        if (n->kind == ND_DECL && n->obj->is_shared && n->obj->ty->size > 0) bytes += n->obj->ty->size;
        bytes += shared_in(n->then, depth + 1) + shared_in(n->els, depth + 1) + shared_in(n->body, depth + 1) +
                 shared_in(n->init, depth + 1);
    }
    return bytes;
}

/* RK_SHARED variables of fn and of every function it calls, each function once. */
static long shared_bytes(tp_obj *fn, tp_obj **seen, int *count, int cap) {
    fn = fn->definition ? fn->definition : fn;
    for (int i = 0; i < *count; i++)
        if (seen[i] == fn) return 0;
    if (*count == cap || !fn->body) return 0;
    seen[(*count)++] = fn;
    long bytes = shared_in(fn->body, 0);
    for (tp_call_edge *c = fn->calls; c; c = c->next) bytes += shared_bytes(c->callee, seen, count, cap);
    return bytes;
}

static void shared_limit(tp_ctx *ctx, tp_program *prog) {
    bool wgsl = ctx->desc->target == RK_TARGET_WGSL, msl = ctx->desc->target == RK_TARGET_MSL;
    long limit = ctx->desc->shared_memory_limit ? (long)ctx->desc->shared_memory_limit : wgsl ? 16384 : msl ? 32768 : 49152;
    for (tp_obj *fn = prog->functions; fn; fn = fn->next) {
        if (fn->entry_kind == RK_TRANSPILE_AUTO || !fn->body) continue;
        tp_obj *seen[256];
        int count = 0;
        long bytes = shared_bytes(fn, seen, &count, 256);
        if (bytes > limit)
            rk__tp_error(ctx, fn->tok, "'%s' uses %ld bytes of shared memory (RK_SHARED); the %s target allows %ld%s",
                         fn->name, bytes, wgsl ? "WGSL" : msl ? "MSL" : "CUDA", limit,
                         ctx->desc->shared_memory_limit ? " (rk_transpile_desc.shared_memory_limit)"
                         : wgsl ? " (WebGPU's default maxComputeWorkgroupStorageSize)"
                         : msl  ? " (Apple GPUs' 32 KiB of threadgroup memory)"
                                : " (48 KiB of static shared memory)");
    }
}

/* A struct passed to a kernel by value travels as bytes (RK_ARG_STRUCT): its
 * members must be what rk_arg's field letters describe, and no pointers. */
static void struct_param(tp_ctx *ctx, const tp_obj *fn, const tp_obj *p, tp_type *ty, int depth) {
    for (tp_member *m = ty->members; m && depth < 8; m = m->next) {
        tp_type *t = rk__tp_unqual(m->ty);
        while (t->kind == TY_ARRAY) t = rk__tp_unqual(t->base);
        const char *why = NULL;
        if (t->kind == TY_PTR)
            why = "is a pointer: a buffer's address means something else on every backend, so it cannot travel "
                  "inside a struct; pass the buffer as a parameter of its own";
        else if (t->kind == TY_BOOL || t->kind == TY_CHAR || t->kind == TY_SHORT)
            why = "is narrower than 32 bits: struct arguments carry 32- and 64-bit integers, float and double";
        if (why)
            rk__tp_error(ctx, p->tok, "kernel '%s': struct parameter '%s' cannot be passed by value: member '%.*s' %s",
                         fn->name, p->name ? p->name : "?", m->name ? m->name->len : 1, m->name ? m->name->loc : "?",
                         why);
        else if (t->kind == TY_STRUCT)
            struct_param(ctx, fn, p, t, depth + 1);
    }
}

void rk__tp_check_program(tp_ctx *ctx, tp_program *prog) {
    undefined_callees(ctx, prog);
    recursion(ctx, prog);
    rk_transpile_kind want = ctx->desc->kind;
    int entries = 0;
    for (tp_obj *fn = prog->functions; fn; fn = fn->next) {
        rk_transpile_kind kind = classify(fn);
        if (fn->block_tok && kind != RK_TRANSPILE_GLOBAL && kind != RK_TRANSPILE_STENCIL)
            rk__tp_error(ctx, fn->block_tok, "RK_BLOCK_SIZE marks a kernel (RK_KERNEL), not '%s'", fn->name);
        if (kind == RK_TRANSPILE_AUTO) {
            for (tp_obj *p = fn->params; p; p = p->next)
                if (p->ty->kind == TY_GRID_POS)
                    rk__tp_error(ctx, p->tok, "rk_grid_pos can only be a parameter of a stencil kernel (RK_KERNEL)");
            continue;
        }
        fn->entry_kind = kind;
        entries++;
        if (!fn->body) {
            rk__tp_error(ctx, fn->tok, "%s '%s' is declared but never defined", rk_transpile_kind_name(kind), fn->name);
            continue;
        }
        if (want != RK_TRANSPILE_AUTO && want != kind)
            rk__tp_error(ctx, fn->tok, "'%s' is a %s %s, but the requested kind is %s", fn->name,
                         rk_transpile_kind_name(kind), kind == RK_TRANSPILE_HANDLER ? "handler" : "kernel",
                         rk_transpile_kind_name(want));
        if (kind == RK_TRANSPILE_HANDLER) {
            if (grid_pos_params(fn)) rk__tp_error(ctx, fn->tok, "a handler cannot take an rk_grid_pos");
            check_handler(ctx, fn);
            continue;
        }
        if (rk__tp_unqual(fn->ty->return_ty)->kind != TY_VOID)
            rk__tp_error(ctx, fn->tok, "kernel '%s' must return void", fn->name);
        if (fn->block_tok && kind == RK_TRANSPILE_STENCIL)
            rk__tp_error(ctx, fn->block_tok, "RK_BLOCK_SIZE does not apply to a stencil kernel, whose block is its tile");
        else if (fn->block_tok) {
            long threads = (long)fn->block[0] * fn->block[1] * fn->block[2];
            if (fn->block[0] < 1 || fn->block[1] < 1 || fn->block[2] < 1 || threads > 1024)
                rk__tp_error(ctx, fn->block_tok, "RK_BLOCK_SIZE(%d, %d, %d): each size must be at least 1 and the block "
                                                 "at most 1024 threads", fn->block[0], fn->block[1], fn->block[2]);
        }
        for (tp_obj *p = fn->params; p; p = p->next)
            if (rk__tp_unqual(p->ty)->kind == TY_STRUCT) struct_param(ctx, fn, p, rk__tp_unqual(p->ty), 0);
        if (kind == RK_TRANSPILE_STENCIL) {
            if (grid_pos_params(fn) > 1) rk__tp_error(ctx, fn->tok, "a stencil kernel takes one rk_grid_pos");
            rk__tp_analyze_stencil(ctx, fn);
        }
    }
    shared_limit(ctx, prog);
    if (!ctx->error_count) rk__tp_check_uniformity(ctx, prog); /* needs the call graph free of cycles */
    if (entries == 0)
        rk__tp_error(ctx, NULL, "no kernel in the source: mark a function with RK_KERNEL or RK_HANDLER");
    else if (want == RK_TRANSPILE_STENCIL || want == RK_TRANSPILE_HANDLER || want == RK_TRANSPILE_GLOBAL) {
        /* every entry point matched above */
    }
}
