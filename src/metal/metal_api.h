/* The subset of the Objective-C runtime and Metal.framework the Metal backend
 * uses, declared here (as the CUDA backend declares libcuda's): the library
 * is plain C, builds on every platform, and loads both at run time. Objects
 * are `id`; methods are sent with objc_msgSend, cast to the method's C
 * signature at each call (metal_loader.c's helpers). */
#ifndef RK_METAL_API_H
#define RK_METAL_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct objc_object *id;
typedef struct objc_selector *SEL;
typedef struct objc_class *Class;
typedef unsigned long NSUInteger; /* LP64 */
typedef long NSInteger;

typedef struct MTLSize {
    NSUInteger width, height, depth;
} MTLSize;

enum {
    MTLResourceStorageModeShared = 0,   /* CPU and GPU see the same memory (unified on Apple GPUs) */
    NSUTF8StringEncoding = 4,
    MTLCommandBufferStatusCompleted = 4,
    MTLCommandBufferStatusError = 5,
};

/* Symbols: name, required. */
#define RK_METAL_OBJC_SYMBOLS(X) \
    X(objc_getClass, 1)          \
    X(sel_registerName, 1)       \
    X(objc_msgSend, 1)           \
    X(objc_autoreleasePoolPush, 1) \
    X(objc_autoreleasePoolPop, 1)
#define RK_METAL_FRAMEWORK_SYMBOLS(X) X(MTLCreateSystemDefaultDevice, 1)

typedef struct rk_metal_api {
    void *objc, *metal; /* dlopen handles */
    Class (*objc_getClass)(const char *name);
    SEL (*sel_registerName)(const char *name);
    void (*objc_msgSend)(void); /* cast to each method's signature */
    void *(*objc_autoreleasePoolPush)(void);
    void (*objc_autoreleasePoolPop)(void *pool);
    id (*MTLCreateSystemDefaultDevice)(void);
} rk_metal_api;

/* Loads the runtime and the framework once. RK_OK, or
 * RK_BACKEND_UNAVAILABLE with the reason in `reason` ("needs macOS" off
 * Apple platforms). */
int rk__metal_load(const rk_metal_api **out, char *reason, size_t reason_size);

/* Message sends for the method shapes the backend uses: the receiver, the
 * selector's name, then the arguments. */
id rk__metal_send(const rk_metal_api *api, id obj, const char *sel);
id rk__metal_send_id(const rk_metal_api *api, id obj, const char *sel, id a);
id rk__metal_send_id_id_err(const rk_metal_api *api, id obj, const char *sel, id a, id b, id *error);
id rk__metal_send_id_err(const rk_metal_api *api, id obj, const char *sel, id a, id *error);
id rk__metal_send_len_opt(const rk_metal_api *api, id obj, const char *sel, NSUInteger length, NSUInteger options);
NSUInteger rk__metal_send_uint(const rk_metal_api *api, id obj, const char *sel);
void rk__metal_send_void(const rk_metal_api *api, id obj, const char *sel);
void rk__metal_send_void_uint(const rk_metal_api *api, id obj, const char *sel, NSUInteger v);
void rk__metal_send_void_bool(const rk_metal_api *api, id obj, const char *sel, bool v);
void rk__metal_send_void_id(const rk_metal_api *api, id obj, const char *sel, id a);
void *rk__metal_send_ptr(const rk_metal_api *api, id obj, const char *sel);
void rk__metal_set_buffer(const rk_metal_api *api, id encoder, id buffer, NSUInteger offset, NSUInteger index);
void rk__metal_set_bytes(const rk_metal_api *api, id encoder, const void *bytes, NSUInteger length, NSUInteger index);
void rk__metal_dispatch(const rk_metal_api *api, id encoder, MTLSize groups, MTLSize threads);
/* An NSString from UTF-8 (autoreleased), and a C string from one. */
id rk__metal_string(const rk_metal_api *api, const char *utf8);
const char *rk__metal_cstring(const rk_metal_api *api, id string);
/* [error localizedDescription] as a C string, or "unknown error". */
const char *rk__metal_error_text(const rk_metal_api *api, id error);

#endif
