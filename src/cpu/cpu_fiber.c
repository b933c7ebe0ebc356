/* Fibers for the CPU executor: a small context switch of our own (x86_64,
 * aarch64; ucontext elsewhere), announced to ASan and TSan so both follow
 * the stack changes. ucontext's swapcontext makes a sigprocmask system call
 * on every switch; the assembly saves only the callee-saved registers. */
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cpu_device.h"

#if defined(__SANITIZE_ADDRESS__)
#define RK_FIBER_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#define RK_FIBER_TSAN 1
#endif
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RK_FIBER_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define RK_FIBER_TSAN 1
#endif
#endif

#ifdef RK_FIBER_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#ifdef RK_FIBER_TSAN
#include <sanitizer/tsan_interface.h>
#endif

#ifndef RK_CPU_FIBER_UCONTEXT
/* jump(save, to): pushes the callee-saved registers, stores the stack
 * pointer in *save, loads `to` and pops the same. A new fiber's stack holds a
 * frame whose return address is the trampoline, which calls fn(arg) from two
 * callee-saved registers.
 *
 * The floating-point control registers (MXCSR and the x87 control word, FPCR)
 * are not switched: saving and restoring them took three quarters of each
 * switch, and all fibers of a worker run kernels of the same launch, on the
 * same OS thread, one after another, so they share the thread's FP modes as
 * threads run one after another would. */
void rk__cpu_fiber_jump(void **save, void *to);
void rk__cpu_fiber_trampoline(void);

#if defined(__x86_64__)
__asm__(".text\n"
        ".globl rk__cpu_fiber_jump\n"
        ".hidden rk__cpu_fiber_jump\n"
        ".type rk__cpu_fiber_jump,@function\n"
        ".p2align 4\n"
        "rk__cpu_fiber_jump:\n"
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    movq %rsp, (%rdi)\n"
        "    movq %rsi, %rsp\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    ret\n"
        ".size rk__cpu_fiber_jump, .-rk__cpu_fiber_jump\n"
        ".globl rk__cpu_fiber_trampoline\n"
        ".hidden rk__cpu_fiber_trampoline\n"
        ".type rk__cpu_fiber_trampoline,@function\n"
        ".p2align 4\n"
        "rk__cpu_fiber_trampoline:\n"
        "    movq %r13, %rdi\n"
        "    callq *%r12\n"
        "    ud2\n"
        ".size rk__cpu_fiber_trampoline, .-rk__cpu_fiber_trampoline\n");

enum { FRAME_WORDS = 7 }; /* r15, r14, r13, r12, rbx, rbp, return address */

static void init_frame(void **frame, void (*fn)(void *), void *arg) {
    memset(frame, 0, FRAME_WORDS * sizeof *frame);
    frame[2] = arg;                   /* r13 */
    frame[3] = (void *)(uintptr_t)fn; /* r12 */
    frame[6] = (void *)(uintptr_t)rk__cpu_fiber_trampoline;
}

#elif defined(__aarch64__)
__asm__(".text\n"
        ".globl rk__cpu_fiber_jump\n"
        ".hidden rk__cpu_fiber_jump\n"
        ".type rk__cpu_fiber_jump,%function\n"
        ".p2align 4\n"
        "rk__cpu_fiber_jump:\n"
        "    sub sp, sp, #160\n"
        "    stp x19, x20, [sp, #0]\n"
        "    stp x21, x22, [sp, #16]\n"
        "    stp x23, x24, [sp, #32]\n"
        "    stp x25, x26, [sp, #48]\n"
        "    stp x27, x28, [sp, #64]\n"
        "    stp x29, x30, [sp, #80]\n"
        "    stp d8, d9, [sp, #96]\n"
        "    stp d10, d11, [sp, #112]\n"
        "    stp d12, d13, [sp, #128]\n"
        "    stp d14, d15, [sp, #144]\n"
        "    mov x9, sp\n"
        "    str x9, [x0]\n"
        "    mov sp, x1\n"
        "    ldp x19, x20, [sp, #0]\n"
        "    ldp x21, x22, [sp, #16]\n"
        "    ldp x23, x24, [sp, #32]\n"
        "    ldp x25, x26, [sp, #48]\n"
        "    ldp x27, x28, [sp, #64]\n"
        "    ldp x29, x30, [sp, #80]\n"
        "    ldp d8, d9, [sp, #96]\n"
        "    ldp d10, d11, [sp, #112]\n"
        "    ldp d12, d13, [sp, #128]\n"
        "    ldp d14, d15, [sp, #144]\n"
        "    add sp, sp, #160\n"
        "    ret\n"
        ".size rk__cpu_fiber_jump, .-rk__cpu_fiber_jump\n"
        ".globl rk__cpu_fiber_trampoline\n"
        ".hidden rk__cpu_fiber_trampoline\n"
        ".type rk__cpu_fiber_trampoline,%function\n"
        ".p2align 4\n"
        "rk__cpu_fiber_trampoline:\n"
        "    mov x0, x20\n"
        "    blr x19\n"
        "    brk #0\n"
        ".size rk__cpu_fiber_trampoline, .-rk__cpu_fiber_trampoline\n");

enum { FRAME_WORDS = 20 }; /* x19..x30, d8..d15 */

static void init_frame(void **frame, void (*fn)(void *), void *arg) {
    memset(frame, 0, FRAME_WORDS * sizeof *frame);
    frame[0] = (void *)(uintptr_t)fn; /* x19 */
    frame[1] = arg;                   /* x20 */
    frame[11] = (void *)(uintptr_t)rk__cpu_fiber_trampoline; /* x30 */
}
#endif
#endif /* !RK_CPU_FIBER_UCONTEXT */

const char *rk__cpu_fiber_kind(void) {
#if defined(RK_CPU_FIBER_UCONTEXT)
    return "ucontext";
#elif defined(__x86_64__)
    return "x86_64 assembly";
#else
    return "aarch64 assembly";
#endif
}

void rk__cpu_fiber_thread_init(rk__cpu_fiber_ctx *self) {
    memset(self, 0, sizeof *self);
#ifdef RK_FIBER_TSAN
    self->tsan_fiber = __tsan_get_current_fiber();
#endif
}

#ifdef RK_CPU_FIBER_UCONTEXT
/* makecontext passes int arguments only: the context pointer goes in halves. */
static void uc_entry(unsigned hi, unsigned lo) {
    rk__cpu_fiber_ctx *f = (rk__cpu_fiber_ctx *)(((uintptr_t)hi << 16 << 16) | (uintptr_t)lo);
    f->entry(f->entry_arg);
}
#endif

rk_status rk__cpu_fiber_create(rk__cpu_fiber_ctx *fiber, size_t stack_size, void (*fn)(void *), void *arg) {
    memset(fiber, 0, sizeof *fiber);
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    stack_size = (stack_size + page - 1) / page * page;
    /* One guard page below the stack turns an overflow into a fault, not corruption. */
    size_t total = stack_size + page;
    void *m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1,
                   0);
    if (m == MAP_FAILED) return rk__fail(RK_OUT_OF_MEMORY, "cpu: cannot map a %zu-byte fiber stack", total);
    if (mprotect(m, page, PROT_NONE) != 0) {
        munmap(m, total);
        return rk__fail(RK_OUT_OF_MEMORY, "cpu: cannot protect a fiber stack guard page");
    }
    fiber->mapping = m;
    fiber->mapping_size = total;
    fiber->stack_bottom = (unsigned char *)m + page;
    fiber->stack_size = stack_size;
#ifdef RK_CPU_FIBER_UCONTEXT
    if (getcontext(&fiber->uc) != 0) {
        munmap(m, total);
        return rk__fail(RK_INTERNAL, "cpu: getcontext failed");
    }
    fiber->uc.uc_stack.ss_sp = (void *)fiber->stack_bottom;
    fiber->uc.uc_stack.ss_size = stack_size;
    fiber->uc.uc_link = NULL;
    fiber->entry = fn;
    fiber->entry_arg = arg;
    uintptr_t self = (uintptr_t)fiber;
    makecontext(&fiber->uc, (void (*)(void))uc_entry, 2, (unsigned)(self >> 16 >> 16), (unsigned)self);
#else
    /* Stacks are page aligned, so their tops would all share one cache set; a
     * barrier touches every fiber's top in turn. Start each a few lines lower
     * (a multiple of 64 bytes keeps the 16-byte alignment). */
    static atomic_uint color;
    unsigned char *top = (unsigned char *)fiber->stack_bottom + stack_size - 64u * (atomic_fetch_add(&color, 1) % 64u);
    void **frame = (void **)(void *)(top - FRAME_WORDS * sizeof(void *));
    init_frame(frame, fn, arg);
    fiber->sp = frame;
#endif
#ifdef RK_FIBER_TSAN
    fiber->tsan_fiber = __tsan_create_fiber(0);
#endif
    return RK_OK;
}

void rk__cpu_fiber_destroy(rk__cpu_fiber_ctx *fiber) {
    if (!fiber->mapping) return;
#ifdef RK_FIBER_ASAN
    /* A fiber left mid-function keeps its frames' redzones poisoned; a later
     * mapping at the same address must not inherit them. */
    __asan_unpoison_memory_region(fiber->stack_bottom, fiber->stack_size);
#endif
#ifdef RK_FIBER_TSAN
    __tsan_destroy_fiber(fiber->tsan_fiber);
#endif
    munmap(fiber->mapping, fiber->mapping_size);
    fiber->mapping = NULL;
}

/* Completes a switch into self. ASan reports the stack we came from; when
 * that was a thread's own stack we keep its bounds for switching back. */
static void finish_switch(rk__cpu_fiber_ctx *self) {
#ifdef RK_FIBER_ASAN
    const void *bottom = NULL;
    size_t size = 0;
    __sanitizer_finish_switch_fiber(self->asan_fake_stack, &bottom, &size);
    rk__cpu_fiber_ctx *prev = self->switched_from;
    if (prev && !prev->mapping) {
        prev->stack_bottom = bottom;
        prev->stack_size = size;
    }
#else
    (void)self;
#endif
}

void rk__cpu_fiber_started(rk__cpu_fiber_ctx *self) { finish_switch(self); }

void rk__cpu_fiber_switch(rk__cpu_fiber_ctx *from, rk__cpu_fiber_ctx *to, bool leaving_forever) {
    to->switched_from = from;
#ifdef RK_FIBER_ASAN
    __sanitizer_start_switch_fiber(leaving_forever ? NULL : &from->asan_fake_stack, to->stack_bottom, to->stack_size);
#else
    (void)leaving_forever;
#endif
#ifdef RK_FIBER_TSAN
    /* Flags 0: the switch orders memory, as the barrier it implements must. */
    __tsan_switch_to_fiber(to->tsan_fiber, 0);
#endif
#ifdef RK_CPU_FIBER_UCONTEXT
    swapcontext(&from->uc, &to->uc);
#else
    rk__cpu_fiber_jump(&from->sp, to->sp);
#endif
    finish_switch(from);
}

void rk__cpu_fiber_abandoned(rk__cpu_fiber_ctx *thread, const void *live_frame) {
    /* The thread is back on its own stack without a switch (its fiber was
     * unwound by cancellation): tell the sanitizers, which track the stack. */
#ifdef RK_FIBER_ASAN
    __sanitizer_start_switch_fiber(NULL, thread->stack_bottom, thread->stack_size);
    __sanitizer_finish_switch_fiber(NULL, NULL, NULL);
    /* The frames the unwinding skipped (it jumps, as longjmp does, but
     * without telling ASan) left their redzones poisoned below the frame
     * that is still live; ours are among them, and lose their checks. */
    const char *bottom = thread->stack_bottom, *live = live_frame;
    if (bottom && live > bottom && live < bottom + thread->stack_size)
        __asan_unpoison_memory_region(thread->stack_bottom, (size_t)(live - bottom));
#endif
#ifdef RK_FIBER_TSAN
    __tsan_switch_to_fiber(thread->tsan_fiber, 0);
#endif
    (void)thread;
    (void)live_frame;
}
