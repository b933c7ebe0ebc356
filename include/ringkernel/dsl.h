/* The kernel DSL: the functions a ringkernel kernel may call.
 *
 * A kernel written against this header is ordinary C11. Compiled for the CPU
 * backend, each call goes to the CPU executor, which runs every block's
 * threads as fibers so that sync_threads() is a real barrier. Compiled by
 * NVRTC/nvcc (the CUDA backend includes this header too), each call is the
 * CUDA intrinsic. The transpiler maps the same names to CUDA, WGSL and MSL.
 *
 *   RK_KERNEL void vector_scale(float *data, float scale, int n) {
 *       int idx = block_idx_x() * block_dim_x() + thread_idx_x();
 *       if (idx >= n) return;
 *       data[idx] = data[idx] * scale;
 *   }
 *
 * Self-contained on purpose: backends embed it and compile kernels against
 * it without the rest of the library's headers.
 */
#ifndef RINGKERNEL_DSL_H
#define RINGKERNEL_DSL_H

/* Pi, on every target (M_PI is POSIX, not C11; spelled as glibc spells it). */
#define RK_PI 3.14159265358979323846
#define RK_PI_F 3.14159265358979323846f
#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* =========================================================================
 * CUDA (nvcc or NVRTC)
 * ========================================================================= */
#if defined(__CUDACC__)

#if defined(__CUDACC_RTC__)
/* NVRTC has no C library headers: give kernels the fixed-width types. */
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
typedef unsigned long long size_t_rk_;
#define RK_STATIC_ASSERT(c, m) static_assert(c, m)
#else
#include <stdint.h>
#define RK_STATIC_ASSERT(c, m) static_assert(c, m)
#endif

#define RK_DSL_CUDA 1
#define RK_KERNEL extern "C" __global__
#define RK_HANDLER __device__
#define RK_DEVICE __device__ static inline
#define RK_SHARED __shared__
#define RK_RESTRICT __restrict__
#define RK_BLOCK_SIZE(x, y, z) __launch_bounds__((x) * (y) * (z))

/* K2K (ringkernel/channel.h): sends *msg on the handler's output port;
 * RK_EMIT_OK or an RK_EMIT_* code. Defined by the ring kernel template
 * (src/device/cuda/channel.cu); a kernel module of its own cannot call it. */
__device__ int rk__emit(unsigned port, const void *message, unsigned size);
#define rk_emit(port, msg) rk__emit((unsigned)(port), (msg), (unsigned)sizeof *(msg))

__device__ static inline int thread_idx_x(void) { return (int)threadIdx.x; }
__device__ static inline int thread_idx_y(void) { return (int)threadIdx.y; }
__device__ static inline int thread_idx_z(void) { return (int)threadIdx.z; }
__device__ static inline int block_idx_x(void) { return (int)blockIdx.x; }
__device__ static inline int block_idx_y(void) { return (int)blockIdx.y; }
__device__ static inline int block_idx_z(void) { return (int)blockIdx.z; }
__device__ static inline int block_dim_x(void) { return (int)blockDim.x; }
__device__ static inline int block_dim_y(void) { return (int)blockDim.y; }
__device__ static inline int block_dim_z(void) { return (int)blockDim.z; }
__device__ static inline int grid_dim_x(void) { return (int)gridDim.x; }
__device__ static inline int grid_dim_y(void) { return (int)gridDim.y; }
__device__ static inline int grid_dim_z(void) { return (int)gridDim.z; }
__device__ static inline int warp_size(void) { return 32; }
/* Lanes follow the linear thread index, as the hardware forms warps. */
__device__ static inline int lane_id(void) {
    return (int)((threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31u);
}

__device__ static inline void sync_threads(void) { __syncthreads(); }
__device__ static inline void thread_fence(void) { __threadfence(); }
__device__ static inline void thread_fence_block(void) { __threadfence_block(); }
__device__ static inline void *dynamic_shared(void) {
    extern __shared__ unsigned char rk_dynamic_shared_[];
    return rk_dynamic_shared_;
}

__device__ static inline int atomic_add_i32(int *p, int v) { return atomicAdd(p, v); }
__device__ static inline unsigned atomic_add_u32(unsigned *p, unsigned v) { return atomicAdd(p, v); }
__device__ static inline uint64_t atomic_add_u64(uint64_t *p, uint64_t v) {
    return (uint64_t)atomicAdd((unsigned long long *)p, (unsigned long long)v);
}
__device__ static inline float atomic_add_f32(float *p, float v) { return atomicAdd(p, v); }
__device__ static inline int atomic_sub_i32(int *p, int v) { return atomicSub(p, v); }
__device__ static inline int atomic_min_i32(int *p, int v) { return atomicMin(p, v); }
__device__ static inline int atomic_max_i32(int *p, int v) { return atomicMax(p, v); }
__device__ static inline unsigned atomic_and_u32(unsigned *p, unsigned v) { return atomicAnd(p, v); }
__device__ static inline unsigned atomic_or_u32(unsigned *p, unsigned v) { return atomicOr(p, v); }
__device__ static inline unsigned atomic_xor_u32(unsigned *p, unsigned v) { return atomicXor(p, v); }
__device__ static inline int atomic_exch_i32(int *p, int v) { return atomicExch(p, v); }
__device__ static inline int atomic_cas_i32(int *p, int expected, int desired) {
    return atomicCAS(p, expected, desired);
}
__device__ static inline unsigned atomic_cas_u32(unsigned *p, unsigned expected, unsigned desired) {
    return atomicCAS(p, expected, desired);
}
__device__ static inline unsigned atomic_min_u32(unsigned *p, unsigned v) { return atomicMin(p, v); }
__device__ static inline unsigned atomic_max_u32(unsigned *p, unsigned v) { return atomicMax(p, v); }
__device__ static inline unsigned atomic_exch_u32(unsigned *p, unsigned v) { return atomicExch(p, v); }
/* A relaxed 32-bit load: one access the compiler neither caches nor splits. */
__device__ static inline int atomic_load_i32(int *p) { return *(volatile int *)p; }
__device__ static inline unsigned atomic_load_u32(unsigned *p) { return *(volatile unsigned *)p; }

__device__ static inline int abs_i32(int x) { return abs(x); }
__device__ static inline int min_i32(int a, int b) { return min(a, b); }
__device__ static inline int max_i32(int a, int b) { return max(a, b); }
__device__ static inline unsigned min_u32(unsigned a, unsigned b) { return min(a, b); }
__device__ static inline unsigned max_u32(unsigned a, unsigned b) { return max(a, b); }
__device__ static inline int popcount_u32(uint32_t x) { return __popc(x); }
__device__ static inline int clz_u32(uint32_t x) { return __clz((int)x); }
__device__ static inline int ctz_u32(uint32_t x) { return __clz((int)__brev(x)); }
__device__ static inline int ffs_u32(uint32_t x) { return __ffs((int)x); }
__device__ static inline uint32_t float_as_uint(float f) { return __float_as_uint(f); }
__device__ static inline float uint_as_float(uint32_t u) { return __uint_as_float(u); }
__device__ static inline int float_as_int(float f) { return __float_as_int(f); }
__device__ static inline float int_as_float(int i) { return __int_as_float(i); }

__device__ static inline float shfl_f32(float v, int src_lane) { return __shfl_sync(0xffffffffu, v, src_lane); }
__device__ static inline int shfl_i32(int v, int src_lane) { return __shfl_sync(0xffffffffu, v, src_lane); }
__device__ static inline float shfl_down_f32(float v, int delta) { return __shfl_down_sync(0xffffffffu, v, (unsigned)delta); }
__device__ static inline int shfl_down_i32(int v, int delta) { return __shfl_down_sync(0xffffffffu, v, (unsigned)delta); }
__device__ static inline float shfl_xor_f32(float v, int mask) { return __shfl_xor_sync(0xffffffffu, v, mask); }
__device__ static inline int shfl_xor_i32(int v, int mask) { return __shfl_xor_sync(0xffffffffu, v, mask); }
__device__ static inline int warp_any(int pred) { return __any_sync(0xffffffffu, pred); }
__device__ static inline int warp_all(int pred) { return __all_sync(0xffffffffu, pred); }
__device__ static inline unsigned warp_ballot(int pred) { return __ballot_sync(0xffffffffu, pred); }
/* The warp's lanes meet; what each wrote before is visible to the others after. */
__device__ static inline void sync_warp(void) { __syncwarp(); }

/* Grid-wide barrier, for cooperative launches only: one 64-bit word per
 * module, the generation in the upper half and the arrivals in the lower, so
 * one cooperative launch of a module's kernels may run at a time. A block
 * arrives with one atomic add, which also tells it the generation; the last
 * to arrive sets the arrivals back to 0 and starts the next generation with
 * one more add, and the others wait for the generation to change. On an H100
 * a barrier costs about 1.6 us with 132 blocks and 1.0 us with one: trips to
 * L2, not contention, set it. Arrival releases the block's writes (gpu
 * scope); leaving acquires everyone's. */
static __device__ unsigned long long rk_grid_barrier_;
__device__ static inline void grid_sync(void) {
    __syncthreads();
    if (threadIdx.x + threadIdx.y + threadIdx.z == 0) {
        const unsigned long long blocks = (unsigned long long)gridDim.x * gridDim.y * gridDim.z;
        unsigned long long *word = &rk_grid_barrier_, arrived, now;
        asm volatile("atom.acq_rel.gpu.add.u64 %0, [%1], 1;" : "=l"(arrived) : "l"(word) : "memory");
        if ((arrived & 0xffffffffull) == blocks - 1) {
            asm volatile("red.release.gpu.add.u64 [%0], %1;" ::"l"(word), "l"((1ull << 32) - blocks) : "memory");
        } else {
            do {
                asm volatile("ld.acquire.gpu.u64 %0, [%1];" : "=l"(now) : "l"(word) : "memory");
            } while ((now >> 32) == (arrived >> 32));
        }
    }
    __syncthreads();
}

/* System-scope ordering for words shared with the host (rk_buffer_alloc_mapped). */
__device__ static inline uint32_t load_acquire_u32(const uint32_t *p) {
    uint32_t v;
    asm volatile("ld.acquire.sys.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ static inline uint64_t load_acquire_u64(const uint64_t *p) {
    uint64_t v;
    asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ static inline void store_release_u32(uint32_t *p, uint32_t v) {
    asm volatile("st.release.sys.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ static inline void store_release_u64(uint64_t *p, uint64_t v) {
    asm volatile("st.release.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
/* Whole 8-byte words with no ordering: several loads can be in flight at
 * once (an acquire load waits for the one before it). For protocols that
 * tag every word, so that a reader checks each word rather than a flag. */
__device__ static inline uint64_t load_relaxed_u64(const uint64_t *p) {
    uint64_t v;
    asm volatile("ld.relaxed.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ static inline void store_relaxed_u64(uint64_t *p, uint64_t v) {
    asm volatile("st.relaxed.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
/* GPU-scope ordering for words in device memory that only this device's
 * blocks share (a block's progress flag): the same meaning as the system-scope
 * ones above, without the wait for the host's side of the bus that a
 * system-scope release costs. */
__device__ static inline uint64_t load_acquire_gpu_u64(const uint64_t *p) {
    uint64_t v;
    asm volatile("ld.acquire.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ static inline void store_release_gpu_u64(uint64_t *p, uint64_t v) {
    asm volatile("st.release.gpu.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
/* A polling loop's pause: about ns nanoseconds (sm_70 and later). */
__device__ static inline void sleep_ns(unsigned ns) { __nanosleep(ns); }

/* =========================================================================
 * CPU: plain C11, driven by the CPU backend's executor
 * ========================================================================= */
#else

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define RK_DSL_CPU 1
#define RK_STATIC_ASSERT(c, m) _Static_assert(c, m)
#define RK_EXPORT_ __attribute__((visibility("default")))
#define RK_KERNEL RK_EXPORT_
#define RK_HANDLER RK_EXPORT_
#define RK_DEVICE static inline
/* Per-block shared memory. A worker runs one block at a time and all threads
 * of a block on the same OS thread, so thread-local static storage is exactly
 * per-block storage. */
#define RK_SHARED static _Thread_local
#define RK_RESTRICT restrict
/* The block every launch of the kernel uses (CUDA's launch bounds, WGSL's
 * workgroup size). The CPU backend runs any block; it does not check this. */
#define RK_BLOCK_SIZE(x, y, z)

/* Where a CPU "thread" is in the grid. Filled in by the executor. */
typedef struct rk_dsl_thread {
    unsigned thread_idx[3], block_idx[3], block_dim[3], grid_dim[3];
    void *dynamic_shared;
} rk_dsl_thread;

/* What the executor provides. Kernels reach it through rk__dsl_runtime. */
typedef struct rk_dsl_runtime {
    unsigned abi_version; /* RK_DSL_ABI_VERSION */
    rk_dsl_thread *(*self)(void);
    void (*sync_threads)(void);
    /* Warp operations over the 32 lanes of the calling thread's warp.
     * mode: 0 = from lane src, 1 = down by src, 2 = xor with src. */
    uint32_t (*shfl)(uint32_t bits, int src, int mode);
    uint32_t (*ballot)(int pred);
    /* ABI 2: grid-wide barrier (cooperative launches), polling pause. */
    void (*grid_sync)(void);
    void (*sleep_ns)(unsigned ns);
    /* ABI 3: K2K emit (rk_emit). */
    int (*emit)(unsigned port, const void *message, unsigned size);
} rk_dsl_runtime;

#define RK_DSL_ABI_VERSION 3u

/* Defined by the library for kernels compiled into the host program; a
 * module built by the CPU backend (RK_CPU_MODULE) has its own copy that the
 * loader fills in. */
#if defined(RK_CPU_MODULE)
RK_EXPORT_ const rk_dsl_runtime *rk__dsl_runtime = 0;
#else
extern const rk_dsl_runtime *rk__dsl_runtime;
#endif

static inline rk_dsl_thread *rk_dsl_self_(void) { return rk__dsl_runtime->self(); }

static inline int thread_idx_x(void) { return (int)rk_dsl_self_()->thread_idx[0]; }
static inline int thread_idx_y(void) { return (int)rk_dsl_self_()->thread_idx[1]; }
static inline int thread_idx_z(void) { return (int)rk_dsl_self_()->thread_idx[2]; }
static inline int block_idx_x(void) { return (int)rk_dsl_self_()->block_idx[0]; }
static inline int block_idx_y(void) { return (int)rk_dsl_self_()->block_idx[1]; }
static inline int block_idx_z(void) { return (int)rk_dsl_self_()->block_idx[2]; }
static inline int block_dim_x(void) { return (int)rk_dsl_self_()->block_dim[0]; }
static inline int block_dim_y(void) { return (int)rk_dsl_self_()->block_dim[1]; }
static inline int block_dim_z(void) { return (int)rk_dsl_self_()->block_dim[2]; }
static inline int grid_dim_x(void) { return (int)rk_dsl_self_()->grid_dim[0]; }
static inline int grid_dim_y(void) { return (int)rk_dsl_self_()->grid_dim[1]; }
static inline int grid_dim_z(void) { return (int)rk_dsl_self_()->grid_dim[2]; }
static inline int warp_size(void) { return 32; }
static inline int lane_id(void) {
    rk_dsl_thread *t = rk_dsl_self_();
    unsigned linear = t->thread_idx[0] +
                      t->block_dim[0] * (t->thread_idx[1] + t->block_dim[1] * t->thread_idx[2]);
    return (int)(linear & 31u);
}

static inline void sync_threads(void) { rk__dsl_runtime->sync_threads(); }
static inline void thread_fence(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void thread_fence_block(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void *dynamic_shared(void) { return rk_dsl_self_()->dynamic_shared; }

/* Atomics return the old value, as CUDA's do. */
static inline int atomic_add_i32(int *p, int v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
static inline unsigned atomic_add_u32(unsigned *p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
static inline uint64_t atomic_add_u64(uint64_t *p, uint64_t v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
static inline int atomic_sub_i32(int *p, int v) { return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED); }
static inline unsigned atomic_and_u32(unsigned *p, unsigned v) { return __atomic_fetch_and(p, v, __ATOMIC_RELAXED); }
static inline unsigned atomic_or_u32(unsigned *p, unsigned v) { return __atomic_fetch_or(p, v, __ATOMIC_RELAXED); }
static inline unsigned atomic_xor_u32(unsigned *p, unsigned v) { return __atomic_fetch_xor(p, v, __ATOMIC_RELAXED); }
static inline int atomic_exch_i32(int *p, int v) { return __atomic_exchange_n(p, v, __ATOMIC_RELAXED); }
static inline int atomic_cas_i32(int *p, int expected, int desired) {
    __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    return expected;
}
static inline unsigned atomic_cas_u32(unsigned *p, unsigned expected, unsigned desired) {
    __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    return expected;
}
static inline int atomic_min_i32(int *p, int v) {
    int old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v < old && !__atomic_compare_exchange_n(p, &old, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    return old;
}
static inline int atomic_max_i32(int *p, int v) {
    int old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v > old && !__atomic_compare_exchange_n(p, &old, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    return old;
}
static inline unsigned atomic_exch_u32(unsigned *p, unsigned v) { return __atomic_exchange_n(p, v, __ATOMIC_RELAXED); }
static inline unsigned atomic_min_u32(unsigned *p, unsigned v) {
    unsigned old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v < old && !__atomic_compare_exchange_n(p, &old, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    return old;
}
static inline unsigned atomic_max_u32(unsigned *p, unsigned v) {
    unsigned old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v > old && !__atomic_compare_exchange_n(p, &old, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    return old;
}
static inline int atomic_load_i32(int *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
static inline unsigned atomic_load_u32(unsigned *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
static inline float atomic_add_f32(float *p, float v) {
    union { float f; uint32_t u; } old, upd;
    old.u = __atomic_load_n((uint32_t *)(void *)p, __ATOMIC_RELAXED);
    do {
        upd.f = old.f + v;
    } while (!__atomic_compare_exchange_n((uint32_t *)(void *)p, &old.u, upd.u, 1, __ATOMIC_RELAXED,
                                          __ATOMIC_RELAXED));
    return old.f;
}

static inline uint32_t rk_f32_bits_(float f) { union { float f; uint32_t u; } c; c.f = f; return c.u; }
static inline float rk_bits_f32_(uint32_t u) { union { float f; uint32_t u; } c; c.u = u; return c.f; }

/* Integers: no overflow trap (abs_i32(INT_MIN) is INT_MIN, as on the GPUs). */
static inline int abs_i32(int x) { return x < 0 ? (int)(0u - (unsigned)x) : x; }
static inline int min_i32(int a, int b) { return a < b ? a : b; }
static inline int max_i32(int a, int b) { return a > b ? a : b; }
static inline unsigned min_u32(unsigned a, unsigned b) { return a < b ? a : b; }
static inline unsigned max_u32(unsigned a, unsigned b) { return a > b ? a : b; }
/* Bit counts, defined for 0 as CUDA's are: clz/ctz give 32, ffs gives 0. */
static inline int popcount_u32(uint32_t x) { return __builtin_popcount(x); }
static inline int clz_u32(uint32_t x) { return x ? __builtin_clz(x) : 32; }
static inline int ctz_u32(uint32_t x) { return x ? __builtin_ctz(x) : 32; }
static inline int ffs_u32(uint32_t x) { return x ? __builtin_ctz(x) + 1 : 0; }
/* A float's bits and back (CUDA's __float_as_uint and friends). */
static inline uint32_t float_as_uint(float f) { return rk_f32_bits_(f); }
static inline float uint_as_float(uint32_t u) { return rk_bits_f32_(u); }
static inline int float_as_int(float f) { return (int)rk_f32_bits_(f); }
static inline float int_as_float(int i) { return rk_bits_f32_((uint32_t)i); }
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
/* isnan/isinf/isfinite give 0 or 1, as on the GPUs (glibc's isinf gives -1
 * for -inf). */
#undef isnan
#undef isinf
#undef isfinite
#define isnan(x) (__builtin_isnan(x) != 0)
#define isinf(x) (__builtin_isinf(x) != 0)
#define isfinite(x) (__builtin_isfinite(x) != 0)
static inline float shfl_f32(float v, int src_lane) { return rk_bits_f32_(rk__dsl_runtime->shfl(rk_f32_bits_(v), src_lane, 0)); }
static inline int shfl_i32(int v, int src_lane) { return (int)rk__dsl_runtime->shfl((uint32_t)v, src_lane, 0); }
static inline float shfl_down_f32(float v, int delta) { return rk_bits_f32_(rk__dsl_runtime->shfl(rk_f32_bits_(v), delta, 1)); }
static inline int shfl_down_i32(int v, int delta) { return (int)rk__dsl_runtime->shfl((uint32_t)v, delta, 1); }
static inline float shfl_xor_f32(float v, int mask) { return rk_bits_f32_(rk__dsl_runtime->shfl(rk_f32_bits_(v), mask, 2)); }
static inline int shfl_xor_i32(int v, int mask) { return (int)rk__dsl_runtime->shfl((uint32_t)v, mask, 2); }
static inline unsigned warp_ballot(int pred) { return rk__dsl_runtime->ballot(pred); }
static inline int warp_any(int pred) { return rk__dsl_runtime->ballot(pred) != 0u; }
static inline int warp_all(int pred) { return rk__dsl_runtime->ballot(!pred) == 0u; }
/* All lanes run on one OS thread: meeting is enough for visibility. */
static inline void sync_warp(void) { (void)rk__dsl_runtime->ballot(1); }

/* Grid-wide barrier, for cooperative launches only (each block then runs on
 * its own worker thread). */
static inline void grid_sync(void) { rk__dsl_runtime->grid_sync(); }

/* Ordering for words shared with the host (rk_buffer_alloc_mapped). */
static inline uint32_t load_acquire_u32(const uint32_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline uint64_t load_acquire_u64(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline void store_release_u32(uint32_t *p, uint32_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static inline void store_release_u64(uint64_t *p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static inline uint64_t load_relaxed_u64(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
static inline void store_relaxed_u64(uint64_t *p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
/* One scope on the CPU: the same as the acquire/release words above. */
static inline uint64_t load_acquire_gpu_u64(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline void store_release_gpu_u64(uint64_t *p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
/* A polling loop's pause. On the CPU it yields the core to other threads
 * (the host may be waiting for it), whatever ns is. */
static inline void sleep_ns(unsigned ns) { rk__dsl_runtime->sleep_ns(ns); }

/* K2K (ringkernel/channel.h): sends *msg on the handler's output port;
 * returns RK_EMIT_OK or an RK_EMIT_* code for the handler to act on. */
#define rk_emit(port, msg) rk__dsl_runtime->emit((unsigned)(port), (msg), (unsigned)sizeof *(msg))

#endif /* CPU */

/* What rk_emit returns (the same values as ringkernel/channel.h's). */
#define RK_EMIT_OK 0
#define RK_EMIT_FULL (-7)
#define RK_EMIT_NO_PORT (-12)
#define RK_EMIT_BAD_SIZE (-1)
#define RK_EMIT_CLOSED (-5)
#define RK_EMIT_FAULTED (-15)

#endif /* RINGKERNEL_DSL_H */
