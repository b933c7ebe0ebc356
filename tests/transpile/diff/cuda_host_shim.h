/* CUDA C++ from the transpiler, compiled as host C++ (g++) and run by the CPU
 * backend's executor: the differential tests' "CUDA output on the CPU".
 *
 * The emitted kernels are `extern "C" __global__` functions; built into a
 * shared object with this header force-included, they are launched through
 * rk_module_from_host_kernels, so every block runs on the CPU backend's
 * fibers: __syncthreads() is the executor's real block barrier, warp
 * operations its lane exchange, and __shared__ variables are thread_local
 * (a worker runs one block at a time and all of a block's threads on one OS
 * thread, the same rule as RK_SHARED on the CPU). The thread and block
 * indices come from the executor through the module's own rk__dsl_runtime
 * pointer, which the loader sets to the library's table (dsl.h, RK_CPU_MODULE).
 *
 * Not mapped (a kernel using them does not compile here): the inline PTX of
 * the load/store ordering builtins, and grid_sync's grid barrier. */
#ifndef RK_CUDA_HOST_SHIM_H
#define RK_CUDA_HOST_SHIM_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define RK_CPU_MODULE 1
extern "C" {
#include "ringkernel/dsl.h"
}

/* ---- qualifiers ----------------------------------------------------------------- */
#define __global__ __attribute__((visibility("default")))
#define __device__
#define __host__
#define __constant__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
/* Block scope: thread_local implies static, so one copy per OS thread = per block. */
#define __shared__ thread_local

/* extern __shared__ unsigned char rk__dynamic_smem[] (dynamic shared memory) resolves here. */
enum { RK_SHIM_DYNAMIC_SHARED = 48 * 1024 };
alignas(16) thread_local unsigned char rk__dynamic_smem[RK_SHIM_DYNAMIC_SHARED];

/* ---- where a thread is -------------------------------------------------------------- */
struct rk_shim_uint3 {
    unsigned x, y, z;
};
static inline rk_shim_uint3 rk_shim_u3_(const unsigned *v) { return rk_shim_uint3{v[0], v[1], v[2]}; }
#define threadIdx rk_shim_u3_(rk_dsl_self_()->thread_idx)
#define blockIdx rk_shim_u3_(rk_dsl_self_()->block_idx)
#define blockDim rk_shim_u3_(rk_dsl_self_()->block_dim)
#define gridDim rk_shim_u3_(rk_dsl_self_()->grid_dim)
#define warpSize 32

/* ---- barriers and fences --------------------------------------------------------------- */
static inline void __syncthreads(void) { rk__dsl_runtime->sync_threads(); }
static inline void __syncwarp(unsigned mask = 0xffffffffu) { (void)mask, (void)rk__dsl_runtime->ballot(1); }
static inline void __threadfence(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_block(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __nanosleep(unsigned ns) { rk__dsl_runtime->sleep_ns(ns); }

/* ---- atomics: CUDA's overloads, returning the old value ---------------------------------- */
#define RK_SHIM_FETCH_OP(name, op, T) \
    static inline T name(T *p, T v) { return __atomic_fetch_##op(p, v, __ATOMIC_RELAXED); }
RK_SHIM_FETCH_OP(atomicAdd, add, int)
RK_SHIM_FETCH_OP(atomicAdd, add, unsigned)
RK_SHIM_FETCH_OP(atomicAdd, add, unsigned long long)
RK_SHIM_FETCH_OP(atomicSub, sub, int)
RK_SHIM_FETCH_OP(atomicSub, sub, unsigned)
RK_SHIM_FETCH_OP(atomicAnd, and, int)
RK_SHIM_FETCH_OP(atomicAnd, and, unsigned)
RK_SHIM_FETCH_OP(atomicAnd, and, unsigned long long)
RK_SHIM_FETCH_OP(atomicOr, or, int)
RK_SHIM_FETCH_OP(atomicOr, or, unsigned)
RK_SHIM_FETCH_OP(atomicOr, or, unsigned long long)
RK_SHIM_FETCH_OP(atomicXor, xor, int)
RK_SHIM_FETCH_OP(atomicXor, xor, unsigned)
RK_SHIM_FETCH_OP(atomicXor, xor, unsigned long long)
#undef RK_SHIM_FETCH_OP

#define RK_SHIM_EXCH_CAS(T)                                                                        \
    static inline T atomicExch(T *p, T v) { return __atomic_exchange_n(p, v, __ATOMIC_RELAXED); } \
    static inline T atomicCAS(T *p, T expected, T desired) {                                     \
        __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED); \
        return expected;                                                                         \
    }
RK_SHIM_EXCH_CAS(int)
RK_SHIM_EXCH_CAS(unsigned)
RK_SHIM_EXCH_CAS(unsigned long long)
RK_SHIM_EXCH_CAS(unsigned short)
#undef RK_SHIM_EXCH_CAS

#define RK_SHIM_MIN_MAX(name, T, better)                                                               \
    static inline T name(T *p, T v) {                                                                  \
        T old = __atomic_load_n(p, __ATOMIC_RELAXED);                                                  \
        while (better && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) { \
        }                                                                                              \
        return old;                                                                                    \
    }
RK_SHIM_MIN_MAX(atomicMin, int, v < old)
RK_SHIM_MIN_MAX(atomicMin, unsigned, v < old)
RK_SHIM_MIN_MAX(atomicMin, long long, v < old)
RK_SHIM_MIN_MAX(atomicMin, unsigned long long, v < old)
RK_SHIM_MIN_MAX(atomicMax, int, v > old)
RK_SHIM_MIN_MAX(atomicMax, unsigned, v > old)
RK_SHIM_MIN_MAX(atomicMax, long long, v > old)
RK_SHIM_MIN_MAX(atomicMax, unsigned long long, v > old)
#undef RK_SHIM_MIN_MAX

/* Floating-point adds as a compare-exchange loop on the bits, like dsl.h's CPU atomic_add_f32. */
template <typename F, typename U>
static inline F rk_shim_atomic_fadd_(F *p, F v) {
    U old = __atomic_load_n((U *)(void *)p, __ATOMIC_RELAXED), upd;
    F f;
    do {
        memcpy(&f, &old, sizeof f);
        F n = f + v;
        memcpy(&upd, &n, sizeof upd);
    } while (!__atomic_compare_exchange_n((U *)(void *)p, &old, upd, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    return f;
}
static inline float atomicAdd(float *p, float v) { return rk_shim_atomic_fadd_<float, uint32_t>(p, v); }
static inline double atomicAdd(double *p, double v) { return rk_shim_atomic_fadd_<double, uint64_t>(p, v); }
static inline float atomicExch(float *p, float v) {
    uint32_t bits, old;
    memcpy(&bits, &v, sizeof bits);
    old = __atomic_exchange_n((uint32_t *)(void *)p, bits, __ATOMIC_RELAXED);
    float f;
    memcpy(&f, &old, sizeof f);
    return f;
}

/* ---- warp operations: the executor's lane exchange ------------------------------------------ */
template <typename T>
static inline T rk_shim_shfl_(T v, int src, int mode) {
    static_assert(sizeof(T) == 4, "warp shuffles move 32-bit values here");
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    bits = rk__dsl_runtime->shfl(bits, src, mode);
    memcpy(&v, &bits, sizeof v);
    return v;
}
template <typename T>
static inline T __shfl_sync(unsigned, T v, int src, int = 32) { return rk_shim_shfl_(v, src, 0); }
template <typename T>
static inline T __shfl_down_sync(unsigned, T v, unsigned delta, int = 32) { return rk_shim_shfl_(v, (int)delta, 1); }
template <typename T>
static inline T __shfl_xor_sync(unsigned, T v, int mask, int = 32) { return rk_shim_shfl_(v, mask, 2); }
static inline unsigned __ballot_sync(unsigned, int pred) { return rk__dsl_runtime->ballot(pred); }
static inline int __any_sync(unsigned, int pred) { return rk__dsl_runtime->ballot(pred) != 0u; }
static inline int __all_sync(unsigned, int pred) { return rk__dsl_runtime->ballot(!pred) == 0u; }

/* ---- device intrinsics: bits and integer helpers ----------------------------------------- */
template <typename To, typename From>
static inline To rk_shim_bits_(From v) {
    static_assert(sizeof(To) == sizeof(From), "same size");
    To t;
    memcpy(&t, &v, sizeof t);
    return t;
}
static inline float __int_as_float(int v) { return rk_shim_bits_<float>(v); }
static inline float __uint_as_float(unsigned v) { return rk_shim_bits_<float>(v); }
static inline int __float_as_int(float v) { return rk_shim_bits_<int>(v); }
static inline unsigned __float_as_uint(float v) { return rk_shim_bits_<unsigned>(v); }
static inline double __longlong_as_double(long long v) { return rk_shim_bits_<double>(v); }
static inline long long __double_as_longlong(double v) { return rk_shim_bits_<long long>(v); }
static inline int __popc(unsigned v) { return __builtin_popcount(v); }
static inline int __popcll(unsigned long long v) { return __builtin_popcountll(v); }
static inline int __clz(int v) { return v ? __builtin_clz((unsigned)v) : 32; }
static inline int __clzll(long long v) { return v ? __builtin_clzll((unsigned long long)v) : 64; }
static inline int __ffs(int v) { return __builtin_ffs(v); }
static inline int __ffsll(long long v) { return __builtin_ffsll(v); }
static inline unsigned __brev(unsigned v) {
    v = ((v >> 1) & 0x55555555u) | ((v & 0x55555555u) << 1);
    v = ((v >> 2) & 0x33333333u) | ((v & 0x33333333u) << 2);
    v = ((v >> 4) & 0x0f0f0f0fu) | ((v & 0x0f0f0f0fu) << 4);
    return __builtin_bswap32(v);
}
static inline double rsqrt(double v) { return 1.0 / sqrt(v); }
#define RK_SHIM_MIN_MAX_FN(T)                                 \
    static inline T min(T a, T b) { return a < b ? a : b; } \
    static inline T max(T a, T b) { return a > b ? a : b; }
RK_SHIM_MIN_MAX_FN(int)
RK_SHIM_MIN_MAX_FN(unsigned)
RK_SHIM_MIN_MAX_FN(long long)
RK_SHIM_MIN_MAX_FN(unsigned long long)
#undef RK_SHIM_MIN_MAX_FN

#endif
