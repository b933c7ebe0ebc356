/* Loads the Objective-C runtime and Metal.framework with dlopen, and sends
 * messages through objc_msgSend cast to each method's C signature (what
 * Objective-C's compiler does; arm64 and x86-64 both pass these arguments in
 * registers, and MTLSize by value as the C ABI passes a 24-byte struct). Off
 * Apple platforms the libraries do not exist: the backend is unavailable,
 * "needs macOS". */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "ringkernel/status.h"
#include "metal_api.h"

static rk_metal_api api;
static int load_status = -1;
static char load_reason[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

#ifdef __APPLE__
static bool load_symbols(void *lib, const char *lib_name) {
#define RK_METAL_DLSYM(name, required)                                                                            \
    *(void **)&api.name = lib ? dlsym(lib, #name) : NULL;                                                         \
    if (!api.name && required) {                                                                                  \
        snprintf(load_reason, sizeof load_reason, "%s lacks %s", lib_name, #name);                                \
        return false;                                                                                             \
    }
    if (lib == api.objc) {
        RK_METAL_OBJC_SYMBOLS(RK_METAL_DLSYM)
    } else {
        RK_METAL_FRAMEWORK_SYMBOLS(RK_METAL_DLSYM)
    }
#undef RK_METAL_DLSYM
    return true;
}
#endif

static void load(void) {
#ifndef __APPLE__
    snprintf(load_reason, sizeof load_reason, "needs macOS (Metal exists only on Apple platforms)");
    load_status = RK_BACKEND_UNAVAILABLE;
    return;
#else
    static const char objc_path[] = "/usr/lib/libobjc.A.dylib";
    static const char metal_path[] = "/System/Library/Frameworks/Metal.framework/Metal";
    api.objc = dlopen(objc_path, RTLD_NOW | RTLD_LOCAL);
    api.metal = api.objc ? dlopen(metal_path, RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!api.objc || !api.metal) {
        snprintf(load_reason, sizeof load_reason, "cannot load %s: %s", api.objc ? metal_path : objc_path,
                 dlerror());
        load_status = RK_BACKEND_UNAVAILABLE;
        return;
    }
    load_status = load_symbols(api.objc, objc_path) && load_symbols(api.metal, metal_path) ? RK_OK
                                                                                          : RK_BACKEND_UNAVAILABLE;
#endif
}

int rk__metal_load(const rk_metal_api **out, char *reason, size_t reason_size) {
    pthread_once(&once, load);
    if (load_status != RK_OK) {
        snprintf(reason, reason_size, "%s", load_reason);
        return load_status;
    }
    *out = &api;
    return RK_OK;
}

/* objc_msgSend as a function of the given type. */
#define SEND(api, type) ((type)(void (*)(void))(api)->objc_msgSend)
#define SELECTOR(api, name) ((api)->sel_registerName(name))

id rk__metal_send(const rk_metal_api *a, id obj, const char *sel) {
    return SEND(a, id (*)(id, SEL))(obj, SELECTOR(a, sel));
}
id rk__metal_send_id(const rk_metal_api *a, id obj, const char *sel, id x) {
    return SEND(a, id (*)(id, SEL, id))(obj, SELECTOR(a, sel), x);
}
id rk__metal_send_id_err(const rk_metal_api *a, id obj, const char *sel, id x, id *error) {
    return SEND(a, id (*)(id, SEL, id, id *))(obj, SELECTOR(a, sel), x, error);
}
id rk__metal_send_id_id_err(const rk_metal_api *a, id obj, const char *sel, id x, id y, id *error) {
    return SEND(a, id (*)(id, SEL, id, id, id *))(obj, SELECTOR(a, sel), x, y, error);
}
id rk__metal_send_len_opt(const rk_metal_api *a, id obj, const char *sel, NSUInteger length, NSUInteger options) {
    return SEND(a, id (*)(id, SEL, NSUInteger, NSUInteger))(obj, SELECTOR(a, sel), length, options);
}
NSUInteger rk__metal_send_uint(const rk_metal_api *a, id obj, const char *sel) {
    return SEND(a, NSUInteger (*)(id, SEL))(obj, SELECTOR(a, sel));
}
void rk__metal_send_void(const rk_metal_api *a, id obj, const char *sel) {
    SEND(a, void (*)(id, SEL))(obj, SELECTOR(a, sel));
}
void rk__metal_send_void_uint(const rk_metal_api *a, id obj, const char *sel, NSUInteger v) {
    SEND(a, void (*)(id, SEL, NSUInteger))(obj, SELECTOR(a, sel), v);
}
void rk__metal_send_void_bool(const rk_metal_api *a, id obj, const char *sel, bool v) {
    SEND(a, void (*)(id, SEL, signed char))(obj, SELECTOR(a, sel), (signed char)v); /* Objective-C's BOOL */
}
void rk__metal_send_void_id(const rk_metal_api *a, id obj, const char *sel, id x) {
    SEND(a, void (*)(id, SEL, id))(obj, SELECTOR(a, sel), x);
}
void *rk__metal_send_ptr(const rk_metal_api *a, id obj, const char *sel) {
    return SEND(a, void *(*)(id, SEL))(obj, SELECTOR(a, sel));
}
void rk__metal_set_buffer(const rk_metal_api *a, id encoder, id buffer, NSUInteger offset, NSUInteger index) {
    SEND(a, void (*)(id, SEL, id, NSUInteger, NSUInteger))(encoder, SELECTOR(a, "setBuffer:offset:atIndex:"), buffer,
                                                           offset, index);
}
void rk__metal_set_bytes(const rk_metal_api *a, id encoder, const void *bytes, NSUInteger length, NSUInteger index) {
    SEND(a, void (*)(id, SEL, const void *, NSUInteger, NSUInteger))(encoder, SELECTOR(a, "setBytes:length:atIndex:"),
                                                                     bytes, length, index);
}
void rk__metal_dispatch(const rk_metal_api *a, id encoder, MTLSize groups, MTLSize threads) {
    SEND(a, void (*)(id, SEL, MTLSize, MTLSize))(encoder, SELECTOR(a, "dispatchThreadgroups:threadsPerThreadgroup:"),
                                                 groups, threads);
}
id rk__metal_string(const rk_metal_api *a, const char *utf8) {
    id cls = (id)a->objc_getClass("NSString");
    return SEND(a, id (*)(id, SEL, const char *))(cls, SELECTOR(a, "stringWithUTF8String:"), utf8);
}
const char *rk__metal_cstring(const rk_metal_api *a, id string) {
    return string ? SEND(a, const char *(*)(id, SEL))(string, SELECTOR(a, "UTF8String")) : NULL;
}
const char *rk__metal_error_text(const rk_metal_api *a, id error) {
    const char *text = error ? rk__metal_cstring(a, rk__metal_send(a, error, "localizedDescription")) : NULL;
    return text ? text : "unknown error";
}
