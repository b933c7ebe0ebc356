/* rk_mapped_written (device.h): after the host writes host-mapped memory
 * that a device polls, push the written lines out of this core's private
 * caches. A device read of a line this core holds modified must fetch it
 * from the core; one in the shared cache is served sooner (H100 probe in
 * docs/cuda.md: ~0.1 us of a round trip). CLDEMOTE is a hint from the
 * reserved-NOP space: CPUs without it skip it. */
#include "ringkernel/device.h"

#include <stdint.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define LINE_BYTES 64u
static inline void demote_line(const void *p) {
    /* cldemote (%rax): 0F 1C /0, spelled out so no -mcldemote is needed. */
    __asm__ __volatile__(".byte 0x0f, 0x1c, 0x00" ::"a"(p) : "memory");
}
#endif

void rk_mapped_written(const void *p, size_t bytes) {
#ifdef LINE_BYTES
    if (!p || !bytes) return;
    uintptr_t line = (uintptr_t)p & ~(uintptr_t)(LINE_BYTES - 1), end = (uintptr_t)p + bytes;
    for (; line < end; line += LINE_BYTES) demote_line((const void *)line);
#else
    (void)p, (void)bytes;
#endif
}
