/* The channel arena's bookkeeping: pieces carved from one reserved device
 * range, freed pieces kept for reuse. No driver calls here (cuda_memory.c
 * reserves and frees the range), so tests can run it without a GPU.
 *
 * Why an arena: compute-sanitizer memcheck checks a kernel's accesses
 * against the allocations that existed when the kernel was launched, and
 * K2K channels are allocated while their persistent kernels already run.
 * Memory reserved before the first persistent ring kernel of a context is
 * visible to all of them, so channels carved from it are too. */
#include <errno.h>
#include <stdlib.h>

#include "cuda/cuda_internal.h"

rk_status rk__cuda_arena_bytes(const char *env, size_t *out) {
    *out = (size_t)RK_CUDA_ARENA_DEFAULT_MB << 20;
    if (!env || !*env) return RK_OK;
    char *end = NULL;
    errno = 0;
    unsigned long long mb = strtoull(env, &end, 10);
    if (errno || *end || env[0] < '0' || env[0] > '9' || mb > RK_CUDA_ARENA_MAX_MB)
        return rk__fail(RK_INVALID_ARGUMENT, "RK_CUDA_CHANNEL_ARENA_MB='%s' is not a size in MiB from 0 to %d", env,
                        RK_CUDA_ARENA_MAX_MB);
    *out = (size_t)mb << 20;
    return RK_OK;
}

bool rk__cuda_arena_holds(const rk__cuda_arena *a, CUdeviceptr ptr) {
    return a->base && ptr >= a->base && ptr - a->base < a->size;
}

/* Best-fit among freed pieces first (the pool's lookup: at most twice the
 * size), else a new piece from the part never handed out. */
rk__cuda_pinned *rk__cuda_arena_take(rk__cuda_arena *a, size_t size) {
    if (!a->base || !size) return NULL;
    rk__cuda_pinned *block = rk__cuda_take_pooled(&a->free, size);
    if (block || a->size - a->carved < size) return block;
    block = calloc(1, sizeof *block);
    if (!block) return NULL;
    block->device = a->base + a->carved;
    block->size = size;
    a->carved += size;
    return block;
}

void rk__cuda_arena_give(rk__cuda_arena *a, rk__cuda_pinned *block) {
    block->next = a->free;
    a->free = block;
}

void rk__cuda_arena_forget(rk__cuda_arena *a) {
    for (rk__cuda_pinned *p = a->free, *next; p; p = next) {
        next = p->next;
        free(p);
    }
    *a = (rk__cuda_arena){0};
}
