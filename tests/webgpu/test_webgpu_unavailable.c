/* Without a usable webgpu.h library, or with only Dawn's Null adapter (no
 * Vulkan driver), the backend is unavailable with the reason, never a crash,
 * and selection moves on. An empty LIBRARY means the usual search (skipped
 * when Dawn is not installed). */
#include <stdlib.h>

#include "check.h"

int main(int argc, char **argv) {
    /* argv[1]: what RK_WEBGPU_LIB names; argv[2]: text the reason must hold */
    if (argc != 3) {
        fprintf(stderr, "usage: %s LIBRARY EXPECTED-REASON\n", argv[0]);
        return 2;
    }
    setenv("RK_WEBGPU_LIB", argv[1], 1);
    const rk_backend *b = NULL;
    uint32_t count = 7;
    CHECK_OK(rk_backend_find("webgpu", &b));
    rk_status s = rk_backend_device_count(b, &count);
    if (!argv[1][0] && strstr(rk_backend_unavailable_reason(b), "no webgpu.h library found"))
        RK_SKIP("Dawn is not installed: %s", rk_backend_unavailable_reason(b));
    CHECK_STATUS(s, RK_BACKEND_UNAVAILABLE);
    CHECK_EQ(count, 0);
    CHECK_STR_CONTAINS(rk_last_error(), argv[2]);
    CHECK_STR_CONTAINS(rk_backend_unavailable_reason(b), argv[2]);
    printf("webgpu unavailable: %s\n", rk_backend_unavailable_reason(b));
    /* Asking for it by name says why; automatic selection skips it. */
    const rk_backend *chosen = NULL;
    uint32_t device = 0;
    CHECK_STATUS(rk_select_device("webgpu", &chosen, &device), RK_BACKEND_UNAVAILABLE);
    CHECK_STR_CONTAINS(rk_last_error(), argv[2]);
    unsetenv("RK_BACKEND");
    CHECK_OK(rk_select_device(NULL, &chosen, &device));
    CHECK(chosen != b);
    return 0;
}
