/* A kernel's parameters read from its cubin, for drivers without
 * cuFuncGetParamCount (before CUDA 13.1): cuFuncGetParamInfo answers one
 * index at a time and errs past the last one, and compute-sanitizer
 * reports every such probe as an API error. So the count comes from the
 * image that was loaded, and the driver is asked only about indices below
 * it (cuda_module.c).
 *
 * Where: the ELF section ".nv.info.<kernel>" is a list of records
 * (u8 format, u8 attribute, then a value). Format 4 carries a u16 length
 * and that many bytes; formats 1 to 3 take 4 bytes in all (no value, a
 * byte, a u16). Attribute 0x17 (a kernel parameter) comes once per
 * parameter: u32 index, u16 ordinal, u16 offset, u32 flags whose top 14
 * bits are the size in bytes. Attribute 0x19 (format 3) is the
 * parameters' total size, absent for a kernel without any: the last
 * parameter must end there, or the records were not read right.
 * The layout is not documented by NVIDIA; it was read off cubins of
 * nvcc/NVRTC 12 and 13 (tests/cuda/test_cuda_params.c checks it on NVRTC's
 * output), and anything else in it makes the answer "cannot say" (-1):
 * launches are then not checked, as with a driver that cannot say. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cuda/cuda_internal.h"

enum {
    FORMAT_NONE = 1,   /* no value */
    FORMAT_HALF = 3,   /* u16 value */
    FORMAT_SIZED = 4,  /* u16 length, then the bytes */
    ATTR_KPARAM_INFO = 0x17,
    ATTR_PARAM_SIZE = 0x19,
    MAX_PARAMS = 4096, /* a kernel's parameter space is 32 KiB at most */
};

static uint16_t u16_at(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t u32_at(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t u64_at(const unsigned char *p) { return u32_at(p) | (uint64_t)u32_at(p + 4) << 32; }

/* The section named `name` of a little-endian ELF64 image: its bytes. */
static const unsigned char *find_section(const unsigned char *elf, size_t size, const char *name, size_t *length) {
    if (size < 64 || memcmp(elf, "\x7f" "ELF", 4) != 0 || elf[4] != 2 /* 64-bit */ || elf[5] != 1 /* little */)
        return NULL;
    uint64_t table = u64_at(elf + 0x28);
    uint16_t entry = u16_at(elf + 0x3a), count = u16_at(elf + 0x3c), names = u16_at(elf + 0x3e);
    if (entry < 64 || names >= count || table > size || (uint64_t)entry * count > size - table) return NULL;
    const unsigned char *strings = elf + table + (size_t)names * entry;
    uint64_t strings_at = u64_at(strings + 24), strings_size = u64_at(strings + 32);
    if (strings_at > size || strings_size > size - strings_at) return NULL;
    size_t want = strlen(name) + 1;
    for (uint16_t i = 0; i < count; i++) {
        const unsigned char *h = elf + table + (size_t)i * entry;
        uint32_t at = u32_at(h);
        uint64_t offset = u64_at(h + 24), bytes = u64_at(h + 32);
        if (at >= strings_size || strings_size - at < want || memcmp(elf + strings_at + at, name, want) != 0) continue;
        if (offset > size || bytes > size - offset) return NULL;
        *length = (size_t)bytes;
        return elf + offset;
    }
    return NULL;
}

int rk__cuda_cubin_params(const char *image, size_t size, const char *kernel, uint32_t *sizes, int max) {
    char name[300];
    if (!image || !kernel || snprintf(name, sizeof name, ".nv.info.%s", kernel) >= (int)sizeof name) return -1;
    size_t length = 0;
    const unsigned char *info = find_section((const unsigned char *)image, size, name, &length);
    if (!info) return -1;
    int count = 0;
    bool has_total = false;
    uint32_t total = 0, end = 0;
    unsigned char seen[MAX_PARAMS] = {0};
    for (size_t p = 0; p + 4 <= length;) {
        unsigned format = info[p], attribute = info[p + 1];
        if (format >= FORMAT_NONE && format <= FORMAT_HALF) {
            if (attribute == ATTR_PARAM_SIZE && format == FORMAT_HALF) {
                has_total = true;
                total = u16_at(info + p + 2);
            }
            p += 4;
            continue;
        }
        if (format != FORMAT_SIZED) return -1; /* a record whose length is not known here */
        size_t bytes = u16_at(info + p + 2);
        if (bytes > length - p - 4) return -1;
        const unsigned char *value = info + p + 4;
        if (attribute == ATTR_KPARAM_INFO) {
            if (bytes < 12) return -1;
            unsigned ordinal = u16_at(value + 4);
            if (ordinal >= MAX_PARAMS || seen[ordinal]) return -1;
            seen[ordinal] = 1;
            uint32_t offset = u16_at(value + 6), bytes_of_param = u32_at(value + 8) >> 18;
            if (offset + bytes_of_param > end) end = offset + bytes_of_param;
            if ((int)ordinal < max) sizes[ordinal] = bytes_of_param;
            if ((int)ordinal >= count) count = (int)ordinal + 1;
        }
        p += 4 + bytes;
    }
    for (int i = 0; i < count; i++)
        if (!seen[i]) return -1;
    /* A kernel without parameters has no total; with some, the last ends there. */
    if (count == 0 ? has_total : !has_total || total != end) return -1;
    return count;
}
