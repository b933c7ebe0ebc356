/* The body of a tiled stencil kernel around the user's statements, the same
 * for every target with block-shared memory (CUDA, MSL): declare the tiles,
 * work out the thread's cell, load each tile and its halo (cells outside the
 * grid read the nearest edge cell), meet at a barrier, leave past the grid's
 * edge, then the user's code. Only the spellings differ, so a target passes
 * them in a tp_tile_target (WGSL reads neighbours from storage instead). */
#include "tp.h"

static void line(const tp_tile_target *t) {
    for (int i = 0; i < *t->indent; i++) rk__tp_buf_puts(t->out, "    ");
}

/* One line at the current indentation. */
#define LINE(t, ...) (line(t), rk__tp_buf_printf((t)->out, __VA_ARGS__))

static void load_tiles(const tp_tile_target *t, const tp_stencil *st) {
    int h = st->halo, d3 = st->dims == 3;
    int tw = st->tile[0], th = st->tile[1], td = st->tile[2];
    int lw = tw + 2 * h, lh = th + 2 * h, ld = d3 ? td + 2 * h : 1;
    LINE(t, "%s", t->load_comment[0]);
    LINE(t, "%s", t->load_comment[1]);
    if (d3)
        LINE(t, "for (int rk__i = (rk__tz * %d + rk__ty) * %d + rk__tx; rk__i < %d; rk__i += %d) {\n", th, tw,
             lw * lh * ld, tw * th * td);
    else
        LINE(t, "for (int rk__i = rk__ty * %d + rk__tx; rk__i < %d; rk__i += %d) {\n", tw, lw * lh, tw * th);
    (*t->indent)++;
    LINE(t, "const int rk__lx = rk__i %% %d, rk__ly = rk__i / %d %% %d%s;\n", lw, lw, lh,
         d3 ? rk__tp_format(t->ctx, ", rk__lz = rk__i / %d", lw * lh) : "");
    LINE(t, "const int rk__gx = %s((int)%s.x * %d - %d + rk__lx, rk__nx);\n", t->clamp, t->block_id, tw, h);
    LINE(t, "const int rk__gy = %s((int)%s.y * %d - %d + rk__ly, rk__ny);\n", t->clamp, t->block_id, th, h);
    if (d3) LINE(t, "const int rk__gz = %s((int)%s.z * %d - %d + rk__lz, rk__nz);\n", t->clamp, t->block_id, td, h);
    for (tp_stencil_buffer *b = st->tiled; b; b = b->next)
        LINE(t, "%s%s[rk__ly][rk__lx] = %s[%s", b->tile_name, d3 ? "[rk__lz]" : "", t->name(t->emitter, b->param),
             d3 ? "(rk__gz * rk__ny + rk__gy) * rk__nx + rk__gx];\n" : "rk__gy * rk__nx + rk__gx];\n");
    (*t->indent)--;
    LINE(t, "}\n");
    LINE(t, "%s", t->barrier);
}

void rk__tp_emit_tiled_stencil(const tp_tile_target *t, const tp_stencil *st, tp_node *body) {
    int h = st->halo, d3 = st->dims == 3;
    int tw = st->tile[0], th = st->tile[1], td = st->tile[2];
    int lw = tw + 2 * h, lh = th + 2 * h, ld = d3 ? td + 2 * h : 1;
    for (tp_stencil_buffer *b = st->tiled; b; b = b->next) {
        LINE(t, "%s", t->shared);
        t->declare(t->emitter, rk__tp_unqual(b->param->ty->base), b->tile_name);
        if (d3) rk__tp_buf_printf(t->out, "[%d]", ld);
        rk__tp_buf_printf(t->out, "[%d][%d];\n", lh, lw);
    }
    LINE(t, "const int rk__tx = (int)%s.x, rk__ty = (int)%s.y%s;\n", t->thread_id, t->thread_id,
         d3 ? rk__tp_format(t->ctx, ", rk__tz = (int)%s.z", t->thread_id) : "");
    LINE(t, "const int rk__x = (int)%s.x * %d + rk__tx;\n", t->block_id, tw);
    LINE(t, "const int rk__y = (int)%s.y * %d + rk__ty;\n", t->block_id, th);
    if (d3) LINE(t, "const int rk__z = (int)%s.z * %d + rk__tz;\n", t->block_id, td);
    if (st->tiled) load_tiles(t, st);
    LINE(t, "if (rk__x >= rk__nx || rk__y >= rk__ny%s) return;\n", d3 ? " || rk__z >= rk__nz" : "");
    LINE(t, "%s", d3 ? "const int rk__idx = (rk__z * rk__ny + rk__y) * rk__nx + rk__x;\n"
                     : "const int rk__idx = rk__y * rk__nx + rk__x;\n");
    LINE(t, "{\n");
    (*t->indent)++;
    t->body(t->emitter, body);
    (*t->indent)--;
    LINE(t, "}\n");
}
