/* rk bench seed-table's measurements (bench_seed_table.h): the same command
 * sequence through the persistent and then the traditional pattern. */
#include "bench_seed_table.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wave_sim.h"

enum { MIXED_OPS = 300, WARMUP = 50 };
#define FRAME_US (1e6 / 60.0)
#define SMALL_AMPLITUDE 1e-3f /* injects that keep the field small over thousands of samples */

static _Thread_local char error_text[700];

const char *rk_bench_seed_table_error(void) { return error_text; }

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void progress(const rk_seed_table_opts *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void progress(const rk_seed_table_opts *o, const char *fmt, ...) {
    if (!o->progress) return;
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    o->progress(o->user, line);
}

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Sorts samples (microseconds) in place. */
static rk_seed_stat summarize(double *us, uint32_t n) {
    rk_seed_stat s = {.median_us = NAN, .p99_us = NAN, .mean_us = NAN, .min_us = NAN, .samples = n};
    if (!n) return s;
    qsort(us, n, sizeof *us, compare_double);
    double sum = 0;
    for (uint32_t i = 0; i < n; i++) sum += us[i];
    s.mean_us = sum / n;
    s.min_us = us[0];
    s.median_us = n % 2 ? us[n / 2] : (us[n / 2 - 1] + us[n / 2]) / 2;
    uint32_t k = (uint32_t)ceil(0.99 * n);
    s.p99_us = us[k ? k - 1 : 0];
    return s;
}

/* What one pattern's run needs: its simulation and the query answers it gave. */
typedef struct run {
    const rk_seed_table_opts *o;
    wave_sim *sim;
    int n;
    unsigned seed;
    float *answers;
    uint64_t answered, answer_capacity;
    double *samples;
} run;

#define TRY(call)                                                                                                   \
    do {                                                                                                            \
        rk_status s_ = (call);                                                                                      \
        if (s_ != RK_OK) {                                                                                          \
            snprintf(error_text, sizeof error_text, "%s", wave_last_error());                                       \
            return s_;                                                                                              \
        }                                                                                                           \
    } while (0)

/* The next cell of the fixed pseudo-random sequence (the same for both patterns). */
static void next_cell(run *r, int *x, int *y) {
    r->seed = r->seed * 1103515245u + 12345u;
    *x = (int)((r->seed >> 4) % (unsigned)r->n);
    r->seed = r->seed * 1103515245u + 12345u;
    *y = (int)((r->seed >> 4) % (unsigned)r->n);
}

static void record_answer(run *r, float v) {
    if (r->answered < r->answer_capacity) r->answers[r->answered] = v;
    r->answered++;
}

/* One mixed operation (inject, step 1, query by turns); waited if wait_all or a query. */
static rk_status mixed_op(run *r, int op, bool wait_all) {
    int x, y;
    next_cell(r, &x, &y);
    wave_ticket t = 0;
    float v = 0.0f;
    switch (op % 3) {
    case 0:
        TRY(wave_inject(r->sim, x, y, op % 2 ? SMALL_AMPLITUDE : -SMALL_AMPLITUDE, &t));
        if (wait_all) TRY(wave_wait(r->sim, t, NULL));
        break;
    case 1:
        TRY(wave_step(r->sim, 1, &t));
        if (wait_all) TRY(wave_wait(r->sim, t, NULL));
        break;
    default:
        TRY(wave_query(r->sim, x, y, &t));
        TRY(wave_wait(r->sim, t, &v));
        record_answer(r, v);
        break;
    }
    return RK_OK;
}

static rk_status measure(run *r, rk_seed_pattern_result *res, uint32_t reps, uint32_t mixed_reps, uint32_t batch_steps,
                         uint32_t batch_reps) {
    const rk_seed_table_opts *o = r->o;
    wave_sim_info info;
    wave_sim_get_info(r->sim, &info);
    const char *name = wave_pattern_name(info.pattern);
    res->blocks = info.blocks;
    res->threads = info.threads;
    double *call = r->samples + reps;
    int cx = r->n / 2, cy = r->n / 2;

    for (int i = 0; i < WARMUP; i++) {
        wave_ticket t = 0;
        TRY(wave_inject(r->sim, cx, cy, i % 2 ? SMALL_AMPLITUDE : -SMALL_AMPLITUDE, NULL));
        TRY(wave_step(r->sim, 1, NULL));
        TRY(wave_query(r->sim, cx, cy, &t));
        TRY(wave_wait(r->sim, t, NULL));
    }

    progress(o, "%s: inject x %u", name, reps);
    for (uint32_t i = 0; i < reps; i++) {
        int x, y;
        next_cell(r, &x, &y);
        wave_ticket t = 0;
        uint64_t t0 = now_ns();
        TRY(wave_inject(r->sim, x, y, i % 2 ? SMALL_AMPLITUDE : -SMALL_AMPLITUDE, &t));
        uint64_t t1 = now_ns();
        TRY(wave_wait(r->sim, t, NULL));
        uint64_t t2 = now_ns();
        r->samples[i] = (double)(t2 - t0) / 1e3;
        call[i] = (double)(t1 - t0) / 1e3;
    }
    res->inject = summarize(r->samples, reps);
    res->inject_call = summarize(call, reps);

    progress(o, "%s: single step x %u", name, reps);
    for (uint32_t i = 0; i < reps; i++) {
        wave_ticket t = 0;
        uint64_t t0 = now_ns();
        TRY(wave_step(r->sim, 1, &t));
        TRY(wave_wait(r->sim, t, NULL));
        r->samples[i] = (double)(now_ns() - t0) / 1e3;
    }
    res->step = summarize(r->samples, reps);

    progress(o, "%s: mixed workload, %d ops x %u, each waited", name, MIXED_OPS, mixed_reps);
    for (uint32_t k = 0; k < mixed_reps; k++) {
        uint64_t t0 = now_ns();
        for (int op = 0; op < MIXED_OPS; op++) {
            rk_status s = mixed_op(r, op, true);
            if (s != RK_OK) return s;
        }
        r->samples[k] = (double)(now_ns() - t0) / 1e3;
    }
    res->mixed = summarize(r->samples, mixed_reps);
    res->commands_per_frame = FRAME_US / (res->mixed.median_us / MIXED_OPS);

    progress(o, "%s: mixed workload, %d ops x %u, queries waited", name, MIXED_OPS, mixed_reps);
    for (uint32_t k = 0; k < mixed_reps; k++) {
        uint64_t t0 = now_ns();
        for (int op = 0; op < MIXED_OPS; op++) {
            rk_status s = mixed_op(r, op, op == MIXED_OPS - 1);
            if (s != RK_OK) return s;
        }
        TRY(wave_finish(r->sim));
        r->samples[k] = (double)(now_ns() - t0) / 1e3;
    }
    res->mixed_pipelined = summarize(r->samples, mixed_reps);

    progress(o, "%s: %u steps in one batch x %u", name, batch_steps, batch_reps);
    for (uint32_t k = 0; k < batch_reps; k++) {
        wave_ticket t = 0;
        uint64_t t0 = now_ns();
        TRY(wave_step(r->sim, batch_steps, &t));
        TRY(wave_wait(r->sim, t, NULL));
        r->samples[k] = (double)(now_ns() - t0) / 1e3;
    }
    res->batch = summarize(r->samples, batch_reps);
    return RK_OK;
}

static rk_status run_pattern(const rk_seed_table_opts *o, wave_pattern pattern, int n, uint32_t reps,
                             uint32_t mixed_reps, uint32_t batch_steps, uint32_t batch_reps, rk_seed_pattern_result *res,
                             float *answers, uint64_t capacity, uint64_t *answered, float *field, wave_sim_info *info) {
    wave_config cfg = {
        .device = o->device,
        .pattern = pattern,
        .nx = n,
        .ny = n,
        .speed = 0.5f,
        .damping = 0.001f,
        .blocks = pattern == WAVE_PERSISTENT ? o->blocks : 0,
        .threads = pattern == WAVE_PERSISTENT ? o->threads : 0,
    };
    run r = {.o = o, .n = n, .seed = 2024, .answers = answers, .answer_capacity = capacity};
    uint32_t most = reps > mixed_reps ? reps : mixed_reps;
    r.samples = malloc(2 * (size_t)(most > batch_reps ? most : batch_reps) * sizeof(double));
    if (!r.samples) {
        snprintf(error_text, sizeof error_text, "seed-table: out of memory");
        return RK_OUT_OF_MEMORY;
    }
    progress(o, "%s: starting on %s", wave_pattern_name(pattern), o->device ? o->device : "cpu");
    rk_status s = wave_sim_create(&cfg, &r.sim);
    if (s != RK_OK) snprintf(error_text, sizeof error_text, "%s", wave_last_error());
    if (s == RK_OK) {
        wave_sim_get_info(r.sim, info);
        s = measure(&r, res, reps, mixed_reps, batch_steps, batch_reps);
    }
    if (s == RK_OK && wave_read_field(r.sim, field, NULL) != RK_OK) {
        snprintf(error_text, sizeof error_text, "%s", wave_last_error());
        s = RK_INTERNAL;
    }
    *answered = r.answered;
    if (r.sim) {
        rk_status d = wave_sim_destroy(r.sim);
        if (s == RK_OK && d != RK_OK) {
            snprintf(error_text, sizeof error_text, "%s", wave_last_error());
            s = d;
        }
    }
    free(r.samples);
    return s;
}

rk_status rk_bench_seed_table(const rk_seed_table_opts *opts, rk_seed_table_result *out) {
    rk_seed_table_opts o = opts ? *opts : (rk_seed_table_opts){0};
    memset(out, 0, sizeof *out);
    error_text[0] = '\0';
    bool cpu = !o.device || strncmp(o.device, "cpu", 3) == 0;
    int n = o.size ? o.size : cpu ? 256 : 512;
    uint32_t reps = o.repeats ? o.repeats : o.quick ? 100 : cpu ? 2000 : 5000;
    uint32_t mixed_reps = o.mixed_repeats ? o.mixed_repeats : o.quick ? 3 : cpu ? 20 : 50;
    uint32_t batch_steps = o.batch_steps ? o.batch_steps : o.quick ? 500 : 10000;
    uint32_t batch_reps = o.batch_repeats ? o.batch_repeats : o.quick ? 1 : cpu ? 3 : 5;
    out->nx = out->ny = n;
    out->mixed_ops = MIXED_OPS;
    out->batch_steps = batch_steps;

    uint64_t capacity = (uint64_t)mixed_reps * 2 * (MIXED_OPS / 3 + 1);
    size_t cells = (size_t)n * (size_t)n;
    float *answers[2] = {calloc(capacity, sizeof(float)), calloc(capacity, sizeof(float))};
    float *field[2] = {calloc(cells, sizeof(float)), calloc(cells, sizeof(float))};
    uint64_t answered[2] = {0, 0};
    rk_status s = RK_OK;
    if (!answers[0] || !answers[1] || !field[0] || !field[1]) {
        snprintf(error_text, sizeof error_text, "seed-table: out of memory for a %d x %d grid", n, n);
        s = RK_OUT_OF_MEMORY;
    }
    wave_sim_info info;
    /* One after the other: a spinning persistent kernel would slow the other
     * pattern, and a module load pauses every running one (CUDA). */
    if (s == RK_OK)
        s = run_pattern(&o, WAVE_PERSISTENT, n, reps, mixed_reps, batch_steps, batch_reps, &out->persistent,
                        answers[0], capacity, &answered[0], field[0], &info);
    if (s == RK_OK) {
        snprintf(out->backend, sizeof out->backend, "%s", info.backend);
        snprintf(out->device, sizeof out->device, "%s", info.device);
        snprintf(out->driver, sizeof out->driver, "%s", info.driver);
        s = run_pattern(&o, WAVE_TRADITIONAL, n, reps, mixed_reps, batch_steps, batch_reps, &out->traditional,
                        answers[1], capacity, &answered[1], field[1], &info);
    }
    if (s == RK_OK) {
        uint64_t k = answered[0] < answered[1] ? answered[0] : answered[1];
        k = k < capacity ? k : capacity;
        out->queries_compared = k;
        for (uint64_t i = 0; i < k; i++)
            if (memcmp(&answers[0][i], &answers[1][i], sizeof(float)) != 0) out->queries_differing++;
        if (answered[0] != answered[1]) out->queries_differing += answered[0] > answered[1] ? answered[0] - answered[1]
                                                                                              : answered[1] - answered[0];
        for (size_t i = 0; i < cells; i++)
            out->max_field_difference = fmax(out->max_field_difference, fabs((double)field[0][i] - field[1][i]));
    }
    for (int i = 0; i < 2; i++) {
        free(answers[i]);
        free(field[i]);
    }
    return s;
}
