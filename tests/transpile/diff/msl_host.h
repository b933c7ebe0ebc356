/* The transpiler's MSL as host C++: compiled by clang++ against the Metal
 * shim (tests/metal/shim/metal_stdlib) and run by the CPU backend's executor,
 * the differential tests' "msl-host" executor; also what the MSL compile
 * check feeds clang++ (tests/metal/test_msl_compile.c). */
#ifndef RK_DIFF_MSL_HOST_H
#define RK_DIFF_MSL_HOST_H

#include <stdbool.h>

#include "diff_text.h"

/* clang++ options for MSL against the shim (source tree `root`): what the
 * shim models (address spaces, attributes, no double) fails as Metal would;
 * style warnings about the program itself stay warnings. */
void msl_host_flags(diff_text *out, const char *root);

/* Appends msl to out with its threadgroup variables made per-block
 * (static thread_local: C++ has no automatic variables in an address space;
 * a block's threads all run on one OS thread), and, for mutation tests,
 * every `find` replaced with `replace` (find NULL: none). */
void msl_host_rewrite(diff_text *out, const char *msl, const char *find, const char *replace);

/* Appends an extern "C" wrapper named rk_msl_host_<name> for kernel `kernel`
 * of msl, callable with the CPU executor's arguments (buffers as pointers,
 * scalars by value) and passing the thread's position from the executor.
 * handler: the kernel is rk_ring_<kernel>, the wrapper takes the
 * differential driver's (in, out, state, status, n) and queues n messages.
 * False when msl has no such kernel. */
bool msl_host_wrapper(diff_text *out, const char *msl, const char *kernel, const char *name, bool handler);

#endif
