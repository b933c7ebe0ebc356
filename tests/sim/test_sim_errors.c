/* Bad input to rk_sim gets a status and a message naming the problem, never
 * an abort or a host hang: descriptions, a step that fails to compile (with
 * the compiler's log), unknown commands, payload sizes, rows outside the
 * partition, tickets never issued or too old, unknown fields and scalars, a
 * command that runs far past the hang timeout (RK_HUNG, then it completes)
 * and, on a GPU (argv[1] = "cuda"), a kernel that faults (RK_DEVICE_FAULT). */
#include <stdlib.h>

#include "sim_test.h"

static const char *device;
static bool cpu;

static const rk_sim_field fields[] = {{"cells", RK_SIM_I32, 10}};
static const rk_sim_scalar scalars[] = {{"gain", RK_SIM_F32, 1.5}};
static const rk_sim_command commands[] = {
    {GET, "get", NULL, 0, RK_SIM_REGION},
    {SPIN, "spin", "spin_args", 4, RK_SIM_GLOBAL},
    {CRASH, "crash", NULL, 0, RK_SIM_GLOBAL},
};

static rk_sim_desc base(rk_sim_pattern pattern) {
    return (rk_sim_desc){.device = device, .pattern = pattern, .source = sim_test_spin_source, .source_name = "errors.c",
                         .fields = fields, .field_count = 1, .scalars = scalars, .scalar_count = 1, .rows = 10,
                         .step = "tick", .commands = commands, .command_count = 3};
}

static void bad_descriptions(void) {
    rk_sim *sim = NULL;
    CHECK_STATUS(rk_sim_create(NULL, &sim), RK_NULL_ARGUMENT);
    rk_sim_desc d = base(RK_SIM_PERSISTENT);
    d.rows = 0;
    CHECK_STATUS(rk_sim_create(&d, &sim), RK_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(rk_last_error(), "rows");
    d = base(RK_SIM_PERSISTENT);
    rk_sim_field bad_field[] = {{"two words", RK_SIM_F32, 4}};
    d.fields = bad_field;
    CHECK_STATUS(rk_sim_create(&d, &sim), RK_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(rk_last_error(), "two words");
    d = base(RK_SIM_PERSISTENT);
    rk_sim_command twice[] = {{GET, "get", NULL, 0, RK_SIM_REGION}, {GET, "get", NULL, 0, RK_SIM_REGION}};
    d.commands = twice;
    d.command_count = 2;
    CHECK_STATUS(rk_sim_create(&d, &sim), RK_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(rk_last_error(), "used twice");
    rk_sim_command big[] = {{GET, "get", NULL, RK_SIM_MAX_PAYLOAD + 4, RK_SIM_REGION}};
    d.commands = big;
    d.command_count = 1;
    CHECK_STATUS(rk_sim_create(&d, &sim), RK_MESSAGE_TOO_LARGE);
    rk_sim_command unknown_scope[] = {{GET, "get", NULL, 0, RK_SIM_QUERY_NEXT + 1}};
    d.commands = unknown_scope;
    CHECK_STATUS(rk_sim_create(&d, &sim), RK_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(rk_last_error(), "scope 5");
    d = base(RK_SIM_PERSISTENT);
    d.threads = 48;
    CHECK_STATUS(rk_sim_create(&d, &sim), RK_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(rk_last_error(), "multiple of 32");
    CHECK(sim == NULL);
    /* More persistent blocks than the device runs at once: the backend's
     * reason, readable, under the library's heading (it came out garbled
     * when both were formatted into the same buffer). */
    d = base(RK_SIM_PERSISTENT);
    d.blocks = 10;
    rk_status s = rk_sim_create(&d, &sim);
    if (s == RK_OK) {
        CHECK_OK(rk_sim_destroy(sim)); /* a device with ten blocks' room */
        sim = NULL;
    } else {
        CHECK_EQ(s, RK_BAD_LAUNCH_CONFIG);
        CHECK_STR_CONTAINS(rk_last_error(), "rk_sim: launching the persistent kernel: rk_launch");
    }
}

static void compile_errors(void) {
    rk_sim *sim = NULL;
    rk_sim_desc d = base(RK_SIM_PERSISTENT);
    d.source = "RK_DEVICE void tick(const rk_sim_state *s, const rk_sim_region *r) { s->cells[0] = nonsense; }\n";
    d.command_count = 0;
    CHECK_STATUS(rk_sim_create(&d, &sim), RK_COMPILE_FAILED);
    CHECK_STR_CONTAINS(rk_last_error(), "nonsense"); /* the compiler's log */
    CHECK_STR_CONTAINS(rk_last_error(), "errors.c");
    CHECK_STR_CONTAINS(rk_last_error(), "rk_sim: the simulation's source did not compile");
    /* A handler that does not exist. */
    d = base(RK_SIM_TRADITIONAL);
    rk_sim_command missing[] = {{GET, "no_such_handler", NULL, 0, RK_SIM_REGION}};
    d.commands = missing;
    d.command_count = 1;
    CHECK_STATUS(rk_sim_create(&d, &sim), RK_COMPILE_FAILED);
    CHECK_STR_CONTAINS(rk_last_error(), "no_such_handler");
    CHECK(sim == NULL);
    /* $RK_SIM_DEFINES: too many definitions, and one the compiler refuses
     * (the macro is a knob of the library's kernels). */
    d = base(RK_SIM_PERSISTENT);
    CHECK(setenv("RK_SIM_DEFINES", "A=1 B=1 C=1 D=1 E=1 F=1 G=1 H=1 I=1 J=1 K=1 L=1 M=1 N=1 O=1 P=1 Q=1", 1) == 0);
    CHECK_STATUS(rk_sim_create(&d, &sim), RK_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(rk_last_error(), "RK_SIM_DEFINES holds more than 16");
    CHECK(setenv("RK_SIM_DEFINES", "RK_SIM_POLL_NS=(", 1) == 0);
    CHECK_STATUS(rk_sim_create(&d, &sim), RK_COMPILE_FAILED);
    CHECK(unsetenv("RK_SIM_DEFINES") == 0);
    CHECK(sim == NULL);
}

static void bad_commands(rk_sim_pattern pattern) {
    rk_sim *sim = NULL;
    rk_sim_desc d = base(pattern);
    CHECK_OK(rk_sim_create(&d, &sim));
    rk_sim_ticket t = 0;
    uint8_t payload[64] = {0};
    CHECK_STATUS(rk_sim_send(sim, 99, NULL, 0, 0, 1, &t), RK_NOT_FOUND);
    CHECK_STR_CONTAINS(rk_last_error(), "99");
    CHECK_STATUS(rk_sim_send(sim, SPIN, payload, 64, 0, 0, &t), RK_MESSAGE_TOO_LARGE);
    CHECK_STATUS(rk_sim_send(sim, SPIN, payload, 8, 0, 0, &t), RK_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(rk_last_error(), "4 bytes");
    CHECK_STATUS(rk_sim_send(sim, GET, NULL, 0, 10, 1, &t), RK_OUT_OF_RANGE);
    CHECK_STATUS(rk_sim_send(sim, GET, NULL, 0, -1, 1, &t), RK_OUT_OF_RANGE);
    CHECK_STATUS(rk_sim_send(sim, GET, NULL, 0, 5, 6, &t), RK_OUT_OF_RANGE);
    CHECK_STATUS(rk_sim_send(sim, GET, NULL, 0, 5, 0, &t), RK_OUT_OF_RANGE);
    CHECK_EQ(t, 0);
    CHECK_STATUS(rk_sim_wait(sim, 1, NULL), RK_INVALID_ARGUMENT); /* nothing sent yet */
    CHECK_STR_CONTAINS(rk_last_error(), "never handed out");
    /* Answers: a row per band, each band's own. */
    CHECK_OK(rk_sim_step(sim, 3, NULL));
    rk_sim_ticket first = 0;
    uint64_t answer = 0;
    CHECK_OK(rk_sim_send(sim, GET, NULL, 0, 7, 1, &first));
    CHECK_OK(rk_sim_wait(sim, first, &answer));
    CHECK_EQ(answer, 3);
    CHECK_OK(rk_sim_send(sim, GET, NULL, 0, 0, 10, &t)); /* every band's row_begin, added up */
    CHECK_OK(rk_sim_wait(sim, t, &answer));
    rk_sim_stats st;
    rk_sim_get_stats(sim, &st);
    CHECK_EQ(answer, 3u * st.blocks);
    for (unsigned i = 0; i < RK_SIM_RING_SLOTS; i++) CHECK_OK(rk_sim_step(sim, 0, NULL));
    CHECK_STATUS(rk_sim_wait(sim, first, &answer), RK_OUT_OF_RANGE); /* too old to have an answer */
    CHECK_OK(rk_sim_wait(sim, first, NULL));                           /* but known complete */
    CHECK_STATUS(rk_sim_wait(sim, st.commands + 1000, NULL), RK_INVALID_ARGUMENT);
    int cells[10];
    CHECK_STATUS(rk_sim_read_field(sim, "nope", 0, 1, cells), RK_NOT_FOUND);
    CHECK_STATUS(rk_sim_read_field(sim, "cells", 5, 6, cells), RK_OUT_OF_RANGE);
    CHECK_OK(rk_sim_read_field(sim, "cells", 0, 10, cells));
    for (int i = 0; i < 10; i++) CHECK_EQ(cells[i], 3);
    uint32_t bits = 0;
    CHECK_STATUS(rk_sim_get_scalar(sim, "nope", &bits), RK_NOT_FOUND);
    CHECK_STATUS(rk_sim_wait(NULL, 1, NULL), RK_NULL_ARGUMENT);
    CHECK_OK(rk_sim_destroy(sim));
    CHECK_OK(rk_sim_destroy(NULL));
}

/* A command that runs for a second or more: waits report RK_HUNG after the
 * 200 ms timeout instead of blocking, and it completes after all. */
static void hang(rk_sim_pattern pattern) {
    rk_sim *sim = NULL;
    rk_sim_desc d = base(pattern);
    d.hang_timeout_ms = 200;
    CHECK_OK(rk_sim_create(&d, &sim));
    uint32_t rounds = cpu ? 400000000u : 4000000000u;
    rk_sim_ticket t = 0;
    CHECK_OK(rk_sim_send(sim, SPIN, &rounds, sizeof rounds, 0, 0, &t));
    CHECK_STATUS(rk_sim_wait(sim, t, NULL), RK_HUNG);
    CHECK_STR_CONTAINS(rk_last_error(), "no command completed");
    rk_status s;
    while ((s = rk_sim_wait(sim, t, NULL)) == RK_HUNG) {
    }
    CHECK_OK(s);
    CHECK_OK(rk_sim_destroy(sim));
}

/* GPU only: a handler writes far outside any allocation. */
static void fault(void) {
    rk_sim *sim = NULL;
    rk_sim_desc d = base(RK_SIM_PERSISTENT);
    d.hang_timeout_ms = 10000;
    CHECK_OK(rk_sim_create(&d, &sim));
    rk_sim_ticket t = 0;
    CHECK_OK(rk_sim_send(sim, CRASH, NULL, 0, 0, 0, &t));
    CHECK_STATUS(rk_sim_wait(sim, t, NULL), RK_DEVICE_FAULT);
    CHECK_STATUS(rk_sim_step(sim, 1, NULL), RK_DEVICE_FAULT); /* nothing more is accepted */
    /* Its fault was reported already and no command is left in flight: as
     * with rk_kernel_destroy, destroying it then is RK_OK (H100). */
    CHECK_OK(rk_sim_destroy(sim));
}

int main(int argc, char **argv) {
    device = sim_test_device(argc, argv);
    cpu = sim_test_is_cpu(device);
    bad_descriptions();
    compile_errors();
    bad_commands(RK_SIM_PERSISTENT);
    bad_commands(RK_SIM_TRADITIONAL);
    bad_commands(RK_SIM_GRAPH);
    hang(RK_SIM_PERSISTENT);
    hang(RK_SIM_TRADITIONAL);
    if (!cpu) hang(RK_SIM_GRAPH); /* on the CPU it runs as traditional: no new case */
    if (!cpu) fault(); /* last: a fault spoils the context for the rest of the process */
    printf("sim errors on %s: every bad input refused with its reason\n", device);
    return 0;
}
