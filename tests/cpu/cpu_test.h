/* Helpers shared by the CPU backend's tests. */
#ifndef RK_CPU_TEST_H
#define RK_CPU_TEST_H

#include "check.h"

/* Under TSan every fiber is a TSan thread (about 1 MB, and each switch costs
 * microseconds), so barrier-heavy tests run smaller there. */
#if defined(__SANITIZE_THREAD__)
#define RK_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RK_TEST_TSAN 1
#endif
#endif
#ifndef RK_TEST_TSAN
#define RK_TEST_TSAN 0
#endif

static inline rk_context *cpu_context(void) {
    const rk_backend *backend = NULL;
    rk_context *ctx = NULL;
    CHECK_OK(rk_backend_find("cpu", &backend));
    CHECK_OK(rk_context_create(backend, 0, &ctx));
    return ctx;
}

static inline rk_launch_desc launch_1d(uint32_t grid, uint32_t block, const rk_arg *args, size_t count) {
    rk_launch_desc d = {
        .grid = RK_DIM3(grid, 1, 1),
        .block = RK_DIM3(block, 1, 1),
        .args = args,
        .arg_count = count,
    };
    return d;
}

/* A host kernel as rk_host_kernel's generic function pointer. */
#define HOST_KERNEL(f) {#f, (void (*)(void))(f)}

#endif
