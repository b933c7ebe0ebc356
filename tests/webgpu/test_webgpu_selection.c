/* Automatic selection and WebGPU: the spec's order (CUDA, Metal, WebGPU,
 * CPU) among real devices, a software adapter (lavapipe) passed over for the
 * native CPU backend, and still usable when named. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

int main(void) {
    unsetenv("RK_BACKEND");
    const rk_backend *webgpu = NULL;
    CHECK_OK(rk_backend_find("webgpu", &webgpu));
    uint32_t count = 0;
    if (rk_backend_device_count(webgpu, &count) != RK_OK || count == 0)
        RK_SKIP("webgpu unavailable: %s", rk_backend_unavailable_reason(webgpu));
    rk_device_info info;
    CHECK_OK(rk_backend_device_info(webgpu, 0, &info));

    /* What should win: the first backend in order with a real device. */
    const char *expected = NULL;
    for (size_t i = 0; i < rk_backend_count() && !expected; i++) {
        const rk_backend *b = rk_backend_at(i);
        rk_device_info d;
        uint32_t n = 0;
        if (rk_backend_device_count(b, &n) == RK_OK && n > 0 && rk_backend_device_info(b, 0, &d) == RK_OK &&
            !d.software)
            expected = rk_backend_name(b);
    }
    CHECK(expected != NULL);
    if (info.software) CHECK(strcmp(expected, "webgpu") != 0);

    const rk_backend *chosen = NULL;
    uint32_t device = 99;
    CHECK_OK(rk_select_device(NULL, &chosen, &device));
    CHECK(strcmp(rk_backend_name(chosen), expected) == 0);
    CHECK_EQ(device, 0);

    /* Named, the software adapter is used. */
    CHECK_OK(rk_select_device("webgpu", &chosen, &device));
    CHECK(chosen == webgpu);
    setenv("RK_BACKEND", "webgpu", 1);
    CHECK_OK(rk_select_device("auto", &chosen, &device));
    CHECK(chosen == webgpu);
    printf("webgpu adapter '%s' (%s): automatic selection picks %s\n", info.name,
           info.software ? "software" : "hardware", expected);
    return 0;
}
