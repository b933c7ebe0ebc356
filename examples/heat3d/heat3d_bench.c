/* The heat grid's figures per pattern (persistent, traditional, graph): a
 * command applied (heat added, then waited for), a single step, a query's
 * round trip, and a mix of 300 commands (adds, steps, queries waited for),
 * p50 over repetitions. Like the wave's seed table, measured from the host:
 * send, then wait for the ticket.
 *
 *   heat3d_bench [cpu|cuda|webgpu] [n (grid n^3, default 64)] [reps (default 200)]
 *                [patterns (comma-separated, default persistent,traditional,graph)]
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "heat3d.h"

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, by_value);
    return v[n / 2];
}

typedef struct figures {
    double add_us, step_us, query_us, mixed_us;
} figures;

#define TRY(call)                                                                       \
    do {                                                                                \
        rk_status s_ = (call);                                                          \
        if (s_ != RK_OK) {                                                              \
            fprintf(stderr, "heat3d_bench: %s: %s\n", rk_status_name(s_), rk_last_error()); \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

static figures measure(const char *device, rk_sim_pattern pattern, int n, int reps) {
    heat3d_config cfg = {.device = device, .pattern = pattern, .nx = n, .ny = n, .nz = n};
    heat3d h;
    TRY(heat3d_create(&cfg, &h));
    double *v = malloc((size_t)reps * sizeof *v);
    if (!v) exit(1);
    figures f;
    rk_sim_ticket t = 0;
    uint64_t answer = 0;
    for (int i = 0; i < reps; i++) {
        double t0 = now_us();
        TRY(heat3d_add(&h, i % n, (i / n) % n, (i * 7) % n, 1.0f, &t));
        TRY(rk_sim_wait(h.sim, t, NULL));
        v[i] = now_us() - t0;
    }
    f.add_us = median(v, reps);
    for (int i = 0; i < reps; i++) {
        double t0 = now_us();
        TRY(rk_sim_step(h.sim, 1, &t));
        TRY(rk_sim_wait(h.sim, t, NULL));
        v[i] = now_us() - t0;
    }
    f.step_us = median(v, reps);
    for (int i = 0; i < reps; i++) {
        double t0 = now_us();
        TRY(heat3d_query(&h, i % n, n / 2, (i * 3) % n, &t));
        TRY(rk_sim_wait(h.sim, t, &answer));
        v[i] = now_us() - t0;
    }
    f.query_us = median(v, reps);
    int rounds = reps < 20 ? reps : 20;
    for (int r = 0; r < rounds; r++) {
        double t0 = now_us();
        for (int i = 0; i < 100; i++) {
            TRY(heat3d_add(&h, i % n, (i * 5) % n, (i * 11) % n, 0.5f, NULL));
            TRY(rk_sim_step(h.sim, 1, NULL));
            TRY(heat3d_query(&h, (i * 3) % n, i % n, (i * 7) % n, &t));
            TRY(rk_sim_wait(h.sim, t, &answer));
        }
        v[r] = now_us() - t0;
    }
    f.mixed_us = median(v, rounds);
    rk_sim_stats st;
    rk_sim_get_stats(h.sim, &st);
    char name[48];
    /* The graph pattern runs as traditional on a backend without launch graphs: say so. */
    snprintf(name, sizeof name, "%s%s%s", rk_sim_pattern_name(st.pattern),
             st.executed != st.pattern ? " as " : "", st.executed != st.pattern ? rk_sim_pattern_name(st.executed) : "");
    printf("%-12s %s on %s, %u blocks x %u threads: add applied %.2f us, step %.2f us, query %.2f us, "
           "mixed 300 ops (queries waited) %.1f us\n",
           name, st.backend, st.device, st.blocks, st.threads, f.add_us, f.step_us, f.query_us, f.mixed_us);
    free(v);
    TRY(rk_sim_destroy(h.sim));
    return f;
}

static void print_ratio(const char *what, const figures *fast, const figures *slow) {
    printf("%s: add %.1fx, step %.1fx, query %.1fx, mixed %.1fx\n", what, slow->add_us / fast->add_us,
           slow->step_us / fast->step_us, slow->query_us / fast->query_us, slow->mixed_us / fast->mixed_us);
}

int main(int argc, char **argv) {
    const char *device = argc > 1 ? argv[1] : "cpu";
    int n = argc > 2 ? atoi(argv[2]) : 64, reps = argc > 3 ? atoi(argv[3]) : 200;
    const char *list = argc > 4 ? argv[4] : "persistent,traditional,graph";
    bool want[3] = {false, false, false};
    char names[64];
    snprintf(names, sizeof names, "%s", list);
    bool ok = n >= 2 && reps >= 1 && strlen(list) < sizeof names;
    for (char *save = NULL, *p = strtok_r(names, ",", &save); ok && p; p = strtok_r(NULL, ",", &save)) {
        rk_sim_pattern pattern;
        ok = rk_sim_pattern_parse(p, &pattern) && (unsigned)pattern < 3;
        if (ok) want[pattern] = true;
    }
    if (!ok) {
        fprintf(stderr, "usage: %s [cpu|cuda|webgpu] [n >= 2] [reps >= 1] [persistent,traditional,graph]\n", argv[0]);
        return 2;
    }
    printf("heat3d %d^3 cells, p50 of %d\n", n, reps);
    figures f[3];
    for (int p = 0; p < 3; p++)
        if (want[p]) f[p] = measure(device, (rk_sim_pattern)p, n, reps);
    if (want[RK_SIM_PERSISTENT] && want[RK_SIM_TRADITIONAL])
        print_ratio("persistent faster by", &f[RK_SIM_PERSISTENT], &f[RK_SIM_TRADITIONAL]);
    if (want[RK_SIM_PERSISTENT] && want[RK_SIM_GRAPH])
        print_ratio("persistent faster than graph by", &f[RK_SIM_PERSISTENT], &f[RK_SIM_GRAPH]);
    if (want[RK_SIM_GRAPH] && want[RK_SIM_TRADITIONAL])
        print_ratio("graph faster than traditional by", &f[RK_SIM_GRAPH], &f[RK_SIM_TRADITIONAL]);
    return 0;
}
