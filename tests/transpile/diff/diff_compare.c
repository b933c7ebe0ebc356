/* Comparing executors' output buffers: integers exactly, floats bit-exactly
 * or within the buffer's ULP / absolute tolerance, multisets after sorting. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"

enum { SHOWN = 8 }; /* differences printed per buffer */

static double value_at(diff_type t, const void *base, size_t i) {
    const unsigned char *p = (const unsigned char *)base + i * diff_type_size(t);
    switch (t) {
    case DT_I8: return *(const int8_t *)p;
    case DT_U8: return *(const uint8_t *)p;
    case DT_I16: { int16_t v; memcpy(&v, p, 2); return v; }
    case DT_U16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case DT_I32: { int32_t v; memcpy(&v, p, 4); return v; }
    case DT_U32: { uint32_t v; memcpy(&v, p, 4); return v; }
    case DT_I64: { int64_t v; memcpy(&v, p, 8); return (double)v; }
    case DT_U64: { uint64_t v; memcpy(&v, p, 8); return (double)v; }
    case DT_F32: { float v; memcpy(&v, p, 4); return v; }
    case DT_F64: { double v; memcpy(&v, p, 8); return v; }
    }
    return 0;
}

static void format_value(diff_type t, const void *base, size_t i, char *out, size_t size) {
    const unsigned char *p = (const unsigned char *)base + i * diff_type_size(t);
    if (t == DT_I64 || t == DT_U64) {
        uint64_t v;
        memcpy(&v, p, 8);
        if (t == DT_I64)
            snprintf(out, size, "%lld", (long long)v);
        else
            snprintf(out, size, "%llu", (unsigned long long)v);
    } else if (t == DT_F32 || t == DT_F64) {
        uint64_t bits = 0;
        memcpy(&bits, p, diff_type_size(t));
        snprintf(out, size, "%.9g (0x%llx)", value_at(t, base, i), (unsigned long long)bits);
    } else {
        snprintf(out, size, "%.0f", value_at(t, base, i));
    }
}

/* Distance in units in the last place between two finite floats of one type. */
static uint64_t ulp_distance(diff_type t, const unsigned char *a, const unsigned char *b) {
    int64_t ia, ib;
    if (t == DT_F32) {
        int32_t x, y;
        memcpy(&x, a, 4), memcpy(&y, b, 4);
        ia = x < 0 ? (int64_t)INT32_MIN - x : x;
        ib = y < 0 ? (int64_t)INT32_MIN - y : y;
    } else {
        memcpy(&ia, a, 8), memcpy(&ib, b, 8);
        ia = ia < 0 ? INT64_MIN - ia : ia;
        ib = ib < 0 ? INT64_MIN - ib : ib;
    }
    return ia > ib ? (uint64_t)ia - (uint64_t)ib : (uint64_t)ib - (uint64_t)ia;
}

static bool same(const diff_buffer *d, const void *got, const void *want, size_t i) {
    size_t es = diff_type_size(d->type);
    const unsigned char *a = (const unsigned char *)got + i * es, *b = (const unsigned char *)want + i * es;
    if (memcmp(a, b, es) == 0) return true;
    if (d->type != DT_F32 && d->type != DT_F64) return false;
    double x = value_at(d->type, got, i), y = value_at(d->type, want, i);
    if (isnan(x) && isnan(y)) return true;
    if (isnan(x) || isnan(y) || isinf(x) || isinf(y)) return false;
    return ulp_distance(d->type, a, b) <= d->ulp || fabs(x - y) <= d->abs_tol;
}

static diff_type sort_type;
static int by_value(const void *a, const void *b) {
    double x = value_at(sort_type, a, 0), y = value_at(sort_type, b, 0);
    if (x != y) return x < y ? -1 : 1;
    return memcmp(a, b, diff_type_size(sort_type)); /* 64-bit integers beyond a double's precision */
}

size_t diff_compare_buffer(const diff_program *p, size_t bi, const char *got_name, const void *got,
                           const char *want_name, const void *want, bool quiet) {
    const diff_buffer *d = &p->buffers[bi];
    size_t bytes = d->count * diff_type_size(d->type);
    void *sa = NULL, *sb = NULL;
    if (d->sorted) {
        sa = malloc(bytes + 1), sb = malloc(bytes + 1);
        memcpy(sa, got, bytes), memcpy(sb, want, bytes);
        sort_type = d->type;
        qsort(sa, d->count, diff_type_size(d->type), by_value);
        qsort(sb, d->count, diff_type_size(d->type), by_value);
        got = sa, want = sb;
    }
    size_t bad = 0;
    for (size_t i = 0; i < d->count; i++) {
        if (same(d, got, want, i)) continue;
        if (!quiet && bad < SHOWN) {
            char g[64], w[64];
            format_value(d->type, got, i, g, sizeof g);
            format_value(d->type, want, i, w, sizeof w);
            fprintf(stderr, "DIFF %s: %s%s[%zu]: %s = %s, %s = %s\n", p->name, d->name, d->sorted ? " (sorted)" : "", i,
                    got_name, g, want_name, w);
        }
        bad++;
    }
    if (!quiet && bad > SHOWN) fprintf(stderr, "DIFF %s: %s: %zu more differences\n", p->name, d->name, bad - SHOWN);
    free(sa);
    free(sb);
    return bad;
}

size_t diff_compare_all(const diff_program *p, void *results[DIFF_EXEC_COUNT][DIFF_MAX_BUFFERS],
                        const diff_outcome outcome[DIFF_EXEC_COUNT], void *expected[], bool quiet) {
    size_t bad = 0;
    for (int e = 0; e < DIFF_EXEC_COUNT; e++) {
        if (outcome[e] != DIFF_RAN || (!expected && e == DIFF_CPU)) continue;
        for (size_t b = 0; b < p->buffer_count; b++) {
            if (!p->buffers[b].output) continue;
            if (expected)
                bad += diff_compare_buffer(p, b, diff_exec_name((diff_exec_id)e), results[e][b], "reference", expected[b],
                                           quiet);
            else if (outcome[DIFF_CPU] == DIFF_RAN)
                bad += diff_compare_buffer(p, b, diff_exec_name((diff_exec_id)e), results[e][b], "cpu",
                                           results[DIFF_CPU][b], quiet);
        }
    }
    return bad;
}
