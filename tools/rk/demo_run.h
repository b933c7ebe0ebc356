/* The message loop of rk demo: bursts of messages with single-message
 * round-trip probes in between, every reply checked against what the demo
 * handler computes. cmd_demo.c sets up the kernel and prints the summary. */
#ifndef RK_TOOL_DEMO_RUN_H
#define RK_TOOL_DEMO_RUN_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "demo_protocol.h"
#include "progress.h"
#include "ringkernel/ringkernel.h"

#define DEMO_MS ((uint64_t)1000000)
#define DEMO_SECOND ((uint64_t)1000000000)

enum {
    DEMO_SEEN_BITS = 1 << 20, /* duplicate detection window; > any number in flight */
};

typedef struct demo_options {
    const char *backend;
    const char *mode;
    double seconds;
    uint64_t messages;
    uint64_t batch;
    uint64_t queue;
    uint64_t workers;
    bool json;
    bool quiet;
} demo_options;

typedef struct demo_run {
    rk_kernel *kernel;
    const demo_options *opt;
    uint64_t base_id;        /* the kernel's id for seq 0 */
    bool have_base;
    uint64_t sent, verified; /* messages accepted by the kernel; replies that checked out */
    uint64_t wrong, handler_errors, lost;
    uint8_t *seen;           /* bit per seq (mod DEMO_SEEN_BITS): reply outstanding */
    demo_request *requests;
    demo_reply *replies;
    rk_reply_info *infos;
    uint64_t *rtt_ns;
    size_t rtt_count;
    uint64_t start_ns;
    progress_line progress;
} demo_run;

/* Set by the SIGINT handler: stop sending, drain, print the summary. */
extern volatile sig_atomic_t demo_interrupted;

/* Allocates the run's buffers for opt; false when out of memory. */
bool demo_run_init(demo_run *r, rk_kernel *kernel, const demo_options *opt);
void demo_run_free(demo_run *r);
/* Sends and checks messages until --seconds or --messages is reached or
 * the user interrupts. RK_HUNG when replies stop coming. */
rk_status demo_run_loop(demo_run *r);
/* Terminates the kernel (it drains what it accepted) and checks the last
 * replies; whatever never came back is counted as missing. */
rk_status demo_run_finish(demo_run *r);
/* Messages sent whose reply has not been checked yet. */
uint64_t demo_outstanding(const demo_run *r);

#endif
