/* The channel arena's bookkeeping (src/cuda/cuda_arena.c), no GPU needed:
 * $RK_CUDA_CHANNEL_ARENA_MB's parsing, pieces carved in order from a fake
 * device range, freed pieces reused best-fit (at most twice the size), a
 * request that does not fit refused (the caller then falls back to
 * cuMemAlloc), and an arena never reserved handing out nothing. */
#include <stdlib.h>

#include "check.h"
#include "cuda/cuda_internal.h"

static void parsing(void) {
    size_t bytes = 1;
    CHECK_OK(rk__cuda_arena_bytes(NULL, &bytes));
    CHECK_U64_EQ(bytes, (uint64_t)RK_CUDA_ARENA_DEFAULT_MB << 20);
    CHECK_OK(rk__cuda_arena_bytes("", &bytes));
    CHECK_U64_EQ(bytes, (uint64_t)RK_CUDA_ARENA_DEFAULT_MB << 20);
    CHECK_OK(rk__cuda_arena_bytes("0", &bytes));
    CHECK_U64_EQ(bytes, 0);
    CHECK_OK(rk__cuda_arena_bytes("32", &bytes));
    CHECK_U64_EQ(bytes, 32u << 20);
    CHECK_OK(rk__cuda_arena_bytes("65536", &bytes));
    CHECK_U64_EQ(bytes, (uint64_t)65536 << 20);
    const char *bad[] = {"65537", "-1", "8x", " 8", "+8", "x", "99999999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_STATUS(rk__cuda_arena_bytes(bad[i], &bytes), RK_INVALID_ARGUMENT);
        CHECK_STR_CONTAINS(rk_last_error(), "RK_CUDA_CHANNEL_ARENA_MB");
    }
}

static void carving(void) {
    const CUdeviceptr base = 0x7f0000000000ull;
    rk__cuda_arena a = {.size = 64 << 10}; /* not reserved yet */
    CHECK(rk__cuda_arena_take(&a, 4096) == NULL);
    CHECK(!rk__cuda_arena_holds(&a, base));

    a.base = base;
    rk__cuda_pinned *p4 = rk__cuda_arena_take(&a, 4096);
    rk__cuda_pinned *p8 = rk__cuda_arena_take(&a, 8192);
    CHECK(p4 && p8);
    CHECK_U64_EQ(p4->device, base);
    CHECK_U64_EQ(p8->device, base + 4096);
    CHECK_U64_EQ(p8->size, 8192);
    CHECK_U64_EQ(a.carved, 12288);
    CHECK(rk__cuda_arena_holds(&a, base + 4096));
    CHECK(rk__cuda_arena_holds(&a, base + a.size - 1));
    CHECK(!rk__cuda_arena_holds(&a, base + a.size));
    CHECK(!rk__cuda_arena_holds(&a, base - 1));

    /* 52 KiB left: more is refused, and refusing carves nothing. */
    CHECK(rk__cuda_arena_take(&a, 56 << 10) == NULL);
    CHECK_U64_EQ(a.carved, 12288);

    /* A freed piece comes back for its size, the smallest that fits first. */
    rk__cuda_arena_give(&a, p8);
    rk__cuda_arena_give(&a, p4);
    rk__cuda_pinned *again = rk__cuda_arena_take(&a, 4096);
    CHECK(again == p4);
    /* Too small for the request: a new piece is carved instead. */
    rk__cuda_arena_give(&a, again);
    rk__cuda_pinned *p16 = rk__cuda_arena_take(&a, 16384);
    CHECK(p16 && p16 != p8);
    CHECK_U64_EQ(p16->device, base + 12288);
    rk__cuda_pinned *p2 = rk__cuda_arena_take(&a, 4096); /* p4 again, not p8 */
    CHECK(p2 == p4);
    rk__cuda_pinned *p8b = rk__cuda_arena_take(&a, 8192);
    CHECK(p8b == p8);

    /* The rest, exactly: then nothing. */
    rk__cuda_pinned *rest = rk__cuda_arena_take(&a, a.size - a.carved);
    CHECK(rest);
    CHECK_U64_EQ(rest->device + rest->size, base + a.size);
    CHECK(rk__cuda_arena_take(&a, 4096) == NULL);

    /* A freed piece over twice the request is not taken for it. */
    rk__cuda_arena_give(&a, p16);
    CHECK(rk__cuda_arena_take(&a, 4096) == NULL);
    CHECK(rk__cuda_arena_take(&a, 8192) == p16);
    rk__cuda_arena_give(&a, p16);

    free(p2);
    free(p8b);
    free(rest);
    rk__cuda_arena_forget(&a); /* frees p16's record */
    CHECK_U64_EQ(a.base, 0);
    CHECK(a.free == NULL);
    CHECK(rk__cuda_arena_take(&a, 4096) == NULL);
}

int main(void) {
    parsing();
    carving();
    return 0;
}
