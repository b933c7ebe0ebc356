/* The handlers `rk demo pipeline` and `rk bench k2k` run: a stage marks a
 * message and emits it on port 0 to the next kernel (include/ringkernel/
 * channel.h); the sink marks it and answers the host. 32-bit words only, as
 * in demo_handler.c, so the text stays portable to WGSL.
 *
 * Each stage does check = check * 31 + hops after hops += 1, so the host can
 * verify that every message went through every stage once, in order. */

typedef struct PipeMsg {
    uint32_t seq;    /* the host's running number */
    uint32_t hops;   /* stages that handled it */
    uint32_t check;  /* updated by every stage */
    uint32_t pad[13]; /* 64 bytes, the usual benchmark size */
} PipeMsg;

RK_DEVICE void pipe_mark(PipeMsg *m) {
    m->hops += 1u;
    m->check = m->check * 31u + m->hops;
}

RK_HANDLER int pipe_stage(const PipeMsg *in, PipeMsg *out, void *state) {
    PipeMsg m = *in;
    pipe_mark(&m);
    *out = m;
    return rk_emit(0, &m);
}

RK_HANDLER int pipe_sink(const PipeMsg *in, PipeMsg *out, void *state) {
    PipeMsg m = *in;
    pipe_mark(&m);
    *out = m;
    return 0;
}

/* The sink of `rk bench k2k`'s device-only burst: checks on the device that
 * the message went through every stage once (its check word), answers the
 * host only when it did not, so the host's receiving is out of the rate. */
RK_HANDLER int pipe_check_sink(const PipeMsg *in, PipeMsg *out, void *state) {
    PipeMsg m = *in;
    pipe_mark(&m);
    uint32_t c = m.seq;
    for (uint32_t h = 1u; h <= m.hops && h <= 16u; h++) c = c * 31u + h;
    *out = m;
    return c == m.check ? 0 : 1;
}
