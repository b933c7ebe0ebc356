/* Modules compiled from CUDA C with NVRTC, their functions, and launches
 * (ordinary and cooperative). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/resident.h"
#include "cuda/cuda_internal.h"

rk_status rk__cuda_module_compile(rk_context *base, const char *source, const rk_compile_options *opts,
                                  rk_module **out) {
    rk__cuda_context *ctx = rk__cuda_ctx(base);
    size_t count = opts->include_dir_count + opts->define_count + 2;
    char **options = calloc(count, sizeof *options);
    rk__cuda_module *m = calloc(1, sizeof *m);
    rk_status s = RK_OK;
    size_t n = 0;
    if (!options || !m) {
        s = rk__fail(RK_OUT_OF_MEMORY, "rk_module_compile: out of memory");
        goto done;
    }
    for (size_t i = 0; i < opts->include_dir_count && s == RK_OK; i++) {
        if (!opts->include_dirs[i] || asprintf(&options[n++], "-I%s", opts->include_dirs[i]) < 0)
            s = rk__fail(RK_NULL_ARGUMENT, "rk_module_compile: include directory %zu is NULL", i);
    }
    for (size_t i = 0; i < opts->define_count && s == RK_OK; i++) {
        if (!opts->defines[i] || asprintf(&options[n++], "-D%s", opts->defines[i]) < 0)
            s = rk__fail(RK_NULL_ARGUMENT, "rk_module_compile: define %zu is NULL", i);
    }
    if (s == RK_OK && opts->debug_info && asprintf(&options[n++], "--device-debug") < 0)
        s = rk__fail(RK_OUT_OF_MEMORY, "out of memory");
    if (s == RK_OK && opts->optimization_level > 0 &&
        asprintf(&options[n++], "--ptxas-options=-O%d", opts->optimization_level > 3 ? 3 : opts->optimization_level) < 0)
        s = rk__fail(RK_OUT_OF_MEMORY, "out of memory");
    if (s == RK_OK)
        s = rk__cuda_build_module(ctx, source, "module.cu", (const char *const *)options, n, &m->module, &m->image,
                                  &m->image_size);
    if (s == RK_OK) {
        pthread_mutex_init(&m->lock, NULL);
        *out = &m->base;
        m = NULL;
    }
done:
    for (size_t i = 0; options && i < n; i++) free(options[i]);
    free(options);
    free(m);
    return s;
}

void rk__cuda_module_destroy(rk_module *base) {
    rk__cuda_module *m = (rk__cuda_module *)base;
    for (rk__cuda_function *f = m->functions, *next; f; f = next) {
        next = f->next;
        free(f->name);
        free(f);
    }
    rk__cuda_context *ctx = rk__cuda_ctx(base->ctx);
    /* Unloading waits for running kernels, like loading: pause resident ones. */
    if (rk__cuda_bind(ctx) == RK_OK && rk__resident_pause(&ctx->base) == RK_OK) {
        rk__cuda.cuModuleUnload(m->module);
        rk__resident_resume(&ctx->base);
    } else {
        rk__log(RK_LOG_WARN, "cuda: a module stays loaded: a resident kernel could not be paused to unload it");
    }
    pthread_mutex_destroy(&m->lock);
    free(m->image);
    free(m);
}

/* The kernel's parameters, learnt once per function. cuFuncGetParamInfo
 * answers one index at a time and errs past the last one, which
 * compute-sanitizer reports as an API error: so the count comes first,
 * from cuFuncGetParamCount (CUDA 13.1 drivers) or else from the loaded
 * cubin (cuda_params.c), and the driver is asked only about indices below
 * it. Where neither can say, launches are not checked (never a probe). */
static void learn_parameters(rk__cuda_function *f, const rk__cuda_module *m) {
    f->param_count = -1;
    if (!rk__cuda.cuFuncGetParamInfo) return;
    uint32_t recorded[RK_CUDA_MAX_ARGS];
    int count = -1;
    bool from_image = false;
    size_t n = 0;
    if (rk__cuda.cuFuncGetParamCount && rk__cuda.cuFuncGetParamCount(f->fn, &n) == RK_CUDA_SUCCESS) {
        count = n > RK_CUDA_MAX_ARGS ? RK_CUDA_MAX_ARGS + 1 : (int)n;
    } else {
        count = rk__cuda_cubin_params(m->image, m->image_size, f->name, recorded, RK_CUDA_MAX_ARGS);
        from_image = true;
    }
    if (count < 0) return; /* nobody can say: launches are not checked */
    if (count > RK_CUDA_MAX_ARGS) {
        f->param_count = RK_CUDA_MAX_ARGS + 1; /* every launch is refused as too long anyway */
        return;
    }
    for (int i = 0; i < count; i++) {
        size_t offset = 0, size = 0;
        if (rk__cuda.cuFuncGetParamInfo(f->fn, (size_t)i, &offset, &size) != RK_CUDA_SUCCESS) return;
        /* The cubin's record and the driver disagree: trust neither. */
        if (from_image && recorded[i] != size) return;
        f->param_size[i] = (uint32_t)size;
    }
    f->param_count = count;
}

rk_status rk__cuda_module_get_function(rk_module *base, const char *name, rk_function **out) {
    rk__cuda_module *m = (rk__cuda_module *)base;
    rk_status s = rk__cuda_bind(rk__cuda_ctx(base->ctx));
    if (s != RK_OK) return s;
    pthread_mutex_lock(&m->lock);
    for (rk__cuda_function *f = m->functions; f; f = f->next) {
        if (strcmp(f->name, name) == 0) {
            pthread_mutex_unlock(&m->lock);
            *out = &f->base;
            return RK_OK;
        }
    }
    rk__cuda_function *f = calloc(1, sizeof *f);
    if (f) f->name = strdup(name);
    if (!f || !f->name) {
        pthread_mutex_unlock(&m->lock);
        if (f) free(f);
        return rk__fail(RK_OUT_OF_MEMORY, "rk_module_get_function: out of memory");
    }
    s = rk__cuda_get_function(m->module, name, &f->fn);
    if (s != RK_OK) {
        pthread_mutex_unlock(&m->lock);
        free(f->name);
        free(f);
        return s;
    }
    f->base.name = f->name;
    learn_parameters(f, m);
    f->next = m->functions;
    m->functions = f;
    pthread_mutex_unlock(&m->lock);
    *out = &f->base;
    return RK_OK;
}

static size_t arg_size(const rk_arg *a) {
    switch (a->kind) {
    case RK_ARG_I32:
    case RK_ARG_U32:
    case RK_ARG_F32:
        return 4;
    case RK_ARG_STRUCT:
        return a->value.structure.size;
    default:
        return 8;
    }
}

/* Where the driver told us the kernel's parameters, check count and sizes. */
static rk_status check_arguments(const rk__cuda_function *f, const rk_arg *args, size_t arg_count) {
    if (f->param_count < 0) return RK_OK;
    if ((size_t)f->param_count != arg_count)
        return rk__fail(RK_INVALID_ARGUMENT, "rk_launch: kernel '%s' takes %s%d argument(s), %zu given", f->name,
                        f->param_count > RK_CUDA_MAX_ARGS ? "more than " : "",
                        f->param_count > RK_CUDA_MAX_ARGS ? RK_CUDA_MAX_ARGS : f->param_count, arg_count);
    for (size_t i = 0; i < arg_count; i++) {
        if (f->param_size[i] != arg_size(&args[i]))
            return rk__fail(RK_INVALID_ARGUMENT, "rk_launch: argument %zu of '%s' is %u bytes in the kernel, %zu given",
                            i, f->name, f->param_size[i], arg_size(&args[i]));
    }
    return RK_OK;
}

rk_status rk__cuda_marshal_args(const rk__cuda_function *f, const rk_arg *args, size_t arg_count,
                                rk__cuda_arg_value *values, void **params) {
    if (arg_count > RK_CUDA_MAX_ARGS)
        return rk__fail(RK_INVALID_ARGUMENT, "rk_launch: %zu arguments (at most %d)", arg_count, RK_CUDA_MAX_ARGS);
    rk_status s = check_arguments(f, args, arg_count);
    if (s != RK_OK) return s;
    for (size_t i = 0; i < arg_count; i++) {
        const rk_arg *a = &args[i];
        switch (a->kind) {
        case RK_ARG_BUFFER: values[i].ptr = ((rk__cuda_buffer *)a->value.buffer)->ptr; break;
        case RK_ARG_I32: values[i].i32 = a->value.i32; break;
        case RK_ARG_U32: values[i].u32 = a->value.u32; break;
        case RK_ARG_I64: values[i].i64 = a->value.i64; break;
        case RK_ARG_U64: values[i].u64 = a->value.u64; break;
        case RK_ARG_F32: values[i].f32 = a->value.f32; break;
        case RK_ARG_F64: values[i].f64 = a->value.f64; break;
        case RK_ARG_STRUCT: break; /* the driver copies the struct's bytes at the launch */
        }
        params[i] = a->kind == RK_ARG_STRUCT ? (void *)(uintptr_t)a->value.structure.data : &values[i];
    }
    params[arg_count] = NULL;
    return RK_OK;
}

enum { DEFAULT_SHARED_LIMIT = 48 * 1024 };

/* Lets the kernel use more than 48 KiB of dynamic shared memory when asked. */
static rk_status raise_shared_limit(const rk__cuda_function *f, size_t shared_memory) {
    if (shared_memory <= DEFAULT_SHARED_LIMIT) return RK_OK;
    CUresult r = rk__cuda.cuFuncSetAttribute(f->fn, RK_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)shared_memory);
    if (r != RK_CUDA_SUCCESS) return rk__cuda_fail(r, RK_BAD_LAUNCH_CONFIG, "rk_launch: raising the shared-memory limit");
    return RK_OK;
}

rk_status rk__cuda_prepare_launch(rk__cuda_context *ctx, const rk__cuda_function *f, const rk_launch_desc *desc,
                                  rk__cuda_arg_value *values, void **params) {
    rk_status s = rk__cuda_bind(ctx);
    if (s == RK_OK) s = rk__cuda_marshal_args(f, desc->args, desc->arg_count, values, params);
    if (s == RK_OK) s = raise_shared_limit(f, desc->shared_memory);
    return s;
}

rk_status rk__cuda_launch(rk_function *base, const rk_launch_desc *desc) {
    rk__cuda_function *f = (rk__cuda_function *)base;
    rk__cuda_context *ctx = rk__cuda_ctx(base->module->ctx);
    rk__cuda_arg_value values[RK_CUDA_MAX_ARGS];
    void *params[RK_CUDA_MAX_ARGS + 1];
    rk_status s = rk__cuda_prepare_launch(ctx, f, desc, values, params);
    if (s != RK_OK) return s;

    unsigned threads = desc->block.x * desc->block.y * desc->block.z;
    CUresult r;
    CUstream stream = rk__cuda_stream_of(ctx, desc->stream);
    if (desc->cooperative) {
        /* A grid-synchronizing kernel whose blocks cannot all be resident would
         * deadlock: refuse it before anything runs. */
        int per_sm = 0;
        r = rk__cuda.cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, f->fn, (int)threads, desc->shared_memory);
        /* A failed query says nothing about the grid's size: not BAD_LAUNCH_CONFIG,
         * which callers may answer by shrinking the grid. */
        if (r != RK_CUDA_SUCCESS) return rk__cuda_fail(r, RK_INTERNAL, "rk_launch: occupancy query");
        uint64_t blocks = (uint64_t)desc->grid.x * desc->grid.y * desc->grid.z;
        uint64_t resident = (uint64_t)per_sm * (uint64_t)ctx->sm_count;
        if (blocks > resident)
            return rk__fail(RK_BAD_LAUNCH_CONFIG,
                            "rk_launch: cooperative grid of %llu blocks cannot be co-resident: '%s' fits %d block(s) of "
                            "%u threads per SM x %d SMs = %llu; not launched",
                            (unsigned long long)blocks, f->name, per_sm, threads, ctx->sm_count,
                            (unsigned long long)resident);
        r = rk__cuda.cuLaunchCooperativeKernel(f->fn, desc->grid.x, desc->grid.y, desc->grid.z, desc->block.x,
                                               desc->block.y, desc->block.z, (unsigned)desc->shared_memory, stream,
                                               params);
    } else {
        r = rk__cuda.cuLaunchKernel(f->fn, desc->grid.x, desc->grid.y, desc->grid.z, desc->block.x, desc->block.y,
                                    desc->block.z, (unsigned)desc->shared_memory, stream, params, NULL);
    }
    if (r == 701 /* LAUNCH_OUT_OF_RESOURCES */ || r == 720 /* COOPERATIVE_LAUNCH_TOO_LARGE */)
        return rk__cuda_fail(r, RK_BAD_LAUNCH_CONFIG, "rk_launch");
    if (r != RK_CUDA_SUCCESS) return rk__cuda_fail(r, RK_INTERNAL, "rk_launch (cuLaunchKernel)");
    return RK_OK;
}
