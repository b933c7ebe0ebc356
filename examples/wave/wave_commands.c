/* The wave's commands on its rk_sim (wave_sim.h): each checked here, then
 * sent as the description's command (wave_sim.c) or a step; waits and
 * reads of the field. */
#include "wave_sim_internal.h"

#include <math.h>

static rk_status check_cell(const wave_sim *sim, const char *fn, int x, int y) {
    if (x < 0 || y < 0 || x >= sim->nx || y >= sim->ny)
        return wave__fail(RK_INVALID_ARGUMENT, "%s: cell (%d, %d) is outside the %d x %d grid", fn, x, y, sim->nx,
                          sim->ny);
    return RK_OK;
}

/* Over the rows the bump reaches (row-wise: the bands outside them go on). */
rk_status wave_inject(wave_sim *sim, int x, int y, float amplitude, wave_ticket *ticket) {
    if (!sim) return wave__fail(RK_NULL_ARGUMENT, "wave_inject: sim is NULL");
    rk_status s = check_cell(sim, "wave_inject", x, y);
    if (s == RK_OK && !isfinite(amplitude))
        s = wave__fail(RK_INVALID_ARGUMENT, "wave_inject: amplitude %g is not finite", (double)amplitude);
    if (s != RK_OK) return s;
    const int first = y > WAVE_BUMP_RADIUS ? y - WAVE_BUMP_RADIUS : 0;
    const int last = y + WAVE_BUMP_RADIUS < sim->ny ? y + WAVE_BUMP_RADIUS : sim->ny - 1;
    wave_cell_args a = {x, y, amplitude};
    return wave__lib(rk_sim_send(sim->sim, WAVE_INJECT, &a, sizeof a, first, last - first + 1, ticket), "wave_inject");
}

/* The kernels take c^2, squared here as the step always did. */
rk_status wave_set_speed(wave_sim *sim, float speed, wave_ticket *ticket) {
    if (!sim) return wave__fail(RK_NULL_ARGUMENT, "wave_set_speed: sim is NULL");
    rk_status s = wave__check_speed(speed);
    if (s != RK_OK) return s;
    wave_value_args a = {speed * speed};
    s = wave__lib(rk_sim_send(sim->sim, WAVE_SET_C2, &a, sizeof a, 0, 0, ticket), "wave_set_speed");
    if (s == RK_OK) sim->speed = speed;
    return s;
}

rk_status wave_set_damping(wave_sim *sim, float damping, wave_ticket *ticket) {
    if (!sim) return wave__fail(RK_NULL_ARGUMENT, "wave_set_damping: sim is NULL");
    rk_status s = wave__check_damping(damping);
    if (s != RK_OK) return s;
    wave_value_args a = {damping};
    s = wave__lib(rk_sim_send(sim->sim, WAVE_SET_DAMPING, &a, sizeof a, 0, 0, ticket), "wave_set_damping");
    if (s == RK_OK) sim->damping = damping;
    return s;
}

rk_status wave_step(wave_sim *sim, uint32_t steps, wave_ticket *ticket) {
    if (!sim) return wave__fail(RK_NULL_ARGUMENT, "wave_step: sim is NULL");
    return wave__lib(rk_sim_step(sim->sim, steps, ticket), "wave_step");
}

rk_status wave_query(wave_sim *sim, int x, int y, wave_ticket *ticket) {
    if (!sim) return wave__fail(RK_NULL_ARGUMENT, "wave_query: sim is NULL");
    rk_status s = check_cell(sim, "wave_query", x, y);
    if (s != RK_OK) return s;
    wave_cell_args a = {x, y, 0.0f};
    return wave__lib(rk_sim_send(sim->sim, WAVE_QUERY, &a, sizeof a, y, 1, ticket), "wave_query");
}

rk_status wave_wait(wave_sim *sim, wave_ticket ticket, float *value) {
    if (!sim) return wave__fail(RK_NULL_ARGUMENT, "wave_wait: sim is NULL");
    uint64_t answer = 0;
    rk_status s = wave__lib(rk_sim_wait(sim->sim, ticket, value ? &answer : NULL), "wave_wait");
    if (s == RK_OK && value) *value = rk_sim_answer_as_f32(answer); /* 0 for every command but a query */
    return s;
}

rk_status wave_finish(wave_sim *sim) {
    if (!sim) return wave__fail(RK_NULL_ARGUMENT, "wave_finish: sim is NULL");
    return wave__lib(rk_sim_finish(sim->sim), "wave_finish");
}

/* The steps sent (rk_sim counts them) say which level is current once they
 * have been applied (rk_sim_read_field reads after every command). */
rk_status wave_read_field(wave_sim *sim, float *cur, float *prev) {
    if (!sim || !cur) return wave__fail(RK_NULL_ARGUMENT, "wave_read_field: sim or cur is NULL");
    rk_sim_stats st;
    rk_sim_get_stats(sim->sim, &st);
    const size_t cells = (size_t)sim->nx * (size_t)sim->ny, now = (size_t)(st.steps & 1u);
    rk_status s = wave__lib(rk_sim_read_field(sim->sim, "u", now * cells, cells, cur), "wave_read_field");
    if (s == RK_OK && prev)
        s = wave__lib(rk_sim_read_field(sim->sim, "u", (now ^ 1u) * cells, cells, prev), "wave_read_field");
    return s;
}
