/* What the wave simulation's host files share (wave_sim.c: the API, create
 * and destroy; wave_ring.c: the persistent pattern's command ring;
 * wave_launch.c: the traditional pattern's launches and copies). */
#ifndef WAVE_SIM_INTERNAL_H
#define WAVE_SIM_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "ringkernel/device.h"
#include "wave_protocol.h"
#include "wave_sim.h"

enum {
    DEFAULT_SIZE = 256,
    STEP_THREADS = 256,        /* traditional step kernel's block */
    INJECT_THREADS = 64,       /* >= WAVE_BUMP_WIDTH^2 */
    SPIN_BEFORE_YIELD = 2000,  /* polls before a waiting host thread starts yielding its core */
};
#define MAX_SPEED 0.70710678f  /* 1/sqrt(2): the 2-D leapfrog stability limit */
#define HUNG_AFTER_NS 60000000000ull

struct wave_sim {
    wave_pattern pattern;
    const rk_backend *backend;
    uint32_t device_index;
    rk_context *ctx;
    rk_device_info info;
    rk_module *module;
    rk_function *step_fn, *inject_fn, *persistent_fn;
    rk_buffer *field[2];
    rk_stream *stream;       /* traditional: every command; persistent: the kernel */
    rk_stream *copy_stream;  /* persistent: reads of the field while the kernel runs */
    int nx, ny;
    float speed, damping;
    unsigned parity;         /* field[parity] is the current level once every command sent is applied */
    uint64_t steps;
    uint32_t blocks, threads;
    uint32_t blocks_requested; /* persistent: before any halving */
    uint32_t step_blocks;    /* traditional: wave_step's grid */
    wave_ticket sent;        /* the last ticket handed out */
    uint8_t slot_op[WAVE_RING_SLOTS];
    /* persistent */
    rk_buffer *mailbox_buf, *board, *band_words;
    wave_mailbox *mb;        /* host view of mailbox_buf */
    wave_ticket known_done;  /* every ticket up to here is known complete (hang detection) */
    wave_ticket seen_done;   /* the latest ticket seen complete: the kernel has read every command up to it */
    bool running;
    /* traditional */
    wave_ticket synced;      /* every ticket up to here is complete */
    rk_buffer *landing_buf;  /* host-mapped slots that query copies land in */
    float *landing;
};

/* Errors: the message goes to wave_last_error(). */
rk_status wave__fail(rk_status status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A library call failed: keep its reason under our own heading. */
rk_status wave__lib_fail(rk_status status, const char *what);

#define TRY(call, what)                                      \
    do {                                                     \
        rk_status s_ = (call);                               \
        if (s_ != RK_OK) return wave__lib_fail(s_, what);    \
    } while (0)

uint64_t wave__now_ns(void);
void wave__cpu_relax(void);

/* Persistent pattern (wave_ring.c): sends a command into the ring (waiting
 * for its slot), waits until command t has completed, and reads the reply
 * word of command t's slot. */
rk_status wave__ring_send(wave_sim *sim, uint32_t op, int x, int y, float value, uint32_t count,
                          wave_ticket *ticket);
rk_status wave__ring_wait(wave_sim *sim, wave_ticket t);
/* Sends a command without arguments (fence, stop) and waits until it has completed. */
rk_status wave__ring_call(wave_sim *sim, uint32_t op);
uint64_t wave__ring_reply(const wave_sim *sim, wave_ticket t);

/* Traditional pattern (wave_launch.c): one command as launches and copies
 * on the simulation's stream. */
rk_status wave__launch_send(wave_sim *sim, uint32_t op, int x, int y, float value, uint32_t count,
                            wave_ticket *ticket);

#endif
