/* The traditional pattern's host side (wave_sim_internal.h): each command
 * as launches and copies on the simulation's stream. */
#include "wave_sim_internal.h"

static rk_status launch(wave_sim *sim, rk_function *fn, uint32_t blocks, uint32_t threads, const rk_arg *args,
                        size_t count, const char *what) {
    rk_launch_desc d = {
        .grid = RK_DIM3(blocks, 1, 1),
        .block = RK_DIM3(threads, 1, 1),
        .stream = sim->stream,
        .args = args,
        .arg_count = count,
    };
    TRY(rk_launch(fn, &d), what);
    return RK_OK;
}

static rk_status traditional_step(wave_sim *sim, uint32_t steps) {
    uint32_t blocks = sim->step_blocks;
    float c2 = sim->speed * sim->speed;
    for (uint32_t s = 0; s < steps; s++) {
        rk_arg args[] = {RK_ARG_BUF(sim->field[sim->parity]), RK_ARG_BUF(sim->field[sim->parity ^ 1u]),
                         RK_ARG_INT(sim->nx), RK_ARG_INT(sim->ny), RK_ARG_FLOAT(c2), RK_ARG_FLOAT(sim->damping)};
        rk_status st = launch(sim, sim->step_fn, blocks, sim->threads, args, 6, "wave: launching wave_step");
        if (st != RK_OK) return st;
        sim->parity ^= 1u;
    }
    return RK_OK;
}

rk_status wave__launch_send(wave_sim *sim, uint32_t op, int x, int y, float value, uint32_t count,
                            wave_ticket *ticket) {
    wave_ticket t = sim->sent + 1;
    rk_status st = RK_OK;
    switch (op) {
    case WAVE_OP_INJECT: {
        rk_arg args[] = {RK_ARG_BUF(sim->field[0]), RK_ARG_BUF(sim->field[1]), RK_ARG_INT(sim->nx),
                         RK_ARG_INT(sim->ny),       RK_ARG_INT(x),             RK_ARG_INT(y),
                         RK_ARG_FLOAT(value)};
        st = launch(sim, sim->inject_fn, 1, INJECT_THREADS, args, 7, "wave: launching wave_inject");
        break;
    }
    case WAVE_OP_STEP: st = traditional_step(sim, count); break;
    case WAVE_OP_QUERY: {
        size_t offset = ((size_t)y * (size_t)sim->nx + (size_t)x) * sizeof(float);
        float *landing = &sim->landing[t & (WAVE_RING_SLOTS - 1)];
        st = rk_copy_to_host(sim->ctx, landing, sim->field[sim->parity], offset, sizeof(float), sim->stream);
        if (st != RK_OK) st = wave__lib_fail(st, "wave: copying a cell to the host");
        break;
    }
    default: break; /* parameters travel with the next step's launch */
    }
    if (st != RK_OK) return st;
    sim->sent = t;
    sim->slot_op[t & (WAVE_RING_SLOTS - 1)] = (uint8_t)op;
    if (ticket) *ticket = t;
    return RK_OK;
}

