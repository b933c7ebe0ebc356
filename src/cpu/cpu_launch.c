/* Launch: turns rk_launch's arguments into one libffi call description that
 * every thread of the grid uses, and queues it on the stream. */
#include <stdlib.h>
#include <string.h>

#include "cpu_device.h"

static ffi_type *arg_type(rk_arg_kind kind) {
    switch (kind) {
    case RK_ARG_BUFFER: return &ffi_type_pointer;
    case RK_ARG_I32: return &ffi_type_sint32;
    case RK_ARG_U32: return &ffi_type_uint32;
    case RK_ARG_I64: return &ffi_type_sint64;
    case RK_ARG_U64: return &ffi_type_uint64;
    case RK_ARG_F32: return &ffi_type_float;
    case RK_ARG_F64: return &ffi_type_double;
    case RK_ARG_STRUCT: return NULL; /* built per call: struct_type() */
    }
    return NULL;
}

static ffi_type *letter_type(char c) {
    switch (c) {
    case 'i': return &ffi_type_sint32;
    case 'u': return &ffi_type_uint32;
    case 'l': return &ffi_type_sint64;
    case 'L': return &ffi_type_uint64;
    case 'f': return &ffi_type_float;
    default: return &ffi_type_double;
    }
}

static size_t round16(size_t n) { return (n + 15u) & ~(size_t)15u; }

/* Bytes a struct argument needs in the call: its ffi_type, the element list and a copy of its data. */
static size_t struct_storage(const rk_arg *a) {
    if (a->kind != RK_ARG_STRUCT) return 0;
    size_t n = strlen(a->value.structure.fields);
    return round16(sizeof(ffi_type)) + round16((n + 1) * sizeof(ffi_type *)) + round16(a->value.structure.size);
}

/* Describes the struct to libffi (which classifies it for the ABI as the C
 * compiler does) and copies its bytes into mem; returns the ffi_type. */
static ffi_type *struct_type(const rk_arg *a, unsigned char *mem, void **data) {
    const rk_arg_struct *st = &a->value.structure;
    size_t n = strlen(st->fields);
    ffi_type *t = (ffi_type *)(void *)mem;
    ffi_type **elements = (ffi_type **)(void *)(mem + round16(sizeof(ffi_type)));
    unsigned char *copy = mem + round16(sizeof(ffi_type)) + round16((n + 1) * sizeof(ffi_type *));
    for (size_t i = 0; i < n; i++) elements[i] = letter_type(st->fields[i]);
    elements[n] = NULL;
    *t = (ffi_type){.size = 0, .alignment = 0, .type = FFI_TYPE_STRUCT, .elements = elements};
    memcpy(copy, st->data, st->size);
    *data = copy;
    return t;
}

static void set_slot(rk__cpu_arg_slot *slot, const rk_arg *a) {
    switch (a->kind) {
    case RK_ARG_BUFFER: slot->ptr = rk__cpu_buffer_data(a->value.buffer); break;
    case RK_ARG_I32: slot->i32 = a->value.i32; break;
    case RK_ARG_U32: slot->u32 = a->value.u32; break;
    case RK_ARG_I64: slot->i64 = a->value.i64; break;
    case RK_ARG_U64: slot->u64 = a->value.u64; break;
    case RK_ARG_F32: slot->f32 = a->value.f32; break;
    case RK_ARG_F64: slot->f64 = a->value.f64; break;
    case RK_ARG_STRUCT: break; /* its bytes live after the call (struct_type) */
    }
}

rk_status rk__cpu_call_create(void (*fn)(void), const char *name, const rk_launch_desc *desc, rk__cpu_call **out) {
    size_t n = desc->arg_count, name_len = strlen(name) + 1;
    /* One allocation: the call, the slots (8-aligned first), types, value pointers, the name. */
    size_t size = sizeof(rk__cpu_call) + n * (sizeof(rk__cpu_arg_slot) + sizeof(ffi_type *) + sizeof(void *)) + name_len;
    size_t structs_at = round16(size), structs = 0;
    for (size_t i = 0; i < n; i++) structs += struct_storage(&desc->args[i]);
    if (structs) size = structs_at + structs;
    rk__cpu_call *call = calloc(1, size);
    if (!call) return rk__fail(RK_OUT_OF_MEMORY, "rk_launch: out of memory for the call of '%s'", name);
    call->slots = (rk__cpu_arg_slot *)(void *)(call + 1);
    call->types = (ffi_type **)(void *)(call->slots + n);
    call->values = (void **)(void *)(call->types + n);
    char *name_copy = (char *)(void *)(call->values + n);
    memcpy(name_copy, name, name_len);
    call->name = name_copy;
    call->fn = fn;
    call->grid = desc->grid;
    call->block = desc->block;
    call->shared_memory = desc->shared_memory;
    call->arg_count = n;
    unsigned char *struct_mem = (unsigned char *)call + structs_at;
    for (size_t i = 0; i < n; i++) {
        call->types[i] = arg_type(desc->args[i].kind);
        set_slot(&call->slots[i], &desc->args[i]);
        call->values[i] = &call->slots[i];
        if (desc->args[i].kind == RK_ARG_STRUCT) {
            call->types[i] = struct_type(&desc->args[i], struct_mem, &call->values[i]);
            struct_mem += struct_storage(&desc->args[i]);
        }
    }
    ffi_status fs = ffi_prep_cif(&call->cif, FFI_DEFAULT_ABI, (unsigned)n, &ffi_type_void, n ? call->types : NULL);
    if (fs != FFI_OK) {
        free(call);
        return rk__fail(RK_INTERNAL, "rk_launch: libffi cannot describe a call of '%s' with %zu arguments (status %d)",
                        name, n, (int)fs);
    }
    rk__cpu_call_prepare_direct(call);
    *out = call;
    return RK_OK;
}

void rk__cpu_call_destroy(rk__cpu_call *call) {
    if (!call) return;
    rk__cpu_grid_barrier_destroy(call->grid_barrier);
    free(call);
}

rk_status rk__cpu_launch(rk_function *function, const rk_launch_desc *desc) {
    rk_context *ctx = function->module->ctx;
    rk__cpu_context *c = rk__cpu_ctx(ctx);
    uint64_t blocks = (uint64_t)desc->grid.x * desc->grid.y * desc->grid.z;
    /* grid_sync() needs every block running at once, each on its own worker. */
    if (desc->cooperative && blocks > c->threads)
        return rk__fail(RK_BAD_LAUNCH_CONFIG,
                        "rk_launch: cooperative grid of %llu blocks is over the CPU limit of %u (one block per worker "
                        "thread; RK_CPU_THREADS sets the count); not launched",
                        (unsigned long long)blocks, c->threads);
    rk_status s = rk__cpu_context_start_pool(c);
    if (s != RK_OK) return s;
    rk__cpu_call *call = NULL;
    s = rk__cpu_call_create(((rk__cpu_function *)function)->fn, function->name, desc, &call);
    if (s != RK_OK) return s;
    if (desc->cooperative && (s = rk__cpu_grid_barrier_create(blocks, c->spin_ns, &call->grid_barrier)) != RK_OK) {
        rk__cpu_call_destroy(call);
        return s;
    }
    return rk__cpu_stream_launch(ctx, desc->stream, call);
}
