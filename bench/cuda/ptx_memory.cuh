/* The PTX the bench/cuda programs time: the global timer and relaxed loads
 * and stores at a stated scope, as the library's DSL emits them
 * (include/ringkernel/dsl.h), for standalone nvcc programs that cannot
 * include it. */
#ifndef RK_BENCH_PTX_MEMORY_CUH
#define RK_BENCH_PTX_MEMORY_CUH

#include <cstdint>

__device__ __forceinline__ uint64_t now_ns() {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
__device__ __forceinline__ uint64_t load_sys(const volatile uint64_t *p) {
    uint64_t v;
    asm volatile("ld.relaxed.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ uint64_t load_gpu(const uint64_t *p) {
    uint64_t v;
    asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void store_sys(volatile uint64_t *p, uint64_t v) {
    asm volatile("st.relaxed.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

#endif
