/* The subset of the CUDA driver API that ringkernel uses, declared here so
 * the library builds without CUDA installed. The driver (libcuda.so.1) is
 * loaded with dlopen by rk__cuda_load(); every call goes through
 * rk__cuda.<name>. Values below are the driver API's documented constants. */
#ifndef RK_CUDA_API_H
#define RK_CUDA_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ringkernel/status.h"

typedef int CUresult; /* 0 = CUDA_SUCCESS */
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUgraphNode_st *CUgraphNode;

/* CUDA_KERNEL_NODE_PARAMS_v2 (the layout cuGraphAddKernelNode_v2 and
 * cuGraphExecKernelNodeSetParams_v2 take). */
typedef struct rk__cuda_kernel_node_params {
    CUfunction func;
    unsigned gridDimX, gridDimY, gridDimZ;
    unsigned blockDimX, blockDimY, blockDimZ;
    unsigned sharedMemBytes;
    void **kernelParams;
    void **extra;
    void *kern;   /* CUkernel: used only when func is NULL */
    CUcontext ctx;
} rk__cuda_kernel_node_params;

enum {
    RK_CUDA_SUCCESS = 0,
    RK_CUDA_ERROR_INVALID_VALUE = 1,
    RK_CUDA_ERROR_NOT_READY = 600,
};

/* CUdevice_attribute values */
enum {
    RK_CU_ATTR_MAX_THREADS_PER_BLOCK = 1,
    RK_CU_ATTR_MAX_BLOCK_DIM_X = 2,
    RK_CU_ATTR_MAX_GRID_DIM_X = 5,
    RK_CU_ATTR_MAX_SHARED_MEMORY_PER_BLOCK = 8,
    RK_CU_ATTR_WARP_SIZE = 10,
    RK_CU_ATTR_MULTIPROCESSOR_COUNT = 16,
    RK_CU_ATTR_CAN_MAP_HOST_MEMORY = 19,
    RK_CU_ATTR_MAX_THREADS_PER_MULTIPROCESSOR = 39,
    RK_CU_ATTR_UNIFIED_ADDRESSING = 41,
    RK_CU_ATTR_COMPUTE_CAPABILITY_MAJOR = 75,
    RK_CU_ATTR_COMPUTE_CAPABILITY_MINOR = 76,
    RK_CU_ATTR_HOST_NATIVE_ATOMIC_SUPPORTED = 86,
    RK_CU_ATTR_COOPERATIVE_LAUNCH = 95,
    RK_CU_ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
    RK_CU_ATTR_MEMORY_POOLS_SUPPORTED = 115,
};

enum {
    RK_CU_MEMHOSTALLOC_PORTABLE = 0x01,
    RK_CU_MEMHOSTALLOC_DEVICEMAP = 0x02,
    RK_CU_STREAM_NON_BLOCKING = 0x1,
    RK_CU_EVENT_BLOCKING_SYNC = 0x1,
    RK_CU_EVENT_DISABLE_TIMING = 0x2,
    RK_CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
    RK_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
    RK_CU_JIT_INFO_LOG_BUFFER = 3,
    RK_CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
    RK_CU_JIT_ERROR_LOG_BUFFER = 5,
    RK_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
    RK_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
};

/* X(required, name, exported symbol, parameters). Optional entries may be
 * NULL after loading (older drivers); callers check before use. */
#define RK_CUDA_SYMBOLS(X)                                                                                 \
    X(1, cuInit, "cuInit", (unsigned flags))                                                               \
    X(1, cuDriverGetVersion, "cuDriverGetVersion", (int *version))                                         \
    X(1, cuGetErrorName, "cuGetErrorName", (CUresult error, const char **name))                            \
    X(1, cuGetErrorString, "cuGetErrorString", (CUresult error, const char **text))                        \
    X(1, cuDeviceGetCount, "cuDeviceGetCount", (int *count))                                               \
    X(1, cuDeviceGet, "cuDeviceGet", (CUdevice * device, int ordinal))                                     \
    X(1, cuDeviceGetName, "cuDeviceGetName", (char *name, int len, CUdevice device))                       \
    X(1, cuDeviceGetAttribute, "cuDeviceGetAttribute", (int *value, int attribute, CUdevice device))       \
    X(1, cuDeviceTotalMem, "cuDeviceTotalMem_v2", (size_t * bytes, CUdevice device))                       \
    X(1, cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", (CUcontext * ctx, CUdevice device))         \
    X(1, cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", (CUdevice device))                     \
    X(1, cuCtxSetCurrent, "cuCtxSetCurrent", (CUcontext ctx))                                              \
    X(1, cuCtxGetCurrent, "cuCtxGetCurrent", (CUcontext * ctx))                                            \
    X(1, cuMemAlloc, "cuMemAlloc_v2", (CUdeviceptr * ptr, size_t size))                                    \
    X(1, cuMemFree, "cuMemFree_v2", (CUdeviceptr ptr))                                                     \
    X(0, cuMemAllocAsync, "cuMemAllocAsync", (CUdeviceptr * ptr, size_t size, CUstream stream))            \
    X(0, cuMemFreeAsync, "cuMemFreeAsync", (CUdeviceptr ptr, CUstream stream))                             \
    X(1, cuMemHostAlloc, "cuMemHostAlloc", (void **ptr, size_t size, unsigned flags))                      \
    X(1, cuMemFreeHost, "cuMemFreeHost", (void *ptr))                                                      \
    X(1, cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2",                                        \
      (CUdeviceptr * dptr, void *host, unsigned flags))                                                    \
    X(1, cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2",                                                        \
      (CUdeviceptr dst, const void *src, size_t size, CUstream stream))                                    \
    X(1, cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2",                                                        \
      (void *dst, CUdeviceptr src, size_t size, CUstream stream))                                          \
    X(1, cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2",                                                        \
      (CUdeviceptr dst, CUdeviceptr src, size_t size, CUstream stream))                                    \
    X(1, cuMemsetD8Async, "cuMemsetD8Async", (CUdeviceptr dst, unsigned char value, size_t n, CUstream s)) \
    X(1, cuStreamCreate, "cuStreamCreate", (CUstream * stream, unsigned flags))                            \
    X(1, cuStreamDestroy, "cuStreamDestroy_v2", (CUstream stream))                                         \
    X(1, cuStreamSynchronize, "cuStreamSynchronize", (CUstream stream))                                    \
    X(1, cuStreamQuery, "cuStreamQuery", (CUstream stream))                                                \
    X(1, cuEventCreate, "cuEventCreate", (CUevent * event, unsigned flags))                                \
    X(1, cuEventDestroy, "cuEventDestroy_v2", (CUevent event))                                             \
    X(1, cuEventRecord, "cuEventRecord", (CUevent event, CUstream stream))                                  \
    X(1, cuEventQuery, "cuEventQuery", (CUevent event))                                                    \
    X(1, cuEventSynchronize, "cuEventSynchronize", (CUevent event))                                        \
    X(1, cuStreamWaitEvent, "cuStreamWaitEvent", (CUstream stream, CUevent event, unsigned flags))         \
    X(1, cuModuleLoadDataEx, "cuModuleLoadDataEx",                                                         \
      (CUmodule * module, const void *image, unsigned n, int *options, void **values))                     \
    X(1, cuModuleUnload, "cuModuleUnload", (CUmodule module))                                              \
    X(1, cuModuleGetFunction, "cuModuleGetFunction", (CUfunction * fn, CUmodule module, const char *name)) \
    X(0, cuFuncLoad, "cuFuncLoad", (CUfunction fn))                                                        \
    X(0, cuFuncGetParamInfo, "cuFuncGetParamInfo", (CUfunction fn, size_t index, size_t *offset, size_t *size)) \
    X(0, cuFuncGetParamCount, "cuFuncGetParamCount", (CUfunction fn, size_t *count))                      \
    X(1, cuFuncGetAttribute, "cuFuncGetAttribute", (int *value, int attribute, CUfunction fn))             \
    X(1, cuFuncSetAttribute, "cuFuncSetAttribute", (CUfunction fn, int attribute, int value))              \
    X(1, cuOccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor",      \
      (int *blocks, CUfunction fn, int block_size, size_t dynamic_shared))                                 \
    X(1, cuLaunchKernel, "cuLaunchKernel",                                                                 \
      (CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,        \
       unsigned shared, CUstream stream, void **params, void **extra))                                     \
    X(1, cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel",                                           \
      (CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,        \
       unsigned shared, CUstream stream, void **params))                                                   \
    X(1, cuStreamBeginCapture, "cuStreamBeginCapture_v2", (CUstream stream, int mode))                     \
    X(1, cuStreamEndCapture, "cuStreamEndCapture", (CUstream stream, CUgraph * graph))                     \
    X(1, cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags",                                       \
      (CUgraphExec * exec, CUgraph graph, unsigned long long flags))                                       \
    X(1, cuGraphLaunch, "cuGraphLaunch", (CUgraphExec exec, CUstream stream))                              \
    X(1, cuGraphExecDestroy, "cuGraphExecDestroy", (CUgraphExec exec))                                     \
    X(1, cuGraphDestroy, "cuGraphDestroy", (CUgraph graph))                                                \
    X(0, cuGraphCreate, "cuGraphCreate", (CUgraph * graph, unsigned flags))                                \
    X(0, cuGraphAddKernelNode, "cuGraphAddKernelNode_v2",                                                  \
      (CUgraphNode * node, CUgraph graph, const CUgraphNode *deps, size_t dep_count,                      \
       const rk__cuda_kernel_node_params *params))                                                         \
    X(0, cuGraphExecKernelNodeSetParams, "cuGraphExecKernelNodeSetParams_v2",                              \
      (CUgraphExec exec, CUgraphNode node, const rk__cuda_kernel_node_params *params))

typedef struct rk__cuda_api {
#define RK_CUDA_FIELD_(req, name, symbol, params) CUresult(*name) params;
    RK_CUDA_SYMBOLS(RK_CUDA_FIELD_)
#undef RK_CUDA_FIELD_
} rk__cuda_api;

/* Filled by rk__cuda_load; read-only afterwards. */
extern rk__cuda_api rk__cuda;

/* Loads libcuda.so.1 (or $RK_CUDA_LIBRARY), resolves the symbols and calls
 * cuInit once. RK_OK with *device_count, or RK_BACKEND_UNAVAILABLE with why
 * ("CUDA driver library libcuda.so.1 not found: ...", "cuInit failed:
 * CUDA_ERROR_NO_DEVICE ..."). Safe to call from several threads. */
rk_status rk__cuda_load(uint32_t *device_count, char *reason, size_t reason_size);

/* "CUDA_ERROR_ILLEGAL_ADDRESS" for a result code (never NULL). */
const char *rk__cuda_error_name(CUresult r);

/* Turns a failed driver call into a status with the call and the CUresult
 * name in rk_last_error(). Out-of-memory results map to RK_OUT_OF_MEMORY,
 * faults of a running kernel to RK_DEVICE_FAULT, others to `fallback`. */
rk_status rk__cuda_fail(CUresult r, rk_status fallback, const char *what);

/* True for the results that mean the context is broken by a device fault. */
bool rk__cuda_is_fault(CUresult r);

#endif
