/* Simulations on WebGPU: sending, launching and answering (sim_webgpu.h).
 * The host keeps the ring: the words of the last RK_SIM_SLOTS commands and
 * their payloads are staged here and copied to the device (s->rk_cmd, the
 * payload buffers) before the dispatches that read them; completion is the
 * queue's, after which the host adds up each command's answer parts and
 * records answer and done in sim->mb, where rk_sim_wait reads them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_webgpu.h"

struct rk_sim_wg {
    rk_buffer *cmd, *answer;
    rk_buffer *payload[RK_SIM_MAX_COMMANDS];
    unsigned char *payload_host[RK_SIM_MAX_COMMANDS]; /* the payload buffers' staging */
    uint32_t payload_size[RK_SIM_MAX_COMMANDS];
    size_t payload_count;
    int payload_of[RK_SIM_MAX_COMMANDS]; /* per command of the description */
    rk_function *step_fn, *command_fn, *batch_fn;
    uint32_t cmd_host[RK_SIM_SLOTS][RK_SIM_CMD_WORDS];
    int first_band[RK_SIM_SLOTS], band_count[RK_SIM_SLOTS]; /* the parts that make each answer */
    uint32_t *parts;                                        /* the answer buffer read back */
    rk_sim_ticket launched;                                 /* commands up to here have been dispatched */
    rk_sim_ticket answered;                                 /* ... and have their answers in sim->mb */
    uint64_t steps_launched;                                /* steps before launched + 1 */
};

bool rk__sim_is_webgpu(const rk_device_info *info) { return strcmp(info->backend, "webgpu") == 0; }

static size_t answer_bytes(const rk_sim *sim) { return (size_t)RK_SIM_SLOTS * sim->blocks * 2u * sizeof(uint32_t); }

static rk_status lib(rk_status s, const char *what) {
    if (s == RK_OK) return s;
    char why[1024];
    snprintf(why, sizeof why, "%s", rk_last_error());
    return rk__fail(s, "rk_sim (webgpu): %s: %s", what, why);
}

rk_status rk__sim_wg_create(rk_sim *sim, const rk_sim_desc *d) {
    rk_sim_wg *wg = calloc(1, sizeof *wg);
    sim->mb = calloc(1, sizeof *sim->mb);
    if (!wg || !sim->mb) {
        free(wg);
        free(sim->mb);
        sim->mb = NULL;
        return rk__fail(RK_OUT_OF_MEMORY, "rk_sim: out of memory");
    }
    sim->wg = wg;
    wg->parts = calloc(1, answer_bytes(sim));
    if (!wg->parts) return rk__fail(RK_OUT_OF_MEMORY, "rk_sim: out of memory");
    rk_status s = rk_buffer_alloc(sim->ctx, sizeof wg->cmd_host, &wg->cmd);
    if (s == RK_OK) s = rk_buffer_alloc(sim->ctx, answer_bytes(sim), &wg->answer);
    if (s != RK_OK) return lib(s, "allocating the command and answer buffers");
    wg->payload_count = rk__sim_wg_payload_types(d, wg->payload_of);
    for (size_t i = 0; i < d->command_count; i++) {
        int k = wg->payload_of[i];
        if (k < 0 || wg->payload[k]) continue;
        wg->payload_size[k] = d->commands[i].payload_size;
        wg->payload_host[k] = calloc(RK_SIM_SLOTS, d->commands[i].payload_size);
        if (!wg->payload_host[k]) return rk__fail(RK_OUT_OF_MEMORY, "rk_sim: out of memory");
        s = rk_buffer_alloc(sim->ctx, (size_t)RK_SIM_SLOTS * d->commands[i].payload_size, &wg->payload[k]);
        if (s != RK_OK) return lib(s, "allocating a payload buffer");
    }
    s = rk__sim_wg_source(d, &sim->source);
    if (s != RK_OK) return s;
    s = rk_module_compile(sim->ctx, sim->source, NULL, &sim->module);
    if (s != RK_OK) return lib(s, "the simulation's WGSL did not compile");
    s = rk_module_get_function(sim->module, "rk_sim_wg_step", &wg->step_fn);
    if (s == RK_OK) s = rk_module_get_function(sim->module, "rk_sim_wg_command", &wg->command_fn);
    if (s == RK_OK) s = rk_module_get_function(sim->module, "rk_sim_wg_batch", &wg->batch_fn);
    return lib(s, "finding the kernels");
}

void rk__sim_wg_destroy(rk_sim *sim) {
    rk_sim_wg *wg = sim->wg;
    if (!wg) return;
    if (wg->cmd) rk_buffer_free(wg->cmd);
    if (wg->answer) rk_buffer_free(wg->answer);
    for (size_t k = 0; k < wg->payload_count; k++) {
        if (wg->payload[k]) rk_buffer_free(wg->payload[k]);
        free(wg->payload_host[k]);
    }
    free(wg->parts);
    free(wg);
    free(sim->mb);
    sim->mb = NULL;
    sim->wg = NULL;
}

/* The state's buffers in rk_sim_state's order (sim_source_wgpu.c). */
static size_t state_args(const rk_sim *sim, rk_arg *args) {
    size_t n = 0;
    for (size_t i = 0; i < sim->field_count; i++) args[n++] = RK_ARG_BUF(sim->fields[i].buffer);
    args[n++] = RK_ARG_BUF(sim->scalars);
    args[n++] = RK_ARG_BUF(sim->wg->cmd);
    args[n++] = RK_ARG_BUF(sim->wg->answer);
    for (size_t k = 0; k < sim->wg->payload_count; k++) args[n++] = RK_ARG_BUF(sim->wg->payload[k]);
    return n;
}

static rk_status launch(rk_sim *sim, rk_function *fn, uint32_t blocks, rk_arg *args, size_t n) {
    rk_launch_desc d = {.grid = RK_DIM3(blocks, 1, 1),
                        .block = RK_DIM3(sim->threads, 1, 1),
                        .stream = sim->stream,
                        .args = args,
                        .arg_count = n};
    rk_status s = rk_launch(fn, &d);
    if (s == RK_OK) sim->launches++;
    return lib(s, "launching a kernel");
}

/* Traditional: the dispatches of command t, whose words are on the device. */
static rk_status launch_one(rk_sim *sim, rk_sim_ticket t, uint32_t op, uint32_t arg, uint64_t steps) {
    rk_arg args[RK_SIM_MAX_FIELDS + RK_SIM_MAX_COMMANDS + 8];
    size_t n = state_args(sim, args);
    const uint32_t slot = (uint32_t)(t & (RK_SIM_SLOTS - 1u));
    if (op == RK_SIM_OP_STEP) {
        for (uint32_t k = 0; k < arg; k++) {
            args[n] = RK_ARG_ULONG(steps + k);
            rk_status s = launch(sim, sim->wg->step_fn, sim->blocks, args, n + 1);
            if (s != RK_OK) return s;
        }
        return RK_OK;
    }
    args[n++] = RK_ARG_UINT((uint32_t)t);
    args[n++] = RK_ARG_ULONG(steps);
    args[n++] = RK_ARG_INT(sim->wg->first_band[slot]);
    args[n++] = RK_ARG_INT((int)sim->blocks);
    int count = sim->wg->band_count[slot];
    return launch(sim, sim->wg->command_fn, count > 0 ? (uint32_t)count : 1u, args, n);
}

static rk_status copy_in(rk_sim *sim, rk_buffer *b, size_t offset, const void *src, size_t size) {
    return lib(rk_copy_to_device(sim->ctx, b, offset, src, size, sim->stream), "copying commands to the device");
}

/* Persistent: the commands sent since the last batch, as one dispatch. */
static rk_status launch_batch(rk_sim *sim) {
    rk_sim_wg *wg = sim->wg;
    if (wg->launched == sim->sent) return RK_OK;
    rk_status s = copy_in(sim, wg->cmd, 0, wg->cmd_host, sizeof wg->cmd_host);
    for (size_t k = 0; s == RK_OK && k < wg->payload_count; k++)
        s = copy_in(sim, wg->payload[k], 0, wg->payload_host[k], (size_t)RK_SIM_SLOTS * wg->payload_size[k]);
    if (s != RK_OK) return s;
    rk_arg args[RK_SIM_MAX_FIELDS + RK_SIM_MAX_COMMANDS + 8];
    size_t n = state_args(sim, args);
    args[n++] = RK_ARG_UINT((uint32_t)(wg->launched + 1));
    args[n++] = RK_ARG_UINT((uint32_t)(sim->sent - wg->launched));
    args[n++] = RK_ARG_ULONG(wg->steps_launched);
    args[n++] = RK_ARG_INT((int)sim->blocks);
    s = launch(sim, wg->batch_fn, 1, args, n);
    if (s != RK_OK) return s;
    wg->launched = sim->sent;
    wg->steps_launched = sim->steps;
    return RK_OK;
}

/* Everything dispatched has run: read the parts back and answer. */
static rk_status answer(rk_sim *sim) {
    rk_sim_wg *wg = sim->wg;
    rk_status s = lib(rk_stream_synchronize(sim->stream), "running the simulation's kernels");
    bool any = false;
    for (rk_sim_ticket t = wg->answered + 1; s == RK_OK && t <= wg->launched; t++)
        any |= wg->band_count[t & (RK_SIM_SLOTS - 1u)] > 0;
    if (s == RK_OK && any) {
        s = lib(rk_copy_to_host(sim->ctx, wg->parts, wg->answer, 0, answer_bytes(sim), sim->stream),
                "reading the answers");
    }
    if (s != RK_OK) {
        sim->failed = RK_DEVICE_FAULT;
        return rk__fail(RK_DEVICE_FAULT, "%s", rk_last_error());
    }
    for (rk_sim_ticket t = wg->answered + 1; t <= wg->launched; t++) {
        const uint32_t slot = (uint32_t)(t & (RK_SIM_SLOTS - 1u));
        uint64_t a = 0;
        for (int b = wg->first_band[slot]; b < wg->first_band[slot] + wg->band_count[slot]; b++) {
            const uint32_t *p = &wg->parts[((size_t)slot * sim->blocks + (size_t)b) * 2u];
            a += (uint64_t)p[1] << 32 | p[0];
        }
        const uint64_t tag = (uint64_t)(uint32_t)t << 32; /* the mailbox's reply words (sim_protocol.h) */
        sim->mb->reply[slot][1] = tag | (a >> 32);
        __atomic_store_n(&sim->mb->reply[slot][0], tag | (a & 0xffffffffu), __ATOMIC_RELEASE);
    }
    wg->answered = wg->launched;
    sim->seen_done = wg->answered;
    return RK_OK;
}

rk_status rk__sim_wg_wait(rk_sim *sim, rk_sim_ticket t) {
    if (sim->failed != RK_OK)
        return rk__fail(sim->failed, "rk_sim: the simulation has failed (%s)", rk_status_name(sim->failed));
    if (t <= sim->wg->answered) return RK_OK;
    if (sim->pattern == RK_SIM_PERSISTENT) {
        rk_status s = launch_batch(sim);
        if (s != RK_OK) {
            sim->failed = s;
            return s;
        }
    }
    return answer(sim);
}

rk_status rk__sim_wg_submit(rk_sim *sim, uint32_t op, uint32_t begin, uint32_t end, uint32_t arg, const void *payload,
                            size_t size, rk_sim_ticket *ticket) {
    if (ticket) *ticket = 0;
    if (sim->failed != RK_OK)
        return rk__fail(sim->failed, "rk_sim: the simulation has failed (%s)", rk_status_name(sim->failed));
    rk_sim_wg *wg = sim->wg;
    rk_sim_ticket t = sim->sent + 1;
    if (t > RK_SIM_SLOTS) { /* the slot's last command has its answer on the host */
        rk_status s = rk__sim_wg_wait(sim, t - RK_SIM_SLOTS);
        if (s != RK_OK) return s;
    }
    const uint32_t slot = (uint32_t)(t & (RK_SIM_SLOTS - 1u));
    uint32_t *w = wg->cmd_host[slot];
    memset(w, 0, sizeof wg->cmd_host[slot]);
    w[RK_SIM_W_OP] = op;
    w[RK_SIM_W_BEGIN] = begin;
    w[RK_SIM_W_END] = end;
    w[RK_SIM_W_ARG] = arg;
    if (size) memcpy(&w[RK_SIM_W_PAYLOAD], payload, size);
    int k = -1;
    for (size_t i = 0; i < sim->command_count; i++)
        if (sim->commands[i].id == op) k = wg->payload_of[i];
    if (k >= 0) memcpy(wg->payload_host[k] + (size_t)slot * wg->payload_size[k], payload, wg->payload_size[k]);
    /* The parts that make its answer: none for a step, band 0 for a global command. */
    bool region = op < RK_SIM_OP_STEP && end != 0;
    wg->first_band[slot] = region ? RK_SIM_BAND_OF_ROW(begin, sim->blocks, sim->rows) : 0;
    wg->band_count[slot] = op == RK_SIM_OP_STEP ? 0
                           : region ? RK_SIM_BAND_OF_ROW(end - 1, sim->blocks, sim->rows) - wg->first_band[slot] + 1
                                    : 1;
    uint64_t steps_before = sim->steps;
    sim->sent = t;
    if (op == RK_SIM_OP_STEP) sim->steps += arg;
    sim->ticks += op == RK_SIM_OP_STEP && arg > 0 ? arg : 1u;
    if (sim->pattern != RK_SIM_PERSISTENT) { /* any pattern but the batch: a dispatch per command */
        rk_status s = copy_in(sim, wg->cmd, (size_t)slot * sizeof wg->cmd_host[slot], w, sizeof wg->cmd_host[slot]);
        if (s == RK_OK && k >= 0)
            s = copy_in(sim, wg->payload[k], (size_t)slot * wg->payload_size[k],
                        wg->payload_host[k] + (size_t)slot * wg->payload_size[k], wg->payload_size[k]);
        if (s == RK_OK) s = launch_one(sim, t, op, arg, steps_before);
        if (s != RK_OK) {
            sim->failed = s;
            return s;
        }
        wg->launched = t;
        wg->steps_launched = sim->steps;
    }
    if (ticket) *ticket = t;
    return RK_OK;
}
