/* Diagnostics are collected, never printed: each keeps its file, line,
 * column and source line so the caller can render them like a compiler. */
#include <stdio.h>
#include <string.h>

#include "tp.h"

void rk__tp_vdiag(tp_ctx *ctx, rk_diagnostic_severity sev, const tp_token *tok, const char *fmt, va_list ap) {
    if (ctx->too_many_errors) return;
    tp_diag *d = rk__tp_alloc(ctx, sizeof *d);
    d->severity = sev;
    d->message = rk__tp_vformat(ctx, fmt, ap);
    if (tok && tok->file) {
        d->file = tok->file;
        d->line = tok->line;
        d->col = tok->col;
        d->line_start = tok->line_start;
    }
    *ctx->diag_tail = d;
    ctx->diag_tail = &d->next;
    if (sev == RK_DIAG_WARNING) ctx->warning_count++;
    if (sev != RK_DIAG_ERROR) return;
    if (++ctx->error_count >= TP_MAX_ERRORS) {
        tp_diag *stop = rk__tp_alloc(ctx, sizeof *stop);
        stop->severity = RK_DIAG_ERROR;
        stop->message = rk__tp_strdup(ctx, "too many errors; stopping");
        *ctx->diag_tail = stop;
        ctx->diag_tail = &stop->next;
        ctx->too_many_errors = true;
        ctx->fatal_status = RK_PARSE_ERROR;
        rk__tp_fatal(ctx);
    }
}

void rk__tp_error(tp_ctx *ctx, const tp_token *tok, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    rk__tp_vdiag(ctx, RK_DIAG_ERROR, tok, fmt, ap);
    va_end(ap);
}

void rk__tp_warn(tp_ctx *ctx, const tp_token *tok, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    rk__tp_vdiag(ctx, RK_DIAG_WARNING, tok, fmt, ap);
    va_end(ap);
}

void rk__tp_note(tp_ctx *ctx, const tp_token *tok, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    rk__tp_vdiag(ctx, RK_DIAG_NOTE, tok, fmt, ap);
    va_end(ap);
}

_Noreturn void rk__tp_fatal(tp_ctx *ctx) { longjmp(*ctx->fatal, 1); }

_Noreturn void rk__tp_syntax_error(tp_ctx *ctx, const tp_token *tok, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    rk__tp_vdiag(ctx, RK_DIAG_ERROR, tok, fmt, ap);
    va_end(ap);
    ctx->error_tok = (tp_token *)tok;
    if (ctx->recover) longjmp(*ctx->recover, 1);
    ctx->fatal_status = RK_PARSE_ERROR;
    rk__tp_fatal(ctx);
}

static const char *severity_word(rk_diagnostic_severity sev) {
    switch (sev) {
    case RK_DIAG_WARNING:
        return "warning";
    case RK_DIAG_NOTE:
        return "note";
    default:
        return "error";
    }
}

char *rk__tp_render_diagnostics(tp_ctx *ctx) {
    tp_buf b;
    rk__tp_buf_init(&b, ctx);
    for (tp_diag *d = ctx->diags; d; d = d->next) {
        if (d->file)
            rk__tp_buf_printf(&b, "%s:%d:%d: ", d->file->name, d->line, d->col);
        else if (ctx->main_name)
            rk__tp_buf_printf(&b, "%s: ", ctx->main_name);
        rk__tp_buf_printf(&b, "%s: %s\n", severity_word(d->severity), d->message);
        if (!d->line_start) continue;
        const char *end = d->line_start;
        while (*end && *end != '\n' && *end != '\r') end++;
        rk__tp_buf_puts(&b, "  ");
        rk__tp_buf_putn(&b, d->line_start, (size_t)(end - d->line_start));
        rk__tp_buf_puts(&b, "\n  ");
        /* Tabs stay tabs so the caret lines up however they are shown. */
        for (int i = 0; i < d->col - 1 && d->line_start + i < end; i++)
            rk__tp_buf_putn(&b, d->line_start[i] == '\t' ? "\t" : " ", 1);
        rk__tp_buf_puts(&b, "^\n");
    }
    if (ctx->error_count)
        rk__tp_buf_printf(&b, "%d error%s generated.\n", ctx->error_count, ctx->error_count == 1 ? "" : "s");
    return b.data;
}
