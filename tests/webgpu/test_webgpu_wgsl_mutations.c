/* Every WGSL the emitter writes compiles in Dawn, also for sources it was not
 * written against: the examples, mutated line by line and token by token
 * (deterministically), are transpiled; each result is either refused with a
 * diagnostic or compiled by Dawn. The one rejection allowed is Dawn's
 * uniformity analysis (a barrier moved into divergent code is a wrong GPU
 * program, which the C subset cannot see). */
#include "check.h"
#include "ringkernel/transpile.h"
#include "support/read_file.h"

static const char *const files[] = {
    "tests/webgpu/wgsl_features.c",  "examples/kernels/vector_scale.c", "examples/kernels/laplacian.c",
    "examples/kernels/heat3d.c",     "examples/kernels/poly_handler.c", "examples/handlers/demo_handler.c",
    "tests/transpile/cases/reduce.c",
};

static unsigned rng = 12345;
static unsigned next_random(void) {
    rng = rng * 1103515245u + 12345u;
    return rng >> 8;
}

/* One mutation of the lines: delete one, replace one with another, insert a
 * copy of one after another, or insert a token somewhere. */
static char *mutate(char **lines, int n) {
    static const char *const tokens[] = {"+", "*", "(", ")", "1", "x", ";", "{", "}", "-", "<<", "long ", "(double)", "&", "[0]", "!"};
    size_t cap = 1 << 20, len = 0;
    char *m = malloc(cap);
    int mode = (int)(next_random() % 4), a = (int)(next_random() % (unsigned)n), c = (int)(next_random() % (unsigned)n);
    for (int i = 0; i < n; i++) {
        const char *l = mode == 1 && i == a ? lines[c] : lines[i];
        if (mode == 0 && i == a) continue;
        for (int copy = 0; copy < (mode == 2 && i == a ? 2 : 1); copy++) {
            const char *t = copy ? lines[c] : l;
            size_t k = strlen(t);
            CHECK(len + k + 2 < cap);
            memcpy(m + len, t, k);
            len += k;
            m[len++] = '\n';
        }
    }
    m[len] = '\0';
    if (mode == 3 && len) {
        const char *t = tokens[next_random() % (sizeof tokens / sizeof tokens[0])];
        size_t pos = next_random() % len, k = strlen(t);
        CHECK(len + k + 1 < cap);
        memmove(m + pos + k, m + pos, len - pos + 1);
        memcpy(m + pos, t, k);
    }
    return m;
}

static char *with_ring_stand_ins(const rk_transpile_result *r) {
    const char *wgsl = rk_transpile_output(r, NULL);
    size_t len = strlen(wgsl) + 512 + 160 * rk_transpile_kernel_count(r);
    char *out = malloc(len);
    size_t used = (size_t)snprintf(out, len,
                                   "%s\n@group(0) @binding(0) var<storage, read> rk_in: array<u32>;\n"
                                   "@group(0) @binding(1) var<storage, read_write> rk_out: array<u32>;\n"
                                   "@group(0) @binding(2) var<storage, read_write> rk_state: array<u32>;\n",
                                   wgsl);
    for (size_t i = 0; i < rk_transpile_kernel_count(r); i++) {
        const rk_transpiled_kernel *k = rk_transpile_kernel(r, i);
        if (k->kind == RK_TRANSPILE_HANDLER)
            used += (size_t)snprintf(out + used, len - used,
                                     "@compute @workgroup_size(1) fn rk_check_%s() { _ = rk_handle_%s(1u, 0u); }\n",
                                     k->name, k->name);
    }
    return out;
}

int main(int argc, char **argv) {
    int per_file = argc > 1 ? atoi(argv[1]) : 40;
    const rk_backend *b = NULL;
    uint32_t count = 0;
    CHECK_OK(rk_backend_find("webgpu", &b));
    if (rk_backend_device_count(b, &count) != RK_OK || count == 0)
        RK_SKIP("webgpu backend unavailable: %s", rk_backend_unavailable_reason(b));
    rk_context *ctx = NULL;
    CHECK_OK(rk_context_create(b, 0, &ctx));
    int compiled = 0, refused = 0, uniformity = 0;
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        char *src = rk_test_read_source(files[f]);
        char *lines[4096];
        int n = 0;
        for (char *p = strtok(src, "\n"); p && n < 4096; p = strtok(NULL, "\n")) lines[n++] = p;
        for (int it = 0; it < per_file; it++) {
            char *m = mutate(lines, n);
            /* handler sources use the DSL without including it */
            const rk_transpile_file file = {.name = "mutated.c", .contents = m};
            rk_transpile_desc d = {.source = "#include <ringkernel/dsl.h>\n#include \"mutated.c\"\n",
                                   .path = files[f], .files = &file, .file_count = 1, .target = RK_TARGET_WGSL};
            rk_transpile_result *r = NULL;
            rk_status s = rk_transpile(&d, &r);
            CHECK(r != NULL);
            if (s != RK_OK) {
                CHECK(s == RK_PARSE_ERROR);
                CHECK(rk_transpile_error_count(r) > 0);
                refused++;
            } else {
                char *code = with_ring_stand_ins(r);
                rk_module *mod = NULL;
                s = rk_module_compile(ctx, code, NULL, &mod);
                if (s == RK_OK) {
                    compiled++;
                    CHECK_OK(rk_module_destroy(mod));
                } else if (strstr(rk_last_error(), "uniform control flow")) {
                    uniformity++;
                } else {
                    fprintf(stderr, "Dawn rejected the WGSL of a mutation of %s:\n%s\n--- C ---\n%s\n--- WGSL ---\n%s\n",
                            files[f], rk_last_error(), m, code);
                    return 1;
                }
                free(code);
            }
            rk_transpile_result_destroy(r);
            free(m);
        }
        free(src);
    }
    printf("%d mutations compiled by Dawn, %d refused by the transpiler, %d barriers in divergent code\n", compiled,
           refused, uniformity);
    CHECK_GT(compiled, 0);
    CHECK_OK(rk_context_destroy(ctx));
    return 0;
}
