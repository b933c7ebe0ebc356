/* Two persistent simulations and a persistent ring kernel open at once on
 * one device, created in the order that used to fail on CUDA (a module
 * loaded while a persistent kernel runs): simulation A runs, then a ring
 * kernel is launched, then simulation B is created, then A is destroyed
 * while B and the ring kernel go on. Every answer is checked against a host
 * model. argv[1]: "cpu" (CI) or "cuda" (skipped without a GPU). */
#include <math.h>
#include <stdlib.h>

#include "ringkernel/ringkernel.h"
#include "sim_test.h"

static const char ring_source[] =
    "typedef struct { uint32_t v; } Req;\n"
    "typedef struct { uint32_t v; } Resp;\n"
    "RK_HANDLER int twice(const Req *q, Resp *p, void *state) { (void)state; p->v = q->v * 2u + 1u; return 0; }\n";

static const char *device;
static bool cpu;

/* Where a hang happened, when one does. */
static void stage(const char *what) { fprintf(stderr, "sim together: %s\n", what); }
static void stage_round(const char *what, int round) { fprintf(stderr, "sim together: round %d: %s\n", round, what); }

static heat3d open_heat(int n) {
    heat3d_config cfg = {.device = device, .nx = n, .ny = n, .nz = n, .blocks = cpu ? 1 : 4, .threads = cpu ? 32 : 128,
                       /* a hang is an error naming the stage, before ctest's timeout */
                       .hang_timeout_ms = 20000};
    heat3d h;
    CHECK_OK(heat3d_create(&cfg, &h));
    return h;
}

/* A few commands on h, checked against its model. */
static void exercise(heat3d *h, heat_model *m, int round) {
    int x = round % h->nx, y = (round * 3) % h->ny, z = (round * 5) % h->nz;
    CHECK_OK(heat3d_add(h, x, y, z, 2.0f + (float)round, NULL));
    *heat_model_cell(m, x, y, z) += 2.0f + (float)round;
    CHECK_OK(rk_sim_step(h->sim, 2, NULL));
    heat_model_step(m, 2);
    rk_sim_ticket t = 0;
    uint64_t got = 0;
    CHECK_OK(heat3d_query(h, x, y, z, &t));
    CHECK_OK(rk_sim_wait(h->sim, t, &got));
    CHECK_FLOAT_NEAR(rk_sim_answer_as_f32(got), *heat_model_cell(m, x, y, z), cpu ? 0.0 : 1e-4);
}

static void ring_round_trip(rk_kernel *k, uint32_t v) {
    uint32_t reply = 0;
    CHECK_OK(rk_kernel_send(k, &v, sizeof v, 5000000000ull, NULL));
    CHECK_OK(rk_kernel_receive(k, &reply, sizeof reply, NULL, 5000000000ull));
    CHECK_EQ(reply, v * 2u + 1u);
}

int main(int argc, char **argv) {
    device = sim_test_device(argc, argv);
    cpu = sim_test_is_cpu(device);
    heat_model ma, mb;
    heat3d a = open_heat(6);
    heat_model_init(&ma, 6, 6, 6, 0.1f);
    exercise(&a, &ma, 0);
    stage("A runs");

    /* A ring kernel's module loads while A's kernel runs. */
    rk_runtime *rt = NULL;
    rk_runtime_desc rd = {.backend = device};
    CHECK_OK(rk_runtime_create(&rd, &rt));
    rk_kernel_desc kd = {.name = "twice", .handler_source = ring_source, .handler_name = "twice",
                         .message_size = 4, .reply_size = 4, .queue_capacity = 64, .mode = RK_MODE_PERSISTENT};
    rk_kernel *k = NULL;
    CHECK_OK(rk_kernel_launch(rt, &kd, &k));
    stage("ring kernel launched beside A");
    CHECK_OK(rk_kernel_activate(k));
    ring_round_trip(k, 20);
    exercise(&a, &ma, 1);

    /* B's module loads while A and the ring kernel run. */
    heat3d b = open_heat(5);
    stage("B created beside A and the ring kernel");
    heat_model_init(&mb, 5, 5, 5, 0.1f);
    for (int round = 2; round < 12; round++) {
        stage_round("commands on A", round);
        exercise(&a, &ma, round);
        stage_round("commands on B", round);
        exercise(&b, &mb, round);
        stage_round("ring round trip", round);
        ring_round_trip(k, (uint32_t)round);
    }
    rk_sim_stats st;
    rk_sim_get_stats(a.sim, &st);
    CHECK_GE(st.launches, 1);

    /* A's module unloads while B and the ring kernel run. */
    CHECK_OK(rk_sim_destroy(a.sim));
    stage("A destroyed");
    for (int round = 12; round < 16; round++) {
        exercise(&b, &mb, round);
        ring_round_trip(k, (uint32_t)round);
    }
    CHECK_OK(rk_kernel_destroy(k));
    CHECK_OK(rk_runtime_destroy(rt));
    CHECK_OK(rk_sim_destroy(b.sim));
    heat_model_free(&ma);
    heat_model_free(&mb);
    printf("sim together on %s: two simulations and a ring kernel, created and destroyed in any order\n", device);
    return 0;
}
