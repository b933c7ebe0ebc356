/* The heat grid example on the rk_sim API, on one device (argv[1]: "cpu" in
 * CI, "webgpu" on lavapipe in CI, "cuda" on a GPU): every pattern and grid
 * gives the same bits for the same commands; a random mix of 10,000
 * commands against a host model (ordering: every command sees every earlier
 * one); state read and written while the kernel runs; scalars; destroy with
 * commands in flight. The host model does the CPU's float operations (the
 * CPU matches it bit for bit), so a GPU within tolerance of the model is
 * within tolerance of the CPU. */
#include <math.h>
#include <stdlib.h>

#include "sim_test.h"

static const char *device;
static bool cpu;
static bool webgpu;
/* Backends without launch graphs, where RK_SIM_GRAPH runs as traditional. */
static bool no_graphs(void) { return cpu || webgpu; }

static heat3d open_heat(rk_sim_pattern pattern, uint32_t blocks, int nx, int ny, int nz) {
    heat3d_config cfg = {.device = device, .pattern = pattern, .nx = nx, .ny = ny, .nz = nz, .alpha = 0.1f,
                         .blocks = blocks, .threads = cpu ? sim_test_cpu_threads(32) : 128};
    heat3d h;
    CHECK_OK(heat3d_create(&cfg, &h));
    return h;
}

/* ---- every pattern, the same bits ------------------------------------------------- */

enum { SCRIPT_ANSWERS = 8 };

/* A fixed script; its answers and the final level. */
static void run_script(heat3d *h, uint64_t answers[SCRIPT_ANSWERS], float *field) {
    rk_sim_ticket t[SCRIPT_ANSWERS];
    int z = h->nz - 1;
    CHECK_OK(heat3d_add(h, 1, 2, 0, 50.0f, NULL));
    CHECK_OK(heat3d_add(h, h->nx - 1, 0, z, 30.0f, NULL));
    CHECK_OK(heat3d_add(h, h->nx / 2, h->ny / 2, h->nz / 2, 80.0f, NULL));
    CHECK_OK(rk_sim_step(h->sim, 5, NULL));
    CHECK_OK(heat3d_query(h, 1, 2, 1, &t[0]));
    CHECK_OK(heat3d_count_hot(h, 0, h->nz, 0.001f, &t[1]));
    CHECK_OK(heat3d_set_alpha(h, 0.15f, NULL));
    CHECK_OK(rk_sim_step(h->sim, 1, NULL));
    CHECK_OK(heat3d_query(h, h->nx / 2, h->ny / 2, h->nz / 2, &t[2]));
    CHECK_OK(heat3d_add(h, 0, 0, z, -5.0f, NULL));
    CHECK_OK(heat3d_query(h, 0, 0, z, &t[3]));
    CHECK_OK(rk_sim_step(h->sim, 7, NULL));
    CHECK_OK(heat3d_count_hot(h, 1, h->nz - 2, 0.01f, &t[4]));
    CHECK_OK(heat3d_query(h, 2, 1, h->nz / 2 + 1, &t[5]));
    CHECK_OK(rk_sim_step(h->sim, 0, &t[6]));
    CHECK_OK(heat3d_count_hot(h, z, 1, 0.0f, &t[7]));
    for (int i = 0; i < SCRIPT_ANSWERS; i++) CHECK_OK(rk_sim_wait(h->sim, t[i], &answers[i]));
    heat_read_current(h, 13, field);
}

static void patterns_identical(void) {
    const int nx = 7, ny = 5, nz = 11;
    size_t cells = (size_t)nx * ny * nz;
    struct { rk_sim_pattern pattern; uint32_t blocks; } runs[] = {
        {RK_SIM_PERSISTENT, 0}, {RK_SIM_PERSISTENT, 1}, {RK_SIM_TRADITIONAL, 3}, {RK_SIM_TRADITIONAL, 1},
        {RK_SIM_PERSISTENT, cpu ? 2 : 11}, {RK_SIM_GRAPH, 3}, {RK_SIM_GRAPH, 0},
    };
    uint64_t first_answers[SCRIPT_ANSWERS] = {0};
    float *first = malloc(cells * sizeof(float)), *field = malloc(cells * sizeof(float));
    CHECK(first && field);
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        heat3d h = open_heat(runs[r].pattern, runs[r].blocks, nx, ny, nz);
        uint64_t answers[SCRIPT_ANSWERS];
        run_script(&h, answers, r == 0 ? first : field);
        if (r == 0) {
            memcpy(first_answers, answers, sizeof answers);
            /* The script's answers mean something: heat arrived and spread. */
            CHECK(rk_sim_answer_as_f32(answers[0]) > 0.0f);
            CHECK_GT(answers[1], 10);
            CHECK_EQ(answers[6], 0);
        } else {
            for (int i = 0; i < SCRIPT_ANSWERS; i++) CHECK_U64_EQ(answers[i], first_answers[i]);
            CHECK(memcmp(first, field, cells * sizeof(float)) == 0);
        }
        rk_sim_stats st;
        rk_sim_get_stats(h.sim, &st);
        CHECK_EQ(st.steps, 13);
        CHECK_EQ(st.pattern, runs[r].pattern);
        /* The graph pattern replays graphs where the backend has them (not the CPU nor WebGPU). */
        CHECK_EQ(st.executed, runs[r].pattern == RK_SIM_GRAPH && no_graphs() ? RK_SIM_TRADITIONAL : runs[r].pattern);
        CHECK_EQ(st.graph_launches > 0, st.executed == RK_SIM_GRAPH);
        if (runs[r].blocks) CHECK_EQ(st.blocks, runs[r].blocks);
        CHECK_OK(rk_sim_destroy(h.sim));
    }
    /* The host model agrees too (exactly on the CPU, whose compiler does the same float operations). */
    heat_model m;
    heat_model_init(&m, nx, ny, nz, 0.1f);
    *heat_model_cell(&m, 1, 2, 0) += 50.0f;
    *heat_model_cell(&m, nx - 1, 0, nz - 1) += 30.0f;
    *heat_model_cell(&m, nx / 2, ny / 2, nz / 2) += 80.0f;
    heat_model_step(&m, 5);
    CHECK_FLOAT_NEAR(rk_sim_answer_as_f32(first_answers[0]), *heat_model_cell(&m, 1, 2, 1), cpu ? 0.0 : 1e-4);
    m.alpha = 0.15f;
    heat_model_step(&m, 1);
    *heat_model_cell(&m, 0, 0, nz - 1) += -5.0f;
    heat_model_step(&m, 7);
    for (size_t i = 0; i < cells; i++) CHECK_FLOAT_NEAR(first[i], m.cur[i], cpu ? 0.0 : 1e-4 * (1.0 + fabs(m.cur[i])));
    heat_model_free(&m);
    free(first);
    free(field);
}

/* ---- long steps: the graph pattern's graphs of 2^k steps ------------------------------- */

/* Steps of many lengths (every step graph, each replayed more than once,
 * with commands between), the same bits as the traditional pattern's. */
static void graph_long_steps(void) {
    const int nx = 5, ny = 4, nz = 9;
    const uint32_t lengths[] = {100, 1, 64, 3, 65, 127, 2, 0, 7};
    enum { N = sizeof lengths / sizeof lengths[0] };
    size_t cells = (size_t)nx * ny * nz;
    float *fields[2] = {malloc(cells * sizeof(float)), malloc(cells * sizeof(float))};
    uint64_t answers[2][N];
    uint64_t steps = 0;
    CHECK(fields[0] && fields[1]);
    for (int r = 0; r < 2; r++) {
        heat3d h = open_heat(r == 0 ? RK_SIM_TRADITIONAL : RK_SIM_GRAPH, 3, nx, ny, nz);
        rk_sim_ticket t[N];
        steps = 0;
        for (int i = 0; i < N; i++) {
            CHECK_OK(heat3d_add(&h, i % nx, i % ny, (i * 5) % nz, 10.0f + (float)i, NULL));
            CHECK_OK(rk_sim_step(h.sim, lengths[i], NULL));
            steps += lengths[i];
            CHECK_OK(heat3d_query(&h, (i + 1) % nx, (i + 2) % ny, (i * 5) % nz, &t[i]));
        }
        for (int i = 0; i < N; i++) CHECK_OK(rk_sim_wait(h.sim, t[i], &answers[r][i]));
        heat_read_current(&h, steps, fields[r]);
        rk_sim_stats st;
        rk_sim_get_stats(h.sim, &st);
        CHECK_U64_EQ(st.steps, steps);
        if (st.executed == RK_SIM_GRAPH) {
            /* One replay per binary digit of each step's length (64 at most a graph), one per other command
             * (a step of 0 is one command launch). */
            uint64_t replays = 2 * N, zero = 0;
            for (int i = 0; i < N; i++) {
                zero += lengths[i] == 0;
                for (uint32_t left = lengths[i]; left; left -= left >= 64 ? 64 : 1u << (31 - __builtin_clz(left)))
                    replays++;
            }
            CHECK_U64_EQ(st.graph_launches, replays + zero);
            CHECK_U64_EQ(st.launches, steps + 2 * N + zero);
        }
        CHECK_OK(rk_sim_destroy(h.sim));
    }
    for (int i = 0; i < N; i++) CHECK_U64_EQ(answers[1][i], answers[0][i]);
    CHECK(rk_sim_answer_as_f32(answers[0][N - 1]) != 0.0f); /* heat spread to where it was asked */
    CHECK(memcmp(fields[0], fields[1], cells * sizeof(float)) == 0);
    free(fields[0]);
    free(fields[1]);
}

/* ---- ordering under a random mix -------------------------------------------------------- */

typedef struct pending {
    rk_sim_ticket ticket;
    uint64_t expected;
    bool is_count;
} pending;

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(uint32_t n) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

static void check_answer(heat3d *h, const pending *p) {
    uint64_t got = 0;
    CHECK_OK(rk_sim_wait(h->sim, p->ticket, &got));
    if (p->is_count && cpu) CHECK_U64_EQ(got, p->expected);
    else if (p->is_count) CHECK((got > p->expected ? got - p->expected : p->expected - got) <= 2);
    else if (cpu) CHECK_U64_EQ(got, p->expected);
    else CHECK_FLOAT_NEAR(rk_sim_answer_as_f32(got), rk_sim_answer_as_f32(p->expected), 1e-3);
}

static void random_mix(rk_sim_pattern pattern, int commands) {
    const int nx = 6, ny = 5, nz = 12;
    heat3d h = open_heat(pattern, cpu ? 2 : 5, nx, ny, nz);
    heat_model m;
    heat_model_init(&m, nx, ny, nz, 0.1f);
    pending window[RK_SIM_RING_SLOTS];
    int head = 0, count = 0, queries = 0;
    uint64_t steps = 0;
    for (int i = 0; i < commands; i++) {
        uint32_t kind = rnd(100);
        int x = (int)rnd((uint32_t)nx), y = (int)rnd((uint32_t)ny), z = (int)rnd((uint32_t)nz);
        pending p = {0};
        bool answer = false;
        if (kind < 30) {
            float amount = (float)rnd(1000) / 100.0f;
            CHECK_OK(heat3d_add(&h, x, y, z, amount, NULL));
            *heat_model_cell(&m, x, y, z) += amount;
        } else if (kind < 60) {
            CHECK_OK(heat3d_query(&h, x, y, z, &p.ticket));
            p.expected = rk_sim_f32_bits(*heat_model_cell(&m, x, y, z));
            answer = true;
        } else if (kind < 80) {
            uint32_t n = rnd(3) + 1;
            CHECK_OK(rk_sim_step(h.sim, n, NULL));
            heat_model_step(&m, n);
            steps += n;
        } else if (kind < 95) {
            int z0 = (int)rnd((uint32_t)nz), zn = (int)rnd((uint32_t)(nz - z0)) + 1;
            float threshold = (float)rnd(200) / 100.0f;
            CHECK_OK(heat3d_count_hot(&h, z0, zn, threshold, &p.ticket));
            p.expected = heat_model_count(&m, z0, zn, threshold);
            p.is_count = true;
            answer = true;
        } else {
            float alpha = 0.05f + (float)rnd(10) / 100.0f;
            CHECK_OK(heat3d_set_alpha(&h, alpha, NULL));
            m.alpha = alpha;
        }
        if (answer) {
            queries++;
            /* An answer is kept for RK_SIM_RING_SLOTS commands: check it before. */
            if (count == RK_SIM_RING_SLOTS / 2) {
                check_answer(&h, &window[head]);
                head = (head + 1) % RK_SIM_RING_SLOTS;
                count--;
            }
            window[(head + count++) % RK_SIM_RING_SLOTS] = p;
        }
        while (count && h.sim && rk_sim_wait(h.sim, window[head].ticket, NULL) == RK_OK &&
               (uint64_t)i + 1 - window[head].ticket + 1 > RK_SIM_RING_SLOTS / 2) {
            check_answer(&h, &window[head]);
            head = (head + 1) % RK_SIM_RING_SLOTS;
            count--;
        }
    }
    while (count) {
        check_answer(&h, &window[head]);
        head = (head + 1) % RK_SIM_RING_SLOTS;
        count--;
    }
    CHECK_GT(queries, commands / 4);
    /* The whole grid at the end, too. */
    size_t cells = (size_t)nx * ny * nz;
    float *field = malloc(cells * sizeof(float));
    CHECK(field);
    heat_read_current(&h, steps, field);
    for (size_t i = 0; i < cells; i++) {
        if (cpu) CHECK(rk_sim_f32_bits(field[i]) == rk_sim_f32_bits(m.cur[i]));
        else CHECK_FLOAT_NEAR(field[i], m.cur[i], 1e-3 * (1.0 + fabs(m.cur[i])));
    }
    free(field);
    heat_model_free(&m);
    CHECK_OK(rk_sim_destroy(h.sim));
}

/* ---- state, scalars ---------------------------------------------------------------------- */

static void state_and_scalars(rk_sim_pattern pattern) {
    heat3d h = open_heat(pattern, 0, 4, 4, 6);
    CHECK_OK(heat3d_add(&h, 1, 1, 1, 4.0f, NULL));
    float plane[16];
    for (int i = 0; i < 16; i++) plane[i] = (float)i;
    /* Written between commands: ordered after the add, before the query. */
    CHECK_OK(rk_sim_write_field(h.sim, "t", 16 * 3, 16, plane));
    rk_sim_ticket q1 = 0, q2 = 0;
    uint64_t a1 = 0, a2 = 0;
    CHECK_OK(heat3d_query(&h, 1, 1, 1, &q1));
    CHECK_OK(heat3d_query(&h, 3, 2, 3, &q2));
    CHECK_OK(rk_sim_wait(h.sim, q1, &a1));
    CHECK_OK(rk_sim_wait(h.sim, q2, &a2));
    CHECK(rk_sim_answer_as_f32(a1) == 4.0f);
    CHECK(rk_sim_answer_as_f32(a2) == 11.0f);
    uint32_t bits = 0;
    CHECK_OK(rk_sim_get_scalar(h.sim, "alpha", &bits));
    CHECK_EQ(bits, rk_sim_f32_bits(0.1f));
    CHECK_OK(rk_sim_set_scalar(h.sim, "alpha", rk_sim_f32_bits(0.125f)));
    CHECK_OK(rk_sim_get_scalar(h.sim, "alpha", &bits));
    CHECK_EQ(bits, rk_sim_f32_bits(0.125f));
    CHECK_OK(rk_sim_get_scalar(h.sim, "nx", &bits));
    CHECK_EQ(bits, 4);
    CHECK_OK(rk_sim_step(h.sim, 1, NULL));
    float back[16];
    CHECK_OK(rk_sim_read_field(h.sim, "t", 16 * 3, 16, back));
    CHECK(memcmp(back, plane, sizeof plane) == 0); /* the old level, untouched by the step */
    rk_sim_stats st;
    rk_sim_get_stats(h.sim, &st);
    /* Persistent: a restart for the write (on WebGPU a dispatch per batch: the write, the first wait, the three
     * scalar reads and the field read each end one, 6 in all); the others: a launch a command. */
    CHECK_EQ(st.launches, (pattern == RK_SIM_PERSISTENT ? (webgpu ? 6 : 2) : 8));
    CHECK_OK(rk_sim_destroy(h.sim));
}

/* ---- destroy with commands in flight --------------------------------------------------------- */

static void destroy_in_flight(rk_sim_pattern pattern) {
    heat3d h = open_heat(pattern, 0, 8, 8, 8);
    for (int i = 0; i < 300; i++) {
        CHECK_OK(heat3d_add(&h, i % 8, (i / 8) % 8, i % 8, 1.0f, NULL));
        if (i % 10 == 0) CHECK_OK(rk_sim_step(h.sim, 2, NULL));
    }
    rk_sim_stats st;
    rk_sim_get_stats(h.sim, &st);
    CHECK_EQ(st.commands, 330);
    /* Everything accepted is applied before the kernel stops. */
    CHECK_OK(rk_sim_destroy(h.sim));
}

int main(int argc, char **argv) {
    device = sim_test_device(argc, argv);
    cpu = sim_test_is_cpu(device);
    webgpu = strncmp(device, "webgpu", 6) == 0;
    patterns_identical();
    state_and_scalars(RK_SIM_PERSISTENT);
    state_and_scalars(RK_SIM_TRADITIONAL);
    state_and_scalars(RK_SIM_GRAPH);
    graph_long_steps();
    destroy_in_flight(RK_SIM_PERSISTENT);
    destroy_in_flight(RK_SIM_TRADITIONAL);
    destroy_in_flight(RK_SIM_GRAPH);
    random_mix(RK_SIM_PERSISTENT, 10000);
    random_mix(RK_SIM_TRADITIONAL, 10000);
    /* On the CPU the graph pattern runs as the traditional one: a shorter mix. */
    random_mix(RK_SIM_GRAPH, cpu ? 2000 : 10000);
    printf("sim heat3d on %s: patterns identical, 10,000-command mixes match the host model\n", device);
    return 0;
}
