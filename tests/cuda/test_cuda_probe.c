/* The CUDA backend is registered first and, without a driver, reports zero
 * devices and why, rather than failing or crashing. */
#include <string.h>

#include "check.h"

int main(void) {
    CHECK(rk_backend_count() >= 2);
    CHECK(strcmp(rk_backend_name(rk_backend_at(0)), "cuda") == 0);
    const rk_backend *cuda = NULL;
    CHECK_OK(rk_backend_find("cuda", &cuda));
    uint32_t count = 99;
    rk_status s = rk_backend_device_count(cuda, &count);
    const char *reason = rk_backend_unavailable_reason(cuda);
    if (s != RK_OK) {
        CHECK_EQ(s, RK_BACKEND_UNAVAILABLE);
        CHECK_EQ(count, 0);
        CHECK(reason[0] != '\0');
        CHECK_STR_CONTAINS(rk_last_error(), reason);
        /* Naming the backend explicitly gives the same reason. */
        const rk_backend *b = NULL;
        uint32_t d = 0;
        CHECK_STATUS(rk_select_device("cuda", &b, &d), RK_BACKEND_UNAVAILABLE);
        CHECK_STR_CONTAINS(rk_last_error(), reason);
        fprintf(stderr, "cuda unavailable here: %s\n", reason);
        return 0;
    }
    if (count == 0) {
        CHECK(reason[0] != '\0');
        return 0;
    }
    CHECK_STR_CONTAINS(reason, "");
    rk_device_info info;
    CHECK_OK(rk_backend_device_info(cuda, 0, &info));
    CHECK(strcmp(info.backend, "cuda") == 0);
    CHECK(info.name[0] != '\0');
    CHECK_GE(info.compute_major, 3);
    CHECK_GT(info.total_memory, 0);
    CHECK_GT(info.multiprocessors, 0);
    CHECK_EQ(info.warp_size, 32);
    CHECK_GE(info.max_threads_per_block, 256);
    CHECK_GE(info.max_shared_memory_per_block, 48 * 1024);
    CHECK_STR_CONTAINS(info.architecture, "sm_");
    CHECK_STR_CONTAINS(info.driver, "CUDA ");
    CHECK_STATUS(rk_backend_device_info(cuda, count, &info), RK_NO_DEVICE);
    printf("cuda:0 %s, %s, %s, %u SMs, %.1f GiB, cooperative %d, mapped %d\n", info.name, info.architecture,
           info.driver, info.multiprocessors, info.total_memory / 1073741824.0, info.cooperative_launch,
           info.host_mapped_memory);
    return 0;
}
