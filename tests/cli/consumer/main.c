/* Uses an installed ringkernel: opens the CPU backend and copies a buffer
 * through it. Exit 0 when everything worked. */
#include <stdio.h>
#include <string.h>

#include <ringkernel/ringkernel.h>

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
    rk_runtime_destroy(rt);
    if (s != RK_OK || strcmp(in, out) != 0) {
        fprintf(stderr, "copy round trip failed: %s\n", rk_status_name(s));
        return 1;
    }
    printf("consumer: ringkernel %s, backend %s works\n", rk_version(), desc.backend);
    return 0;
}
