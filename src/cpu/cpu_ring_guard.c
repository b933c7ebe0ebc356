/* Catching a handler that crashes, so a bad handler fails its kernel rather
 * than the process.
 *
 * A thread that runs handlers attaches a guard (an alternate signal stack,
 * so even a stack overflow reaches us) and arms it around each batch. The
 * SIGSEGV/SIGBUS/SIGFPE/SIGILL handlers are process-wide: they are
 * installed while some thread is busy running handlers (reference-counted)
 * and the previous ones are put back after. A fault on an armed thread
 * jumps back into the batch loop; any other fault goes to the handler that
 * was there before us (or the default action), as if we were not there.
 *
 * Built with ASan or TSan, which own these signals, none of this is
 * installed: the sanitizer reports the crash. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_ring_internal.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RK_SANITIZER_OWNS_SIGNALS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define RK_SANITIZER_OWNS_SIGNALS 1
#endif
#endif

static const int guarded_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
enum { GUARDED = sizeof guarded_signals / sizeof guarded_signals[0] };
enum { ALT_STACK_SIZE = 64 * 1024 };

/* The calling thread's guard, set by attach (before any fault can need it,
 * so reading it in the signal handler allocates nothing). */
static _Thread_local rk__cpu_guard *thread_guard;

static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned install_count;
static struct sigaction previous[GUARDED];

const char *rk__cpu_signal_name(int sig) {
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    }
    return "a signal";
}

bool rk__cpu_guard_supported(void) {
#ifdef RK_SANITIZER_OWNS_SIGNALS
    return false;
#else
    return true;
#endif
}

static int slot_of(int sig) {
    for (int i = 0; i < GUARDED; i++)
        if (guarded_signals[i] == sig) return i;
    return -1;
}

/* Not ours: behave as the previous disposition would. */
static void pass_on(int sig, siginfo_t *info, void *uc) {
    int i = slot_of(sig);
    const struct sigaction *old = i >= 0 ? &previous[i] : NULL;
    if (old && (old->sa_flags & SA_SIGINFO) && old->sa_sigaction) {
        old->sa_sigaction(sig, info, uc);
        return;
    }
    if (old && old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
        old->sa_handler(sig);
        return;
    }
    /* Default action: reset and let the signal strike again. A fault
     * re-executes the faulting instruction on return; a sent signal is
     * raised anew (it stays pending until this handler returns). */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    if (info->si_code <= 0) raise(sig);
}

static void on_fault(int sig, siginfo_t *info, void *uc) {
    rk__cpu_guard *g = thread_guard;
    if (g && g->armed) {
        g->armed = 0;
        g->signal = sig;
        g->fault_address = info->si_addr;
        siglongjmp(g->env, 1);
    }
    pass_on(sig, info, uc);
}

rk_status rk__cpu_guard_attach(rk__cpu_guard *g) {
    memset(g, 0, sizeof *g);
    if (!rk__cpu_guard_supported()) return RK_UNSUPPORTED;
    stack_t current;
    if (sigaltstack(NULL, &current) != 0) return rk__fail(RK_IO_ERROR, "cpu: sigaltstack failed");
    g->previous_alt_stack = current;
    if (current.ss_flags & SS_DISABLE) {
        /* The thread has no alternate stack: give it ours. */
        g->alt_stack = malloc(ALT_STACK_SIZE);
        if (!g->alt_stack) return rk__fail(RK_OUT_OF_MEMORY, "cpu: no memory for a signal stack");
        stack_t ss = {.ss_sp = g->alt_stack, .ss_size = ALT_STACK_SIZE, .ss_flags = 0};
        if (sigaltstack(&ss, NULL) != 0) {
            free(g->alt_stack);
            g->alt_stack = NULL;
            return rk__fail(RK_IO_ERROR, "cpu: sigaltstack failed");
        }
    }
    g->attached = true;
    thread_guard = g;
    return RK_OK;
}

void rk__cpu_guard_detach(rk__cpu_guard *g) {
    if (!g->attached) return;
    g->armed = 0;
    thread_guard = NULL;
    if (g->alt_stack) {
        /* Put back what the thread had (nothing: disabled). */
        stack_t off = g->previous_alt_stack;
        off.ss_flags = SS_DISABLE;
        sigaltstack(&off, NULL);
        free(g->alt_stack);
        g->alt_stack = NULL;
    }
    g->attached = false;
}

rk_status rk__cpu_guard_install(rk__cpu_guard *g) {
    if (!g->attached) return RK_BAD_STATE;
    if (g->handlers_installed) return RK_OK;
    rk_status s = RK_OK;
    pthread_mutex_lock(&install_lock);
    if (install_count == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_fault;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        for (int i = 0; i < GUARDED && s == RK_OK; i++) {
            if (sigaction(guarded_signals[i], &sa, &previous[i]) != 0) {
                for (int j = 0; j < i; j++) sigaction(guarded_signals[j], &previous[j], NULL);
                s = rk__fail(RK_IO_ERROR, "cpu: cannot install a handler for %s", rk__cpu_signal_name(guarded_signals[i]));
            }
        }
    }
    if (s == RK_OK) {
        install_count++;
        g->handlers_installed = true;
    }
    pthread_mutex_unlock(&install_lock);
    return s;
}

void rk__cpu_guard_uninstall(rk__cpu_guard *g) {
    if (!g->handlers_installed) return;
    pthread_mutex_lock(&install_lock);
    if (--install_count == 0) {
        for (int i = 0; i < GUARDED; i++) {
            /* Only if still ours: someone may have installed theirs since. */
            struct sigaction current;
            if (sigaction(guarded_signals[i], NULL, &current) == 0 && (current.sa_flags & SA_SIGINFO) &&
                current.sa_sigaction == on_fault)
                sigaction(guarded_signals[i], &previous[i], NULL);
        }
    }
    g->handlers_installed = false;
    pthread_mutex_unlock(&install_lock);
}

void rk__cpu_guard_abandon(rk__cpu_guard *g) {
    if (!g->attached) return;
    /* The thread is gone, and with it its alternate stack registration and
     * thread_guard: only the reference and the memory are left. */
    g->armed = 0;
    rk__cpu_guard_uninstall(g);
    free(g->alt_stack);
    g->alt_stack = NULL;
    g->attached = false;
}

void rk__cpu_guard_arm(rk__cpu_guard *g) {
    g->signal = 0;
    g->armed = 1;
}

void rk__cpu_guard_disarm(rk__cpu_guard *g) { g->armed = 0; }

void rk__cpu_guard_recover(rk__cpu_guard *g) {
    /* The jump came out of the signal handler with the signal still blocked
     * (the mask was not saved, to keep arming cheap). */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, g->signal);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}
