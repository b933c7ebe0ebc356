/* Calling a kernel with the launch's arguments.
 *
 * libffi handles any signature, but re-examines every argument on every call
 * (about 35 ns for three arguments here, more than a small kernel's body).
 * Most kernels take a few pointers and scalars that all travel in registers,
 * so for those the launch lays the registers out once and a few instructions
 * of assembly load them and call: exactly what libffi would do, minus the
 * per-call classification. Anything else (arguments on the stack, or an
 * architecture without the assembly) goes through libffi.
 */
#include <alloca.h>
#include <string.h>

#include "cpu_device.h"

#if defined(__x86_64__)
#define DIRECT_CALLS 1
enum { INT_REGS = 6, FP_REGS = 8 }; /* System V: rdi rsi rdx rcx r8 r9, xmm0-7 */

/* call_regs(fn, ints, fps): loads the argument registers and calls fn. */
void rk__cpu_call_regs(void (*fn)(void), const uint64_t *ints, const uint64_t *fps);
__asm__(".text\n"
        ".globl rk__cpu_call_regs\n"
        ".hidden rk__cpu_call_regs\n"
        ".type rk__cpu_call_regs,@function\n"
        ".p2align 4\n"
        "rk__cpu_call_regs:\n"
        "    pushq %rbp\n" /* also aligns the stack to 16 for the call */
        "    movq %rsp, %rbp\n"
        "    movq %rdi, %r11\n"
        "    movq %rsi, %r10\n"
        "    movq 0(%rdx), %xmm0\n"
        "    movq 8(%rdx), %xmm1\n"
        "    movq 16(%rdx), %xmm2\n"
        "    movq 24(%rdx), %xmm3\n"
        "    movq 32(%rdx), %xmm4\n"
        "    movq 40(%rdx), %xmm5\n"
        "    movq 48(%rdx), %xmm6\n"
        "    movq 56(%rdx), %xmm7\n"
        "    movq 0(%r10), %rdi\n"
        "    movq 8(%r10), %rsi\n"
        "    movq 16(%r10), %rdx\n"
        "    movq 24(%r10), %rcx\n"
        "    movq 32(%r10), %r8\n"
        "    movq 40(%r10), %r9\n"
        "    movl $8, %eax\n" /* vector registers used, should the callee be variadic */
        "    callq *%r11\n"
        "    popq %rbp\n"
        "    ret\n"
        ".size rk__cpu_call_regs, .-rk__cpu_call_regs\n");

#elif defined(__aarch64__)
#define DIRECT_CALLS 1
enum { INT_REGS = 8, FP_REGS = 8 }; /* AAPCS64: x0-x7, v0-v7 */

void rk__cpu_call_regs(void (*fn)(void), const uint64_t *ints, const uint64_t *fps);
__asm__(".text\n"
        ".globl rk__cpu_call_regs\n"
        ".hidden rk__cpu_call_regs\n"
        ".type rk__cpu_call_regs,%function\n"
        ".p2align 4\n"
        "rk__cpu_call_regs:\n"
        "    stp x29, x30, [sp, #-16]!\n"
        "    mov x29, sp\n"
        "    mov x16, x0\n"
        "    mov x17, x1\n"
        "    ldp d0, d1, [x2, #0]\n"
        "    ldp d2, d3, [x2, #16]\n"
        "    ldp d4, d5, [x2, #32]\n"
        "    ldp d6, d7, [x2, #48]\n"
        "    ldp x0, x1, [x17, #0]\n"
        "    ldp x2, x3, [x17, #16]\n"
        "    ldp x4, x5, [x17, #32]\n"
        "    ldp x6, x7, [x17, #48]\n"
        "    blr x16\n"
        "    ldp x29, x30, [sp], #16\n"
        "    ret\n"
        ".size rk__cpu_call_regs, .-rk__cpu_call_regs\n");
#endif

void rk__cpu_call_prepare_direct(rk__cpu_call *call) {
    call->direct = false;
#ifdef DIRECT_CALLS
    size_t ni = 0, nf = 0;
    memset(call->int_regs, 0, sizeof call->int_regs);
    memset(call->fp_regs, 0, sizeof call->fp_regs);
    for (size_t i = 0; i < call->arg_count; i++) {
        const rk__cpu_arg_slot *s = &call->slots[i];
        const ffi_type *t = call->types[i];
        if (t->type == FFI_TYPE_STRUCT) return; /* libffi classifies structs */
        if (t == &ffi_type_float || t == &ffi_type_double) {
            if (nf == FP_REGS) return;
            /* A float travels in the low 32 bits of its register. */
            if (t == &ffi_type_float)
                memcpy(&call->fp_regs[nf++], &s->f32, sizeof s->f32);
            else
                memcpy(&call->fp_regs[nf++], &s->f64, sizeof s->f64);
            continue;
        }
        if (ni == INT_REGS) return;
        uint64_t v;
        if (t == &ffi_type_pointer)
            v = (uint64_t)(uintptr_t)s->ptr;
        else if (t == &ffi_type_sint32)
            v = (uint64_t)(int64_t)s->i32; /* extended as a compiler would */
        else if (t == &ffi_type_uint32)
            v = s->u32;
        else
            v = s->u64;
        call->int_regs[ni++] = v;
    }
    call->direct = true;
#endif
}

void rk__cpu_call_invoke(const rk__cpu_call *call) {
#ifdef DIRECT_CALLS
    if (call->direct) {
        rk__cpu_call_regs(call->fn, call->int_regs, call->fp_regs);
        return;
    }
#endif
    /* libffi may write into the value array it is given: on x86-64 (3.4) it
     * copies a struct over 16 bytes to its own stack frame and stores the
     * copy's address in avalue[i]. Handing it the launch's shared array made
     * every later call of the launch, on every fiber and worker, copy the
     * struct from that dead frame on the first fiber's stack: wrong fields
     * once the frame was reused (as under ASan), and a data race between
     * workers. Each call gets its own array, on the calling fiber's stack
     * (libffi's own copy of the arguments is sized by the call the same way). */
    size_t n = call->arg_count;
    void **values = n ? alloca(n * sizeof *values) : NULL;
    if (n) memcpy(values, call->values, n * sizeof *values);
    ffi_call((ffi_cif *)&call->cif, call->fn, NULL, values);
}
