/* The executors of the differential tests (diff.h): how one DSL program runs
 * on the CPU backend, as CUDA C++ compiled for the host, as WGSL on WebGPU
 * and as CUDA on a GPU. */
#include <dlfcn.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diff.h"
#include "diff_text.h"
#include "msl_host.h"
#include "ringkernel/dsl.h"
#include "ringkernel/transpile.h"
#include "support/read_file.h"

#ifndef RK_DIFF_CXX
#define RK_DIFF_CXX "g++"
#endif
#ifndef RK_MSL_CXX
#define RK_MSL_CXX "clang++"
#endif

struct diff_env {
    rk_context *ctx[DIFF_EXEC_COUNT]; /* cuda-host and msl-host share the cpu context */
    bool present[DIFF_EXEC_COUNT];
    char dir[256];                    /* scratch: generated sources and logs */
    char objects[300];                /* cuda-host objects, named by a hash of what built them */
    uint64_t salt;                    /* hash of the shim and dsl.h */
    unsigned serial;
    const char *msl_find, *msl_replace; /* diff_env_set_msl_mutation */
};

void diff_env_set_msl_mutation(diff_env *env, const char *find, const char *replace) {
    env->msl_find = find;
    env->msl_replace = replace;
}

static const char *const exec_names[DIFF_EXEC_COUNT] = {"cpu", "cuda-host", "wgsl", "cuda-gpu", "msl-host"};

const char *diff_exec_name(diff_exec_id id) { return exec_names[id]; }

size_t diff_type_size(diff_type t) {
    static const size_t sizes[] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8};
    return sizes[t];
}

bool diff_exec_present(const diff_env *env, diff_exec_id id) { return env->present[id]; }

/* ---- opening ------------------------------------------------------------------------- */

static rk_context *open_backend(const char *name, bool quiet) {
    const rk_backend *b = NULL;
    uint32_t count = 0;
    rk_context *ctx = NULL;
    if (rk_backend_find(name, &b) != RK_OK || rk_backend_device_count(b, &count) != RK_OK || count == 0 ||
        rk_context_create(b, 0, &ctx) != RK_OK) {
        if (!quiet)
            printf("NOTE: executor on the %s backend skipped: %s\n", name,
                   b ? rk_backend_unavailable_reason(b) : "backend not built");
        return NULL;
    }
    return ctx;
}

static uint64_t fnv1a(uint64_t h, const char *s) {
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

static uint64_t hash_file(uint64_t h, const char *path) {
    size_t size = 0;
    char *text = rk_test_read_file(path, &size);
    h = fnv1a(h, text ? text : path);
    free(text);
    return h;
}

diff_env *diff_env_open(bool quiet, bool private_cache) {
    diff_env *env = calloc(1, sizeof *env);
    if (!env) return NULL;
    const char *tmp = getenv("TMPDIR");
    snprintf(env->dir, sizeof env->dir, "%s/rk-diff-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(env->dir)) {
        perror("mkdtemp");
        free(env);
        return NULL;
    }
    const char *shared = getenv("RK_CACHE_DIR");
    if (private_cache || !shared || !*shared) {
        /* Random programs are compiled once: keep them out of the shared cache. */
        char cache[300];
        snprintf(cache, sizeof cache, "%s/cache", env->dir);
        setenv("RK_CACHE_DIR", cache, 1);
        snprintf(env->objects, sizeof env->objects, "%s", env->dir);
    } else {
        snprintf(env->objects, sizeof env->objects, "%s/cuda-host", shared);
        mkdir(shared, 0755);
        mkdir(env->objects, 0755);
    }
    env->salt = hash_file(hash_file(0xcbf29ce484222325ull, RK_SOURCE_DIR "/tests/transpile/diff/cuda_host_shim.h"),
                          RK_SOURCE_DIR "/include/ringkernel/dsl.h");
    env->salt = hash_file(env->salt, RK_SOURCE_DIR "/tests/metal/shim/metal_stdlib");
    env->ctx[DIFF_CPU] = open_backend("cpu", quiet);
    env->present[DIFF_CPU] = env->ctx[DIFF_CPU] != NULL;
    char probe[400];
    snprintf(probe, sizeof probe, "%s --version >/dev/null 2>&1", RK_DIFF_CXX);
    env->present[DIFF_CUDA_HOST] = env->present[DIFF_CPU] && system(probe) == 0;
    if (!env->present[DIFF_CUDA_HOST] && !quiet)
        printf("NOTE: executor cuda-host skipped: no C++ compiler (%s)\n", RK_DIFF_CXX);
    env->ctx[DIFF_CUDA_HOST] = env->ctx[DIFF_CPU];
    snprintf(probe, sizeof probe, "%s --version >/dev/null 2>&1", RK_MSL_CXX);
    env->present[DIFF_MSL_HOST] = env->present[DIFF_CPU] && system(probe) == 0;
    if (!env->present[DIFF_MSL_HOST] && !quiet)
        printf("NOTE: executor msl-host skipped: no clang++ (%s; scripts/install-deps.sh installs it)\n", RK_MSL_CXX);
    env->ctx[DIFF_MSL_HOST] = env->ctx[DIFF_CPU];
    env->ctx[DIFF_WGSL] = open_backend("webgpu", quiet);
    env->present[DIFF_WGSL] = env->ctx[DIFF_WGSL] != NULL;
    env->ctx[DIFF_CUDA_GPU] = open_backend("cuda", quiet);
    env->present[DIFF_CUDA_GPU] = env->ctx[DIFF_CUDA_GPU] != NULL;
    return env;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

void diff_env_close(diff_env *env) {
    if (!env) return;
    for (int i = 0; i < DIFF_EXEC_COUNT; i++)
        if (env->ctx[i] && i != DIFF_CUDA_HOST && i != DIFF_MSL_HOST) rk_context_destroy(env->ctx[i]);
    nftw(env->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(env);
}

/* ---- the program's entry points -------------------------------------------------------- */

static const rk_transpiled_kernel *find_kernel(const rk_transpile_result *r, const char *name) {
    for (size_t i = 0; i < rk_transpile_kernel_count(r); i++)
        if (strcmp(rk_transpile_kernel(r, i)->name, name) == 0) return rk_transpile_kernel(r, i);
    return NULL;
}

static rk_status transpile(const diff_program *p, rk_transpile_target target, rk_transpile_result **r) {
    rk_transpile_desc d = {.source = p->source, .path = p->name, .target = target, .no_file_system = true};
    return rk_transpile(&d, r);
}

/* The name a launch calls on an executor: the entry point, or its driver. */
static void launch_name(const diff_launch *l, rk_transpile_kind kind, diff_exec_id id, char *out, size_t size) {
    if (kind == RK_TRANSPILE_HANDLER)
        snprintf(out, size, "rk_diff_handler_%s", l->kernel);
    else if (kind == RK_TRANSPILE_STENCIL && id == DIFF_CPU)
        snprintf(out, size, "rk_diff_stencil_%s", l->kernel);
    else
        snprintf(out, size, "%s", l->kernel);
}

/* The text of NAME's parameter list in the source ("const float *in, rk_grid_pos p"). */
static bool parameter_text(const char *src, const char *name, const char **begin, const char **end) {
    size_t n = strlen(name);
    for (const char *s = strstr(src, name); s; s = strstr(s + 1, name)) {
        const char *after = s + n;
        while (*after == ' ' || *after == '\t' || *after == '\n') after++;
        bool word_start = s == src || !(s[-1] == '_' || (s[-1] >= 'a' && s[-1] <= 'z') || (s[-1] >= 'A' && s[-1] <= 'Z') ||
                                        (s[-1] >= '0' && s[-1] <= '9'));
        if (!word_start || *after != '(') continue;
        const char *line = s;
        while (line > src && line[-1] != '\n') line--;
        if (strncmp(line, "RK_KERNEL", 9) != 0) continue;
        int depth = 0;
        for (const char *c = after; *c; c++) {
            if (*c == '(') depth++;
            if (*c == ')' && --depth == 0) {
                *begin = after + 1;
                *end = c;
                return true;
            }
        }
    }
    return false;
}

/* A CPU driver for a stencil: every cell, through dsl_stencil.h's iterator. */
static bool stencil_driver(diff_text *b, const char *src, const char *name) {
    const char *begin, *end;
    if (!parameter_text(src, name, &begin, &end)) return false;
    diff_text params = {0}, call = {0};
    const char *start = begin;
    for (const char *c = begin; c <= end; c++) {
        if (c != end && *c != ',') continue;
        const char *last = c;
        while (last > start && !(last[-1] == '_' || (last[-1] >= 'a' && last[-1] <= 'z') ||
                                 (last[-1] >= 'A' && last[-1] <= 'Z') || (last[-1] >= '0' && last[-1] <= '9')))
            last--;
        const char *id = last;
        while (id > start && (id[-1] == '_' || (id[-1] >= 'a' && id[-1] <= 'z') || (id[-1] >= 'A' && id[-1] <= 'Z') ||
                              (id[-1] >= '0' && id[-1] <= '9')))
            id--;
        bool pos = memmem(start, (size_t)(c - start), "rk_grid_pos", 11) != NULL;
        diff_text_printf(&call, "%s%s", call.len ? ", " : "", pos ? "rk_diff_p" : "");
        if (!pos) {
            diff_text_printf(&call, "%.*s", (int)(last - id), id);
            diff_text_printf(&params, "%.*s, ", (int)(c - start), start);
        }
        start = c + 1;
    }
    diff_text_printf(b,
              "\n#include <ringkernel/dsl_stencil.h>\n"
              "RK_KERNEL void rk_diff_stencil_%s(%sint rk_diff_nx, int rk_diff_ny, int rk_diff_nz) {\n"
              "    rk_stencil_for_each(rk_diff_p, rk_diff_nx, rk_diff_ny, rk_diff_nz) %s(%s);\n}\n",
              name, params.s ? params.s : "", name, call.s);
    free(params.s);
    free(call.s);
    return true;
}

/* Drivers: handlers called for messages 0..n-1 in order by one thread. */
static void handler_driver(diff_text *b, diff_exec_id id, const rk_transpiled_kernel *k) {
    const char *n = k->name;
    switch (id) {
    case DIFF_CPU:
        diff_text_printf(b,
                  "\nRK_KERNEL void rk_diff_handler_%s(const unsigned char *in, unsigned char *out, unsigned char *st, "
                  "int *rc, int n) {\n"
                  "    for (int i = 0; i < n; i++)\n"
                  "        rc[i] = %s((const void *)(in + (size_t)i * %u), (void *)(out + (size_t)i * %u), (void *)st);\n}\n",
                  n, n, k->request_size, k->reply_size);
        break;
    case DIFF_CUDA_HOST:
    case DIFF_CUDA_GPU:
        diff_text_printf(b,
                  "\ntemplate <typename Q, typename R, typename S>\n"
                  "static __device__ void rk_diff_drive_%s(int (*h)(const Q *, R *, S *), const unsigned char *in, "
                  "unsigned char *out, unsigned char *st, int *rc, int n) {\n"
                  "    for (int i = 0; i < n; i++)\n"
                  "        rc[i] = h((const Q *)(in + (size_t)i * sizeof(Q)), (R *)(out + (size_t)i * sizeof(R)), (S *)st);\n}\n"
                  "extern \"C\" __global__ void rk_diff_handler_%s(const unsigned char *in, unsigned char *out, "
                  "unsigned char *st, int *rc, int n) {\n    rk_diff_drive_%s(%s, in, out, st, rc, n);\n}\n",
                  n, n, n, n);
        break;
    case DIFF_WGSL:
        diff_text_printf(b,
                  "\n@group(0) @binding(0) var<storage, read> rk_in: array<u32>;\n"
                  "@group(0) @binding(1) var<storage, read_write> rk_out: array<u32>;\n"
                  "@group(0) @binding(2) var<storage, read_write> rk_state: array<u32>;\n"
                  "@group(0) @binding(3) var<storage, read_write> rk_diff_rc: array<i32>;\n"
                  "struct rk_diff_args_%s { n: i32, }\n"
                  "@group(0) @binding(4) var<uniform> rk_diff_args_%s_v: rk_diff_args_%s;\n"
                  "@compute @workgroup_size(1) fn rk_diff_handler_%s() {\n"
                  "    for (var i: u32 = 0u; i < u32(rk_diff_args_%s_v.n); i++) {\n"
                  "        rk_diff_rc[i] = rk_handle_%s(i * %uu, i * %uu);\n    }\n}\n",
                  n, n, n, n, n, n, k->request_size / 4, k->reply_size / 4);
        break;
    default: break;
    }
}

/* ---- building each executor's module ----------------------------------------------------- */

typedef struct built {
    rk_module *module;
    void *object; /* dlopen'ed CUDA-host object */
    rk_transpile_result *target;
} built;

static void why_printf(char *why, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void why_printf(char *why, size_t size, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, size, fmt, ap);
    va_end(ap);
}

static char *read_text(const char *path) {
    size_t size = 0;
    char *t = rk_test_read_file(path, &size);
    return t ? t : strdup("(no log)");
}

/* How a host executor compiles its target's output. */
typedef struct host_compiler {
    const char *cxx, *flags, *language; /* language: for messages */
    const char *symbol_prefix;          /* the object's name for a launch's function */
} host_compiler;

/* The compiler with the shim, then the object's kernels as a CPU module. */
static diff_outcome build_host_object(diff_env *env, const diff_program *p, const char *code,
                                      const rk_transpile_result *cuda, const host_compiler *hc, built *out, char *why,
                                      size_t why_size) {
    char src[400], obj[400], tmp[500], log[400], cmd[3000];
    unsigned serial = env->serial++;
    snprintf(src, sizeof src, "%s/p%u.cu", env->dir, serial);
    snprintf(log, sizeof log, "%s/p%u.log", env->dir, serial);
    const char *flags = hc->flags;
    snprintf(obj, sizeof obj, "%s/%016llx.so", env->objects,
             (unsigned long long)fnv1a(fnv1a(fnv1a(env->salt, hc->cxx), flags), code));
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", obj, (long)getpid(), serial);
    if (access(obj, R_OK) != 0) { /* not built before */
        FILE *f = fopen(src, "w");
        if (!f || fputs(code, f) < 0 || fclose(f) != 0) {
            why_printf(why, why_size, "cannot write %s", src);
            return DIFF_FAILED;
        }
        snprintf(cmd, sizeof cmd, "%s %s %s -o %s >%s 2>&1", hc->cxx, flags, src, tmp, log);
        if (system(cmd) != 0 || rename(tmp, obj) != 0) {
            char *text = read_text(log);
            why_printf(why, why_size, "%s rejected the %s output:\n%s\n--- %s ---\n%s", hc->cxx, hc->language, text,
                       hc->language, code);
            free(text);
            unlink(tmp);
            return DIFF_FAILED;
        }
    }
    out->object = dlopen(obj, RTLD_NOW | RTLD_LOCAL);
    const rk_dsl_runtime **slot = out->object ? dlsym(out->object, "rk__dsl_runtime") : NULL;
    if (!slot) {
        why_printf(why, why_size, "cannot load %s: %s", obj, dlerror());
        return DIFF_FAILED;
    }
    *slot = rk__dsl_runtime;
    rk_host_kernel kernels[DIFF_MAX_LAUNCHES];
    char names[DIFF_MAX_LAUNCHES][128];
    for (size_t i = 0; i < p->launch_count; i++) {
        launch_name(&p->launches[i], find_kernel(cuda, p->launches[i].kernel)->kind, DIFF_CUDA_HOST, names[i],
                    sizeof names[i]);
        kernels[i].name = names[i];
        char symbol[200];
        snprintf(symbol, sizeof symbol, "%s%s", hc->symbol_prefix, names[i]);
        void *sym = dlsym(out->object, symbol);
        memcpy(&kernels[i].fn, &sym, sizeof sym); /* POSIX: a function's address as a data pointer */
        if (!sym) {
            why_printf(why, why_size, "the %s output defines no kernel '%s'", hc->language, symbol);
            return DIFF_FAILED;
        }
    }
    if (rk_module_from_host_kernels(env->ctx[DIFF_CPU], kernels, p->launch_count, &out->module) != RK_OK) {
        why_printf(why, why_size, "rk_module_from_host_kernels: %s", rk_last_error());
        return DIFF_FAILED;
    }
    return DIFF_RAN;
}

static diff_outcome build(diff_env *env, diff_exec_id id, const diff_program *p, const rk_transpile_result *cuda,
                          built *out, char *why, size_t why_size) {
    diff_text code = {0};
    diff_outcome o = DIFF_RAN;
    if (id == DIFF_CPU) {
        diff_text_printf(&code, "%s\n", p->source);
    } else {
        rk_transpile_target t = id == DIFF_WGSL ? RK_TARGET_WGSL : id == DIFF_MSL_HOST ? RK_TARGET_MSL : RK_TARGET_CUDA;
        if (transpile(p, t, &out->target) != RK_OK) {
            const char *text = out->target ? rk_transpile_diagnostics_text(out->target) : rk_last_error();
            why_printf(why, why_size, "%s", text);
            return strstr(text, "(WGSL target)") || strstr(text, "(MSL target)") ? DIFF_REFUSED : DIFF_FAILED;
        }
        if (id == DIFF_MSL_HOST)
            msl_host_rewrite(&code, rk_transpile_output(out->target, NULL), env->msl_find, env->msl_replace);
        else
            diff_text_printf(&code, "%s\n", rk_transpile_output(out->target, NULL));
    }
    /* One driver per entry point that needs one. */
    for (size_t i = 0; i < p->launch_count; i++) {
        const diff_launch *l = &p->launches[i];
        bool seen = false;
        for (size_t j = 0; j < i; j++) seen |= strcmp(p->launches[j].kernel, l->kernel) == 0;
        const rk_transpiled_kernel *k = find_kernel(cuda, l->kernel);
        if (seen || !k) continue;
        if (id == DIFF_MSL_HOST) {
            char name[160];
            launch_name(l, k->kind, id, name, sizeof name);
            if (!msl_host_wrapper(&code, rk_transpile_output(out->target, NULL), l->kernel, name,
                                  k->kind == RK_TRANSPILE_HANDLER)) {
                why_printf(why, why_size, "the MSL output has no kernel for '%s'", l->kernel);
                o = DIFF_FAILED;
            }
            continue;
        }
        if (k->kind == RK_TRANSPILE_HANDLER) handler_driver(&code, id, k);
        if (k->kind == RK_TRANSPILE_STENCIL && id == DIFF_CPU && !stencil_driver(&code, p->source, l->kernel)) {
            why_printf(why, why_size, "no 'RK_KERNEL void %s(' at the start of a line", l->kernel);
            o = DIFF_FAILED;
        }
    }
    if (o == DIFF_RAN) {
        if (id == DIFF_CUDA_HOST || id == DIFF_MSL_HOST) {
            char flags[1200];
            diff_text msl_flags = {0};
            msl_host_flags(&msl_flags, RK_SOURCE_DIR);
            if (id == DIFF_CUDA_HOST)
                snprintf(flags, sizeof flags,
                         "-std=c++17 -O1 -fPIC -shared -w -fno-strict-aliasing -include "
                         "%s/tests/transpile/diff/cuda_host_shim.h -I%s/include -x c++",
                         RK_SOURCE_DIR, RK_SOURCE_DIR);
            else
                snprintf(flags, sizeof flags, "-O1 -fPIC -shared -fno-strict-aliasing %s", msl_flags.s);
            free(msl_flags.s);
            const host_compiler hc = id == DIFF_CUDA_HOST ? (host_compiler){RK_DIFF_CXX, flags, "CUDA", ""}
                                                           : (host_compiler){RK_MSL_CXX, flags, "MSL", "rk_msl_host_"};
            o = build_host_object(env, p, code.s, cuda, &hc, out, why, why_size);
        } else {
            char include[300];
            snprintf(include, sizeof include, "%s/include", RK_SOURCE_DIR);
            const char *dirs[] = {include};
            rk_compile_options opts = {.include_dirs = dirs, .include_dir_count = 1};
            if (rk_module_compile(env->ctx[id], code.s, id == DIFF_CPU ? &opts : NULL, &out->module) != RK_OK) {
                why_printf(why, why_size, "the %s backend rejected the program: %s\n--- source ---\n%s", diff_exec_name(id),
                           rk_last_error(), code.s);
                o = DIFF_FAILED;
            }
        }
    }
    free(code.s);
    return o;
}

static void built_free(built *b) {
    if (b->module) rk_module_destroy(b->module);
    if (b->object) dlclose(b->object);
    if (b->target) rk_transpile_result_destroy(b->target);
}

/* ---- running --------------------------------------------------------------------------- */

static diff_outcome launch_all(diff_env *env, diff_exec_id id, const diff_program *p, const rk_transpile_result *cuda,
                               const built *b, rk_buffer *bufs[], char *why, size_t why_size) {
    for (size_t i = 0; i < p->launch_count; i++) {
        const diff_launch *l = &p->launches[i];
        const rk_transpiled_kernel *k = find_kernel(cuda, l->kernel);
        const rk_transpiled_kernel *tk = id == DIFF_WGSL ? find_kernel(b->target, l->kernel) : k;
        char name[160];
        launch_name(l, k->kind, id, name, sizeof name);
        rk_arg args[DIFF_MAX_ARGS + 3];
        size_t n = 0;
        for (size_t a = 0; a < l->arg_count; a++)
            args[n++] = l->args[a].buffer >= 0 ? RK_ARG_BUF(bufs[l->args[a].buffer]) : l->args[a].scalar;
        rk_launch_desc d = {.grid = l->grid, .block = l->block};
        if (k->kind == RK_TRANSPILE_STENCIL) {
            if (id == DIFF_CPU) {
                for (int c = 0; c < 3; c++) args[n++] = RK_ARG_INT(l->cells[c]);
                d.grid = d.block = (rk_dim3){1, 1, 1};
            } else {
                for (uint32_t c = 0; c < tk->dims; c++) args[n++] = RK_ARG_INT(l->cells[c]);
                d.block = (rk_dim3){tk->tile[0], tk->tile[1], tk->tile[2]};
                d.grid = (rk_dim3){(l->cells[0] + tk->tile[0] - 1) / tk->tile[0],
                                   (l->cells[1] + tk->tile[1] - 1) / tk->tile[1],
                                   (l->cells[2] + tk->tile[2] - 1) / tk->tile[2]};
            }
        } else if (k->kind == RK_TRANSPILE_HANDLER) {
            d.grid = d.block = (rk_dim3){1, 1, 1};
        }
        d.args = args;
        d.arg_count = n;
        rk_function *f = NULL;
        if (rk_module_get_function(b->module, name, &f) != RK_OK || rk_launch(f, &d) != RK_OK ||
            rk_context_synchronize(env->ctx[id]) != RK_OK) {
            why_printf(why, why_size, "launch %zu of '%s' failed: %s", i, name, rk_last_error());
            return DIFF_FAILED;
        }
    }
    return DIFF_RAN;
}

diff_outcome diff_run(diff_env *env, diff_exec_id id, const diff_program *p, void *outputs[], char *why,
                      size_t why_size) {
    why[0] = '\0';
    if (!env->present[id]) {
        why_printf(why, why_size, "%s executor not present", diff_exec_name(id));
        return DIFF_UNAVAILABLE;
    }
    rk_transpile_result *cuda = NULL;
    if (transpile(p, RK_TARGET_CUDA, &cuda) != RK_OK) {
        why_printf(why, why_size, "the program does not transpile:\n%s",
                   cuda ? rk_transpile_diagnostics_text(cuda) : rk_last_error());
        rk_transpile_result_destroy(cuda);
        return DIFF_FAILED;
    }
    for (size_t i = 0; i < p->launch_count; i++)
        if (!find_kernel(cuda, p->launches[i].kernel)) {
            why_printf(why, why_size, "the program has no entry point '%s'", p->launches[i].kernel);
            rk_transpile_result_destroy(cuda);
            return DIFF_FAILED;
        }
    built b = {0};
    diff_outcome o = build(env, id, p, cuda, &b, why, why_size);
    rk_buffer *bufs[DIFF_MAX_BUFFERS] = {0};
    rk_context *ctx = env->ctx[id];
    for (size_t i = 0; o == DIFF_RAN && i < p->buffer_count; i++) {
        const diff_buffer *d = &p->buffers[i];
        size_t bytes = d->count * diff_type_size(d->type);
        void *zero = d->init ? NULL : calloc(1, bytes + 4);
        if (rk_buffer_alloc(ctx, bytes ? bytes : 4, &bufs[i]) != RK_OK ||
            (bytes && rk_copy_to_device(ctx, bufs[i], 0, d->init ? d->init : zero, bytes, NULL) != RK_OK)) {
            why_printf(why, why_size, "buffer '%s': %s", d->name, rk_last_error());
            o = DIFF_FAILED;
        }
        free(zero);
    }
    if (o == DIFF_RAN) o = launch_all(env, id, p, cuda, &b, bufs, why, why_size);
    for (size_t i = 0; o == DIFF_RAN && i < p->buffer_count; i++) {
        size_t bytes = p->buffers[i].count * diff_type_size(p->buffers[i].type);
        outputs[i] = calloc(1, bytes + 1);
        if (bytes && rk_copy_to_host(ctx, outputs[i], bufs[i], 0, bytes, NULL) != RK_OK) {
            why_printf(why, why_size, "reading '%s': %s", p->buffers[i].name, rk_last_error());
            o = DIFF_FAILED;
        }
    }
    if (o == DIFF_RAN && rk_context_synchronize(ctx) != RK_OK) {
        why_printf(why, why_size, "synchronize: %s", rk_last_error());
        o = DIFF_FAILED;
    }
    if (o != DIFF_RAN) diff_free_outputs(p, outputs);
    for (size_t i = 0; i < p->buffer_count; i++)
        if (bufs[i]) rk_buffer_free(bufs[i]);
    built_free(&b);
    rk_transpile_result_destroy(cuda);
    return o;
}

void diff_free_outputs(const diff_program *p, void *outputs[]) {
    for (size_t i = 0; i < p->buffer_count; i++) {
        free(outputs[i]);
        outputs[i] = NULL;
    }
}

/* LeakSanitizer: Mesa's lavapipe keeps small allocations per compiled shader
 * (the wgsl executor compiles hundreds); they are the driver's, not ours. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:libvulkan_lvp.so\n"; }
