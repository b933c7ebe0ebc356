/* Requests, expected replies and the exactly-once window of rk bench soak. */
#include <stdlib.h>
#include <string.h>

#include "soak_check.h"

_Static_assert(sizeof(soak_request) == 256, "soak requests fill a 256-byte slot, like the handler's");
_Static_assert(sizeof(soak_reply) == 16, "soak replies are 16 bytes, like the handler's");

static uint32_t mix32(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

uint32_t soak_words(uint32_t kernel, uint64_t seq) {
    return mix32((uint32_t)seq * 0x9e3779b9u ^ kernel) % (SOAK_PAYLOAD_WORDS + 1);
}

size_t soak_make_request(uint32_t kernel, uint64_t seq, soak_request *out) {
    uint32_t words = soak_words(kernel, seq);
    out->seq = (uint32_t)seq;
    out->kernel = kernel;
    out->words = words;
    for (uint32_t i = 0; i < words; i++) out->payload[i] = mix32((uint32_t)seq + i * 0x85ebca6bu + kernel);
    /* Words past the length hold garbage, which the handler must not read. */
    for (uint32_t i = words; i < SOAK_PAYLOAD_WORDS; i++) out->payload[i] = 0xdeadbeefu ^ i;
    return offsetof(soak_request, payload) + words * sizeof(uint32_t);
}

bool soak_reply_matches(uint32_t kernel, uint64_t seq, const soak_reply *reply) {
    uint32_t words = soak_words(kernel, seq);
    uint32_t h = 2166136261u ^ (uint32_t)seq;
    for (uint32_t i = 0; i < words; i++) h = (h ^ mix32((uint32_t)seq + i * 0x85ebca6bu + kernel)) * 16777619u;
    return reply->kernel == kernel && reply->words == words && reply->hash == h;
}

bool soak_window_init(soak_window *w, uint32_t size) {
    memset(w, 0, sizeof *w);
    w->size = size;
    w->seen = calloc(size, 1);
    return w->seen != NULL;
}

void soak_window_free(soak_window *w) {
    free(w->seen);
    w->seen = NULL;
}

uint64_t soak_window_seq(const soak_window *w, uint32_t seq32) {
    /* Within 2^31 either side of the base: older seqs come out below it. */
    int64_t delta = (int32_t)(seq32 - (uint32_t)w->base);
    return delta < 0 && (uint64_t)-delta > w->base ? UINT64_MAX : (uint64_t)((int64_t)w->base + delta);
}

soak_mark soak_window_mark(soak_window *w, uint64_t seq, uint64_t sent) {
    if (seq < w->base) return SOAK_DUPLICATE;
    if (seq >= sent || seq - w->base >= w->size) return SOAK_UNKNOWN;
    uint8_t *bit = &w->seen[seq & (w->size - 1)];
    if (*bit) return SOAK_DUPLICATE;
    *bit = 1;
    while (w->seen[w->base & (w->size - 1)]) {
        w->seen[w->base & (w->size - 1)] = 0;
        w->base++;
    }
    return SOAK_NEW;
}
