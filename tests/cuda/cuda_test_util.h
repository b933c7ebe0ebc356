/* Helpers shared by the CUDA tests: opening a CUDA runtime or skipping. */
#ifndef RK_CUDA_TEST_UTIL_H
#define RK_CUDA_TEST_UTIL_H

#include <stdint.h>

#include "ringkernel/ringkernel.h"

/* A runtime on cuda:0, or exit 77 with the reason when there is no GPU. */
rk_runtime *cuda_test_runtime(void);

/* An environment variable as a number, or fallback when unset. */
uint64_t cuda_test_env_u64(const char *name, uint64_t fallback);

/* Skips (exit 77) unless NVRTC can be loaded. */
void cuda_test_require_nvrtc(void);

#endif
