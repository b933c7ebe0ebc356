/* The handler `rk bench soak` runs: hashes the first `words` payload words
 * of a request (a random length up to the slot), so a reply proves the
 * handler saw exactly that request's bytes. DSL source: the same text runs
 * on every backend. 32-bit integers only (WGSL has no 64-bit ones). */

typedef struct SoakRequest {
    uint32_t seq;          /* the sender's running number for its kernel */
    uint32_t kernel;       /* which kernel it was sent to */
    uint32_t words;        /* payload words in use, 0 .. 61 */
    uint32_t payload[61];  /* 256-byte slots */
} SoakRequest;

typedef struct SoakReply {
    uint32_t seq;
    uint32_t kernel;
    uint32_t words;
    uint32_t hash;         /* FNV-1a over seq and the words in use */
} SoakReply;

typedef struct SoakState {
    uint32_t unused;
} SoakState;

RK_HANDLER int soak_handler(const SoakRequest *req, SoakReply *resp, SoakState *state) {
    uint32_t n = req->words;
    if (n > 61u) n = 61u;
    uint32_t h = 2166136261u ^ req->seq;
    for (uint32_t i = 0u; i < n; i++) h = (h ^ req->payload[i]) * 16777619u;
    resp->seq = req->seq;
    resp->kernel = req->kernel;
    resp->words = n;
    resp->hash = h;
    return 0;
}
