/* The handler `rk demo` runs: one request in, one reply out.
 *
 * Written in the kernel DSL (include/ringkernel/dsl.h), so the same text is
 * compiled by the CPU backend and transpiled for CUDA, WebGPU and Metal. It
 * keeps to 32-bit integers because WGSL has no 64-bit ones.
 *
 * The host computes the same values and checks every reply, so a message
 * that is lost, duplicated, mixed up with another or handled wrongly is
 * caught. */

typedef struct DemoRequest {
    uint32_t seq;      /* the host's running number for this message */
    uint32_t a, b;     /* operands */
    uint32_t pad[13];  /* makes the request 64 bytes, the usual benchmark size */
} DemoRequest;

typedef struct DemoReply {
    uint32_t seq;      /* copied from the request */
    uint32_t sum;      /* a + b (wrapping) */
    uint32_t mix;      /* a hash of a and b */
    uint32_t status;   /* 0 */
} DemoReply;

typedef struct DemoState {
    uint32_t unused;   /* the demo keeps no state between messages */
} DemoState;

RK_HANDLER int demo_handler(const DemoRequest *req, DemoReply *resp, DemoState *state) {
    uint32_t h = req->a * 2654435761u;
    h = h ^ req->b;
    h = h ^ (h >> 15);
    h = h * 2246822519u;
    h = h ^ (h >> 13);
    resp->seq = req->seq;
    resp->sum = req->a + req->b;
    resp->mix = h;
    resp->status = 0u;
    return 0;
}
