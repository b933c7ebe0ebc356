/* thermostat: a steered simulation on rk_sim (ringkernel/sim.h). A heated
 * plate runs on the device; the host is a controller that, every round,
 * sends 10 steps and a probe command, waits for the probe's answer and
 * sends a heater command with new power, and halfway moves the heater
 * and the setpoint. Run in every pattern (persistent, traditional, graph):
 * each must hold the probe within 2 % of the setpoint at the end, and all
 * must agree bit for bit (plate and probes).
 *
 *   thermostat [DEVICE]      DEVICE: cpu (default), cuda, cuda:1 ...
 * Exit: 0 all right, 1 otherwise, 77 the device is not here. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ringkernel/sim.h>

#include "thermostat_args.h"

extern const char thermostat_args_source[], thermostat_sim_source[]; /* embedded by the build */

enum { N = 32, ROUNDS = 160, STEPS = 10, PROBE = 1, HEATER = 2 };

typedef struct setpoint { int hx, hy, px, py; float target; } setpoint;
static const setpoint phases[2] = {{8, 8, 10, 9, 4.0f}, {24, 20, 22, 20, 6.0f}};

static rk_sim *open_plate(const char *device, rk_sim_pattern pattern, char *source) {
    static const rk_sim_field fields[] = {{"t", RK_SIM_F32, 2 * N * N}};
    static const rk_sim_scalar scalars[] = {{"k", RK_SIM_F32, 0.2}, {"loss", RK_SIM_F32, 0.002},
                                            {"hx", RK_SIM_I32, 0}, {"hy", RK_SIM_I32, 0}, {"power", RK_SIM_F32, 0}};
    static const rk_sim_command commands[] = {
        {PROBE, "plate_probe", "probe_args", sizeof(probe_args), RK_SIM_QUERY},
        {HEATER, "plate_heater", "heater_args", sizeof(heater_args), RK_SIM_GLOBAL},
    };
    rk_sim_desc d = {.device = device, .pattern = pattern, .source = source, .source_name = "thermostat_sim.c",
                     .fields = fields, .field_count = 1, .scalars = scalars, .scalar_count = 5, .rows = N,
                     .step = "plate_step", .commands = commands, .command_count = 2};
    rk_sim *sim = NULL;
    if (rk_sim_create(&d, &sim) != RK_OK) fprintf(stderr, "rk_sim_create: %s\n", rk_last_error());
    return sim;
}

/* The control loop: probes[] gets every answer, plate[] the final field. */
static rk_status control(rk_sim *sim, float *probes, float *plate) {
    float power = 0.0f;
    rk_status s = RK_OK;
    for (int round = 0; round < ROUNDS && s == RK_OK; round++) {
        const setpoint *p = &phases[round < ROUNDS / 2 ? 0 : 1];
        probe_args at = {p->px, p->py};
        rk_sim_ticket probe = 0;
        uint64_t answer = 0;
        s = rk_sim_step(sim, STEPS, NULL);
        if (s == RK_OK) s = rk_sim_send(sim, PROBE, &at, sizeof at, p->py, 1, &probe);
        if (s == RK_OK) s = rk_sim_wait(sim, probe, &answer);
        probes[round] = rk_sim_answer_as_f32(answer);
        /* Proportional-integral, the integral kept within 0 .. 50 per step. */
        power += 0.2f * (p->target - probes[round]);
        power = power < 0.0f ? 0.0f : power > 50.0f ? 50.0f : power;
        heater_args h = {p->hx, p->hy, power + 1.0f * (p->target - probes[round])};
        if (s == RK_OK) s = rk_sim_send(sim, HEATER, &h, sizeof h, 0, 0, NULL);
    }
    if (s == RK_OK) s = rk_sim_finish(sim);
    if (s == RK_OK) s = rk_sim_read_field(sim, "t", 0, 2 * N * N, plate);
    return s;
}

int main(int argc, char **argv) {
    const char *device = argc > 1 ? argv[1] : "cpu";
    const rk_backend *backend = NULL;
    uint32_t index = 0;
    if (rk_select_device(device, &backend, &index) != RK_OK) {
        fprintf(stderr, "skipped: %s\n", rk_last_error());
        return 77;
    }
    size_t a = strlen(thermostat_args_source), b = strlen(thermostat_sim_source);
    char *source = malloc(a + b + 1);
    if (!source) return 1;
    memcpy(source, thermostat_args_source, a);
    memcpy(source + a, thermostat_sim_source, b + 1);
    static const rk_sim_pattern patterns[] = {RK_SIM_PERSISTENT, RK_SIM_TRADITIONAL, RK_SIM_GRAPH};
    enum { PATTERNS = sizeof patterns / sizeof patterns[0] };
    static float probes[PATTERNS][ROUNDS], plate[PATTERNS][2 * N * N];
    int wrong = 0;
    bool same = true;
    for (int p = 0; p < PATTERNS; p++) {
        rk_sim *sim = open_plate(device, patterns[p], source);
        rk_sim_stats st;
        rk_sim_get_stats(sim, &st);
        rk_status s = sim ? control(sim, probes[p], plate[p]) : RK_COMPILE_FAILED;
        if (s != RK_OK) fprintf(stderr, "%s: %s\n", rk_status_name(s), rk_last_error());
        if (rk_sim_destroy(sim) != RK_OK || s != RK_OK) {
            free(source);
            return 1;
        }
        float last = probes[p][ROUNDS - 1], mid = probes[p][ROUNDS / 2 - 1];
        /* The graph pattern runs as traditional where the backend has no launch graphs (the CPU). */
        char name[48];
        snprintf(name, sizeof name, "%s%s%s", rk_sim_pattern_name(patterns[p]),
                 st.executed != patterns[p] ? " as " : "",
                 st.executed != patterns[p] ? rk_sim_pattern_name(st.executed) : "");
        printf("%s: probe %.3f at setpoint %.1f (round %d), %.3f at setpoint %.1f (end)\n", name, (double)mid,
               (double)phases[0].target, ROUNDS / 2, (double)last, (double)phases[1].target);
        wrong += fabsf(mid - phases[0].target) > 0.02f * phases[0].target;
        wrong += fabsf(last - phases[1].target) > 0.02f * phases[1].target;
    }
    for (int p = 1; p < PATTERNS; p++)
        same = same && memcmp(probes[0], probes[p], sizeof probes[0]) == 0 &&
               memcmp(plate[0], plate[p], sizeof plate[0]) == 0;
    printf("patterns agree bit for bit: %s\n", same ? "yes" : "no");
    free(source);
    return wrong || !same ? 1 : 0;
}
