/* Loads the CUDA driver library once and resolves the declared subset. A
 * missing library or a failing cuInit makes the backend unavailable with the
 * reason; nothing here can crash a machine without CUDA. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend_impl.h"
#include "cuda/cuda_api.h"

rk__cuda_api rk__cuda;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static rk_status load_status = RK_BACKEND_UNAVAILABLE;
static uint32_t load_count;
static char load_reason[512];

static bool resolve(void *lib) {
    rk__cuda_api a;
    memset(&a, 0, sizeof a);
#define RK_CUDA_RESOLVE_(req, name, symbol, params)                                             \
    *(void **)(&a.name) = dlsym(lib, symbol);                                                   \
    if (!a.name && (req)) {                                                                     \
        snprintf(load_reason, sizeof load_reason,                                               \
                 "the CUDA driver library lacks %s (driver too old for this library)", symbol); \
        return false;                                                                           \
    }
    RK_CUDA_SYMBOLS(RK_CUDA_RESOLVE_)
#undef RK_CUDA_RESOLVE_
    rk__cuda = a;
    return true;
}

static void load(void) {
    const char *override = getenv("RK_CUDA_LIBRARY");
    const char *path = override && *override ? override : "libcuda.so.1";
    /* A spinning persistent kernel can deadlock lazy module loading (facts/h100.md):
     * ask for eager loading unless the application chose. Read by cuInit. */
    setenv("CUDA_MODULE_LOADING", "EAGER", 0);
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        snprintf(load_reason, sizeof load_reason, "CUDA driver library %s not found (%s)", path,
                 why ? why : "dlopen failed");
        if (!override) lib = dlopen("libcuda.so", RTLD_NOW | RTLD_LOCAL);
        if (!lib) return;
    }
    if (!resolve(lib)) {
        dlclose(lib);
        return;
    }
    CUresult r = rk__cuda.cuInit(0);
    if (r != RK_CUDA_SUCCESS) {
        snprintf(load_reason, sizeof load_reason, "cuInit failed: %s", rk__cuda_error_name(r));
        return; /* keep the library loaded: unloading a half-initialised driver is unsafe */
    }
    int count = 0;
    r = rk__cuda.cuDeviceGetCount(&count);
    if (r != RK_CUDA_SUCCESS) {
        snprintf(load_reason, sizeof load_reason, "cuDeviceGetCount failed: %s", rk__cuda_error_name(r));
        return;
    }
    load_count = count > 0 ? (uint32_t)count : 0;
    if (load_count == 0) snprintf(load_reason, sizeof load_reason, "the CUDA driver reports no device");
    load_status = RK_OK;
}

rk_status rk__cuda_load(uint32_t *device_count, char *reason, size_t reason_size) {
    pthread_once(&load_once, load);
    if (device_count) *device_count = load_status == RK_OK ? load_count : 0;
    if (reason && reason_size) snprintf(reason, reason_size, "%s", load_reason);
    return load_status;
}

const char *rk__cuda_error_name(CUresult r) {
    const char *name = NULL;
    if (rk__cuda.cuGetErrorName && rk__cuda.cuGetErrorName(r, &name) == RK_CUDA_SUCCESS && name) return name;
    static _Thread_local char unknown[32];
    snprintf(unknown, sizeof unknown, "CUresult %d", r);
    return unknown;
}

bool rk__cuda_is_fault(CUresult r) {
    switch (r) {
    case 214: /* ECC_UNCORRECTABLE */
    case 700: /* ILLEGAL_ADDRESS */
    case 702: /* LAUNCH_TIMEOUT */
    case 709: /* CONTEXT_IS_DESTROYED */
    case 710: /* ASSERT */
    case 714: /* HARDWARE_STACK_ERROR */
    case 715: /* ILLEGAL_INSTRUCTION */
    case 716: /* MISALIGNED_ADDRESS */
    case 717: /* INVALID_ADDRESS_SPACE */
    case 718: /* INVALID_PC */
    case 719: /* LAUNCH_FAILED */
    case 721: /* TENSOR_MEMORY_LEAK */
        return true;
    default:
        return false;
    }
}

rk_status rk__cuda_fail(CUresult r, rk_status fallback, const char *what) {
    rk_status s = fallback;
    if (r == 2 /* OUT_OF_MEMORY */) s = RK_OUT_OF_MEMORY;
    else if (rk__cuda_is_fault(r)) s = RK_DEVICE_FAULT;
    const char *text = NULL;
    if (rk__cuda.cuGetErrorString) rk__cuda.cuGetErrorString(r, &text);
    return rk__fail(s, "%s failed: %s (%s)", what, rk__cuda_error_name(r), text ? text : "no description");
}
