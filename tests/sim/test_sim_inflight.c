/* Destroy with commands in flight loses nothing accepted: it applies every
 * command the simulation took before it stops (a destroy right after a
 * slow command and a full ring of others takes as long as applying them);
 * on the CPU, a command that runs far too long makes destroy give up with
 * RK_HUNG instead of hanging the host; on a GPU (argv[1] = "cuda"), a kernel
 * that faults with commands in flight makes destroy report the fault
 * rather than RK_OK. */
#include <stdlib.h>
#include <time.h>

#include "sim_test.h"

static const char *device;

static rk_sim *open_sim(rk_sim_pattern pattern, uint32_t hang_timeout_ms) {
    static const rk_sim_field fields[] = {{"cells", RK_SIM_I32, 16}};
    static const rk_sim_command commands[] = {
        {GET, "get", NULL, 0, RK_SIM_REGION},
        {SPIN, "spin", "spin_args", 4, RK_SIM_GLOBAL},
        {CRASH, "crash", NULL, 0, RK_SIM_GLOBAL},
        {HOLD, "hold", "spin_args", 4, RK_SIM_GLOBAL},
    };
    rk_sim_desc d = {.device = device, .pattern = pattern, .source = sim_test_spin_source, .source_name = "inflight.c",
                     .fields = fields, .field_count = 1, .rows = 16, .step = "tick", .commands = commands,
                     .command_count = 4, .hang_timeout_ms = hang_timeout_ms};
    rk_sim *sim = NULL;
    CHECK_OK(rk_sim_create(&d, &sim));
    return sim;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The measure of work done: on the CPU backend the process's CPU time (the
 * kernels run on its threads; steady on a loaded machine, where elapsed
 * time is not), on a GPU elapsed time. */
static double work_s(void) {
    if (!sim_test_is_cpu(device)) return now_s();
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Sends more than a ring's worth of commands, then a slow one and some
 * more, and destroys at once: destroy must apply them all, so it takes
 * about as long as the slow command alone at least.
 * (Nothing can be read after a destroy, so its duration is the witness.) */
static void destroy_applies_everything(rk_sim_pattern pattern) {
    const uint32_t rounds = sim_test_is_cpu(device) ? 80000000u : 300000000u; /* ~0.1 s */
    rk_sim *sim = open_sim(pattern, 20000);
    rk_sim_ticket t = 0;
    uint64_t first = 0, answer = 0;
    double alone = 1e9;
    for (int k = 0; k < 3; k++) { /* the quickest of three: the machine may be loaded */
        double start = work_s();
        CHECK_OK(rk_sim_send(sim, SPIN, &rounds, sizeof rounds, 0, 0, &t));
        CHECK_OK(rk_sim_wait(sim, t, &answer));
        double took = work_s() - start;
        if (took < alone) alone = took;
        if (k == 0) first = answer;
        CHECK_U64_EQ(answer, first); /* nothing ran between */
    }
    /* More than a ring's worth: past RK_SIM_RING_SLOTS in flight, a send waits for a free slot. */
    for (int i = 0; i < 3 * (int)RK_SIM_RING_SLOTS; i++)
        CHECK_OK(i % 4 == 0 ? rk_sim_step(sim, 1, NULL) : rk_sim_send(sim, GET, NULL, 0, i % 16, 1, NULL));
    /* The slow one and fewer than a ring's worth behind it: no send waits. */
    CHECK_OK(rk_sim_send(sim, SPIN, &rounds, sizeof rounds, 0, 0, &t));
    for (int i = 0; i < (int)RK_SIM_RING_SLOTS / 2; i++)
        CHECK_OK(i % 4 == 0 ? rk_sim_step(sim, 1, NULL) : rk_sim_send(sim, GET, NULL, 0, i % 16, 1, NULL));
    rk_sim_stats st;
    rk_sim_get_stats(sim, &st);
    CHECK_U64_EQ(st.commands, 4 + 3 * RK_SIM_RING_SLOTS + RK_SIM_RING_SLOTS / 2); /* 3 timed, 1 slow */
    double start = work_s();
    CHECK_OK(rk_sim_destroy(sim));
    double destroyed = work_s() - start;
    printf("%s: a slow command alone %.0f ms of work; destroyed with it and %u more in flight: %.0f ms\n",
           rk_sim_pattern_name(pattern), alone * 1e3, RK_SIM_RING_SLOTS / 2, destroyed * 1e3);
    /* A destroy that dropped it would take a few milliseconds. */
    CHECK(destroyed >= alone * 0.5);
}

/* GPU only: a command faults with others in flight behind it. Each later
 * send is either accepted or refused with the fault; destroy reports the
 * fault, since no wait did for the accepted ones. */
static void fault_in_flight(void) {
    rk_sim *sim = open_sim(RK_SIM_PERSISTENT, 20000);
    rk_sim_ticket t = 0;
    uint64_t answer = 0;
    CHECK_OK(rk_sim_step(sim, 2, NULL));
    CHECK_OK(rk_sim_send(sim, GET, NULL, 0, 3, 1, &t));
    CHECK_OK(rk_sim_wait(sim, t, &answer));
    CHECK_EQ(answer, 2);
    CHECK_OK(rk_sim_send(sim, CRASH, NULL, 0, 0, 0, NULL));
    int accepted = 0;
    for (int i = 0; i < 8; i++) {
        rk_status s = rk_sim_send(sim, GET, NULL, 0, i, 1, NULL);
        CHECK(s == RK_OK || s == RK_DEVICE_FAULT);
        accepted += s == RK_OK;
    }
    CHECK_STATUS(rk_sim_destroy(sim), RK_DEVICE_FAULT);
    printf("persistent: a fault with %d more commands accepted behind it: destroy says %s\n", accepted,
           rk_last_error());
}

/* A command that will not finish in time: destroy gives up after the hang
 * timeout (at least 5 s at destroy) with RK_HUNG and its reason, rather
 * than hang the host; the kernel's memory stays allocated under it. Last
 * but for the fault: its kernel spins on until the process exits. */
static void destroy_hung(rk_sim_pattern pattern) {
    const uint32_t rounds = 1000; /* billions: minutes on a CPU core */
    ABANDON_BEGIN();
    rk_sim *sim = open_sim(pattern, 1000); /* destroy waits 5 s at least */
    CHECK_OK(rk_sim_send(sim, HOLD, &rounds, sizeof rounds, 0, 0, NULL));
    CHECK_OK(rk_sim_send(sim, GET, NULL, 0, 0, 16, NULL));
    double start = now_s();
    CHECK_STATUS(rk_sim_destroy(sim), RK_HUNG);
    double took = now_s() - start;
    ABANDON_END();
    CHECK_STR_CONTAINS(rk_last_error(), "memory is left allocated");
    CHECK_STR_CONTAINS(rk_last_error(), "no command completed");
    printf("%s: destroy of a hung simulation gave up after %.1f s: %s\n", rk_sim_pattern_name(pattern), took,
           rk_last_error());
    CHECK(took >= 4.5 && took < 30.0);
}

int main(int argc, char **argv) {
    device = sim_test_device(argc, argv);
    destroy_applies_everything(RK_SIM_PERSISTENT);
    destroy_applies_everything(RK_SIM_TRADITIONAL);
    destroy_applies_everything(RK_SIM_GRAPH);
    if (sim_test_is_cpu(device)) { /* on a GPU a held kernel would keep the device from the fault test */
        destroy_hung(RK_SIM_TRADITIONAL);
        destroy_hung(RK_SIM_PERSISTENT); /* its blocks hold the CPU's workers from now on */
    } else {
        fault_in_flight(); /* last: a fault spoils the context */
    }
    printf("sim in flight on %s: destroy applies every accepted command\n", device);
    return 0;
}
