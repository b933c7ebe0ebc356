/* Warns when a persistent CPU kernel's polling threads and the threads
 * calling it outnumber the cores. Each persistent worker spins while it
 * waits for work, and so do waiting callers for a while: with more of them
 * than cores they take turns, and a round trip that takes microseconds
 * with a core each takes a scheduler time slice (milliseconds) instead.
 * Launch-per-command (RK_MODE_TRADITIONAL) has no polling thread. */
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "kernel_internal.h"

static unsigned cores(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return (unsigned)CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1u;
}

void rk__kernel_check_cores(rk__kernel_core *c, unsigned callers) {
    const rk_kernel *k = &c->k;
    if (atomic_load_explicit(&c->cores_warned, memory_order_relaxed)) return;
    if (k->mode != RK_MODE_PERSISTENT || strcmp(k->ctx->backend->name, "cpu") != 0) return;
    unsigned workers = k->desc.workers ? k->desc.workers : 1u, have = cores();
    if (workers + callers <= have || atomic_exchange(&c->cores_warned, true)) return;
    rk__log(RK_LOG_WARN,
            "kernel '%s': %u persistent worker thread%s and %u calling thread%s share %u core%s; polling threads then "
            "take turns and a round trip grows from microseconds to a scheduler time slice. Use fewer threads, or "
            "RK_MODE_TRADITIONAL (docs/applications.md, \"Cores\")",
            k->name, workers, workers == 1 ? "" : "s", callers, callers == 1 ? "" : "s", have, have == 1 ? "" : "s");
}
