/* Device layer, memory: allocation of 1, odd and large sizes (zeroed),
 * copies of 0, 1, odd and large sizes at odd offsets in every direction,
 * host-mapped memory, and every documented error of these calls. */
#include <string.h>

#include "conformance.h"

enum { LARGE = (16u << 20) + 3 }; /* 16 MiB and an odd tail */

static void fill_pattern(unsigned char *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)((i * 131u + seed) >> 1);
}

static void alloc_sizes(const conf_env *env) {
    rk_context *ctx = conf_context(env);
    const size_t sizes[] = {1, 3, 4, 5, 1000, 65536 + 3, LARGE};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        rk_buffer *b = NULL;
        CHECK_OK(rk_buffer_alloc(ctx, sizes[i], &b));
        CHECK_EQ(rk_buffer_size(b), sizes[i]);
        unsigned char *host = malloc(sizes[i]);
        memset(host, 0xAB, sizes[i]);
        CHECK_OK(rk_copy_to_host(ctx, host, b, 0, sizes[i], NULL));
        for (size_t j = 0; j < sizes[i]; j++)
            if (host[j] != 0) CHECK_EQ(host[j], 0); /* zero-initialised */
        /* dirty it: the next allocation, likely the same memory, is zeroed again */
        memset(host, 0xEE, sizes[i]);
        CHECK_OK(rk_copy_to_device(ctx, b, 0, host, sizes[i], NULL));
        CHECK_OK(rk_buffer_free(b));
        CHECK_OK(rk_buffer_alloc(ctx, sizes[i], &b));
        CHECK_OK(rk_copy_to_host(ctx, host, b, 0, sizes[i], NULL));
        CHECK_OK(rk_context_synchronize(ctx));
        for (size_t j = 0; j < sizes[i]; j++)
            if (host[j] != 0) CHECK_EQ(host[j], 0);
        free(host);
        CHECK_OK(rk_buffer_free(b));
    }
    CHECK_OK(rk_context_destroy(ctx));
}

static void alloc_errors(const conf_env *env) {
    rk_context *ctx = conf_context(env);
    rk_buffer *b = NULL;
    CHECK_STATUS(rk_buffer_alloc(ctx, 0, &b), RK_INVALID_ARGUMENT);
    CHECK(b == NULL);
    CHECK_STATUS(rk_buffer_alloc(ctx, 16, NULL), RK_NULL_ARGUMENT);
    CHECK_STATUS(rk_buffer_alloc(NULL, 16, &b), RK_NULL_ARGUMENT);
    CHECK_STATUS(rk_buffer_free(NULL), RK_NULL_ARGUMENT);
    CHECK_EQ(rk_buffer_size(NULL), 0);
    /* More than the device has: refused, nothing allocated. (Not under
     * ASan, whose allocator aborts on such a request instead of failing.) */
    rk_device_info info;
    CHECK_OK(rk_context_device_info(ctx, &info));
#ifndef CONF_SANITIZED
    if (info.total_memory > 0 && info.total_memory < SIZE_MAX / 8) {
        rk_status s = rk_buffer_alloc(ctx, (size_t)info.total_memory * 4, &b);
        CHECK(s == RK_OUT_OF_MEMORY || s == RK_INVALID_ARGUMENT);
        CHECK(b == NULL);
    }
#endif
    CHECK_OK(rk_context_destroy(ctx));
}

static void copy_sizes_offsets(const conf_env *env) {
    rk_context *ctx = conf_context(env);
    enum { N = 64 };
    unsigned char ref[N], got[N], src[N];
    rk_buffer *a = NULL, *b = NULL;
    CHECK_OK(rk_buffer_alloc(ctx, N, &a));
    CHECK_OK(rk_buffer_alloc(ctx, N, &b));
    fill_pattern(ref, N, 7);
    CHECK_OK(rk_copy_to_device(ctx, a, 0, ref, N, NULL));
    /* an odd write inside keeps the neighbours */
    fill_pattern(src, 13, 99);
    CHECK_OK(rk_copy_to_device(ctx, a, 5, src, 13, NULL));
    memcpy(ref + 5, src, 13);
    CHECK_OK(rk_copy_to_host(ctx, got, a, 0, N, NULL));
    CHECK(memcmp(got, ref, N) == 0);
    /* one byte at the very end; an odd read from the middle */
    src[0] = 0x5A;
    CHECK_OK(rk_copy_to_device(ctx, a, N - 1, src, 1, NULL));
    ref[N - 1] = 0x5A;
    memset(got, 0, N);
    CHECK_OK(rk_copy_to_host(ctx, got, a, 3, 9, NULL));
    CHECK(memcmp(got, ref + 3, 9) == 0);
    CHECK_OK(rk_copy_to_host(ctx, got, a, N - 1, 1, NULL));
    CHECK_EQ(got[0], 0x5A);
    /* device to device: aligned, odd, and overlapping within one buffer */
    CHECK_OK(rk_copy_device_to_device(ctx, b, 8, a, 16, 32, NULL));
    CHECK_OK(rk_copy_device_to_device(ctx, b, 1, a, 2, 5, NULL));
    unsigned char expect_b[N] = {0};
    memcpy(expect_b + 8, ref + 16, 32);
    memcpy(expect_b + 1, ref + 2, 5);
    CHECK_OK(rk_copy_to_host(ctx, got, b, 0, N, NULL));
    CHECK(memcmp(got, expect_b, N) == 0);
    CHECK_OK(rk_copy_device_to_device(ctx, a, 4, a, 0, 20, NULL));
    memmove(ref + 4, ref, 20);
    CHECK_OK(rk_copy_to_host(ctx, got, a, 0, N, NULL));
    CHECK(memcmp(got, ref, N) == 0);
    /* zero bytes: a no-op anywhere up to the end, in every direction */
    CHECK_OK(rk_copy_to_device(ctx, a, N, src, 0, NULL));
    CHECK_OK(rk_copy_to_device(ctx, a, 0, src, 0, NULL));
    CHECK_OK(rk_copy_to_host(ctx, got, a, N, 0, NULL));
    CHECK_OK(rk_copy_device_to_device(ctx, b, N, a, 0, 0, NULL));
    CHECK_OK(rk_copy_to_host(ctx, got, a, 0, N, NULL));
    CHECK(memcmp(got, ref, N) == 0);
    CHECK_OK(rk_buffer_free(a));
    CHECK_OK(rk_buffer_free(b));
    CHECK_OK(rk_context_destroy(ctx));
}

static void copy_large(const conf_env *env) {
    rk_context *ctx = conf_context(env);
    unsigned char *src = malloc(LARGE), *back = malloc(LARGE);
    CHECK(src && back);
    fill_pattern(src, LARGE, 3);
    rk_buffer *a = NULL, *b = NULL;
    CHECK_OK(rk_buffer_alloc(ctx, LARGE, &a));
    CHECK_OK(rk_buffer_alloc(ctx, LARGE, &b));
    CHECK_OK(rk_copy_to_device(ctx, a, 0, src, LARGE, NULL));
    CHECK_OK(rk_copy_device_to_device(ctx, b, 1, a, 0, LARGE - 1, NULL));
    CHECK_OK(rk_copy_to_host(ctx, back, b, 1, LARGE - 1, NULL));
    CHECK(memcmp(back, src, LARGE - 1) == 0);
    CHECK_OK(rk_copy_to_host(ctx, back, a, 0, LARGE, NULL));
    CHECK(memcmp(back, src, LARGE) == 0);
    free(src);
    free(back);
    CHECK_OK(rk_buffer_free(a));
    CHECK_OK(rk_buffer_free(b));
    CHECK_OK(rk_context_destroy(ctx));
}

static void copy_errors(const conf_env *env) {
    rk_context *ctx = conf_context(env);
    unsigned char host[32] = {0};
    rk_buffer *a = NULL, *odd = NULL;
    CHECK_OK(rk_buffer_alloc(ctx, 16, &a));
    CHECK_OK(rk_buffer_alloc(ctx, 15, &odd));
    CHECK_STATUS(rk_copy_to_device(ctx, a, 10, host, 7, NULL), RK_OUT_OF_RANGE);
    CHECK_STR_CONTAINS(rk_last_error(), "16-byte buffer");
    CHECK_STATUS(rk_copy_to_device(ctx, a, 17, host, 0, NULL), RK_OUT_OF_RANGE);
    CHECK_STATUS(rk_copy_to_host(ctx, host, a, 17, 0, NULL), RK_OUT_OF_RANGE);
    CHECK_STATUS(rk_copy_to_host(ctx, host, a, 0, SIZE_MAX, NULL), RK_OUT_OF_RANGE);
    CHECK_STATUS(rk_copy_to_host(ctx, host, a, SIZE_MAX, 2, NULL), RK_OUT_OF_RANGE);
    CHECK_STATUS(rk_copy_device_to_device(ctx, a, 0, a, 8, 9, NULL), RK_OUT_OF_RANGE);
    CHECK_STATUS(rk_copy_device_to_device(ctx, odd, 0, a, 0, 16, NULL), RK_OUT_OF_RANGE);
    /* a 15-byte buffer's 16th byte is not the caller's, whatever the device
     * rounds to */
    CHECK_STATUS(rk_copy_to_device(ctx, odd, 12, host, 4, NULL), RK_OUT_OF_RANGE);
    CHECK_STATUS(rk_copy_to_device(ctx, a, 0, NULL, 4, NULL), RK_NULL_ARGUMENT);
    CHECK_STATUS(rk_copy_to_host(ctx, NULL, a, 0, 4, NULL), RK_NULL_ARGUMENT);
    CHECK_STATUS(rk_copy_to_device(ctx, NULL, 0, host, 4, NULL), RK_NULL_ARGUMENT);
    CHECK_STATUS(rk_copy_to_device(NULL, a, 0, host, 4, NULL), RK_NULL_ARGUMENT);
    /* nothing was written by the refused copies */
    unsigned char got[16];
    CHECK_OK(rk_copy_to_host(ctx, got, a, 0, 16, NULL));
    for (int i = 0; i < 16; i++) CHECK_EQ(got[i], 0);
    CHECK_OK(rk_buffer_free(a));
    CHECK_OK(rk_buffer_free(odd));
    CHECK_OK(rk_context_destroy(ctx));
}

/* rk_buffer_alloc_mapped works exactly where device_info says it does. */
static void mapped_memory(const conf_env *env) {
    rk_context *ctx = conf_context(env);
    rk_device_info info;
    CHECK_OK(rk_context_device_info(ctx, &info));
    rk_buffer *m = NULL;
    void *host = NULL;
    rk_status s = rk_buffer_alloc_mapped(ctx, 4096 + 3, &m, &host);
    if (!info.host_mapped_memory) {
        CHECK_EQ(s, RK_UNSUPPORTED);
        CHECK(m == NULL);
    } else {
        CHECK_OK(s);
        CHECK(host != NULL);
        for (size_t i = 0; i < 4096 + 3; i++) CHECK_EQ(((unsigned char *)host)[i], 0);
        fill_pattern(host, 4096 + 3, 5);
        unsigned char got[4096 + 3], want[4096 + 3];
        fill_pattern(want, sizeof want, 5);
        CHECK_OK(rk_copy_to_host(ctx, got, m, 0, sizeof got, NULL));
        CHECK(memcmp(got, want, sizeof got) == 0);
        CHECK_OK(rk_buffer_free(m));
        CHECK_STATUS(rk_buffer_alloc_mapped(ctx, 0, &m, &host), RK_INVALID_ARGUMENT);
    }
    CHECK_OK(rk_context_destroy(ctx));
}

static void registry_errors(const conf_env *env) {
    rk_context *ctx = conf_context(env);
    const rk_backend *b = rk_context_backend(ctx);
    CHECK(strcmp(rk_backend_name(b), env->backend) == 0);
    rk_device_info info;
    CHECK_OK(rk_context_device_info(ctx, &info));
    CHECK(strcmp(info.backend, env->backend) == 0);
    CHECK(info.name[0] != '\0');
    CHECK_GT(info.max_threads_per_block, 0);
    for (int d = 0; d < 3; d++) CHECK_GT(info.max_grid_dim[d], 0);
    CHECK_GT(info.max_block_dim[0], 0);
    uint32_t count = 0;
    CHECK_OK(rk_backend_device_count(b, &count));
    CHECK_GT(count, 0);
    CHECK_STATUS(rk_backend_device_info(b, count, &info), RK_NO_DEVICE);
    rk_context *none = NULL;
    CHECK_STATUS(rk_context_create(b, count, &none), RK_NO_DEVICE);
    CHECK_STATUS(rk_backend_find("no-such-backend", &b), RK_UNKNOWN_BACKEND);
    CHECK_STATUS(rk_context_device_info(ctx, NULL), RK_NULL_ARGUMENT);
    CHECK_STATUS(rk_context_destroy(NULL), RK_NULL_ARGUMENT);
    CHECK_OK(rk_context_destroy(ctx));
}

static const conf_check memory_checks[] = {
    {"registry_and_info", registry_errors, CONF_SHARED},
    {"alloc_sizes", alloc_sizes, CONF_SHARED},
    {"alloc_errors", alloc_errors, CONF_SHARED},
    {"copy_sizes_offsets", copy_sizes_offsets, CONF_SHARED},
    {"copy_large", copy_large, CONF_SHARED},
    {"copy_errors", copy_errors, CONF_SHARED},
    {"mapped_memory", mapped_memory, CONF_SHARED},
};
CONF_GROUP(conf_group_device_memory, "device.memory", memory_checks);
