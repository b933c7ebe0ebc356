/* The arguments of a simulation's kernels, shared by the traditional
 * launches (sim_exec.c) and the graphs that replay them (sim_graph.c): the
 * state first, then what the kernel at hand needs. */
#include "sim/sim_internal.h"

void rk__sim_state_args(rk_sim *sim, rk_arg *args, size_t *n) {
    *n = 0;
    for (size_t i = 0; i < sim->field_count; i++) args[(*n)++] = RK_ARG_BUF(sim->fields[i].buffer);
    args[(*n)++] = RK_ARG_BUF(sim->scalars);
    args[(*n)++] = RK_ARG_BUF(sim->mailbox_buf);
    args[(*n)++] = RK_ARG_BUF(sim->board);
    args[(*n)++] = RK_ARG_INT(sim->rows);
}

int rk__sim_command_args(const rk_sim *sim, uint32_t op, uint32_t begin, uint32_t end, rk_sim_ticket t,
                         uint64_t steps, rk_arg *args, size_t *n) {
    int first = 0, count = 1;
    if (op < RK_SIM_OP_STEP && end != 0) { /* a region command: the bands its rows reach */
        first = RK_SIM_BAND_OF_ROW(begin, sim->blocks, sim->rows);
        count = RK_SIM_BAND_OF_ROW(end - 1, sim->blocks, sim->rows) - first + 1;
    }
    args[(*n)++] = RK_ARG_UINT((uint32_t)t);
    args[(*n)++] = RK_ARG_ULONG(steps);
    args[(*n)++] = RK_ARG_INT(first);
    args[(*n)++] = RK_ARG_INT((int)sim->blocks);
    return count;
}
