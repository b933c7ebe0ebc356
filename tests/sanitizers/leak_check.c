/* Deliberate leaks, run by expect_leak.sh under the LeakSanitizer settings
 * of every ASan test (tests/sanitizers/lsan.supp):
 *   leak_check library    the project's library allocates and nobody frees
 *                         (a forgotten rk_transpile_result_destroy): reported
 *   leak_check callback   the same from a callback that a driver runs:
 *                         reported, although the stack passes through the driver
 *   leak_check driver     the driver allocates and forgets: suppressed
 * Each leak happens on a thread that has exited before the leak check, so no
 * stale copy of a pointer on the main thread's stack can hide it. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "ringkernel/transpile.h"

void fake_driver_leak(void);
void fake_driver_call(void (*callback)(void));

static void leak_transpile_result(void) {
    rk_transpile_desc d = {.source = "#include <ringkernel/dsl.h>\nRK_KERNEL void k(int *o) { o[0] = 1; }\n",
                           .no_file_system = true};
    rk_transpile_result *r = NULL;
    if (rk_transpile(&d, &r) != RK_OK) fprintf(stderr, "leak_check: rk_transpile failed\n");
    /* no rk_transpile_result_destroy(r) */
}

static void *leak_in_library(void *unused) {
    (void)unused;
    leak_transpile_result();
    return NULL;
}

static void *leak_in_callback(void *unused) {
    (void)unused;
    fake_driver_call(leak_transpile_result);
    return NULL;
}

static void *leak_in_driver(void *unused) {
    (void)unused;
    fake_driver_leak();
    return NULL;
}

int main(int argc, char **argv) {
    static const struct {
        const char *mode;
        void *(*leak)(void *);
    } modes[] = {{"library", leak_in_library}, {"callback", leak_in_callback}, {"driver", leak_in_driver}};
    for (size_t i = 0; argc == 2 && i < sizeof modes / sizeof modes[0]; i++) {
        if (strcmp(argv[1], modes[i].mode) != 0) continue;
        pthread_t t;
        if (pthread_create(&t, NULL, modes[i].leak, NULL) != 0 || pthread_join(t, NULL) != 0) {
            fprintf(stderr, "leak_check: cannot run a thread\n");
            return 1;
        }
        return 0;
    }
    fprintf(stderr, "usage: leak_check library|callback|driver\n");
    return 2;
}
