/* The graph pattern (RK_SIM_GRAPH): the traditional pattern's launches,
 * the same kernels with the same arguments in the same order on the same
 * stream, replayed from launch graphs (backend_impl.h, rk__graph; CUDA
 * graphs on CUDA) instead of launched one by one. Same launches, so the
 * same results bit for bit and the same completion words.
 *
 * A graph is made once per shape, at the shape's first use:
 *   - a step of 2^k steps (k <= STEP_LOG2_MAX): 2^k step launches in a
 *     chain; a step of N replays the graphs of N's binary digits, largest
 *     first (N = 100: 64 + 32 + 4), so a few graphs serve every N;
 *   - a command over n bands: one command launch of n blocks.
 * What changes per command (its number, the steps before each launch, the
 * first band) is set in the graph's nodes before the replay; a replay
 * already sent keeps the values it was sent with. */
#include <stdlib.h>

#include "sim/sim_internal.h"

enum { STEP_LOG2_MAX = 6 }; /* the longest step graph: 64 launches */

struct rk_sim_graphs {
    rk__graph *steps[STEP_LOG2_MAX + 1];      /* by log2 of the launches */
    rk__graph *commands[RK_SIM_MAX_BANDS + 1]; /* by the bands a launch covers */
};

bool rk__sim_graph_available(const rk_sim *sim) {
    const rk__context_iface *i = sim->ctx->iface;
    return i->graph_create && i->graph_set_args && i->graph_launch && i->graph_destroy;
}

void rk__sim_graph_destroy(rk_sim *sim) {
    struct rk_sim_graphs *g = sim->graphs;
    if (!g) return;
    void (*destroy)(rk__graph *) = sim->ctx->iface->graph_destroy;
    for (size_t i = 0; i <= STEP_LOG2_MAX; i++)
        if (g->steps[i]) destroy(g->steps[i]);
    for (size_t i = 0; i <= RK_SIM_MAX_BANDS; i++)
        if (g->commands[i]) destroy(g->commands[i]);
    free(g);
    sim->graphs = NULL;
}

/* The graph in *slot, made from the launch (fn, blocks, args) repeated
 * `count` times if there is none yet. */
static rk_status graph_for(rk_sim *sim, rk__graph **slot, rk_function *fn, uint32_t blocks, const rk_arg *args,
                           size_t n, size_t count) {
    if (*slot) return RK_OK;
    rk_launch_desc d = {
        .grid = RK_DIM3(blocks, 1, 1),
        .block = RK_DIM3(sim->threads, 1, 1),
        .args = args,
        .arg_count = n,
    };
    rk_status s = sim->ctx->iface->graph_create(fn, &d, count, slot);
    if (s != RK_OK) return rk__fail(s, "rk_sim: making a launch graph of %zu launches: %s", count, rk_last_error());
    return RK_OK;
}

static rk_status replay(rk_sim *sim, rk__graph *graph) {
    rk_status s = sim->ctx->iface->graph_launch(graph, sim->stream);
    if (s != RK_OK) return s;
    sim->graph_launches++;
    sim->launches += graph->count;
    return RK_OK;
}

/* Steps steps+k for k in [0, count): a step graph per binary digit of count. */
static rk_status replay_steps(rk_sim *sim, rk_arg *args, size_t n, uint32_t count, rk_sim_ticket t, uint64_t steps) {
    uint32_t done = 0;
    while (done < count) {
        uint32_t left = count - done;
        unsigned log2 = 0;
        while (log2 < STEP_LOG2_MAX && (2u << log2) <= left) log2++;
        uint32_t length = 1u << log2;
        for (uint32_t k = 0; k < length; k++) {
            uint32_t step = done + k;
            /* Only the command's last launch completes it (as traditional). */
            args[n] = RK_ARG_UINT(step + 1 == count ? (uint32_t)t : 0u);
            args[n + 1] = RK_ARG_ULONG(steps + step);
            rk_status s = graph_for(sim, &sim->graphs->steps[log2], sim->step_fn, sim->blocks, args, n + 2, length);
            if (s == RK_OK) s = sim->ctx->iface->graph_set_args(sim->graphs->steps[log2], k, args, n + 2);
            if (s != RK_OK) return s;
        }
        rk_status s = replay(sim, sim->graphs->steps[log2]);
        if (s != RK_OK) return s;
        done += length;
    }
    return RK_OK;
}

rk_status rk__sim_graph_launch(rk_sim *sim, uint32_t op, uint32_t begin, uint32_t end, uint32_t arg, rk_sim_ticket t,
                               uint64_t steps) {
    if (!sim->graphs) {
        sim->graphs = calloc(1, sizeof *sim->graphs);
        if (!sim->graphs) return rk__fail(RK_OUT_OF_MEMORY, "rk_sim: out of memory for the launch graphs");
    }
    rk_arg args[RK_SIM_MAX_FIELDS + 8];
    size_t n = 0;
    rk__sim_state_args(sim, args, &n);
    if (op == RK_SIM_OP_STEP && arg > 0) return replay_steps(sim, args, n, arg, t, steps);
    const int count = rk__sim_command_args(sim, op, begin, end, t, steps, args, &n);
    rk__graph **slot = &sim->graphs->commands[count];
    rk_status s = graph_for(sim, slot, sim->command_fn, (uint32_t)count, args, n, 1);
    if (s == RK_OK) s = sim->ctx->iface->graph_set_args(*slot, 0, args, n);
    if (s == RK_OK) s = replay(sim, *slot);
    return s;
}
