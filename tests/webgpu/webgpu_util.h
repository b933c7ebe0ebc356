/* Shared by the WebGPU tests: open the WebGPU device or skip (exit 77). */
#ifndef RK_TEST_WEBGPU_UTIL_H
#define RK_TEST_WEBGPU_UTIL_H

#include "check.h"

static inline rk_context *webgpu_open_or_skip(void) {
    const rk_backend *b = NULL;
    uint32_t count = 0;
    CHECK_OK(rk_backend_find("webgpu", &b));
    if (rk_backend_device_count(b, &count) != RK_OK || count == 0)
        RK_SKIP("webgpu backend unavailable: %s", rk_backend_unavailable_reason(b));
    rk_context *ctx = NULL;
    CHECK_OK(rk_context_create(b, 0, &ctx));
    return ctx;
}

#endif
