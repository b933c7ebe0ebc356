/* Shared by the simulation tests: the device under test (argv[1], "cpu" by
 * default; a GPU backend without a device skips with 77) and a host model
 * of the heat grid (examples/heat3d) that every answer is checked against. */
#ifndef RK_SIM_TEST_H
#define RK_SIM_TEST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "heat3d.h"
#include "ringkernel/device.h"

/* A hung simulation's memory is left allocated on purpose (sim.h): the leak
 * checker is told to pass over what a test allocates for one. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define ABANDON_BEGIN() __lsan_disable()
#define ABANDON_END() __lsan_enable()
#else
#define ABANDON_BEGIN() ((void)0)
#define ABANDON_END() ((void)0)
#endif

/* The device spec from argv, or exit 77 when it has no device here. */
static inline const char *sim_test_device(int argc, char **argv) {
    const char *spec = argc > 1 ? argv[1] : "cpu";
    const rk_backend *b = NULL;
    uint32_t device = 0;
    if (rk_select_device(spec, &b, &device) != RK_OK) RK_SKIP("no %s device: %s", spec, rk_last_error());
    return spec;
}

static inline bool sim_test_is_cpu(const char *spec) { return strncmp(spec, "cpu", 3) == 0; }
/* A CPU block's threads: `fallback`, or RK_SIM_TEST_THREADS (96: the relay's
 * block has the warps a GPU's has, and its applier runs on the CPU too). */
static inline uint32_t sim_test_cpu_threads(uint32_t fallback) {
    const char *t = getenv("RK_SIM_TEST_THREADS");
    return t ? (uint32_t)atoi(t) : fallback;
}

/* A simulation for error tests: a step that counts, GET (a band's first
 * cell), SPIN (thread 0 runs an LCG for `rounds` rounds: a slow command),
 * HOLD (the same for `rounds` billion rounds: minutes) and CRASH (writes
 * far outside any allocation: a fault on a GPU). */
static const char sim_test_spin_source[] =
    "typedef struct spin_args { uint32_t rounds; } spin_args;\n"
    "RK_DEVICE void tick(const rk_sim_state *s, const rk_sim_region *r) {\n"
    "    for (int i = r->row_begin + r->tid; i < r->row_end; i += r->threads) s->cells[i] += 1;\n"
    "}\n"
    "RK_DEVICE uint64_t get(const rk_sim_state *s, const rk_sim_region *r, const void *p) {\n"
    "    (void)p;\n"
    "    return (uint64_t)s->cells[r->row_begin];\n"
    "}\n"
    "RK_DEVICE uint64_t spin(const rk_sim_state *s, const rk_sim_region *r, const spin_args *a) {\n"
    "    uint32_t acc = (uint32_t)s->cells[0];\n"
    "    if (r->tid == 0) for (uint32_t i = 0; i < a->rounds; i++) acc = acc * 1664525u + 1013904223u;\n"
    "    return acc;\n"
    "}\n"
    "RK_DEVICE uint64_t hold(const rk_sim_state *s, const rk_sim_region *r, const spin_args *a) {\n"
    "    uint32_t acc = (uint32_t)s->cells[0];\n"
    "    if (r->tid == 0)\n"
    "        for (uint32_t k = 0; k < a->rounds; k++)\n"
    "            for (uint32_t i = 0; i < 1000000000u; i++) acc = acc * 1664525u + 1013904223u;\n"
    "    return acc;\n"
    "}\n"
    "RK_DEVICE uint64_t crash(const rk_sim_state *s, const rk_sim_region *r, const void *p) {\n"
    "    (void)s; (void)p;\n"
    "    if (r->tid == 0) ((int *)(unsigned long long)p - 1024 * 1024 * 64)[0] = 1;\n"
    "    return 0;\n"
    "}\n";

enum { GET = 1, SPIN = 2, CRASH = 3, HOLD = 4 };

/* The grid on the host: cur is the current level. */
typedef struct heat_model {
    int nx, ny, nz;
    float alpha;
    float *cur, *next;
} heat_model;

static inline void heat_model_init(heat_model *m, int nx, int ny, int nz, float alpha) {
    size_t cells = (size_t)nx * ny * nz;
    *m = (heat_model){nx, ny, nz, alpha, calloc(cells, sizeof(float)), calloc(cells, sizeof(float))};
    CHECK(m->cur && m->next);
}

static inline void heat_model_free(heat_model *m) {
    free(m->cur);
    free(m->next);
}

static inline void heat_model_step(heat_model *m, uint32_t count) {
    for (uint32_t k = 0; k < count; k++) {
        heat3d_host_step(m->cur, m->next, m->nx, m->ny, m->nz, m->alpha);
        float *t = m->cur;
        m->cur = m->next;
        m->next = t;
    }
}

static inline float *heat_model_cell(heat_model *m, int x, int y, int z) {
    return &m->cur[((size_t)z * m->ny + y) * m->nx + x];
}

static inline uint64_t heat_model_count(const heat_model *m, int z0, int nz, float threshold) {
    uint64_t n = 0;
    size_t plane = (size_t)m->nx * m->ny;
    for (size_t i = (size_t)z0 * plane; i < (size_t)(z0 + nz) * plane; i++) n += m->cur[i] > threshold;
    return n;
}

/* The current level of a simulation after `steps` steps. */
static inline void heat_read_current(const heat3d *h, uint64_t steps, float *out) {
    size_t cells = (size_t)h->nx * h->ny * h->nz;
    CHECK_OK(rk_sim_read_field(h->sim, "t", (steps & 1u) * cells, cells, out));
}

#endif
