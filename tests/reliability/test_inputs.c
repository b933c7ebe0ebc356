/* Inputs that used to hang, mislead or stick, one per test case (argv[1]):
 * transpiler includes of a FIFO, /dev/zero and a directory, a NUL byte in
 * source, rk_last_error() after successful calls, the state_size bound, and
 * a CPU compile that includes <ringkernel/dsl_stencil.h> with no -I. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "ringkernel/device.h"
#include "ringkernel/transpile.h"

static char work[64];

/* Transpiles text from work/main.c; the status, with the diagnostics in *diags (malloc'ed). */
static rk_status transpile_file(const char *text, size_t size, char **diags) {
    char path[128];
    snprintf(path, sizeof path, "%s/main.c", work);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    CHECK_EQ(fwrite(text, 1, size, f), size);
    CHECK_EQ(fclose(f), 0);
    rk_transpile_desc d = {.path = path, .target = RK_TARGET_CUDA};
    rk_transpile_result *r = NULL;
    rk_status s = rk_transpile(&d, &r);
    CHECK(r != NULL);
    *diags = strdup(rk_transpile_diagnostics_text(r));
    printf("%s: %s\n%s", path, rk_status_name(s), *diags);
    rk_transpile_result_destroy(r);
    return s;
}

static void expect_not_regular(const char *include_path) {
    char text[256], *diags = NULL;
    int n = snprintf(text, sizeof text, "#include \"%s\"\nRK_KERNEL void k(float *x) { x[0] = 1.0f; }\n", include_path);
    alarm(10); /* the old code blocked here forever on a FIFO */
    CHECK_STATUS(transpile_file(text, (size_t)n, &diags), RK_IO_ERROR);
    alarm(0);
    CHECK_STR_CONTAINS(diags, "not a regular file");
    CHECK_STR_CONTAINS(diags, "main.c:1:2"); /* at the #include */
    free(diags);
}

static void case_fifo_include(void) {
    char fifo[128];
    snprintf(fifo, sizeof fifo, "%s/pipe", work);
    CHECK_EQ(mkfifo(fifo, 0600), 0);
    expect_not_regular(fifo);
}

static void case_dev_zero_include(void) { expect_not_regular("/dev/zero"); }

static void case_directory_include(void) { expect_not_regular(work); }

static void case_nul_byte(void) {
    static const char text[] = "RK_KERNEL void k(float *x) {\n    x[0] = 1.0f;\n  \0 }\n";
    char *diags = NULL;
    CHECK_STATUS(transpile_file(text, sizeof text - 1, &diags), RK_PARSE_ERROR);
    CHECK_STR_CONTAINS(diags, "main.c:3:3: error: a NUL byte");
    free(diags);
}

static int add_handler(const void *request, void *reply, void *state) {
    (void)state;
    const int *in = request;
    ((int *)reply)[0] = in[0] + in[1];
    return 0;
}

#define CHECK_NO_ERROR_TEXT() CHECK_EQ(strlen(rk_last_error()), 0)

/* A failing call, then a successful one of a representative set: the text is "". */
static void case_last_error_cleared(void) {
    const rk_backend *b = NULL;
    CHECK_STATUS(rk_backend_find("no-such-backend", &b), RK_UNKNOWN_BACKEND);
    CHECK_GT(strlen(rk_last_error()), 0);
    CHECK_OK(rk_backend_find("cpu", &b));
    CHECK_NO_ERROR_TEXT();

    rk_runtime *rt = NULL;
    rk_runtime_desc bad = {.backend = "no-such-backend"};
    CHECK(rk_runtime_create(&bad, &rt) != RK_OK);
    rk_runtime_desc cpu = {.backend = "cpu"};
    CHECK_OK(rk_runtime_create(&cpu, &rt));
    CHECK_NO_ERROR_TEXT();

    rk_kernel_desc kd = {.handler = add_handler, .message_size = 8, .reply_size = 4, .queue_capacity = 64};
    rk_kernel_desc wrong = kd;
    wrong.queue_capacity = 3;
    rk_kernel *k = NULL;
    CHECK_STATUS(rk_kernel_launch(rt, &wrong, &k), RK_BAD_CAPACITY);
    CHECK_OK(rk_kernel_launch(rt, &kd, &k));
    CHECK_NO_ERROR_TEXT();
    CHECK_STATUS(rk_kernel_activate(NULL), RK_NULL_ARGUMENT);
    CHECK_OK(rk_kernel_activate(k));
    CHECK_NO_ERROR_TEXT();

    int msg[2] = {40, 2}, big[8] = {0}, reply = 0;
    CHECK_STATUS(rk_kernel_send(k, big, sizeof big, RK_WAIT_FOREVER, NULL), RK_MESSAGE_TOO_LARGE);
    CHECK_OK(rk_kernel_send(k, msg, sizeof msg, RK_WAIT_FOREVER, NULL));
    CHECK_NO_ERROR_TEXT();
    CHECK_STATUS(rk_kernel_receive(k, NULL, sizeof reply, NULL, RK_WAIT_FOREVER), RK_NULL_ARGUMENT);
    CHECK_OK(rk_kernel_receive(k, &reply, sizeof reply, NULL, RK_WAIT_FOREVER));
    CHECK_NO_ERROR_TEXT();
    CHECK_EQ(reply, 42);
    rk_kernel_stats stats;
    CHECK_STATUS(rk_kernel_stats_get(k, NULL), RK_NULL_ARGUMENT);
    CHECK_OK(rk_kernel_stats_get(k, &stats));
    CHECK_NO_ERROR_TEXT();

    rk_context *ctx = rk_runtime_context(rt);
    rk_module *m = NULL;
    CHECK_STATUS(rk_module_compile(ctx, "RK_KERNEL void broken(int *o) { o[0] = ; }\n", NULL, &m), RK_COMPILE_FAILED);
    CHECK_OK(rk_module_compile(ctx, "RK_KERNEL void fine(int *o) { o[0] = 1; }\n", NULL, &m));
    CHECK_NO_ERROR_TEXT();
    rk_buffer *buf = NULL;
    CHECK_STATUS(rk_buffer_alloc(ctx, 16, NULL), RK_NULL_ARGUMENT);
    CHECK_OK(rk_buffer_alloc(ctx, 16, &buf));
    CHECK_NO_ERROR_TEXT();
    CHECK_OK(rk_buffer_free(buf));
    CHECK_OK(rk_module_destroy(m));

    rk_transpile_result *r = NULL;
    CHECK_STATUS(rk_transpile(NULL, &r), RK_NULL_ARGUMENT);
    rk_transpile_desc td = {.source = "#include <ringkernel/dsl.h>\nRK_KERNEL void k(float *x) { x[0] = 1.0f; }\n", .target = RK_TARGET_CUDA};
    CHECK_OK(rk_transpile(&td, &r));
    CHECK_NO_ERROR_TEXT();
    rk_transpile_result_destroy(r);

    CHECK_STATUS(rk_kernel_terminate(NULL, RK_WAIT_FOREVER), RK_NULL_ARGUMENT);
    CHECK_OK(rk_kernel_terminate(k, RK_WAIT_FOREVER));
    CHECK_NO_ERROR_TEXT();
    CHECK_OK(rk_kernel_destroy(k));
    CHECK_OK(rk_runtime_destroy(rt));
    CHECK_NO_ERROR_TEXT();
}

/* state_size has a documented upper bound, refused with a message naming it. */
static void case_state_size_bound(void) {
    rk_runtime *rt = NULL;
    rk_runtime_desc cpu = {.backend = "cpu"};
    CHECK_OK(rk_runtime_create(&cpu, &rt));
    rk_kernel_desc kd = {.handler = add_handler, .message_size = 8, .reply_size = 4, .queue_capacity = 64,
                         .state_size = RK_MAX_STATE_SIZE + 1};
    rk_kernel *k = NULL;
    CHECK_STATUS(rk_kernel_launch(rt, &kd, &k), RK_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(rk_last_error(), "state_size");
    kd.state_size = UINT32_MAX;
    CHECK_STATUS(rk_kernel_launch(rt, &kd, &k), RK_INVALID_ARGUMENT);
    kd.state_size = 4096;
    CHECK_OK(rk_kernel_launch(rt, &kd, &k));
    CHECK_OK(rk_kernel_terminate(k, RK_WAIT_FOREVER));
    CHECK_OK(rk_kernel_destroy(k));
    CHECK_OK(rk_runtime_destroy(rt));
}

/* The CPU compile finds the project's headers with no include dir (issue 21). */
static void case_stencil_header(void) {
    static const char src[] = "#include <ringkernel/dsl_stencil.h>\n"
                              "RK_KERNEL void twice(const float *in, float *out, rk_grid_pos p) {\n"
                              "    out[rk_pos_idx(p)] = rk_east(p, in) + in[rk_pos_idx(p)];\n"
                              "}\n"
                              "RK_KERNEL void run(const float *in, float *out, int n) {\n"
                              "    rk_stencil_for_each(p, n, 1, 1) twice(in, out, p);\n"
                              "}\n";
    rk_runtime *rt = NULL;
    rk_runtime_desc cpu = {.backend = "cpu"};
    CHECK_OK(rk_runtime_create(&cpu, &rt));
    rk_context *ctx = rk_runtime_context(rt);
    rk_module *m = NULL;
    rk_function *fn = NULL;
    CHECK_OK(rk_module_compile(ctx, src, NULL, &m));
    CHECK_OK(rk_module_get_function(m, "run", &fn));
    float in[3] = {1, 2, 4}, out[3] = {0};
    rk_buffer *bin = NULL, *bout = NULL;
    CHECK_OK(rk_buffer_alloc(ctx, sizeof in, &bin));
    CHECK_OK(rk_buffer_alloc(ctx, sizeof out, &bout));
    CHECK_OK(rk_copy_to_device(ctx, bin, 0, in, sizeof in, NULL));
    rk_arg args[] = {RK_ARG_BUF(bin), RK_ARG_BUF(bout), RK_ARG_INT(3)};
    rk_launch_desc d = {.grid = RK_DIM3(1, 1, 1), .block = RK_DIM3(1, 1, 1), .args = args, .arg_count = 3};
    CHECK_OK(rk_launch(fn, &d));
    CHECK_OK(rk_copy_to_host(ctx, out, bout, 0, sizeof out, NULL));
    CHECK_OK(rk_context_synchronize(ctx));
    CHECK_FLOAT_NEAR(out[0], 3.0f, 0.0);
    CHECK_FLOAT_NEAR(out[1], 6.0f, 0.0);
    CHECK_FLOAT_NEAR(out[2], 8.0f, 0.0); /* the east edge reads itself */
    CHECK_OK(rk_buffer_free(bin));
    CHECK_OK(rk_buffer_free(bout));
    CHECK_OK(rk_module_destroy(m));
    CHECK_OK(rk_runtime_destroy(rt));
}

static const struct {
    const char *name;
    void (*run)(void);
} cases[] = {
    {"fifo-include", case_fifo_include},       {"dev-zero-include", case_dev_zero_include},
    {"directory-include", case_directory_include}, {"nul-byte", case_nul_byte},
    {"last-error-cleared", case_last_error_cleared}, {"state-size-bound", case_state_size_bound},
    {"stencil-header", case_stencil_header},
};

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s CASE\n", argv[0]);
        return 2;
    }
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (strcmp(cases[i].name, argv[1]) != 0) continue;
        snprintf(work, sizeof work, "/tmp/rk-inputs-XXXXXX");
        CHECK(mkdtemp(work) != NULL);
        cases[i].run();
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", work);
        (void)!system(cmd);
        printf("%s: ok\n", argv[1]);
        return 0;
    }
    fprintf(stderr, "%s: unknown case '%s'\n", argv[0], argv[1]);
    return 2;
}
