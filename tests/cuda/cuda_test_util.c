#include "cuda_test_util.h"

#include <stdlib.h>

#include "check.h"
#include "cuda/nvrtc.h"

rk_runtime *cuda_test_runtime(void) {
    const rk_backend *cuda = NULL;
    CHECK_OK(rk_backend_find("cuda", &cuda));
    uint32_t count = 0;
    if (rk_backend_device_count(cuda, &count) != RK_OK || count == 0)
        RK_SKIP("no CUDA device: %s", rk_backend_unavailable_reason(cuda));
    rk_runtime *rt = NULL;
    rk_runtime_desc desc = {.backend = "cuda:0"};
    CHECK_OK(rk_runtime_create(&desc, &rt));
    return rt;
}

uint64_t cuda_test_env_u64(const char *name, uint64_t fallback) {
    const char *v = getenv(name);
    if (!v || !*v) return fallback;
    return strtoull(v, NULL, 0);
}

void cuda_test_require_nvrtc(void) {
    char reason[512];
    if (rk__nvrtc_probe(reason, sizeof reason) != RK_OK) RK_SKIP("%s", reason);
}
