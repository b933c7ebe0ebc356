/* Compiled CUDA modules cached on disk, so a handler or kernel is compiled by
 * NVRTC once per source, options, architecture, driver and NVRTC version.
 *
 * Files live in $RK_CACHE_DIR/cuda (else $XDG_CACHE_HOME/ringkernel/cuda,
 * else ~/.cache/ringkernel/cuda); RK_CACHE_DIR="" turns the cache off. Each
 * file carries its key and size, so a damaged or foreign file is ignored;
 * files are written under a temporary name and renamed into place, so
 * processes sharing the directory never see half a file. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/resident.h"
#include "cuda/cuda_internal.h"
#include "cuda/nvrtc.h"

static const char magic[8] = {'R', 'K', 'C', 'U', 'B', 'I', 'N', '1'};

static uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static uint64_t finish(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

void rk__cuda_hash(const void *const *parts, const size_t *sizes, size_t count, uint64_t out[2]) {
    uint64_t a = 0x9e3779b97f4a7c15ULL, b = 0x632be59bd9b4e019ULL;
    for (size_t i = 0; i < count; i++) {
        const unsigned char *p = parts[i];
        size_t n = sizes[i];
        /* The length goes in first, so part boundaries are part of the key. */
        a = rotl(a ^ n, 29) * 0x87c37b91114253d5ULL;
        b = rotl(b + n, 31) * 0x4cf5ad432745937fULL;
        while (n > 0) {
            uint64_t w = 0;
            size_t take = n < 8 ? n : 8;
            memcpy(&w, p, take);
            a = rotl(a ^ w, 31) * 0x87c37b91114253d5ULL + b;
            b = rotl(b ^ (w * 0x4cf5ad432745937fULL), 27) * 5 + 0x52dce729 + a;
            p += take;
            n -= take;
        }
    }
    out[0] = finish(a ^ rotl(b, 17));
    out[1] = finish(b + rotl(a, 41));
}

/* The cache directory, or false when caching is off. */
static bool cache_dir(char *out, size_t size) {
    const char *env = getenv("RK_CACHE_DIR");
    int n;
    if (env) {
        if (!*env) return false;
        n = snprintf(out, size, "%s/cuda", env);
    } else if (getenv("XDG_CACHE_HOME") && *getenv("XDG_CACHE_HOME")) {
        n = snprintf(out, size, "%s/ringkernel/cuda", getenv("XDG_CACHE_HOME"));
    } else if (getenv("HOME") && *getenv("HOME")) {
        n = snprintf(out, size, "%s/.cache/ringkernel/cuda", getenv("HOME"));
    } else {
        return false;
    }
    return n > 0 && (size_t)n < size;
}

static void make_dirs(char *path) {
    for (char *p = path + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        mkdir(path, 0755);
        *p = '/';
    }
    mkdir(path, 0755);
}

static bool cache_path(const uint64_t key[2], char *out, size_t size) {
    char dir[1024];
    if (!cache_dir(dir, sizeof dir)) return false;
    int n = snprintf(out, size, "%s/%016llx%016llx.bin", dir, (unsigned long long)key[0], (unsigned long long)key[1]);
    return n > 0 && (size_t)n < size;
}

rk_status rk__cuda_cache_load(const uint64_t key[2], char **image, size_t *size) {
    char path[1200];
    if (!cache_path(key, path, sizeof path)) return RK_NOT_FOUND;
    FILE *f = fopen(path, "rb");
    if (!f) return RK_NOT_FOUND;
    char head[8];
    uint64_t file_key[2], length = 0;
    rk_status s = RK_NOT_FOUND;
    if (fread(head, 1, 8, f) == 8 && memcmp(head, magic, 8) == 0 && fread(file_key, 8, 2, f) == 2 &&
        file_key[0] == key[0] && file_key[1] == key[1] && fread(&length, 8, 1, f) == 1 && length > 0 &&
        length < ((uint64_t)1 << 31)) {
        char *data = malloc((size_t)length + 1);
        if (data && fread(data, 1, (size_t)length, f) == length && fgetc(f) == EOF) {
            data[length] = '\0';
            *image = data;
            *size = (size_t)length;
            s = RK_OK;
        } else {
            free(data);
        }
    }
    fclose(f);
    return s;
}

void rk__cuda_cache_store(const uint64_t key[2], const char *image, size_t size) {
    char path[1200], tmp[1300];
    if (!cache_path(key, path, sizeof path)) return;
    char dir[1024];
    cache_dir(dir, sizeof dir);
    make_dirs(dir);
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        rk__log(RK_LOG_WARN, "cuda: cannot write the module cache at %s: %s", tmp, strerror(errno));
        return;
    }
    uint64_t length = size;
    bool ok = fwrite(magic, 1, 8, f) == 8 && fwrite(key, 8, 2, f) == 2 && fwrite(&length, 8, 1, f) == 1 &&
              fwrite(image, 1, size, f) == size;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) unlink(tmp);
}

/* Loads an image, with the JIT's error log in the failure details. */
static rk_status load_image(rk__cuda_context *ctx, const char *image, CUmodule *out) {
    char error_log[4096] = "";
    int options[] = {RK_CU_JIT_ERROR_LOG_BUFFER, RK_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *values[] = {error_log, (void *)(uintptr_t)sizeof error_log};
    rk_status paused = rk__resident_pause(&ctx->base);
    if (paused != RK_OK) return paused;
    CUresult r = rk__cuda.cuModuleLoadDataEx(out, image, 2, options, values);
    rk__resident_resume(&ctx->base);
    if (r == RK_CUDA_SUCCESS) return RK_OK;
    rk_status s = rk__cuda_fail(r, RK_COMPILE_FAILED, "cuModuleLoadDataEx");
    if (error_log[0]) {
        rk__fail_append("\n");
        rk__fail_append(error_log);
    }
    return s;
}

/* Hands the loaded image to the caller that asked for it, else frees it. */
static rk_status keep_image(char *image, size_t size, char **image_out, size_t *image_size) {
    if (image_out) {
        *image_out = image;
        *image_size = size;
    } else {
        free(image);
    }
    return RK_OK;
}

rk_status rk__cuda_build_module(rk__cuda_context *ctx, const char *source, const char *name,
                                const char *const *options, size_t option_count, CUmodule *out, char **image_out,
                                size_t *image_size) {
    rk_status s = rk__cuda_bind(ctx);
    if (s != RK_OK) return s;
    int major = 0, minor = 0;
    s = rk__nvrtc_version(&major, &minor);
    if (s != RK_OK) return s;

    /* Key: everything that can change the compiled image. */
    char versions[128];
    snprintf(versions, sizeof versions, "rk-cuda-1|%s|driver %d|nvrtc %d.%d%s", ctx->arch, ctx->driver_version, major,
             minor, rk__nvrtc_line_info() ? "|lineinfo" : "");
    size_t count = option_count + 2;
    const void **parts = malloc(count * sizeof *parts);
    size_t *sizes = malloc(count * sizeof *sizes);
    if (!parts || !sizes) {
        free(parts);
        free(sizes);
        return rk__fail(RK_OUT_OF_MEMORY, "out of memory");
    }
    parts[0] = versions;
    sizes[0] = strlen(versions);
    parts[1] = source;
    sizes[1] = strlen(source);
    for (size_t i = 0; i < option_count; i++) {
        parts[i + 2] = options[i];
        sizes[i + 2] = strlen(options[i]);
    }
    uint64_t key[2];
    rk__cuda_hash(parts, sizes, count, key);
    free(parts);
    free(sizes);

    char *image = NULL;
    size_t size = 0;
    if (rk__cuda_cache_load(key, &image, &size) == RK_OK) {
        s = load_image(ctx, image, out);
        if (s == RK_OK) return keep_image(image, size, image_out, image_size);
        free(image);
        rk__log(RK_LOG_WARN, "cuda: cached module did not load (%s); compiling again", rk_last_error());
    }
    char *log = NULL;
    s = rk__nvrtc_compile(source, name, ctx->arch, options, option_count, &image, &size, &log);
    if (s == RK_OK && log && log[0]) rk__log(RK_LOG_INFO, "cuda: NVRTC log for %s:\n%s", name, log);
    free(log);
    if (s != RK_OK) return s;
    s = load_image(ctx, image, out);
    if (s != RK_OK) {
        free(image);
        return s;
    }
    rk__cuda_cache_store(key, image, size);
    return keep_image(image, size, image_out, image_size);
}

rk_status rk__cuda_ring_module(rk__cuda_context *ctx, const char *source, const char *const *options,
                               size_t option_count, CUmodule *out) {
    size_t count = option_count + 1;
    const void *parts[64];
    size_t sizes[64];
    if (count > 64) return rk__fail(RK_INVALID_ARGUMENT, "too many compile options (%zu)", option_count);
    parts[0] = source;
    sizes[0] = strlen(source);
    for (size_t i = 0; i < option_count; i++) {
        parts[i + 1] = options[i];
        sizes[i + 1] = strlen(options[i]);
    }
    uint64_t key[2];
    rk__cuda_hash(parts, sizes, count, key);
    pthread_mutex_lock(&ctx->lock);
    for (rk__cuda_loaded_module *m = ctx->ring_modules; m; m = m->next) {
        if (m->key[0] == key[0] && m->key[1] == key[1]) {
            *out = m->module;
            pthread_mutex_unlock(&ctx->lock);
            return RK_OK;
        }
    }
    pthread_mutex_unlock(&ctx->lock);
    rk__cuda_loaded_module *m = calloc(1, sizeof *m);
    if (!m) return rk__fail(RK_OUT_OF_MEMORY, "out of memory");
    rk_status s = rk__cuda_build_module(ctx, source, "ring_kernel.cu", options, option_count, &m->module, NULL, NULL);
    if (s != RK_OK) {
        free(m);
        return s;
    }
    m->key[0] = key[0];
    m->key[1] = key[1];
    pthread_mutex_lock(&ctx->lock);
    m->next = ctx->ring_modules;
    ctx->ring_modules = m;
    pthread_mutex_unlock(&ctx->lock);
    *out = m->module;
    return RK_OK;
}

rk_status rk__cuda_get_function(CUmodule module, const char *name, CUfunction *out) {
    CUresult r = rk__cuda.cuModuleGetFunction(out, module, name);
    if (r == 500 /* CUDA_ERROR_NOT_FOUND */)
        return rk__fail(RK_NOT_FOUND,
                        "no kernel named '%s' in the module (CUDA kernels are found by their extern \"C\" name: "
                        "declare them with RK_KERNEL)",
                        name);
    if (r != RK_CUDA_SUCCESS) return rk__cuda_fail(r, RK_NOT_FOUND, "cuModuleGetFunction");
    if (rk__cuda.cuFuncLoad) {
        r = rk__cuda.cuFuncLoad(*out);
        if (r != RK_CUDA_SUCCESS) return rk__cuda_fail(r, RK_INTERNAL, "cuFuncLoad");
    }
    return RK_OK;
}
