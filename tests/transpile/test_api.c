/* rk_transpile's contract: argument checks, what a result holds after
 * success and failure, entry-point information per kind, the stencil
 * configuration, limits on hostile input, determinism and use from several
 * threads at once. */
#include <pthread.h>

#include "cases.h"
#include "check.h"

static const char VECTOR_SCALE[] =
    "#include <ringkernel/dsl.h>\n"
    "RK_KERNEL void vector_scale(float *data, float scale, int n) {\n"
    "    int idx = block_idx_x() * block_dim_x() + thread_idx_x();\n"
    "    if (idx >= n) return;\n"
    "    data[idx] = data[idx] * scale;\n"
    "}\n";

static const char LAPLACIAN[] =
    "#include <ringkernel/dsl_stencil.h>\n"
    "RK_KERNEL void laplacian(const float *input, float *output, rk_grid_pos p) {\n"
    "    output[rk_pos_idx(p)] = rk_north(p, input) + rk_south(p, input) + rk_east(p, input)\n"
    "                          + rk_west(p, input) - 4.0f * input[rk_pos_idx(p)];\n"
    "}\n";

static rk_transpile_result *transpile(const char *source, rk_transpile_kind kind, uint32_t tx, uint32_t ty,
                                      uint32_t tz, uint32_t halo, rk_status want) {
    rk_transpile_desc d = {.source = source, .path = "api.c", .no_file_system = true, .kind = kind};
    d.stencil.tile[0] = tx;
    d.stencil.tile[1] = ty;
    d.stencil.tile[2] = tz;
    d.stencil.halo = halo;
    rk_transpile_result *r = NULL;
    rk_status s = rk_transpile(&d, &r);
    if (s != want) {
        fprintf(stderr, "status %s, expected %s: %s\n", rk_status_name(s), rk_status_name(want), rk_last_error());
        exit(1);
    }
    CHECK(r != NULL);
    return r;
}

static void arguments(void) {
    rk_transpile_result *r = (rk_transpile_result *)1;
    rk_transpile_desc d = {.source = VECTOR_SCALE};
    CHECK_STATUS(rk_transpile(NULL, &r), RK_NULL_ARGUMENT);
    CHECK(r == NULL);
    CHECK_STATUS(rk_transpile(&d, NULL), RK_NULL_ARGUMENT);
    rk_transpile_desc empty = {0};
    CHECK_STATUS(rk_transpile(&empty, &r), RK_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(rk_last_error(), "give the source text or a path");
    rk_transpile_desc counts = {.source = VECTOR_SCALE, .include_dir_count = 2};
    CHECK_STATUS(rk_transpile(&counts, &r), RK_NULL_ARGUMENT);
    rk_transpile_desc bad_target = {.source = VECTOR_SCALE, .target = (rk_transpile_target)42};
    CHECK_STATUS(rk_transpile(&bad_target, &r), RK_INVALID_ARGUMENT);
    rk_transpile_desc bad_kind = {.source = VECTOR_SCALE, .kind = (rk_transpile_kind)-3};
    CHECK_STATUS(rk_transpile(&bad_kind, &r), RK_INVALID_ARGUMENT);
    /* Every target either has an emitter or says it has none yet. */
    for (rk_transpile_target t = RK_TARGET_CUDA; t <= RK_TARGET_MSL; t++) {
        rk_transpile_desc target = {.source = VECTOR_SCALE, .target = t, .no_file_system = true};
        rk_status s = rk_transpile(&target, &r);
        if (s == RK_UNSUPPORTED) {
            CHECK(r == NULL);
            CHECK_STR_CONTAINS(rk_last_error(), "emitter is not built yet");
            CHECK_STR_CONTAINS(rk_last_error(), rk_transpile_target_name(t));
        } else {
            CHECK_STATUS(s, RK_OK);
            CHECK_GT(strlen(rk_transpile_output(r, NULL)), 0);
            rk_transpile_result_destroy(r);
        }
    }

    /* Accessors accept NULL and out-of-range indices. */
    CHECK(strcmp(rk_transpile_output(NULL, NULL), "") == 0);
    CHECK(strcmp(rk_transpile_diagnostics_text(NULL), "") == 0);
    CHECK_EQ(rk_transpile_diagnostic_count(NULL), 0);
    CHECK(rk_transpile_diagnostic(NULL, 0) == NULL);
    CHECK(rk_transpile_kernel(NULL, 0) == NULL);
    rk_transpile_result_destroy(NULL);

    CHECK(strcmp(rk_transpile_kind_name(RK_TRANSPILE_STENCIL), "stencil") == 0);
    CHECK(strcmp(rk_transpile_target_name(RK_TARGET_DEFAULT), "cuda") == 0);
}

static void results(void) {
    /* Success: output, no errors, the entry point, and the size out-param. */
    rk_transpile_result *r = transpile(VECTOR_SCALE, RK_TRANSPILE_AUTO, 0, 0, 0, 0, RK_OK);
    size_t size = 0;
    const char *out = rk_transpile_output(r, &size);
    CHECK_EQ(size, strlen(out));
    CHECK_STR_CONTAINS(out, "extern \"C\" __global__ void vector_scale(float *data, float scale, int n) {");
    CHECK_EQ(rk_transpile_error_count(r), 0);
    CHECK_EQ(rk_transpile_diagnostic_count(r), 0);
    CHECK(strcmp(rk_transpile_diagnostics_text(r), "") == 0);
    CHECK_EQ(rk_transpile_kernel_count(r), 1);
    const rk_transpiled_kernel *k = rk_transpile_kernel(r, 0);
    CHECK(strcmp(k->name, "vector_scale") == 0);
    CHECK_EQ(k->kind, RK_TRANSPILE_GLOBAL);
    CHECK_EQ(k->dims, 0);
    CHECK(rk_transpile_kernel(r, 1) == NULL);
    rk_transpile_result_destroy(r);

    /* Failure: no output, every diagnostic, and a copy that outlives the source. */
    char *source = strdup("#include <ringkernel/dsl.h>\nRK_KERNEL void k(int *d) { d[0] = x; d[1] = y; }\n");
    rk_transpile_desc d = {.source = source, .path = "copy.c", .no_file_system = true};
    CHECK_STATUS(rk_transpile(&d, &r), RK_PARSE_ERROR);
    free(source);
    CHECK(strcmp(rk_transpile_output(r, &size), "") == 0);
    CHECK_EQ(size, 0);
    CHECK_EQ(rk_transpile_error_count(r), 2);
    const rk_diagnostic *diag = rk_transpile_diagnostic(r, 1);
    CHECK(diag != NULL);
    CHECK(strcmp(diag->file, "copy.c") == 0);
    CHECK_EQ(diag->line, 2);
    CHECK_EQ(diag->column, 45);
    CHECK_EQ(diag->severity, RK_DIAG_ERROR);
    CHECK(strcmp(diag->message, "use of undeclared identifier 'y'") == 0);
    CHECK_STR_CONTAINS(rk_transpile_diagnostics_text(r), "  RK_KERNEL void k(int *d) { d[0] = x; d[1] = y; }\n");
    CHECK_STR_CONTAINS(rk_transpile_diagnostics_text(r), "2 errors generated.");
    CHECK_STR_CONTAINS(rk_last_error(), "2 errors in copy.c");
    rk_transpile_result_destroy(r);

    /* A file that cannot be read: RK_IO_ERROR, with the reason as a diagnostic. */
    rk_transpile_desc missing = {.path = "/nonexistent/dir/kernel.c"};
    CHECK_STATUS(rk_transpile(&missing, &r), RK_IO_ERROR);
    CHECK(r != NULL);
    CHECK_STR_CONTAINS(rk_transpile_diagnostics_text(r), "cannot read '/nonexistent/dir/kernel.c': No such file or directory");
    rk_transpile_result_destroy(r);

    /* Nothing to emit is an error, not an empty success. */
    r = transpile("static int helper(int x) { return x; }\n", RK_TRANSPILE_AUTO, 0, 0, 0, 0, RK_PARSE_ERROR);
    CHECK_STR_CONTAINS(rk_transpile_diagnostics_text(r), "no kernel in the source");
    rk_transpile_result_destroy(r);
}

static void kinds(void) {
    /* Several kernels in one source. */
    char two[2048];
    snprintf(two, sizeof two, "%s%s", VECTOR_SCALE,
             "RK_KERNEL void fill(float *d, float v, int n) { int i = thread_idx_x(); if (i < n) d[i] = v; }\n");
    rk_transpile_result *r = transpile(two, RK_TRANSPILE_GLOBAL, 0, 0, 0, 0, RK_OK);
    CHECK_EQ(rk_transpile_kernel_count(r), 2);
    CHECK(strcmp(rk_transpile_kernel(r, 1)->name, "fill") == 0);
    rk_transpile_result_destroy(r);

    /* Stencil defaults: 2-D, 16x16, halo from the largest offset. */
    r = transpile(LAPLACIAN, RK_TRANSPILE_AUTO, 0, 0, 0, 0, RK_OK);
    const rk_transpiled_kernel *k = rk_transpile_kernel(r, 0);
    CHECK_EQ(k->kind, RK_TRANSPILE_STENCIL);
    CHECK_EQ(k->dims, 2);
    CHECK_EQ(k->tile[0], 16);
    CHECK_EQ(k->tile[1], 16);
    CHECK_EQ(k->tile[2], 1);
    CHECK_EQ(k->halo, 1);
    CHECK_STR_CONTAINS(rk_transpile_output(r, NULL), "laplacian(const float *input, float *output, int rk__nx, int rk__ny)");
    rk_transpile_result_destroy(r);

    /* A configured tile and halo; a depth makes it 3-D. */
    r = transpile(LAPLACIAN, RK_TRANSPILE_STENCIL, 32, 8, 0, 3, RK_OK);
    k = rk_transpile_kernel(r, 0);
    CHECK_EQ(k->tile[0], 32);
    CHECK_EQ(k->tile[1], 8);
    CHECK_EQ(k->halo, 3);
    CHECK_STR_CONTAINS(rk_transpile_output(r, NULL), "__shared__ float rk__tile_input[14][38];");
    rk_transpile_result_destroy(r);
    r = transpile(LAPLACIAN, RK_TRANSPILE_STENCIL, 8, 8, 2, 0, RK_OK);
    CHECK_EQ(rk_transpile_kernel(r, 0)->dims, 3);
    CHECK_STR_CONTAINS(rk_transpile_output(r, NULL), "int rk__nx, int rk__ny, int rk__nz)");
    rk_transpile_result_destroy(r);

    /* Tiles a GPU cannot run are refused. */
    r = transpile(LAPLACIAN, RK_TRANSPILE_STENCIL, 64, 64, 0, 0, RK_PARSE_ERROR);
    CHECK_STR_CONTAINS(rk_transpile_diagnostics_text(r), "a 64x64x1 tile is 4096 threads per block; the limit is 1024");
    rk_transpile_result_destroy(r);
    r = transpile(LAPLACIAN, RK_TRANSPILE_STENCIL, 32, 32, 0, 64, RK_PARSE_ERROR);
    CHECK_STR_CONTAINS(rk_transpile_diagnostics_text(r), "bytes of shared memory; the limit is 49152");
    rk_transpile_result_destroy(r);

    /* Handler sizes follow the host's layout. */
    r = transpile("#include <ringkernel/dsl.h>\n"
                  "typedef struct Req { char tag; double value; short s; } Req;\n"
                  "typedef struct Resp { int status; float out[3]; } Resp;\n"
                  "RK_HANDLER int h(const Req *req, Resp *resp, void *state) {\n"
                  "    resp->status = req->tag; resp->out[0] = (float)req->value; return 0;\n}\n",
                  RK_TRANSPILE_HANDLER, 0, 0, 0, 0, RK_OK);
    k = rk_transpile_kernel(r, 0);
    CHECK_EQ(k->kind, RK_TRANSPILE_HANDLER);
    CHECK_EQ(k->request_size, 24);
    CHECK_EQ(k->reply_size, 16);
    CHECK_EQ(k->state_size, 0);
    CHECK_STR_CONTAINS(rk_transpile_output(r, NULL), "static_assert(sizeof(Req) == 24,");
    CHECK_STR_CONTAINS(rk_transpile_output(r, NULL), "__device__ int h(const Req *req, Resp *resp, void *state) {");
    rk_transpile_result_destroy(r);
}

/* Hostile input gets an error, not a crash or a stack overflow. */
static void limits(void) {
    size_t n = 20000;
    char *deep = malloc(n * 2 + 256);
    strcpy(deep, "#include <ringkernel/dsl.h>\nRK_KERNEL void k(int *d) { d[0] = ");
    size_t len = strlen(deep);
    for (size_t i = 0; i < n; i++) deep[len++] = '(';
    deep[len++] = '1';
    for (size_t i = 0; i < n; i++) deep[len++] = ')';
    strcpy(deep + len, "; }\n");
    rk_transpile_result *r = transpile(deep, RK_TRANSPILE_AUTO, 0, 0, 0, 0, RK_PARSE_ERROR);
    CHECK_STR_CONTAINS(rk_transpile_diagnostics_text(r), "nested too deeply");
    rk_transpile_result_destroy(r);

    /* A long flat chain builds a deep tree: also refused, not recursed into. */
    strcpy(deep, "#include <ringkernel/dsl.h>\nRK_KERNEL void k(int *d) { d[0] = 1");
    len = strlen(deep);
    for (size_t i = 0; i < 5000; i++) {
        memcpy(deep + len, "+1", 2);
        len += 2;
    }
    strcpy(deep + len, "; }\n");
    r = transpile(deep, RK_TRANSPILE_AUTO, 0, 0, 0, 0, RK_PARSE_ERROR);
    CHECK_STR_CONTAINS(rk_transpile_diagnostics_text(r), "expression is too deeply nested");
    rk_transpile_result_destroy(r);
    free(deep);

    /* A chain within the limit is fine. */
    char ok[4096] = "#include <ringkernel/dsl.h>\nRK_KERNEL void k(int *d) { d[0] = d[1]";
    for (int i = 0; i < 300; i++) strcat(ok, "+d[1]");
    strcat(ok, "; }\n");
    r = transpile(ok, RK_TRANSPILE_AUTO, 0, 0, 0, 0, RK_OK);
    rk_transpile_result_destroy(r);
}

typedef struct worker {
    pthread_t thread;
    const char *expected;
    int mismatches;
} worker;

static void *transpile_repeatedly(void *arg) {
    worker *w = arg;
    for (int i = 0; i < 40; i++) {
        rk_transpile_desc d = {.source = i % 2 ? LAPLACIAN : "#include <ringkernel/dsl.h>\nRK_KERNEL void k(int *d) { d[0] = x; }\n",
                               .path = "api.c", .no_file_system = true};
        rk_transpile_result *r = NULL;
        rk_status s = rk_transpile(&d, &r);
        if (i % 2 && (s != RK_OK || strcmp(rk_transpile_output(r, NULL), w->expected) != 0)) w->mismatches++;
        if (!(i % 2) && s != RK_PARSE_ERROR) w->mismatches++;
        rk_transpile_result_destroy(r);
    }
    return NULL;
}

/* Calls share no state: the same source gives the same bytes, on any thread. */
static void threads(void) {
    rk_transpile_result *first = transpile(LAPLACIAN, RK_TRANSPILE_AUTO, 0, 0, 0, 0, RK_OK);
    rk_transpile_result *second = transpile(LAPLACIAN, RK_TRANSPILE_AUTO, 0, 0, 0, 0, RK_OK);
    CHECK(strcmp(rk_transpile_output(first, NULL), rk_transpile_output(second, NULL)) == 0);
    rk_transpile_result_destroy(second);
    worker workers[4];
    for (int i = 0; i < 4; i++) {
        workers[i] = (worker){.expected = rk_transpile_output(first, NULL)};
        CHECK(pthread_create(&workers[i].thread, NULL, transpile_repeatedly, &workers[i]) == 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(workers[i].thread, NULL);
        CHECK_EQ(workers[i].mismatches, 0);
    }
    rk_transpile_result_destroy(first);
}

int main(void) {
    arguments();
    results();
    kinds();
    limits();
    threads();
    printf("transpile API checks passed\n");
    return 0;
}
