/* Transpiled kernels on WebGPU give the CPU backend's results:
 *  - every example and case source is transpiled to WGSL; what transpiles is
 *    compiled by Dawn (handlers inside stand-in ring bindings), and what does
 *    not must be refused by the WGSL emitter itself, with a reason;
 *  - vector_scale and the features kernel (tests/webgpu/wgsl_features.c) run
 *    on both backends and are compared; the laplacian and heat3d stencils are
 *    compared with the same sources run on the host through dsl_stencil.h;
 *  - the demo handler and the features handler run as ring kernels on both
 *    backends, every reply compared. */
#include <math.h>

#include "check.h"
#include "ringkernel/transpile.h"
#include "stencil_reference.h"
#include "support/read_file.h"

#define SEC 1000000000ull

#define RK_TEST_SEED 0x2545f4914f6cdd1dull
#define RK_TEST_GOT "webgpu"
#define RK_TEST_WANT "cpu"
#include "support/numeric.h"

static rk_context *open_backend(const char *name) {
    const rk_backend *b = NULL;
    uint32_t count = 0;
    CHECK_OK(rk_backend_find(name, &b));
    if (rk_backend_device_count(b, &count) != RK_OK || count == 0)
        RK_SKIP("%s backend unavailable: %s", name, rk_backend_unavailable_reason(b));
    rk_context *ctx = NULL;
    CHECK_OK(rk_context_create(b, 0, &ctx));
    return ctx;
}

/* Transpiles a file to WGSL; returns the result (caller destroys) and status.
 * Handler sources use the DSL without including it, as backends take them. */
static rk_status to_wgsl(const char *relative, rk_transpile_result **out) {
    char wrapper[1200];
    snprintf(wrapper, sizeof wrapper, "#include <ringkernel/dsl.h>\n#include \"%s/%s\"\n", RK_SOURCE_DIR, relative);
    rk_transpile_desc d = {.source = wrapper, .path = relative, .target = RK_TARGET_WGSL};
    return rk_transpile(&d, out);
}

static const char *first_error(const rk_transpile_result *r) {
    for (size_t i = 0; i < rk_transpile_diagnostic_count(r); i++)
        if (rk_transpile_diagnostic(r, i)->severity == RK_DIAG_ERROR) return rk_transpile_diagnostic(r, i)->message;
    return "?";
}

/* ---- every source: transpiles and compiles, or is refused by the emitter ---- */

static const char *const sources[] = {
    "examples/kernels/vector_scale.c", "examples/kernels/laplacian.c", "examples/kernels/heat3d.c",
    "examples/kernels/poly_handler.c", "tests/transpile/cases/blur.c", "tests/transpile/cases/features.c",
    "tests/transpile/cases/reduce.c", "tests/webgpu/wgsl_features.c", "examples/handlers/demo_handler.c",
    "tests/transpile/cases/meaning.c", "tests/transpile/cases/dsl_builtins.c",
    "tests/transpile/cases/uniform_barriers.c",
};

/* Handlers call into the ring template's bindings: stand-ins make them a module. */
static char *with_ring_stand_ins(const rk_transpile_result *r) {
    const char *wgsl = rk_transpile_output(r, NULL);
    size_t len = strlen(wgsl) + 1024;
    for (size_t i = 0; i < rk_transpile_kernel_count(r); i++) len += 128;
    char *out = malloc(len);
    size_t used = (size_t)snprintf(out, len,
                                   "%s\n@group(0) @binding(0) var<storage, read> rk_in: array<u32>;\n"
                                   "@group(0) @binding(1) var<storage, read_write> rk_out: array<u32>;\n"
                                   "@group(0) @binding(2) var<storage, read_write> rk_state: array<u32>;\n",
                                   wgsl);
    for (size_t i = 0; i < rk_transpile_kernel_count(r); i++) {
        const rk_transpiled_kernel *k = rk_transpile_kernel(r, i);
        if (k->kind != RK_TRANSPILE_HANDLER) continue;
        used += (size_t)snprintf(out + used, len - used,
                                 "@compute @workgroup_size(1) fn rk_validate_%s() { _ = rk_handle_%s(1u, 0u); }\n",
                                 k->name, k->name);
    }
    return out;
}

static void every_source_validated(rk_context *wg) {
    int compiled = 0, refused = 0;
    for (size_t i = 0; i < sizeof sources / sizeof sources[0]; i++) {
        rk_transpile_result *r = NULL;
        rk_status s = to_wgsl(sources[i], &r);
        if (s != RK_OK) {
            /* Refused: by the WGSL emitter (it says so), never by a crash or a bad module. */
            CHECK_EQ(s, RK_PARSE_ERROR);
            CHECK_STR_CONTAINS(rk_transpile_diagnostics_text(r), "(WGSL target)");
            printf("refused for WGSL: %s (%zu errors), e.g. %s\n", sources[i], rk_transpile_error_count(r),
                   first_error(r));
            refused++;
            rk_transpile_result_destroy(r);
            continue;
        }
        bool handlers = false;
        for (size_t k = 0; k < rk_transpile_kernel_count(r); k++)
            if (rk_transpile_kernel(r, k)->kind == RK_TRANSPILE_HANDLER) handlers = true;
        char *code = handlers ? with_ring_stand_ins(r) : strdup(rk_transpile_output(r, NULL));
        rk_module *m = NULL;
        s = rk_module_compile(wg, code, NULL, &m);
        if (s != RK_OK) fprintf(stderr, "Dawn rejected the WGSL of %s:\n%s\n--- source ---\n%s\n", sources[i], rk_last_error(), code);
        CHECK_OK(s);
        for (size_t k = 0; k < rk_transpile_kernel_count(r); k++) {
            const rk_transpiled_kernel *tk = rk_transpile_kernel(r, k);
            rk_function *f = NULL;
            if (tk->kind != RK_TRANSPILE_HANDLER) CHECK_OK(rk_module_get_function(m, tk->name, &f));
        }
        printf("validated by Dawn: %s\n", sources[i]);
        compiled++;
        CHECK_OK(rk_module_destroy(m));
        free(code);
        rk_transpile_result_destroy(r);
    }
    CHECK_GE(compiled, 5);
    printf("%d sources compiled by Dawn, %d refused by the WGSL emitter\n", compiled, refused);
}

/* ---- kernels on both backends ------------------------------------------------ */

typedef struct pair {
    rk_context *cpu, *wg;
    rk_module *mcpu, *mwg;
    rk_function *fcpu, *fwg;
} pair;

static void pair_open(pair *p, rk_context *cpu, rk_context *wg, const char *relative, const char *name) {
    p->cpu = cpu;
    p->wg = wg;
    char *src = rk_test_read_source(relative);
    CHECK_OK(rk_module_compile(cpu, src, NULL, &p->mcpu));
    CHECK_OK(rk_module_get_function(p->mcpu, name, &p->fcpu));
    rk_transpile_result *r = NULL;
    CHECK_OK(to_wgsl(relative, &r));
    /* A source with handlers needs the ring template's bindings to compile alone. */
    char *code = with_ring_stand_ins(r);
    CHECK_OK(rk_module_compile(wg, code, NULL, &p->mwg));
    free(code);
    CHECK_OK(rk_module_get_function(p->mwg, name, &p->fwg));
    rk_transpile_result_destroy(r);
    free(src);
}

static void pair_close(pair *p) {
    CHECK_OK(rk_module_destroy(p->mcpu));
    CHECK_OK(rk_module_destroy(p->mwg));
}

/* Buffers with the same contents on both backends. */
static void upload2(pair *p, rk_buffer **bc, rk_buffer **bw, const void *data, size_t size) {
    CHECK_OK(rk_buffer_alloc(p->cpu, size, bc));
    CHECK_OK(rk_buffer_alloc(p->wg, size, bw));
    CHECK_OK(rk_copy_to_device(p->cpu, *bc, 0, data, size, NULL));
    CHECK_OK(rk_copy_to_device(p->wg, *bw, 0, data, size, NULL));
}

static void vector_scale(rk_context *cpu, rk_context *wg) {
    pair p;
    pair_open(&p, cpu, wg, "examples/kernels/vector_scale.c", "vector_scale");
    static const int sizes[] = {1, 63, 64, 1000, 4097};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int n = sizes[s];
        size_t bytes = (size_t)n * sizeof(float);
        float *data = malloc(bytes), *a = malloc(bytes), *b = malloc(bytes);
        for (int i = 0; i < n; i++) data[i] = random_float();
        rk_buffer *bc, *bw;
        upload2(&p, &bc, &bw, data, bytes);
        rk_arg ac[] = {RK_ARG_BUF(bc), RK_ARG_FLOAT(-1.75f), RK_ARG_INT(n)};
        rk_arg aw[] = {RK_ARG_BUF(bw), RK_ARG_FLOAT(-1.75f), RK_ARG_INT(n)};
        rk_launch_desc lc = {.grid = RK_DIM3((uint32_t)(n + 63) / 64, 1, 1), .block = RK_DIM3(64, 1, 1), .args = ac, .arg_count = 3};
        rk_launch_desc lw = lc;
        lw.args = aw;
        CHECK_OK(rk_launch(p.fcpu, &lc));
        CHECK_OK(rk_launch(p.fwg, &lw));
        CHECK_OK(rk_copy_to_host(cpu, a, bc, 0, bytes, NULL));
        CHECK_OK(rk_copy_to_host(wg, b, bw, 0, bytes, NULL));
        CHECK_OK(rk_context_synchronize(cpu));
        check_close_f32("vector_scale", b, a, (size_t)n, 0.0);
        CHECK_OK(rk_buffer_free(bc));
        CHECK_OK(rk_buffer_free(bw));
        free(data), free(a), free(b);
    }
    pair_close(&p);
    printf("vector_scale: webgpu == cpu at %zu sizes\n", sizeof sizes / sizeof sizes[0]);
}

/* Stencils against the same source run on the host through dsl_stencil.h
 * (the CPU backend compiles global kernels only). */
static void stencil(rk_context *wg, const char *file, const char *name, bool three_d) {
    rk_transpile_result *r = NULL;
    CHECK_OK(to_wgsl(file, &r));
    rk_module *m = NULL;
    rk_function *f = NULL;
    CHECK_OK(rk_module_compile(wg, rk_transpile_output(r, NULL), NULL, &m));
    CHECK_OK(rk_module_get_function(m, name, &f));
    const rk_transpiled_kernel *tk = rk_transpile_kernel(r, 0);
    static const int sizes[][3] = {{1, 1, 1}, {16, 16, 1}, {17, 5, 3}, {33, 47, 2}, {40, 9, 9}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int nx = sizes[s][0], ny = sizes[s][1], nz = three_d ? sizes[s][2] : 1;
        size_t n = (size_t)nx * ny * nz, bytes = n * sizeof(float);
        float *in = malloc(bytes), *a = calloc(n, sizeof *a), *b = malloc(bytes);
        for (size_t i = 0; i < n; i++) in[i] = random_float();
        if (three_d)
            host_heat3d(in, a, 0.125f, nx, ny, nz);
        else
            host_laplacian(in, a, nx, ny);
        rk_buffer *iw, *ow;
        CHECK_OK(rk_buffer_alloc(wg, bytes, &iw));
        CHECK_OK(rk_buffer_alloc(wg, bytes, &ow));
        CHECK_OK(rk_copy_to_device(wg, iw, 0, in, bytes, NULL));
        const uint32_t *t = tk->tile;
        rk_arg args[6];
        size_t na = 0;
        args[na++] = RK_ARG_BUF(iw);
        args[na++] = RK_ARG_BUF(ow);
        if (three_d) args[na++] = RK_ARG_FLOAT(0.125f);
        args[na++] = RK_ARG_INT(nx);
        args[na++] = RK_ARG_INT(ny);
        if (three_d) args[na++] = RK_ARG_INT(nz);
        rk_launch_desc l = {.grid = RK_DIM3((uint32_t)(nx + (int)t[0] - 1) / t[0], (uint32_t)(ny + (int)t[1] - 1) / t[1],
                                            (uint32_t)(nz + (int)t[2] - 1) / t[2]),
                            .block = RK_DIM3(t[0], t[1], t[2]), .args = args, .arg_count = na};
        CHECK_OK(rk_launch(f, &l));
        CHECK_OK(rk_copy_to_host(wg, b, ow, 0, bytes, NULL));
        check_close_f32(name, b, a, n, 1e-5);
        CHECK_OK(rk_buffer_free(iw));
        CHECK_OK(rk_buffer_free(ow));
        free(in), free(a), free(b);
    }
    CHECK_OK(rk_module_destroy(m));
    rk_transpile_result_destroy(r);
    printf("%s: webgpu == host C at %zu sizes\n", name, sizeof sizes / sizeof sizes[0]);
}

typedef struct Particle {
    float pos[3];
    float mass;
    int32_t kind;
    uint32_t flags;
} Particle;

static void features_kernel(rk_context *cpu, rk_context *wg) {
    pair p;
    pair_open(&p, cpu, wg, "tests/webgpu/wgsl_features.c", "features");
    enum { N = 300, BLOCKS = (N + 63) / 64 };
    static const int kinds[] = {0, 4, 5, 2};
    Particle parts[N];
    for (int i = 0; i < N; i++) {
        parts[i] = (Particle){{random_float(), random_float(), random_float()}, (float)(next_random() % 300) / 100.0f,
                              kinds[next_random() % 4], 0};
    }
    float zeros[8 * N] = {0};
    int counts0[4] = {0};
    rk_buffer *pc, *pw, *oc, *ow, *cc, *cw, *sc, *sw;
    upload2(&p, &pc, &pw, parts, sizeof parts);
    upload2(&p, &oc, &ow, zeros, sizeof zeros);
    upload2(&p, &cc, &cw, counts0, sizeof counts0);
    upload2(&p, &sc, &sw, zeros, BLOCKS * sizeof(float));
    rk_arg ac[] = {RK_ARG_BUF(pc), RK_ARG_BUF(oc), RK_ARG_BUF(cc), RK_ARG_BUF(sc), RK_ARG_INT(N), RK_ARG_UINT(0xabcdu)};
    rk_arg aw[] = {RK_ARG_BUF(pw), RK_ARG_BUF(ow), RK_ARG_BUF(cw), RK_ARG_BUF(sw), RK_ARG_INT(N), RK_ARG_UINT(0xabcdu)};
    rk_launch_desc lc = {.grid = RK_DIM3(BLOCKS, 1, 1), .block = RK_DIM3(64, 1, 1), .args = ac, .arg_count = 6};
    rk_launch_desc lw = lc;
    lw.args = aw;
    CHECK_OK(rk_launch(p.fcpu, &lc));
    CHECK_OK(rk_launch(p.fwg, &lw));
    Particle pa[N], pb[N];
    float oa[8 * N], ob[8 * N], sa[BLOCKS], sb[BLOCKS];
    int ca[4], cb[4];
    CHECK_OK(rk_copy_to_host(cpu, pa, pc, 0, sizeof pa, NULL));
    CHECK_OK(rk_copy_to_host(cpu, oa, oc, 0, sizeof oa, NULL));
    CHECK_OK(rk_copy_to_host(cpu, ca, cc, 0, sizeof ca, NULL));
    CHECK_OK(rk_copy_to_host(cpu, sa, sc, 0, sizeof sa, NULL));
    CHECK_OK(rk_context_synchronize(cpu));
    CHECK_OK(rk_copy_to_host(wg, pb, pw, 0, sizeof pb, NULL));
    CHECK_OK(rk_copy_to_host(wg, ob, ow, 0, sizeof ob, NULL));
    CHECK_OK(rk_copy_to_host(wg, cb, cw, 0, sizeof cb, NULL));
    CHECK_OK(rk_copy_to_host(wg, sb, sw, 0, sizeof sb, NULL));
    for (int i = 0; i < 4; i++) CHECK_EQ(cb[i], ca[i]);
    CHECK_EQ(ca[0] + ca[1] + ca[2] + ca[3], N);
    for (int i = 0; i < N; i++) {
        CHECK_EQ(pb[i].flags, pa[i].flags);
        CHECK_FLOAT_NEAR(pb[i].mass, pa[i].mass, 0.0);
    }
    check_close_f32("features out", ob, oa, 8 * N, 1e-5);
    check_close_f32("features block sums", sb, sa, BLOCKS, 1e-5);
    rk_buffer *bufs[] = {pc, pw, oc, ow, cc, cw, sc, sw};
    for (int i = 0; i < 8; i++) CHECK_OK(rk_buffer_free(bufs[i]));
    pair_close(&p);
    printf("features kernel: webgpu == cpu (%d particles)\n", N);
}

/* ---- kernels whose meaning a transpiler once changed (issue 21) --------------- */

enum { MAX_BUFS = 4 };

/* Runs `name` of `relative` on both backends with the same buffers (32-bit
 * words, uploaded from bufs[i]) and int scalars, block 64; every buffer must
 * come back the same from both, and bufs[i] receives the CPU's result. */
static void run_both(rk_context *cpu, rk_context *wg, const char *relative, const char *name, void **bufs,
                     const size_t *sizes, int nbuf, const int *ints, int nint, int threads) {
    pair p;
    pair_open(&p, cpu, wg, relative, name);
    rk_buffer *bc[MAX_BUFS], *bw[MAX_BUFS];
    rk_arg ac[MAX_BUFS + 4], aw[MAX_BUFS + 4];
    for (int i = 0; i < nbuf; i++) {
        upload2(&p, &bc[i], &bw[i], bufs[i], sizes[i]);
        ac[i] = RK_ARG_BUF(bc[i]);
        aw[i] = RK_ARG_BUF(bw[i]);
    }
    for (int i = 0; i < nint; i++) ac[nbuf + i] = aw[nbuf + i] = RK_ARG_INT(ints[i]);
    rk_launch_desc lc = {.grid = RK_DIM3((uint32_t)(threads + 63) / 64, 1, 1), .block = RK_DIM3(64, 1, 1), .args = ac,
                         .arg_count = (size_t)(nbuf + nint)};
    rk_launch_desc lw = lc;
    lw.args = aw;
    CHECK_OK(rk_launch(p.fcpu, &lc));
    CHECK_OK(rk_launch(p.fwg, &lw));
    for (int i = 0; i < nbuf; i++) {
        uint32_t *a = malloc(sizes[i]), *b = malloc(sizes[i]);
        CHECK_OK(rk_copy_to_host(cpu, a, bc[i], 0, sizes[i], NULL));
        CHECK_OK(rk_context_synchronize(cpu));
        CHECK_OK(rk_copy_to_host(wg, b, bw[i], 0, sizes[i], NULL));
        for (size_t w = 0; w < sizes[i] / 4; w++) {
            if (a[w] != b[w]) fprintf(stderr, "%s: buffer %d word %zu: cpu %u, webgpu %u\n", name, i, w, a[w], b[w]);
            CHECK_EQ(a[w], b[w]);
        }
        memcpy(bufs[i], a, sizes[i]);
        free(a), free(b);
        CHECK_OK(rk_buffer_free(bc[i]));
        CHECK_OK(rk_buffer_free(bw[i]));
    }
    pair_close(&p);
}

static const char meaning_src[] = "tests/transpile/cases/meaning.c";

/* One kernel of a source on the CPU backend, or transpiled on WebGPU. */
static void module_on(rk_context *ctx, bool webgpu, const char *relative, const char *name, rk_module **m,
                      rk_function **f) {
    if (webgpu) {
        rk_transpile_result *r = NULL;
        CHECK_OK(to_wgsl(relative, &r));
        CHECK_OK(rk_module_compile(ctx, rk_transpile_output(r, NULL), NULL, m));
        rk_transpile_result_destroy(r);
    } else {
        char *src = rk_test_read_source(relative);
        CHECK_OK(rk_module_compile(ctx, src, NULL, m));
        free(src);
    }
    CHECK_OK(rk_module_get_function(*m, name, f));
}

static void else_if_tail(rk_context *cpu, rk_context *wg) {
    enum { N = 100 };
    int v[N], out[N];
    for (int i = 0; i < N; i++) v[i] = i % 9 - 6, out[i] = -1;
    void *bufs[] = {v, out};
    size_t sizes[] = {sizeof v, sizeof out};
    int n = N;
    run_both(cpu, wg, meaning_src, "else_if_tail", bufs, sizes, 2, &n, 1, N);
    for (int i = 0; i < N; i++) {
        int d = v[i] > 1 ? 1 : v[i] > 0 ? 2 : v[i] > -5 ? 3 : 0;
        CHECK_EQ(out[i], d * 10 + 1);
    }
    printf("else_if_tail: webgpu == cpu == C\n");
}

static void side_effects(rk_context *cpu, rk_context *wg) {
    enum { N = 150 };
    int v[N], out[N], counts[5] = {0}, want[5] = {0};
    for (int i = 0; i < N; i++) v[i] = (int)(next_random() % 10) - 1, out[i] = -1;
    void *bufs[] = {v, out, counts};
    size_t sizes[] = {sizeof v, sizeof out, sizeof counts};
    int n = N;
    run_both(cpu, wg, meaning_src, "side_effects", bufs, sizes, 3, &n, 1, N);
    for (int i = 0; i < N; i++) {
        int x = v[i];
        want[0] += x > 0;
        want[1] += (x & 1) != 0;
        want[2] += (x & 2) == 0;
        want[3] += x > 6;
        want[4] += x <= 5;
        int nested = 1 + (x > 3 ? (x > 6 ? 7 : 5) : 2), k = (x > 5) + (x > 2 ? 2 : 0);
        int hi = x > 2 ? ((x * 300) >> 8) & 0xf : 0;
        int expect = (x > 0) + 2 * ((x & 1) != 0) + 4 + 8 * nested + 128 * k + 1024 * hi;
        if (out[i] != expect) fprintf(stderr, "side_effects: v=%d: %d, want %d\n", x, out[i], expect);
        CHECK_EQ(out[i], expect);
    }
    for (int c = 0; c < 5; c++) CHECK_EQ(counts[c], want[c]);
    printf("side_effects (?:, &&, ||, comma with effects): webgpu == cpu == C\n");
}

static void alias_in_condition(rk_context *cpu, rk_context *wg) {
    enum { N = 70 };
    int v[N], out[N];
    for (int i = 0; i < N; i++) v[i] = i - 10, out[i] = -1;
    void *bufs[] = {v, out};
    size_t sizes[] = {sizeof v, sizeof out};
    int n = N;
    run_both(cpu, wg, meaning_src, "alias_in_condition", bufs, sizes, 2, &n, 1, N);
    for (int i = 0; i < N; i++) {
        int lo = v[i], hi = 50 - v[i], swapped = lo > hi;
        if (swapped) lo = hi, hi = v[i];
        CHECK_EQ(out[i], lo * 1000 + hi + 1000000 * swapped);
    }
    printf("alias_in_condition: webgpu == cpu == C\n");
}

static void cas_insert(rk_context *cpu, rk_context *wg) {
    enum { N = 200, SIZE = 256 };
    int v[N], table[SIZE];
    for (int i = 0; i < N; i++) v[i] = (int)(next_random() % 120);
    for (int i = 0; i < SIZE; i++) table[i] = -1;
    bool seen[120] = {false};
    int distinct = 0;
    for (int i = 0; i < N; i++) distinct += !seen[v[i]], seen[v[i]] = true;
    /* Placement depends on the order of the threads: compare what each backend holds. */
    for (int b = 0; b < 2; b++) {
        int t[SIZE], c[1] = {0};
        memcpy(t, table, sizeof t);
        rk_context *ctx = b ? wg : cpu;
        rk_module *m = NULL;
        rk_function *f = NULL;
        module_on(ctx, b, meaning_src, "cas_insert", &m, &f);
        rk_buffer *bv, *bt, *bc;
        CHECK_OK(rk_buffer_alloc(ctx, sizeof v, &bv));
        CHECK_OK(rk_buffer_alloc(ctx, sizeof t, &bt));
        CHECK_OK(rk_buffer_alloc(ctx, sizeof c, &bc));
        CHECK_OK(rk_copy_to_device(ctx, bv, 0, v, sizeof v, NULL));
        CHECK_OK(rk_copy_to_device(ctx, bt, 0, t, sizeof t, NULL));
        CHECK_OK(rk_copy_to_device(ctx, bc, 0, c, sizeof c, NULL));
        rk_arg args[] = {RK_ARG_BUF(bv), RK_ARG_BUF(bt), RK_ARG_BUF(bc), RK_ARG_INT(N), RK_ARG_INT(SIZE)};
        rk_launch_desc l = {.grid = RK_DIM3((N + 63) / 64, 1, 1), .block = RK_DIM3(64, 1, 1), .args = args, .arg_count = 5};
        CHECK_OK(rk_launch(f, &l));
        CHECK_OK(rk_copy_to_host(ctx, t, bt, 0, sizeof t, NULL));
        CHECK_OK(rk_copy_to_host(ctx, c, bc, 0, sizeof c, NULL));
        CHECK_OK(rk_context_synchronize(ctx));
        CHECK_EQ(c[0], distinct);
        bool in_table[120] = {false};
        int filled = 0;
        for (int i = 0; i < SIZE; i++) {
            if (t[i] == -1) continue;
            CHECK(t[i] >= 0 && t[i] < 120 && seen[t[i]] && !in_table[t[i]]);
            in_table[t[i]] = true;
            filled++;
        }
        CHECK_EQ(filled, distinct);
        CHECK_OK(rk_buffer_free(bv));
        CHECK_OK(rk_buffer_free(bt));
        CHECK_OK(rk_buffer_free(bc));
        CHECK_OK(rk_module_destroy(m));
    }
    printf("cas_insert: %d distinct keys claimed once each on cpu and webgpu\n", distinct);
}

static void nan_tests(rk_context *cpu, rk_context *wg) {
    enum { N = 8 };
    float f[N] = {0.0f, -1.5f, INFINITY, -INFINITY, NAN, -NAN, 3e38f, 1e-40f};
    int out[N];
    void *bufs[] = {f, out};
    size_t sizes[] = {sizeof f, sizeof out};
    int n = N;
    run_both(cpu, wg, meaning_src, "nan_tests", bufs, sizes, 2, &n, 1, N);
    for (int i = 0; i < N; i++) {
        float x = f[i];
        int nan = x != x, inf = !nan && (x == INFINITY || x == -INFINITY);
        int want = nan * (1 | 2 | 64) + inf * 4 + (!nan && !inf) * 8 + (x == INFINITY) * (16 | 128) +
                   (x == -INFINITY) * (32 | 256) + 512;
        if (out[i] != want) fprintf(stderr, "nan_tests: %g: %d, want %d\n", (double)x, out[i], want);
        CHECK_EQ(out[i], want);
    }
    printf("nan_tests (x != x, isnan/isinf/isfinite, constants folding to inf/NaN): webgpu == cpu == C\n");
}

static const char builtins_src[] = "tests/transpile/cases/dsl_builtins.c";

static int ref_clz(uint32_t x) { return x ? __builtin_clz(x) : 32; }
static int ref_ctz(uint32_t x) { return x ? __builtin_ctz(x) : 32; }

static void int_builtins(rk_context *cpu, rk_context *wg) {
    enum { N = 70 };
    uint32_t u[N];
    int out[12 * N];
    static const uint32_t edge[] = {0u, 1u, 0x80000000u, 0xffffffffu, 0x7fffffffu, 1000u, 7u, 0x7f800001u};
    for (int i = 0; i < N; i++) u[i] = i < 8 ? edge[i] : next_random() >> (i % 32);
    void *bufs[] = {u, out};
    size_t sizes[] = {sizeof u, sizeof out};
    int n = N;
    run_both(cpu, wg, builtins_src, "int_builtins", bufs, sizes, 2, &n, 1, N);
    for (int i = 0; i < N; i++) {
        uint32_t x = u[i];
        int s = (int)x, *o = out + 12 * i;
        float fs = (float)(s & 0xffff);
        uint32_t fbits;
        memcpy(&fbits, &fs, 4);
        int want[12] = {s < 0 ? (int)(0u - x) : s, s < 7 ? s : 7, s > -7 ? s : -7, (int)(x < 1000u ? x : 1000u),
                        (int)(x > 1000u ? x : 1000u), __builtin_popcount(x), ref_clz(x), ref_ctz(x),
                        x ? ref_ctz(x) + 1 : 0, 1, 1, (int)fbits};
        for (int k = 0; k < 12; k++) {
            /* a NaN's payload may be quieted on the way through a float: only the bits test */
            if (k == 9 && (x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu)) continue;
            if (k == 10 && (x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu)) continue;
            if (o[k] != want[k]) fprintf(stderr, "int_builtins: x=%#x result %d: %d, want %d\n", x, k, o[k], want[k]);
            CHECK_EQ(o[k], want[k]);
        }
    }
    printf("int_builtins (abs/min/max, popcount/clz/ctz/ffs, float<->bits): webgpu == cpu == C\n");
}

static void float_builtins(rk_context *cpu, rk_context *wg) {
    enum { N = 64 };
    float f[N], out[6 * N];
    for (int i = 0; i < N; i++) f[i] = random_float() * 8.0f;
    f[0] = INFINITY, f[1] = NAN, f[2] = 0.25f, f[3] = 0.35f, f[4] = -0.25f;
    /* rsqrtf is an approximation on the GPUs: each backend against C, with a tolerance */
    rk_context *ctx[2] = {cpu, wg};
    float res[2][6 * N];
    for (int b = 0; b < 2; b++) {
        rk_module *m = NULL;
        rk_function *fn = NULL;
        module_on(ctx[b], b, builtins_src, "float_builtins", &m, &fn);
        rk_buffer *bf, *bo;
        CHECK_OK(rk_buffer_alloc(ctx[b], sizeof f, &bf));
        CHECK_OK(rk_buffer_alloc(ctx[b], sizeof out, &bo));
        CHECK_OK(rk_copy_to_device(ctx[b], bf, 0, f, sizeof f, NULL));
        rk_arg args[] = {RK_ARG_BUF(bf), RK_ARG_BUF(bo), RK_ARG_INT(N)};
        rk_launch_desc l = {.grid = RK_DIM3(1, 1, 1), .block = RK_DIM3(64, 1, 1), .args = args, .arg_count = 3};
        CHECK_OK(rk_launch(fn, &l));
        CHECK_OK(rk_copy_to_host(ctx[b], res[b], bo, 0, sizeof out, NULL));
        CHECK_OK(rk_context_synchronize(ctx[b]));
        CHECK_OK(rk_buffer_free(bf));
        CHECK_OK(rk_buffer_free(bo));
        CHECK_OK(rk_module_destroy(m));
    }
    for (int i = 0; i < N; i++) {
        float x = f[i];
        float want[6] = {1.0f / sqrtf(fabsf(x) + 1.0f), ldexpf(x, i % 7 - 3), isfinite(x) ? (float)lrintf(x * 10.0f) : 0.0f,
                         3.14159265358979323846f * x, (float)(3.14159265358979323846 * 2.0) + x,
                         (float)(isnan(x) ? 1 : isinf(x) ? 2 : 4)};
        for (int b = 0; b < 2; b++) {
            const float *o = res[b] + 6 * i;
            for (int k = 0; k < 6; k++) {
                if (isnan(want[k])) {
                    CHECK(isnan(o[k]));
                    continue;
                }
                if (isinf(want[k])) {
                    CHECK(o[k] == want[k]);
                    continue;
                }
                double tol = k == 0 ? 4e-6 * want[k] : 0.0; /* rsqrt: a few ulp */
                CHECK_FLOAT_NEAR(o[k], want[k], tol);
            }
        }
    }
    printf("float_builtins (rsqrtf, ldexpf, lrintf, pi, isnan/isinf/isfinite): webgpu == cpu == C\n");
}

static void unsigned_atomics(rk_context *cpu, rk_context *wg) {
    enum { N = 200 };
    uint32_t u[N], acc[4] = {0xffffffffu, 0u, 0u, 0u};
    uint32_t lo = 0xffffffffu, hi = 0;
    for (int i = 0; i < N; i++) {
        u[i] = next_random() | (i % 3 == 0 ? 0x80000000u : 0u);
        lo = u[i] < lo ? u[i] : lo;
        hi = u[i] > hi ? u[i] : hi;
    }
    for (int b = 0; b < 2; b++) {
        rk_context *ctx = b ? wg : cpu;
        rk_module *m = NULL;
        rk_function *fn = NULL;
        module_on(ctx, b, builtins_src, "unsigned_atomics", &m, &fn);
        uint32_t a[4];
        memcpy(a, acc, sizeof a);
        rk_buffer *bu, *ba;
        CHECK_OK(rk_buffer_alloc(ctx, sizeof u, &bu));
        CHECK_OK(rk_buffer_alloc(ctx, sizeof a, &ba));
        CHECK_OK(rk_copy_to_device(ctx, bu, 0, u, sizeof u, NULL));
        CHECK_OK(rk_copy_to_device(ctx, ba, 0, a, sizeof a, NULL));
        rk_arg args[] = {RK_ARG_BUF(bu), RK_ARG_BUF(ba), RK_ARG_INT(N)};
        rk_launch_desc l = {.grid = RK_DIM3((N + 63) / 64, 1, 1), .block = RK_DIM3(64, 1, 1), .args = args, .arg_count = 3};
        CHECK_OK(rk_launch(fn, &l));
        CHECK_OK(rk_copy_to_host(ctx, a, ba, 0, sizeof a, NULL));
        CHECK_OK(rk_context_synchronize(ctx));
        CHECK_EQ(a[0], lo);
        CHECK_EQ(a[1], hi);
        bool found = false;
        for (int i = 0; i < N; i++) found |= a[2] == u[i];
        CHECK(found);
        CHECK(a[3] >= 1 && a[3] <= N);
        CHECK_OK(rk_buffer_free(bu));
        CHECK_OK(rk_buffer_free(ba));
        CHECK_OK(rk_module_destroy(m));
    }
    printf("unsigned_atomics (atomic_min/max/exch_u32, atomic_load_u32): cpu and webgpu == C\n");
}

static void block_sized(rk_context *cpu, rk_context *wg) {
    rk_transpile_result *r = NULL;
    CHECK_OK(to_wgsl(builtins_src, &r));
    const rk_transpiled_kernel *tk = NULL;
    for (size_t i = 0; i < rk_transpile_kernel_count(r); i++)
        if (strcmp(rk_transpile_kernel(r, i)->name, "block_sized") == 0) tk = rk_transpile_kernel(r, i);
    CHECK(tk != NULL);
    CHECK_EQ(tk->block[0], 32u);
    CHECK_EQ(tk->block[1], 2u);
    CHECK_EQ(tk->block[2], 1u);
    rk_transpile_result_destroy(r);
    pair p;
    pair_open(&p, cpu, wg, builtins_src, "block_sized");
    int out[64] = {0};
    rk_buffer *bc, *bw;
    upload2(&p, &bc, &bw, out, sizeof out);
    rk_arg ac[] = {RK_ARG_BUF(bc)}, aw[] = {RK_ARG_BUF(bw)};
    rk_launch_desc lc = {.grid = RK_DIM3(1, 1, 1), .block = RK_DIM3(32, 2, 1), .args = ac, .arg_count = 1};
    rk_launch_desc lw = lc;
    lw.args = aw;
    CHECK_OK(rk_launch(p.fcpu, &lc));
    CHECK_OK(rk_launch(p.fwg, &lw));
    int a[64], b[64];
    CHECK_OK(rk_copy_to_host(cpu, a, bc, 0, sizeof a, NULL));
    CHECK_OK(rk_context_synchronize(cpu));
    CHECK_OK(rk_copy_to_host(wg, b, bw, 0, sizeof b, NULL));
    for (int t = 0; t < 64; t++) {
        CHECK_EQ(a[t], 64000 + t);
        CHECK_EQ(b[t], a[t]);
    }
    CHECK_OK(rk_buffer_free(bc));
    CHECK_OK(rk_buffer_free(bw));
    pair_close(&p);
    printf("block_sized (RK_BLOCK_SIZE(32, 2, 1)): webgpu == cpu == C\n");
}

/* ---- handlers as ring kernels on both backends -------------------------------- */

typedef struct FeatReq {
    uint32_t id;
    int32_t op;
    float x;
    float vals[6];
} FeatReq;

typedef struct FeatResp {
    uint32_t id;
    float result;
    uint32_t seen;
    uint32_t sum_ids;
} FeatResp;

typedef struct WideReq {
    uint64_t a, b;
    int64_t c;
    int32_t s;
    uint32_t k;
} WideReq;

typedef struct WideResp {
    uint64_t sum, prod, quot, rem, shl, shr;
    int64_t neg, sdiv, smod, sar, from_int;
    uint32_t lt, slt;
    float fa, fc;
} WideResp;

typedef struct PolyRequest {
    uint32_t id;
    uint32_t degree;
    float x;
    float coeff[8];
} PolyRequest;

typedef struct PolyReply {
    uint32_t id;
    float value;
    float slope;
    int32_t status;
} PolyReply;

/* Runs n requests through a kernel on rt; replies and statuses in order. */
static void run_ring(rk_runtime *rt, const rk_kernel_desc *d, const void *reqs, size_t n, void *replies,
                     rk_reply_info *infos) {
    rk_kernel *k = NULL;
    CHECK_OK(rk_kernel_launch(rt, d, &k));
    CHECK_OK(rk_kernel_activate(k));
    size_t sent = 0, got = 0;
    const unsigned char *rq = reqs;
    unsigned char *rp = replies;
    while (got < n) {
        if (sent < n) {
            size_t m = 0;
            rk_status s = rk_kernel_send_batch(k, rq + sent * d->message_size, d->message_size, n - sent, RK_NO_WAIT,
                                               &m, NULL);
            CHECK(s == RK_OK || s == RK_TIMEOUT || s == RK_WOULD_BLOCK);
            sent += m;
        }
        size_t m = 0;
        rk_status s = rk_kernel_receive_batch(k, rp + got * d->reply_size, d->reply_size, &infos[got], n - got,
                                              sent > got ? 10 * SEC : RK_NO_WAIT, &m);
        CHECK(s == RK_OK || s == RK_TIMEOUT || s == RK_WOULD_BLOCK);
        got += m;
    }
    CHECK_OK(rk_kernel_terminate(k, 10 * SEC));
    CHECK_OK(rk_kernel_destroy(k));
}

static void handlers(void) {
    rk_runtime *cpu = NULL, *wg = NULL;
    rk_runtime_desc dc = {.backend = "cpu"}, dw = {.backend = "webgpu"};
    CHECK_OK(rk_runtime_create(&dc, &cpu));
    CHECK_OK(rk_runtime_create(&dw, &wg));

    /* The demo handler (stateless: one invocation per message on WebGPU). */
    char *demo = rk_test_read_source("examples/handlers/demo_handler.c");
    enum { N = 2000 };
    uint32_t (*dreq)[16] = calloc(N, sizeof *dreq);
    uint32_t (*ra)[4] = calloc(N, sizeof *ra), (*rb)[4] = calloc(N, sizeof *rb);
    rk_reply_info *ia = calloc(N, sizeof *ia), *ib = calloc(N, sizeof *ib);
    for (uint32_t i = 0; i < N; i++) {
        dreq[i][0] = i;
        dreq[i][1] = next_random();
        dreq[i][2] = next_random();
    }
    rk_kernel_desc d = {.name = "demo", .handler_source = demo, .handler_name = "demo_handler", .message_size = 64,
                        .reply_size = 16, .queue_capacity = 512};
    run_ring(cpu, &d, dreq, N, ra, ia);
    run_ring(wg, &d, dreq, N, rb, ib);
    for (uint32_t i = 0; i < N; i++) {
        CHECK_EQ(rb[i][0], i);
        for (int w = 0; w < 4; w++) CHECK_EQ(rb[i][w], ra[i][w]);
        CHECK_EQ(ib[i].status, ia[i].status);
    }
    printf("demo handler: %d replies, webgpu == cpu\n", N);
    free(demo), free(dreq), free(ra), free(rb), free(ia), free(ib);

    /* The features handler: state, a switch, a pointer to an array, an error status. */
    char *feat = rk_test_read_source("tests/webgpu/wgsl_features.c");
    enum { M = 500 };
    FeatReq *freq = calloc(M, sizeof *freq);
    FeatResp *fa = calloc(M, sizeof *fa), *fb = calloc(M, sizeof *fb);
    ia = calloc(M, sizeof *ia);
    ib = calloc(M, sizeof *ib);
    for (uint32_t i = 0; i < M; i++) {
        freq[i].id = i * 3 + 1;
        freq[i].op = (int32_t)(next_random() % 4);
        freq[i].x = random_float();
        for (int v = 0; v < 6; v++) freq[i].vals[v] = random_float();
    }
    rk_kernel_desc fd = {.name = "features", .handler_source = feat, .handler_name = "feature_handler",
                         .message_size = sizeof(FeatReq), .reply_size = sizeof(FeatResp), .state_size = 12,
                         .queue_capacity = 128};
    run_ring(cpu, &fd, freq, M, fa, ia);
    run_ring(wg, &fd, freq, M, fb, ib);
    int errors = 0;
    for (uint32_t i = 0; i < M; i++) {
        CHECK_EQ(fb[i].id, freq[i].id);
        CHECK_EQ(fb[i].id, fa[i].id);
        CHECK_EQ(fb[i].seen, i + 1);
        CHECK_EQ(fb[i].seen, fa[i].seen);
        CHECK_EQ(fb[i].sum_ids, fa[i].sum_ids);
        CHECK_EQ(ib[i].status, ia[i].status);
        CHECK_EQ(ib[i].status, freq[i].op == 3 ? -3 : 0);
        check_close_f32("feature_handler result", &fb[i].result, &fa[i].result, 1, 1e-5);
        errors += ib[i].status != 0;
    }
    printf("features handler: %d replies (%d handler errors), webgpu == cpu\n", M, errors);
    free(freq), free(fa), free(fb), free(ia), free(ib);

    /* 64-bit integers, emulated in WGSL, against the CPU's native ones. */
    enum { W = 400 };
    WideReq *wreq = calloc(W, sizeof *wreq);
    WideResp *wa = calloc(W, sizeof *wa), *wb = calloc(W, sizeof *wb);
    ia = calloc(W, sizeof *ia);
    ib = calloc(W, sizeof *ib);
    for (uint32_t i = 0; i < W; i++) {
        uint64_t a = ((uint64_t)next_random() << 48) ^ ((uint64_t)next_random() << 24) ^ next_random();
        uint64_t b = i % 3 == 0 ? next_random() : ((uint64_t)next_random() << 40) ^ next_random();
        int64_t c = (int64_t)(((uint64_t)next_random() << 38) ^ next_random()) * (i % 2 ? -1 : 1);
        wreq[i] = (WideReq){a, b, c, (int32_t)next_random() - (1 << 15), next_random()};
    }
    rk_kernel_desc wd = {.name = "wide", .handler_source = feat, .handler_name = "wide_handler",
                         .message_size = sizeof(WideReq), .reply_size = sizeof(WideResp), .queue_capacity = 128};
    run_ring(cpu, &wd, wreq, W, wa, ia);
    run_ring(wg, &wd, wreq, W, wb, ib);
    for (uint32_t i = 0; i < W; i++) {
        const WideResp *x = &wb[i], *y = &wa[i];
        CHECK_U64_EQ(x->sum, y->sum);
        CHECK_U64_EQ(x->prod, y->prod);
        CHECK_U64_EQ(x->quot, y->quot);
        CHECK_U64_EQ(x->rem, y->rem);
        CHECK_U64_EQ(x->shl, y->shl);
        CHECK_U64_EQ(x->shr, y->shr);
        CHECK_EQ(x->neg, y->neg);
        CHECK_EQ(x->sdiv, y->sdiv);
        CHECK_EQ(x->smod, y->smod);
        CHECK_EQ(x->sar, y->sar);
        CHECK_EQ(x->from_int, y->from_int);
        CHECK_EQ(x->lt, y->lt);
        CHECK_EQ(x->slt, y->slt);
        check_close_f32("wide (float)a", &x->fa, &y->fa, 1, 1e-6);
        check_close_f32("wide (float)c", &x->fc, &y->fc, 1, 1e-6);
    }
    printf("64-bit handler: %d replies, webgpu == cpu\n", W);
    free(feat);
    free(wreq), free(wa), free(wb), free(ia), free(ib);

    /* The poly example: a helper writing through two pointers into the reply,
     * and 64-bit counters in its state (atomic_add_u64 on the state). */
    char *poly = rk_test_read_source("examples/kernels/poly_handler.c");
    enum { P = 300 };
    PolyRequest *preq = calloc(P, sizeof *preq);
    PolyReply *pa = calloc(P, sizeof *pa), *pb = calloc(P, sizeof *pb);
    ia = calloc(P, sizeof *ia);
    ib = calloc(P, sizeof *ib);
    for (uint32_t i = 0; i < P; i++) {
        preq[i].id = i + 1;
        preq[i].degree = next_random() % 9; /* 8 is over the maximum: a handler error */
        preq[i].x = random_float() / 10.0f;
        for (int c = 0; c < 8; c++) preq[i].coeff[c] = random_float();
    }
    rk_kernel_desc pd = {.name = "poly", .handler_source = poly, .handler_name = "poly_eval",
                         .message_size = sizeof(PolyRequest), .reply_size = sizeof(PolyReply), .state_size = 16,
                         .queue_capacity = 64};
    run_ring(cpu, &pd, preq, P, pa, ia);
    run_ring(wg, &pd, preq, P, pb, ib);
    for (uint32_t i = 0; i < P; i++) {
        CHECK_EQ(pb[i].id, pa[i].id);
        CHECK_EQ(pb[i].status, pa[i].status);
        CHECK_EQ(ib[i].status, ia[i].status);
        check_close_f32("poly value", &pb[i].value, &pa[i].value, 1, 1e-5);
        check_close_f32("poly slope", &pb[i].slope, &pa[i].slope, 1, 1e-5);
    }
    printf("poly handler: %d replies, webgpu == cpu\n", P);
    free(poly), free(preq), free(pa), free(pb), free(ia), free(ib);

    /* A handler the WGSL emitter cannot take is refused at launch with its reason. */
    static const char narrow[] = "typedef struct Small { uint8_t v; } Small;\n"
                                 "RK_HANDLER int narrow(const Small *req, Small *resp, void *state) {\n"
                                 "    resp->v = req->v; return 0;\n}\n";
    rk_kernel_desc nd = {.handler_source = narrow, .handler_name = "narrow", .message_size = 4, .reply_size = 4,
                         .queue_capacity = 16};
    rk_kernel *k = NULL;
    CHECK_STATUS(rk_kernel_launch(wg, &nd, &k), RK_COMPILE_FAILED);
    CHECK_STR_CONTAINS(rk_last_error(), "8- or 16-bit");

    CHECK_OK(rk_runtime_destroy(cpu));
    CHECK_OK(rk_runtime_destroy(wg));
}

int main(void) {
    rk_context *wg = open_backend("webgpu");
    rk_context *cpu = open_backend("cpu");
    every_source_validated(wg);
    vector_scale(cpu, wg);
    stencil(wg, "examples/kernels/laplacian.c", "laplacian", false);
    stencil(wg, "examples/kernels/heat3d.c", "heat3d", true);
    features_kernel(cpu, wg);
    else_if_tail(cpu, wg);
    side_effects(cpu, wg);
    alias_in_condition(cpu, wg);
    cas_insert(cpu, wg);
    nan_tests(cpu, wg);
    int_builtins(cpu, wg);
    float_builtins(cpu, wg);
    unsigned_atomics(cpu, wg);
    block_sized(cpu, wg);
    CHECK_OK(rk_context_destroy(cpu));
    CHECK_OK(rk_context_destroy(wg));
    handlers();
    printf("transpiled kernels on webgpu: all checks passed\n");
    return 0;
}
