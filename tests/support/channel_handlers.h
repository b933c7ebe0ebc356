/* The DSL handlers of the channel tests (tests/k2k and the conformance
 * suite's channel checks), one source for both. */
#ifndef RK_TESTS_CHANNEL_HANDLERS_H
#define RK_TESTS_CHANNEL_HANDLERS_H

/* stage: forwards on port 0. fanout: forwards on ports 0 and 1. sink: answers.
 * bounce: the cycle's kernel (conformance: channel.backpressure.cycle). wrong_size / no_port:
 * bad emits. crash: an integer division by zero when seq is 7 (a NULL write
 * is outside the dialect every backend accepts). */
static const char channel_handlers_source[] =
    "typedef struct { uint64_t seq; uint32_t source; uint32_t hops; uint64_t check; int32_t ttl; uint32_t flags; } "
    "Msg;\n"
    "RK_DEVICE void advance(Msg *m) { m->hops += 1u; m->check = m->check * 31u + m->hops; }\n"
    "RK_HANDLER int stage(const Msg *in, Msg *out, void *state) {\n"
    "    Msg m = *in; advance(&m); *out = m;\n"
    "    return rk_emit(0, &m);\n"
    "}\n"
    "RK_HANDLER int fanout(const Msg *in, Msg *out, void *state) {\n"
    "    Msg m = *in; advance(&m); *out = m;\n"
    "    int a = rk_emit(0, &m);\n"
    "    int b = rk_emit(1, &m);\n"
    "    return a != 0 ? a : b;\n"
    "}\n"
    "RK_HANDLER int sink(const Msg *in, Msg *out, void *state) {\n"
    "    Msg m = *in; advance(&m); *out = m;\n"
    "    return 0;\n"
    "}\n"
    "RK_HANDLER int bounce(const Msg *in, Msg *out, void *state) {\n"
    "    Msg m = *in; advance(&m); m.ttl -= 1;\n"
    "    if (m.ttl <= 0) { m.flags = 1u; *out = m; return 0; }\n"
    "    *out = m;\n"
    "    return rk_emit(0, &m);\n"
    "}\n"
    "RK_HANDLER int wrong_size(const Msg *in, Msg *out, void *state) {\n"
    "    uint32_t small = 1u; *out = *in;\n"
    "    return rk_emit(0, &small);\n"
    "}\n"
    "RK_HANDLER int no_port(const Msg *in, Msg *out, void *state) {\n"
    "    *out = *in;\n"
    "    return rk_emit(5, in);\n"
    "}\n"
    "RK_HANDLER int crash(const Msg *in, Msg *out, void *state) {\n"
    "    Msg m = *in; advance(&m);\n"
    "    if (in->seq == 7u) m.hops += (uint32_t)in->seq / (uint32_t)in->ttl; /* ttl 0: SIGFPE on the CPU */\n"
    "    *out = m;\n"
    "    return 0;\n"
    "}\n";

#endif
