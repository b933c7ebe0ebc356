/* NVRTC (the CUDA run-time compiler), loaded with dlopen on first use.
 *
 * Needs no GPU and no driver: only libnvrtc (libnvrtc.so.13 or libnvrtc.so,
 * found through the loader path, $CUDA_HOME/lib64, $CUDA_PATH/lib64 or
 * /usr/local/cuda/lib64; $RK_NVRTC_LIBRARY names a file to try first). CI
 * uses it to compile generated CUDA C on machines without a GPU.
 *
 * Every compilation can #include "ringkernel/dsl.h": the library hands NVRTC
 * its own embedded copy, so no include path is needed.
 */
#ifndef RK_CUDA_NVRTC_H
#define RK_CUDA_NVRTC_H

#include <stdbool.h>
#include <stddef.h>

#include "ringkernel/status.h"

#define RK__NVRTC_API __attribute__((visibility("default")))

/* Compiles CUDA C++ source. arch "compute_90" gives PTX text; a real
 * architecture such as "sm_90" gives a cubin. name is the file name used in
 * diagnostics (NULL = "kernel.cu"); options are extra NVRTC options ("-DX=1",
 * "-I/path", "-lineinfo"); "-std=c++17" is added unless options name a
 * standard. On RK_OK *ptx_out holds the image (always NUL-terminated;
 * *ptx_size counts the bytes without that NUL). log_out may be NULL;
 * otherwise it receives the compiler's log ("" when empty), on failure too.
 * The caller frees both with free(). Failures: RK_BACKEND_UNAVAILABLE when
 * NVRTC cannot be loaded, RK_COMPILE_FAILED with the log in rk_last_error(). */
RK__NVRTC_API rk_status rk__nvrtc_compile(const char *source, const char *name, const char *arch,
                                         const char *const *options, size_t option_count, char **ptx_out,
                                         size_t *ptx_size, char **log_out);

/* Whether $RK_CUDA_LINEINFO asks for source line info in every image
 * (for compute-sanitizer and ncu reports); part of the module cache's key. */
RK__NVRTC_API bool rk__nvrtc_line_info(void);

/* Loads NVRTC if needed. RK_OK, or RK_BACKEND_UNAVAILABLE with why in reason. */
RK__NVRTC_API rk_status rk__nvrtc_probe(char *reason, size_t reason_size);

/* NVRTC's version, e.g. 13 and 0. */
RK__NVRTC_API rk_status rk__nvrtc_version(int *major, int *minor);

/* The embedded dsl.h text, for code that must hand it to another compiler. */
const char *rk__nvrtc_dsl_header(void);

#endif
