/* What the wave showcase's host code and its kernels share: the command
 * ring the host writes in host-mapped memory, the replies the persistent
 * kernel writes there, and the block through which its block 0 hands a
 * grid-wide command to the other blocks. Compiled three ways: as host C11,
 * as DSL C on the CPU backend, and by NVRTC (after dsl.h, which gives it the
 * fixed-width types).
 *
 * Tagged words, as in the ring kernels (src/device/cuda/ring.cu): every
 * 8-byte word of a command or reply carries the command's number in its
 * upper half and one 32-bit field in its lower half, and is written whole.
 * A reader knows a word is current when its tag matches, so one round of
 * loads over the bus reads several commands at once, with no flag to read
 * first and no fence on either side. One writer per word: the host writes
 * only cmd[], the kernel only reply[]. */
#ifndef WAVE_PROTOCOL_H
#define WAVE_PROTOCOL_H

#if !defined(__CUDACC_RTC__)
#include <stdint.h>
#endif

#define WAVE_RING_SLOTS 64u /* commands in flight at most; a power of two */
#define WAVE_BUMP_RADIUS 3  /* an impulse moves the cells closer than this + 1 */
#define WAVE_BUMP_WIDTH (2 * WAVE_BUMP_RADIUS + 1)
#define WAVE_CMD_POLL_NS 32u /* pause between two reads of the command ring (each takes a bus round trip) */
/* After a lone command, before reading the ring again: a host that waits for
 * each reply sends its next command only after the reply has crossed the
 * bus, and a read that reaches host memory earlier finds nothing and holds
 * block 0 for a whole round trip. */
#define WAVE_REPOLL_NS 500u
#define WAVE_NAP_NS 50u /* the naps WAVE_REPOLL_NS is taken in */

enum {
    WAVE_OP_INJECT = 1,  /* x, y, value = amplitude */
    WAVE_OP_SET_SPEED,   /* value = Courant number c * dt / dx */
    WAVE_OP_SET_DAMPING, /* value = damping per step, 0 <= value < 1 */
    WAVE_OP_STEP,        /* count = time steps */
    WAVE_OP_QUERY,       /* x, y: the reply carries the cell's value */
    WAVE_OP_STOP,        /* the persistent kernel returns */
    WAVE_OP_FENCE        /* persistent: cells written so far are visible to copies of the field */
};

#define WAVE_CMD_WORDS 8 /* tagged words per command: one 64-byte line */
#define WAVE_POLL_CMDS 4 /* commands block 0 reads in one round of loads (at most 32 / WAVE_CMD_WORDS) */

/* The fields of command seq, word by word, in slot seq % WAVE_RING_SLOTS. */
enum { WAVE_W_OP, WAVE_W_X, WAVE_W_Y, WAVE_W_VALUE, WAVE_W_COUNT };

/* Host-mapped (rk_buffer_alloc_mapped). reply[seq % WAVE_RING_SLOTS] is
 * (seq << 32) | the bits of a query's float answer (0 for other commands),
 * written once command seq has been applied; commands complete in order. */
typedef struct wave_mailbox {
    uint64_t cmd[WAVE_RING_SLOTS][WAVE_CMD_WORDS];
    uint64_t reply[WAVE_RING_SLOTS];
} wave_mailbox;

/* Device memory: a step or stop command, from block 0 to the other blocks,
 * written before the grid barrier that releases them. */
typedef struct wave_broadcast {
    uint32_t op, count;
    float c2, damping; /* the parameters block 0 holds */
} wave_broadcast;

#endif
