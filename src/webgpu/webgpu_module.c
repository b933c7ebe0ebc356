/* WGSL modules on WebGPU: compile (shader module plus one compute pipeline
 * per @compute entry point, with Dawn's messages on failure), functions, and
 * launch.
 *
 * Launch convention (docs/webgpu.md): the launch's buffer arguments bind, in
 * order, to @group(0) @binding(0), @binding(1), ...; the scalar arguments, if
 * any, are packed in order into one uniform buffer bound at the next binding
 * (the last one), whose WGSL type is a struct with one member per scalar:
 * i32/u32/f32 as themselves, 64-bit integers as vec2<u32> (low word first).
 * A @workgroup_size dimension that names an `override` constant takes the
 * launch's block (one pipeline per block, created on first use and kept);
 * a literal or const dimension must equal the block. The grid is the number
 * of workgroups dispatched.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webgpu_internal.h"
#include "wgsl_scan.h"

/* A pipeline of one entry point for one block (its overrides set from it). */
typedef struct wg_pipeline {
    rk_dim3 block; /* {0, 0, 0}: the compile-time pipeline whose block is not known */
    WGPUComputePipeline pipeline;
    WGPUBindGroupLayout layout; /* "auto" layouts are per pipeline */
} wg_pipeline;

typedef struct wg_function {
    struct rk_function base;
    const wgsl_entry *entry;
    wg_pipeline *pipelines; /* [0]: created at compile time with the overrides' defaults */
    size_t pipeline_count;
    WGPUBuffer uniforms; /* scalar arguments; reused, since writeBuffer is queue-ordered */
    uint64_t uniforms_size;
} wg_function;

typedef struct wg_module {
    struct rk_module base;
    WGPUShaderModule shader;
    wgsl_facts facts;
    wg_function *functions; /* one per entry point, same order as facts.entries */
} wg_module;

#define LOCK(c) pthread_mutex_lock(&(c)->lock)
#define UNLOCK(c) pthread_mutex_unlock(&(c)->lock)

static void release_module(wg_context *c, wg_module *m) {
    for (size_t i = 0; m->functions && i < m->facts.entry_count; i++) {
        wg_function *f = &m->functions[i];
        if (f->uniforms) {
            c->W->BufferDestroy(f->uniforms);
            c->W->BufferRelease(f->uniforms);
        }
        for (size_t p = 0; p < f->pipeline_count; p++) {
            if (f->pipelines[p].layout) c->W->BindGroupLayoutRelease(f->pipelines[p].layout);
            if (f->pipelines[p].pipeline) c->W->ComputePipelineRelease(f->pipelines[p].pipeline);
        }
        free(f->pipelines);
    }
    free(m->functions);
    if (m->shader) c->W->ShaderModuleRelease(m->shader);
    rk__wgsl_facts_free(&m->facts);
    free(m);
}

/* Defines become module-scope constants, appended so that line numbers in
 * Dawn's messages still match the caller's source. */
static char *with_defines(const char *source, const rk_compile_options *opts) {
    size_t len = strlen(source) + 2;
    for (size_t i = 0; i < opts->define_count; i++) len += strlen(opts->defines[i] ? opts->defines[i] : "") + 32;
    char *out = malloc(len);
    if (!out) return NULL;
    size_t used = (size_t)snprintf(out, len, "%s\n", source);
    for (size_t i = 0; i < opts->define_count; i++) {
        const char *d = opts->defines[i] ? opts->defines[i] : "";
        const char *eq = strchr(d, '=');
        if (eq)
            used += (size_t)snprintf(out + used, len - used, "const %.*s = %s;\n", (int)(eq - d), d, eq + 1);
        else
            used += (size_t)snprintf(out + used, len - used, "const %s = 1;\n", d);
    }
    return out;
}

typedef struct info_result {
    char *text;
    size_t used, cap;
} info_result;

/* Collects Dawn's compilation messages as "line:col: error: text" lines. */
static void on_compilation_info(WGPUEnum status, const WGPUCompilationInfo *info, void *u1, void *u2) {
    (void)u2;
    info_result *r = u1;
    if (status != WGPU_STATUS_SUCCESS || !info) return;
    for (size_t i = 0; i < info->messageCount; i++) {
        const WGPUCompilationMessage *m = &info->messages[i];
        const char *kind = m->type == WGPU_COMPILATION_MESSAGE_ERROR     ? "error"
                           : m->type == WGPU_COMPILATION_MESSAGE_WARNING ? "warning"
                                                                          : "note";
        size_t n = m->message.data ? (m->message.length == WGPU_STRLEN ? strlen(m->message.data) : m->message.length) : 0;
        size_t need = r->used + n + 96;
        if (need > r->cap) {
            char *t = realloc(r->text, need * 2);
            if (!t) return;
            r->text = t;
            r->cap = need * 2;
        }
        r->used += (size_t)snprintf(r->text + r->used, r->cap - r->used, "%llu:%llu: %s: %.*s\n",
                                    (unsigned long long)m->lineNum, (unsigned long long)m->linePos, kind, (int)n,
                                    m->message.data ? m->message.data : "");
    }
}

/* Creates the shader module; on failure the error has Dawn's diagnostics. */
static rk_status create_shader(wg_context *c, const char *code, WGPUShaderModule *out) {
    WGPUShaderSourceWGSL wgsl = {.chain = {.sType = WGPU_STYPE_SHADER_SOURCE_WGSL}, .code = rk__wgpu_str(code)};
    WGPUShaderModuleDescriptor d = {.nextInChain = &wgsl.chain, .label = rk__wgpu_str("rk module")};
    rk__wg_scope_push(c);
    WGPUShaderModule shader = c->W->DeviceCreateShaderModule(c->device, &d);
    rk_status s = rk__wg_scope_pop(c, RK_COMPILE_FAILED, "WGSL compile failed");
    if (s != RK_OK && shader) {
        /* The scope's message already has the diagnostics; add the
         * structured line:column list when the module can give it. */
        info_result r = {0};
        WGPUCompilationInfoCallbackInfo cb = {.mode = WGPU_CALLBACK_MODE_WAIT_ANY_ONLY,
                                              .callback = on_compilation_info, .userdata1 = &r};
        char *saved = strdup(rk_last_error());
        (void)rk__wg_wait(c, c->W->ShaderModuleGetCompilationInfo(shader, cb), 5000000000ull, NULL,
                          "compilation info");
        rk__fail(s, "%s", saved ? saved : "WGSL compile failed");
        if (r.text && saved && strstr(saved, r.text) == NULL) {
            rk__fail_append("\nmessages:\n");
            rk__fail_append(r.text);
        }
        free(saved);
        free(r.text);
    }
    if (s != RK_OK) {
        if (shader) c->W->ShaderModuleRelease(shader);
        return s;
    }
    *out = shader;
    return RK_OK;
}

static rk_status create_pipeline_with(wg_context *c, WGPUShaderModule shader, const char *entry,
                                      const WGPUConstantEntry *constants, size_t constant_count,
                                      WGPUComputePipeline *out) {
    WGPUComputePipelineDescriptor pd = {
        .label = rk__wgpu_str(entry),
        .layout = NULL, /* "auto": derived from what the entry point uses */
        .compute = {.module = shader, .entryPoint = rk__wgpu_str(entry), .constantCount = constant_count,
                    .constants = constants},
    };
    rk__wg_scope_push(c);
    WGPUComputePipeline p = c->W->DeviceCreateComputePipeline(c->device, &pd);
    char what[160];
    snprintf(what, sizeof what, "compute pipeline for entry point '%.64s' failed", entry);
    rk_status s = rk__wg_scope_pop(c, RK_COMPILE_FAILED, what);
    if (s != RK_OK) {
        if (p) c->W->ComputePipelineRelease(p);
        return s;
    }
    *out = p;
    return RK_OK;
}

static rk_status create_pipeline(wg_context *c, WGPUShaderModule shader, const char *entry,
                                 WGPUComputePipeline *out) {
    return create_pipeline_with(c, shader, entry, NULL, 0, out);
}

rk_status rk__wg_build_pipeline(wg_context *c, const char *code, const char *entry, WGPUShaderModule *shader,
                                WGPUComputePipeline *pipeline) {
    rk_status s = create_shader(c, code, shader);
    if (s != RK_OK) return s;
    s = create_pipeline(c, *shader, entry, pipeline);
    if (s != RK_OK) {
        c->W->ShaderModuleRelease(*shader);
        *shader = NULL;
    }
    return s;
}

static rk_status compile_locked(wg_context *c, wg_module *m, const char *code) {
    rk_status s = create_shader(c, code, &m->shader);
    if (s != RK_OK) return s;
    if (m->facts.entry_count == 0)
        return rk__fail(RK_COMPILE_FAILED, "WGSL module has no @compute entry point");
    m->functions = calloc(m->facts.entry_count, sizeof *m->functions);
    if (!m->functions) return rk__fail(RK_OUT_OF_MEMORY, "rk_module_compile: out of memory");
    for (size_t i = 0; i < m->facts.entry_count; i++) {
        wg_function *f = &m->functions[i];
        f->entry = &m->facts.entries[i];
        f->base.name = f->entry->name;
        f->pipelines = calloc(1, sizeof *f->pipelines);
        if (!f->pipelines) return rk__fail(RK_OUT_OF_MEMORY, "rk_module_compile: out of memory");
        /* Validates the entry point now; an override without a default gets 1. */
        WGPUConstantEntry k[3];
        size_t nk = 0;
        const wgsl_entry *e = f->entry;
        bool block_known = e->workgroup_known;
        for (int d = 0; d < 3; d++) {
            if (e->dim_override[d] && e->workgroup[d] == 0)
                k[nk++] = (WGPUConstantEntry){.key = rk__wgpu_str(e->dim_name[d]), .value = 1.0};
            block_known = block_known && e->workgroup[d] > 0;
        }
        wg_pipeline *p = &f->pipelines[0];
        s = create_pipeline_with(c, m->shader, e->name, k, nk, &p->pipeline);
        if (s != RK_OK) return s;
        f->pipeline_count = 1;
        p->layout = c->W->ComputePipelineGetBindGroupLayout(p->pipeline, 0);
        if (block_known) p->block = (rk_dim3){e->workgroup[0], e->workgroup[1], e->workgroup[2]};
    }
    return rk__wg_check(c, "rk_module_compile");
}

rk_status rk__wg_module_compile(rk_context *ctx, const char *source, const rk_compile_options *opts,
                                rk_module **out) {
    wg_context *c = wg_ctx(ctx);
    if (opts->include_dir_count)
        return rk__fail(RK_UNSUPPORTED, "rk_module_compile: WGSL has no #include, so the webgpu backend takes no "
                                        "include directories");
    char *code = with_defines(source, opts);
    wg_module *m = calloc(1, sizeof *m);
    if (!code || !m || !rk__wgsl_scan(code, &m->facts)) {
        free(code);
        free(m);
        return rk__fail(RK_OUT_OF_MEMORY, "rk_module_compile: out of memory");
    }
    LOCK(c);
    rk_status s = compile_locked(c, m, code);
    if (s != RK_OK) release_module(c, m);
    UNLOCK(c);
    free(code);
    if (s != RK_OK) return s;
    *out = &m->base;
    return RK_OK;
}

void rk__wg_module_destroy(rk_module *module) {
    wg_context *c = wg_ctx(module->ctx);
    LOCK(c);
    release_module(c, (wg_module *)module);
    UNLOCK(c);
}

rk_status rk__wg_module_get_function(rk_module *module, const char *name, rk_function **out) {
    wg_module *m = (wg_module *)module;
    char names[256] = "";
    for (size_t i = 0; i < m->facts.entry_count; i++) {
        if (strcmp(m->facts.entries[i].name, name) == 0) {
            *out = &m->functions[i].base;
            return RK_OK;
        }
        size_t used = strlen(names);
        snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "", m->facts.entries[i].name);
    }
    return rk__fail(RK_NOT_FOUND, "no @compute entry point '%s' in the WGSL module (it has: %s)", name, names);
}

/* ---- launch ------------------------------------------------------------------------ */

static const char *kind_name(rk_arg_kind k) {
    switch (k) {
    case RK_ARG_BUFFER: return "buffer";
    case RK_ARG_I32: return "i32";
    case RK_ARG_U32: return "u32";
    case RK_ARG_I64: return "i64";
    case RK_ARG_U64: return "u64";
    case RK_ARG_F32: return "f32";
    case RK_ARG_F64: return "f64";
    case RK_ARG_STRUCT: return "struct";
    }
    return "?";
}

/* The WGSL type a scalar argument is packed as. */
static const char *wgsl_type_of(rk_arg_kind k) {
    switch (k) {
    case RK_ARG_I32: return "i32";
    case RK_ARG_U32: return "u32";
    case RK_ARG_F32: return "f32";
    case RK_ARG_I64:
    case RK_ARG_U64: return "vec2<u32>";
    default: return NULL;
    }
}

/* Buffers and structs passed by value each take a binding, in order. */
static bool takes_binding(const rk_arg *a) { return a->kind == RK_ARG_BUFFER || a->kind == RK_ARG_STRUCT; }

static size_t entry_index(const wg_module *m, const wg_function *f) { return (size_t)(f->entry - m->facts.entries); }

static const wgsl_binding *binding_at(const wg_module *m, const wg_function *f, uint32_t index) {
    return rk__wgsl_binding_for(&m->facts, entry_index(m, f), index);
}

/* Declarations this entry point is checked against: the ones its body names
 * when it names any (modules from the transpiler name all of theirs), else
 * all of the module's. */
static bool relevant(const wg_module *m, const wg_function *f, size_t b) {
    const wgsl_facts *x = &m->facts;
    if (!x->mentions) return true;
    size_t e = entry_index(m, f);
    bool any = false;
    for (size_t i = 0; i < x->binding_count; i++) any = any || x->mentions[e * x->binding_count + i];
    return !any || x->mentions[e * x->binding_count + b];
}

/* Packs scalars by WGSL's uniform layout: 4-byte members at 4, vec2<u32> at 8;
 * the whole padded to 16. */
static rk_status pack_scalars(const rk_launch_desc *d, unsigned char *out, size_t cap, const char *fn,
                              size_t *size_out) {
    size_t off = 0;
    for (size_t i = 0; i < d->arg_count; i++) {
        const rk_arg *a = &d->args[i];
        if (takes_binding(a)) continue;
        if (a->kind == RK_ARG_F64)
            return rk__fail(RK_UNSUPPORTED, "rk_launch '%s': argument %zu is a double, and WGSL has no f64", fn, i);
        size_t size = (a->kind == RK_ARG_I64 || a->kind == RK_ARG_U64) ? 8 : 4;
        off = (off + size - 1) & ~(size - 1);
        if (off + size > cap)
            return rk__fail(RK_INVALID_ARGUMENT, "rk_launch '%s': too many scalar arguments (%zu bytes at most)", fn,
                            cap);
        memcpy(out + off, &a->value, size); /* little-endian: low word first */
        off += size;
    }
    *size_out = (off + 15u) & ~(size_t)15u;
    return RK_OK;
}

/* Checks the arguments against the entry point's declared bindings. */
static rk_status check_args(const wg_module *m, const wg_function *f, const rk_launch_desc *d, uint32_t *nbuf,
                            bool *has_scalars) {
    const char *fn = f->entry->name;
    uint32_t buffers = 0;
    size_t scalars = 0;
    for (size_t i = 0; i < d->arg_count; i++) {
        if (takes_binding(&d->args[i])) buffers++;
        else scalars++;
    }
    for (size_t i = 0; i < m->facts.binding_count; i++) {
        const wgsl_binding *b = &m->facts.bindings[i];
        if (!relevant(m, f, i)) continue;
        if (b->group != 0)
            return rk__fail(RK_INVALID_ARGUMENT,
                            "rk_launch '%s': '%s' is in @group(%u); the launch convention binds @group(0) only", fn,
                            b->name, b->group);
        bool is_uniform_slot = scalars && b->binding == buffers;
        if (b->binding >= buffers && !is_uniform_slot)
            return rk__fail(RK_INVALID_ARGUMENT,
                            "rk_launch '%s': the shader declares @binding(%u) '%s' but the launch has %u buffer and "
                            "%zu scalar argument(s) (buffers bind at 0..%u, scalars in one uniform at %u)",
                            fn, b->binding, b->name, buffers, scalars, buffers ? buffers - 1 : 0, buffers);
    }
    for (uint32_t i = 0; i < buffers; i++) {
        const wgsl_binding *b = binding_at(m, f, i);
        if (!b || (b->space != WGSL_STORAGE_RW && b->space != WGSL_STORAGE_READ))
            return rk__fail(RK_INVALID_ARGUMENT,
                            "rk_launch '%s': buffer or struct argument %u needs a var<storage> at @group(0) @binding(%u)",
                            fn, i, i);
    }
    if (scalars) {
        const wgsl_binding *u = binding_at(m, f, buffers);
        if (!u || u->space != WGSL_UNIFORM)
            return rk__fail(RK_INVALID_ARGUMENT,
                            "rk_launch '%s': %zu scalar argument(s) need a var<uniform> at @group(0) @binding(%u)", fn,
                            scalars, buffers);
        /* The uniform's struct must list the scalars' types in order. */
        const wgsl_struct *st = rk__wgsl_find_struct(&m->facts, u->type);
        size_t k = 0;
        for (size_t i = 0; i < d->arg_count; i++) {
            const rk_arg *a = &d->args[i];
            if (takes_binding(a)) continue;
            const char *want = wgsl_type_of(a->kind);
            const char *have = st ? (k < st->member_count ? st->members[k].type : NULL) : (k == 0 ? u->type : NULL);
            if (want && (!have || strcmp(want, have) != 0))
                return rk__fail(RK_INVALID_ARGUMENT,
                                "rk_launch '%s': scalar argument %zu is %s (WGSL %s) but the uniform '%s' has %s there",
                                fn, i, kind_name(a->kind), want, u->name, have ? have : "nothing");
            k++;
        }
        size_t declared = st ? st->member_count : 1;
        if (k != declared)
            return rk__fail(RK_INVALID_ARGUMENT, "rk_launch '%s': %zu scalar argument(s) but the uniform '%s' has %zu",
                            fn, k, u->name, declared);
    }
    *nbuf = buffers;
    *has_scalars = scalars > 0;
    return RK_OK;
}

static bool same_block(rk_dim3 a, rk_dim3 b) { return a.x == b.x && a.y == b.y && a.z == b.z; }

/* The entry point's pipeline for this block: the compile-time one when the
 * sizes are fixed or the block is the overrides' defaults, else one made
 * with the overrides set to the block (kept for later launches). Lock held. */
static rk_status pipeline_for(wg_context *c, wg_module *m, wg_function *f, rk_dim3 block, const wg_pipeline **out) {
    const wgsl_entry *e = f->entry;
    if (!e->dim_override[0] && !e->dim_override[1] && !e->dim_override[2]) {
        *out = &f->pipelines[0];
        return RK_OK;
    }
    for (size_t i = 0; i < f->pipeline_count; i++)
        if (same_block(f->pipelines[i].block, block)) {
            *out = &f->pipelines[i];
            return RK_OK;
        }
    const uint32_t b[3] = {block.x, block.y, block.z};
    WGPUConstantEntry k[3];
    size_t nk = 0;
    for (int d = 0; d < 3; d++)
        if (e->dim_override[d]) k[nk++] = (WGPUConstantEntry){.key = rk__wgpu_str(e->dim_name[d]), .value = b[d]};
    wg_pipeline *grown = realloc(f->pipelines, (f->pipeline_count + 1) * sizeof *grown);
    if (!grown) return rk__fail(RK_OUT_OF_MEMORY, "rk_launch: out of memory");
    f->pipelines = grown;
    wg_pipeline *p = &f->pipelines[f->pipeline_count];
    *p = (wg_pipeline){.block = block};
    rk_status s = create_pipeline_with(c, m->shader, e->name, k, nk, &p->pipeline);
    if (s != RK_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", rk_last_error());
        return rk__fail(RK_BAD_LAUNCH_CONFIG, "rk_launch '%s': no pipeline for block (%u, %u, %u): %s", e->name,
                        block.x, block.y, block.z, why);
    }
    p->layout = c->W->ComputePipelineGetBindGroupLayout(p->pipeline, 0);
    f->pipeline_count++;
    *out = p;
    return RK_OK;
}

rk_status rk__wg_launch(rk_function *function, const rk_launch_desc *d) {
    wg_function *f = (wg_function *)function;
    wg_module *m = (wg_module *)function->module;
    wg_context *c = wg_ctx(function->module->ctx);
    const wgsl_entry *e = f->entry;
    const uint32_t block[3] = {d->block.x, d->block.y, d->block.z};
    for (int k = 0; k < 3 && e->workgroup_known; k++)
        if (!e->dim_override[k] && block[k] != e->workgroup[k])
            return rk__fail(RK_BAD_LAUNCH_CONFIG,
                            "rk_launch '%s': block (%u, %u, %u) does not match the shader's @workgroup_size(%u, %u, "
                            "%u) in %c; a WGSL size that is a literal or const fixes the block (name an override "
                            "constant there to take the launch's block)",
                            e->name, block[0], block[1], block[2], e->workgroup[0], e->workgroup[1], e->workgroup[2],
                            "xyz"[k]);
    if (d->shared_memory)
        return rk__fail(RK_BAD_LAUNCH_CONFIG,
                        "rk_launch '%s': WGSL has no dynamic workgroup memory (declare var<workgroup> in the shader)",
                        e->name);
    uint32_t nbuf = 0;
    bool has_scalars = false;
    rk_status s = check_args(m, f, d, &nbuf, &has_scalars);
    if (s != RK_OK) return s;

    unsigned char packed[256] = {0};
    size_t packed_size = 0;
    if (has_scalars && (s = pack_scalars(d, packed, sizeof packed, e->name, &packed_size)) != RK_OK) return s;

    WGPUBindGroupEntry entries[64];
    WGPUBuffer structs[64]; /* released once submitted: the queue keeps what it uses */
    size_t n = 0, nstructs = 0;
    LOCK(c);
    const wg_pipeline *pl = NULL;
    s = pipeline_for(c, m, f, d->block, &pl);
    for (size_t i = 0, b = 0; s == RK_OK && i < d->arg_count; i++) {
        const rk_arg *a = &d->args[i];
        if (!takes_binding(a)) continue;
        const wgsl_binding *decl = binding_at(m, f, (uint32_t)b);
        WGPUBuffer buffer = NULL;
        uint64_t size = 0;
        if (a->kind == RK_ARG_STRUCT && nstructs == sizeof structs / sizeof structs[0]) {
            s = rk__fail(RK_INVALID_ARGUMENT, "rk_launch '%s': too many struct arguments", e->name);
            break;
        }
        if (a->kind == RK_ARG_STRUCT) { /* a struct by value: its bytes in a storage buffer of its own */
            size = (a->value.structure.size + 3u) & ~(uint64_t)3u;
            s = rk__wg_create_buffer(c, size, WGPU_BUFFER_USAGE_STORAGE | WGPU_BUFFER_USAGE_COPY_DST, "rk struct",
                                     &buffer);
            if (s != RK_OK) break;
            structs[nstructs++] = buffer;
            unsigned char bytes[1024] = {0};
            const unsigned char *src = a->value.structure.data;
            if (size > sizeof bytes) {
                s = rk__fail(RK_UNSUPPORTED, "rk_launch '%s': struct argument %zu is over %zu bytes", e->name, i,
                             sizeof bytes);
                break;
            }
            memcpy(bytes, src, a->value.structure.size); /* writeBuffer takes multiples of 4 */
            c->W->QueueWriteBuffer(c->queue, buffer, 0, bytes, size);
        } else {
            buffer = wg_buf(a->value.buffer)->buffer;
            size = wg_buf(a->value.buffer)->alloc_size;
        }
        /* A binding the module never mentions is not in the "auto" layout. */
        if (decl->referenced && n < 64)
            entries[n++] = (WGPUBindGroupEntry){.binding = (uint32_t)b, .buffer = buffer, .offset = 0, .size = size};
        b++;
    }
    if (s != RK_OK) {
        for (size_t i = 0; i < nstructs; i++) c->W->BufferRelease(structs[i]);
        UNLOCK(c);
        return s;
    }
    if (has_scalars) {
        if (f->uniforms_size < packed_size) {
            if (f->uniforms) {
                c->W->BufferDestroy(f->uniforms);
                c->W->BufferRelease(f->uniforms);
                f->uniforms = NULL;
            }
            s = rk__wg_create_buffer(c, packed_size, WGPU_BUFFER_USAGE_UNIFORM | WGPU_BUFFER_USAGE_COPY_DST,
                                     "rk scalars", &f->uniforms);
            if (s != RK_OK) {
                f->uniforms_size = 0;
                for (size_t i = 0; i < nstructs; i++) c->W->BufferRelease(structs[i]);
                UNLOCK(c);
                return s;
            }
            f->uniforms_size = packed_size;
        }
        c->W->QueueWriteBuffer(c->queue, f->uniforms, 0, packed, packed_size);
        if (binding_at(m, f, nbuf)->referenced && n < 64)
            entries[n++] = (WGPUBindGroupEntry){.binding = nbuf, .buffer = f->uniforms, .size = packed_size};
    }
    WGPUBindGroup group = NULL;
    if (n) {
        WGPUBindGroupDescriptor bd = {.layout = pl->layout, .entryCount = n, .entries = entries};
        group = c->W->DeviceCreateBindGroup(c->device, &bd);
    }
    WGPUCommandEncoder enc = c->W->DeviceCreateCommandEncoder(c->device, NULL);
    WGPUComputePassEncoder pass = c->W->CommandEncoderBeginComputePass(enc, NULL);
    c->W->ComputePassEncoderSetPipeline(pass, pl->pipeline);
    if (group) c->W->ComputePassEncoderSetBindGroup(pass, 0, group, 0, NULL);
    c->W->ComputePassEncoderDispatchWorkgroups(pass, d->grid.x, d->grid.y, d->grid.z);
    c->W->ComputePassEncoderEnd(pass);
    WGPUCommandBuffer cmd = c->W->CommandEncoderFinish(enc, NULL);
    c->W->QueueSubmit(c->queue, 1, &cmd);
    c->W->CommandBufferRelease(cmd);
    c->W->ComputePassEncoderRelease(pass);
    c->W->CommandEncoderRelease(enc);
    if (group) c->W->BindGroupRelease(group);
    for (size_t i = 0; i < nstructs; i++) c->W->BufferRelease(structs[i]);
    s = rk__wg_check(c, "rk_launch");
    UNLOCK(c);
    return s;
}
