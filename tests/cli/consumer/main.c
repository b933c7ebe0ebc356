/* Uses an installed ringkernel: opens the CPU backend, copies a buffer
 * through it, and compiles and runs a stencil kernel that includes
 * <ringkernel/dsl_stencil.h> with no include directory given (the CPU
 * compile finds the project's headers wherever the library is).
 * Exit 0 when everything worked. */
#include <stdio.h>
#include <string.h>

#include <ringkernel/device.h>
#include <ringkernel/ringkernel.h>

static const char stencil_source[] =
    "#include <ringkernel/dsl_stencil.h>\n"
    "RK_KERNEL void laplacian(const float *in, float *out, rk_grid_pos p) {\n"
    "    out[rk_pos_idx(p)] = rk_north(p, in) + rk_south(p, in) + rk_east(p, in) + rk_west(p, in)\n"
    "                       - 4.0f * in[rk_pos_idx(p)];\n"
    "}\n"
    "RK_KERNEL void run_laplacian(const float *in, float *out, int nx, int ny) {\n"
    "    rk_stencil_for_each(p, nx, ny, 1) laplacian(in, out, p);\n"
    "}\n";

/* A 4 x 3 grid with one hot cell: the Laplacian is -4 there, 1 beside it. */
static rk_status run_stencil(rk_context *ctx) {
    enum { NX = 4, NY = 3 };
    float in[NX * NY] = {0}, out[NX * NY] = {0};
    in[1 * NX + 1] = 1.0f;
    rk_module *m = NULL;
    rk_function *fn = NULL;
    rk_buffer *bin = NULL, *bout = NULL;
    rk_status s = rk_module_compile(ctx, stencil_source, NULL, &m);
    if (s == RK_OK) s = rk_module_get_function(m, "run_laplacian", &fn);
    if (s == RK_OK) s = rk_buffer_alloc(ctx, sizeof in, &bin);
    if (s == RK_OK) s = rk_buffer_alloc(ctx, sizeof out, &bout);
    if (s == RK_OK) s = rk_copy_to_device(ctx, bin, 0, in, sizeof in, NULL);
    if (s == RK_OK) {
        rk_arg args[] = {RK_ARG_BUF(bin), RK_ARG_BUF(bout), RK_ARG_INT(NX), RK_ARG_INT(NY)};
        rk_launch_desc d = {.grid = RK_DIM3(1, 1, 1), .block = RK_DIM3(1, 1, 1), .args = args, .arg_count = 4};
        s = rk_launch(fn, &d);
    }
    if (s == RK_OK) s = rk_copy_to_host(ctx, out, bout, 0, sizeof out, NULL);
    if (s == RK_OK) s = rk_context_synchronize(ctx);
    if (s != RK_OK) fprintf(stderr, "stencil kernel: %s: %s\n", rk_status_name(s), rk_last_error());
    else if (out[1 * NX + 1] != -4.0f || out[1 * NX + 2] != 1.0f || out[0 * NX + 1] != 1.0f || out[2 * NX + 3] != 0.0f) {
        fprintf(stderr, "stencil kernel: wrong values %g %g %g %g\n", (double)out[NX + 1], (double)out[NX + 2],
                (double)out[1], (double)out[2 * NX + 3]);
        s = RK_INTERNAL;
    }
    if (bin) rk_buffer_free(bin);
    if (bout) rk_buffer_free(bout);
    if (m) rk_module_destroy(m);
    return s;
}

#ifdef RK_CONSUMER_HANDLER
extern const char consumer_echo_source[]; /* rk_embed, installed with the package */

/* The handler embedded and the same handler as a file: sizes from its types. */
static rk_status run_echo(rk_runtime *rt, bool from_file) {
    rk_kernel_desc d = {.name = "echo", .handler_name = "echo", .queue_capacity = 16};
    if (from_file)
        d.handler_file = RK_CONSUMER_HANDLER;
    else
        d.handler_source = consumer_echo_source;
    rk_kernel *k = NULL;
    rk_status s = rk_kernel_launch(rt, &d, &k);
    if (s == RK_OK) s = rk_kernel_activate(k);
    uint32_t req = 41, reply = 0;
    if (s == RK_OK) s = rk_kernel_call(k, &req, sizeof req, &reply, sizeof reply, NULL, 10ull * 1000000000u);
    if (k) rk_kernel_destroy(k);
    if (s != RK_OK) fprintf(stderr, "echo kernel: %s: %s\n", rk_status_name(s), rk_last_error());
    else if (reply != 42) {
        fprintf(stderr, "echo kernel: reply %u, expected 42\n", reply);
        s = RK_INTERNAL;
    }
    return s;
}
#endif

int main(void) {
    rk_runtime *rt = NULL;
    rk_runtime_desc desc = {.backend = "cpu"};
    rk_status s = rk_runtime_create(&desc, &rt);
    if (s != RK_OK) {
        fprintf(stderr, "rk_runtime_create: %s: %s\n", rk_status_name(s), rk_last_error());
        return 1;
    }
    rk_context *ctx = rk_runtime_context(rt);
    rk_buffer *buf = NULL;
    char in[16] = "ringkernel", out[16] = "";
    s = rk_buffer_alloc(ctx, sizeof in, &buf);
    if (s == RK_OK) s = rk_copy_to_device(ctx, buf, 0, in, sizeof in, NULL);
    if (s == RK_OK) s = rk_copy_to_host(ctx, out, buf, 0, sizeof out, NULL);
    if (s == RK_OK) s = rk_context_synchronize(ctx);
    if (buf) rk_buffer_free(buf);
    if (s != RK_OK || strcmp(in, out) != 0) {
        fprintf(stderr, "copy round trip failed: %s\n", rk_status_name(s));
        rk_runtime_destroy(rt);
        return 1;
    }
    s = run_stencil(ctx);
#ifdef RK_CONSUMER_HANDLER
    if (s == RK_OK) s = run_echo(rt, false);
    if (s == RK_OK) s = run_echo(rt, true);
    if (s == RK_OK) printf("consumer: a handler embedded with rk_embed and one from handler_file ran\n");
#endif
    rk_runtime_destroy(rt);
    if (s != RK_OK) return 1;
    printf("consumer: ringkernel %s, backend %s works, stencil kernel compiled from the installed library\n",
           rk_version(), desc.backend);
    return 0;
}
