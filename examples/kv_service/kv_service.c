/* kv_service: a key-value store and rate limiter served by one ring kernel
 * to 8 client threads, each calling it with rk_kernel_call and checking
 * every reply against its own model.
 *
 *   kv_service [BACKEND] [ROUNDS]     BACKEND: cpu, webgpu, cuda (default: automatic)
 *
 * Each client owns 64 keys and a rate-limiter tenant, so it knows what every
 * reply must be; all of them also add to one shared counter, whose replies
 * must be 1, 2, 3, ... with none missing or repeated. The kernel is ordered:
 * one handler at a time, so its state needs no atomics on any backend.
 * Exit: 0 every reply right, 1 otherwise, 77 the backend is not here. */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <ringkernel/ringkernel.h>

#include "kv_handler.c" /* KvRequest, KvReply, KvState, the KV_ codes */

extern const char kv_handler_source[]; /* the same file, embedded by the build */

enum { CLIENTS = 8, KEYS = 64, SHARED_KEY = 1, STEP_MS = 20 };

typedef struct client {
    rk_kernel *k;
    uint32_t index, rounds;
    uint32_t values[KEYS];
    bool present[KEYS];
    uint32_t tokens, last_ms; /* this client's tenant, milli-tokens */
    _Atomic unsigned char *shared_seen;
    uint64_t checked, wrong;
} client;

static KvReply call(client *c, uint32_t op, uint32_t key, uint32_t value, uint32_t now_ms) {
    KvRequest q = {.op = op, .key = key, .value = value, .now_ms = now_ms};
    KvReply r = {0};
    rk_status s = rk_kernel_call(c->k, &q, sizeof q, &r, sizeof r, NULL, 30000000000u);
    if (s != RK_OK) {
        fprintf(stderr, "client %u: %s: %s\n", c->index, rk_status_name(s), rk_last_error());
        exit(1);
    }
    return r;
}

static void expect(client *c, bool ok, const char *fmt, ...) {
    c->checked++;
    if (ok) return;
    if (c->wrong++ < 5) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "client %u: wrong reply: ", c->index);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
    }
}

/* The rate limiter as the client expects it: KV_BUCKET_MILLI, refilled
 * KV_REFILL_PER_MS per ms (at most 1 s counted), one token per request. */
static bool model_limit(client *c, uint32_t now_ms) {
    uint32_t elapsed = now_ms - c->last_ms;
    if (elapsed > 1000) elapsed = 1000;
    uint32_t tokens = c->tokens + elapsed * KV_REFILL_PER_MS;
    c->tokens = tokens > KV_BUCKET_MILLI ? KV_BUCKET_MILLI : tokens;
    c->last_ms = now_ms;
    if (c->tokens < 1000) return false;
    c->tokens -= 1000;
    return true;
}

static void *client_main(void *arg) {
    client *c = arg;
    c->tokens = KV_BUCKET_MILLI;
    for (uint32_t r = 0; r < c->rounds; r++) {
        uint32_t i = r % KEYS, key = (c->index + 1) * 1000 + i, v = r * 7 + c->index;
        if (!c->present[i]) {
            KvReply got = call(c, KV_GET, key, 0, 0);
            expect(c, got.status == KV_MISSING, "GET %u of a new key: status %u", key, got.status);
        }
        KvReply put = call(c, KV_PUT, key, v, 0);
        uint32_t old = c->present[i] ? c->values[i] : 0;
        expect(c, put.status == KV_OK && put.value == old, "PUT %u: status %u, old %u (want %u)", key, put.status,
               put.value, old);
        KvReply get = call(c, KV_GET, key, 0, 0);
        expect(c, get.status == KV_OK && get.value == v, "GET %u: %u (want %u)", key, get.value, v);
        KvReply add = call(c, KV_ADD, key, r, 0);
        expect(c, add.status == KV_OK && add.value == v + r, "ADD %u: %u (want %u)", key, add.value, v + r);
        c->values[i] = v + r;
        c->present[i] = true;

        uint32_t now_ms = r * STEP_MS;
        bool allowed = model_limit(c, now_ms);
        KvReply lim = call(c, KV_LIMIT, c->index, 1, now_ms);
        expect(c, lim.status == (allowed ? KV_OK : KV_DENIED) && lim.value == c->tokens / 1000,
               "LIMIT at %u ms: status %u, %u tokens left (want %s, %u)", now_ms, lim.status, lim.value,
               allowed ? "allowed" : "denied", c->tokens / 1000);

        KvReply shared = call(c, KV_ADD, SHARED_KEY, 1, 0);
        uint64_t total = (uint64_t)CLIENTS * c->rounds;
        bool fresh = shared.value >= 1 && shared.value <= total && !atomic_exchange(&c->shared_seen[shared.value - 1], 1);
        expect(c, shared.status == KV_OK && fresh, "shared counter: %u, out of range or seen before", shared.value);
    }
    return NULL;
}

int main(int argc, char **argv) {
    rk_runtime_desc rd = {.backend = argc > 1 ? argv[1] : NULL};
    uint32_t rounds = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 500;
    rk_runtime *rt = NULL;
    rk_status s = rk_runtime_create(&rd, &rt);
    if (s != RK_OK) {
        fprintf(stderr, "kv_service: %s\n", rk_last_error());
        return s == RK_BACKEND_UNAVAILABLE || s == RK_NO_DEVICE ? 77 : 1;
    }
    rk_kernel_desc desc = {
        .name = "kv",
        .handler_source = kv_handler_source,
        .handler_name = "kv_handler",
        .message_size = sizeof(KvRequest),
        .reply_size = sizeof(KvReply),
        .state_size = sizeof(KvState),
        .queue_capacity = 256,
        .ordered = true,
    };
    rk_kernel *k = NULL;
    s = rk_kernel_launch(rt, &desc, &k);
    if (s == RK_OK) s = rk_kernel_activate(k);
    if (s != RK_OK) {
        fprintf(stderr, "kv_service: %s: %s\n", rk_status_name(s), rk_last_error());
        return 1;
    }
    _Atomic unsigned char *seen = calloc((size_t)CLIENTS * rounds + 1, 1);
    if (!seen) return 1;
    static client clients[CLIENTS];
    pthread_t threads[CLIENTS];
    for (uint32_t t = 0; t < CLIENTS; t++) {
        clients[t] = (client){.k = k, .index = t, .rounds = rounds, .shared_seen = seen};
        if (pthread_create(&threads[t], NULL, client_main, &clients[t]) != 0) {
            fprintf(stderr, "kv_service: cannot start client thread %u\n", t);
            return 1;
        }
    }
    uint64_t checked = 0, wrong = 0;
    for (uint32_t t = 0; t < CLIENTS; t++) {
        pthread_join(threads[t], NULL);
        checked += clients[t].checked;
        wrong += clients[t].wrong;
    }
    for (uint64_t v = 0; v < (uint64_t)CLIENTS * rounds; v++) wrong += !atomic_load(&seen[v]);
    rk_kernel_stats st;
    rk_kernel_stats_get(k, &st);
    printf("kv_service on %s: %u clients, %llu replies checked, %llu wrong; %llu messages, latency p50 %.1f us, "
           "p99 %.1f us (%llu samples)\n",
           rk_runtime_backend_name(rt), CLIENTS, (unsigned long long)checked, (unsigned long long)wrong,
           (unsigned long long)st.messages_processed, st.latency_p50_ns / 1e3, st.latency_p99_ns / 1e3,
           (unsigned long long)st.latency_samples);
    free(seen);
    rk_kernel_destroy(k);
    rk_runtime_destroy(rt);
    return wrong ? 1 : 0;
}
