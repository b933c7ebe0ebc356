/* The Metal backend is built on every platform: off Apple platforms it is
 * registered, has no device and says why ("needs macOS"); automatic
 * selection keeps the spec's order CUDA, Metal, WebGPU, CPU; and the
 * transpiler's MSL target answers. On macOS this test only checks the order
 * (the backend itself has never been run: docs/metal.md). */
#include <string.h>

#include "check.h"
#include "ringkernel/device.h"
#include "ringkernel/ringkernel.h"

int main(void) {
    const rk_backend *metal = NULL;
    CHECK_STATUS(rk_backend_find("metal", &metal), RK_OK);
    /* The registry's order: Metal after CUDA, before WebGPU and the CPU. */
    static const char *const order[] = {"cuda", "metal", "webgpu", "cpu"};
    int last = -1;
    for (size_t i = 0; i < rk_backend_count(); i++) {
        const char *name = rk_backend_name(rk_backend_at(i));
        int rank = -1;
        for (int j = 0; j < 4; j++)
            if (strcmp(order[j], name) == 0) rank = j;
        CHECK(rank > last);
        last = rank;
    }
#ifndef __APPLE__
    uint32_t count = 7;
    rk_status s = rk_backend_device_count(metal, &count);
    CHECK(s == RK_OK || s == RK_BACKEND_UNAVAILABLE);
    CHECK_EQ(count, 0);
    CHECK_STR_CONTAINS(rk_backend_unavailable_reason(metal), "needs macOS");
    rk_context *ctx = NULL;
    CHECK(rk_context_create(metal, 0, &ctx) != RK_OK);
    CHECK(ctx == NULL);
#endif
    return 0;
}
