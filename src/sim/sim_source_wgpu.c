/* The kernel source of a simulation on WebGPU: the same user DSL as every
 * backend, with declarations and glue that WGSL can hold. rk_sim_state is
 * still a struct of pointers in the DSL, transpiled with wgsl_state_struct
 * = "rk_sim_state,rk_sim_payloads" (src/transpile/emit_wgsl_state.c), so
 * `s->field[i]` reads a storage binding. It carries the library's buffers
 * too: the batch's command words and the bands' answer parts. After the
 * user's source (which declares the payload types) rk_sim_payloads, bound
 * the same way, holds a buffer per payload type, from which a command's
 * payload is copied into a local (WGSL cannot reinterpret words as a
 * struct). The library's kernels are device/sim_device_wgpu.c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringkernel/transpile.h"
#include "sim/sim_internal.h"
#include "sim/sim_text.h"
#include "sim/sim_webgpu.h"

extern const char rk__sim_protocol_source[];
extern const char rk__sim_device_wgpu_source[];

static const char *type_name(rk_sim_type type) {
    return type == RK_SIM_I32 ? "int" : type == RK_SIM_U32 ? "uint32_t" : "float";
}

size_t rk__sim_wg_payload_types(const rk_sim_desc *d, int *index) {
    size_t n = 0;
    for (size_t i = 0; i < d->command_count; i++) {
        const char *t = d->commands[i].payload_type;
        index[i] = -1;
        if (!t || d->commands[i].payload_size == 0) continue;
        for (size_t j = 0; j < i && index[i] < 0; j++)
            if (index[j] >= 0 && strcmp(d->commands[j].payload_type, t) == 0) index[i] = index[j];
        if (index[i] < 0) index[i] = (int)n++;
    }
    return n;
}

static void declarations(text *t, const rk_sim_desc *d) {
    add(t, "typedef struct rk_sim_scalars {\n");
    for (size_t i = 0; i < d->scalar_count; i++)
        add(t, "    %s %s;\n", type_name(d->scalars[i].type), d->scalars[i].name);
    if (d->scalar_count == 0) add(t, "    uint32_t unused_;\n");
    add(t, "} rk_sim_scalars;\n\n");
    add(t, "typedef struct rk_sim_state {\n");
    for (size_t i = 0; i < d->field_count; i++)
        add(t, "    %s *%s;\n", type_name(d->fields[i].type), d->fields[i].name);
    add(t, "    rk_sim_scalars *scalars;\n    int rows;\n"
           "    const uint32_t *rk_cmd;\n    uint32_t *rk_answer;\n");
    add(t, "} rk_sim_state;\n\n"
           "typedef struct rk_sim_region {\n    int row_begin, row_end;\n    int tid, threads;\n"
           "    int ahead;\n    uint64_t step;\n} rk_sim_region;\n\n"
           "RK_DEVICE uint64_t rk_sim_answer_f32(float v) { return (uint64_t)float_as_uint(v); }\n"
           "RK_DEVICE uint64_t rk_sim_answer_i32(int v) { return (uint64_t)(uint32_t)v; }\n");
}

/* After the user's source, which declares the payload types: a buffer per type. */
static void payloads(text *t, const rk_sim_desc *d, const int *index, size_t types) {
    add(t, "typedef struct rk_sim_payloads {\n    int rk_no_payload_;\n");
    for (size_t k = 0; k < types; k++)
        for (size_t i = 0; i < d->command_count; i++)
            if (index[i] == (int)k) {
                add(t, "    const %s *rk_payload_%zu;\n", d->commands[i].payload_type, k);
                break;
            }
    add(t, "} rk_sim_payloads;\n\n");
    /* A buffer of payloads is an array of the type: the host's size must be its stride. */
    for (size_t i = 0; i < d->command_count; i++)
        if (index[i] >= 0)
            add(t,
                "_Static_assert(sizeof(%s) == %u, \"on WebGPU, command %u's payload_size must be "
                "sizeof(%s)\");\n",
                d->commands[i].payload_type, d->commands[i].payload_size, d->commands[i].id,
                d->commands[i].payload_type);
}

static void glue(text *t, const rk_sim_desc *d) {
    int index[RK_SIM_MAX_COMMANDS];
    size_t types = rk__sim_wg_payload_types(d, index);
    payloads(t, d, index, types);
    add(t, "RK_DEVICE void rk_sim_step_(const rk_sim_state *s, const rk_sim_region *r) { %s(s, r); }\n\n", d->step);
    add(t,
        "RK_DEVICE uint64_t rk_sim_dispatch_(const rk_sim_state *s, const rk_sim_payloads *q, const rk_sim_region *r,\n"
        "                                    uint32_t op, uint32_t slot) {\n    uint64_t a = 0;\n");
    for (size_t i = 0; i < d->command_count; i++) {
        const rk_sim_command *c = &d->commands[i];
        int k = index[i];
        add(t, "    %sif (op == %uu) {\n", i ? "else " : "", c->id);
        if (k >= 0)
            add(t, "        %s p = q->rk_payload_%d[slot];\n        a = %s(s, r, &p);\n", c->payload_type, k,
                c->handler);
        else
            add(t, "        uint32_t p = 0;\n        a = %s(s, r, &p);\n", c->handler);
        add(t, "    }\n");
    }
    add(t, "    return a;\n}\n\n");
    /* Scalars by index: WGSL cannot index a struct's members. */
    add(t, "RK_DEVICE uint32_t rk_sim_scalar_get_(const rk_sim_state *s, uint32_t i) {\n    uint32_t v = 0;\n");
    for (size_t i = 0; i < d->scalar_count; i++) {
        const char *n = d->scalars[i].name;
        add(t, "    if (i == %zuu) v = %s(s->scalars->%s);\n", i,
            d->scalars[i].type == RK_SIM_F32 ? "float_as_uint" : "(uint32_t)", n);
    }
    add(t, "    return v;\n}\n\nRK_DEVICE void rk_sim_scalar_set_(const rk_sim_state *s, uint32_t i, uint32_t v) {\n");
    for (size_t i = 0; i < d->scalar_count; i++) {
        const char *n = d->scalars[i].name;
        add(t, "    if (i == %zuu) s->scalars->%s = %s;\n", i, n,
            d->scalars[i].type == RK_SIM_F32   ? "uint_as_float(v)"
            : d->scalars[i].type == RK_SIM_I32 ? "(int)v"
                                               : "v");
    }
    add(t, "    (void)v;\n}\n\n");
}

rk_status rk__sim_wg_source(const rk_sim_desc *d, char **out) {
    *out = NULL;
    /* The user's source and the library's parts as files of their own, so
     * that diagnostics name them with their own line numbers. */
    const char *user = d->source_name ? d->source_name : "sim.c";
    text t = {0};
    add(&t, "#include <ringkernel/dsl.h>\n#include \"sim_protocol.h\"\n");
    declarations(&t, d);
    add(&t, "#include \"%s\"\n", user);
    glue(&t, d);
    add(&t, "#include \"sim_device_wgpu.c\"\n");
    if (t.failed) {
        free(t.data);
        return rk__fail(RK_OUT_OF_MEMORY, "rk_sim: out of memory generating the source");
    }
    const rk_transpile_file files[] = {
        {"sim_protocol.h", rk__sim_protocol_source},
        {user, d->source},
        {"sim_device_wgpu.c", rk__sim_device_wgpu_source},
    };
    rk_transpile_desc td = {
        .source = t.data,
        .path = "rk_sim_webgpu.c",
        .defines = d->defines,
        .define_count = d->define_count,
        .files = files,
        .file_count = sizeof files / sizeof files[0],
        .no_file_system = true,
        .target = RK_TARGET_WGSL,
        .wgsl_state_struct = "rk_sim_state,rk_sim_payloads",
    };
    rk_transpile_result *r = NULL;
    rk_status s = rk_transpile(&td, &r);
    if (s != RK_OK) {
        s = rk__fail(RK_COMPILE_FAILED, "rk_sim: the simulation's source did not transpile to WGSL:\n%s",
                     r ? rk_transpile_diagnostics_text(r) : rk_last_error());
    } else {
        size_t n = 0;
        const char *wgsl = rk_transpile_output(r, &n);
        size_t cap = n + 64;
        *out = malloc(cap);
        if (!*out)
            s = rk__fail(RK_OUT_OF_MEMORY, "rk_sim: out of memory");
        else
            snprintf(*out, cap, "%s\nconst rk_b_rows: i32 = %di;\n", wgsl,
                     d->rows); /* the state's rows (emit_wgsl_state.c) */
    }
    rk_transpile_result_destroy(r);
    free(t.data);
    return s;
}
