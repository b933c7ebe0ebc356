/* Finds and loads a webgpu.h implementation at run time.
 *
 * Search order: $RK_WEBGPU_LIB (also the way to use wgpu-native or another
 * Dawn); the Dawn build that scripts/install-webgpu.sh unpacks into
 * .deps/webgpu/, looked for next to this library and in the source tree it
 * was built from; then the system's library path. RTLD_LOCAL keeps Dawn's
 * thousands of internal C++ symbols (tint, absl, SPIRV-Tools) from clashing
 * with the host program's. The library is never unloaded: Dawn owns threads
 * and static state that do not survive dlclose.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend_impl.h"
#include "webgpu_internal.h"

#ifndef RK_WEBGPU_SOURCE_LIB
#define RK_WEBGPU_SOURCE_LIB ""
#endif

/* macOS: the darwin npm packages carry the same library as a .dylib (Dawn on Metal). */
#ifdef __APPLE__
#define RK_DYLIB ".dylib"
#else
#define RK_DYLIB ".so"
#endif
#define DAWN_RELATIVE ".deps/webgpu/package/libwebgpu_wrapper" RK_DYLIB

static const char *const system_names[] = {"libwebgpu_dawn" RK_DYLIB, "libwebgpu" RK_DYLIB, "libwebgpu_wrapper" RK_DYLIB};

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static rk__wgpu_api api;
static bool loaded;
static char load_error[768];
static char loaded_path[512];

static void note(const char *fmt, const char *a, const char *b) {
    size_t used = strlen(load_error);
    if (used + 1 < sizeof load_error) snprintf(load_error + used, sizeof load_error - used, fmt, a, b);
}

/* Resolves every symbol of the list or fails naming the first missing one. */
static bool bind_symbols(void *handle, const char *path) {
    rk__wgpu_api tmp;
    void *sym;
#define RK_WGPU_BIND_(ret, name, params)                                 \
    sym = dlsym(handle, "wgpu" #name);                                   \
    if (!sym) {                                                          \
        note("%s lacks wgpu%s; ", path, #name);                          \
        return false;                                                    \
    }                                                                    \
    memcpy(&tmp.name, &sym, sizeof sym);
    RK_WGPU_FUNCTIONS(RK_WGPU_BIND_)
#undef RK_WGPU_BIND_
    api = tmp;
    return true;
}

static bool try_path(const char *path, bool must_exist_as_file) {
    if (!path || !*path) return false;
    if (must_exist_as_file) {
        FILE *f = fopen(path, "rb");
        if (!f) return false;
        fclose(f);
    }
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror(); /* names the path itself */
        note("%s%s; ", e ? e : "dlopen failed: ", e ? "" : path);
        return false;
    }
    if (!bind_symbols(h, path)) return false; /* keep h: harmless, and dlclose of Dawn is unsafe */
    snprintf(loaded_path, sizeof loaded_path, "%s", path);
    return true;
}

/* Directory of the file this code was loaded from (libringkernel.so). */
static const char anchor;

static void own_directory(char *out, size_t size) {
    Dl_info info;
    out[0] = '\0';
    if (dladdr(&anchor, &info) && info.dli_fname) {
        snprintf(out, size, "%s", info.dli_fname);
        char *slash = strrchr(out, '/');
        if (slash) *slash = '\0';
        else out[0] = '\0';
    }
}

static void load(void) {
    load_error[0] = '\0';
    const char *env = getenv("RK_WEBGPU_LIB");
    if (env && *env) {
        loaded = try_path(env, false);
        if (!loaded) note("%s%s", "RK_WEBGPU_LIB is set, so nothing else was tried", "");
        return;
    }
    char dir[400], path[512];
    own_directory(dir, sizeof dir);
    if (dir[0]) {
        /* a build directory inside the source tree, or installed next to the library */
        static const char *const rel[] = {"../" DAWN_RELATIVE, DAWN_RELATIVE, "../../" DAWN_RELATIVE,
                                          "ringkernel/libwebgpu_wrapper" RK_DYLIB};
        for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
            snprintf(path, sizeof path, "%s/%s", dir, rel[i]);
            if (try_path(path, true)) {
                loaded = true;
                return;
            }
        }
    }
    if (try_path(RK_WEBGPU_SOURCE_LIB, true)) {
        loaded = true;
        return;
    }
    for (size_t i = 0; i < sizeof system_names / sizeof system_names[0]; i++) {
        if (try_path(system_names[i], false)) {
            loaded = true;
            return;
        }
    }
    size_t used = strlen(load_error);
    snprintf(load_error + used, sizeof load_error - used,
             "no webgpu.h library found (run scripts/install-webgpu.sh, or set RK_WEBGPU_LIB)");
}

rk_status rk__wgpu_load(const rk__wgpu_api **out, char *reason, size_t reason_size) {
    pthread_once(&load_once, load);
    if (!loaded) {
        snprintf(reason, reason_size, "%s", load_error);
        return RK_BACKEND_UNAVAILABLE;
    }
    *out = &api;
    return RK_OK;
}

const char *rk__wgpu_library_path(void) { return loaded ? loaded_path : ""; }
