/* Diagnostics: for each construct outside the subset, the exact
 * line:column and message; several errors in one source are all reported;
 * the rendered text has the source line and a caret. Set RK_PRINT_DIAGS=1 to
 * print what the transpiler reports for every case. */
#include "check.h"
#include "ringkernel/transpile.h"

typedef struct diag_case {
    const char *name;
    const char *source;
    rk_transpile_kind kind;
    uint32_t halo;
    const char *expected[8]; /* "line:col: severity: message", in order */
} diag_case;

#define DSL "#include <ringkernel/dsl.h>\n"
#define STENCIL "#include <ringkernel/dsl_stencil.h>\n"

static const diag_case cases[] = {
    {"direct recursion", DSL "int fact(int n) { return n <= 1 ? 1 : n * fact(n - 1); }\n"
                             "RK_KERNEL void k(int *o) { o[0] = fact(5); }\n",
     0, 0, {"2:43: error: recursion is not supported: 'fact' calls itself"}},
    {"mutual recursion", DSL "int odd(int n);\n"
                             "int even(int n) { return n == 0 ? 1 : odd(n - 1); }\n"
                             "int odd(int n) { return n == 0 ? 0 : even(n - 1); }\n"
                             "RK_KERNEL void k(int *o) { o[0] = even(4); }\n",
     0, 0, {"3:39: error: recursion is not supported: 'odd' calls 'even' calls 'odd'"}},
    {"function pointer", DSL "static int twice(int x) { return 2 * x; }\n"
                             "RK_KERNEL void k(int *o) {\n"
                             "    int (*f)(int) = twice;\n"
                             "    o[0] = f(1);\n"
                             "}\n",
     0, 0, {"4:11: error: function pointers are not supported in kernels",
            "5:13: error: only named functions can be called (function pointers are not supported)",
            "4:21: error: function pointers are not supported: 'twice' is used as a value"}},
    {"function pointer parameter", DSL "void apply(float *d, float (*op)(float)) { d[0] = 0.0f; }\n"
                                       "RK_KERNEL void k(float *d) { d[0] = 1.0f; }\n",
     0, 0, {"2:30: error: function pointers are not supported in kernels"}},
    {"variable-length array", DSL "RK_KERNEL void k(float *d, int n) {\n"
                                  "    float tmp[n];\n"
                                  "    d[0] = tmp[0];\n"
                                  "}\n",
     0, 0, {"3:14: error: variable-length arrays are not supported: the size must be a constant expression"}},
    {"host library calls", DSL "RK_KERNEL void k(float *d) {\n"
                               "    float *p = malloc(16);\n"
                               "    free(p);\n"
                               "}\n",
     0, 0, {"3:16: error: 'malloc' is a host library function; kernels cannot call it",
            "4:5: error: 'free' is a host library function; kernels cannot call it"}},
    {"printf", DSL "RK_KERNEL void k(int *d) { printf(\"%d\\n\", d[0]); }\n", 0, 0,
     {"2:28: error: 'printf' is a host library function; kernels cannot call it",
      "2:35: error: string literals are not supported in kernels"}},
    {"undeclared function", DSL "RK_KERNEL void k(int *d) { d[0] = helper(1); }\n", 0, 0,
     {"2:35: error: call to undeclared function 'helper'"}},
    {"declared, never defined", DSL "int helper(int x);\nRK_KERNEL void k(int *d) { d[0] = helper(1); }\n", 0, 0,
     {"3:35: error: 'helper' is declared but never defined; kernels can only call functions defined in the same source"}},
    {"mutable global", DSL "int counter;\nRK_KERNEL void k(int *d) { d[0] = counter; }\n", 0, 0,
     {"2:5: error: file-scope variables must be const: kernels share no mutable globals (pass a buffer instead)"}},
    {"static local", DSL "RK_KERNEL void k(int *d) { static int calls; d[0] = calls++; }\n", 0, 0,
     {"2:28: error: static local variables are not supported (use RK_SHARED for per-block data, or a file-scope const table)"}},
    {"host-only storage", DSL "_Thread_local int t;\nextern const int e;\nRK_KERNEL void k(int *d) { d[0] = 0; }\n", 0, 0,
     {"2:1: error: _Thread_local is a host-only construct; use RK_SHARED for per-block data",
      "2:19: error: file-scope variables must be const: kernels share no mutable globals (pass a buffer instead)",
      "3:1: error: extern variables are not supported in kernels"}},
    {"goto and labels", DSL "RK_KERNEL void k(int *d) {\n    goto done;\ndone:\n    d[0] = 1;\n}\n", 0, 0,
     {"3:5: error: goto is not supported (WGSL has no equivalent); use structured control flow",
      "4:1: error: labels are not supported (there is no goto)"}},
    {"union, bit-field, variadic", DSL "union u { int i; float f; };\n"
                                       "struct s { unsigned a : 3; };\n"
                                       "int sum(int n, ...) { return n; }\n"
                                       "RK_KERNEL void k(int *d) { d[0] = 0; }\n",
     0, 0, {"2:1: error: unions are not supported (WGSL and MSL have no equivalent)",
            "3:23: error: bit-fields are not supported",
            "4:16: error: variadic functions are not supported"}},
    {"assembly and long double", DSL "RK_KERNEL void k(long double *d) { __asm__(\"nop\"); }\n", 0, 0,
     {"2:23: error: long double is not supported", "2:36: error: inline assembly is not supported"}},
    {"initializers", DSL "typedef struct P { int x, y; } P;\n"
                         "RK_KERNEL void k(int *d) {\n"
                         "    P a = {.x = 1, .y = 2};\n"
                         "    P b = (P){1, 2};\n"
                         "    d[0] = a.x + b.y;\n"
                         "}\n",
     0, 0, {"4:12: error: designated initializers are not supported", "5:11: error: compound literals are not supported"}},
    {"kernel signatures", DSL "RK_KERNEL int k(int *d) { return d[0]; }\n"
                              "typedef struct Msg { float *data; } Msg;\n"
                              "RK_HANDLER int h(const Msg *m, int *r, void *s) { r[0] = 0; return 0; }\n"
                              "RK_HANDLER void h2(const Msg *m) { }\n",
     0, 0, {"2:15: error: kernel 'k' must return void",
            "4:29: error: handler 'h': the request type contains a pointer, which means nothing on the other side of the host/device boundary",
            "5:17: error: handler 'h2' must return int (0 = success, negative = failed)",
            "5:17: error: handler 'h2' must take (const Request *req, Reply *reply, State *state)"}},
    /* Found by the fuzzer: a nested definition of the struct being defined
     * made it contain itself (and the checker recurse without end). */
    {"struct containing itself", DSL "typedef struct S { int a; struct S { int b; } inner; } S;\n"
                                     "struct T { int a; struct T self; };\n"
                                     "RK_HANDLER int h(const S *q, S *r, void *st) { r->a = q->a; return 0; }\n",
     0, 0, {"2:34: error: nested redefinition of 'S'",
            "3:28: error: member 'self' has incomplete type 'struct T'"}},
    /* Found by the CI fuzzer: an array of the struct being defined kept the
     * link to it, so walking the struct for pointers never ended. */
    {"struct containing an array of itself", DSL "struct T { int a; struct T self[2]; };\n"
                                                 "RK_HANDLER int h(const struct T *q, struct T *r, void *st) { return 0; }\n",
     0, 0, {"2:32: error: array of incomplete type 'struct T'"}},
    {"kernel called from device code", DSL "RK_KERNEL void a(int *d) { d[0] = 1; }\n"
                                           "RK_KERNEL void b(int *d) { a(d); }\n",
     0, 0, {"3:28: error: kernel 'a' cannot be called from device code (dynamic parallelism is not supported)"}},
    /* Found by the fuzzer (UBSan): the stencil analysis read past a builtin's
     * argument table when a call had too many arguments. */
    {"builtin with too many arguments in a stencil", STENCIL
     "RK_KERNEL void k(const float *in, float *out, rk_grid_pos p) {\n"
     "    out[rk_pos_idx(p)] = rk_east(p, in) + atomic_add_i32((int *)out, 1, 2, 3, 4, 5, 6);\n"
     "}\n",
     RK_TRANSPILE_STENCIL, 0, {"3:43: error: 'atomic_add_i32' takes 2 arguments, but 7 were given"}},
    {"stencil rules", STENCIL "RK_KERNEL void s(float *in, float *out, int dx, rk_grid_pos p) {\n"
                              "    sync_threads();\n"
                              "    out[rk_pos_idx(p)] = rk_at(p, in, dx, 0) + (float)thread_idx_x();\n"
                              "    in[rk_pos_idx(p)] = rk_east(p, in);\n"
                              "}\n",
     0, 0, {"3:5: error: 'sync_threads' is not available in a stencil kernel, which sees the grid only through its rk_grid_pos",
            "4:39: error: the offsets of 'rk_at' must be integer constant expressions",
            "4:55: error: 'thread_idx_x' is not available in a stencil kernel, which sees the grid only through its rk_grid_pos",
            "5:5: error: stencil 's': 'in' is read at neighbour offsets and also written; use separate input and output buffers"}},
    {"stencil and the CPU runtime", STENCIL "RK_KERNEL void s(const float *in, float *out, rk_grid_pos p) {\n"
                                            "    sleep_ns(10);\n"
                                            "    grid_sync();\n"
                                            "    out[rk_pos_idx(p)] = in[0] + (float)warp_ballot(1);\n"
                                            "}\n",
     0, 0, {"3:5: error: 'sleep_ns' is not available in a stencil kernel, which sees the grid only through its rk_grid_pos",
            "4:5: error: 'grid_sync' is not available in a stencil kernel, which sees the grid only through its rk_grid_pos",
            "5:41: error: 'warp_ballot' is not available in a stencil kernel, which sees the grid only through its rk_grid_pos"}},
    {"stencil halo", STENCIL "RK_KERNEL void s(const float *in, float *out, rk_grid_pos p) {\n"
                             "    out[rk_pos_idx(p)] = rk_at(p, in, 2, 0);\n"
                             "}\n",
     RK_TRANSPILE_STENCIL, 1, {"3:26: error: stencil 's': this access reaches 2 cells away, beyond the halo of 1"}},
    {"grid position misuse", STENCIL "static float get(rk_grid_pos q, const float *b) { return b[0]; }\n"
                                     "RK_KERNEL void s(const float *in, float *out, rk_grid_pos p) {\n"
                                     "    rk_grid_pos copy = p;\n"
                                     "    out[rk_pos_idx(p)] = in[0];\n"
                                     "}\n",
     0, 0, {"4:17: error: rk_grid_pos can only be a stencil kernel's parameter",
            "4:24: error: the grid position 'p' can only be passed to the rk_* stencil functions",
            "2:30: error: rk_grid_pos can only be a parameter of a stencil kernel (RK_KERNEL)"}},
    {"requested kind", DSL "RK_KERNEL void k(int *d) { d[0] = 1; }\n", RK_TRANSPILE_STENCIL, 0,
     {"2:16: error: 'k' is a global kernel, but the requested kind is stencil"}},
    {"types and qualifiers", DSL "RK_KERNEL void k(const int *in, int *out, float *f) {\n"
                                 "    in[0] = 1;\n"
                                 "    int *p = in;\n"
                                 "    out = f;\n"
                                 "    out[0] = atomic_add_i32(out);\n"
                                 "    out[1] = in->x;\n"
                                 "}\n",
     0, 0, {"3:11: error: cannot assign to this expression: its type is 'const int'",
            "4:14: error: in initialization: 'const int *' to 'int *' discards a qualifier",
            "5:11: error: incompatible pointer types in assignment: 'float *' and 'int *'",
            "6:14: error: 'atomic_add_i32' takes 2 arguments, but 1 was given",
            "7:18: error: member 'x' of something that is not a struct ('const int')"}},
    {"preprocessor", "#include \"missing.h\"\n#if 1\n#elif 2\n#else\n#elif 3\n#endif\n#error stop here\n#if 1\n", 0, 0,
     {"1:2: error: 'missing.h' file not found", "5:2: error: #elif after #else", "7:2: error: #error stop here",
      "8:2: error: unterminated conditional directive",
      "error: no kernel in the source: mark a function with RK_KERNEL or RK_HANDLER"}},
    {"syntax errors recover", DSL "RK_KERNEL void k(int *d) {\n"
                                  "    d[0] = (1 + ;\n"
                                  "    d[1] = 2\n"
                                  "    d[2] = 3;\n"
                                  "}\n"
                                  "int g(int x { return x; }\n"
                                  "RK_KERNEL void k2(int *d) { d[0] = 4 }\n",
     0, 0, {"3:17: error: expected an expression before ';'", "5:5: error: expected ';' before 'd'",
            "7:13: error: expected ',' before '{'", "8:38: error: expected ';' before '}'"}},
    /* Issue 21: a path without return; CUDA names with the DSL's; no libc. */
    {"falling off a non-void function", DSL "int sign(int x) { if (x > 0) return 1; else if (x < 0) return -1; }\n"
                                            "int first(const int *v) { for (int i = 0;; i++) if (v[i]) break; }\n"
                                            "int pick(int x) { switch (x) { case 0: return 1; } }\n"
                                            "int loop(int x) { while (1) { if (x) return x; } }\n"
                                            "int both(int x) { if (x) return 1; else return 2; }\n"
                                            "int all(int x) { switch (x) { case 0: return 1; default: return 2; } }\n"
                                            "int spin(int x) { do { x++; } while (1); }\n"
                                            "int once(int x) { do { return x; } while (0); }\n"
                                            "RK_KERNEL void k(int *o) { o[0] = sign(1) + first(o) + pick(0) + loop(1) "
                                            "+ both(0) + all(0) + spin(0) + once(0); }\n",
     0, 0, {"2:5: error: non-void function 'sign' can reach its end without returning a value",
            "3:5: error: non-void function 'first' can reach its end without returning a value",
            "4:5: error: non-void function 'pick' can reach its end without returning a value"}},
    {"CUDA spellings", DSL "RK_KERNEL void k(int *o) {\n"
                           "    o[threadIdx.x] = blockIdx.x * blockDim.x;\n"
                           "    __syncthreads();\n"
                           "    atomicAdd(o, 1);\n"
                           "}\n"
                           "__global__ void g(int *o) { }\n",
     0, 0, {"3:7: error: use of undeclared identifier 'threadIdx'; the DSL's is thread_idx_x(), thread_idx_y(), thread_idx_z()",
            "3:22: error: use of undeclared identifier 'blockIdx'; the DSL's is block_idx_x(), block_idx_y(), block_idx_z()",
            "3:35: error: use of undeclared identifier 'blockDim'; the DSL's is block_dim_x(), block_dim_y(), block_dim_z()",
            "4:5: error: call to undeclared function '__syncthreads'; the DSL's is sync_threads()",
            "5:5: error: call to undeclared function 'atomicAdd'; the DSL's is atomic_add_i32, atomic_add_u32, "
            "atomic_add_u64 or atomic_add_f32(p, v)",
            "7:1: error: expected a type before '__global__'; the DSL's is RK_KERNEL"}},
    {"C library and CUDA headers", "#include <stdlib.h>\n#include <cuda_runtime.h>\n" DSL
                                   "RK_KERNEL void k(int *o) { o[0] = 1; }\n",
     0, 0, {"1:2: error: 'stdlib.h' file not found: kernels have no C library: <ringkernel/dsl.h> gives them <math.h>, "
            "<stdint.h>, <stddef.h>, <stdbool.h>, <float.h> and <limits.h>, and the DSL's functions",
            "2:2: error: 'cuda_runtime.h' file not found: CUDA headers are not needed: include <ringkernel/dsl.h>, whose "
            "functions the transpiler maps to CUDA"}},
    {"RK_BLOCK_SIZE misuse", STENCIL "RK_KERNEL RK_BLOCK_SIZE(64, 1, 1) void s(const float *in, float *out, rk_grid_pos p) {\n"
                                     "    out[rk_pos_idx(p)] = in[0];\n"
                                     "}\n"
                                     "RK_KERNEL RK_BLOCK_SIZE(64, 32, 1) void big(int *o) { o[0] = 1; }\n"
                                     "RK_DEVICE RK_BLOCK_SIZE(64, 1, 1) int helper(int x) { return x; }\n",
     0, 0, {"2:11: error: RK_BLOCK_SIZE does not apply to a stencil kernel, whose block is its tile",
            "5:11: error: RK_BLOCK_SIZE(64, 32, 1): each size must be at least 1 and the block at most 1024 threads",
            "6:11: error: RK_BLOCK_SIZE marks a kernel (RK_KERNEL), not 'helper'"}},
    {"struct parameters by value that rk_arg cannot carry", DSL "typedef struct P { float x; float *data; } P;\n"
                                                               "typedef struct Q { int n; struct { char c; } in; } Q;\n"
                                                               "RK_KERNEL void k(P p, Q q, float *o) { o[0] = p.x + q.n; }\n",
     0, 0, {"4:20: error: kernel 'k': struct parameter 'p' cannot be passed by value: member 'data' is a pointer: a "
            "buffer's address means something else on every backend, so it cannot travel inside a struct; pass the "
            "buffer as a parameter of its own",
            "4:25: error: kernel 'k': struct parameter 'q' cannot be passed by value: member 'c' is narrower than 32 "
            "bits: struct arguments carry 32- and 64-bit integers, float and double"}},
    {"struct parameters by value", DSL "typedef struct P { float x, y; int n; long long big; double d[2]; } P;\n"
                                       "RK_KERNEL void k(P p, float *o) { o[0] = p.x + (float)p.big; }\n",
     0, 0, {NULL}},
    {"shared memory over CUDA's static limit", DSL "RK_DEVICE float helper(int i) { RK_SHARED float more[4097]; "
                                                   "more[i] = 1.0f; return more[0]; }\n"
                                                   "RK_KERNEL void k(float *o) {\n"
                                                   "    RK_SHARED float big[8192];\n"
                                                   "    big[thread_idx_x()] = helper(1);\n"
                                                   "    o[0] = big[0];\n"
                                                   "}\n",
     0, 0, {"3:16: error: 'k' uses 49156 bytes of shared memory (RK_SHARED); the CUDA target allows 49152 (48 KiB of "
            "static shared memory)"}},
};

/* Issue 18: a barrier that not every thread of the block reaches is refused
 * on every target, at the barrier, naming the branch; a barrier whose loop or
 * branch is uniform in the kernel's meaning is accepted. */
#define NOT_REACHED(what, at) what " is not reached by every thread of the block: the branch at " at " depends on " \
    "the thread index (or an atomic's or warp operation's result), so threads that leave it wait forever (CUDA), " \
    "run undefined (CPU) or make WebGPU refuse the module; move the barrier out of the branch"
static const diag_case every_target_cases[] = {
    {"barriers under branches on the thread index", DSL "RK_DEVICE void wait_all(void) { sync_threads(); }\n"
                                                        "RK_KERNEL void k(int *out, const int *in) {\n"
                                                        "    int t = thread_idx_x();\n"
                                                        "    if (t < 32) sync_threads();\n"
                                                        "    int steps = t * 2;\n"
                                                        "    for (int i = 0; i < steps; i++) sync_threads();\n"
                                                        "    while (1) { if (in[t] > 0) break; wait_all(); }\n"
                                                        "    if (atomic_add_i32(out, 1) == 0) return;\n"
                                                        "    sync_threads();\n"
                                                        "}\n",
     0, 0, {"5:17: error: " NOT_REACHED("sync_threads()", "5:5"), "7:37: error: " NOT_REACHED("sync_threads()", "7:5"),
            "8:39: error: " NOT_REACHED("the call of 'wait_all', which holds a barrier,", "8:17"),
            "10:5: error: " NOT_REACHED("sync_threads()", "9:5")}},
    {"barriers in uniform control flow", DSL "#define MAX 256\n"
                                             "RK_DEVICE int half(int v) { return v / 2; }\n"
                                             "RK_KERNEL void k(int *out, const int *len, int n) {\n"
                                             "    RK_SHARED int part[MAX];\n"
                                             "    int t = thread_idx_x();\n"
                                             "    part[t] = t;\n"
                                             "    if (t == 0) out[0] = 1;\n"
                                             "    sync_threads();\n"
                                             "    for (int s = half(block_dim_x()); s > 0; s >>= 1) {\n"
                                             "        if (t < s) part[t] += part[t + s];\n"
                                             "        sync_threads();\n"
                                             "    }\n"
                                             "    for (int i = 0; i < n * grid_dim_x() + len[0]; i++) sync_threads();\n"
                                             "    if (block_idx_x() > 2) return;\n"
                                             "    sync_threads();\n"
                                             "    out[t] = part[t];\n"
                                             "}\n",
     0, 0, {NULL}},
};

/* Issue 21: what WGSL cannot express is refused, never an invalid module. */
static const diag_case wgsl_cases[] = {
    {"WGSL: a barrier in a helper under a branch on the block index", DSL
     "RK_DEVICE void phase(int k) {\n"
     "    if (block_idx_x() > k) sync_threads();\n"
     "}\n"
     "RK_KERNEL void k(int *o) { phase(1); o[0] = 1; }\n",
     0, 0, {"3:28: error: sync_threads() under the branch at 3:5, which depends on a value read from a writable buffer "
            "or shared memory, or on block_idx_*() or grid_dim_*() in a helper: WGSL requires barriers in uniform "
            "control flow and counts such reads as non-uniform; branch on parameters, block_idx_*(), block_dim_*() or "
            "grid_dim_*() in the kernel instead (WGSL target)"}},
    {"WGSL: a barrier under a branch on a writable buffer or shared memory", DSL
     "RK_KERNEL void k(int *flags) {\n"
     "    RK_SHARED int go[1];\n"
     "    if (thread_idx_x() == 0) go[0] = flags[0];\n"
     "    sync_threads();\n"
     "    if (go[0] > 0) sync_threads();\n"
     "    while (flags[1] > 0) { sync_threads(); flags[1] = 0; }\n"
     "}\n",
     0, 0, {"6:20: error: sync_threads() under the branch at 6:5, which depends on a value read from a writable buffer "
            "or shared memory: WGSL requires barriers in uniform control flow and counts such reads as non-uniform; "
            "branch on parameters, block_idx_*(), block_dim_*() or grid_dim_*() instead (WGSL target)",
            "7:28: error: sync_threads() under the branch at 7:5, which depends on a value read from a writable buffer "
            "or shared memory: WGSL requires barriers in uniform control flow and counts such reads as non-uniform; "
            "branch on parameters, block_idx_*(), block_dim_*() or grid_dim_*() instead (WGSL target)"}},
    {"WGSL: shared memory over the default workgroup storage", DSL "RK_KERNEL void k(float *o) {\n"
                                                               "    RK_SHARED float tile[4097];\n"
                                                               "    tile[thread_idx_x()] = 1.0f;\n"
                                                               "    o[0] = tile[0];\n"
                                                               "}\n",
     0, 0, {"2:16: error: 'k' uses 16388 bytes of shared memory (RK_SHARED); the WGSL target allows 16384 (WebGPU's "
            "default maxComputeWorkgroupStorageSize)"}},
    {"WGSL: atomics on a struct member in a buffer", DSL "typedef struct Cell { int count; float w; } Cell;\n"
                                                         "RK_KERNEL void k(Cell *cells) {\n"
                                                         "    atomic_add_i32(&cells[thread_idx_x()].count, 1);\n"
                                                         "}\n",
     0, 0, {"4:5: error: atomic_add_i32 on a member of a struct in a buffer or shared memory is not available (WGSL "
            "target); keep the counter in its own int or uint buffer"}},
    {"WGSL: pointers as integers", DSL "RK_KERNEL void k(int *out) {\n"
                                       "    int local = 3;\n"
                                       "    out[0] = (int)(long)&local;\n"
                                       "    if (out) out[1] = 1;\n"
                                       "    int *p = (int *)64;\n"
                                       "}\n",
     0, 0, {"4:25: error: converting a pointer to an integer is not available (WGSL pointers have no address) (WGSL target)",
            "5:9: error: testing a pointer against null is not available (WGSL pointers are never null) (WGSL target)",
            "6:10: error: a local pointer must be initialised with the address of a local variable or array (WGSL target)"}},
    /* A whole ?: arm that is an assignment or ++/-- runs as a statement
     * (regress_ternary_atomic.c); inside a larger expression it is refused. */
    {"WGSL: ++ and assignments inside && / || and inside an arm", DSL "RK_KERNEL void k(const int *v, int *out) {\n"
                                                                      "    int i = thread_idx_x(), pre = 0, q = 0;\n"
                                                                      "    int c = v[i] > 90 || ++pre;\n"
                                                                      "    int d = v[i] > 90 && (q = v[i]);\n"
                                                                      "    int e = v[i] > 90 ? pre++ + 1 : 0;\n"
                                                                      "    out[i] = c + d + e + pre + q;\n"
                                                                      "}\n",
     0, 0, {"4:26: error: an assignment or ++/-- inside an expression is not available; write it as its own statement "
            "(WGSL target)",
            "5:29: error: an assignment or ++/-- inside an expression is not available; write it as its own statement "
            "(WGSL target)",
            "6:28: error: an assignment or ++/-- inside an expression is not available; write it as its own statement "
            "(WGSL target)"}},
    {"WGSL: a buffer element passed by pointer", DSL "RK_DEVICE void inc(int *p) { *p += 1; }\n"
                                                     "RK_KERNEL void k(int *out) { inc(&out[2]); }\n",
     0, 0, {"3:34: error: a pointer into a buffer or shared memory cannot be passed to a function; pass the buffer and "
            "an index, or copy the value into a local (WGSL target)"}},
};

static char *format_diag(const rk_diagnostic *d) {
    static const char *const sev[] = {"error", "warning", "note"};
    char *s = NULL;
    int n;
    if (d->line)
        n = asprintf(&s, "%u:%u: %s: %s", d->line, d->column, sev[d->severity], d->message);
    else
        n = asprintf(&s, "%s: %s", sev[d->severity], d->message);
    CHECK(n > 0);
    return s;
}

static int run_case(const diag_case *c, rk_transpile_target target, bool print) {
    rk_transpile_desc d = {.source = c->source, .path = "diag.c", .no_file_system = true, .kind = c->kind,
                           .target = target};
    d.stencil.halo = c->halo;
    rk_transpile_result *r = NULL;
    rk_status s = rk_transpile(&d, &r);
    CHECK(r != NULL);
    int failures = 0;
    size_t expected = 0;
    while (expected < 8 && c->expected[expected]) expected++;
    size_t got = rk_transpile_diagnostic_count(r);
    if (print) printf("== %s (%s)\n", c->name, rk_status_name(s));
    for (size_t i = 0; i < got || i < expected; i++) {
        char *line = i < got ? format_diag(rk_transpile_diagnostic(r, i)) : NULL;
        if (print && line) printf("   %s\n", line);
        if (i >= expected || !line || strcmp(line, c->expected[i]) != 0) {
            fprintf(stderr, "%s: diagnostic %zu\n  expected: %s\n  got:      %s\n", c->name, i,
                    i < expected ? c->expected[i] : "(none)", line ? line : "(none)");
            failures++;
        }
        free(line);
    }
    if (expected && s != RK_PARSE_ERROR) {
        fprintf(stderr, "%s: status %s, expected RK_PARSE_ERROR\n", c->name, rk_status_name(s));
        failures++;
    }
    if (failures) fprintf(stderr, "%s", rk_transpile_diagnostics_text(r));
    rk_transpile_result_destroy(r);
    return failures;
}

/* The rendered form: location, message, the source line and a caret under the column. */
static void rendered_text(void) {
    const char *src = DSL "RK_KERNEL void k(float *d) {\n\tfloat x = undefined_thing + 1.0f;\n\td[0] = x;\n}\n";
    rk_transpile_desc d = {.source = src, .path = "render.c", .no_file_system = true};
    rk_transpile_result *r = NULL;
    CHECK_STATUS(rk_transpile(&d, &r), RK_PARSE_ERROR);
    const char *text = rk_transpile_diagnostics_text(r);
    const char *want = "render.c:3:12: error: use of undeclared identifier 'undefined_thing'\n"
                       "  \tfloat x = undefined_thing + 1.0f;\n"
                       "  \t          ^\n"
                       "1 error generated.\n";
    if (strcmp(text, want) != 0) {
        fprintf(stderr, "rendered diagnostics differ:\n--- want\n%s--- got\n%s", want, text);
        exit(1);
    }
    /* rk_last_error carries the same text for callers that only see the status. */
    CHECK_STR_CONTAINS(rk_last_error(), "render.c:3:12: error: use of undeclared identifier 'undefined_thing'");
    rk_transpile_result_destroy(r);
}

/* Many errors in one source: every one is reported, and the count stops at a limit. */
static void many_errors(void) {
    char src[16384] = DSL "RK_KERNEL void k(int *d) {\n";
    for (int i = 0; i < 80; i++) strcat(src, "    d[0] = nope;\n");
    strcat(src, "}\n");
    rk_transpile_desc d = {.source = src, .path = "many.c", .no_file_system = true};
    rk_transpile_result *r = NULL;
    CHECK_STATUS(rk_transpile(&d, &r), RK_PARSE_ERROR);
    CHECK_GE(rk_transpile_error_count(r), 20);
    CHECK_STR_CONTAINS(rk_transpile_diagnostics_text(r), "too many errors; stopping");
    rk_transpile_result_destroy(r);
}

int main(void) {
    bool print = getenv("RK_PRINT_DIAGS") != NULL;
    int failures = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) failures += run_case(&cases[i], RK_TARGET_CUDA, print);
    for (size_t i = 0; i < sizeof wgsl_cases / sizeof wgsl_cases[0]; i++)
        failures += run_case(&wgsl_cases[i], RK_TARGET_WGSL, print);
    for (size_t i = 0; i < sizeof every_target_cases / sizeof every_target_cases[0]; i++) {
        failures += run_case(&every_target_cases[i], RK_TARGET_CUDA, print);
        failures += run_case(&every_target_cases[i], RK_TARGET_WGSL, print);
    }
    rendered_text();
    many_errors();
    if (failures) fprintf(stderr, "%d mismatches\n", failures);
    return failures ? 1 : 0;
}
