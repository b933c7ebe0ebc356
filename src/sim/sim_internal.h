/* What the simulation library's files share (sim.c: the API, create and
 * destroy; sim_source.c: the generated kernel source; sim_exec.c: sending,
 * launching and waiting in both patterns). */
#ifndef RK_SIM_INTERNAL_H
#define RK_SIM_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/backend_impl.h"
#include "ringkernel/sim.h"
#include "sim/device/sim_protocol.h"

typedef struct rk_sim_field_rt {
    char name[64];
    rk_sim_type type;
    size_t count;
    rk_buffer *buffer;
} rk_sim_field_rt;

typedef struct rk_sim_command_rt {
    uint32_t id;
    uint32_t payload_size;
    int scope;
} rk_sim_command_rt;

struct rk_sim_graphs; /* sim_graph.c */

struct rk_sim {
    rk_sim_pattern pattern;   /* as it runs (RK_SIM_GRAPH without launch graphs runs as RK_SIM_TRADITIONAL) */
    rk_sim_pattern requested; /* as asked */
    struct rk_sim_graphs *graphs; /* graph pattern: the graphs made so far */
    uint64_t graph_launches;
    const rk_backend *backend;
    uint32_t device_index;
    rk_context *ctx;
    rk_device_info info;
    char *source;
    rk_module *module;
    rk_function *persistent_fn, *step_fn, *command_fn;
    rk_stream *stream;      /* the kernel (persistent) or every launch (traditional) */
    rk_stream *copy_stream; /* persistent: copies while the kernel runs */
    rk_sim_field_rt fields[RK_SIM_MAX_FIELDS];
    size_t field_count;
    char scalar_names[RK_SIM_MAX_SCALARS][64];
    size_t scalar_count;
    rk_buffer *scalars;
    rk_sim_command_rt commands[RK_SIM_MAX_COMMANDS];
    size_t command_count;
    int rows;
    uint32_t blocks, threads;
    uint64_t hang_ns;
    rk_buffer *mailbox_buf, *board;
    rk_sim_mailbox *mb;
    rk_sim_ticket sent;      /* the last ticket handed out */
    rk_sim_ticket seen_done; /* every ticket up to here has completed (commands complete in order per slot) */
    uint64_t steps;          /* steps sent */
    uint64_t ticks;          /* ticks sent: a step of n is n, any other command 1 (device/sim_bands.c) */
    uint64_t first_tick;     /* persistent: the ticks before first_seq */
    bool relay;              /* persistent: one block relays the host's ring to the others */
    bool applier;            /* persistent with a relay: its block's second warp applies small writers (sim_exec.c) */
    uint32_t least_rows;     /* rows / blocks: the fewest rows a band has */
    bool applier_queries;    /* with applier: it answers a short RK_SIM_QUERY_NEXT too, when idle (sim_exec.c) */
    rk_sim_ticket last_relayed; /* the last command sent to the applier */
    unsigned words;          /* words of a command the host writes (rk__sim_wire_words) */
    int halo;                /* rows beyond its own a step reads; 0 = any */
    uint64_t launches;
    uint32_t first_seq;      /* persistent: the command the running kernel started at */
    bool running;            /* persistent: the kernel has been launched and not stopped */
    bool paused;             /* stopped by sim_registry for a module load on its device */
    bool stopping;           /* persistent: a STOP is in flight, so the kernel's return is expected */
    struct rk_sim *next;     /* sim_registry's list */
    rk_status failed;        /* RK_OK, or why the simulation can go on no more */
    rk_sim_ticket failure_told; /* a wait or finish reported the failure for the tickets up to here */
    /* The watcher thread synchronizes the kernel's stream while it runs, so
     * that a kernel that dies is seen without blocking the host. */
    pthread_t watcher;
    bool watching;
    int watch_state;         /* atomic: 0 running, 1 returned */
    rk_status watch_status;
    char watch_error[256];
    struct rk_sim_wg *wg;    /* WebGPU's relaunch state (sim_webgpu.c); NULL elsewhere */
};

/* sim_source.c: the whole source for a validated description. */
rk_status rk__sim_source(const rk_sim_desc *desc, char **out);
/* Validation shared by create and generate_source. */
rk_status rk__sim_check_desc(const rk_sim_desc *desc);

/* sim_exec.c */
rk_status rk__sim_launch_persistent(rk_sim *sim);
/* The arguments every kernel takes first (fields, scalars, mailbox, board,
 * rows); args has room for RK_SIM_MAX_FIELDS + 8. */
void rk__sim_state_args(rk_sim *sim, rk_arg *args, size_t *n);
/* A (non-step) command's launch after the state's arguments: appends the
 * command's number, the steps before it, its first band and the bands in
 * all; returns how many blocks to launch (the bands it covers). */
int rk__sim_command_args(const rk_sim *sim, uint32_t op, uint32_t begin, uint32_t end, rk_sim_ticket t,
                         uint64_t steps, rk_arg *args, size_t *n);

/* Sends command words (op, begin, end, arg, payload) as the next ticket. */
rk_status rk__sim_submit(rk_sim *sim, uint32_t op, uint32_t begin, uint32_t end, uint32_t arg, const void *payload,
                         size_t size, rk_sim_ticket *ticket);
rk_status rk__sim_wait(rk_sim *sim, rk_sim_ticket t);
/* The words of a command on the wire for d: 8 (one 64-byte line) where every
 * payload fits RK_SIM_SHORT_PAYLOAD bytes, else RK_SIM_CMD_WORDS; the
 * generated kernels read as many (sim_protocol.h, RK_SIM_WORDS). With
 * RK_SIM_SHORT_COMMANDS 0 when the library is built, always 16. */
#ifndef RK_SIM_SHORT_COMMANDS
#define RK_SIM_SHORT_COMMANDS 1
#endif
unsigned rk__sim_wire_words(const rk_sim_desc *d);
rk_status rk__sim_read_answer(rk_sim *sim, rk_sim_ticket t, uint64_t *answer);
/* Moves seen_done past the commands since completed (each a look at a done word). */
void rk__sim_advance(rk_sim *sim);
/* rk__sim_wait, then the answer (rk__sim_read_answer), loaded while waiting where it can be. */
rk_status rk__sim_wait_answer(rk_sim *sim, rk_sim_ticket t, uint64_t *answer);
/* Waits for the watcher thread to return (RK_OK if none runs): its stream's status. */
rk_status rk__sim_join_watcher(rk_sim *sim);
/* Stops the persistent kernel (STOP, then the watcher's return). */
rk_status rk__sim_stop(rk_sim *sim);
/* Traditional and graph, after rk_sim_finish: the launches have ended too,
 * so a copy may read or write the state; RK_HUNG when they do not within
 * the hang timeout. RK_OK at once for the other patterns. */
rk_status rk__sim_drain(rk_sim *sim);

/* sim_graph.c: the graph pattern. Whether the backend has launch graphs
 * (else RK_SIM_GRAPH runs as RK_SIM_TRADITIONAL); the launches of command
 * t (its words in the ring; `steps` steps sent before it) replayed from
 * graphs; the graphs freed (before the module). */
bool rk__sim_graph_available(const rk_sim *sim);
rk_status rk__sim_graph_launch(rk_sim *sim, uint32_t op, uint32_t begin, uint32_t end, uint32_t arg, rk_sim_ticket t,
                               uint64_t steps);
void rk__sim_graph_destroy(rk_sim *sim);

#endif
