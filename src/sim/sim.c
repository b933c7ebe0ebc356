/* The simulation API (ringkernel/sim.h): create, commands, state, destroy. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_internal.h"
#include "sim/sim_registry.h"
#include "sim/sim_webgpu.h"

_Static_assert(RK_SIM_SLOTS == RK_SIM_RING_SLOTS, "the ring's length is public");
_Static_assert(RK_SIM_PAYLOAD_WORDS * 4 == RK_SIM_MAX_PAYLOAD, "the payload fits the command's words");
_Static_assert(RK_SIM_W_PAYLOAD + RK_SIM_PAYLOAD_WORDS == RK_SIM_CMD_WORDS, "a command is its words");

#define DESTROY_MIN_WAIT_NS 5000000000ull

#define TRY(call)                              \
    do {                                       \
        rk_status s_ = (call);                 \
        if (s_ != RK_OK) return s_;            \
    } while (0)

/* A library call failed: its reason under our heading. */
static rk_status lib_fail(rk_status status, const char *what) {
    char why[1024]; /* rk__fail writes the buffer rk_last_error() reads */
    snprintf(why, sizeof why, "%s", rk_last_error());
    return rk__fail(status, "rk_sim: %s: %s", what, why);
}
#define TRY_LIB(call, what)                                 \
    do {                                                    \
        rk_status s_ = (call);                              \
        if (s_ != RK_OK) return lib_fail(s_, what);         \
    } while (0)

const char *rk_sim_pattern_name(rk_sim_pattern pattern) {
    switch (pattern) {
    case RK_SIM_PERSISTENT: return "persistent";
    case RK_SIM_TRADITIONAL: return "traditional";
    case RK_SIM_GRAPH: return "graph";
    }
    return "unknown";
}

int rk_sim_pattern_parse(const char *name, rk_sim_pattern *out) {
    if (!name || !out) return 0;
    if (strcmp(name, "persistent") == 0) *out = RK_SIM_PERSISTENT;
    else if (strcmp(name, "traditional") == 0) *out = RK_SIM_TRADITIONAL;
    else if (strcmp(name, "graph") == 0) *out = RK_SIM_GRAPH;
    else return 0;
    return 1;
}

static size_t elem_size(rk_sim_type type) { (void)type; return 4; }

static uint32_t scalar_bits(const rk_sim_scalar *s) {
    if (s->type == RK_SIM_F32) return rk_sim_f32_bits((float)s->initial);
    if (s->type == RK_SIM_I32) return (uint32_t)(int32_t)s->initial;
    return (uint32_t)s->initial;
}

static rk_status allocate_state(rk_sim *sim, const rk_sim_desc *d) {
    for (size_t i = 0; i < d->field_count; i++) {
        rk_sim_field_rt *f = &sim->fields[i];
        snprintf(f->name, sizeof f->name, "%s", d->fields[i].name);
        f->type = d->fields[i].type;
        f->count = d->fields[i].count;
        TRY_LIB(rk_buffer_alloc(sim->ctx, f->count * elem_size(f->type), &f->buffer), "allocating a field");
        sim->field_count++;
    }
    uint32_t bits[RK_SIM_MAX_SCALARS] = {0};
    for (size_t i = 0; i < d->scalar_count; i++) {
        snprintf(sim->scalar_names[i], sizeof sim->scalar_names[i], "%s", d->scalars[i].name);
        bits[i] = scalar_bits(&d->scalars[i]);
    }
    sim->scalar_count = d->scalar_count;
    TRY_LIB(rk_buffer_alloc(sim->ctx, sizeof bits, &sim->scalars), "allocating the scalars");
    TRY_LIB(rk_copy_to_device(sim->ctx, sim->scalars, 0, bits, sizeof bits, NULL), "setting the scalars");
    if (rk__sim_is_webgpu(&sim->info)) return rk__sim_wg_create(sim, d); /* no mapped ring: sim_webgpu.h */
    void *host = NULL;
    TRY_LIB(rk_buffer_alloc_mapped(sim->ctx, sizeof(rk_sim_mailbox), &sim->mailbox_buf, &host),
            "allocating the command ring in host-mapped memory");
    sim->mb = host;
    TRY_LIB(rk_buffer_alloc(sim->ctx, sizeof(rk_sim_board), &sim->board), "allocating the board");
    return RK_OK;
}

/* The description's defines, then those of $RK_SIM_DEFINES ("A=1 B=2"):
 * the library's tuning macros (src/sim/device/sim_relay.c, sim_bands.c) for a measurement
 * or a test without a rebuild. *text and *all are malloc'd (NULL if none). */
enum { MAX_ENV_DEFINES = 16 };
static rk_status gather_defines(const rk_sim_desc *d, char **text, const char ***all, size_t *count) {
    *text = NULL;
    *all = NULL;
    *count = d->define_count;
    const char *env = getenv("RK_SIM_DEFINES");
    if (!env || !*env) return RK_OK;
    *text = strdup(env);
    *all = malloc((d->define_count + MAX_ENV_DEFINES) * sizeof **all);
    if (!*text || !*all) return rk__fail(RK_OUT_OF_MEMORY, "rk_sim: out of memory");
    for (size_t i = 0; i < d->define_count; i++) (*all)[i] = d->defines[i];
    char *save = NULL;
    for (char *tok = strtok_r(*text, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        if (*count == d->define_count + MAX_ENV_DEFINES)
            return rk__fail(RK_INVALID_ARGUMENT, "rk_sim: RK_SIM_DEFINES holds more than %d definitions",
                            MAX_ENV_DEFINES);
        (*all)[(*count)++] = tok;
    }
    return RK_OK;
}

static rk_status compile(rk_sim *sim, const rk_sim_desc *d) {
    TRY(rk__sim_source(d, &sim->source));
    char *env_text = NULL;
    const char **defines = NULL;
    size_t define_count = 0;
    rk_status g = gather_defines(d, &env_text, &defines, &define_count);
    if (g != RK_OK) {
        free(env_text);
        free(defines);
        return g;
    }
    rk_compile_options opts = {.defines = defines ? defines : d->defines, .define_count = define_count};
    /* On CUDA the load pauses the device's running simulations (sim_registry.h). */
    rk_status s = rk_module_compile(sim->ctx, sim->source, &opts, &sim->module);
    free(env_text);
    free(defines);
    if (s != RK_OK) {
        const char *last = rk_last_error(); /* rk__fail writes the buffer it reads: a copy first */
        size_t length = strlen(last) + 1;
        char *log = malloc(length);
        if (log) memcpy(log, last, length);
        s = rk__fail(s, "rk_sim: the simulation's source did not compile:\n%s", log ? log : "");
        free(log);
        return s;
    }
    TRY_LIB(rk_module_get_function(sim->module, "rk_sim_persistent", &sim->persistent_fn), "finding the kernels");
    TRY_LIB(rk_module_get_function(sim->module, "rk_sim_step", &sim->step_fn), "finding the kernels");
    TRY_LIB(rk_module_get_function(sim->module, "rk_sim_command", &sim->command_fn), "finding the kernels");
    return RK_OK;
}

static rk_status choose_grid(rk_sim *sim, const rk_sim_desc *d, bool cpu) {
    sim->threads = d->threads ? d->threads : cpu ? 32u : 256u;
    if (sim->threads % 32u || sim->threads > sim->info.max_threads_per_block)
        return rk__fail(RK_INVALID_ARGUMENT, "rk_sim: %u threads per block (a multiple of 32, at most %u here)",
                        sim->threads, sim->info.max_threads_per_block);
    uint32_t cores = sim->info.multiprocessors ? sim->info.multiprocessors : 1;
    if (d->blocks > RK_SIM_MAX_BANDS)
        return rk__fail(RK_INVALID_ARGUMENT, "rk_sim: %u blocks (bands) is over the %u a simulation has at most",
                        d->blocks, RK_SIM_MAX_BANDS);
    /* On a GPU one multiprocessor is left for the persistent pattern's relay
     * block and, persistent, one more free: a cooperative grid with a block
     * on every multiprocessor kept other kernels from starting beside it on
     * an H100 (the wave's former kernel, docs/showcase.md, Limitations). */
    const uint32_t spare = cpu ? 0u : d->pattern == RK_SIM_PERSISTENT ? 2u : 1u;
    sim->blocks = d->blocks ? d->blocks : cores > spare ? cores - spare : 1u;
    if (sim->blocks > RK_SIM_MAX_BANDS) sim->blocks = RK_SIM_MAX_BANDS;
    if (sim->blocks > (uint32_t)d->rows) sim->blocks = (uint32_t)d->rows;
    return RK_OK;
}

/* Launches the persistent kernel; with automatic sizing, halves the grid
 * while the cooperative launch is refused (worker threads on the CPU,
 * co-residency on a GPU). */
static rk_status start(rk_sim *sim, bool auto_blocks) {
    for (;;) {
        rk_status s = rk__sim_launch_persistent(sim);
        if (s == RK_OK) return RK_OK;
        if (s != RK_BAD_LAUNCH_CONFIG || !auto_blocks || sim->blocks <= 1)
            return lib_fail(s, "launching the persistent kernel");
        sim->blocks /= 2;
    }
}

/* An on/off switch from the environment: any value but 0 is on; unset or
 * empty, `unset`. */
static bool env_switch(const char *name, bool unset) {
    const char *v = getenv(name);
    return v && *v ? strcmp(v, "0") != 0 : unset;
}

static rk_status create(rk_sim *sim, const rk_sim_desc *d) {
    const rk_backend *backend = NULL;
    uint32_t device = 0;
    TRY_LIB(rk_select_device(d->device ? d->device : "cpu", &backend, &device), "choosing the device");
    sim->backend = backend;
    sim->device_index = device;
    TRY_LIB(rk_context_create(backend, device, &sim->ctx), "opening the device");
    TRY_LIB(rk_context_device_info(sim->ctx, &sim->info), "reading device facts");
    bool webgpu = rk__sim_is_webgpu(&sim->info); /* both patterns relaunch there (sim_webgpu.h) */
    if (!sim->info.host_mapped_memory && !webgpu)
        return rk__fail(RK_UNSUPPORTED, "rk_sim: the %s device cannot map host memory, which the command ring needs",
                        sim->info.backend);
    if (d->pattern == RK_SIM_PERSISTENT && !webgpu && (!sim->info.cooperative_launch || !sim->info.persistent_kernels))
        return rk__fail(RK_UNSUPPORTED, "rk_sim: the persistent pattern needs cooperative launch and persistent "
                                        "kernels, which the %s device lacks (use the traditional pattern)",
                        sim->info.backend);
    /* Without launch graphs the graph pattern is the traditional one (sim.h). */
    if (sim->pattern == RK_SIM_GRAPH && !rk__sim_graph_available(sim)) sim->pattern = RK_SIM_TRADITIONAL;
    bool cpu = strcmp(sim->info.backend, "cpu") == 0;
    TRY(choose_grid(sim, d, cpu));
    /* The relay spares the bands the bus to host memory; on the CPU that
     * memory is the device's. RK_SIM_RELAY=0/1 overrides (tests). */
    sim->relay = env_switch("RK_SIM_RELAY", !cpu);
    /* The relay block's applier (device/sim_applier.c) needs a second warp;
     * the kernel learns of it from its `relay` argument (sim_exec.c).
     * RK_SIM_APPLIER_OFF=1 turns it off (a measuring aid). */
    sim->applier = sim->pattern == RK_SIM_PERSISTENT && sim->relay && sim->threads >= 64u &&
                   sim->blocks < RK_SIM_MAX_BANDS && !env_switch("RK_SIM_APPLIER_OFF", false);
    /* RK_SIM_APPLIER_QUERIES_OFF=1: the applier takes no query (the bands
     * answer them, as before session 24; a measuring aid). */
    sim->applier_queries = sim->applier && !env_switch("RK_SIM_APPLIER_QUERIES_OFF", false);
    TRY(allocate_state(sim, d));
    if (!webgpu) TRY(compile(sim, d)); /* WebGPU: transpiled and compiled by allocate_state */
    TRY_LIB(rk_stream_create(sim->ctx, &sim->stream), "creating a stream");
    TRY_LIB(rk_stream_create(sim->ctx, &sim->copy_stream), "creating a stream");
    if (webgpu) return RK_OK; /* nothing runs between batches */
    if (sim->pattern == RK_SIM_PERSISTENT) {
        TRY(start(sim, d->blocks == 0));
        rk__sim_registry_add(sim);
    }
    return RK_OK;
}

rk_status rk_sim_create(const rk_sim_desc *desc, rk_sim **out) {
    if (!out) return rk__fail(RK_NULL_ARGUMENT, "rk_sim_create: out is NULL");
    *out = NULL;
    TRY(rk__sim_check_desc(desc));
    rk_sim *sim = calloc(1, sizeof *sim);
    if (!sim) return rk__fail(RK_OUT_OF_MEMORY, "rk_sim_create: out of memory");
    sim->pattern = sim->requested = desc->pattern;
    sim->rows = desc->rows;
    sim->halo = desc->halo_rows;
    sim->words = rk__sim_wire_words(desc);
    sim->hang_ns = (uint64_t)(desc->hang_timeout_ms ? desc->hang_timeout_ms : 60000u) * 1000000u;
    for (size_t i = 0; i < desc->command_count; i++)
        sim->commands[i] = (rk_sim_command_rt){desc->commands[i].id, desc->commands[i].payload_size, desc->commands[i].scope};
    sim->command_count = desc->command_count;
    rk_status s = create(sim, desc);
    if (s != RK_OK) {
        char why[1024];
        snprintf(why, sizeof why, "%s", rk_last_error());
        rk_sim_destroy(sim);
        return rk__fail(s, "%s", why);
    }
    *out = sim;
    return RK_OK;
}

/* $RK_SIM_TRACE_FILE: the board's trace (sim_protocol.h) of a persistent
 * simulation whose kernels were compiled with RK_SIM_TRACE=1 (e.g. through
 * $RK_SIM_DEFINES), appended as text, a line a command, for
 * scripts/sim-trace-summary.py. A measuring aid: a failure only says so on
 * stderr. */
static void dump_trace(rk_sim *sim) {
    const char *path = getenv("RK_SIM_TRACE_FILE");
    if (!path || !*path || sim->pattern != RK_SIM_PERSISTENT || !sim->board || sim->wg) return;
    const size_t size = sizeof(((rk_sim_board *)0)->trace);
    uint64_t(*t)[RK_SIM_T_WORDS] = malloc(size);
    FILE *f = NULL;
    if (t && rk_copy_to_host(sim->ctx, t, sim->board, offsetof(rk_sim_board, trace), size, NULL) == RK_OK)
        f = fopen(path, "a");
    if (!f) {
        fprintf(stderr, "rk_sim: no trace written to %s\n", path);
        free(t);
        return;
    }
    fprintf(f, "# rk_sim trace, %u bands: seq op issue found logged band answer deciding mark_seen read_back"
               " b_read b_ready b_stepped b_said b_gathered (ns)\n", sim->blocks);
    for (uint32_t i = 0; i < RK_SIM_TRACE_SLOTS; i++) {
        if (!t[i][RK_SIM_T_SEQ]) continue;
        fprintf(f, "%llu %llu", (unsigned long long)t[i][RK_SIM_T_SEQ], (unsigned long long)t[i][RK_SIM_T_OP]);
        for (int e = RK_SIM_T_ISSUE; e < RK_SIM_T_WORDS; e++) fprintf(f, " %llu", (unsigned long long)t[i][e]);
        fputc('\n', f);
    }
    fclose(f);
    free(t);
}

rk_status rk_sim_destroy(rk_sim *sim) {
    if (!sim) return RK_OK;
    /* Commands in flight complete first: give a loaded machine some time. */
    if (sim->hang_ns < DESTROY_MIN_WAIT_NS) sim->hang_ns = DESTROY_MIN_WAIT_NS;
    rk_status result = RK_OK;
    if (sim->wg) {
        result = sim->sent && sim->failed == RK_OK ? rk_sim_finish(sim) : RK_OK; /* runs the pending batch */
    } else if (sim->pattern == RK_SIM_PERSISTENT) {
        rk__sim_registry_remove(sim);
        result = rk__sim_stop(sim);
        if (result == RK_OK) dump_trace(sim);
    } else if (sim->sent) {
        result = rk_sim_finish(sim);
        if (result != RK_HUNG) rk__sim_join_watcher(sim);
    }
    if (result == RK_OK && sim->failed != RK_OK && sim->mb) rk__sim_advance(sim); /* waits move it on lazily */
    if (result == RK_OK && sim->failed != RK_OK && sim->seen_done < sim->sent && sim->failure_told < sim->sent)
        /* Accepted, never applied, and no wait said so: destroy does. */
        result = rk__fail(sim->failed, "the simulation failed (%s) with commands accepted and not seen applied, up to "
                                       "%llu, that no wait reported (the last seen applied: %llu)",
                          rk_status_name(sim->failed), (unsigned long long)sim->sent,
                          (unsigned long long)sim->seen_done);
    char why[512];
    snprintf(why, sizeof why, "%s", result == RK_OK ? "" : rk_last_error());
    if (sim->running || result == RK_HUNG) {
        /* A kernel still runs: its memory stays, rather than be freed under it. */
        return rk__fail(result, "rk_sim_destroy: a kernel of the simulation did not finish, so its memory is left "
                                "allocated: %s", why);
    }
    if (sim->stream && result == RK_OK) rk_stream_synchronize(sim->stream);
    if (sim->copy_stream) rk_stream_destroy(sim->copy_stream);
    if (sim->stream) rk_stream_destroy(sim->stream);
    for (size_t i = 0; i < sim->field_count; i++) rk_buffer_free(sim->fields[i].buffer);
    if (sim->scalars) rk_buffer_free(sim->scalars);
    if (sim->board) rk_buffer_free(sim->board);
    if (sim->mailbox_buf) rk_buffer_free(sim->mailbox_buf);
    rk__sim_graph_destroy(sim); /* its graphs launch the module's kernels */
    rk__sim_wg_destroy(sim);
    if (sim->module) rk_module_destroy(sim->module); /* pauses the others on CUDA (sim_registry.h) */
    /* On CUDA, freeing the context's pinned memory waits for running kernels:
     * the context's destroy pauses every resident kernel of the device around
     * it (core/resident.h), the other simulations' included. */
    if (sim->ctx) rk_context_destroy(sim->ctx);
    free(sim->source);
    free(sim);
    return result == RK_OK ? RK_OK : rk__fail(result, "rk_sim_destroy: %s", why);
}

/* ---- commands ------------------------------------------------------------------ */

static const rk_sim_command_rt *find_command(const rk_sim *sim, uint32_t id) {
    for (size_t i = 0; i < sim->command_count; i++)
        if (sim->commands[i].id == id) return &sim->commands[i];
    return NULL;
}

rk_status rk_sim_send(rk_sim *sim, uint32_t id, const void *payload, size_t size, int first_row, int row_count,
                      rk_sim_ticket *ticket) {
    if (ticket) *ticket = 0;
    if (!sim) return rk__fail(RK_NULL_ARGUMENT, "rk_sim_send: sim is NULL");
    const rk_sim_command_rt *c = find_command(sim, id);
    if (!c) return rk__fail(RK_NOT_FOUND, "rk_sim_send: no command has id %u", id);
    if (size > RK_SIM_MAX_PAYLOAD)
        return rk__fail(RK_MESSAGE_TOO_LARGE, "rk_sim_send: a payload of %zu bytes is over the %u a command carries",
                        size, RK_SIM_MAX_PAYLOAD);
    if (size != c->payload_size)
        return rk__fail(RK_INVALID_ARGUMENT, "rk_sim_send: command %u takes %u bytes of payload, not %zu", id,
                        c->payload_size, size);
    if (size && !payload) return rk__fail(RK_NULL_ARGUMENT, "rk_sim_send: payload is NULL");
    if (c->scope == RK_SIM_GLOBAL) return rk__sim_submit(sim, id, 1, 0, 0, payload, size, ticket);
    if (row_count < 1 || first_row < 0 || first_row >= sim->rows || row_count > sim->rows - first_row)
        return rk__fail(RK_OUT_OF_RANGE, "rk_sim_send: rows %d .. %d+%d are not inside the %d rows of the simulation",
                        first_row, first_row, row_count, sim->rows);
    const uint32_t arg = c->scope == RK_SIM_QUERY        ? RK_SIM_ARG_QUERY
                         : c->scope == RK_SIM_QUERY_NEXT ? RK_SIM_ARG_QUERY | RK_SIM_ARG_NEXT
                         : c->scope == RK_SIM_ROWWISE    ? RK_SIM_ARG_ROWWISE
                                                         : 0u;
    return rk__sim_submit(sim, id, (uint32_t)first_row, (uint32_t)(first_row + row_count), arg, payload, size, ticket);
}

rk_status rk_sim_step(rk_sim *sim, uint32_t count, rk_sim_ticket *ticket) {
    if (ticket) *ticket = 0;
    if (!sim) return rk__fail(RK_NULL_ARGUMENT, "rk_sim_step: sim is NULL");
    return rk__sim_submit(sim, RK_SIM_OP_STEP, 1, 0, count, NULL, 0, ticket);
}

rk_status rk_sim_wait(rk_sim *sim, rk_sim_ticket ticket, uint64_t *answer) {
    if (!sim) return rk__fail(RK_NULL_ARGUMENT, "rk_sim_wait: sim is NULL");
    if (ticket == 0 || ticket > sim->sent)
        return rk__fail(RK_INVALID_ARGUMENT, "rk_sim_wait: ticket %llu was never handed out (last %llu)",
                        (unsigned long long)ticket, (unsigned long long)sim->sent);
    if (answer && sim->sent - ticket >= RK_SIM_SLOTS)
        return rk__fail(RK_OUT_OF_RANGE, "rk_sim_wait: the answer to command %llu is gone (%llu commands since; kept "
                                         "for %u)",
                        (unsigned long long)ticket, (unsigned long long)(sim->sent - ticket), RK_SIM_SLOTS);
    rk_status s = answer ? rk__sim_wait_answer(sim, ticket, answer) : rk__sim_wait(sim, ticket);
    if (s != RK_OK && s == sim->failed && ticket > sim->failure_told) sim->failure_told = ticket;
    return s;
}

rk_status rk_sim_finish(rk_sim *sim) {
    if (!sim) return rk__fail(RK_NULL_ARGUMENT, "rk_sim_finish: sim is NULL");
    /* Commands complete out of order; those a ring's length old have completed. */
    rk_sim_ticket first = sim->sent > RK_SIM_SLOTS ? sim->sent - RK_SIM_SLOTS + 1 : 1;
    for (rk_sim_ticket t = first; t <= sim->sent; t++) {
        rk_status s = rk__sim_wait(sim, t);
        if (s != RK_OK) {
            if (s == sim->failed) sim->failure_told = sim->sent;
            return s;
        }
    }
    return RK_OK;
}

/* ---- state ------------------------------------------------------------------------ */

static rk_status find_field(rk_sim *sim, const char *fn, const char *name, size_t first, size_t count,
                            rk_sim_field_rt **out) {
    if (!sim || !name) return rk__fail(RK_NULL_ARGUMENT, "%s: sim or the field's name is NULL", fn);
    for (size_t i = 0; i < sim->field_count; i++) {
        if (strcmp(sim->fields[i].name, name) != 0) continue;
        if (first > sim->fields[i].count || count > sim->fields[i].count - first)
            return rk__fail(RK_OUT_OF_RANGE, "%s: elements %zu .. +%zu are outside field '%s' (%zu elements)", fn, first,
                            count, name, sim->fields[i].count);
        *out = &sim->fields[i];
        return RK_OK;
    }
    return rk__fail(RK_NOT_FOUND, "%s: no field is named '%s'", fn, name);
}

/* Every command sent so far applied, and its writes visible to copies. */
static rk_status settle(rk_sim *sim) {
    if (sim->pattern != RK_SIM_PERSISTENT || !sim->running) {
        TRY(rk_sim_finish(sim));
        return rk__sim_drain(sim);
    }
    rk_sim_ticket t = 0;
    TRY(rk__sim_submit(sim, RK_SIM_OP_FENCE, 1, 0, 0, NULL, 0, &t));
    TRY(rk_sim_finish(sim));
    return RK_OK;
}

rk_status rk_sim_read_field(rk_sim *sim, const char *field, size_t first, size_t count, void *dst) {
    rk_sim_field_rt *f = NULL;
    TRY(find_field(sim, "rk_sim_read_field", field, first, count, &f));
    if (!dst && count) return rk__fail(RK_NULL_ARGUMENT, "rk_sim_read_field: dst is NULL");
    if (!count) return RK_OK;
    TRY(settle(sim));
    size_t es = elem_size(f->type);
    TRY_LIB(rk_copy_to_host(sim->ctx, dst, f->buffer, first * es, count * es, sim->copy_stream), "copying a field");
    TRY_LIB(rk_stream_synchronize(sim->copy_stream), "copying a field");
    return RK_OK;
}

rk_status rk_sim_write_field(rk_sim *sim, const char *field, size_t first, size_t count, const void *src) {
    rk_sim_field_rt *f = NULL;
    TRY(find_field(sim, "rk_sim_write_field", field, first, count, &f));
    if (!src && count) return rk__fail(RK_NULL_ARGUMENT, "rk_sim_write_field: src is NULL");
    if (!count) return RK_OK;
    /* A running kernel may hold the old values in its caches: it stops
     * around the copy, and starts again where it left off. */
    bool restart = sim->running;
    TRY(restart ? rk__sim_stop(sim) : settle(sim));
    size_t es = elem_size(f->type);
    rk_status s = rk_copy_to_device(sim->ctx, f->buffer, first * es, src, count * es, sim->copy_stream);
    if (s == RK_OK) s = rk_stream_synchronize(sim->copy_stream);
    if (s != RK_OK) s = lib_fail(s, "copying a field");
    if (restart) {
        rk_status r = rk__sim_launch_persistent(sim);
        if (r != RK_OK) {
            sim->failed = r;
            return lib_fail(r, "launching the persistent kernel again after a write");
        }
    }
    return s;
}

static rk_status find_scalar(const rk_sim *sim, const char *fn, const char *name, uint32_t *index) {
    if (!sim || !name) return rk__fail(RK_NULL_ARGUMENT, "%s: sim or the scalar's name is NULL", fn);
    for (size_t i = 0; i < sim->scalar_count; i++)
        if (strcmp(sim->scalar_names[i], name) == 0) {
            *index = (uint32_t)i;
            return RK_OK;
        }
    return rk__fail(RK_NOT_FOUND, "%s: no scalar is named '%s'", fn, name);
}

rk_status rk_sim_get_scalar(rk_sim *sim, const char *name, uint32_t *bits) {
    uint32_t index = 0;
    TRY(find_scalar(sim, "rk_sim_get_scalar", name, &index));
    if (!bits) return rk__fail(RK_NULL_ARGUMENT, "rk_sim_get_scalar: bits is NULL");
    rk_sim_ticket t = 0;
    uint64_t answer = 0;
    TRY(rk__sim_submit(sim, RK_SIM_OP_GET_SCALAR, 1, 0, index, NULL, 0, &t));
    TRY(rk_sim_wait(sim, t, &answer));
    *bits = (uint32_t)answer;
    return RK_OK;
}

rk_status rk_sim_set_scalar(rk_sim *sim, const char *name, uint32_t bits) {
    uint32_t index = 0;
    TRY(find_scalar(sim, "rk_sim_set_scalar", name, &index));
    return rk__sim_submit(sim, RK_SIM_OP_SET_SCALAR, 1, 0, index, &bits, sizeof bits, NULL);
}

void rk_sim_get_stats(const rk_sim *sim, rk_sim_stats *out) {
    if (!out) return;
    memset(out, 0, sizeof *out);
    if (!sim) return;
    out->pattern = sim->requested;
    out->executed = sim->pattern;
    out->graph_launches = sim->graph_launches;
    out->commands = sim->sent;
    out->steps = sim->steps;
    out->completed = sim->seen_done;
    out->launches = sim->launches;
    out->blocks = sim->blocks;
    out->threads = sim->threads;
    snprintf(out->backend, sizeof out->backend, "%s", sim->info.backend);
    snprintf(out->device, sizeof out->device, "%s", sim->info.name);
    snprintf(out->driver, sizeof out->driver, "%s", sim->info.driver);
}

const char *rk_sim_source(const rk_sim *sim) { return sim ? sim->source : NULL; }
