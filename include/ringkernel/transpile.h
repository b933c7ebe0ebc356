/* The transpiler: kernels written once in a subset of C (against
 * <ringkernel/dsl.h>) turned into a GPU kernel language.
 *
 * The front end is self-contained: its own tokenizer, preprocessor, parser
 * and type checker, with built-in copies of <ringkernel/dsl.h>,
 * <ringkernel/dsl_stencil.h> and the few C headers kernels use, so it needs
 * no system compiler. Errors are collected like a compiler's
 * (file:line:col, the source line, a caret) and returned, never printed.
 *
 *   rk_transpile_desc d = {.path = "laplacian.c", .target = RK_TARGET_CUDA};
 *   rk_transpile_result *r;
 *   if (rk_transpile(&d, &r) == RK_OK) puts(rk_transpile_output(r, NULL));
 *   else fputs(rk_transpile_diagnostics_text(r), stderr);
 *   rk_transpile_result_destroy(r);
 *
 * The subset, the mapping to CUDA and the three kernel kinds are described in
 * docs/transpiler.md. Thread-safe: calls share no state.
 */
#ifndef RINGKERNEL_TRANSPILE_H
#define RINGKERNEL_TRANSPILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rk_transpile_target {
    RK_TARGET_DEFAULT = 0, /* CUDA */
    RK_TARGET_CUDA,
    RK_TARGET_WGSL,        /* WebGPU: global, stencil and handler kernels (src/transpile/emit_wgsl*.c) */
    RK_TARGET_MSL,         /* Metal: global, stencil and handler kernels (src/transpile/emit_msl*.c) */
} rk_transpile_target;

/* What an entry point is. AUTO classifies each one: an RK_KERNEL with an
 * rk_grid_pos parameter is a stencil, another RK_KERNEL a global kernel, an
 * RK_HANDLER a ring-kernel handler. Any other value requires every entry
 * point of the source to be of that kind (and at least one to exist). */
typedef enum rk_transpile_kind {
    RK_TRANSPILE_AUTO = 0,
    RK_TRANSPILE_GLOBAL,
    RK_TRANSPILE_STENCIL,
    RK_TRANSPILE_HANDLER,
} rk_transpile_kind;

const char *rk_transpile_kind_name(rk_transpile_kind kind);   /* "global", ... */
const char *rk_transpile_target_name(rk_transpile_target target); /* "cuda", ... */

/* Tiling of stencil kernels. Zero fields take defaults: tile 16x16 for a 2-D
 * stencil and 8x8x8 for a 3-D one (a stencil is 3-D when its tile has a depth
 * or its body uses rk_up/rk_down/rk_at3/rk_pos_z/rk_pos_nz); halo = the
 * largest neighbour offset the body uses. The launch block equals the tile. */
typedef struct rk_stencil_config {
    uint32_t tile[3]; /* width, height, depth (0 = 2-D unless the body is 3-D) */
    uint32_t halo;
} rk_stencil_config;

/* An in-memory file that #include can find before the file system. */
typedef struct rk_transpile_file {
    const char *name;     /* as written in #include "name" or <name> */
    const char *contents; /* NUL-terminated */
} rk_transpile_file;

typedef struct rk_transpile_desc {
    /* The kernel source: text in `source`, or NULL to read the file `path`.
     * `path` also names the source in diagnostics (NULL = "<input>") and its
     * directory is searched first by #include "...". */
    const char *source;
    const char *path;
    const char *const *include_dirs; /* searched by #include after the built-in headers */
    size_t include_dir_count;
    const char *const *defines;      /* "NAME" or "NAME=VALUE", as -D */
    size_t define_count;
    const rk_transpile_file *files;  /* virtual files, searched before include_dirs */
    size_t file_count;
    bool no_file_system;             /* never open files: only source, files and built-ins */
    rk_transpile_target target;
    rk_transpile_kind kind;
    rk_stencil_config stencil;
    /* Bytes of static shared memory (RK_SHARED) one kernel may use, for a
     * device that allows more or less than the target's default: 0 = CUDA's
     * 48 KiB, or WebGPU's default maxComputeWorkgroupStorageSize of 16 KiB
     * for WGSL (a WebGPU caller may pass its device's limit). */
    uint32_t shared_memory_limit;
    /* WGSL: tags of structs of buffer pointers that are sets of bindings,
     * comma-separated (NULL = none). WGSL has no pointers in structs, so a
     * parameter `const S *s` is dropped from every function and `s->m`
     * reads the module-scope binding rk_b_m: a pointer member is a storage
     * buffer, a member of any other type a module-scope constant the caller
     * declares (`const rk_b_m: i32 = ...;`). Kernels take such structs as
     * their first parameters, in one order: their pointer members bind to
     * @binding(0..) in order, and the kernel's own buffers follow. Member
     * names are unique across the structs. The simulation library (src/sim)
     * uses it for rk_sim_state. */
    const char *wgsl_state_struct;
} rk_transpile_desc;

typedef enum rk_diagnostic_severity {
    RK_DIAG_ERROR = 0,
    RK_DIAG_WARNING,
    RK_DIAG_NOTE,
} rk_diagnostic_severity;

typedef struct rk_diagnostic {
    rk_diagnostic_severity severity;
    const char *file;    /* as given or as found by #include; "" when none */
    uint32_t line, column; /* 1-based; 0 when the message has no position */
    const char *message; /* one line, no location prefix */
} rk_diagnostic;

/* One entry point of the output. */
typedef struct rk_transpiled_kernel {
    const char *name;
    rk_transpile_kind kind;
    /* Stencils: the emitted kernel takes the function's parameters without the
     * grid position, then the domain size as int nx, ny (and nz when 3-D).
     * Launch it with block = (tile[0], tile[1], tile[2]) and grid =
     * ceil(nx / tile[0]) x ceil(ny / tile[1]) x ceil(nz / tile[2]). */
    uint32_t dims;     /* 2 or 3; 0 for other kinds */
    uint32_t tile[3];  /* tile[2] is 1 for a 2-D stencil */
    uint32_t halo;
    /* Handlers: sizes of the request, reply and state types in bytes (the
     * host's x86-64 layout, checked by static_asserts in the output; 0 for
     * void). */
    uint32_t request_size, reply_size, state_size;
    /* Global kernels marked RK_BLOCK_SIZE(x, y, z): the block every launch
     * must use (CUDA: __launch_bounds__(x*y*z); WGSL: @workgroup_size(x, y,
     * z)); 0 when the kernel has no such mark. */
    uint32_t block[3];
} rk_transpiled_kernel;

typedef struct rk_transpile_result rk_transpile_result;

/* Transpiles one source. Returns RK_OK, or RK_PARSE_ERROR when the source has
 * errors (every one is in the diagnostics), RK_IO_ERROR when the file cannot
 * be read, RK_UNSUPPORTED for a target without an emitter yet, and
 * RK_NULL_ARGUMENT / RK_INVALID_ARGUMENT / RK_OUT_OF_MEMORY. Whenever desc and
 * out are non-NULL and memory allows, *out receives a result (holding the
 * diagnostics even on failure) that the caller destroys. */
rk_status rk_transpile(const rk_transpile_desc *desc, rk_transpile_result **out);
void rk_transpile_result_destroy(rk_transpile_result *result);

/* The generated source (NUL-terminated), or "" after a failure. size may be NULL. */
const char *rk_transpile_output(const rk_transpile_result *result, size_t *size);

size_t rk_transpile_diagnostic_count(const rk_transpile_result *result);
const rk_diagnostic *rk_transpile_diagnostic(const rk_transpile_result *result, size_t index);
size_t rk_transpile_error_count(const rk_transpile_result *result);
/* Every diagnostic as a compiler prints it: "file:line:col: error: message",
 * the source line and a caret, then a summary line ("2 errors generated."). */
const char *rk_transpile_diagnostics_text(const rk_transpile_result *result);

size_t rk_transpile_kernel_count(const rk_transpile_result *result);
const rk_transpiled_kernel *rk_transpile_kernel(const rk_transpile_result *result, size_t index);

#ifdef __cplusplus
}
#endif
#endif
