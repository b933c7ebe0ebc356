/* What the wave showcase's host code and its kernels share: the command
 * ring the host writes in host-mapped memory, the replies the persistent
 * kernel writes there, and the device-side board through which its blocks
 * pass commands and progress to each other. Compiled three ways: as host
 * C11, as DSL C on the CPU backend, and by NVRTC (after dsl.h, which gives
 * it the fixed-width types).
 *
 * Tagged words, as in the ring kernels (src/device/cuda/ring.cu): every
 * 8-byte word of a command or reply carries the command's number in its
 * upper half and one 32-bit field in its lower half, and is written whole.
 * A reader knows a word is current when its tag matches, so one round of
 * loads reads several commands at once, with no flag to read first and no
 * fence on either side. One writer per word: the host writes only cmd[],
 * the kernel only reply[].
 *
 * The persistent grid: block 0 relays commands from the host's ring to the
 * board's log (in device memory, close to every block) with one warp and
 * applies impulses with another; each other block owns a band of rows, reads the log
 * itself and applies every other command to its own rows. Between two
 * steps a band waits only for the two bands next to it (the stencil reads
 * one row past each edge) and for the impulses sent before, never for the
 * whole grid. */
#ifndef WAVE_PROTOCOL_H
#define WAVE_PROTOCOL_H

#if !defined(__CUDACC_RTC__)
#include <stdint.h>
#endif

#define WAVE_RING_SLOTS 64u /* commands in flight at most; a power of two */
#define WAVE_BUMP_RADIUS 3  /* an impulse moves the cells closer than this + 1 */
#define WAVE_BUMP_WIDTH (2 * WAVE_BUMP_RADIUS + 1)
/* Tuning: each may be set when the kernels are compiled, e.g. with
 * WAVE_KERNEL_DEFINES="WAVE_ANSWER_PAUSE_NS=300u" in the environment (wave_sim.c). */
#ifndef WAVE_CMD_POLL_NS
#define WAVE_CMD_POLL_NS 32u /* relay: pause between two reads of the host's ring (each takes a bus round trip) */
#endif
#define WAVE_NAP_NS 50u /* the naps a pause is taken in */
#ifndef WAVE_ANSWER_PAUSE_NS
#define WAVE_ANSWER_PAUSE_NS 200u /* relay: pause after an answer before it reads the host's ring again */
#endif
#ifndef WAVE_ANSWER_POLLS
#define WAVE_ANSWER_POLLS 16 /* relay: reads of an answer's word at most before it reads the host's ring anyway */
#endif
#ifndef WAVE_LOG_POLL_NS
#define WAVE_LOG_POLL_NS 20u /* bands: pause between two reads of the log or a neighbour's progress */
#endif

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
#define WAVE_POLL_CMDS 4 /* commands a warp reads in one round of loads (at most 32 / WAVE_CMD_WORDS) */

/* The fields of command seq, word by word, in slot seq % WAVE_RING_SLOTS. */
enum { WAVE_W_OP, WAVE_W_X, WAVE_W_Y, WAVE_W_VALUE, WAVE_W_COUNT };

/* Host-mapped (rk_buffer_alloc_mapped). reply[seq % WAVE_RING_SLOTS] is
 * (seq << 32) | the bits of a query's float answer (0 otherwise), written
 * once command seq has been applied: an impulse by block 0, a query by the
 * band that holds the cell, a step, a fence or stop by the last band to
 * finish it, a parameter by the first band. */
typedef struct wave_mailbox {
    uint64_t cmd[WAVE_RING_SLOTS][WAVE_CMD_WORDS];
    uint64_t reply[WAVE_RING_SLOTS];
} wave_mailbox;

/* Device memory. log[seq % WAVE_LOG_SLOTS] holds the words of command seq
 * exactly as the host wrote them; longer than the host's ring, a slot is
 * written again only once every band has read it (WAVE_BAND_TAKEN).
 * done[] counts the bands that finished a command every band answers.
 * answered[seq % WAVE_LOG_SLOTS] is seq once command seq's reply has been
 * sent: block 0 times its next read of the host's ring by it.
 * applier_taken: the last command block 0's impulse warp has read from the
 * log (as WAVE_BAND_TAKEN for a band). */
#define WAVE_LOG_SLOTS 256u
typedef struct wave_board {
    uint64_t log[WAVE_LOG_SLOTS][WAVE_CMD_WORDS];
    int done[WAVE_LOG_SLOTS];
    uint64_t answered[WAVE_LOG_SLOTS];
    uint64_t applier_taken;
} wave_board;

/* Device memory, WAVE_BAND_WORDS words per band b: the steps it has
 * finished (released when its rows are written); the last command it has
 * read from the log; the last impulse block 0 has applied that reaches its
 * rows or the rows next to them (released when their cells are written);
 * and the last command it has finished (released before it reads the log
 * again or waits), so that block 0 changes no cell a command before an
 * impulse still reads. Four words, padded to a 64-byte line per band: no
 * two bands share one (a batch of steps ran 1.7% faster so on the H100). */
#define WAVE_BAND_WORDS 8
#define WAVE_BAND_STEPS(words, band) ((words)[WAVE_BAND_WORDS * (band)])
#define WAVE_BAND_TAKEN(words, band) ((words)[WAVE_BAND_WORDS * (band) + 1])
#define WAVE_BAND_IMPULSES(words, band) ((words)[WAVE_BAND_WORDS * (band) + 2])
#define WAVE_BAND_FINISHED(words, band) ((words)[WAVE_BAND_WORDS * (band) + 3])

/* Band b of `bands` owns rows WAVE_BAND_FIRST_ROW(b) up to the next band's
 * first row; every band has at least one row (bands <= ny). */
#define WAVE_BAND_FIRST_ROW(b, bands, ny) ((int)((uint64_t)(b) * (uint64_t)(ny) / (uint64_t)(bands)))
/* The band that owns row r: the last band whose first row is at or before r. */
#define WAVE_BAND_OF_ROW(r, bands, ny) ((int)((((uint64_t)(r) + 1) * (uint64_t)(bands) - 1) / (uint64_t)(ny)))
/* An impulse at row y reaches the rows WAVE_REACH_TOP .. WAVE_REACH_BOTTOM:
 * those it changes and the ones next to them, whose stencil reads them. A
 * band is reached when any of its rows is; the first and last band reached. */
#define WAVE_REACH_TOP(y) ((y) - WAVE_BUMP_RADIUS - 1)
#define WAVE_REACH_BOTTOM(y) ((y) + WAVE_BUMP_RADIUS + 1)
#define WAVE_IMPULSE_REACHES(y, row_begin, row_end) \
    (WAVE_REACH_BOTTOM(y) >= (row_begin) && WAVE_REACH_TOP(y) < (row_end))
#define WAVE_IMPULSE_FIRST_BAND(y, bands, ny) \
    WAVE_BAND_OF_ROW(WAVE_REACH_TOP(y) < 0 ? 0 : WAVE_REACH_TOP(y), bands, ny)
#define WAVE_IMPULSE_LAST_BAND(y, bands, ny) \
    WAVE_BAND_OF_ROW(WAVE_REACH_BOTTOM(y) > (ny) - 1 ? (ny) - 1 : WAVE_REACH_BOTTOM(y), bands, ny)

#endif
