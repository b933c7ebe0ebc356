/* rk_transpile: runs the stages over one source and packages the output,
 * the diagnostics and the entry points into a result the caller owns. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend_impl.h"
#include "tp.h"

struct rk_transpile_result {
    char *output;
    size_t output_size;
    rk_diagnostic *diags;
    size_t diag_count, error_count;
    char *diag_text;
    rk_transpiled_kernel *kernels;
    size_t kernel_count;
    tp_arena strings; /* file names, messages, kernel names */
};

const char *rk_transpile_kind_name(rk_transpile_kind kind) {
    switch (kind) {
    case RK_TRANSPILE_GLOBAL: return "global";
    case RK_TRANSPILE_STENCIL: return "stencil";
    case RK_TRANSPILE_HANDLER: return "handler";
    default: return "auto";
    }
}

const char *rk_transpile_target_name(rk_transpile_target target) {
    switch (target) {
    case RK_TARGET_DEFAULT: case RK_TARGET_CUDA: return "cuda";
    case RK_TARGET_WGSL: return "wgsl";
    case RK_TARGET_MSL: return "msl";
    default: return "unknown";
    }
}

/* One emitter per target; NULL until that target's emitter is written. */
static tp_emit_fn emitter_for(rk_transpile_target target) {
    switch (target) {
    case RK_TARGET_DEFAULT: case RK_TARGET_CUDA: return rk__tp_emit_cuda;
    case RK_TARGET_WGSL: return rk__tp_emit_wgsl;
    case RK_TARGET_MSL: return rk__tp_emit_msl;
    default: return NULL;
    }
}

void rk__tp_ctx_init(tp_ctx *ctx, const rk_transpile_desc *desc) {
    memset(ctx, 0, sizeof *ctx);
    ctx->desc = desc;
    ctx->diag_tail = &ctx->diags;
    ctx->main_name = desc->path ? desc->path : "<input>";
}

/* ---- result ----------------------------------------------------------------- */

static void *result_alloc(tp_ctx *ctx, rk_transpile_result *r, size_t size) {
    /* The result's memory is an arena of its own, so it outlives the compilation's. */
    tp_arena saved = ctx->arena;
    ctx->arena = r->strings;
    void *p = rk__tp_alloc(ctx, size);
    r->strings = ctx->arena;
    ctx->arena = saved;
    return p;
}

static const char *result_strdup(tp_ctx *ctx, rk_transpile_result *r, const char *s) {
    size_t n = strlen(s);
    char *p = result_alloc(ctx, r, n + 1);
    memcpy(p, s, n + 1);
    return p;
}

static void collect_diagnostics(tp_ctx *ctx, rk_transpile_result *r) {
    size_t n = 0;
    for (tp_diag *d = ctx->diags; d; d = d->next) n++;
    r->diags = result_alloc(ctx, r, sizeof(rk_diagnostic) * (n ? n : 1));
    for (tp_diag *d = ctx->diags; d; d = d->next) {
        rk_diagnostic *out = &r->diags[r->diag_count++];
        out->severity = d->severity;
        out->file = result_strdup(ctx, r, d->file ? d->file->name : ctx->main_name ? ctx->main_name : "");
        out->line = d->file ? (uint32_t)d->line : 0;
        out->column = d->file ? (uint32_t)d->col : 0;
        out->message = result_strdup(ctx, r, d->message);
        if (d->severity == RK_DIAG_ERROR) r->error_count++;
    }
    r->diag_text = (char *)result_strdup(ctx, r, rk__tp_render_diagnostics(ctx));
}

static uint32_t pointee_size(const tp_obj *param) {
    tp_type *base = param->ty->kind == TY_PTR ? param->ty->base : NULL;
    if (!base || base->kind == TY_VOID) return 0;
    return (uint32_t)rk__tp_unqual(base)->size;
}

static void collect_kernels(tp_ctx *ctx, rk_transpile_result *r, tp_program *prog) {
    size_t n = 0;
    for (tp_obj *fn = prog->functions; fn; fn = fn->next)
        if (fn->entry_kind != RK_TRANSPILE_AUTO) n++;
    r->kernels = result_alloc(ctx, r, sizeof(rk_transpiled_kernel) * (n ? n : 1));
    for (tp_obj *fn = prog->functions; fn; fn = fn->next) {
        if (fn->entry_kind == RK_TRANSPILE_AUTO) continue;
        rk_transpiled_kernel *k = &r->kernels[r->kernel_count++];
        k->name = result_strdup(ctx, r, fn->name);
        k->kind = fn->entry_kind;
        if (fn->stencil) {
            k->dims = (uint32_t)fn->stencil->dims;
            for (int i = 0; i < 3; i++) k->tile[i] = (uint32_t)fn->stencil->tile[i];
            k->halo = (uint32_t)fn->stencil->halo;
        }
        for (int i = 0; i < 3; i++) k->block[i] = (uint32_t)fn->block[i];
        if (fn->entry_kind == RK_TRANSPILE_HANDLER && fn->ty->param_count == 3) {
            k->request_size = pointee_size(fn->params);
            k->reply_size = pointee_size(fn->params->next);
            k->state_size = pointee_size(fn->params->next->next);
        }
    }
}

/* ---- the pipeline ------------------------------------------------------------------ */

typedef struct run_state {
    tp_program *prog;
    tp_buf out;
    rk_status status;
} run_state;

static void run_stages(tp_ctx *ctx, run_state *st) {
    const rk_transpile_desc *d = ctx->desc;
    tp_file *main_file;
    if (d->source) {
        const char *name = d->path ? d->path : "<input>";
        const char *slash = d->path ? strrchr(d->path, '/') : NULL;
        const char *dir = !d->path ? NULL : slash ? rk__tp_strndup(ctx, d->path, (size_t)(slash - d->path)) : ".";
        main_file = rk__tp_new_file(ctx, name, d->no_file_system ? NULL : dir, d->source, strlen(d->source), false);
    } else {
        main_file = d->no_file_system ? NULL : rk__tp_load_main(ctx, d->path);
        if (!main_file) {
            rk__tp_error(ctx, NULL, "cannot read '%s': %s", d->path,
                         d->no_file_system ? "file system access is off" : strerror(errno));
            st->status = RK_IO_ERROR;
            return;
        }
    }
    main_file->included = true;
    tp_token *tok = rk__tp_tokenize(ctx, main_file);
    tok = rk__tp_preprocess(ctx, tok);
    rk__tp_convert_literals(ctx, tok);
    st->prog = rk__tp_parse(ctx, tok);
    rk__tp_check_program(ctx, st->prog);
    if (ctx->error_count) {
        st->status = RK_PARSE_ERROR;
        return;
    }
    tp_emit_fn emit = emitter_for(d->target);
    rk__tp_buf_init(&st->out, ctx);
    emit(ctx, st->prog, &st->out);
    st->status = ctx->error_count ? RK_PARSE_ERROR : RK_OK;
}

/* Kept apart so nothing it changes is read after a longjmp. */
static bool run_guarded(tp_ctx *ctx, run_state *st) {
    jmp_buf fatal;
    ctx->fatal = &fatal;
    if (setjmp(fatal) == 0) {
        run_stages(ctx, st);
        return true;
    }
    return false;
}

rk_status rk_transpile(const rk_transpile_desc *desc, rk_transpile_result **out) {
    if (!out) return rk__fail(RK_NULL_ARGUMENT, "rk_transpile: out is NULL");
    *out = NULL;
    if (!desc) return rk__fail(RK_NULL_ARGUMENT, "rk_transpile: desc is NULL");
    if (!desc->source && !desc->path)
        return rk__fail(RK_INVALID_ARGUMENT, "rk_transpile: give the source text or a path");
    if ((desc->include_dir_count && !desc->include_dirs) || (desc->define_count && !desc->defines) ||
        (desc->file_count && !desc->files))
        return rk__fail(RK_NULL_ARGUMENT, "rk_transpile: a count is non-zero but its array is NULL");
    if ((int)desc->target < RK_TARGET_DEFAULT || desc->target > RK_TARGET_MSL)
        return rk__fail(RK_INVALID_ARGUMENT, "rk_transpile: unknown target %d", (int)desc->target);
    if ((int)desc->kind < RK_TRANSPILE_AUTO || desc->kind > RK_TRANSPILE_HANDLER)
        return rk__fail(RK_INVALID_ARGUMENT, "rk_transpile: unknown kind %d", (int)desc->kind);
    if (!emitter_for(desc->target))
        return rk__fail(RK_UNSUPPORTED, "rk_transpile: the %s emitter is not built yet",
                        rk_transpile_target_name(desc->target));

    rk_transpile_result *r = calloc(1, sizeof *r);
    if (!r) return rk__fail(RK_OUT_OF_MEMORY, "rk_transpile: out of memory");
    tp_ctx *ctx = calloc(1, sizeof *ctx);
    run_state *st = calloc(1, sizeof *st);
    if (!ctx || !st) {
        free(ctx);
        free(st);
        free(r);
        return rk__fail(RK_OUT_OF_MEMORY, "rk_transpile: out of memory");
    }
    rk__tp_ctx_init(ctx, desc);
    st->status = RK_INTERNAL;
    if (!run_guarded(ctx, st)) {
        st->status = ctx->fatal_status ? ctx->fatal_status : RK_PARSE_ERROR;
        if (!ctx->error_count && st->status == RK_PARSE_ERROR) st->status = RK_INTERNAL;
    }

    rk_status status = st->status;
    /* Packaging the result may itself run out of memory: unwind here too. */
    jmp_buf fatal;
    ctx->fatal = &fatal;
    ctx->too_many_errors = true; /* no further diagnostics */
    if (setjmp(fatal) == 0) {
        collect_diagnostics(ctx, r);
        if (status == RK_OK) {
            r->output = result_alloc(ctx, r, st->out.len + 1);
            memcpy(r->output, st->out.data, st->out.len + 1);
            r->output_size = st->out.len;
        } else {
            r->output = result_alloc(ctx, r, 1);
        }
        if (st->prog) collect_kernels(ctx, r, st->prog);
        rk__tp_arena_free(&ctx->arena);
        free(ctx);
        free(st);
    } else {
        rk__tp_arena_free(&ctx->arena);
        rk__tp_arena_free(&r->strings);
        free(ctx);
        free(st);
        free(r);
        return rk__fail(RK_OUT_OF_MEMORY, "rk_transpile: out of memory");
    }
    *out = r;
    if (status == RK_PARSE_ERROR) {
        rk__fail(status, "%zu error%s in %s", r->error_count, r->error_count == 1 ? "" : "s",
                 desc->path ? desc->path : "<input>");
        rk__fail_append("\n");
        rk__fail_append(r->diag_text);
    } else if (status != RK_OK) {
        rk__fail(status, "%s", r->diag_count ? r->diags[0].message : rk_status_message(status));
    }
    return status;
}

void rk_transpile_result_destroy(rk_transpile_result *result) {
    if (!result) return;
    rk__tp_arena_free(&result->strings);
    free(result);
}

const char *rk_transpile_output(const rk_transpile_result *result, size_t *size) {
    if (size) *size = result && result->output ? result->output_size : 0;
    return result && result->output ? result->output : "";
}

size_t rk_transpile_diagnostic_count(const rk_transpile_result *result) { return result ? result->diag_count : 0; }

const rk_diagnostic *rk_transpile_diagnostic(const rk_transpile_result *result, size_t index) {
    return result && index < result->diag_count ? &result->diags[index] : NULL;
}

size_t rk_transpile_error_count(const rk_transpile_result *result) { return result ? result->error_count : 0; }

const char *rk_transpile_diagnostics_text(const rk_transpile_result *result) {
    return result && result->diag_text ? result->diag_text : "";
}

size_t rk_transpile_kernel_count(const rk_transpile_result *result) { return result ? result->kernel_count : 0; }

const rk_transpiled_kernel *rk_transpile_kernel(const rk_transpile_result *result, size_t index) {
    return result && index < result->kernel_count ? &result->kernels[index] : NULL;
}
