/* Modules: a shared object built from DSL source and loaded with dlopen, or a
 * table of functions compiled into the host program. Functions are looked up
 * once per name and kept until the module is destroyed. */
#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_compile_internal.h"
#include "ringkernel/dsl.h"

typedef struct cpu_module {
    struct rk_module base;
    void *handle;             /* dlopen'ed object, or NULL for host kernels */
    struct link_map *map;     /* tells the object's own symbols from its libraries' */
    rk_host_kernel *kernels;  /* host kernels, names copied */
    size_t kernel_count;
    pthread_mutex_t lock;     /* functions */
    rk__cpu_function *functions;
} cpu_module;

/* A function defined by the module itself: not libc's printf, not a variable. */
static bool own_function(cpu_module *m, void *sym) {
    Dl_info info;
    struct link_map *map = NULL;
    const ElfW(Sym) *entry = NULL;
    if (!dladdr1(sym, &info, (void **)&map, RTLD_DL_LINKMAP) || map != m->map) return false;
    if (!dladdr1(sym, &info, (void **)&entry, RTLD_DL_SYMENT) || !entry) return false;
    int type = entry->st_info & 0xf; /* ELF{32,64}_ST_TYPE */
    return type == STT_FUNC || type == STT_GNU_IFUNC;
}

static rk_status resolve(cpu_module *m, const char *name, void (**fn)(void)) {
    if (m->handle) {
        void *sym = dlsym(m->handle, name);
        if (sym && own_function(m, sym)) {
            *fn = (void (*)(void))(uintptr_t)sym;
            return RK_OK;
        }
        return rk__fail(RK_NOT_FOUND, "cpu: the module defines no exported function '%s'", name);
    }
    for (size_t i = 0; i < m->kernel_count; i++) {
        if (strcmp(m->kernels[i].name, name) == 0) {
            *fn = m->kernels[i].fn;
            return RK_OK;
        }
    }
    return rk__fail(RK_NOT_FOUND, "cpu: no host kernel named '%s' in the module (it has %zu)", name, m->kernel_count);
}

static rk_status module_new(rk_context *ctx, cpu_module **out) {
    cpu_module *m = calloc(1, sizeof *m);
    if (!m) return rk__fail(RK_OUT_OF_MEMORY, "cpu: out of memory for a module");
    m->base.ctx = ctx;
    pthread_mutex_init(&m->lock, NULL);
    *out = m;
    return RK_OK;
}

rk_status rk__cpu_module_compile(rk_context *ctx, const char *source, const rk_compile_options *opts,
                                 rk_module **out) {
    void *handle = NULL;
    rk_status st = rk__cpu_compile_and_load(source, opts, &handle);
    if (st != RK_OK) return st;
    cpu_module *m = NULL;
    st = module_new(ctx, &m);
    if (st == RK_OK) {
        m->handle = handle;
        if (dlinfo(handle, RTLD_DI_LINKMAP, &m->map) != 0)
            st = rk__fail(RK_INTERNAL, "cpu: dlinfo on a compiled module: %s", dlerror());
    }
    if (st == RK_OK) {
        /* The object's own runtime pointer (dsl.h defines it under RK_CPU_MODULE). */
        const rk_dsl_runtime **slot = dlsym(handle, "rk__dsl_runtime");
        if (slot)
            __atomic_store_n(slot, &rk__cpu_dsl_runtime_table, __ATOMIC_RELEASE);
        else
            st = rk__fail(RK_INTERNAL, "cpu: the compiled module has no rk__dsl_runtime (was it built against dsl.h?)");
    }
    if (st != RK_OK) {
        if (m) {
            pthread_mutex_destroy(&m->lock);
            free(m);
        }
        dlclose(handle);
        return st;
    }
    *out = &m->base;
    return RK_OK;
}

rk_status rk__cpu_module_from_host_kernels(rk_context *ctx, const rk_host_kernel *kernels, size_t count,
                                           rk_module **out) {
    cpu_module *m = NULL;
    rk_status st = module_new(ctx, &m);
    if (st != RK_OK) return st;
    m->kernels = calloc(count, sizeof *m->kernels);
    bool ok = m->kernels != NULL;
    for (size_t i = 0; ok && i < count; i++) {
        m->kernels[i].fn = kernels[i].fn;
        m->kernels[i].name = strdup(kernels[i].name);
        ok = m->kernels[i].name != NULL;
        m->kernel_count = i + 1;
    }
    if (!ok) {
        rk__cpu_module_destroy(&m->base);
        return rk__fail(RK_OUT_OF_MEMORY, "cpu: out of memory for a module");
    }
    *out = &m->base;
    return RK_OK;
}

void rk__cpu_module_destroy(rk_module *module) {
    cpu_module *m = (cpu_module *)module;
    for (rk__cpu_function *f = m->functions, *next; f; f = next) {
        next = f->next;
        free(f);
    }
    for (size_t i = 0; i < m->kernel_count; i++) free((char *)m->kernels[i].name);
    free(m->kernels);
    if (m->handle) dlclose(m->handle);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

rk_status rk__cpu_module_get_function(rk_module *module, const char *name, rk_function **out) {
    cpu_module *m = (cpu_module *)module;
    rk_status st = RK_OK;
    pthread_mutex_lock(&m->lock);
    rk__cpu_function *f = m->functions;
    while (f && strcmp(f->name, name) != 0) f = f->next;
    if (!f) {
        void (*fn)(void) = NULL;
        size_t len = strlen(name) + 1;
        st = resolve(m, name, &fn);
        if (st == RK_OK && !(f = calloc(1, sizeof *f + len))) st = rk__fail(RK_OUT_OF_MEMORY, "cpu: out of memory");
        if (st == RK_OK) {
            memcpy(f->name, name, len);
            f->base.module = module;
            f->base.name = f->name;
            f->fn = fn;
            f->next = m->functions;
            m->functions = f;
        }
    }
    pthread_mutex_unlock(&m->lock);
    if (st == RK_OK) *out = &f->base;
    return st;
}

rk_status rk__cpu_module_symbol(rk_module *module, const char *name, void (**fn)(void)) {
    if (!module || !name || !fn)
        return rk__fail(RK_NULL_ARGUMENT, "rk__cpu_module_symbol: %s is NULL", !module ? "module" : !name ? "name" : "fn");
    if (module->ctx->backend != &rk__cpu_backend)
        return rk__fail(RK_INVALID_ARGUMENT, "rk__cpu_module_symbol: the module belongs to the %s backend",
                        module->ctx->backend->name);
    cpu_module *m = (cpu_module *)module;
    pthread_mutex_lock(&m->lock);
    rk_status st = resolve(m, name, fn);
    pthread_mutex_unlock(&m->lock);
    return st;
}
