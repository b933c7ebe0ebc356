/* Ordering and sameness with integer arithmetic, so that every backend must
 * match the host model exactly (no float tolerance, CUDA included): a random
 * mix of 10,000 commands (region commands over random row ranges that span
 * bands, steps, queries of the next step right behind them, global
 * commands, scalars set and read, fields read and written in the middle of
 * the stream) against a host model, in every
 * pattern and several grids; every run's answers, in order, and its final
 * state are the same bits as every other run's. argv[1]: the device. */
#include <stdlib.h>

#include "sim_test.h"

static const char *device;

enum { ROWS = 13, COLS = 4, CELLS = ROWS * COLS };
enum { ADD = 1, SUM = 2, FLIP = 3, PEEK = 4 };

/* Level (step & 1) of field a is current. A step: each cell becomes
 * cell * mul + (the cells above and below, edges clamped) + add, in
 * wrapping uint32. ADD adds v + row + add (the scalar a FLIP changes) to
 * column col of its rows and answers how many rows it touched (a sum over
 * bands); SUM answers the sum of column col over its rows (thread 0 of each
 * band adds its share in 64 bits), and PEEK too, an RK_SIM_QUERY_NEXT: sent
 * right behind a step, it may be answered ahead of it, from the levels the
 * step reads, with the step's arithmetic; FLIP (global) xors every cell with v,
 * bumps add and answers cell 0. */
static const char source[] =
    /* col past the first 16 bytes of payload: a command's last eight words
     * carry data too, in the host's ring, the relay's copy and the log. */
    "typedef struct add_args { uint32_t v, unused0, unused1, unused2, unused3, col; } add_args;\n"
    "typedef struct col_args { uint32_t col; } col_args;\n"
    "typedef struct flip_args { uint32_t v; } flip_args;\n"
    "RK_DEVICE int cur_at(const rk_sim_state *s, uint64_t step) { return (int)(step & 1u) * s->rows * 4; }\n"
    "RK_DEVICE uint32_t mix_cell_next(const rk_sim_state *s, int cur, int row, int col) {\n"
    "    const int last = s->rows - 1, up = row > 0 ? row - 1 : 0, down = row < last ? row + 1 : last;\n"
    "    return s->a[cur + row * 4 + col] * s->scalars->mul + s->a[cur + up * 4 + col] + s->a[cur + down * 4 + col] +\n"
    "           s->scalars->add;\n"
    "}\n"
    "RK_DEVICE void mix_step(const rk_sim_state *s, const rk_sim_region *r) {\n"
    "    const int cur = cur_at(s, r->step), next = cur_at(s, r->step + 1);\n"
    "    for (int i = r->row_begin * 4 + r->tid; i < r->row_end * 4; i += r->threads)\n"
    "        s->a[next + i] = mix_cell_next(s, cur, i / 4, i % 4);\n"
    "}\n"
    "RK_DEVICE uint64_t mix_add(const rk_sim_state *s, const rk_sim_region *r, const add_args *p) {\n"
    "    const int cur = cur_at(s, r->step);\n"
    "    for (int row = r->row_begin + r->tid; row < r->row_end; row += r->threads)\n"
    "        s->a[cur + row * 4 + (int)p->col] += p->v + (uint32_t)row + s->scalars->add;\n"
    "    return (uint64_t)(r->row_end - r->row_begin);\n"
    "}\n"
    "RK_DEVICE uint64_t mix_sum(const rk_sim_state *s, const rk_sim_region *r, const col_args *p) {\n"
    "    const int cur = cur_at(s, r->step);\n"
    "    uint64_t sum = 0;\n"
    "    if (r->tid == 0)\n"
    "        for (int row = r->row_begin; row < r->row_end; row++) sum += s->a[cur + row * 4 + (int)p->col];\n"
    "    return sum;\n"
    "}\n"
    "RK_DEVICE uint64_t mix_peek(const rk_sim_state *s, const rk_sim_region *r, const col_args *p) {\n"
    "    if (!r->ahead) return mix_sum(s, r, p);\n"
    "    uint64_t sum = 0;\n"
    "    if (r->tid == 0)\n"
    "        for (int row = r->row_begin; row < r->row_end; row++) sum += mix_cell_next(s, cur_at(s, r->step - 1u), row, (int)p->col);\n"
    "    return sum;\n"
    "}\n"
    "RK_DEVICE uint64_t mix_flip(const rk_sim_state *s, const rk_sim_region *r, const flip_args *p) {\n"
    "    const int cur = cur_at(s, r->step);\n"
    "    for (int i = r->row_begin * 4 + r->tid; i < r->row_end * 4; i += r->threads) s->a[cur + i] ^= p->v;\n"
    "    sync_threads();\n"
    "    if (r->tid == 0) s->scalars->add += 1u;\n"
    "    return (uint64_t)s->a[cur];\n"
    "}\n";

/* ---- the host model ------------------------------------------------------------------------ */

typedef struct model {
    uint32_t a[2][CELLS];
    uint64_t steps;
    uint32_t mul, add;
} model;

static uint32_t *model_cur(model *m) { return m->a[m->steps & 1u]; }

static void model_step(model *m, uint32_t count) {
    for (uint32_t k = 0; k < count; k++, m->steps++) {
        const uint32_t *cur = m->a[m->steps & 1u];
        uint32_t *next = m->a[(m->steps + 1) & 1u];
        for (int i = 0; i < CELLS; i++) {
            int row = i / COLS, col = i % COLS, up = row > 0 ? row - 1 : 0, down = row < ROWS - 1 ? row + 1 : ROWS - 1;
            next[i] = cur[i] * m->mul + cur[up * COLS + col] + cur[down * COLS + col] + m->add;
        }
    }
}

/* ---- one run ------------------------------------------------------------------------------- */

typedef struct expect {
    rk_sim_ticket ticket;
    uint64_t value;
} expect;

typedef struct run_result {
    uint64_t answer_hash; /* every answer, in the order sent */
    uint32_t final[2][CELLS];
    uint64_t answers;
} run_result;

static uint64_t rng;
static uint32_t rnd(uint32_t n) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static void check_front(rk_sim *sim, expect *q, int *head, int *count, run_result *res) {
    uint64_t got = 0;
    CHECK_OK(rk_sim_wait(sim, q[*head].ticket, &got));
    CHECK_U64_EQ(got, q[*head].value);
    res->answer_hash = (res->answer_hash ^ got) * 0x100000001b3ull;
    res->answers++;
    *head = (*head + 1) % (int)RK_SIM_RING_SLOTS;
    (*count)--;
}

static rk_sim *open_mix(rk_sim_pattern pattern, uint32_t blocks, int halo) {
    static const rk_sim_field fields[] = {{"a", RK_SIM_U32, 2 * CELLS}};
    static const rk_sim_scalar scalars[] = {{"mul", RK_SIM_U32, 3}, {"add", RK_SIM_U32, 1}};
    static const rk_sim_command commands[] = {
        {ADD, "mix_add", "add_args", 24, RK_SIM_ROWWISE},
        {SUM, "mix_sum", "col_args", 4, RK_SIM_QUERY},
        {FLIP, "mix_flip", "flip_args", 4, RK_SIM_GLOBAL},
        {PEEK, "mix_peek", "col_args", 4, RK_SIM_QUERY_NEXT},
    };
    rk_sim_desc d = {.device = device, .pattern = pattern, .source = source, .source_name = "ordering.c",
                     .fields = fields, .field_count = 1, .scalars = scalars, .scalar_count = 2, .rows = ROWS,
                     .halo_rows = halo, .step = "mix_step", .commands = commands, .command_count = 4, .blocks = blocks,
                     .threads = sim_test_is_cpu(device) ? sim_test_cpu_threads(32) : 64};
    rk_sim *sim = NULL;
    CHECK_OK(rk_sim_create(&d, &sim));
    return sim;
}

static void random_mix(rk_sim_pattern pattern, uint32_t blocks, int halo, int commands, run_result *res) {
    rk_sim *sim = open_mix(pattern, blocks, halo);
    model m = {.mul = 3, .add = 1};
    expect q[RK_SIM_RING_SLOTS];
    int head = 0, count = 0;
    rng = 0x2545f4914f6cdd1dull; /* every run sends the same commands */
    memset(res, 0, sizeof *res);
    for (int i = 0; i < commands; i++) {
        uint32_t kind = rnd(1000);
        int first = (int)rnd(ROWS), rows = (int)rnd((uint32_t)(ROWS - first)) + 1;
        expect e = {0};
        bool answered = true;
        if (kind < 350) {
            uint32_t args[6] = {rnd(0xffffffffu), 0, 0, 0, 0, 0};
            args[5] = rnd(COLS);
            CHECK_OK(rk_sim_send(sim, ADD, args, sizeof args, first, rows, &e.ticket));
            for (int row = first; row < first + rows; row++) model_cur(&m)[row * COLS + (int)args[5]] += args[0] + (uint32_t)row + m.add;
            e.value = (uint64_t)rows;
        } else if (kind < 650) {
            uint32_t col = rnd(COLS);
            CHECK_OK(rk_sim_send(sim, SUM, &col, sizeof col, first, rows, &e.ticket));
            for (int row = first; row < first + rows; row++) e.value += model_cur(&m)[row * COLS + (int)col];
        } else if (kind < 850) {
            uint32_t n = rnd(4); /* 0 steps too */
            CHECK_OK(rk_sim_step(sim, n, &e.ticket));
            model_step(&m, n);
            if (rnd(2)) { /* a query of the next step right behind it (answered ahead of a step of one) */
                q[(head + count++) % (int)RK_SIM_RING_SLOTS] = e;
                uint32_t col = rnd(COLS);
                e.value = 0;
                CHECK_OK(rk_sim_send(sim, PEEK, &col, sizeof col, first, rows, &e.ticket));
                for (int row = first; row < first + rows; row++) e.value += model_cur(&m)[row * COLS + (int)col];
            }
        } else if (kind < 930) {
            uint32_t v = rnd(0xffffffffu);
            CHECK_OK(rk_sim_send(sim, FLIP, &v, sizeof v, 0, 0, &e.ticket));
            for (int c = 0; c < CELLS; c++) model_cur(&m)[c] ^= v;
            m.add++;
            e.value = model_cur(&m)[0];
        } else if (kind < 980) {
            m.mul = rnd(7) | 1u;
            CHECK_OK(rk_sim_set_scalar(sim, "mul", m.mul));
            answered = false;
        } else if (kind < 995) {
            uint32_t bits = 0;
            CHECK_OK(rk_sim_get_scalar(sim, "add", &bits)); /* after every command sent before it */
            CHECK_EQ(bits, m.add);
            answered = false;
        } else if (kind < 998) {
            uint32_t got[2 * CELLS];
            CHECK_OK(rk_sim_read_field(sim, "a", 0, 2 * CELLS, got));
            CHECK(memcmp(&got[(m.steps & 1u) * CELLS], model_cur(&m), sizeof m.a[0]) == 0);
            answered = false;
        } else {
            uint32_t rowsv[COLS * ROWS];
            for (int c = 0; c < rows * COLS; c++) rowsv[c] = rnd(0xffffffffu);
            CHECK_OK(rk_sim_write_field(sim, "a", (m.steps & 1u) * CELLS + (size_t)first * COLS, (size_t)rows * COLS,
                                        rowsv));
            memcpy(&model_cur(&m)[first * COLS], rowsv, (size_t)rows * COLS * sizeof(uint32_t));
            answered = false;
        }
        if (answered) q[(head + count++) % (int)RK_SIM_RING_SLOTS] = e;
        /* An answer stays readable for RK_SIM_RING_SLOTS commands (scalars and
         * fences count too): check it well before. */
        rk_sim_stats st;
        rk_sim_get_stats(sim, &st);
        while (count && st.commands - q[head].ticket >= RK_SIM_RING_SLOTS / 2) check_front(sim, q, &head, &count, res);
    }
    while (count) check_front(sim, q, &head, &count, res);
    CHECK_OK(rk_sim_read_field(sim, "a", 0, 2 * CELLS, res->final));
    CHECK(memcmp(res->final[m.steps & 1u], model_cur(&m), sizeof m.a[0]) == 0);
    rk_sim_stats st;
    rk_sim_get_stats(sim, &st);
    CHECK_U64_EQ(st.steps, m.steps);
    CHECK_U64_EQ(st.completed, st.commands);
    if (blocks) CHECK_EQ(st.blocks, blocks);
    CHECK_OK(rk_sim_destroy(sim));
}

/* Bands for the halo runs: 4 and 13 on a GPU; on the CPU a cooperative
 * grid gets a worker thread a block, so as many as RK_CPU_THREADS leaves
 * beside a relay block (RK_SIM_RELAY), at most 4 (2 without the variable). */
static uint32_t halo_bands(uint32_t gpu) {
    if (!sim_test_is_cpu(device)) return gpu;
    const char *threads = getenv("RK_CPU_THREADS"), *relay = getenv("RK_SIM_RELAY");
    int n = threads ? atoi(threads) - (relay && strcmp(relay, "0") != 0 ? 1 : 0) : 2;
    return n < 1 ? 1u : n > 4 ? 4u : (uint32_t)n;
}

/* A band that lags (band 1, built with RK_SIM_TEST_LAG: tests/sim/CMakeLists.txt)
 * while the host keeps up to 60 commands in flight: queries of band 0's rows,
 * which band 0 answers without band 1, and a step every 40 commands, so that
 * the relay runs a ring's length ahead of band 1 and must not write a log
 * slot again before every band has read it. Every answer against the model. */
static void lagging_mix(run_result *res) {
    const uint32_t bands = halo_bands(4);
    rk_sim *sim = open_mix(RK_SIM_PERSISTENT, bands, 1);
    const int band0_rows = (int)(ROWS / bands); /* RK_SIM_BAND_FIRST(1, bands, ROWS) */
    model m = {.mul = 3, .add = 1};
    expect q[RK_SIM_RING_SLOTS];
    int head = 0, count = 0;
    rng = 0x9e3779b97f4a7c15ull;
    memset(res, 0, sizeof *res);
    for (int i = 0; i < 3000; i++) {
        expect e = {0};
        if (i % 40 == 39) {
            CHECK_OK(rk_sim_step(sim, 1, &e.ticket));
            model_step(&m, 1);
        } else {
            const int first = (int)rnd((uint32_t)band0_rows), rows = (int)rnd((uint32_t)(band0_rows - first)) + 1;
            const uint32_t col = rnd(COLS);
            CHECK_OK(rk_sim_send(sim, SUM, &col, sizeof col, first, rows, &e.ticket));
            for (int row = first; row < first + rows; row++) e.value += model_cur(&m)[row * COLS + (int)col];
        }
        q[(head + count++) % (int)RK_SIM_RING_SLOTS] = e;
        while (count && e.ticket - q[head].ticket >= 60) check_front(sim, q, &head, &count, res);
    }
    while (count) check_front(sim, q, &head, &count, res);
    CHECK_OK(rk_sim_read_field(sim, "a", 0, 2 * CELLS, res->final));
    CHECK(memcmp(res->final[m.steps & 1u], model_cur(&m), sizeof m.a[0]) == 0);
    CHECK_OK(rk_sim_destroy(sim));
}

int main(int argc, char **argv) {
    device = sim_test_device(argc, argv);
    /* halo 1: the step reads one row past its own (it does), so a band
     * waits only for the bands next to it, and a region command only for
     * those within a row of its rows; 0: any row, every band. */
    struct { rk_sim_pattern pattern; uint32_t blocks; int halo, commands; } runs[] = {
        {RK_SIM_PERSISTENT, 2, 0, 10000}, {RK_SIM_TRADITIONAL, 2, 0, 10000}, {RK_SIM_PERSISTENT, 1, 0, 2000},
        {RK_SIM_TRADITIONAL, 13, 0, 2000}, {RK_SIM_PERSISTENT, 0, 0, 2000}, {RK_SIM_GRAPH, 2, 0, 10000},
        {RK_SIM_GRAPH, 13, 0, 2000}, {RK_SIM_PERSISTENT, halo_bands(4), 1, 10000}, {RK_SIM_PERSISTENT, halo_bands(13), 1, 2000},
    };
    /* RK_SIM_TEST_PATTERN=persistent (or another): that pattern's runs only,
     * e.g. under compute-sanitizer's racecheck, which is slow enough on the
     * launch-per-command patterns to trip the 60 s wait. */
    const char *only = getenv("RK_SIM_TEST_PATTERN");
    if (getenv("RK_SIM_TEST_LAGGING")) {
        run_result lag = {0};
        lagging_mix(&lag);
        printf("persistent with band 1 lagging: %llu answers = the host model\n", (unsigned long long)lag.answers);
        return 0;
    }
    run_result first = {0}, res = {0};
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        if (only && strcmp(only, rk_sim_pattern_name(runs[r].pattern)) != 0) continue;
        run_result *out = r == 0 ? &first : &res;
        random_mix(runs[r].pattern, runs[r].blocks, runs[r].halo, runs[r].commands, out);
        printf("%s, %u blocks, halo %d: %d commands, %llu answers = the host model\n",
               rk_sim_pattern_name(runs[r].pattern), runs[r].blocks, runs[r].halo, runs[r].commands,
               (unsigned long long)out->answers);
        if (r > 0 && !only && runs[r].commands == runs[0].commands) { /* the 10,000-command runs: the same bits */
            CHECK_U64_EQ(res.answer_hash, first.answer_hash);
            CHECK(memcmp(res.final, first.final, sizeof first.final) == 0);
        }
        CHECK_GT(out->answers, (uint64_t)runs[r].commands / 2);
    }
    printf("sim ordering on %s: every pattern and grid matches the integer model exactly\n", device);
    return 0;
}
