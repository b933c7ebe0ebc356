/* Corpus cases: reductions, scans, matrix multiply, histograms, particles,
 * a hash set, narrow and double data, warp operations, ring handlers and an
 * edge detector; each with its plain C reference. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"


enum { N = 1000, GRID = (N + 63) / 64 };

/* ---- reduce_sum ---- */
static void reduce_sum_setup(diff_program *p) {
    corpus_buffer(p, "in", DT_I32, N, corpus_ints(N, -1000, 1000), false);
    corpus_buffer(p, "block_sums", DT_I32, GRID, NULL, true);
    corpus_buffer(p, "total", DT_I32, 1, NULL, true);
    corpus_launch(p, "reduce_sum", GRID, 64, 4, BUF(0), BUF(1), BUF(2), INT(N));
}
static void reduce_sum_ref(const diff_program *p, void *e[]) {
    const int *in = IN(p, 0, int);
    int *sums = e[1], *total = e[2];
    for (int i = 0; i < N; i++) sums[i / 64] += in[i], *total += in[i];
}

/* ---- reduce_max ---- */
static void reduce_max_setup(diff_program *p) {
    float *in = corpus_floats(N, 0.0f, 100.0f);
    in[517] = in[3] = 123.0f; /* a tie across blocks, and one inside block 0 */
    in[40] = 123.0f;
    corpus_buffer(p, "in", DT_F32, N, in, false);
    corpus_buffer(p, "block_max", DT_F32, GRID, NULL, true);
    corpus_buffer(p, "block_arg", DT_I32, GRID, NULL, true);
    corpus_buffer(p, "max_bits", DT_I32, 1, NULL, true);
    corpus_launch(p, "reduce_max", GRID, 64, 5, BUF(0), BUF(1), BUF(2), BUF(3), INT(N));
}
static void reduce_max_ref(const diff_program *p, void *e[]) {
    const float *in = IN(p, 0, float);
    float *bm = e[1];
    int *ba = e[2], *mb = e[3];
    for (int b = 0; b < GRID; b++) {
        bm[b] = -1.0e30f, ba[b] = -1;
        for (int i = b * 64; i < N && i < b * 64 + 64; i++)
            if (in[i] > bm[b]) bm[b] = in[i], ba[b] = i;
        if ((int)(bm[b] * 1024.0f) > *mb) *mb = (int)(bm[b] * 1024.0f);
    }
}

/* ---- scan_blocks ---- */
static void scan_setup(diff_program *p) {
    corpus_buffer(p, "in", DT_I32, N, corpus_ints(N, -50, 100), false);
    corpus_buffer(p, "out", DT_I32, N, NULL, true);
    corpus_buffer(p, "block_totals", DT_I32, GRID, NULL, true);
    corpus_launch(p, "scan_block", GRID, 64, 4, BUF(0), BUF(1), BUF(2), INT(N));
    corpus_launch(p, "add_block_offsets", GRID, 64, 3, BUF(1), BUF(2), INT(N));
}
static void scan_ref(const diff_program *p, void *e[]) {
    const int *in = IN(p, 0, int);
    int *out = e[1], *tot = e[2], run = 0;
    for (int i = 0; i < N; i++) {
        run += in[i];
        out[i] = run;
        tot[i / 64] += in[i];
    }
}

/* ---- matmul_tiled: 20 x 20 times 20 x 27 ---- */
enum { MM = 20, MK = 20, MN = 27 };
static void matmul_setup(diff_program *p) {
    corpus_buffer(p, "a", DT_F32, MM * MK, corpus_floats(MM * MK, -1.0f, 1.0f), false);
    corpus_buffer(p, "b", DT_F32, MK * MN, corpus_floats(MK * MN, -1.0f, 1.0f), false);
    corpus_buffer(p, "c", DT_F32, MM * MN, NULL, true);
    p->buffers[2].abs_tol = 1e-5; /* a GPU may fuse multiply-adds */
    corpus_launch(p, "matmul_tiled", 1, 1, 6, BUF(0), BUF(1), BUF(2), INT(MM), INT(MN), INT(MK));
    p->launches[0].grid = (rk_dim3){(MN + 7) / 8, (MM + 7) / 8, 1};
    p->launches[0].block = (rk_dim3){8, 8, 1};
}
static void matmul_ref(const diff_program *p, void *e[]) {
    const float *a = IN(p, 0, float), *b = IN(p, 1, float);
    float *c = e[2];
    for (int r = 0; r < MM; r++)
        for (int col = 0; col < MN; col++) {
            float acc = 0.0f;
            for (int j = 0; j < MK; j++) acc += a[r * MK + j] * b[j * MN + col];
            c[r * MN + col] = acc;
        }
}

/* ---- histograms ---- */
static void histogram_setup(diff_program *p) {
    int *v = corpus_ints(N, -20, 280); /* some out of range: ignored */
    corpus_buffer(p, "values", DT_I32, N, v, false);
    corpus_buffer(p, "bins", DT_U32, 16, NULL, true);
    corpus_launch(p, "histogram", GRID, 64, 3, BUF(0), BUF(1), INT(N));
}
static void histogram_ref(const diff_program *p, void *e[]) {
    const int *v = IN(p, 0, int);
    unsigned *bins = e[1];
    for (int i = 0; i < N; i++)
        if (v[i] >= 0 && v[i] <= 255) bins[v[i] >> 4]++;
}
static void histogram_shared_setup(diff_program *p) {
    corpus_buffer(p, "values", DT_I32, 5000, corpus_ints(5000, 0, 1 << 20), false);
    corpus_buffer(p, "bins", DT_U32, 32, NULL, true);
    corpus_launch(p, "histogram_shared", 4, 64, 4, BUF(0), BUF(1), INT(5000), INT(7));
}
static void histogram_shared_ref(const diff_program *p, void *e[]) {
    const int *v = IN(p, 0, int);
    unsigned *bins = e[1];
    for (int i = 0; i < 5000; i++) bins[((unsigned)v[i] >> 7) & 31]++;
}

/* ---- particles ---- */
static void particles_soa_setup(diff_program *p) {
    corpus_buffer(p, "x", DT_F32, N, corpus_floats(N, 0.0f, 1.0f), true);
    corpus_buffer(p, "y", DT_F32, N, corpus_floats(N, 0.0f, 1.0f), true);
    corpus_buffer(p, "vx", DT_F32, N, corpus_floats(N, -3.0f, 3.0f), true);
    corpus_buffer(p, "vy", DT_F32, N, corpus_floats(N, -3.0f, 3.0f), true);
    corpus_buffer(p, "bounces", DT_U32, 3, NULL, true);
    /* Fused multiply-adds on a GPU: x + vx * dt rounds once, and where the sum
     * cancels toward 0 that is many ulps of the small result (H100: up to 11). */
    for (int b = 0; b < 4; b++) p->buffers[b].ulp = 2, p->buffers[b].abs_tol = 1e-6;
    corpus_launch(p, "particles_soa", GRID, 64, 8, BUF(0), BUF(1), BUF(2), BUF(3), BUF(4), FLT(0.1f), FLT(9.81f), INT(N));
}
static void particles_soa_ref(const diff_program *p, void *e[]) {
    (void)p;
    float *x = e[0], *y = e[1], *vx = e[2], *vy = e[3];
    unsigned *b = e[4];
    for (int i = 0; i < N; i++) {
        float nvy = vy[i] - 9.81f * 0.1f, nx = x[i] + vx[i] * 0.1f, ny = y[i] + nvy * 0.1f;
        int wall = -1;
        if (nx < 0.0f) nx = -nx, vx[i] = -vx[i], wall = 0;
        else if (nx > 1.0f) nx = 2.0f - nx, vx[i] = -vx[i], wall = 1;
        else if (ny < 0.0f) ny = -ny, nvy = -nvy * 0.5f, wall = 2;
        x[i] = nx, y[i] = ny, vy[i] = nvy;
        if (wall >= 0) b[wall]++;
    }
}

typedef struct Particle {
    float pos[3], vel[3];
    int alive, hits;
} Particle;
static void particles_aos_setup(diff_program *p) {
    Particle *ps = corpus_alloc(N * sizeof *ps);
    for (int i = 0; i < N; i++) {
        for (int d = 0; d < 3; d++) {
            ps[i].pos[d] = (float)((int)(corpus_random() % 200) - 100) / 50.0f;
            ps[i].vel[d] = (float)((int)(corpus_random() % 200) - 100) / 50.0f;
        }
        ps[i].alive = corpus_random() % 5 != 0;
        ps[i].hits = (int)(corpus_random() % 3);
    }
    corpus_buffer(p, "particles", DT_F32, N * sizeof *ps / 4, ps, true);
    /* Viewed as floats; alive and hits are small ints: exact either way. Fused
     * multiply-adds on a GPU differ by ulps of values that cancel toward 0. */
    p->buffers[0].ulp = 2, p->buffers[0].abs_tol = 1e-6;
    corpus_buffer(p, "fast", DT_I32, 1, NULL, true);
    corpus_launch(p, "particles_aos", GRID, 64, 5, BUF(0), BUF(1), FLT(0.05f), FLT(2.0f), INT(N));
}
static void particles_aos_ref(const diff_program *p, void *e[]) {
    (void)p;
    Particle *ps = e[0];
    int *fast = e[1];
    for (int i = 0; i < N; i++) {
        Particle *q = &ps[i];
        if (!q->alive) continue;
        for (int d = 0; d < 3; d++) {
            q->vel[d] -= 2.0f * q->pos[d] * 0.05f;
            q->pos[d] += q->vel[d] * 0.05f;
        }
        if (q->vel[0] * q->vel[0] + q->vel[1] * q->vel[1] + q->vel[2] * q->vel[2] > 4.0f) q->hits++, (*fast)++;
    }
}

/* ---- hash set: the table's order depends on the schedule, its contents do not ---- */
enum { KEYS = 700, CAP = 1024, QUERIES = 900 };
static void hashset_setup(diff_program *p) {
    int *keys = corpus_ints(KEYS, 1, 1500); /* duplicates included */
    int *queries = corpus_ints(QUERIES, 1, 1600);
    corpus_buffer(p, "table", DT_I32, CAP, NULL, true);
    p->buffers[0].sorted = true;
    corpus_buffer(p, "keys", DT_I32, KEYS, keys, false);
    corpus_buffer(p, "inserted", DT_I32, 1, NULL, true);
    corpus_buffer(p, "queries", DT_I32, QUERIES, queries, false);
    corpus_buffer(p, "found", DT_I32, QUERIES, NULL, true);
    corpus_launch(p, "hashset_insert", (KEYS + 63) / 64, 64, 5, BUF(0), INT(CAP), BUF(1), BUF(2), INT(KEYS));
    corpus_launch(p, "hashset_lookup", (QUERIES + 63) / 64, 64, 5, BUF(0), INT(CAP), BUF(3), BUF(4), INT(QUERIES));
}
static void hashset_ref(const diff_program *p, void *e[]) {
    const int *keys = IN(p, 1, int), *queries = IN(p, 3, int);
    int *table = e[0], *inserted = e[2], *found = e[4];
    static unsigned char present[2048];
    memset(present, 0, sizeof present);
    int used = 0;
    for (int i = 0; i < KEYS; i++)
        if (!present[keys[i]]) present[keys[i]] = 1, table[used++] = keys[i];
    *inserted = used;
    for (int i = 0; i < QUERIES; i++) found[i] = present[queries[i]];
}

/* ---- narrow and double data ---- */
static void image_u8_setup(diff_program *p) {
    uint8_t *in = corpus_alloc(N);
    for (int i = 0; i < N; i++) in[i] = (uint8_t)corpus_random();
    corpus_buffer(p, "in", DT_U8, N, in, false);
    corpus_buffer(p, "out", DT_U8, N, NULL, true);
    corpus_buffer(p, "mask", DT_U8, N, NULL, true);
    corpus_launch(p, "image_u8", GRID, 64, 6, BUF(0), BUF(1), BUF(2), INT(30), INT(200), INT(N));
}
static void image_u8_ref(const diff_program *p, void *e[]) {
    const uint8_t *in = IN(p, 0, uint8_t);
    uint8_t *out = e[1], *mask = e[2];
    for (int i = 0; i < N; i++) {
        int s = (in[i] - 30) * 255 / 170;
        s = s < 0 ? 0 : s > 255 ? 255 : s;
        out[i] = (uint8_t)s;
        mask[i] = s > 127 ? 0xff : 0;
    }
}
static void saturate_setup(diff_program *p) {
    int16_t *in = corpus_alloc(N * 2);
    for (int i = 0; i < N; i++) in[i] = (int16_t)corpus_random();
    corpus_buffer(p, "in", DT_I16, N, in, false);
    corpus_buffer(p, "out", DT_I16, N, NULL, true);
    corpus_buffer(p, "peak", DT_U16, GRID, NULL, true);
    corpus_launch(p, "saturate_i16", GRID, 64, 5, BUF(0), BUF(1), BUF(2), INT(384), INT(N));
}
static void saturate_ref(const diff_program *p, void *e[]) {
    const int16_t *in = IN(p, 0, int16_t);
    int16_t *out = e[1];
    uint16_t *peak = e[2];
    for (int i = 0; i < N; i++) {
        int v = (in[i] * 384) >> 8;
        v = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
        out[i] = (int16_t)v;
        int a = v < 0 ? -v : v;
        if (a > peak[i / 64]) peak[i / 64] = (uint16_t)a;
    }
}
static void double_axpy_setup(diff_program *p) {
    double *x = corpus_alloc(N * 8), *y = corpus_alloc(N * 8);
    for (int i = 0; i < N; i++) x[i] = (double)corpus_random() / 4294967296.0, y[i] = (double)corpus_random() / 65536.0;
    corpus_buffer(p, "x", DT_F64, N, x, false);
    corpus_buffer(p, "y", DT_F64, N, y, true);
    corpus_buffer(p, "block_sq", DT_F64, GRID, NULL, true);
    p->buffers[1].ulp = p->buffers[2].ulp = 4; /* fused multiply-adds; tree order of the sum */
    corpus_launch(p, "double_axpy", GRID, 64, 5, DIFF_SCALAR(RK_ARG_DOUBLE(2.5)), BUF(0), BUF(1), BUF(2), INT(N));
}
static void double_axpy_ref(const diff_program *p, void *e[]) {
    const double *x = IN(p, 0, double);
    double *y = e[1], *sq = e[2];
    for (int b = 0; b < GRID; b++) {
        double part[64];
        for (int t = 0; t < 64; t++) {
            int i = b * 64 + t;
            double v = i < N ? 2.5 * x[i] + y[i] : 0.0;
            if (i < N) y[i] = v;
            part[t] = v * v;
        }
        for (int s = 32; s > 0; s /= 2)
            for (int t = 0; t < s; t++) part[t] += part[t + s];
        sq[b] = part[0];
    }
}

/* ---- warp operations ---- */
static void warp_vote_setup(diff_program *p) {
    corpus_buffer(p, "in", DT_I32, N, corpus_ints(N, -100, 100), false);
    corpus_buffer(p, "warp_sum", DT_I32, GRID * 2, NULL, true);
    corpus_buffer(p, "odd_mask", DT_U32, GRID * 2, NULL, true);
    corpus_buffer(p, "first", DT_I32, N, NULL, true);
    corpus_launch(p, "warp_vote", GRID, 64, 5, BUF(0), BUF(1), BUF(2), BUF(3), INT(N));
}
static void warp_vote_ref(const diff_program *p, void *e[]) {
    const int *in = IN(p, 0, int);
    int *sum = e[1], *first = e[3];
    unsigned *odd = e[2];
    for (int i = 0; i < N; i++) {
        sum[i / 32] += in[i];
        if (in[i] & 1) odd[i / 32] |= 1u << (i % 32);
        first[i] = in[i / 32 * 32];
    }
}

/* ---- ring handlers, driven over a sequence of messages ---- */
typedef struct { uint32_t op, account; int32_t amount; uint32_t seq; } account_req;
typedef struct { uint32_t seq; int32_t balance, status; uint32_t pad; } account_reply;
typedef struct { int32_t balance[8]; uint32_t ops, rejected; } bank;
enum { MSGS = 300 };
static void account_setup(diff_program *p) {
    account_req *r = corpus_alloc(MSGS * sizeof *r);
    for (int i = 0; i < MSGS; i++)
        r[i] = (account_req){corpus_random() % 5, corpus_random() % 9, (int32_t)(corpus_random() % 500), (uint32_t)i};
    corpus_buffer(p, "requests", DT_U32, MSGS * 4, r, false);
    corpus_buffer(p, "replies", DT_I32, MSGS * 4, NULL, true);
    corpus_buffer(p, "bank", DT_I32, sizeof(bank) / 4, NULL, true);
    corpus_buffer(p, "status", DT_I32, MSGS, NULL, true);
    corpus_launch(p, "account", 1, 1, 5, BUF(0), BUF(1), BUF(2), BUF(3), INT(MSGS));
}
static void account_ref(const diff_program *p, void *e[]) {
    const account_req *r = p->buffers[0].init;
    account_reply *rep = e[1];
    bank *b = e[2];
    int *rc = e[3];
    for (int i = 0; i < MSGS; i++) {
        int st = 0;
        if (r[i].account >= 8) st = -2;
        else if (r[i].op == 1) b->balance[r[i].account] += r[i].amount;
        else if (r[i].op == 2) {
            if (b->balance[r[i].account] >= r[i].amount) b->balance[r[i].account] -= r[i].amount;
            else st = -1;
        } else if (r[i].op != 3) st = -3;
        rep[i] = (account_reply){r[i].seq, r[i].account < 8 ? b->balance[r[i].account] : 0, st, 0};
        b->ops++;
        if (st) b->rejected++;
        rc[i] = st;
    }
}

typedef struct { uint32_t cmd, key; int32_t value; uint32_t pad; } kv_req;
typedef struct { uint32_t keys[16]; int32_t values[16]; uint32_t used[16], misses; } kv_state;
static void kv_setup(diff_program *p) {
    kv_req *r = corpus_alloc(MSGS * sizeof *r);
    for (int i = 0; i < MSGS; i++)
        r[i] = (kv_req){corpus_random() % 4, corpus_random() % 24, (int32_t)corpus_random() % 1000, 0};
    corpus_buffer(p, "requests", DT_U32, MSGS * 4, r, false);
    corpus_buffer(p, "replies", DT_I32, MSGS * 2, NULL, true);
    corpus_buffer(p, "state", DT_U32, sizeof(kv_state) / 4, NULL, true);
    corpus_buffer(p, "status", DT_I32, MSGS, NULL, true);
    corpus_launch(p, "kv", 1, 1, 5, BUF(0), BUF(1), BUF(2), BUF(3), INT(MSGS));
}
static void kv_ref(const diff_program *p, void *e[]) {
    const kv_req *r = p->buffers[0].init;
    int32_t *rep = e[1];
    kv_state *s = e[2];
    int *rc = e[3];
    for (int i = 0; i < MSGS; i++) {
        int slot = -1, free_slot = -1;
        for (int k = 0; k < 16 && slot < 0; k++) {
            if (s->used[k] && s->keys[k] == r[i].key) slot = k;
            else if (!s->used[k] && free_slot < 0) free_slot = k;
        }
        int found = slot >= 0, value = 0;
        if (r[i].cmd == 3) { rc[i] = -2; continue; }
        if (r[i].cmd == 0 && found) value = s->values[slot];
        if (r[i].cmd == 1) {
            if (found) s->values[slot] = r[i].value;
            else if (free_slot >= 0) s->used[free_slot] = 1, s->keys[free_slot] = r[i].key, s->values[free_slot] = r[i].value;
            else { rc[i] = -1; continue; }
            value = r[i].value;
        }
        if (r[i].cmd == 2 && found) s->used[slot] = 0;
        if (!found) s->misses++;
        rep[2 * i] = value, rep[2 * i + 1] = found, rc[i] = 0;
    }
}

/* ---- sobel_dir: 37 x 23 image ---- */
enum { SW = 37, SH = 23 };
static void sobel_setup(diff_program *p) {
    corpus_buffer(p, "img", DT_I32, SW * SH, corpus_ints(SW * SH, 0, 255), false);
    corpus_buffer(p, "mag", DT_I32, SW * SH, NULL, true);
    corpus_buffer(p, "dir", DT_I32, SW * SH, NULL, true);
    corpus_launch(p, "sobel_dir", 1, 1, 6, BUF(0), BUF(1), BUF(2), INT(SW), INT(SH), INT(300));
    p->launches[0].grid = (rk_dim3){(SW + 7) / 8, (SH + 7) / 8, 1};
    p->launches[0].block = (rk_dim3){8, 8, 1};
}
static int px(const int *img, int x, int y) {
    x = x < 0 ? 0 : x >= SW ? SW - 1 : x;
    y = y < 0 ? 0 : y >= SH ? SH - 1 : y;
    return img[y * SW + x];
}
static void sobel_ref(const diff_program *p, void *e[]) {
    const int *img = IN(p, 0, int);
    int *mag = e[1], *dir = e[2];
    for (int y = 0; y < SH; y++)
        for (int x = 0; x < SW; x++) {
            int gx = px(img, x + 1, y - 1) + 2 * px(img, x + 1, y) + px(img, x + 1, y + 1) - px(img, x - 1, y - 1) -
                     2 * px(img, x - 1, y) - px(img, x - 1, y + 1);
            int gy = px(img, x - 1, y + 1) + 2 * px(img, x, y + 1) + px(img, x + 1, y + 1) - px(img, x - 1, y - 1) -
                     2 * px(img, x, y - 1) - px(img, x + 1, y - 1);
            int ax = abs(gx), ay = abs(gy), m = ax + ay;
            mag[y * SW + x] = m;
            dir[y * SW + x] = m < 300 ? 0 : ax > 2 * ay ? 1 : ay > 2 * ax ? 2 : 3;
        }
}

const corpus_case corpus_compute[] = {
    {"reduce_sum.c", reduce_sum_setup, reduce_sum_ref, false, NULL},
    {"reduce_max.c", reduce_max_setup, reduce_max_ref, false, NULL},
    {"scan_blocks.c", scan_setup, scan_ref, false, NULL},
    {"matmul_tiled.c", matmul_setup, matmul_ref, false, NULL},
    {"histogram.c", histogram_setup, histogram_ref, false, NULL},
    {"histogram_shared.c", histogram_shared_setup, histogram_shared_ref, false, NULL},
    {"particles_soa.c", particles_soa_setup, particles_soa_ref, false, NULL},
    {"particles_aos.c", particles_aos_setup, particles_aos_ref, true, NULL} /* a helper takes p->vel */,
    {"hashset_cas.c", hashset_setup, hashset_ref, false, NULL},
    {"image_u8.c", image_u8_setup, image_u8_ref, true, NULL},
    {"saturate_i16.c", saturate_setup, saturate_ref, true, NULL},
    {"double_axpy.c", double_axpy_setup, double_axpy_ref, true, NULL},
    {"warp_vote.c", warp_vote_setup, warp_vote_ref, true, NULL},
    {"ring_account.c", account_setup, account_ref, false, NULL},
    {"ring_kv.c", kv_setup, kv_ref, false, NULL},
    {"sobel_dir.c", sobel_setup, sobel_ref, false, NULL},
};
const size_t corpus_compute_count = sizeof corpus_compute / sizeof corpus_compute[0];
