/* The CUDA ring kernel around every K2K test handler compiles with NVRTC
 * for sm_90 (no GPU needed): rk_emit (dsl.h) meets its definition in the
 * template's channel code (src/device/cuda/channel.cu), so CI catches a
 * broken device side before the H100 run does. And ptxas keeps the
 * persistent kernel in registers: a spill (ptxas once chose 96 registers
 * for it) halved every K2K stream and the host relay on the H100; the check
 * reads the kernel's stack frame from the cubin itself (ptxas's log too
 * where it has one). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda_ring_layout.h"
#include "cuda/nvrtc.h"
#include "k2k_test.h"

/* The number before `what` (e.g. " bytes spill stores") in the
 * rk_ring_persistent part of ptxas's -v log; -1 when the log does not say. */
static long persistent_logged(const char *log, const char *what) {
    const char *f = log ? strstr(log, "Function properties for rk_ring_persistent") : NULL;
    const char *at = f ? strstr(f, what) : NULL;
    if (!at) return -1;
    const char *num = at;
    while (num > f && num[-1] >= '0' && num[-1] <= '9') num--;
    return num < at ? strtol(num, NULL, 10) : -1;
}

/* Bytes ptxas spilled in rk_ring_persistent; -1 when the log does not say. */
static long persistent_spills(const char *log) { return persistent_logged(log, " bytes spill stores"); }

/* Little-endian fields of the cubin (an ELF64 file), read unaligned. */
static uint64_t le(const unsigned char *p, int bytes) {
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* One section header of the cubin, or NULL when i is out of bounds. */
static const unsigned char *section(const unsigned char *elf, size_t size, uint64_t i) {
    const uint64_t shoff = le(elf + 0x28, 8), entsize = le(elf + 0x3A, 2), count = le(elf + 0x3C, 2);
    if (entsize < 64 || i >= count || shoff > size || (count * entsize) > size - shoff) return NULL;
    return elf + shoff + i * entsize;
}

/* A section's bytes (NULL when they lie outside the file). */
static const unsigned char *section_data(const unsigned char *elf, size_t size, const unsigned char *sh,
                                         uint64_t *len) {
    const uint64_t off = le(sh + 0x18, 8), n = le(sh + 0x20, 8);
    if (off > size || n > size - off) return NULL;
    *len = n;
    return elf + off;
}

/* Bytes of rk_ring_persistent's stack frame (spills, local arrays) in the
 * cubin NVRTC returned: the .nv.info section's EIATTR_FRAME_SIZE entry
 * (attribute 0x11: the kernel's symbol index, then the bytes); -1 when not
 * found. It does not depend on ptxas's -v log, which came back empty for
 * one compile of eight on the H100 machine in session 12 (main's test too)
 * while the same NVRTC 13.0 logs it here. */
static long persistent_frame(const unsigned char *elf, size_t size) {
    if (size < 64 || memcmp(elf, "\177ELF", 4) != 0 || elf[4] != 2) return -1;
    const unsigned char *names = section(elf, size, le(elf + 0x3E, 2));
    uint64_t names_len = 0;
    const unsigned char *name_data = names ? section_data(elf, size, names, &names_len) : NULL;
    if (!name_data) return -1;
    const unsigned char *symtab = NULL, *info = NULL;
    for (uint64_t i = 0; section(elf, size, i); i++) {
        const unsigned char *sh = section(elf, size, i);
        const uint64_t at = le(sh, 4);
        if (at >= names_len) continue;
        const char *n = (const char *)name_data + at;
        if (memchr(n, 0, names_len - at) == NULL) continue;
        if (le(sh + 4, 4) == 2 && strcmp(n, ".symtab") == 0) symtab = sh;
        if (strcmp(n, ".nv.info") == 0) info = sh;
    }
    if (!symtab || !info) return -1;
    uint64_t sym_len = 0, str_len = 0, info_len = 0;
    const unsigned char *syms = section_data(elf, size, symtab, &sym_len);
    const unsigned char *strtab = section(elf, size, le(symtab + 0x28, 4));
    const unsigned char *strs = strtab ? section_data(elf, size, strtab, &str_len) : NULL;
    const unsigned char *attrs = section_data(elf, size, info, &info_len);
    if (!syms || !strs || !attrs) return -1;
    static const char kernel[] = "rk_ring_persistent";
    uint64_t index = 0;
    bool found = false;
    for (uint64_t i = 0; (i + 1) * 24 <= sym_len && !found; i++) {
        const uint64_t at = le(syms + i * 24, 4);
        if (at < str_len && str_len - at > sizeof kernel - 1 && memcmp(strs + at, kernel, sizeof kernel) == 0) {
            index = i;
            found = true;
        }
    }
    if (!found) return -1;
    /* Entries: format byte, attribute byte, 16-bit size; format 4 has
     * `size` bytes of payload after the header, the others none. */
    for (uint64_t at = 0; at + 4 <= info_len;) {
        const unsigned fmt = attrs[at], attr = attrs[at + 1];
        const uint64_t n = fmt == 4 ? le(attrs + at + 2, 2) : 0;
        if (n > info_len - at - 4) return -1;
        if (fmt == 4 && attr == 0x11 && n >= 8 && le(attrs + at + 4, 4) == index) return (long)le(attrs + at + 8, 4);
        at += 4 + n;
    }
    return -1;
}

/* Bytes of stack frame ptxas's -v log reports for rk_ring_persistent; -1
 * when the log does not say. */
static long persistent_frame_logged(const char *log) { return persistent_logged(log, " bytes stack frame"); }

/* block_warps: the worker warps a block is built for (1: the one-warp
 * kernel that every K2K test runs by default, with its own launch bounds;
 * over RK_CUDA_WARPS_PER_BLOCK: a wide ordered block); lanes: the lanes of
 * channel_lanes.cu compiled in. */
static void compile(const char *name, uint32_t state, uint32_t block_warps, uint32_t lanes) {
    rk__cuda_ring_layout l = rk__cuda_ring_layout_of(sizeof(k2k_msg), sizeof(k2k_msg), state);
    l.block_warps = block_warps;
    l.lanes = lanes;
    char *source = NULL, *image = NULL, *log = NULL;
    size_t size = 0;
    CHECK_OK(rk__cuda_ring_source(channel_handlers_source, name, &l, &source));
    const char *verbose[] = {"--ptxas-options=-v"};
    rk_status s = rk__nvrtc_compile(source, "k2k_ring.cu", "sm_90", verbose, 1, &image, &size, &log);
    if (s != RK_OK) fprintf(stderr, "handler %s:\n%s\n", name, log ? log : "(no log)");
    if (getenv("RK_TEST_PTXAS_LOG"))
        fprintf(stderr, "handler %s, %u warps a block, lanes %u:\n%s\n", name, block_warps, lanes, log ? log : "");
    CHECK_OK(s);
    CHECK(size > 0);
    /* No spill and no local array: the kernel's stack frame in the cubin is
     * 0 bytes. Where ptxas's log says (the development machine, CI), it must
     * agree with the cubin and report no spill stores either. */
    const long frame = persistent_frame((const unsigned char *)image, size);
    const long logged = persistent_frame_logged(log), spills = persistent_spills(log);
    if (frame != 0 || (logged >= 0 && logged != frame) || spills > 0)
        fprintf(stderr, "handler %s (state %u, %u warps a block): stack frame %ld bytes in the cubin, %ld in the log, "
                "%ld spilled; ptxas log:\n%s\n", name, state, block_warps, frame, logged, spills, log ? log : "(none)");
    CHECK(frame == 0);
    CHECK(logged < 0 || logged == frame);
    CHECK(spills <= 0);
    /* The channel code is in the module, not only declared. */
    CHECK(strstr(source, "rk__emit(unsigned port") != NULL);
    free(source);
    free(image);
    free(log);
}

int main(void) {
    char reason[512];
    if (rk__nvrtc_probe(reason, sizeof reason) != RK_OK) RK_SKIP("%s", reason);
    static const char *const handlers[] = {"stage", "fanout", "sink", "bounce", "wrong_size", "no_port", "crash"};
    for (size_t i = 0; i < sizeof handlers / sizeof handlers[0]; i++) compile(handlers[i], 0, 1, 0);
    compile("stage", 16, 1, 0);                      /* with state: one message per pass */
    compile("stage", 0, RK_CUDA_WARPS_PER_BLOCK, 0); /* the block of RK_CUDA_ORDERED_WARPS 2 to 8 */
    /* Several ordered warps with the lanes of a chain stage (channel_lanes.cu):
     * 8 a block, and a wide block of 15 workers and the control warp (128
     * registers a thread). */
    compile("stage", 0, RK_CUDA_WARPS_PER_BLOCK, 1);
    compile("stage", 0, RK_CUDA_MAX_ORDERED_WARPS, 1);
    compile("sink", 0, RK_CUDA_MAX_ORDERED_WARPS, 1);
    /* A block size the template is not built for is refused. */
    rk__cuda_ring_layout bad = rk__cuda_ring_layout_of(sizeof(k2k_msg), sizeof(k2k_msg), 0);
    bad.block_warps = 0;
    char *none = NULL;
    CHECK(rk__cuda_ring_source(channel_handlers_source, "stage", &bad, &none) == RK_INVALID_ARGUMENT);
    CHECK(none == NULL);
    bad.block_warps = RK_CUDA_MAX_ORDERED_WARPS + 1;
    CHECK(rk__cuda_ring_source(channel_handlers_source, "stage", &bad, &none) == RK_INVALID_ARGUMENT);
    CHECK(none == NULL);
    printf("%zu handlers compiled for sm_90 (one warp a block), one with state, one for %d warps a block, three "
           "with lanes (%d and %d warps a block)\n",
           sizeof handlers / sizeof handlers[0], RK_CUDA_WARPS_PER_BLOCK, RK_CUDA_WARPS_PER_BLOCK,
           RK_CUDA_MAX_ORDERED_WARPS);
    return 0;
}
