/* Persistent simulations: state that lives on a device, a step function
 * over it, and the user's own typed commands, driven asynchronously from
 * the host with tickets. One DSL source serves every backend (compiled by
 * the system C compiler on the CPU, by NVRTC on CUDA, transpiled to WGSL on
 * WebGPU: there a function may not take or return a pointer into a field,
 * and a payload_size must be sizeof its payload_type).
 *
 * What the user writes (docs/simulations.md walks through one):
 *
 *   - The state layout: fields (device arrays of float, int32 or uint32)
 *     and scalars (32-bit values, read by every thread). The library
 *     generates, in front of the user's source,
 *
 *         typedef struct rk_sim_scalars { float <name>; ... } rk_sim_scalars;
 *         typedef struct rk_sim_state {
 *             float *<field>; ...;          one pointer per field, its type
 *             rk_sim_scalars *scalars;      in device memory
 *             int rows;                     the partition's extent
 *         } rk_sim_state;
 *         typedef struct rk_sim_region {
 *             int row_begin, row_end;       rows this call owns (row_end excluded)
 *             int tid, threads;             this thread and the threads sharing the rows
 *             int ahead;                    1: answer one step ahead (RK_SIM_QUERY_NEXT)
 *             uint64_t step;                steps completed before this call
 *         } rk_sim_region;
 *
 *   - The partition: `rows` units (rows of a 2-D grid, planes of a 3-D
 *     grid, slots of particles...). The library splits them into bands,
 *     one per block; every call gets a region of rows.
 *
 *   - A step function: RK_DEVICE void step(const rk_sim_state *s,
 *     const rk_sim_region *r) advances the rows [row_begin, row_end) by one
 *     step, split among r->threads threads. It may read the rows within
 *     halo_rows of its own (any row with halo_rows 0) as they were after
 *     the previous step, and writes only its own rows. Double buffering:
 *     use r->step & 1. A band starts a step once the bands it reads from
 *     (and that read from it) have finished the one before: no grid-wide
 *     barrier.
 *
 *   - Commands: RK_DEVICE uint64_t handler(const rk_sim_state *s,
 *     const rk_sim_region *r, const payload_type *p) for each command id,
 *     with a payload of up to RK_SIM_MAX_PAYLOAD bytes. A region command
 *     names the rows it touches when it is sent; the handler is called
 *     once per band that the rows reach, with r restricted to that band's
 *     share, by every thread of the band; it must write only those rows.
 *     The answer is the sum (uint64, wrapping) over those calls of the
 *     value returned where r->tid is 0 (not necessarily the block's thread
 *     0: use r->tid): one band's value for a region inside one band, a
 *     count for a count. A global command (RK_SIM_GLOBAL) runs once, on
 *     all rows, with every other band waiting at a barrier: it may change
 *     scalars and any row. Only global commands (and rk_sim_set_scalar)
 *     may change scalars: in the persistent pattern a step or region
 *     command reads a copy of them in the block's shared memory, taken
 *     after the last global command.
 *     rk_sim_answer_f32(float) / rk_sim_answer_i32(int) make answers.
 *
 * Ordering: every command and step sees the effect of every one sent
 * before it, in both patterns. A region command's handlers read and write
 * only its rows; it waits only for the bands within halo_rows of them to
 * finish the last step or global command, and is answered as soon as the
 * bands it reaches are done, ahead of the others. A global command waits
 * for every band.
 *
 * Patterns, same results bit for bit (the arithmetic per cell does not
 * depend on the partition; answers are integer sums):
 *   RK_SIM_PERSISTENT   one cooperative launch for the simulation's life;
 *                       commands are tagged words in a ring in host-mapped
 *                       memory; on a GPU one relay warp reads that ring and
 *                       copies it to device memory, where the bands read
 *                       it; answers are written straight back to host-mapped
 *                       memory by the band that completes a command.
 *   RK_SIM_TRADITIONAL  launches per command on one stream.
 *   RK_SIM_GRAPH        the traditional launches replayed from launch graphs
 *                       (on CUDA, CUDA graphs): one graph per shape (a step
 *                       of 2^k steps, k <= 6; a command over n bands), made
 *                       at its first use and replayed with the command's
 *                       arguments set in its nodes; a step of N is N's
 *                       binary digits' graphs in turn. On a backend without
 *                       launch graphs (CPU, WebGPU) it runs as
 *                       RK_SIM_TRADITIONAL, the same API and results, and
 *                       rk_sim_stats.executed says so.
 * On WebGPU (no host-mapped memory, no kernel that sees host writes) both
 * relaunch, with the same results: TRADITIONAL is a dispatch per command
 * (per step), submitted when sent; PERSISTENT is "relaunch per command
 * batch": commands wait on the host until a wait, finish, field or scalar
 * access, or a ring full of them, then run in order as one dispatch of one
 * block that takes the bands in turn. stats.launches counts dispatches.
 *
 * One host thread drives a simulation. Several may be open at once, on one
 * device or several.
 */
#ifndef RINGKERNEL_SIM_H
#define RINGKERNEL_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "ringkernel/device.h"
#include "ringkernel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RK_SIM_MAX_PAYLOAD 48u  /* bytes of a command's payload */
#define RK_SIM_MAX_FIELDS 16u
#define RK_SIM_MAX_SCALARS 16u
#define RK_SIM_MAX_COMMANDS 64u
#define RK_SIM_MAX_COMMAND_ID 0xffffu /* ids are 1 .. this */
#define RK_SIM_RING_SLOTS 64u   /* commands in flight at most; an answer stays readable this long */

typedef enum rk_sim_pattern { RK_SIM_PERSISTENT = 0, RK_SIM_TRADITIONAL = 1, RK_SIM_GRAPH = 2 } rk_sim_pattern;
typedef enum rk_sim_type { RK_SIM_F32 = 0, RK_SIM_I32 = 1, RK_SIM_U32 = 2 } rk_sim_type;

typedef struct rk_sim_field {
    const char *name; /* a C identifier: a member of rk_sim_state */
    rk_sim_type type;
    size_t count;     /* elements, >= 1; zero at creation */
} rk_sim_field;

typedef struct rk_sim_scalar {
    const char *name; /* a member of rk_sim_scalars */
    rk_sim_type type;
    double initial;   /* converted to the type */
} rk_sim_scalar;

/* A command's scope. Some kinds of region command say more of themselves,
 * so that the persistent pattern on a GPU can answer them sooner:
 *   RK_SIM_QUERY    only reads the state (it writes nothing but its
 *                   answer): it waits for no band but its own, and one sent
 *                   right behind a step of one step may be answered as soon
 *                   as its band has stepped the query's rows, ahead of the
 *                   rest of the band.
 *   RK_SIM_ROWWISE  writes row by row: what a call does to a row does not
 *                   depend on the other rows of the call, it uses no block
 *                   barrier or shared memory, and its answers add up (a
 *                   count, or 0). It may be called on any split of its rows
 *                   -- per band, or (one reaching at most four bands) in
 *                   one call by a warp of the relay's block alone
 *                   (r->threads 32) as soon as the bands near its rows are
 *                   past the commands before it, as an impulse is.
 *   RK_SIM_QUERY_NEXT  an RK_SIM_QUERY whose handler can also give the
 *                   answer the rows will have after one more step: called
 *                   with r->ahead = 1 and r->step = the steps its answer
 *                   is for, while the rows (and those within halo_rows)
 *                   still hold step r->step - 1 and the levels the step
 *                   function reads, it computes the step's result for
 *                   what it reads, with the step function's arithmetic
 *                   (the same bits). One sent right behind a step of one
 *                   step is then answered as soon as its band has read
 *                   both, before the band steps: the wave showcase's
 *                   "answer ahead of the barrier". Any call may be made
 *                   by one warp alone (r->threads 32): the handler uses
 *                   no block barrier or shared memory (a short one may be
 *                   answered by a warp of the relay's block, as an impulse
 *                   is applied). Otherwise (r->ahead 0) it is an
 *                   RK_SIM_QUERY. */
enum { RK_SIM_REGION = 0, RK_SIM_GLOBAL = 1, RK_SIM_QUERY = 2, RK_SIM_ROWWISE = 3, RK_SIM_QUERY_NEXT = 4 };

typedef struct rk_sim_command {
    uint32_t id;              /* 1 .. RK_SIM_MAX_COMMAND_ID, unique */
    const char *handler;      /* the DSL function's name */
    const char *payload_type; /* the DSL type its payload points to; NULL = "void" */
    uint32_t payload_size;    /* bytes the host sends, <= RK_SIM_MAX_PAYLOAD */
    int scope;                /* RK_SIM_REGION, RK_SIM_GLOBAL, RK_SIM_QUERY, RK_SIM_ROWWISE or RK_SIM_QUERY_NEXT */
} rk_sim_command;

typedef struct rk_sim_desc {
    const char *device;        /* rk_select_device spec; NULL = "cpu" */
    rk_sim_pattern pattern;
    const char *source;        /* DSL: types, the step function, the handlers */
    const char *source_name;   /* for compiler messages; NULL = "sim.c" */
    const rk_sim_field *fields;
    size_t field_count;
    const rk_sim_scalar *scalars;
    size_t scalar_count;
    int rows;                  /* the partition's extent, >= 1 */
    int halo_rows;             /* rows beyond its own on each side that a step reads; 0 = any row */
    const char *step;          /* the step function's name */
    const rk_sim_command *commands;
    size_t command_count;
    uint32_t blocks;           /* bands (persistent) or blocks per launch; 0 = per core on the CPU; on a GPU
                                * one per multiprocessor but two (persistent: the relay's block takes one,
                                * one is left free for other kernels) or but one (traditional, graph);
                                * never more than rows */
    uint32_t threads;          /* per block, a multiple of 32; 0 = 256 on GPUs, 32 on the CPU */
    const char *const *defines; /* passed to the compiler, "NAME=VALUE"; $RK_SIM_DEFINES ("A=1 B=2", at most
                                 * 16) adds more, for measuring the library's tuning macros (the RK_SIM_*
                                 * #ifndef knobs of src/sim/device/) without a rebuild */
    size_t define_count;
    uint32_t hang_timeout_ms;  /* a wait that sees no progress this long is RK_HUNG; 0 = 60 s */
} rk_sim_desc;

typedef struct rk_sim rk_sim;
typedef uint64_t rk_sim_ticket; /* 1, 2, 3, ... in the order sent */

/* Checks the description, generates and compiles the kernels (a compile
 * error is RK_COMPILE_FAILED with the compiler's log in rk_last_error()),
 * allocates zeroed fields and, persistent, launches the kernel. */
rk_status rk_sim_create(const rk_sim_desc *desc, rk_sim **out);
/* Stops the kernel and frees everything; NULL is fine. Commands still in
 * flight are first completed (waited for, bounded by the hang timeout, at
 * least 5 s without progress); the status says if some could not be:
 * RK_DEVICE_FAULT (freed), RK_HUNG (a kernel still runs: its memory is
 * left allocated rather than freed under it). A fault that a wait or send
 * already reported, with nothing left in flight, gives RK_OK here, as
 * rk_kernel_destroy does for a kernel that had already failed. */
rk_status rk_sim_destroy(rk_sim *sim);

/* Sends command `id` with its payload (size must equal the command's
 * payload_size) over rows [first_row, first_row + row_count) (ignored for
 * global commands). Returns at once unless RK_SIM_RING_SLOTS commands are
 * in flight. ticket may be NULL. Refused with nothing sent: an unknown id
 * (RK_NOT_FOUND), a payload of the wrong size (RK_MESSAGE_TOO_LARGE if over
 * the limit, else RK_INVALID_ARGUMENT), rows outside [0, rows)
 * (RK_OUT_OF_RANGE), a simulation that has failed (its status). */
rk_status rk_sim_send(rk_sim *sim, uint32_t id, const void *payload, size_t size, int first_row, int row_count,
                      rk_sim_ticket *ticket);
/* Sends `count` steps (count 0 is a no-op command). */
rk_status rk_sim_step(rk_sim *sim, uint32_t count, rk_sim_ticket *ticket);
/* Returns once command `ticket` has been applied; *answer (may be NULL)
 * receives its answer (0 for steps). RK_INVALID_ARGUMENT for a ticket never
 * handed out; RK_OUT_OF_RANGE for an answer asked more than
 * RK_SIM_RING_SLOTS commands later; RK_HUNG when nothing completes for the
 * hang timeout; RK_DEVICE_FAULT when the kernel has died. */
rk_status rk_sim_wait(rk_sim *sim, rk_sim_ticket ticket, uint64_t *answer);
/* Waits for every command sent so far. */
rk_status rk_sim_finish(rk_sim *sim);

/* Elements [first, first + count) of a field, in its type; after every
 * command sent so far. Out of range is RK_OUT_OF_RANGE, an unknown name
 * RK_NOT_FOUND; RK_HUNG when the commands' launches do not end within the
 * hang timeout. Writing a field of a running persistent simulation stops
 * its kernel and launches it again around the copy (rare by intent). */
rk_status rk_sim_read_field(rk_sim *sim, const char *field, size_t first, size_t count, void *dst);
rk_status rk_sim_write_field(rk_sim *sim, const char *field, size_t first, size_t count, const void *src);
/* A scalar's 32 bits, ordered with the commands (read after, write before
 * every later command). */
rk_status rk_sim_get_scalar(rk_sim *sim, const char *name, uint32_t *bits);
rk_status rk_sim_set_scalar(rk_sim *sim, const char *name, uint32_t bits);

typedef struct rk_sim_stats {
    rk_sim_pattern pattern;  /* as asked at creation */
    rk_sim_pattern executed; /* as it runs: RK_SIM_GRAPH without launch graphs runs as RK_SIM_TRADITIONAL */
    uint64_t commands;   /* sent, steps included */
    uint64_t steps;      /* time steps sent */
    uint64_t completed;  /* commands known complete */
    uint64_t launches;   /* kernel launches so far (persistent: 1 plus restarts; graph: the kernels
                          * replayed; WebGPU: dispatches, a persistent batch is one) */
    uint64_t graph_launches; /* graph pattern: graph replays so far */
    uint32_t blocks, threads;
    char backend[16];
    char device[256];
    char driver[64];     /* the device's driver / runtime version (rk_device_info.driver) */
} rk_sim_stats;

void rk_sim_get_stats(const rk_sim *sim, rk_sim_stats *out);

/* The full source compiled for this simulation (generated declarations,
 * the user's source, the library's kernels), for tools that compile it
 * themselves (an NVRTC check); on WebGPU the WGSL it became. Owned by sim. */
const char *rk_sim_source(const rk_sim *sim);
/* The same without creating a simulation: *out is malloc'd (free it). */
rk_status rk_sim_generate_source(const rk_sim_desc *desc, char **out);

const char *rk_sim_pattern_name(rk_sim_pattern pattern); /* "persistent", "traditional", "graph" */
int rk_sim_pattern_parse(const char *name, rk_sim_pattern *out);

/* Host side of answers. */
static inline float rk_sim_answer_as_f32(uint64_t answer) {
    union { uint32_t u; float f; } c;
    c.u = (uint32_t)answer;
    return c.f;
}
static inline uint32_t rk_sim_f32_bits(float f) {
    union { uint32_t u; float f; } c;
    c.f = f;
    return c.u;
}

#ifdef __cplusplus
}
#endif
#endif
