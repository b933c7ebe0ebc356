/* A field read right after a command's answer sees every row the command
 * wrote, in every pattern. A command within one band is answered by the
 * band's thread 0 before the band's barrier (for latency), so the answer
 * can come while the band's other threads still write: in the traditional
 * and graph patterns the read must wait for the launch's end, not only the
 * answer (rk__sim_drain). Here every thread but 0 works a while before it
 * writes its rows, so a read that waited for the answer alone would see
 * old rows. And a launch whose other threads never end after the answer
 * makes the read RK_HUNG within the hang timeout, not a hung host (on the
 * CPU: a GPU kernel left spinning would outlive the test). argv[1]: the
 * device ("cpu" by default, "cuda"). */
#include "sim_test.h"

enum { ROWS = 64, FILL = 1, STALL = 2, ROUNDS = 20000 };

static const char source[] =
    "typedef struct fill_args { uint32_t seed; } fill_args;\n"
    "RK_DEVICE void idle(const rk_sim_state *s, const rk_sim_region *r) { (void)s; (void)r; }\n"
    "RK_DEVICE uint64_t fill(const rk_sim_state *s, const rk_sim_region *r, const fill_args *a) {\n"
    "    for (int i = r->row_begin + r->tid; i < r->row_end; i += r->threads) {\n"
    "        uint32_t v = a->seed + (uint32_t)i;\n"
    "        if (r->tid != 0) for (uint32_t k = 0; k < 20000u; k++) v = v * 1664525u + 1013904223u;\n"
    "        s->cells[i] = (int32_t)(v & 0x7fffffffu);\n"
    "    }\n"
    "    return 1;\n"
    "}\n"
    "RK_DEVICE uint64_t stall(const rk_sim_state *s, const rk_sim_region *r, const fill_args *a) {\n"
    "    uint32_t v = a->seed;\n"
    "    if (r->tid == 1) for (uint64_t k = 0; k < (1ull << 40); k++) v = v * 1664525u + 1013904223u;\n"
    "    s->cells[r->row_begin + r->tid] = (int32_t)v;\n"
    "    return 1;\n"
    "}\n";

/* What fill writes into row i (thread i % threads works it). */
static int32_t expected(uint32_t seed, int row, uint32_t threads) {
    uint32_t v = seed + (uint32_t)row;
    if ((uint32_t)row % threads != 0)
        for (uint32_t k = 0; k < ROUNDS; k++) v = v * 1664525u + 1013904223u;
    return (int32_t)(v & 0x7fffffffu);
}

int main(int argc, char **argv) {
    const char *device = sim_test_device(argc, argv);
    static const rk_sim_field fields[] = {{"cells", RK_SIM_I32, ROWS}};
    static const rk_sim_command commands[] = {{FILL, "fill", "fill_args", 4, RK_SIM_REGION},
                                              {STALL, "stall", "fill_args", 4, RK_SIM_REGION}};
    const uint32_t threads = sim_test_is_cpu(device) ? 32 : 64;
    const rk_sim_pattern patterns[] = {RK_SIM_TRADITIONAL, RK_SIM_GRAPH, RK_SIM_PERSISTENT};
    for (size_t p = 0; p < sizeof patterns / sizeof patterns[0]; p++) {
        /* One band: every command lies in it, so its thread 0 answers early. */
        rk_sim_desc d = {.device = device, .pattern = patterns[p], .source = source, .source_name = "readback.c",
                         .fields = fields, .field_count = 1, .rows = ROWS, .step = "idle", .commands = commands,
                         .command_count = 2, .blocks = 1, .threads = threads};
        rk_sim *sim = NULL;
        CHECK_OK(rk_sim_create(&d, &sim));
        for (uint32_t seed = 1; seed <= 20; seed++) {
            rk_sim_ticket t = 0;
            uint64_t answer = 0;
            CHECK_OK(rk_sim_send(sim, FILL, &seed, sizeof seed, 0, ROWS, &t));
            CHECK_OK(rk_sim_wait(sim, t, &answer));
            CHECK_U64_EQ(answer, 1);
            int32_t got[ROWS];
            CHECK_OK(rk_sim_read_field(sim, "cells", 0, ROWS, got));
            for (int row = 0; row < ROWS; row++) CHECK_EQ(got[row], expected(seed, row, threads));
        }
        CHECK_OK(rk_sim_destroy(sim));
        printf("%s: 20 reads right after the answer saw every row written\n", rk_sim_pattern_name(patterns[p]));
    }
    if (sim_test_is_cpu(device)) {
        rk_sim_desc d = {.device = device, .pattern = RK_SIM_TRADITIONAL, .source = source, .source_name = "readback.c",
                         .fields = fields, .field_count = 1, .rows = ROWS, .step = "idle", .commands = commands,
                         .command_count = 2, .blocks = 1, .threads = threads, .hang_timeout_ms = 300};
        ABANDON_BEGIN(); /* the stalled launch keeps its memory (sim.h) */
        rk_sim *sim = NULL;
        CHECK_OK(rk_sim_create(&d, &sim));
        uint32_t seed = 7;
        rk_sim_ticket t = 0;
        uint64_t answer = 0;
        CHECK_OK(rk_sim_send(sim, STALL, &seed, sizeof seed, 0, ROWS, &t));
        /* Thread 1 stalls, not the last: the CPU runs the thread that
         * completes a warp operation on at once, the others after it in order. */
        CHECK_OK(rk_sim_wait(sim, t, &answer)); /* thread 0 answered */
        int32_t got[ROWS];
        CHECK(rk_sim_read_field(sim, "cells", 0, ROWS, got) == RK_HUNG);
        CHECK_STR_CONTAINS(rk_last_error(), "did not end");
        ABANDON_END();
        printf("a launch that never ends after its answer: the read says RK_HUNG\n");
    }
    printf("sim readback on %s: ok\n", device);
    return 0;
}
