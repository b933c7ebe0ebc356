/* Simulations on WebGPU (lavapipe in CI): the same DSL source and commands
 * as on the CPU. Both patterns (traditional: a dispatch per command;
 * persistent: relaunch per command batch) give the same bits; the CPU
 * gives the same within float tolerance; bad input gets its status; a
 * source WGSL cannot hold is RK_COMPILE_FAILED with the transpiler's
 * reason. tests/sim/CMakeLists.txt also runs test_sim_ordering on WebGPU.
 * Skipped (77) without a WebGPU device. */
#include <math.h>
#include <stdlib.h>

#include "sim_test.h"

enum { N = 8, ROWS = 12, CELLS = N * ROWS, OPS = 400 };
enum { HEAT = 1, PROBE = 2, WARM = 3, SET_K = 4 };

/* A plate of ROWS x N cells, both time levels in one field (level step & 1
 * is current): diffusion to the four neighbours (insulated edges) and a
 * loss to the air. WARM counts a band's cells above a threshold in shared
 * memory (answers add up over bands). */
static const char source[] =
    "typedef struct heat_args { int x, y; float amount; } heat_args;\n"
    "typedef struct probe_args { int x, y; } probe_args;\n"
    "typedef struct warm_args { float threshold; } warm_args;\n"
    "typedef struct k_args { float k; } k_args;\n"
    "RK_DEVICE int level(const rk_sim_state *s, uint64_t step) { return (int)(step & 1u) * s->rows * s->scalars->n; }\n"
    "RK_DEVICE void plate_step(const rk_sim_state *s, const rk_sim_region *r) {\n"
    "    const int n = s->scalars->n, from = level(s, r->step), to = level(s, r->step + 1);\n"
    "    const float k = s->scalars->k, loss = s->scalars->loss;\n"
    "    for (int i = r->row_begin * n + r->tid; i < r->row_end * n; i += r->threads) {\n"
    "        const int x = i % n, y = i / n;\n"
    "        const float t = s->t[from + i];\n"
    "        const float up = y > 0 ? s->t[from + i - n] : t, down = y < s->rows - 1 ? s->t[from + i + n] : t;\n"
    "        const float left = x > 0 ? s->t[from + i - 1] : t, right = x < n - 1 ? s->t[from + i + 1] : t;\n"
    "        s->t[to + i] = t + k * ((up + down) + (left + right) - 4.0f * t) - loss * t;\n"
    "    }\n"
    "}\n"
    "RK_DEVICE uint64_t plate_heat(const rk_sim_state *s, const rk_sim_region *r, const heat_args *a) {\n"
    "    if (r->tid == 0) s->t[level(s, r->step) + a->y * s->scalars->n + a->x] += a->amount;\n"
    "    return 0;\n"
    "}\n"
    "RK_DEVICE uint64_t plate_probe(const rk_sim_state *s, const rk_sim_region *r, const probe_args *a) {\n"
    "    return rk_sim_answer_f32(s->t[level(s, r->step) + a->y * s->scalars->n + a->x]);\n"
    "}\n"
    "RK_DEVICE uint64_t plate_warm(const rk_sim_state *s, const rk_sim_region *r, const warm_args *a) {\n"
    "    RK_SHARED int warm;\n"
    "    const int n = s->scalars->n, at = level(s, r->step);\n"
    "    if (r->tid == 0) warm = 0;\n"
    "    sync_threads();\n"
    "    int mine = 0;\n"
    "    for (int i = r->row_begin * n + r->tid; i < r->row_end * n; i += r->threads) mine += s->t[at + i] > a->threshold;\n"
    "    atomic_add_i32(&warm, mine);\n"
    "    sync_threads();\n"
    "    return (uint64_t)warm;\n"
    "}\n"
    "RK_DEVICE uint64_t plate_set_k(const rk_sim_state *s, const rk_sim_region *r, const k_args *a) {\n"
    "    if (r->tid == 0) s->scalars->k = a->k;\n"
    "    return 0;\n"
    "}\n";

static const rk_sim_field fields[] = {{"t", RK_SIM_F32, 2 * CELLS}};
static const rk_sim_scalar scalars[] = {{"k", RK_SIM_F32, 0.2}, {"loss", RK_SIM_F32, 0.01}, {"n", RK_SIM_I32, N}};
static const rk_sim_command commands[] = {
    {HEAT, "plate_heat", "heat_args", 12, RK_SIM_REGION},
    {PROBE, "plate_probe", "probe_args", 8, RK_SIM_REGION},
    {WARM, "plate_warm", "warm_args", 4, RK_SIM_REGION},
    {SET_K, "plate_set_k", "k_args", 4, RK_SIM_GLOBAL},
};

typedef struct heat_args { int x, y; float amount; } heat_args;
typedef struct probe_args { int x, y; } probe_args;

static rk_sim_desc describe(const char *device, rk_sim_pattern pattern) {
    return (rk_sim_desc){.device = device, .pattern = pattern, .source = source, .source_name = "plate.c",
                         .fields = fields, .field_count = 1, .scalars = scalars, .scalar_count = 3, .rows = ROWS,
                         .halo_rows = 1, .step = "plate_step", .commands = commands, .command_count = 4, .blocks = 3,
                         .threads = 32};
}

typedef struct run_result {
    uint64_t answer[OPS];
    int kind[OPS]; /* 0 none, PROBE (a float), WARM (a count), 'G' a scalar's bits */
    float field[2 * CELLS];
    rk_sim_stats stats;
} run_result;

static uint32_t next_random(uint32_t *x) {
    *x = *x * 1664525u + 1013904223u;
    return *x >> 8;
}

static void wait_all(rk_sim *sim, rk_sim_ticket *tickets, run_result *out, int upto) {
    for (int i = 0; i < upto; i++)
        if (tickets[i]) {
            CHECK_OK(rk_sim_wait(sim, tickets[i], &out->answer[i]));
            tickets[i] = 0;
        }
}

/* A fixed pseudo-random mix of every kind of command, a field read in the middle. */
static void run(const char *device, rk_sim_pattern pattern, run_result *out) {
    memset(out, 0, sizeof *out);
    rk_sim_desc d = describe(device, pattern);
    rk_sim *sim = NULL;
    CHECK_OK(rk_sim_create(&d, &sim));
    rk_sim_ticket tickets[OPS] = {0};
    uint32_t seed = 12345u;
    int outstanding = 0;
    for (int i = 0; i < OPS; i++) {
        uint32_t r = next_random(&seed) % 100u;
        int y = (int)(next_random(&seed) % ROWS), x = (int)(next_random(&seed) % N);
        int first = (int)(next_random(&seed) % ROWS), count = 1 + (int)(next_random(&seed) % (uint32_t)(ROWS - first));
        if (r < 30) {
            heat_args a = {x, y, 1.0f + (float)(next_random(&seed) % 50u)};
            CHECK_OK(rk_sim_send(sim, HEAT, &a, sizeof a, y, 1, &tickets[i]));
        } else if (r < 55) {
            CHECK_OK(rk_sim_step(sim, 1 + next_random(&seed) % 3u, &tickets[i]));
        } else if (r < 75) {
            probe_args a = {x, y};
            CHECK_OK(rk_sim_send(sim, PROBE, &a, sizeof a, y, 1, &tickets[i]));
            out->kind[i] = PROBE;
        } else if (r < 90) {
            float threshold = 0.5f;
            CHECK_OK(rk_sim_send(sim, WARM, &threshold, sizeof threshold, first, count, &tickets[i]));
            out->kind[i] = WARM;
        } else if (r < 95) {
            float k = 0.1f + 0.02f * (float)(next_random(&seed) % 8u);
            CHECK_OK(rk_sim_send(sim, SET_K, &k, sizeof k, 0, 0, &tickets[i]));
        } else if (r < 98) {
            CHECK_OK(rk_sim_set_scalar(sim, "loss", rk_sim_f32_bits(0.005f * (float)(1 + next_random(&seed) % 4u))));
        } else {
            uint32_t bits = 0;
            CHECK_OK(rk_sim_get_scalar(sim, "k", &bits));
            out->answer[i] = bits;
            out->kind[i] = 'G';
        }
        if (i == OPS / 2) {
            float mid[2 * CELLS];
            CHECK_OK(rk_sim_read_field(sim, "t", 0, 2 * CELLS, mid));
        }
        if (++outstanding == 48) { /* answers stay readable for RK_SIM_RING_SLOTS commands */
            wait_all(sim, tickets, out, i + 1);
            outstanding = 0;
        }
    }
    wait_all(sim, tickets, out, OPS);
    CHECK_OK(rk_sim_finish(sim));
    CHECK_OK(rk_sim_read_field(sim, "t", 0, 2 * CELLS, out->field));
    rk_sim_get_stats(sim, &out->stats);
    CHECK_OK(rk_sim_destroy(sim));
}

static bool near(float a, float b) { return fabsf(a - b) <= 1e-4f * fmaxf(1.0f, fabsf(a)); }

static void same_within_tolerance(const run_result *cpu, const run_result *gpu) {
    int probes = 0;
    for (int i = 0; i < OPS; i++) {
        CHECK_EQ(cpu->kind[i], gpu->kind[i]);
        if (cpu->kind[i] == PROBE) {
            CHECK_FLOAT_NEAR(rk_sim_answer_as_f32(gpu->answer[i]), rk_sim_answer_as_f32(cpu->answer[i]),
                             1e-4 * fmax(1.0, fabs(rk_sim_answer_as_f32(cpu->answer[i]))));
            probes++;
        } else if (cpu->kind[i] == WARM) {
            /* A cell within rounding of the threshold may count on one side only. */
            CHECK_LE(llabs((long long)cpu->answer[i] - (long long)gpu->answer[i]), 2);
        } else {
            CHECK_U64_EQ(gpu->answer[i], cpu->answer[i]);
        }
    }
    CHECK_GT(probes, 20);
    for (int i = 0; i < 2 * CELLS; i++)
        if (!near(cpu->field[i], gpu->field[i])) {
            fprintf(stderr, "cell %d: cpu %.9g, webgpu %.9g\n", i, (double)cpu->field[i], (double)gpu->field[i]);
            CHECK(near(cpu->field[i], gpu->field[i]));
        }
}

static void bad_input(const char *device) {
    rk_sim_desc d = describe(device, RK_SIM_PERSISTENT);
    rk_sim *sim = NULL;
    CHECK_OK(rk_sim_create(&d, &sim));
    probe_args p = {1, 1};
    rk_sim_ticket t = 0;
    CHECK_STATUS(rk_sim_send(sim, 99, &p, sizeof p, 0, 1, &t), RK_NOT_FOUND);
    CHECK_STATUS(rk_sim_send(sim, PROBE, &p, 4, 0, 1, &t), RK_INVALID_ARGUMENT);
    char big[RK_SIM_MAX_PAYLOAD + 4] = {0};
    CHECK_STATUS(rk_sim_send(sim, PROBE, big, sizeof big, 0, 1, &t), RK_MESSAGE_TOO_LARGE);
    CHECK_STATUS(rk_sim_send(sim, PROBE, &p, sizeof p, ROWS - 1, 2, &t), RK_OUT_OF_RANGE);
    CHECK_STATUS(rk_sim_wait(sim, 1, NULL), RK_INVALID_ARGUMENT); /* nothing sent yet */
    CHECK_STATUS(rk_sim_read_field(sim, "t", 2 * CELLS, 1, big), RK_OUT_OF_RANGE);
    CHECK_STATUS(rk_sim_get_scalar(sim, "nope", (uint32_t *)big), RK_NOT_FOUND);
    rk_sim_ticket first = 0;
    CHECK_OK(rk_sim_send(sim, PROBE, &p, sizeof p, 1, 1, &first));
    for (unsigned i = 0; i < RK_SIM_RING_SLOTS; i++) CHECK_OK(rk_sim_step(sim, 1, NULL));
    uint64_t answer = 0;
    CHECK_STATUS(rk_sim_wait(sim, first, &answer), RK_OUT_OF_RANGE); /* its answer is gone */
    CHECK_OK(rk_sim_wait(sim, first, NULL));                          /* but it did complete */
    CHECK_STATUS(rk_sim_wait(sim, first + RK_SIM_RING_SLOTS + 1, NULL), RK_INVALID_ARGUMENT);
    /* Destroy runs the batch still waiting on the host. */
    heat_args h = {2, 3, 5.0f};
    CHECK_OK(rk_sim_send(sim, HEAT, &h, sizeof h, 3, 1, NULL));
    CHECK_OK(rk_sim_destroy(sim));

    /* A helper returning a pointer into a field has no WGSL form: the transpiler says so. */
    static const char pointer_source[] =
        "RK_DEVICE float *cells(const rk_sim_state *s) { return s->t; }\n"
        "RK_DEVICE void plate_step(const rk_sim_state *s, const rk_sim_region *r) {\n"
        "    if (r->tid == 0) cells(s)[r->row_begin] += 1.0f;\n"
        "}\n";
    d.source = pointer_source;
    d.command_count = 0;
    CHECK_STATUS(rk_sim_create(&d, &sim), RK_COMPILE_FAILED);
    CHECK(sim == NULL);
    CHECK_STR_CONTAINS(rk_last_error(), "WGSL");
    CHECK_STR_CONTAINS(rk_last_error(), "plate.c:");

    /* A payload_size that is not its type's size would misread the payload buffer. */
    static rk_sim_command wrong[4];
    memcpy(wrong, commands, sizeof commands);
    wrong[1].payload_size = 4;
    d = describe(device, RK_SIM_TRADITIONAL);
    d.commands = wrong;
    CHECK_STATUS(rk_sim_create(&d, &sim), RK_COMPILE_FAILED);
    CHECK_STR_CONTAINS(rk_last_error(), "payload_size must be sizeof(probe_args)");
}

int main(int argc, char **argv) {
    const char *device = sim_test_device(argc, argv); /* CTest passes "webgpu" */
    static run_result persistent, traditional, cpu;
    run(device, RK_SIM_PERSISTENT, &persistent);
    run(device, RK_SIM_TRADITIONAL, &traditional);
    CHECK(strcmp(persistent.stats.backend, "webgpu") == 0);
    CHECK_U64_EQ(persistent.stats.completed, persistent.stats.commands);
    CHECK_U64_EQ(traditional.stats.steps, persistent.stats.steps);
    /* Traditional: a dispatch per command and per step; persistent: one per batch. */
    CHECK_GE(traditional.stats.launches, traditional.stats.steps);
    CHECK_LT(persistent.stats.launches * 4, traditional.stats.launches);
    for (int i = 0; i < OPS; i++) CHECK_U64_EQ(traditional.answer[i], persistent.answer[i]);
    CHECK(memcmp(traditional.field, persistent.field, sizeof persistent.field) == 0);
    printf("webgpu: persistent (%llu launches) and traditional (%llu launches) agree bit for bit over %d operations "
           "(%llu steps)\n", (unsigned long long)persistent.stats.launches,
           (unsigned long long)traditional.stats.launches, OPS, (unsigned long long)persistent.stats.steps);
    run("cpu", RK_SIM_TRADITIONAL, &cpu); /* persistent on the CPU needs a worker per band */
    same_within_tolerance(&cpu, &persistent);
    printf("cpu and webgpu agree within float tolerance\n");
    bad_input(device);
    printf("sim on %s: bad input refused with its status\n", device);
    return 0;
}
