/* The wave showcase (examples/wave) driven through both patterns with the
 * same commands: a centred impulse keeps its energy with damping 0 and loses
 * it with damping > 0, stays 4-fold symmetric, and the persistent and the
 * traditional pattern give the same field and the same query answers.
 *
 *   test_showcase_wave [cpu|cuda]
 *
 * On the CPU the two patterns run the same compiled cell update, so they
 * must agree bit for bit. On CUDA (exit 77 without a GPU) they are two
 * kernels of one module; agreement is checked to a small tolerance and
 * whether it is exact is printed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "wave_sim.h"

#if defined(__SANITIZE_THREAD__)
#define SLOW 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SLOW 1
#endif
#endif
#ifndef SLOW
#define SLOW 0
#endif

enum { N = 65, C = N / 2, CELLS = N * N };

static const char *device = "cpu";
static bool exact = true; /* CPU: bit-for-bit agreement required */

#define CHECK_WAVE(call)                                                                                  \
    do {                                                                                                  \
        rk_status s_ = (call);                                                                            \
        if (s_ != RK_OK) {                                                                                \
            fprintf(stderr, "%s:%d: %s: %s: %s\n", __FILE__, __LINE__, #call, rk_status_name(s_),         \
                    wave_last_error());                                                                   \
            exit(1);                                                                                      \
        }                                                                                                 \
    } while (0)

typedef struct pair {
    wave_sim *sim[2]; /* persistent, traditional */
    float *cur[2], *prev[2];
} pair;

static wave_sim *open_sim(wave_pattern pattern, int n, float damping) {
    wave_config cfg = {.device = device, .pattern = pattern, .nx = n, .ny = n, .speed = 0.5f, .damping = damping};
    /* On the CPU, three blocks whatever the core count: block 0 hands steps to the others. */
    if (exact && pattern == WAVE_PERSISTENT) cfg.blocks = 3;
    wave_sim *sim = NULL;
    rk_status s = wave_sim_create(&cfg, &sim);
    if (s == RK_BACKEND_UNAVAILABLE || s == RK_NO_DEVICE) RK_SKIP("%s", wave_last_error());
    CHECK_WAVE(s);
    return sim;
}

/* Traditional first and persistent last, closed in the other order: on
 * CUDA, loading or unloading a module and freeing pinned memory wait for
 * every running kernel, and a persistent kernel runs until stopped. */
static void pair_open(pair *p, int n, float damping) {
    p->sim[1] = open_sim(WAVE_TRADITIONAL, n, damping);
    p->sim[0] = open_sim(WAVE_PERSISTENT, n, damping);
    for (int i = 0; i < 2; i++) {
        p->cur[i] = calloc((size_t)n * n, sizeof(float));
        p->prev[i] = calloc((size_t)n * n, sizeof(float));
        CHECK(p->cur[i] && p->prev[i]);
    }
}

static void pair_close(pair *p) {
    for (int i = 0; i < 2; i++) { /* persistent (0) first */
        CHECK_WAVE(wave_sim_destroy(p->sim[i]));
        free(p->cur[i]);
        free(p->prev[i]);
    }
}

/* Reads both fields and checks the patterns agree. */
static void pair_read(pair *p, int n) {
    for (int i = 0; i < 2; i++) CHECK_WAVE(wave_read_field(p->sim[i], p->cur[i], p->prev[i]));
    size_t bytes = (size_t)n * n * sizeof(float);
    bool same = memcmp(p->cur[0], p->cur[1], bytes) == 0 && memcmp(p->prev[0], p->prev[1], bytes) == 0;
    if (same) return;
    double worst = 0, peak = 0;
    for (int k = 0; k < n * n; k++) {
        worst = fmax(worst, fabs((double)p->cur[0][k] - p->cur[1][k]));
        worst = fmax(worst, fabs((double)p->prev[0][k] - p->prev[1][k]));
        peak = fmax(peak, fabs((double)p->cur[1][k]));
    }
    if (exact) {
        fprintf(stderr, "persistent and traditional fields differ: max |difference| %.3g (peak %.3g)\n", worst, peak);
        exit(1);
    }
    printf("  fields agree to %.3g (peak %.3g), not bit for bit\n", worst, peak);
    CHECK(worst <= 1e-5 * fmax(peak, 1e-3));
}

/* Mirror images in x and y and the transpose are the same field. */
static void check_symmetric(const float *f, int n) {
    double worst = 0, peak = 0;
    for (int y = 0; y < n; y++) {
        for (int x = 0; x < n; x++) {
            double v = f[y * n + x];
            peak = fmax(peak, fabs(v));
            worst = fmax(worst, fabs(v - f[y * n + (n - 1 - x)]));
            worst = fmax(worst, fabs(v - f[(n - 1 - y) * n + x]));
            worst = fmax(worst, fabs(v - f[x * n + y]));
        }
    }
    if (worst > (exact ? 0.0 : 1e-6 * peak)) {
        fprintf(stderr, "the field lost its 4-fold symmetry: max |difference| %.3g (peak %.3g)\n", worst, peak);
        exit(1);
    }
}

static void step_both(pair *p, uint32_t steps) {
    for (int i = 0; i < 2; i++) CHECK_WAVE(wave_step(p->sim[i], steps, NULL));
}

/* A centred impulse, no damping: energy stays, symmetry stays, patterns agree. */
static void conservation(void) {
    pair p;
    pair_open(&p, N, 0.0f);
    for (int i = 0; i < 2; i++) CHECK_WAVE(wave_inject(p.sim[i], C, C, 1.0f, NULL));
    pair_read(&p, N);
    double e0 = wave_energy(p.cur[0], p.prev[0], N, N, 0.5f);
    CHECK(e0 > 0);
    double drift = 0;
    int chunks = SLOW ? 4 : 12;
    for (int k = 0; k < chunks; k++) {
        step_both(&p, k == 0 ? 1 : 37); /* odd counts: the current level alternates buffers */
        pair_read(&p, N);
        double e = wave_energy(p.cur[0], p.prev[0], N, N, 0.5f);
        drift = fmax(drift, fabs(e - e0) / e0);
        check_symmetric(p.cur[0], N);
        check_symmetric(p.prev[0], N);
    }
    /* the wave has reached the walls and come back */
    CHECK(fabsf(p.cur[0][0]) > 0.0f);
    printf("  damping 0: energy %.6f, largest relative drift %.2g over %d steps\n", e0, drift,
           1 + 37 * (chunks - 1));
    CHECK(drift < 1e-4);
    pair_close(&p);
}

/* Damping set by command mid-run: energy falls from then on. */
static void damping(void) {
    pair p;
    pair_open(&p, N, 0.0f);
    for (int i = 0; i < 2; i++) {
        CHECK_WAVE(wave_inject(p.sim[i], C, C, 1.0f, NULL));
        CHECK_WAVE(wave_step(p.sim[i], 20, NULL));
        CHECK_WAVE(wave_set_damping(p.sim[i], 0.02f, NULL));
    }
    pair_read(&p, N);
    double last = wave_energy(p.cur[0], p.prev[0], N, N, 0.5f), first = last;
    for (int k = 0; k < (SLOW ? 3 : 8); k++) {
        step_both(&p, 25);
        pair_read(&p, N);
        double e = wave_energy(p.cur[0], p.prev[0], N, N, 0.5f);
        CHECK(e < last);
        last = e;
        check_symmetric(p.cur[0], N);
    }
    printf("  damping 0.02: energy %.6f -> %.6f\n", first, last);
    CHECK(last < 0.5 * first);
    pair_close(&p);
}

/* An interleaved command stream, refused commands among it: both patterns
 * answer every query alike, and the queries match the field read back. */
static void mixed(void) {
    pair p;
    const int n = 48;
    pair_open(&p, n, 0.0f);
    unsigned seed = 12345;
    float answers[2][64];
    int answered = 0;
    for (int op = 0; op < (SLOW ? 90 : 300); op++) {
        seed = seed * 1103515245u + 12345u;
        int x = (int)(seed >> 8) % n, y = (int)(seed >> 20) % n;
        wave_ticket t[2];
        for (int i = 0; i < 2; i++) {
            switch (op % 5) {
            case 0: CHECK_WAVE(wave_inject(p.sim[i], x, y, 0.5f - (float)(op % 7) * 0.1f, &t[i])); break;
            case 1: CHECK_WAVE(wave_step(p.sim[i], 1 + op % 4, &t[i])); break;
            case 2:
                CHECK_WAVE(wave_query(p.sim[i], x, y, &t[i]));
                CHECK_WAVE(wave_wait(p.sim[i], t[i], &answers[i][answered % 64]));
                break;
            case 3: CHECK_WAVE(wave_set_speed(p.sim[i], op % 2 ? 0.45f : 0.6f, &t[i])); break;
            default:
                /* refused before anything is sent; what was accepted goes on */
                CHECK_STATUS(wave_inject(p.sim[i], n, 0, 1.0f, NULL), RK_INVALID_ARGUMENT);
                CHECK_STR_CONTAINS(wave_last_error(), "outside the 48 x 48 grid");
                CHECK_STATUS(wave_set_speed(p.sim[i], 0.8f, NULL), RK_INVALID_ARGUMENT);
                CHECK_STATUS(wave_set_damping(p.sim[i], 1.0f, NULL), RK_INVALID_ARGUMENT);
                CHECK_STATUS(wave_query(p.sim[i], -1, 3, NULL), RK_INVALID_ARGUMENT);
                CHECK_WAVE(wave_step(p.sim[i], 0, &t[i]));
                break;
            }
        }
        if (op % 5 == 2) {
            if (exact) CHECK(memcmp(&answers[0][answered % 64], &answers[1][answered % 64], sizeof(float)) == 0);
            else CHECK_FLOAT_NEAR(answers[0][answered % 64], answers[1][answered % 64], 1e-5);
            answered++;
        }
    }
    pair_read(&p, n);
    /* a query answers what the field holds */
    for (int i = 0; i < 2; i++) {
        wave_ticket t = 0;
        float v = -1.0f;
        CHECK_WAVE(wave_query(p.sim[i], 7, 11, &t));
        CHECK_WAVE(wave_wait(p.sim[i], t, &v));
        CHECK(memcmp(&v, &p.cur[i][11 * n + 7], sizeof v) == 0);
        /* a reply is kept for WAVE_RING_SLOTS commands, then refused, not made up */
        for (int k = 0; k < 64; k++) CHECK_WAVE(wave_step(p.sim[i], 0, NULL));
        CHECK_STATUS(wave_wait(p.sim[i], t, &v), RK_OUT_OF_RANGE);
        CHECK_STATUS(wave_wait(p.sim[i], t + 1000, NULL), RK_INVALID_ARGUMENT);
    }
    wave_sim_info info;
    wave_sim_get_info(p.sim[0], &info);
    printf("  mixed: %d queries answered alike; persistent grid %u x %u threads on %s (%s)\n", answered,
           info.blocks, info.threads, info.backend, info.device);
    pair_close(&p);
}

int main(int argc, char **argv) {
    if (argc > 1) device = argv[1];
    exact = strncmp(device, "cpu", 3) == 0;
    if (exact) setenv("RK_CPU_THREADS", "4", 1); /* room for the 3-block persistent grid */
    const rk_backend *backend = NULL;
    uint32_t index = 0;
    rk_status s = rk_select_device(device, &backend, &index);
    if (s == RK_BACKEND_UNAVAILABLE || s == RK_NO_DEVICE || s == RK_UNKNOWN_BACKEND)
        RK_SKIP("no %s device: %s", device, rk_last_error());
    CHECK_OK(s);

    wave_config bad = {.device = device, .nx = 2, .ny = 5};
    wave_sim *sim = NULL;
    CHECK_STATUS(wave_sim_create(&bad, &sim), RK_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(wave_last_error(), "2 x 5 grid");
    CHECK(sim == NULL);

    printf("wave showcase on %s\n", device);
    conservation();
    damping();
    mixed();
    printf("ok\n");
    return 0;
}
