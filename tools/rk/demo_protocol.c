/* Requests and expected replies for rk demo, computed on the host exactly as
 * the DSL handler computes them on the device. */
#include <stdio.h>
#include <string.h>

#include "demo_protocol.h"

_Static_assert(sizeof(demo_request) == 64, "the demo request is 64 bytes, like the handler's");
_Static_assert(sizeof(demo_reply) == 16, "the demo reply is 16 bytes, like the handler's");

void demo_make_request(uint64_t seq, demo_request *out) {
    uint32_t s = (uint32_t)seq;
    memset(out, 0, sizeof *out);
    out->seq = s;
    out->a = s * 747796405u + 2891336453u;
    out->b = s ^ 0x9e3779b9u;
}

/* The handler's hash, in host C. */
static uint32_t expected_mix(uint32_t a, uint32_t b) {
    uint32_t h = a * 2654435761u;
    h ^= b;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    return h;
}

bool demo_check_reply(uint64_t seq, const demo_reply *reply, char *why, size_t why_size) {
    demo_request req;
    demo_make_request(seq, &req);
    uint32_t sum = req.a + req.b, mix = expected_mix(req.a, req.b);
    if (reply->seq != req.seq)
        snprintf(why, why_size, "reply for message %llu carries seq %u", (unsigned long long)seq, reply->seq);
    else if (reply->sum != sum)
        snprintf(why, why_size, "message %llu: sum %u, expected %u", (unsigned long long)seq, reply->sum, sum);
    else if (reply->mix != mix)
        snprintf(why, why_size, "message %llu: mix %#x, expected %#x", (unsigned long long)seq, reply->mix, mix);
    else if (reply->status != 0)
        snprintf(why, why_size, "message %llu: status field %u, expected 0", (unsigned long long)seq, reply->status);
    else
        return true;
    return false;
}
