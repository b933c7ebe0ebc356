/* The kernel source of a simulation: generated declarations of its state,
 * the user's DSL, a generated dispatch over its commands, the library's
 * kernel bodies (device/sim_device.c, sim_relay.c, sim_bands.c) and
 * generated kernels that unpack their arguments into an rk_sim_state. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_internal.h"
#include "sim/sim_text.h"

extern const char rk__sim_protocol_source[];
extern const char rk__sim_device_source[];
extern const char rk__sim_relay_source[];
extern const char rk__sim_applier_source[];
extern const char rk__sim_bands_source[];

static const char *type_name(rk_sim_type type) {
    return type == RK_SIM_I32 ? "int" : type == RK_SIM_U32 ? "uint32_t" : "float";
}

static bool identifier(const char *s) {
    if (!s || !(isalpha((unsigned char)*s) || *s == '_')) return false;
    size_t n = 0;
    for (; *s; s++, n++)
        if (!(isalnum((unsigned char)*s) || *s == '_')) return false;
    return n < 64;
}

/* A type name: identifiers separated by single spaces ("struct push"). */
static bool type_text(const char *s) {
    if (!s || !*s || strlen(s) > 120) return false;
    for (const char *p = s; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '_' || *p == ' ')) return false;
    return true;
}

static rk_status check_name(const char *what, size_t i, const char *name, const char *const *seen, size_t n) {
    if (!identifier(name))
        return rk__fail(RK_INVALID_ARGUMENT, "rk_sim: %s %zu's name '%s' is not a C identifier (under 64 characters)",
                        what, i, name ? name : "(null)");
    if (strcmp(name, "scalars") == 0 || strcmp(name, "rows") == 0)
        return rk__fail(RK_INVALID_ARGUMENT, "rk_sim: %s %zu's name '%s' is taken by the state itself", what, i, name);
    for (size_t j = 0; j < n; j++)
        if (strcmp(seen[j], name) == 0)
            return rk__fail(RK_INVALID_ARGUMENT, "rk_sim: %s %zu's name '%s' is used twice", what, i, name);
    return RK_OK;
}

static bool known_type(rk_sim_type t) { return t == RK_SIM_F32 || t == RK_SIM_I32 || t == RK_SIM_U32; }

rk_status rk__sim_check_desc(const rk_sim_desc *d) {
    if (!d) return rk__fail(RK_NULL_ARGUMENT, "rk_sim: the description is NULL");
    if (!d->source) return rk__fail(RK_NULL_ARGUMENT, "rk_sim: the description has no source");
    if (d->pattern != RK_SIM_PERSISTENT && d->pattern != RK_SIM_TRADITIONAL && d->pattern != RK_SIM_GRAPH)
        return rk__fail(RK_INVALID_ARGUMENT, "rk_sim: unknown pattern %d", (int)d->pattern);
    if (d->rows < 1) return rk__fail(RK_INVALID_ARGUMENT, "rk_sim: rows is %d; the partition needs at least 1", d->rows);
    if (d->halo_rows < 0) return rk__fail(RK_INVALID_ARGUMENT, "rk_sim: halo_rows is %d; 0 (any row) or more", d->halo_rows);
    if (!identifier(d->step)) return rk__fail(RK_INVALID_ARGUMENT, "rk_sim: the step function's name is missing or not a C identifier");
    if (d->field_count > RK_SIM_MAX_FIELDS || (d->field_count && !d->fields))
        return rk__fail(RK_INVALID_ARGUMENT, "rk_sim: %zu fields (at most %u, and fields must not be NULL)", d->field_count,
                        RK_SIM_MAX_FIELDS);
    if (d->scalar_count > RK_SIM_MAX_SCALARS || (d->scalar_count && !d->scalars))
        return rk__fail(RK_INVALID_ARGUMENT, "rk_sim: %zu scalars (at most %u, and scalars must not be NULL)",
                        d->scalar_count, RK_SIM_MAX_SCALARS);
    if (d->command_count > RK_SIM_MAX_COMMANDS || (d->command_count && !d->commands))
        return rk__fail(RK_INVALID_ARGUMENT, "rk_sim: %zu commands (at most %u, and commands must not be NULL)",
                        d->command_count, RK_SIM_MAX_COMMANDS);
    const char *names[RK_SIM_MAX_FIELDS + RK_SIM_MAX_SCALARS];
    size_t n = 0;
    for (size_t i = 0; i < d->field_count; i++) {
        rk_status s = check_name("field", i, d->fields[i].name, names, n);
        if (s != RK_OK) return s;
        if (!known_type(d->fields[i].type) || d->fields[i].count == 0 || d->fields[i].count > ((size_t)1 << 34))
            return rk__fail(RK_INVALID_ARGUMENT, "rk_sim: field '%s' has an unknown type or a count of %zu",
                            d->fields[i].name, d->fields[i].count);
        names[n++] = d->fields[i].name;
    }
    size_t first_scalar = n;
    for (size_t i = 0; i < d->scalar_count; i++) {
        rk_status s = check_name("scalar", i, d->scalars[i].name, names + first_scalar, n - first_scalar);
        if (s != RK_OK) return s;
        if (!known_type(d->scalars[i].type))
            return rk__fail(RK_INVALID_ARGUMENT, "rk_sim: scalar '%s' has an unknown type", d->scalars[i].name);
        names[n++] = d->scalars[i].name;
    }
    for (size_t i = 0; i < d->command_count; i++) {
        const rk_sim_command *c = &d->commands[i];
        if (c->id == 0 || c->id > RK_SIM_MAX_COMMAND_ID)
            return rk__fail(RK_INVALID_ARGUMENT, "rk_sim: command %zu's id %u is outside 1 .. %u", i, c->id,
                            RK_SIM_MAX_COMMAND_ID);
        for (size_t j = 0; j < i; j++)
            if (d->commands[j].id == c->id)
                return rk__fail(RK_INVALID_ARGUMENT, "rk_sim: command id %u is used twice", c->id);
        if (!identifier(c->handler))
            return rk__fail(RK_INVALID_ARGUMENT, "rk_sim: command %u's handler name is missing or not a C identifier", c->id);
        if (c->payload_type && !type_text(c->payload_type))
            return rk__fail(RK_INVALID_ARGUMENT, "rk_sim: command %u's payload type '%s' is not a type name", c->id,
                            c->payload_type);
        if (c->payload_size > RK_SIM_MAX_PAYLOAD)
            return rk__fail(RK_MESSAGE_TOO_LARGE, "rk_sim: command %u's payload of %u bytes is over %u", c->id,
                            c->payload_size, RK_SIM_MAX_PAYLOAD);
        if (c->scope < RK_SIM_REGION || c->scope > RK_SIM_QUERY_NEXT)
            return rk__fail(RK_INVALID_ARGUMENT,
                            "rk_sim: command %u's scope %d is not region, global, query, row-wise or query-next", c->id,
                            c->scope);
    }
    return RK_OK;
}

/* The kernels' parameters before the library's: one pointer per field, the
 * scalars, the ring and the board, the rows. */
static void state_params(text *t, const rk_sim_desc *d) {
    for (size_t i = 0; i < d->field_count; i++) add(t, "%s *f%zu, ", type_name(d->fields[i].type), i);
    add(t, "rk_sim_scalars *scalars, rk_sim_mailbox *mb, rk_sim_board *board, int rows");
}

static void state_unpack(text *t, const rk_sim_desc *d) {
    add(t, "    rk_sim_state s;\n");
    for (size_t i = 0; i < d->field_count; i++) add(t, "    s.%s = f%zu;\n", d->fields[i].name, i);
    add(t, "    s.scalars = scalars;\n    s.rows = rows;\n");
}

static void declarations(text *t, const rk_sim_desc *d) {
    add(t, "typedef struct rk_sim_scalars {\n");
    for (size_t i = 0; i < d->scalar_count; i++) add(t, "    %s %s;\n", type_name(d->scalars[i].type), d->scalars[i].name);
    if (d->scalar_count == 0) add(t, "    uint32_t unused_;\n");
    add(t, "} rk_sim_scalars;\n\ntypedef struct rk_sim_state {\n");
    for (size_t i = 0; i < d->field_count; i++) add(t, "    %s *%s;\n", type_name(d->fields[i].type), d->fields[i].name);
    add(t, "    rk_sim_scalars *scalars;\n    int rows;\n} rk_sim_state;\n\n"
           "typedef struct rk_sim_region {\n    int row_begin, row_end;\n    int tid, threads;\n"
           "    int ahead;\n    uint64_t step;\n} rk_sim_region;\n\n"
           "RK_DEVICE uint64_t rk_sim_answer_f32(float v) {\n"
           "    union { float f; uint32_t u; } c;\n    c.f = v;\n    return (uint64_t)c.u;\n}\n"
           "RK_DEVICE uint64_t rk_sim_answer_i32(int v) { return (uint64_t)(uint32_t)v; }\n");
}

static void dispatch(text *t, const rk_sim_desc *d) {
    add(t, "RK_DEVICE void rk_sim_step_(const rk_sim_state *s, const rk_sim_region *r) { %s(s, r); }\n\n", d->step);
    add(t, "RK_DEVICE uint64_t rk_sim_dispatch_(const rk_sim_state *s, const rk_sim_region *r, uint32_t op,\n"
           "                                    const uint32_t *payload) {\n    switch (op) {\n");
    for (size_t i = 0; i < d->command_count; i++) {
        const rk_sim_command *c = &d->commands[i];
        const char *type = c->payload_type ? c->payload_type : "void";
        add(t, "    case %uu: return %s(s, r, (const %s *)(const void *)payload);\n", c->id, c->handler, type);
    }
    add(t, "    default: (void)s; (void)r; (void)payload; return 0;\n    }\n}\n");
}

static void kernels(text *t, const rk_sim_desc *d) {
    /* The block size every launch on a GPU uses (sim.c: 256 unless the
     * description says), where a kernel compiled without it could need
     * more registers than a block of that size may have. On CUDA with one
     * block a multiprocessor (RK_SIM_MIN_BLOCKS 1, the persistent grid's
     * shape): with the size alone ptxas chose 64 registers and spilt for
     * the wave's 512 threads once its impulse loaded two cells (128
     * allowed), and the minimum measured faster for both examples (H100,
     * session 21: the wave's step 4.75 -> 4.51 us, heat3d's 7.5 -> 7.2
     * us). 0: the size alone over 256 threads or with RK_SIM_TRACE, else
     * unbounded (heat3d's kernel bounded took 106 registers rather than 95
     * and its step ran 12.3 -> 14.5 us, session 12, before its step loaded
     * four cells a group). */
    const unsigned threads = d->threads ? d->threads : 256u;
    add(t, "#ifndef RK_SIM_MIN_BLOCKS\n#define RK_SIM_MIN_BLOCKS 1\n#endif\n"
           "#if defined(__CUDACC_RTC__) && RK_SIM_MIN_BLOCKS > 0\n#define RK_SIM_BOUNDS_ __launch_bounds__(%u, RK_SIM_MIN_BLOCKS)\n"
           "#elif %d || (defined(RK_SIM_TRACE) && RK_SIM_TRACE)\n#define RK_SIM_BOUNDS_ RK_BLOCK_SIZE(%u, 1, 1)\n#else\n"
           "#define RK_SIM_BOUNDS_\n#endif\nRK_KERNEL RK_SIM_BOUNDS_ void rk_sim_persistent(",
        threads, threads > 256u ? 1 : 0, threads);
    state_params(t, d);
    add(t, ", uint32_t seq, uint64_t tick, uint64_t steps, int relay, int halo) {\n");
    state_unpack(t, d);
    add(t, "    rk_sim_persistent_body_(&s, mb, board, seq, tick, steps, relay, halo);\n}\n\nRK_KERNEL void rk_sim_step(");
    state_params(t, d);
    add(t, ", uint32_t seq, uint64_t step) {\n");
    state_unpack(t, d);
    add(t, "    rk_sim_step_body_(&s, mb, board, seq, step);\n}\n\nRK_KERNEL void rk_sim_command(");
    state_params(t, d);
    add(t, ", uint32_t seq, uint64_t steps, int first_band, int bands) {\n");
    state_unpack(t, d);
    add(t, "    rk_sim_command_body_(&s, mb, board, seq, steps, first_band, bands);\n}\n");
}

unsigned rk__sim_wire_words(const rk_sim_desc *d) {
    if (!RK_SIM_SHORT_COMMANDS) return RK_SIM_CMD_WORDS;
    for (size_t i = 0; i < d->command_count; i++)
        if (d->commands[i].payload_size > RK_SIM_SHORT_PAYLOAD) return RK_SIM_CMD_WORDS;
    return RK_SIM_CMD_WORDS / 2;
}

rk_status rk__sim_source(const rk_sim_desc *d, char **out) {
    *out = NULL;
    text t = {0};
    /* The words of a command on the wire, as the host writes them (sim_protocol.h). */
    const unsigned words = rk__sim_wire_words(d);
    if (words != RK_SIM_CMD_WORDS) add(&t, "#define RK_SIM_WORDS %u\n", words);
    add(&t, "#include <ringkernel/dsl.h>\n#line 1 \"sim_protocol.h\"\n%s\n#line 1 \"rk_sim_declarations.h\"\n",
        rk__sim_protocol_source);
    declarations(&t, d);
    add(&t, "#line 1 \"%s\"\n%s\n#line 1 \"rk_sim_dispatch.c\"\n", d->source_name ? d->source_name : "sim.c", d->source);
    dispatch(&t, d);
    add(&t, "#line 1 \"sim_device.c\"\n%s\n#line 1 \"sim_relay.c\"\n%s\n", rk__sim_device_source, rk__sim_relay_source);
    add(&t, "#line 1 \"sim_applier.c\"\n%s\n#line 1 \"sim_bands.c\"\n%s\n", rk__sim_applier_source, rk__sim_bands_source);
    add(&t, "#line 1 \"rk_sim_kernels.c\"\n");
    kernels(&t, d);
    if (t.failed) {
        free(t.data);
        return rk__fail(RK_OUT_OF_MEMORY, "rk_sim: out of memory generating the source");
    }
    *out = t.data;
    return RK_OK;
}

rk_status rk_sim_generate_source(const rk_sim_desc *desc, char **out) {
    if (!out) return rk__fail(RK_NULL_ARGUMENT, "rk_sim_generate_source: out is NULL");
    *out = NULL;
    rk_status s = rk__sim_check_desc(desc);
    return s != RK_OK ? s : rk__sim_source(desc, out);
}
