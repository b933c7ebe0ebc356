/* One arena per compilation: everything the stages allocate lives until the
 * compilation ends, so nothing is freed piecemeal and an unwind leaks nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp.h"

struct tp_chunk {
    tp_chunk *next;
    size_t size, used;
    max_align_t data[];
};

enum { CHUNK_SIZE = 64 * 1024 };

static tp_chunk *new_chunk(tp_ctx *ctx, size_t need) {
    size_t size = need > CHUNK_SIZE ? need : CHUNK_SIZE;
    if (ctx->arena.total + size > TP_MAX_ARENA && !ctx->arena_exhausted) {
        /* Reporting allocates too: let that one through, then stop. */
        ctx->arena_exhausted = true;
        rk__tp_error(ctx, NULL, "the compilation needs more than %u MiB of memory", TP_MAX_ARENA >> 20);
        ctx->fatal_status = RK_OUT_OF_MEMORY;
        rk__tp_fatal(ctx);
    }
    tp_chunk *c = malloc(sizeof *c + size);
    if (!c) {
        ctx->fatal_status = RK_OUT_OF_MEMORY;
        rk__tp_fatal(ctx);
    }
    c->size = size;
    c->used = 0;
    c->next = ctx->arena.head;
    ctx->arena.head = c;
    ctx->arena.total += size;
    return c;
}

void *rk__tp_alloc(tp_ctx *ctx, size_t size) {
    size = (size + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
    tp_chunk *c = ctx->arena.head;
    if (!c || c->size - c->used < size) {
        /* Big requests get their own chunk behind the current one, so the
         * current chunk's free space is not thrown away. */
        if (c && size > CHUNK_SIZE / 4) {
            tp_chunk *big = new_chunk(ctx, size);
            ctx->arena.head = big->next;
            big->next = c->next;
            c->next = big;
            big->used = size;
            memset(big->data, 0, size);
            return big->data;
        }
        c = new_chunk(ctx, size);
    }
    void *p = (char *)c->data + c->used;
    c->used += size;
    memset(p, 0, size);
    return p;
}

void rk__tp_arena_free(tp_arena *arena) {
    tp_chunk *c = arena->head;
    while (c) {
        tp_chunk *next = c->next;
        free(c);
        c = next;
    }
    arena->head = NULL;
    arena->total = 0;
}

char *rk__tp_strndup(tp_ctx *ctx, const char *s, size_t n) {
    char *p = rk__tp_alloc(ctx, n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *rk__tp_strdup(tp_ctx *ctx, const char *s) { return rk__tp_strndup(ctx, s, strlen(s)); }

char *rk__tp_vformat(tp_ctx *ctx, const char *fmt, va_list ap) {
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (n < 0) n = 0;
    char *p = rk__tp_alloc(ctx, (size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    return p;
}

char *rk__tp_format(tp_ctx *ctx, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *p = rk__tp_vformat(ctx, fmt, ap);
    va_end(ap);
    return p;
}

/* ---- text buffer --------------------------------------------------------- */

void rk__tp_buf_init(tp_buf *b, tp_ctx *ctx) {
    b->ctx = ctx;
    b->cap = 64;
    b->len = 0;
    b->data = rk__tp_alloc(ctx, b->cap);
}

static void reserve(tp_buf *b, size_t extra) {
    if (b->len + extra + 1 <= b->cap) return;
    size_t cap = b->cap * 2;
    while (cap < b->len + extra + 1) cap *= 2;
    char *data = rk__tp_alloc(b->ctx, cap);
    memcpy(data, b->data, b->len);
    b->data = data;
    b->cap = cap;
}

void rk__tp_buf_putn(tp_buf *b, const char *s, size_t n) {
    reserve(b, n);
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void rk__tp_buf_puts(tp_buf *b, const char *s) { rk__tp_buf_putn(b, s, strlen(s)); }

void rk__tp_buf_printf(tp_buf *b, const char *fmt, ...) {
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof small) {
        rk__tp_buf_putn(b, small, (size_t)n);
        return;
    }
    reserve(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* ---- hash map (FNV-1a, linear probing, tombstones) ----------------------- */

static const char TOMBSTONE[] = "";

static uint32_t hash_bytes(const char *s, int len) {
    uint32_t h = 2166136261u;
    for (int i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 16777619u;
    }
    return h;
}

static bool match(const tp_map_entry *e, const char *key, int keylen) {
    return e->key && e->key != TOMBSTONE && e->keylen == keylen && memcmp(e->key, key, (size_t)keylen) == 0;
}

static tp_map_entry *find_entry(const tp_map *map, const char *key, int keylen) {
    if (!map->buckets) return NULL;
    uint32_t h = hash_bytes(key, keylen);
    for (int i = 0; i < map->capacity; i++) {
        tp_map_entry *e = &map->buckets[(h + (uint32_t)i) % (uint32_t)map->capacity];
        if (match(e, key, keylen)) return e;
        if (!e->key) return NULL;
    }
    return NULL;
}

static void rehash(tp_ctx *ctx, tp_map *map) {
    int live = 0;
    for (int i = 0; i < map->capacity; i++)
        if (map->buckets[i].key && map->buckets[i].key != TOMBSTONE) live++;
    int cap = map->capacity ? map->capacity : 16;
    while (live * 100 / cap >= 50) cap *= 2;
    tp_map fresh = {.buckets = rk__tp_alloc(ctx, sizeof(tp_map_entry) * (size_t)cap), .capacity = cap};
    for (int i = 0; i < map->capacity; i++) {
        tp_map_entry *e = &map->buckets[i];
        if (e->key && e->key != TOMBSTONE) rk__tp_map_put(ctx, &fresh, e->key, e->keylen, e->value);
    }
    *map = fresh;
}

void *rk__tp_map_get(const tp_map *map, const char *key, int keylen) {
    tp_map_entry *e = find_entry(map, key, keylen);
    return e ? e->value : NULL;
}

void rk__tp_map_put(tp_ctx *ctx, tp_map *map, const char *key, int keylen, void *value) {
    if (!map->buckets || map->used * 100 / map->capacity >= 70) rehash(ctx, map);
    uint32_t h = hash_bytes(key, keylen);
    for (int i = 0; i < map->capacity; i++) {
        tp_map_entry *e = &map->buckets[(h + (uint32_t)i) % (uint32_t)map->capacity];
        if (match(e, key, keylen)) {
            e->value = value;
            return;
        }
        if (!e->key) {
            e->key = key;
            e->keylen = keylen;
            e->value = value;
            map->used++;
            return;
        }
    }
    rehash(ctx, map);
    rk__tp_map_put(ctx, map, key, keylen, value);
}

void rk__tp_map_delete(tp_map *map, const char *key, int keylen) {
    tp_map_entry *e = find_entry(map, key, keylen);
    if (e) e->key = TOMBSTONE;
}
