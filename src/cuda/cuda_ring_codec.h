/* Host side of the tagged-word queue format (see src/device/cuda/ring.cu):
 * every 8-byte word holds 4 payload bytes and, above them, the tag of the
 * position the word belongs to. Writing whole words and checking every tag
 * on reading is the whole protocol: no fences, no shared tail pointer. */
#ifndef RK_CUDA_RING_CODEC_H
#define RK_CUDA_RING_CODEC_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Tag of queue position pos: its lap around the ring, plus one so that
 * zeroed memory is never current. */
static inline uint32_t rk__ring_tag(uint64_t pos, uint32_t log2_capacity) {
    return (uint32_t)(pos >> log2_capacity) + 1u;
}

/* Writes one message into a slot of `words` words (even) as tagged words. */
static inline void rk__ring_encode(uint64_t *slot, const unsigned char *msg, uint32_t msg_bytes, uint32_t words,
                                   uint32_t tag) {
    const uint64_t hi = (uint64_t)tag << 32;
    uint32_t w = 0;
#if defined(__SSE2__)
    const __m128i t = _mm_set1_epi32((int)tag);
    for (; (w + 4) * 4 <= msg_bytes; w += 4) {
        __m128i m = _mm_loadu_si128((const __m128i *)(const void *)(msg + 4 * w));
        _mm_store_si128((__m128i *)(void *)(slot + w), _mm_unpacklo_epi32(m, t));
        _mm_store_si128((__m128i *)(void *)(slot + w + 2), _mm_unpackhi_epi32(m, t));
    }
#endif
    for (; w * 4 < msg_bytes; w++) {
        uint32_t x = 0;
        uint32_t left = msg_bytes - w * 4;
        memcpy(&x, msg + 4 * w, left < 4 ? left : 4);
        slot[w] = hi | x;
    }
    for (; w < words; w++) slot[w] = hi;
}

/* True when every word of the slot carries tag. */
static inline bool rk__ring_current(const volatile uint64_t *slot, uint32_t words, uint32_t tag) {
#if defined(__SSE2__)
    const __m128i want = _mm_set_epi32(0, (int)tag, 0, (int)tag);
    for (uint32_t w = 0; w < words; w += 2) {
        __m128i v = _mm_load_si128((const __m128i *)(const void *)(slot + w));
        if (_mm_movemask_epi8(_mm_cmpeq_epi32(_mm_srli_epi64(v, 32), want)) != 0xffff) return false;
    }
    return true;
#else
    for (uint32_t w = 0; w < words; w++)
        if ((uint32_t)(slot[w] >> 32) != tag) return false;
    return true;
#endif
}

/* Checks every tag of the slot and copies the payload of `bytes` bytes out
 * in the same pass. False (dst partly written) when some word is not
 * current yet. */
static inline bool rk__ring_take(unsigned char *dst, const volatile uint64_t *slot, uint32_t words, uint32_t bytes,
                                 uint32_t tag) {
    uint32_t w = 0;
#if defined(__SSE2__)
    const __m128i want = _mm_set_epi32(0, (int)tag, 0, (int)tag);
    for (; (w + 4) * 4 <= bytes; w += 4) {
        __m128i a = _mm_load_si128((const __m128i *)(const void *)(slot + w));
        __m128i b = _mm_load_si128((const __m128i *)(const void *)(slot + w + 2));
        __m128i tags = _mm_and_si128(_mm_cmpeq_epi32(_mm_srli_epi64(a, 32), want),
                                     _mm_cmpeq_epi32(_mm_srli_epi64(b, 32), want));
        if (_mm_movemask_epi8(tags) != 0xffff) return false;
        _mm_storeu_si128((__m128i *)(void *)(dst + 4 * w),
                         _mm_unpacklo_epi64(_mm_shuffle_epi32(a, 0x08), _mm_shuffle_epi32(b, 0x08)));
    }
#endif
    for (; w * 4 < bytes; w++) {
        uint64_t v = slot[w];
        if ((uint32_t)(v >> 32) != tag) return false;
        uint32_t x = (uint32_t)v;
        uint32_t left = bytes - w * 4;
        memcpy(dst + 4 * w, &x, left < 4 ? left : 4);
    }
    for (; w < words; w++)
        if ((uint32_t)(slot[w] >> 32) != tag) return false;
    return true;
}

#endif
