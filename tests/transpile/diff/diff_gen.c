/* The random program generator (diff_gen.h says how programs stay defined). */
#include "diff_gen.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff_text.h"

enum { KIND_GLOBAL, KIND_STENCIL, KIND_HANDLER };
enum { INTS = 6, FLOATS = 3, THREADS = 128, CELLS_X = 19, CELLS_Y = 13, MESSAGES = 40 };

typedef struct gen {
    uint64_t rng;
    int kind;
    diff_text out;
    int indent;
    int loops;              /* enclosing loops (their counters are leaves) */
    bool sink_used;         /* one assignment to tsink per full expression */
    bool in_helper;         /* helper bodies see only x and y */
    /* Per program, so that most programs stay inside what WGSL accepts:
     * assignments inside expressions and switch fall-through (refused there). */
    bool assign_effects, fall_through;
    size_t (*spans)[2];
    size_t span_count, span_cap;
    int statements;         /* left to generate */
} gen;

/* ---- randomness and text ------------------------------------------------------ */

static uint32_t rnd(gen *g, uint32_t n) {
    g->rng += 0x9e3779b97f4a7c15ull;
    uint64_t z = g->rng;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return n ? (uint32_t)(z % n) : 0;
}

static bool chance(gen *g, uint32_t percent) { return rnd(g, 100) < percent; }

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...) {
    va_list ap;
    va_start(ap, f);
    char *s = NULL;
    if (vasprintf(&s, f, ap) < 0) abort();
    va_end(ap);
    return s;
}

/* fmt that frees its string arguments: cat2("(%s + %s)", a, b). */
static char *cat2(const char *f, char *a, char *b) {
    char *s = fmt(f, a, b);
    free(a);
    free(b);
    return s;
}
static char *cat1(const char *f, char *a) {
    char *s = fmt(f, a);
    free(a);
    return s;
}

static void line(gen *g, const char *f, ...) __attribute__((format(printf, 2, 3)));
static void line(gen *g, const char *f, ...) {
    for (int i = 0; i < g->indent; i++) diff_text_printf(&g->out, "    ");
    va_list ap;
    va_start(ap, f);
    char *s = NULL;
    if (vasprintf(&s, f, ap) < 0) abort();
    va_end(ap);
    diff_text_printf(&g->out, "%s\n", s);
    free(s);
}

static void span(gen *g, size_t begin) {
    if (g->span_count == g->span_cap) {
        g->span_cap = g->span_cap ? 2 * g->span_cap : 64;
        g->spans = realloc(g->spans, g->span_cap * sizeof *g->spans);
        if (!g->spans) abort();
    }
    g->spans[g->span_count][0] = begin;
    g->spans[g->span_count][1] = g->out.len;
    g->span_count++;
}

/* ---- integer expressions ------------------------------------------------------------ */

static char *int_expr(gen *g, int depth);
static char *infix(gen *g, int depth, const char *pattern, const char *op);
static char *two(gen *g, int depth, const char *pattern);
static char *flt_expr(gen *g, int depth, int *hi, int *lo);

static char *int_leaf(gen *g) {
    if (g->in_helper) return chance(g, 50) ? strdup(chance(g, 50) ? "x" : "y") : fmt("%d", (int)rnd(g, 20) - 5);
    switch (rnd(g, 10)) {
    case 0: {
        static const char *const edges[] = {"0", "1", "-1", "2147483647", "(-2147483647 - 1)", "65535", "-32768", "31"};
        return strdup(edges[rnd(g, 8)]);
    }
    case 1: return fmt("%d", (int)rnd(g, 2001) - 1000);
    case 2:
        if (g->loops) return fmt("j%d", (int)rnd(g, (uint32_t)g->loops));
        return fmt("v%u", rnd(g, INTS));
    case 3: return strdup(chance(g, 50) ? "s.a" : "s.b");
    case 4:
        if (g->kind == KIND_GLOBAL) return strdup(chance(g, 50) ? "tid" : "k");
        if (g->kind == KIND_STENCIL) return strdup(chance(g, 50) ? "rk_pos_x(p)" : "rk_pos_y(p)");
        return strdup(chance(g, 50) ? "req->a" : "(int)req->c");
    default: return fmt("v%u", rnd(g, INTS));
    }
}

/* A side effect whose value is deterministic and whose target nothing else
 * in the expression reads. */
static char *effect(gen *g, int depth) {
    switch (rnd(g, g->kind == KIND_GLOBAL ? 3 : 2)) {
    case 0: return strdup("bump(&hits)");
    case 1:
        if (!g->sink_used && g->assign_effects) {
            g->sink_used = true;
            return cat1("(tsink = %s)", int_expr(g, depth - 1));
        }
        return strdup("bump(&hits)");
    default: return fmt("(int)(atomic_add_u32(&cnt[%u], 1u) * 0u)", 5 * rnd(g, 4)); /* the add counters */
    }
}

/* Two operands in pattern, generated left to right (a seed gives the same
 * program whatever order a compiler evaluates arguments in). */
static char *two(gen *g, int depth, const char *pattern) {
    char *a = int_expr(g, depth - 1), *b = int_expr(g, depth - 1);
    return cat2(pattern, a, b);
}

/* Two operands around op in pattern (left, op, right). */
static char *infix(gen *g, int depth, const char *pattern, const char *op) {
    char *a = int_expr(g, depth - 1), *b = int_expr(g, depth - 1);
    char *s = fmt(pattern, a, op, b);
    free(a), free(b);
    return s;
}

static char *int_expr(gen *g, int depth) {
    if (depth <= 0 || chance(g, 25)) return int_leaf(g);
    static const char *const wrap_ops[] = {"+", "-", "*"};
    static const char *const bit_ops[] = {"&", "|", "^"};
    static const char *const cmp_ops[] = {"<", "<=", ">", ">=", "==", "!="};
    switch (rnd(g, 15)) {
    case 0:
    case 1: return infix(g, depth, "(int)((unsigned)(%s) %s (unsigned)(%s))", wrap_ops[rnd(g, 3)]);
    case 2: return infix(g, depth, "((%s) %s (%s))", bit_ops[rnd(g, 3)]);
    case 3: return two(g, depth, chance(g, 50) ? "sdiv(%s, %s)" : "smod(%s, %s)");
    case 4:
        if (chance(g, 40)) return two(g, depth, "(int)((unsigned)(%s) << ((%s) & 31))");
        if (chance(g, 50)) return two(g, depth, "((%s) >> ((%s) & 31))");
        return two(g, depth, "(int)((unsigned)(%s) >> ((%s) & 31))");
    case 5: return infix(g, depth, "((%s) %s (%s))", cmp_ops[rnd(g, 6)]);
    case 6: {
        char *c = int_expr(g, depth - 1);
        char *a = !g->in_helper && chance(g, 25) ? effect(g, depth) : int_expr(g, depth - 1);
        char *b = !g->in_helper && chance(g, 15) ? effect(g, depth) : int_expr(g, depth - 1);
        char *s = fmt("((%s) ? (%s) : (%s))", c, a, b);
        free(c), free(a), free(b);
        return s;
    }
    case 7:
        switch (rnd(g, 3)) {
        case 0: return cat1("(int)(0u - (unsigned)(%s))", int_expr(g, depth - 1));
        case 1: return cat1("(~(%s))", int_expr(g, depth - 1));
        default: return cat1("(!(%s))", int_expr(g, depth - 1));
        }
    case 8:
        if (g->in_helper) return int_leaf(g);
        return two(g, depth, chance(g, 50) ? "h0(%s, %s)" : "h1(%s, %s)");
    case 9: {
        if (g->in_helper) return int_leaf(g);
        int hi, lo;
        char *f = flt_expr(g, depth - 1, &hi, &lo);
        if (hi > 30) {
            free(f);
            return int_leaf(g);
        }
        return chance(g, 60) ? cat1("(int)(%s)", f) : cat2("((%s) < (%s))", f, flt_expr(g, depth - 1, &hi, &lo));
    }
    case 10:
    case 11: {
        char *a = int_expr(g, depth - 1);
        char *b = !g->in_helper && chance(g, 35) ? effect(g, depth) : int_expr(g, depth - 1);
        char *s = fmt(chance(g, 50) ? "((%s) && (%s))" : "((%s) || (%s))", a, b);
        free(a), free(b);
        return s;
    }
    default: return int_leaf(g);
    }
}

/* ---- exact float expressions: hi and lo bound the value (|v| < 2^hi) and
 * its resolution (a multiple of 2^lo) ------------------------------------------------ */

static char *flt_leaf(gen *g, int *hi, int *lo) {
    switch (rnd(g, 4)) {
    case 0: {
        int m = (int)rnd(g, 511) - 255;
        *hi = 4, *lo = -4;
        return fmt("(%.4ff)", m / 16.0);
    }
    case 1:
        *hi = 8, *lo = 0;
        return cat1("(float)((%s) & 255)", int_expr(g, 1));
    default:
        *hi = 13, *lo = -4;
        return fmt("f%u", rnd(g, FLOATS));
    }
}

static char *flt_expr(gen *g, int depth, int *hi, int *lo) {
    if (depth <= 0 || chance(g, 30)) return flt_leaf(g, hi, lo);
    int h1, l1, h2, l2;
    char *a = flt_expr(g, depth - 1, &h1, &l1);
    switch (rnd(g, 6)) {
    case 0:
    case 1: {
        char *b = flt_expr(g, depth - 1, &h2, &l2);
        *hi = (h1 > h2 ? h1 : h2) + 1, *lo = l1 < l2 ? l1 : l2;
        if (*hi - *lo > 24) break;
        return cat2(chance(g, 50) ? "(%s + %s)" : "(%s - %s)", a, b);
    }
    case 2: {
        char *b = flt_expr(g, depth - 1, &h2, &l2);
        *hi = h1 + h2, *lo = l1 + l2;
        if (*hi - *lo > 24 || *hi > 40) {
            free(b);
            break;
        }
        return cat2("(%s * %s)", a, b);
    }
    case 3: {
        char *b = flt_expr(g, depth - 1, &h2, &l2);
        *hi = h1 > h2 ? h1 : h2, *lo = l1 < l2 ? l1 : l2;
        if (*hi - *lo > 24) {
            free(b);
            break;
        }
        return cat2(chance(g, 50) ? "fminf(%s, %s)" : "fmaxf(%s, %s)", a, b);
    }
    case 4:
        *hi = h1, *lo = l1 > 0 ? l1 : 0;
        return cat1(chance(g, 50) ? "floorf(%s)" : "truncf(%s)", a);
    default:
        *hi = h1, *lo = l1;
        return cat1(chance(g, 50) ? "fabsf(%s)" : "(-%s)", a);
    }
    free(a);
    return flt_leaf(g, hi, lo);
}

/* ---- statements ------------------------------------------------------------------------ */

static void block(gen *g, int depth, int count);

static char *cond(gen *g) {
    g->sink_used = false;
    if (chance(g, 25)) {
        int hi, lo;
        char *a = flt_expr(g, 2, &hi, &lo);
        const char *pattern = chance(g, 50) ? "%s < %s" : "%s >= %s";
        return cat2(pattern, a, flt_expr(g, 2, &hi, &lo));
    }
    return int_expr(g, 3);
}

static char *rhs(gen *g, int depth) {
    g->sink_used = false;
    return int_expr(g, depth);
}

static void stmt(gen *g, int depth) {
    size_t begin = g->out.len;
    g->statements--;
    uint32_t pick = rnd(g, depth > 0 ? 14 : 7);
    if (g->kind != KIND_GLOBAL && pick == 5) pick = 0;
    char *e, *c;
    switch (pick) {
    case 0:
        e = rhs(g, 4);
        line(g, "v%u = %s;", rnd(g, INTS), e);
        free(e);
        break;
    case 1: {
        unsigned v = rnd(g, INTS);
        e = rhs(g, 3);
        line(g, "v%u = (int)((unsigned)v%u %s (unsigned)(%s));", v, v, chance(g, 50) ? "+" : "*", e);
        free(e);
        break;
    }
    case 2: {
        int hi, lo;
        g->sink_used = false;
        e = flt_expr(g, 3, &hi, &lo);
        line(g, "f%u = fq(%s);", rnd(g, FLOATS), e);
        free(e);
        break;
    }
    case 3:
        e = rhs(g, 3);
        switch (rnd(g, 3)) {
        case 0: line(g, "hp(&v%u, %s);", rnd(g, INTS), e); break;
        case 1: line(g, "hp(&s.%s, %s);", chance(g, 50) ? "a" : "b", e); break;
        default: line(g, "s.%s = %s;", chance(g, 50) ? "a" : "b", e); break;
        }
        free(e);
        break;
    case 4:
        c = cond(g); /* one full expression: e continues c's tsink rule */
        e = int_expr(g, 3);
        if (chance(g, 50))
            line(g, "if (order2(&s.a, &s.b)) v%u = %s;", rnd(g, INTS), e);
        else
            line(g, "v%u = (%s) ? bump(&hits) : (%s);", rnd(g, INTS), c, e);
        free(c), free(e);
        break;
    case 5: {
        static const char *const ops[] = {"add", "or", "xor", "max", "min"};
        e = rhs(g, 3);
        /* One operation per counter: add then max on one word depends on the order. */
        unsigned slot = rnd(g, 16);
        line(g, "atomic_%s_u32(&cnt[%u], (unsigned)(%s));", ops[slot % 5], slot, e);
        free(e);
        break;
    }
    case 6:
        if (g->kind == KIND_HANDLER && chance(g, 30)) {
            c = cond(g);
            e = rhs(g, 2);
            line(g, "if (%s) {", c);
            line(g, "    resp->r0 = %s;", e);
            line(g, "    return -2;");
            line(g, "}");
            free(c), free(e);
        } else {
            e = rhs(g, 3);
            line(g, "tsink = %s;", e);
            free(e);
        }
        break;
    case 7:
    case 8:
    case 9: { /* an if / else-if chain, then the statement after it */
        int arms = 1 + (int)rnd(g, 3);
        for (int a = 0; a < arms; a++) {
            c = cond(g);
            line(g, "%sif (%s) {", a ? "} else " : "", c);
            free(c);
            block(g, depth - 1, 1 + (int)rnd(g, 2));
        }
        if (chance(g, 60)) {
            line(g, "} else {");
            block(g, depth - 1, 1 + (int)rnd(g, 2));
        }
        line(g, "}");
        break;
    }
    case 10: { /* switch: merged labels, fall-through now and then */
        e = rhs(g, 3);
        line(g, "switch ((%s) & 7) {", e);
        free(e);
        int cases = 1 + (int)rnd(g, 3);
        bool fall = g->fall_through && chance(g, 50);
        for (int k = 0; k < cases; k++) {
            line(g, "case %d:", 2 * k);
            if (chance(g, 30)) line(g, "case %d:", 2 * k + 1);
            g->indent++;
            block(g, depth - 1, 1);
            if (!(fall && k == 0)) line(g, "break;");
            g->indent--;
        }
        line(g, "default:");
        g->indent++;
        block(g, depth - 1, 1);
        line(g, "break;");
        g->indent--;
        line(g, "}");
        break;
    }
    default: { /* a loop with break / continue and a constant trip count */
        int j = g->loops, n = 1 + (int)rnd(g, 5);
        uint32_t shape = rnd(g, 3);
        if (shape == 0) {
            line(g, "for (int j%d = 0; j%d < %d; j%d++) {", j, j, n, j);
        } else if (shape == 1) {
            line(g, "{");
            g->indent++;
            line(g, "int j%d = 0;", j);
            line(g, "while (j%d < %d) {", j, n);
            line(g, "    j%d++;", j);
        } else {
            line(g, "{");
            g->indent++;
            line(g, "int j%d = 0;", j);
            line(g, "do {");
            line(g, "    j%d++;", j);
        }
        g->loops++;
        g->indent++;
        block(g, depth - 1, 1 + (int)rnd(g, 2));
        size_t b2 = g->out.len;
        c = cond(g);
        line(g, "if (%s) %s;", c, chance(g, 50) ? "break" : "continue");
        free(c);
        span(g, b2);
        block(g, depth - 1, (int)rnd(g, 2));
        g->indent--;
        g->loops--;
        if (shape == 2) {
            line(g, "} while (j%d < %d);", j, n);
        } else {
            line(g, "}");
        }
        if (shape != 0) {
            g->indent--;
            line(g, "}");
        }
        break;
    }
    }
    span(g, begin);
}

static void block(gen *g, int depth, int count) {
    g->indent++;
    for (int i = 0; i < count && g->statements > 0; i++) stmt(g, depth);
    g->indent--;
}

/* ---- whole programs ----------------------------------------------------------------------- */

static void prelude(gen *g) {
    diff_text_printf(&g->out, "#include <ringkernel/%s.h>\n\n", g->kind == KIND_STENCIL ? "dsl_stencil" : "dsl");
    diff_text_printf(&g->out,
                     "typedef struct Pair {\n    int a;\n    int b;\n} Pair;\n\n"
                     "RK_DEVICE int sdiv(int a, int b) { return (b == 0 || (a == (-2147483647 - 1) && b == -1)) ? a : a / b; }\n"
                     "RK_DEVICE int smod(int a, int b) { return (b == 0 || (a == (-2147483647 - 1) && b == -1)) ? 0 : a %% b; }\n"
                     "/* Clamped to [-4096, 4096] and rounded down to a multiple of 1/16: exact.\n"
                     " * -0 becomes +0 by its bits: Vulkan need not keep the sign of zero (lavapipe\n"
                     " * gave +0 for 0 * -3), and a comparison with 0 could be folded away. */\n"
                     "RK_DEVICE float fq(float x) {\n"
                     "    float r = floorf(fminf(fmaxf(x, -4096.0f), 4096.0f) * 16.0f) * 0.0625f;\n"
                     "    return float_as_uint(r) == 0x80000000u ? 0.0f : r;\n"
                     "}\n"
                     "RK_DEVICE int bump(int *hits) {\n    *hits += 1;\n    return 1;\n}\n"
                     "RK_DEVICE void hp(int *p, int v) { *p = (int)((unsigned)*p ^ (unsigned)v); }\n"
                     "RK_DEVICE int order2(int *a, int *b) {\n    if (*a <= *b) return 0;\n    int t = *a;\n"
                     "    *a = *b;\n    *b = t;\n    return 1;\n}\n");
    g->in_helper = true;
    for (int h = 0; h < 2; h++) {
        char *a = int_expr(g, 3), *c = int_expr(g, 2), *b = int_expr(g, 3), *d = int_expr(g, 3);
        diff_text_printf(&g->out,
                         "RK_DEVICE int h%d(int x, int y) {\n    int r = %s;\n    if (%s) r = %s;\n"
                         "    else if (x > y) r = %s;\n    return r;\n}\n",
                         h, a, c, b, d);
        free(a), free(b), free(c), free(d);
    }
    g->in_helper = false;
    diff_text_printf(&g->out, "\n");
}

static const char *const fold =
    "(int)((unsigned)v0 * 31u + (unsigned)v1 * 7u + (unsigned)v2 + (unsigned)v3 * 131u + (unsigned)v4 * 3u + "
    "(unsigned)v5 * 1009u)";

/* Signed overflow is undefined in C and CUDA (a compiler may fold v1 <= v1 - x
 * to x <= 0) but wraps in WGSL: every fixed line wraps through unsigned. */
static const char *const tally = "(int)((unsigned)hits * 1000u + (unsigned)tsink)";

static void body_and_locals(gen *g) {
    g->indent = 1;
    line(g, "int hits = 0, tsink = 0;");
    line(g, "Pair s;");
    line(g, "s.a = v0 ^ v3;");
    line(g, "s.b = (int)((unsigned)v1 - (unsigned)(v2 & 1023));");
    g->statements = 6 + (int)rnd(g, 20);
    while (g->statements > 0) {
        if (g->kind == KIND_GLOBAL && chance(g, 15)) { /* barriers at the top level, where control is uniform */
            size_t begin = g->out.len;
            unsigned a = rnd(g, INTS), b = rnd(g, INTS), k = 1 + rnd(g, 63);
            line(g, "sh[tid] = v%u;", a);
            line(g, "sync_threads();");
            line(g, "v%u = (int)((unsigned)v%u + (unsigned)sh[(tid + %u) & 63]);", b, b, k);
            line(g, "sync_threads();");
            span(g, begin);
            g->statements--;
            continue;
        }
        stmt(g, 3);
    }
}

static void add_buffer(diff_gen_program *gp, const char *name, diff_type t, size_t count, void *init, bool output) {
    diff_program *p = &gp->program;
    gp->inputs[p->buffer_count] = init;
    p->buffers[p->buffer_count++] = (diff_buffer){.name = name, .type = t, .count = count, .init = init, .output = output};
}

static int32_t *random_ints(gen *g, size_t n) {
    int32_t *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = chance(g, 10) ? (int32_t)(rnd(g, 2) ? 2147483647u : 2147483648u) : (int32_t)rnd(g, 4001) - 2000;
    return v;
}

static float *random_floats(gen *g, size_t n) {
    float *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++) v[i] = (float)((int)rnd(g, 2049) - 1024) / 16.0f;
    return v;
}

static void global_program(gen *g, diff_gen_program *gp) {
    double f2 = ((int)rnd(g, 64) - 32) / 16.0;
    diff_text_printf(&g->out,
                     "RK_KERNEL void gen(const int *in, const float *fin, int *out, float *fo, unsigned *cnt, float *approx, "
                     "int k) {\n    RK_SHARED int sh[64];\n    int tid = thread_idx_x();\n"
                     "    int i = block_idx_x() * block_dim_x() + tid;\n"
                     "    int v0 = in[i], v1 = k ^ i, v2 = in[(i + %u) & 127], v3 = in[(i * 5) & 127], v4 = tid, v5 = k;\n"
                     "    float f0 = fin[i], f1 = fin[(i + 1) & 127], f2 = %.4ff;\n",
                     1 + rnd(g, 126), f2);
    body_and_locals(g);
    line(g, "out[4 * i] = %s;", fold);
    line(g, "out[4 * i + 1] = s.a ^ s.b;");
    line(g, "out[4 * i + 2] = %s;", tally);
    line(g, "out[4 * i + 3] = v0;");
    line(g, "fo[2 * i] = f0 + f1;");
    line(g, "fo[2 * i + 1] = f2;");
    line(g, "approx[2 * i] = sqrtf(fabsf(f0));");
    line(g, "approx[2 * i + 1] = f1 / (fabsf(f2) + 1.0f);");
    diff_text_printf(&g->out, "}\n");
    add_buffer(gp, "in", DT_I32, THREADS, random_ints(g, THREADS), false);
    add_buffer(gp, "fin", DT_F32, THREADS, random_floats(g, THREADS), false);
    add_buffer(gp, "out", DT_I32, 4 * THREADS, NULL, true);
    add_buffer(gp, "fo", DT_F32, 2 * THREADS, NULL, true);
    uint32_t *cnt = malloc(16 * sizeof *cnt);
    for (int i = 0; i < 16; i++) cnt[i] = rnd(g, 1000);
    add_buffer(gp, "cnt", DT_U32, 16, cnt, true);
    add_buffer(gp, "approx", DT_F32, 2 * THREADS, NULL, true);
    gp->program.buffers[5].ulp = 4; /* sqrtf and / may be a few ULP apart across targets */
    diff_launch *l = &gp->program.launches[gp->program.launch_count++];
    *l = (diff_launch){.kernel = "gen", .grid = {THREADS / 64, 1, 1}, .block = {64, 1, 1}, .arg_count = 7};
    for (int b = 0; b < 6; b++) l->args[b] = DIFF_BUF(b);
    l->args[6] = DIFF_SCALAR(RK_ARG_INT((int)rnd(g, 1000)));
}

static void stencil_program(gen *g, diff_gen_program *gp) {
    int dx = (int)rnd(g, 5) - 2, dy = (int)rnd(g, 5) - 2;
    diff_text_printf(&g->out,
                     "RK_KERNEL void gen(const int *a, const float *b, int *out, float *fout, int k, rk_grid_pos p) {\n"
                     "    int v0 = a[rk_pos_idx(p)], v1 = rk_north(p, a), v2 = rk_at(p, a, %d, %d), v3 = rk_west(p, a);\n"
                     "    int v4 = rk_pos_x(p) ^ k, v5 = rk_pos_y(p);\n"
                     "    float f0 = rk_east(p, b), f1 = rk_at(p, b, %d, %d), f2 = b[rk_pos_idx(p)];\n",
                     dx, dy, dy, -dx);
    body_and_locals(g);
    line(g, "out[2 * rk_pos_idx(p)] = %s;", fold);
    line(g, "out[2 * rk_pos_idx(p) + 1] = (int)((unsigned)(s.a ^ s.b) + (unsigned)%s);", tally);
    line(g, "fout[rk_pos_idx(p)] = f0 + f1 - f2;");
    diff_text_printf(&g->out, "}\n");
    size_t n = CELLS_X * CELLS_Y;
    add_buffer(gp, "a", DT_I32, n, random_ints(g, n), false);
    add_buffer(gp, "b", DT_F32, n, random_floats(g, n), false);
    add_buffer(gp, "out", DT_I32, 2 * n, NULL, true);
    add_buffer(gp, "fout", DT_F32, n, NULL, true);
    diff_launch *l = &gp->program.launches[gp->program.launch_count++];
    *l = (diff_launch){.kernel = "gen", .cells = {CELLS_X, CELLS_Y, 1}, .arg_count = 5};
    for (int b = 0; b < 4; b++) l->args[b] = DIFF_BUF(b);
    l->args[4] = DIFF_SCALAR(RK_ARG_INT((int)rnd(g, 1000)));
}

static void handler_program(gen *g, diff_gen_program *gp) {
    diff_text_printf(&g->out,
                     "typedef struct Req {\n    int32_t a;\n    int32_t b;\n    uint32_t c;\n    float f;\n} Req;\n"
                     "typedef struct Resp {\n    int32_t r0;\n    int32_t r1;\n    float g;\n    int32_t r2;\n} Resp;\n"
                     "typedef struct St {\n    int32_t acc;\n    uint32_t count;\n    int32_t hist[4];\n    float fsum;\n"
                     "    int32_t last;\n} St;\n\n"
                     "RK_HANDLER int gen(const Req *req, Resp *resp, St *st) {\n"
                     "    int v0 = req->a, v1 = req->b, v2 = (int)req->c, v3 = st->acc, v4 = st->hist[req->c & 3u];\n"
                     "    int v5 = (int)st->count;\n"
                     "    float f0 = fq(req->f), f1 = st->fsum, f2 = %.4ff;\n",
                     ((int)rnd(g, 64) - 32) / 16.0);
    body_and_locals(g);
    line(g, "st->acc = %s;", fold);
    line(g, "st->count += 1u;");
    line(g, "st->hist[(unsigned)v1 & 3u] = s.a ^ s.b;");
    line(g, "st->fsum = fq(f0 + f1);");
    line(g, "st->last = %s;", tally);
    line(g, "resp->r0 = v0;");
    line(g, "resp->r1 = v2 ^ v4;");
    line(g, "resp->g = f2;");
    line(g, "resp->r2 = v5;");
    line(g, "return (v3 & 1) ? -1 : 0;");
    diff_text_printf(&g->out, "}\n");
    int32_t *req = malloc(MESSAGES * 4 * sizeof *req);
    for (int m = 0; m < MESSAGES; m++) {
        int32_t *r = random_ints(g, 3);
        float f = (float)((int)rnd(g, 2049) - 1024) / 16.0f;
        memcpy(req + 4 * m, r, 12);
        memcpy(req + 4 * m + 3, &f, 4);
        free(r);
    }
    add_buffer(gp, "requests", DT_I32, MESSAGES * 4, req, false);
    add_buffer(gp, "replies", DT_I32, MESSAGES * 4, NULL, true);
    add_buffer(gp, "state", DT_I32, 9, NULL, true);
    add_buffer(gp, "status", DT_I32, MESSAGES, NULL, true);
    diff_launch *l = &gp->program.launches[gp->program.launch_count++];
    *l = (diff_launch){.kernel = "gen", .arg_count = 5};
    for (int b = 0; b < 4; b++) l->args[b] = DIFF_BUF(b);
    l->args[4] = DIFF_SCALAR(RK_ARG_INT(MESSAGES));
}

void diff_gen(uint64_t seed, diff_gen_program *out) {
    memset(out, 0, sizeof *out);
    gen g = {.rng = seed * 0x2545f4914f6cdd1dull + 1};
    uint32_t k = rnd(&g, 10);
    g.kind = k < 6 ? KIND_GLOBAL : k < 8 ? KIND_STENCIL : KIND_HANDLER;
    g.assign_effects = chance(&g, 20);
    g.fall_through = chance(&g, 20);
    prelude(&g);
    if (g.kind == KIND_GLOBAL)
        global_program(&g, out);
    else if (g.kind == KIND_STENCIL)
        stencil_program(&g, out);
    else
        handler_program(&g, out);
    out->source = g.out.s;
    out->spans = g.spans;
    out->span_count = g.span_count;
    out->program.source = out->source;
    out->program.name = g.kind == KIND_GLOBAL ? "gen_global.c" : g.kind == KIND_STENCIL ? "gen_stencil.c" : "gen_handler.c";
}

void diff_gen_free(diff_gen_program *g) {
    for (int i = 0; i < DIFF_MAX_BUFFERS; i++) free(g->inputs[i]);
    free(g->source);
    free(g->spans);
    memset(g, 0, sizeof *g);
}

char *diff_gen_source_without(const diff_gen_program *g, const bool *drop) {
    size_t n = strlen(g->source);
    char *keep = malloc(n + 1), *out = malloc(n + 1);
    memset(keep, 1, n);
    for (size_t s = 0; s < g->span_count; s++)
        if (drop[s]) memset(keep + g->spans[s][0], 0, g->spans[s][1] - g->spans[s][0]);
    size_t o = 0;
    for (size_t i = 0; i < n; i++)
        if (keep[i]) out[o++] = g->source[i];
    out[o] = '\0';
    free(keep);
    return out;
}
