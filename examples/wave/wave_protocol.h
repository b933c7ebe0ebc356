/* What the wave showcase's host code and its kernels share: the command
 * ring the host writes in host-mapped memory, the replies the persistent
 * kernel writes there, and the block through which its block 0 hands a
 * grid-wide command to the other blocks. Compiled three ways: as host C11,
 * as DSL C on the CPU backend, and by NVRTC (after dsl.h, which gives it the
 * fixed-width types).
 *
 * One writer per word: the host writes only cmd[]; the kernel writes only
 * done and reply[]. A command becomes visible when the host stores its seq
 * (release) after every other field; a reply when the kernel stores done. */
#ifndef WAVE_PROTOCOL_H
#define WAVE_PROTOCOL_H

#if !defined(__CUDACC_RTC__)
#include <stdint.h>
#endif

#define WAVE_RING_SLOTS 64u /* commands in flight at most; a power of two */
#define WAVE_BUMP_RADIUS 3  /* an impulse moves the cells closer than this + 1 */
#define WAVE_BUMP_WIDTH (2 * WAVE_BUMP_RADIUS + 1)
#define WAVE_POLL_NS 64u    /* pause between two polls of a command word */

enum {
    WAVE_OP_INJECT = 1,  /* x, y, value = amplitude */
    WAVE_OP_SET_SPEED,   /* value = Courant number c * dt / dx */
    WAVE_OP_SET_DAMPING, /* value = damping per step, 0 <= value < 1 */
    WAVE_OP_STEP,        /* count = time steps */
    WAVE_OP_QUERY,       /* x, y: the reply carries the cell's value */
    WAVE_OP_STOP         /* the persistent kernel returns */
};

/* Command number seq lives in slot seq % WAVE_RING_SLOTS. */
typedef struct wave_cmd {
    uint32_t seq; /* 1, 2, 3, ...: stored last */
    uint32_t op;
    int32_t x, y;
    float value;
    uint32_t count;
    uint32_t reserved[2];
} wave_cmd;

typedef struct wave_reply {
    float value;  /* a query's answer */
    uint32_t seq; /* the command it answers */
} wave_reply;

/* Host-mapped (rk_buffer_alloc_mapped). */
typedef struct wave_mailbox {
    wave_cmd cmd[WAVE_RING_SLOTS];
    uint32_t done;       /* the last command the kernel has completed */
    uint32_t pad_[31];   /* done has its own 128-byte line */
    wave_reply reply[WAVE_RING_SLOTS];
} wave_mailbox;

/* Device memory: a step or stop command, from block 0 to the other blocks. */
typedef struct wave_broadcast {
    uint32_t seq;        /* grid-wide commands so far; stored last */
    uint32_t op, count;
    float c2, damping;   /* the parameters block 0 holds */
    uint32_t pad_[27];
} wave_broadcast;

#endif
