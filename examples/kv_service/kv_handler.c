/* The kv_service handler: a key-value store and a per-tenant rate limiter
 * in one ring kernel's state.
 *
 * Written in the kernel DSL (include/ringkernel/dsl.h): 32-bit integers,
 * fixed-size arrays, no pointers into the state, so the same text is
 * compiled by the CPU backend and transpiled to CUDA C and WGSL (check with
 * `rk transpile --target cuda|wgsl kv_handler.c`). The host program
 * includes this file for the message types, so they are written once. */
#include <ringkernel/dsl.h>

#define KV_SLOTS 1024u         /* open addressing, linear probing; key 0 marks a free slot */
#define KV_TENANTS 8u
#define KV_BUCKET_MILLI 5000u  /* a tenant's bucket holds 5 tokens ... */
#define KV_REFILL_PER_MS 10u   /* ... and refills one every 100 ms (in milli-tokens) */

#define KV_PUT 1u
#define KV_GET 2u
#define KV_ADD 3u
#define KV_LIMIT 4u

#define KV_OK 0u
#define KV_MISSING 1u
#define KV_FULL 2u
#define KV_DENIED 3u
#define KV_BAD_ARG 4u

typedef struct KvRequest {
    uint32_t op;      /* KV_PUT, KV_GET, KV_ADD, KV_LIMIT */
    uint32_t key;     /* the key (not 0); for KV_LIMIT the tenant, 0 .. KV_TENANTS - 1 */
    uint32_t value;   /* KV_PUT: the value; KV_ADD: the delta; KV_LIMIT: tokens wanted */
    uint32_t now_ms;  /* KV_LIMIT: the caller's clock in milliseconds */
} KvRequest;

typedef struct KvReply {
    uint32_t status;  /* KV_OK, or why not */
    uint32_t value;   /* KV_GET, KV_ADD: the value now; KV_PUT: the previous one; KV_LIMIT: tokens left */
} KvReply;

typedef struct KvState {
    uint32_t keys[KV_SLOTS];
    uint32_t values[KV_SLOTS];
    uint32_t tokens[KV_TENANTS];  /* milli-tokens */
    uint32_t last_ms[KV_TENANTS];
    uint32_t seen[KV_TENANTS];    /* a tenant's first request finds a full bucket */
} KvState;

RK_HANDLER int kv_handler(const KvRequest *req, KvReply *resp, KvState *state) {
    resp->status = KV_OK;
    resp->value = 0u;
    if (req->op == KV_LIMIT) {
        uint32_t t = req->key;
        if (t >= KV_TENANTS) {
            resp->status = KV_BAD_ARG;
            return 0;
        }
        uint32_t tokens = KV_BUCKET_MILLI;
        if (state->seen[t] != 0u) {
            uint32_t elapsed = 0u;
            if (req->now_ms > state->last_ms[t]) elapsed = req->now_ms - state->last_ms[t];
            if (elapsed > 1000u) elapsed = 1000u;
            tokens = state->tokens[t] + elapsed * KV_REFILL_PER_MS;
            if (tokens > KV_BUCKET_MILLI) tokens = KV_BUCKET_MILLI;
        }
        state->seen[t] = 1u;
        if (req->now_ms > state->last_ms[t]) state->last_ms[t] = req->now_ms;
        uint32_t cost = req->value * 1000u;
        if (tokens >= cost) {
            tokens = tokens - cost;
        } else {
            resp->status = KV_DENIED;
        }
        state->tokens[t] = tokens;
        resp->value = tokens / 1000u;
        return 0;
    }
    if (req->key == 0u || req->op < KV_PUT || req->op > KV_ADD) {
        resp->status = KV_BAD_ARG;
        return -1; /* counted in the kernel's errors_encountered */
    }
    uint32_t slot = KV_SLOTS;
    uint32_t home = (req->key * 2654435761u) & (KV_SLOTS - 1u);
    for (uint32_t i = 0u; i < KV_SLOTS; i++) {
        uint32_t s = (home + i) & (KV_SLOTS - 1u);
        if (state->keys[s] == req->key || state->keys[s] == 0u) {
            slot = s;
            break;
        }
    }
    if (slot == KV_SLOTS) {
        resp->status = KV_FULL;
        return 0;
    }
    uint32_t present = state->keys[slot] == req->key ? 1u : 0u;
    uint32_t old = present != 0u ? state->values[slot] : 0u;
    if (req->op == KV_GET) {
        if (present == 0u) resp->status = KV_MISSING;
        resp->value = old;
        return 0;
    }
    uint32_t now = req->op == KV_PUT ? req->value : old + req->value;
    state->keys[slot] = req->key;
    state->values[slot] = now;
    resp->value = req->op == KV_PUT ? old : now;
    return 0;
}
