/* The conformance suite: one set of checks written against the public API
 * (include/ringkernel/) and run on every backend that is present.
 *
 * A check is a function that uses check.h's asserts: it returns to pass,
 * exits 1 (a failed CHECK) to fail and exits 77 (RK_SKIP) to skip. The
 * runner (conf_runner.c) runs the checks of a backend one after another in
 * a child process; when one ends that process (fails, skips, crashes or
 * hangs past its time limit) it is reported and a new child goes on with
 * the next, so a failure costs that check only. A check flagged
 * CONF_OWN_PROCESS always gets a child of its own.
 *
 * Checks are grouped, and the groups are listed in one table
 * (conf_groups.c). That table is the plug-in point for the checks other
 * parts of the library bring (channels, simulations): write a group once,
 * against the public API, and add one line to the table; docs/conformance.md
 * shows how. */
#ifndef RK_CONFORMANCE_H
#define RK_CONFORMANCE_H

#include <stdbool.h>
#include <stddef.h>

#include "check.h"
#include "ringkernel/ringkernel.h"

#define CONF_MS(n) ((uint64_t)(n)*1000000u)
#define CONF_SECONDS(n) ((uint64_t)(n)*1000000000u)

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define CONF_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define CONF_SANITIZED 1
#endif
#endif

/* What a check runs against: the backend's name ("cpu", "cuda", "webgpu",
 * "metal"), as rk_runtime_desc.backend and rk_backend_find take it. */
typedef struct conf_env {
    const char *backend;
} conf_env;

typedef void (*conf_check_fn)(const conf_env *env);

enum conf_check_flags {
    CONF_SHARED = 0,       /* runs in a process shared with the group's other checks */
    CONF_OWN_PROCESS = 1u, /* needs a process of its own: it leaves a device it
                              cannot tear down (a hung or faulted kernel) or
                              changes the environment */
};

typedef struct conf_check {
    const char *name; /* short, unique in its group: "alloc_sizes" */
    conf_check_fn run;
    unsigned flags; /* conf_check_flags */
} conf_check;

typedef struct conf_group {
    const char *name; /* "device.memory", "actor.lifecycle", "channel", ... */
    const conf_check *checks;
    size_t count;
} conf_group;

#define CONF_GROUP(var, group_name, array)                                                                             \
    const conf_group var = {group_name, array, sizeof(array) / sizeof((array)[0])}

/* The groups in the order they run (conf_groups.c). */
extern const conf_group *const conf_groups[];
extern const size_t conf_group_count;

/* ---- helpers for checks (conf_support.c) --------------------------------- */

bool conf_is(const conf_env *env, const char *backend);
/* Opens device 0 of env's backend; skips (77) when it is absent here. */
rk_context *conf_context(const conf_env *env);
rk_runtime *conf_runtime(const conf_env *env);
/* Compiles kernels written once in the DSL (dsl.h) for ctx's backend: as C
 * on the CPU, transpiled to CUDA C or WGSL on the GPUs. */
rk_module *conf_compile_dsl(rk_context *ctx, const char *dsl_source);
rk_function *conf_function(rk_module *m, const char *name);
/* Ends a check that leaves a device it cannot tear down (a hung GPU kernel):
 * passes without running exit handlers. */
_Noreturn void conf_pass_now(void);

/* Ring kernels of the actor checks: one DSL source, every backend. */
typedef struct conf_req {
    uint32_t value;
    int32_t fail_with; /* the handler returns it */
} conf_req;
typedef struct conf_resp {
    uint32_t value; /* value * 3 + 1 */
    uint32_t count; /* "counted": how many requests the state has seen */
} conf_resp;
extern const char conf_handlers[];
static inline uint32_t conf_expect(uint32_t value) { return value * 3u + 1u; }
rk_kernel_desc conf_kernel_desc(const char *handler, uint32_t capacity, rk_exec_mode mode);
rk_kernel *conf_launch(rk_runtime *rt, const char *handler, uint32_t capacity, rk_exec_mode mode);
/* Sends values [from, to) with fail_with 0 and checks the ids are to - from
 * consecutive. */
void conf_send_range(rk_kernel *k, uint32_t from, uint32_t to);
/* Receives to - from replies in send order and checks each. */
void conf_receive_range(rk_kernel *k, uint32_t from, uint32_t to);
rk_kernel_stats conf_stats(rk_kernel *k);

/* The runner: `rk conformance` and the ctest programs call it.
 * Options: --backend B (repeatable; default every backend built in),
 * --check SUBSTRING, --json, --timeout SECONDS, --verbose. Exit 0 all
 * passed or skipped, 1 a check failed, 2 bad options, 77 every backend
 * skipped. */
int rk_conformance_main(int argc, char **argv);

#endif
