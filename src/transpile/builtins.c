/* The builtin function table (from builtins.def), the names of host
 * library functions and headers, and the CUDA spellings of DSL functions, so
 * that a call to printf, #include <stdlib.h> or threadIdx.x gets a message
 * that says what to write instead. */
#include <stdlib.h>
#include <string.h>

#include "tp.h"

const tp_builtin rk__tp_builtins[TP_B_COUNT] = {
#define TP_BUILTIN_(id, name_, ret_, flags_, nargs_, a0, a1, a2, a3, a4, dx_, dy_, dz_)                  \
    [TP_B_##id] = {.name = name_, .ret = BT_##ret_, .nargs = nargs_,                                     \
                   .args = {BT_##a0, BT_##a1, BT_##a2, BT_##a3, BT_##a4}, .flags = flags_, .dx = dx_, \
                   .dy = dy_, .dz = dz_},
#include "builtins.def"
#undef TP_BUILTIN_
};

const tp_builtin *rk__tp_find_builtin(const char *name, int len, tp_builtin_id *id) {
    /* Linear, but only on identifiers that no scope declares: a few per kernel. */
    for (int i = 0; i < TP_B_COUNT; i++) {
        const char *n = rk__tp_builtins[i].name;
        if (n[0] == name[0] && (int)strlen(n) == len && memcmp(n, name, (size_t)len) == 0) {
            if (id) *id = (tp_builtin_id)i;
            return &rk__tp_builtins[i];
        }
    }
    return NULL;
}

static int compare_names(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorted for bsearch. */
static const char *const host_functions[] = {
    "abort", "aligned_alloc", "atexit", "atof", "atoi", "atol", "calloc", "clock", "exit", "fclose",
    "fflush", "fgets", "fopen", "fprintf", "fputs", "fread", "free", "fscanf", "fseek", "fwrite", "getchar",
    "getenv", "longjmp", "malloc", "memcmp", "memcpy", "memmove", "memset", "perror", "printf", "pthread_create",
    "putchar", "puts", "qsort", "rand", "realloc", "scanf", "setjmp", "snprintf", "sprintf", "srand",
    "sscanf", "strcat", "strchr", "strcmp", "strcpy", "strlen", "strncmp", "strncpy", "strstr", "strtod",
    "strtol", "system", "time", "vfprintf", "vprintf", "vsnprintf",
};

bool rk__tp_is_host_library_function(const char *name, int len) {
    char buf[64];
    if (len <= 0 || len >= (int)sizeof buf) return false;
    memcpy(buf, name, (size_t)len);
    buf[len] = '\0';
    const char *key = buf;
    return bsearch(&key, host_functions, sizeof host_functions / sizeof host_functions[0], sizeof host_functions[0],
                   compare_names) != NULL;
}

/* CUDA names people write first, and the DSL's (sorted by CUDA name). */
static const struct cuda_name {
    const char *cuda, *dsl;
} cuda_names[] = {
    {"__all_sync", "warp_all(pred)"},
    {"__any_sync", "warp_any(pred)"},
    {"__ballot_sync", "warp_ballot(pred)"},
    {"__clz", "clz_u32(x)"},
    {"__device__", "RK_DEVICE"},
    {"__double_as_longlong", "nothing (64-bit reinterpretation is not in the DSL)"},
    {"__ffs", "ffs_u32(x)"},
    {"__float_as_int", "float_as_int(f)"},
    {"__float_as_uint", "float_as_uint(f)"},
    {"__global__", "RK_KERNEL"},
    {"__int_as_float", "int_as_float(i)"},
    {"__launch_bounds__", "RK_BLOCK_SIZE(x, y, z)"},
    {"__nanosleep", "sleep_ns(ns)"},
    {"__popc", "popcount_u32(x)"},
    {"__shared__", "RK_SHARED"},
    {"__shfl_down_sync", "shfl_down_i32(v, delta) or shfl_down_f32"},
    {"__shfl_sync", "shfl_i32(v, lane) or shfl_f32"},
    {"__shfl_xor_sync", "shfl_xor_i32(v, mask) or shfl_xor_f32"},
    {"__syncthreads", "sync_threads()"},
    {"__syncwarp", "sync_warp()"},
    {"__threadfence", "thread_fence()"},
    {"__threadfence_block", "thread_fence_block()"},
    {"__uint_as_float", "uint_as_float(u)"},
    {"abs", "abs_i32(x) (fabsf for floats)"},
    {"atomicAdd", "atomic_add_i32, atomic_add_u32, atomic_add_u64 or atomic_add_f32(p, v)"},
    {"atomicAnd", "atomic_and_u32(p, v)"},
    {"atomicCAS", "atomic_cas_i32 or atomic_cas_u32(p, expected, desired)"},
    {"atomicExch", "atomic_exch_i32 or atomic_exch_u32(p, v)"},
    {"atomicMax", "atomic_max_i32 or atomic_max_u32(p, v)"},
    {"atomicMin", "atomic_min_i32 or atomic_min_u32(p, v)"},
    {"atomicOr", "atomic_or_u32(p, v)"},
    {"atomicSub", "atomic_sub_i32(p, v)"},
    {"atomicXor", "atomic_xor_u32(p, v)"},
    {"blockDim", "block_dim_x(), block_dim_y(), block_dim_z()"},
    {"blockIdx", "block_idx_x(), block_idx_y(), block_idx_z()"},
    {"gridDim", "grid_dim_x(), grid_dim_y(), grid_dim_z()"},
    {"max", "max_i32, max_u32 or fmaxf(a, b)"},
    {"min", "min_i32, min_u32 or fminf(a, b)"},
    {"threadIdx", "thread_idx_x(), thread_idx_y(), thread_idx_z()"},
    {"warpSize", "warp_size()"},
};

static int compare_cuda_names(const void *a, const void *b) {
    return strcmp(((const struct cuda_name *)a)->cuda, ((const struct cuda_name *)b)->cuda);
}

const char *rk__tp_dsl_spelling(const char *name, int len) {
    char buf[64];
    if (len <= 0 || len >= (int)sizeof buf) return NULL;
    memcpy(buf, name, (size_t)len);
    buf[len] = '\0';
    struct cuda_name key = {.cuda = buf};
    const struct cuda_name *hit = bsearch(&key, cuda_names, sizeof cuda_names / sizeof cuda_names[0],
                                          sizeof cuda_names[0], compare_cuda_names);
    return hit ? hit->dsl : NULL;
}

/* C library and CUDA headers (sorted). */
static const char *const libc_headers[] = {
    "assert.h", "complex.h", "ctype.h",   "errno.h",  "fenv.h",     "inttypes.h", "locale.h", "pthread.h",
    "setjmp.h", "signal.h",  "stdarg.h",  "stdatomic.h", "stdio.h", "stdlib.h",  "string.h", "strings.h",
    "threads.h", "time.h",   "uchar.h",   "unistd.h", "wchar.h",    "wctype.h",
};

const char *rk__tp_unavailable_header_reason(const char *name) {
    const char *key = name;
    if (bsearch(&key, libc_headers, sizeof libc_headers / sizeof libc_headers[0], sizeof libc_headers[0],
                compare_names))
        return "kernels have no C library: <ringkernel/dsl.h> gives them <math.h>, <stdint.h>, <stddef.h>, "
               "<stdbool.h>, <float.h> and <limits.h>, and the DSL's functions";
    if (strncmp(name, "cuda", 4) == 0 || strncmp(name, "device_", 7) == 0 || strncmp(name, "sm_", 3) == 0)
        return "CUDA headers are not needed: include <ringkernel/dsl.h>, whose functions the transpiler maps to CUDA";
    return NULL;
}
