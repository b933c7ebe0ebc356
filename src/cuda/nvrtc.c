/* NVRTC loaded at run time from the project's own declarations of the few
 * entry points it uses. Independent of the driver: compiling needs no GPU. */
#include "cuda/nvrtc.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend_impl.h"

typedef int nvrtcResult; /* 0 = NVRTC_SUCCESS */
typedef struct nvrtc_program_ *nvrtcProgram;

/* X(required, return type, name, parameters) */
#define RK_NVRTC_SYMBOLS(X)                                                                               \
    X(1, nvrtcResult, nvrtcVersion, (int *major, int *minor))                                             \
    X(1, const char *, nvrtcGetErrorString, (nvrtcResult result))                                         \
    X(1, nvrtcResult, nvrtcCreateProgram,                                                                 \
      (nvrtcProgram * prog, const char *src, const char *name, int num_headers, const char *const *headers, \
       const char *const *include_names))                                                                 \
    X(1, nvrtcResult, nvrtcDestroyProgram, (nvrtcProgram * prog))                                         \
    X(1, nvrtcResult, nvrtcCompileProgram, (nvrtcProgram prog, int num_options, const char *const *options)) \
    X(1, nvrtcResult, nvrtcGetPTXSize, (nvrtcProgram prog, size_t *size))                                 \
    X(1, nvrtcResult, nvrtcGetPTX, (nvrtcProgram prog, char *ptx))                                        \
    X(1, nvrtcResult, nvrtcGetProgramLogSize, (nvrtcProgram prog, size_t *size))                          \
    X(1, nvrtcResult, nvrtcGetProgramLog, (nvrtcProgram prog, char *log))                                 \
    X(0, nvrtcResult, nvrtcGetCUBINSize, (nvrtcProgram prog, size_t *size))                               \
    X(0, nvrtcResult, nvrtcGetCUBIN, (nvrtcProgram prog, char *cubin))

typedef struct nvrtc_api {
#define RK_NVRTC_FIELD_(req, ret, name, params) ret(*name) params;
    RK_NVRTC_SYMBOLS(RK_NVRTC_FIELD_)
#undef RK_NVRTC_FIELD_
} nvrtc_api;

extern const char rk__cuda_dsl_h[];

static nvrtc_api api;
static void *library;
static char load_error[2200];
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

const char *rk__nvrtc_dsl_header(void) { return rk__cuda_dsl_h; }

static bool resolve_all(void *lib, char *why, size_t why_size) {
    nvrtc_api a;
    memset(&a, 0, sizeof a);
#define RK_NVRTC_RESOLVE_(req, ret, name, params)                                   \
    *(void **)(&a.name) = dlsym(lib, #name);                                        \
    if (!a.name && (req)) {                                                         \
        snprintf(why, why_size, "symbol %s missing", #name);                        \
        return false;                                                               \
    }
    RK_NVRTC_SYMBOLS(RK_NVRTC_RESOLVE_)
#undef RK_NVRTC_RESOLVE_
    api = a;
    return true;
}

static void try_library(const char *path, char *tried, size_t tried_size) {
    if (library || !path || !*path) return;
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    char why[256];
    if (!lib) {
        snprintf(why, sizeof why, "%s", dlerror());
    } else if (resolve_all(lib, why, sizeof why)) {
        library = lib;
        return;
    } else {
        dlclose(lib);
    }
    size_t used = strlen(tried);
    snprintf(tried + used, tried_size - used, "%s%s (%s)", used ? "; " : "", path, why);
}

static void try_dir(const char *dir, char *tried, size_t tried_size) {
    if (!dir || !*dir) return;
    static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !library; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/lib64/%s", dir, names[i]);
        try_library(path, tried, tried_size);
    }
}

static void load(void) {
    char tried[2048] = "";
    try_library(getenv("RK_NVRTC_LIBRARY"), tried, sizeof tried);
    try_library("libnvrtc.so.13", tried, sizeof tried);
    try_library("libnvrtc.so.12", tried, sizeof tried);
    try_library("libnvrtc.so", tried, sizeof tried);
    try_dir(getenv("CUDA_HOME"), tried, sizeof tried);
    try_dir(getenv("CUDA_PATH"), tried, sizeof tried);
    try_dir("/usr/local/cuda", tried, sizeof tried);
    if (!library) snprintf(load_error, sizeof load_error, "NVRTC library not found: %s", tried);
}

rk_status rk__nvrtc_probe(char *reason, size_t reason_size) {
    pthread_once(&load_once, load);
    if (library) {
        if (reason && reason_size) reason[0] = '\0';
        return RK_OK;
    }
    if (reason && reason_size) snprintf(reason, reason_size, "%s", load_error);
    return RK_BACKEND_UNAVAILABLE;
}

rk_status rk__nvrtc_version(int *major, int *minor) {
    if (!major || !minor) return rk__fail(RK_NULL_ARGUMENT, "rk__nvrtc_version: major or minor is NULL");
    char reason[512];
    if (rk__nvrtc_probe(reason, sizeof reason) != RK_OK) return rk__fail(RK_BACKEND_UNAVAILABLE, "%s", reason);
    if (api.nvrtcVersion(major, minor) != 0) return rk__fail(RK_INTERNAL, "nvrtcVersion failed");
    return RK_OK;
}

static char *dup_text(const char *text) {
    size_t n = strlen(text);
    char *copy = malloc(n + 1);
    if (copy) memcpy(copy, text, n + 1);
    return copy;
}

/* The program log, or "" (malloc'ed; NULL only when out of memory). */
static char *program_log(nvrtcProgram prog) {
    size_t size = 0;
    if (api.nvrtcGetProgramLogSize(prog, &size) != 0 || size == 0) return dup_text("");
    char *log = malloc(size + 1);
    if (!log) return NULL;
    if (api.nvrtcGetProgramLog(prog, log) != 0) log[0] = '\0';
    log[size] = '\0';
    return log;
}

static bool names_standard(const char *const *options, size_t count) {
    for (size_t i = 0; i < count; i++)
        if (strncmp(options[i], "-std", 4) == 0 || strncmp(options[i], "--std", 5) == 0) return true;
    return false;
}

/* Copies the compiled image out: a cubin for sm_XX, PTX otherwise. */
static rk_status take_image(nvrtcProgram prog, bool cubin, char **out, size_t *out_size) {
    size_t size = 0;
    nvrtcResult r = cubin ? api.nvrtcGetCUBINSize(prog, &size) : api.nvrtcGetPTXSize(prog, &size);
    if (r != 0) return rk__fail(RK_INTERNAL, "nvrtcGet%sSize: %s", cubin ? "CUBIN" : "PTX", api.nvrtcGetErrorString(r));
    char *image = malloc(size + 1);
    if (!image) return rk__fail(RK_OUT_OF_MEMORY, "rk__nvrtc_compile: out of memory for a %zu-byte image", size);
    r = cubin ? api.nvrtcGetCUBIN(prog, image) : api.nvrtcGetPTX(prog, image);
    if (r != 0) {
        free(image);
        return rk__fail(RK_INTERNAL, "nvrtcGet%s: %s", cubin ? "CUBIN" : "PTX", api.nvrtcGetErrorString(r));
    }
    image[size] = '\0';
    /* NVRTC's PTX size counts its terminating NUL; report text length. */
    if (!cubin && size > 0 && image[size - 1] == '\0') size--;
    *out = image;
    *out_size = size;
    return RK_OK;
}

/* Line info does not change the code; it lets compute-sanitizer and ncu
 * name the source line of a hazard or a hot spot. */
bool rk__nvrtc_line_info(void) {
    const char *env = getenv("RK_CUDA_LINEINFO");
    return env && *env && strcmp(env, "0") != 0;
}

rk_status rk__nvrtc_compile(const char *source, const char *name, const char *arch, const char *const *options,
                            size_t option_count, char **ptx_out, size_t *ptx_size, char **log_out) {
    static const char fn[] = "rk__nvrtc_compile";
    if (log_out) *log_out = NULL;
    if (!source || !arch || !ptx_out || !ptx_size)
        return rk__fail(RK_NULL_ARGUMENT, "%s: %s is NULL", fn,
                        !source ? "source" : !arch ? "arch" : !ptx_out ? "ptx_out" : "ptx_size");
    if (option_count && !options) return rk__fail(RK_NULL_ARGUMENT, "%s: options is NULL but option_count is %zu", fn, option_count);
    *ptx_out = NULL;
    *ptx_size = 0;
    bool cubin = strncmp(arch, "sm_", 3) == 0;
    if (!cubin && strncmp(arch, "compute_", 8) != 0)
        return rk__fail(RK_INVALID_ARGUMENT, "%s: architecture '%s' is neither compute_NN nor sm_NN", fn, arch);
    char reason[512];
    if (rk__nvrtc_probe(reason, sizeof reason) != RK_OK) return rk__fail(RK_BACKEND_UNAVAILABLE, "%s", reason);
    if (cubin && !api.nvrtcGetCUBIN)
        return rk__fail(RK_UNSUPPORTED, "%s: this NVRTC cannot produce cubins (ask for compute_NN)", fn);

    char arch_option[64];
    snprintf(arch_option, sizeof arch_option, "--gpu-architecture=%s", arch);
    size_t total = option_count + 3;
    const char **all = malloc(total * sizeof *all);
    if (!all) return rk__fail(RK_OUT_OF_MEMORY, "%s: out of memory", fn);
    size_t n = 0;
    all[n++] = arch_option;
    if (!names_standard(options, option_count)) all[n++] = "-std=c++17";
    if (rk__nvrtc_line_info()) all[n++] = "--generate-line-info";
    for (size_t i = 0; i < option_count; i++) {
        if (!options[i]) {
            free(all);
            return rk__fail(RK_NULL_ARGUMENT, "%s: option %zu is NULL", fn, i);
        }
        all[n++] = options[i];
    }

    static const char *const header_names[] = {"ringkernel/dsl.h"};
    const char *const headers[] = {rk__cuda_dsl_h};
    nvrtcProgram prog = NULL;
    nvrtcResult r = api.nvrtcCreateProgram(&prog, source, name ? name : "kernel.cu", 1, headers, header_names);
    if (r != 0) {
        free(all);
        return rk__fail(RK_INTERNAL, "nvrtcCreateProgram: %s", api.nvrtcGetErrorString(r));
    }
    r = api.nvrtcCompileProgram(prog, (int)n, all);
    free(all);
    char *log = program_log(prog);
    rk_status s = RK_OK;
    if (r != 0) {
        s = rk__fail(RK_COMPILE_FAILED, "NVRTC could not compile %s for %s (%s):\n", name ? name : "kernel.cu", arch,
                     api.nvrtcGetErrorString(r));
        rk__fail_append(log ? log : "(no log)");
    } else {
        s = take_image(prog, cubin, ptx_out, ptx_size);
    }
    api.nvrtcDestroyProgram(&prog);
    if (log_out && log) {
        *log_out = log;
        log = NULL;
    }
    free(log);
    return s;
}
