/* The wave showcase (examples/wave, on the rk_sim API) driven through
 * every pattern with the same commands: a centred impulse keeps its energy
 * with damping 0 and loses it with damping > 0, stays 4-fold symmetric, and
 * the persistent, traditional and graph patterns give the same fields and
 * the same query answers, also over a few thousand random commands sent
 * without waiting.
 *
 *   test_showcase_wave [cpu|cuda]
 *
 * Each scenario runs once per pattern, one simulation open at a time,
 * keeping every field read back and every query answer; the physics is
 * checked on each run and the runs are compared afterwards. side_by_side
 * then has simulations of both kinds open at once.
 *
 * On the CPU the patterns run the same compiled cell update, so they must
 * agree bit for bit. On CUDA (exit 77 without a GPU) they are kernels of one
 * module; agreement is checked to a small tolerance and whether it is exact
 * is printed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "wave_sim.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

/* How much each scenario does. The persistent grid's threads poll, so
 * under a sanitizer, or on a machine whose load is more than twice its
 * cores, each command of a 13-thread grid can take 100 ms: then fewer
 * commands and held steps, and the 12-band runs that the others cover are
 * left out (main says which set ran). */
static struct {
    bool reduced;
    int conservation_chunks, damping_rounds, mixed_ops, pipelined_rounds, triples, random_ops;
    uint32_t held_steps;
} plan;

static void choose_plan(void) {
    double load = 0;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    bool busy = getloadavg(&load, 1) == 1 && cores > 0 && load > 2.0 * (double)cores;
    plan.reduced = SANITIZED || busy;
    plan.conservation_chunks = plan.reduced ? 4 : 12;
    plan.damping_rounds = plan.reduced ? 3 : 8;
    plan.mixed_ops = plan.reduced ? 90 : 300;
    plan.pipelined_rounds = plan.reduced ? 8 : 20;
    plan.triples = plan.reduced ? 15 : 40;
    plan.held_steps = plan.reduced ? 40 : 300;
    plan.random_ops = plan.reduced ? 1000 : 4000;
    if (plan.reduced)
        printf("reduced set: %s\n", SANITIZED ? "sanitizer build" : "load average above twice the core count");
}

enum { N = 65, C = N / 2 };

static const char *device = "cpu";
static uint32_t cpu_blocks = 2;  /* the grid on the CPU: bands of rows (persistent), blocks per launch */
static uint32_t cpu_threads = 0; /* 0: the default (32 on the CPU) */
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

/* A grid three columns wide (narrower than a block's threads: a thread's
 * cells lie many rows apart; on the CPU, two bands of 90 cells), both
 * patterns, against the leapfrog computed here from the field two
 * impulses by the walls left: walls reflect, c^2 = 0.25, no damping.
 * Within 1e-5 of the peak (the host's compiler may fuse differently). */
static void narrow_grid_against_host(void) {
    enum { NX = 3, NY = 61, STEPS = 12 };
    for (int k = 0; k < 2; k++) {
        const wave_pattern p = k ? WAVE_TRADITIONAL : WAVE_PERSISTENT;
        wave_config cfg = {.device = device, .pattern = p, .nx = NX, .ny = NY, .speed = 0.5f, .threads = 64};
        if (exact) cfg.blocks = 2;
        else cfg.threads = 0;
        wave_sim *sim = NULL;
        CHECK_WAVE(wave_sim_create(&cfg, &sim));
        float cur[NX * NY], prev[NX * NY], next[NX * NY], got[NX * NY];
        CHECK_WAVE(wave_inject(sim, 1, 2, 1.0f, NULL)); /* by the top and bottom walls: rows matter too */
        CHECK_WAVE(wave_inject(sim, 1, NY - 3, -0.5f, NULL));
        CHECK_WAVE(wave_read_field(sim, cur, prev));
        CHECK_WAVE(wave_step(sim, STEPS, NULL));
        CHECK_WAVE(wave_read_field(sim, got, NULL));
        CHECK_WAVE(wave_sim_destroy(sim));
        for (int t = 0; t < STEPS; t++) {
            for (int y = 0; y < NY; y++) {
                for (int x = 0; x < NX; x++) {
                    const int i = y * NX + x;
                    const float ns = cur[y > 0 ? i - NX : i] + cur[y < NY - 1 ? i + NX : i];
                    const float we = cur[x > 0 ? i - 1 : i] + cur[x < NX - 1 ? i + 1 : i];
                    next[i] = 2.0f * cur[i] - prev[i] + 0.25f * (ns + we - 4.0f * cur[i]);
                }
            }
            memcpy(prev, cur, sizeof cur);
            memcpy(cur, next, sizeof cur);
        }
        double worst = 0, peak = 0;
        for (int i = 0; i < NX * NY; i++) {
            peak = fmax(peak, fabs(cur[i]));
            worst = fmax(worst, fabs(cur[i] - got[i]));
        }
        CHECK(peak > 0.01);
        if (worst > 1e-5 * peak) {
            fprintf(stderr, "narrow grid, %s: the field is %.3g off the host's leapfrog (peak %.3g)\n",
                    wave_pattern_name(p), worst, peak);
            exit(1);
        }
    }
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

/* One pattern's run of a scenario: every field read back, in order, and
 * every query answer. */
enum { MAX_ANSWERS = 4096 };
typedef struct record {
    wave_pattern pattern;
    int n, reads, cap;
    float *cur, *prev; /* cap snapshots of n * n floats */
    float answers[MAX_ANSWERS];
    int answered;
    wave_sim_info info;
} record;

typedef void scenario(wave_sim *sim, record *r);

static wave_sim *open_sim(wave_pattern pattern, int n, float damping) {
    wave_config cfg = {.device = device, .pattern = pattern, .nx = n, .ny = n, .speed = 0.5f, .damping = damping};
    /* On the CPU, a fixed grid whatever the core count. */
    if (exact) {
        cfg.blocks = cpu_blocks;
        cfg.threads = cpu_threads;
    }
    wave_sim *sim = NULL;
    rk_status s = wave_sim_create(&cfg, &sim);
    if (s == RK_BACKEND_UNAVAILABLE || s == RK_NO_DEVICE) RK_SKIP("%s", wave_last_error());
    CHECK_WAVE(s);
    return sim;
}

/* Reads the field into the record's next snapshot; *cur and *prev point at it. */
static void read_field(wave_sim *sim, record *r, const float **cur, const float **prev) {
    CHECK(r->reads < r->cap);
    size_t cells = (size_t)r->n * r->n, at = (size_t)r->reads++ * cells;
    CHECK_WAVE(wave_read_field(sim, r->cur + at, r->prev + at));
    *cur = r->cur + at;
    *prev = r->prev + at;
}

static void answer(record *r, float v) {
    CHECK(r->answered < (int)(sizeof r->answers / sizeof r->answers[0]));
    r->answers[r->answered++] = v;
}

/* Exact on the CPU; on CUDA within 1e-5 of the peak (and whether exact is printed). */
static bool fields_agree(const float *a, const float *b, size_t cells, double *worst, double *peak) {
    if (memcmp(a, b, cells * sizeof(float)) == 0) return true;
    for (size_t k = 0; k < cells; k++) {
        *worst = fmax(*worst, fabs((double)a[k] - b[k]));
        *peak = fmax(*peak, fabs((double)b[k]));
    }
    return false;
}

/* Runs the scenario on each pattern in turn, then compares the runs with
 * the traditional one's. */
enum { PATTERNS = 3 };
static void run_both(const char *name, scenario *fn, int n, float damping, int reads) {
    static record runs[PATTERNS];
    const wave_pattern order[PATTERNS] = {WAVE_TRADITIONAL, WAVE_PERSISTENT, WAVE_GRAPH};
    size_t cells = (size_t)n * n;
    for (int i = 0; i < PATTERNS; i++) {
        record *r = &runs[i];
        *r = (record){.pattern = order[i], .n = n, .cap = reads};
        r->cur = calloc(cells * (size_t)reads, sizeof(float));
        r->prev = calloc(cells * (size_t)reads, sizeof(float));
        CHECK(r->cur && r->prev);
        printf("  %s, %s:\n", name, wave_pattern_name(order[i]));
        wave_sim *sim = open_sim(order[i], n, damping);
        fn(sim, r);
        wave_sim_get_info(sim, &r->info);
        CHECK_WAVE(wave_sim_destroy(sim));
    }
    const record *t = &runs[0];
    bool same = true;
    for (int i = 1; i < PATTERNS; i++) {
        const record *p = &runs[i];
        CHECK_EQ(p->reads, t->reads);
        CHECK_EQ(p->answered, t->answered);
        double worst = 0, peak = 0;
        bool alike = true;
        for (int k = 0; k < t->reads; k++) {
            size_t at = (size_t)k * cells;
            alike &= fields_agree(p->cur + at, t->cur + at, cells, &worst, &peak);
            alike &= fields_agree(p->prev + at, t->prev + at, cells, &worst, &peak);
        }
        if (!alike && exact) {
            fprintf(stderr, "%s: %s and traditional fields differ: max |difference| %.3g (peak %.3g)\n", name,
                    wave_pattern_name(p->pattern), worst, peak);
            exit(1);
        }
        if (!alike) {
            printf("  %s: %s fields agree to %.3g (peak %.3g), not bit for bit\n", name,
                   wave_pattern_name(p->pattern), worst, peak);
            CHECK(worst <= 1e-5 * fmax(peak, 1e-3));
        }
        for (int k = 0; k < t->answered; k++) {
            if (exact) CHECK(memcmp(&p->answers[k], &t->answers[k], sizeof(float)) == 0);
            else CHECK_FLOAT_NEAR(p->answers[k], t->answers[k], 1e-5);
        }
        same &= alike;
        const wave_sim_info *info = &p->info;
        CHECK_EQ(info->blocks_requested, info->blocks);
        if (exact) CHECK_EQ(info->blocks, cpu_blocks);
        if (exact && cpu_threads) CHECK_EQ(info->threads, cpu_threads);
    }
    printf("  %s: %d field reads and %d query answers %s in every pattern\n", name, t->reads, t->answered,
           same ? "bit for bit alike" : "alike within tolerance");
    const wave_sim_info *info = &runs[1].info;
    printf("  %s: persistent grid %u x %u threads on %s (%s)\n", name, info->blocks, info->threads, info->backend,
           info->device);
    for (int i = 0; i < PATTERNS; i++) {
        free(runs[i].cur);
        free(runs[i].prev);
    }
}


/* A centred impulse, no damping: energy stays, symmetry stays. */
static void conservation(wave_sim *sim, record *r) {
    const float *cur, *prev;
    CHECK_WAVE(wave_inject(sim, C, C, 1.0f, NULL));
    read_field(sim, r, &cur, &prev);
    double e0 = wave_energy(cur, prev, N, N, 0.5f);
    CHECK(e0 > 0);
    double drift = 0;
    for (int k = 0; k < plan.conservation_chunks; k++) {
        CHECK_WAVE(wave_step(sim, k == 0 ? 1 : 37, NULL)); /* odd counts: the current level alternates buffers */
        read_field(sim, r, &cur, &prev);
        double e = wave_energy(cur, prev, N, N, 0.5f);
        drift = fmax(drift, fabs(e - e0) / e0);
        check_symmetric(cur, N);
        check_symmetric(prev, N);
    }
    /* the wave has reached the walls and come back */
    CHECK(fabsf(cur[0]) > 0.0f);
    printf("    damping 0: energy %.6f, largest relative drift %.2g over %d steps\n", e0, drift,
           1 + 37 * (plan.conservation_chunks - 1));
    CHECK(drift < 1e-4);
}

/* Damping set by command mid-run: energy falls from then on. */
static void damping(wave_sim *sim, record *r) {
    const float *cur, *prev;
    CHECK_WAVE(wave_inject(sim, C, C, 1.0f, NULL));
    CHECK_WAVE(wave_step(sim, 20, NULL));
    CHECK_WAVE(wave_set_damping(sim, 0.02f, NULL));
    read_field(sim, r, &cur, &prev);
    double last = wave_energy(cur, prev, N, N, 0.5f), first = last;
    for (int k = 0; k < plan.damping_rounds; k++) {
        CHECK_WAVE(wave_step(sim, 25, NULL));
        read_field(sim, r, &cur, &prev);
        double e = wave_energy(cur, prev, N, N, 0.5f);
        CHECK(e < last);
        last = e;
        check_symmetric(cur, N);
    }
    printf("    damping 0.02: energy %.6f -> %.6f\n", first, last);
    CHECK(last < 0.5 * first);
}

/* The next cell of a fixed pseudo-random sequence on an n x n grid. */
static void random_cell(unsigned *seed, int n, int *x, int *y) {
    *seed = *seed * 1103515245u + 12345u;
    *x = (int)(*seed >> 8) % n;
    *y = (int)(*seed >> 20) % n;
}

/* An interleaved command stream, refused commands among it: every query
 * is kept for comparison, and a query answers what the field holds. */
enum { MIXED_N = 48 };
static void mixed(wave_sim *sim, record *r) {
    const int n = MIXED_N;
    unsigned seed = 12345;
    wave_ticket last = 0;
    for (int op = 0; op < plan.mixed_ops; op++) {
        int x, y;
        random_cell(&seed, n, &x, &y);
        wave_ticket t = 0;
        float v = -1.0f;
        switch (op % 5) {
        case 0: CHECK_WAVE(wave_inject(sim, x, y, 0.5f - (float)(op % 7) * 0.1f, &t)); break;
        case 1: CHECK_WAVE(wave_step(sim, 1 + op % 4, &t)); break;
        case 2:
            CHECK_WAVE(wave_query(sim, x, y, &t));
            CHECK_WAVE(wave_wait(sim, t, &v));
            answer(r, v);
            break;
        case 3: CHECK_WAVE(wave_set_speed(sim, op % 2 ? 0.45f : 0.6f, &t)); break;
        default:
            /* refused before anything is sent; what was accepted goes on */
            CHECK_STATUS(wave_inject(sim, n, 0, 1.0f, NULL), RK_INVALID_ARGUMENT);
            CHECK_STR_CONTAINS(wave_last_error(), "outside the 48 x 48 grid");
            CHECK_STATUS(wave_set_speed(sim, 0.8f, NULL), RK_INVALID_ARGUMENT);
            CHECK_STATUS(wave_set_damping(sim, 1.0f, NULL), RK_INVALID_ARGUMENT);
            CHECK_STATUS(wave_query(sim, -1, 3, NULL), RK_INVALID_ARGUMENT);
            CHECK_WAVE(wave_step(sim, 0, &t));
            if (last) CHECK_U64_EQ(t, last + 1); /* nothing was sent for the refused ones */
            break;
        }
        last = t;
    }
    const float *cur, *prev;
    read_field(sim, r, &cur, &prev);
    /* a query answers what the field holds */
    wave_ticket t = 0;
    float v = -1.0f;
    CHECK_WAVE(wave_query(sim, 7, 11, &t));
    CHECK_WAVE(wave_wait(sim, t, &v));
    CHECK(memcmp(&v, &cur[11 * n + 7], sizeof v) == 0);
    answer(r, v);
    /* a reply is kept for RK_SIM_RING_SLOTS commands, then refused, not made up */
    for (unsigned k = 0; k < RK_SIM_RING_SLOTS; k++) CHECK_WAVE(wave_step(sim, 0, NULL));
    CHECK_STATUS(wave_wait(sim, t, &v), RK_OUT_OF_RANGE);
    CHECK_STATUS(wave_wait(sim, t + 1000, NULL), RK_INVALID_ARGUMENT);
    printf("    mixed: %d commands, %d queries answered\n", plan.mixed_ops, r->answered);
}

/* A traditional simulation opened first, then a persistent one, both on
 * the device at once: each applies commands and answers queries while the
 * other is open (the persistent kernel spins all the while). Then a second
 * persistent one is created while the first runs (rk_sim loads its module
 * beside the running kernel: the wave once refused this on CUDA), and the
 * simulations are destroyed in an order that leaves one running. */
static float poke(wave_sim *sim) {
    wave_ticket t = 0;
    float v = 0.0f;
    CHECK_OK(wave_inject(sim, N / 2, N / 2, 1.0f, NULL));
    CHECK_OK(wave_step(sim, 2, NULL));
    CHECK_OK(wave_query(sim, N / 2, N / 2, &t));
    CHECK_OK(wave_wait(sim, t, &v));
    return v;
}

static void side_by_side(void) {
    wave_sim *trad = open_sim(WAVE_TRADITIONAL, N, 0.0f);
    wave_sim *pers = open_sim(WAVE_PERSISTENT, N, 0.0f);
    float first = 0.0f;
    for (int round = 0; round < 3; round++) {
        float p = poke(pers), t = poke(trad);
        if (round == 0) first = p;
        CHECK(p != 0.0f);
        CHECK(fabsf(p - t) <= 1e-5f * fabsf(t));
    }
    wave_sim *second = open_sim(WAVE_PERSISTENT, N, 0.0f);
    float fresh = poke(second); /* a fresh grid's first round, as pers's was */
    if (exact) CHECK(memcmp(&fresh, &first, sizeof fresh) == 0);
    else CHECK_FLOAT_NEAR(fresh, first, 1e-5);
    CHECK_OK(wave_sim_destroy(trad));
    (void)poke(pers);
    CHECK_OK(wave_sim_destroy(pers));
    (void)poke(second);
    CHECK_OK(wave_sim_destroy(second));
    printf("  side by side: a traditional and a persistent simulation open at once agree; a second persistent one "
           "opened beside the running one\n");
}

/* A random mix of impulses, steps (0 to 3), queries and parameter changes,
 * sent without waiting: the queries' answers are collected only when the
 * oldest of them is nearly a ring's length behind, so many commands are in
 * flight at once. Every answer and the final field are compared across the
 * patterns. */
static void random_mix(wave_sim *sim, record *r) {
    const int n = MIXED_N;
    unsigned seed = 31337;
    wave_ticket pending[RK_SIM_RING_SLOTS];
    int waiting = 0;
    for (int op = 0; op < plan.random_ops; op++) {
        seed = seed * 1103515245u + 12345u;
        const unsigned pick = (seed >> 16) % 100u;
        int x, y;
        random_cell(&seed, n, &x, &y);
        wave_ticket t = 0;
        if (pick < 25) CHECK_WAVE(wave_inject(sim, x, y, (float)((int)(seed % 9u) - 4) * 0.05f, &t));
        else if (pick < 50) CHECK_WAVE(wave_step(sim, seed % 4u, &t));
        else if (pick < 85) CHECK_WAVE(wave_query(sim, x, y, &t));
        else if (pick < 92) CHECK_WAVE(wave_set_speed(sim, 0.3f + 0.1f * (float)(seed % 5u), &t));
        else CHECK_WAVE(wave_set_damping(sim, (float)(seed % 3u) * 0.004f, &t));
        if (pick >= 50 && pick < 85) pending[waiting++] = t;
        /* every pending answer, before the oldest leaves the ring */
        if (waiting && (t - pending[0] >= RK_SIM_RING_SLOTS - 8 || waiting == (int)RK_SIM_RING_SLOTS ||
                        op + 1 == plan.random_ops)) {
            for (int k = 0; k < waiting; k++) {
                float v = 0.0f;
                CHECK_WAVE(wave_wait(sim, pending[k], &v));
                CHECK(isfinite(v));
                answer(r, v);
            }
            waiting = 0;
        }
    }
    const float *cur, *prev;
    read_field(sim, r, &cur, &prev);
    printf("    random mix: %d commands in flight together, %d queries answered\n", plan.random_ops, r->answered);
}

/* Commands sent without waiting, so that the persistent kernel sees them
 * together: a query just before an impulse at the same cell must answer
 * the value before it, one just after the value after it, and a query
 * right after a step the stepped value. */
static void pipelined(wave_sim *sim, record *r) {
    const int n = MIXED_N;
    unsigned seed = 777;
    CHECK_WAVE(wave_inject(sim, n / 2, n / 2, 1.0f, NULL));
    for (int round = 0; round < plan.pipelined_rounds; round++) {
        int x, y;
        random_cell(&seed, n, &x, &y);
        wave_ticket before = 0, after = 0, stepped = 0;
        CHECK_WAVE(wave_query(sim, x, y, &before));
        CHECK_WAVE(wave_inject(sim, x, y, 0.25f, NULL));
        CHECK_WAVE(wave_query(sim, x, y, &after));
        CHECK_WAVE(wave_step(sim, 1, NULL));
        CHECK_WAVE(wave_query(sim, x, y, &stepped));
        float v[3];
        CHECK_WAVE(wave_wait(sim, before, &v[0]));
        CHECK_WAVE(wave_wait(sim, after, &v[1]));
        CHECK_WAVE(wave_wait(sim, stepped, &v[2]));
        CHECK(v[1] != v[0]); /* the impulse's centre moved */
        answer(r, v[0]);
        answer(r, v[1]);
        answer(r, v[2]);
    }
    const float *cur, *prev;
    read_field(sim, r, &cur, &prev);
    printf("    pipelined: %d rounds of query, impulse, query, step, query\n", plan.pipelined_rounds);
}

/* The seed table's mix: inject, step, query triples at random cells (band
 * edges and a corner among them), with speed and damping changed in between
 * and every fifth impulse next to the queried cell; then rounds in which
 * the bands read a step and the query after it together (the persistent
 * kernel is held at an impulse behind a long batch of steps meanwhile), so
 * that the band holding the cell is likely to answer with the step. */
enum { HELD_ROUNDS = 3 };

/* A step of one step, a query of (x, y) right behind it, its answer recorded. */
static void step_then_query(wave_sim *sim, record *r, int x, int y) {
    wave_ticket t = 0;
    float v = 0.0f;
    CHECK_WAVE(wave_step(sim, 1, NULL));
    CHECK_WAVE(wave_query(sim, x, y, &t));
    CHECK_WAVE(wave_wait(sim, t, &v));
    answer(r, v);
}

static void triples(wave_sim *sim, record *r) {
    const int n = MIXED_N;
    unsigned seed = 4242;
    CHECK_WAVE(wave_inject(sim, n / 2, n / 2, 1.0f, NULL));
    for (int k = 0; k < plan.triples; k++) {
        int x, y;
        random_cell(&seed, n, &x, &y);
        if (k % 5 == 1) x = 0, y = n - 1; /* a corner: the walls' reflection */
        int xi = k % 5 == 3 ? (x + 2) % n : (x * 7 + 3) % n, yi = k % 5 == 3 ? y : (y * 5 + 1) % n;
        CHECK_WAVE(wave_inject(sim, xi, yi, k % 2 ? 0.2f : -0.3f, NULL));
        if (k % 4 == 2) CHECK_WAVE(wave_set_speed(sim, k % 8 == 2 ? 0.45f : 0.6f, NULL));
        if (k % 6 == 3) CHECK_WAVE(wave_set_damping(sim, k % 12 == 3 ? 0.01f : 0.0f, NULL));
        step_then_query(sim, r, x, y);
    }
    const uint32_t held_steps = exact ? plan.held_steps : 5000;
    for (int k = 0; k < HELD_ROUNDS; k++) {
        int x = 5 + 11 * k, y = 4 * k + 3; /* the last row of a 12-band grid's band */
        CHECK_WAVE(wave_step(sim, held_steps, NULL));
        CHECK_WAVE(wave_inject(sim, n - 1 - x, n - 1 - y, 0.5f, NULL));
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
        step_then_query(sim, r, x, y);
    }
    const float *cur, *prev;
    read_field(sim, r, &cur, &prev);
    printf("    triples: %d inject-step-query triples, %d held rounds\n", plan.triples, HELD_ROUNDS);
}

/* A step of one step with a query right behind it, sent while the bands
 * are still busy with a long batch of steps: the bands read the two
 * together, and where the relay block reads the ring (a GPU, or
 * RK_SIM_RELAY=1 on the CPU) the query's band answers it one step ahead,
 * from the levels before the step (RK_SIM_QUERY_NEXT, wave_read_cell with
 * r->ahead), before it steps. The answer must be the stepped cell's, bit
 * for bit. */
enum { AHEAD_N = 128 };
static void ahead(wave_sim *sim, record *r) {
    const int n = AHEAD_N, rounds = plan.reduced ? 4 : 12;
    unsigned seed = 99;
    CHECK_WAVE(wave_inject(sim, n / 2, n / 2, 1.0f, NULL));
    for (int k = 0; k < rounds; k++) {
        int x, y;
        random_cell(&seed, n, &x, &y);
        CHECK_WAVE(wave_step(sim, 400, NULL));
        step_then_query(sim, r, x, y);
    }
    const float *cur, *prev;
    read_field(sim, r, &cur, &prev);
    printf("    ahead: %d rounds of a query behind a step behind a batch\n", rounds);
}

int main(int argc, char **argv) {
    if (argc > 1) device = argv[1];
    exact = strncmp(device, "cpu", 3) == 0;
    if (exact) setenv("RK_CPU_THREADS", "14", 1); /* room for 12 bands and a relay block */
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
    /* What rk_sim refuses comes back with its status and its reason. */
    wave_config odd = {.device = device, .nx = 8, .ny = 8, .threads = 48};
    CHECK_STATUS(wave_sim_create(&odd, &sim), RK_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(wave_last_error(), "wave: creating the simulation");
    CHECK_STR_CONTAINS(wave_last_error(), "48 threads per block");
    CHECK(sim == NULL);
    wave_pattern p = WAVE_PERSISTENT;
    CHECK(wave_pattern_parse("graph", &p) && p == WAVE_GRAPH);
    CHECK(!wave_pattern_parse("sideways", &p) && p == WAVE_GRAPH);

    printf("wave showcase on %s\n", device);
    choose_plan();
    run_both("conservation", conservation, N, 0.0f, 1 + plan.conservation_chunks);
    run_both("damping", damping, N, 0.0f, 1 + plan.damping_rounds);
    run_both("mixed", mixed, MIXED_N, 0.0f, 1);
    run_both("pipelined", pipelined, MIXED_N, 0.0f, 1);
    run_both("triples", triples, MIXED_N, 0.0f, 1);
    run_both("random mix", random_mix, MIXED_N, 0.0f, 1);
    run_both("ahead", ahead, AHEAD_N, 0.0f, 1);
    if (exact) {
        /* Bands of 4 rows, as on an H100 (512 rows, 131 bands): an impulse
         * reaches up to 4 bands, and most steps wait for no impulse.
         * The reduced set leaves out the runs that the others cover. */
        cpu_blocks = 12;
        run_both("mixed, 12 bands", mixed, MIXED_N, 0.0f, 1);
        if (!plan.reduced) run_both("pipelined, 12 bands", pipelined, MIXED_N, 0.0f, 1);
        if (!plan.reduced) run_both("triples, 12 bands", triples, MIXED_N, 0.0f, 1);
        run_both("random mix, 12 bands", random_mix, MIXED_N, 0.0f, 1);
        /* Two warps per band, as a GPU's block has many. */
        cpu_threads = 64;
        if (!plan.reduced) run_both("mixed, 12 bands, two warps", mixed, MIXED_N, 0.0f, 1);
        run_both("triples, 12 bands, two warps", triples, MIXED_N, 0.0f, 1);
        /* The relay block that GPUs use, on the CPU (one more worker for it). */
        setenv("RK_SIM_RELAY", "1", 1);
        run_both("random mix, 12 bands, two warps, relay", random_mix, MIXED_N, 0.0f, 1);
        run_both("ahead, 12 bands, two warps, relay", ahead, AHEAD_N, 0.0f, 1);
        unsetenv("RK_SIM_RELAY");
        cpu_blocks = 2;
        run_both("pipelined, two warps", pipelined, MIXED_N, 0.0f, 1);
    }
    narrow_grid_against_host();
    side_by_side();
    printf("ok\n");
    return 0;
}
