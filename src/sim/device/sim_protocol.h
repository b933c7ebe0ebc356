/* What a simulation's host code (src/sim) and its kernels (sim_device.c,
 * sim_relay.c, sim_bands.c) share: the command ring the host writes in host-mapped memory, the
 * answers the kernels write there, and the device-side board through
 * which the bands of a command add up their answers. Compiled as host C11
 * and as DSL (CPU compiler, NVRTC).
 *
 * Tagged words, as in the wave showcase and the ring kernels: every 8-byte
 * command word carries the command's number in its upper half and one
 * 32-bit field in its lower half and is written whole, so a reader knows a
 * word is current from its tag, with no flag to read first. One writer per
 * word: the host writes cmd[], the kernels reply[] and taken[]. */
#ifndef RK_SIM_PROTOCOL_H
#define RK_SIM_PROTOCOL_H

#if !defined(__CUDACC_RTC__)
#include <stdint.h>
#endif

#define RK_SIM_SLOTS 64u          /* = RK_SIM_RING_SLOTS; a power of two */
#define RK_SIM_CMD_WORDS 16       /* 4 header words and 12 of payload (48 bytes) */
#define RK_SIM_PAYLOAD_WORDS 12
/* Words of a command as it crosses the bus and sits in the log: all 16, or
 * the first 8 for a simulation whose payloads all fit 16 bytes (the
 * generated source then defines RK_SIM_WORDS 8, and the host writes 8
 * words): one 64-byte line a command, four commands in one warp-wide load,
 * as in the wave showcase. */
#ifndef RK_SIM_WORDS
#define RK_SIM_WORDS RK_SIM_CMD_WORDS
#endif
#define RK_SIM_SHORT_PAYLOAD 16                /* bytes of payload at most where RK_SIM_WORDS is 8 */
#define RK_SIM_PARTS (32 / RK_SIM_WORDS)       /* commands in one warp-wide load: 2 or 4 */
#define RK_SIM_SECOND (RK_SIM_PARTS < 4)       /* a read of four commands takes a second load */
#define RK_SIM_PART_OF(i) ((i) % RK_SIM_PARTS) /* command i of a read: in which lanes ... */
#define RK_SIM_LOAD_OF(i) ((i) / RK_SIM_PARTS) /* ... of which load (0 or 1) */
#ifndef RK_SIM_POLL_NS
#define RK_SIM_POLL_NS 32u        /* pause between two reads of the host's ring */
#endif
#ifndef RK_SIM_ANSWER_PAUSE_NS
#define RK_SIM_ANSWER_PAUSE_NS 200u /* relay, with RK_SIM_READ_AFTER_ANSWER_NS 0: after it saw an answer, before it reads the host's ring again */
#endif
#ifndef RK_SIM_READ_AFTER_ANSWER_NS
#define RK_SIM_READ_AFTER_ANSWER_NS 450u /* relay: its next read this long after an answer left (sim_relay.c); 0: RK_SIM_ANSWER_PAUSE_NS after it saw the answer */
#endif
#ifndef RK_SIM_ANSWER_POLLS
#define RK_SIM_ANSWER_POLLS 16    /* relay: looks at an answer's mark at most before reading the ring anyway */
#endif

/* The words of a command. */
enum { RK_SIM_W_OP, RK_SIM_W_BEGIN, RK_SIM_W_END, RK_SIM_W_ARG, RK_SIM_W_PAYLOAD };

/* Operations: the user's ids are 1 .. 0xffff; the library's own are above. */
#define RK_SIM_OP_STEP 0x10000u       /* ARG = steps */
#define RK_SIM_OP_FENCE 0x10001u      /* every write so far is visible to copies */
#define RK_SIM_OP_STOP 0x10002u       /* the persistent kernel returns */
#define RK_SIM_OP_GET_SCALAR 0x10003u /* ARG = index; the answer is its bits */
#define RK_SIM_OP_SET_SCALAR 0x10004u /* ARG = index, payload word 0 = bits */
#define RK_SIM_OP_RELAYED 0x40000000u /* in OP: the relay's block applies it (the host marks it: sim_exec.c, sim_applier.c) */
#define RK_SIM_ARG_QUERY 1u   /* ARG of a user command: its scope is RK_SIM_QUERY (it only reads) */
#define RK_SIM_ARG_ROWWISE 2u /* ARG of a user command: its scope is RK_SIM_ROWWISE */
#define RK_SIM_ARG_NEXT 4u    /* with RK_SIM_ARG_QUERY: its scope is RK_SIM_QUERY_NEXT */
/* BEGIN/END of a user command: its rows; END = 0 and BEGIN = 1 for a global one. */

/* Host-mapped. reply[seq % SLOTS] is command seq's reply once it has been
 * applied: two tagged words, seq << 32 | the answer's low 32 bits (the
 * done word: its tag says the command completed), then seq << 32 | the
 * high 32 bits, which a GPU writes with one 16-byte store -- one write over
 * the bus and one line of the host's cache an answer, as the former wave
 * kernel's one-word reply (three stores to two lines before: sim_device.c,
 * rk_sim_answer_host_). No release before it (a system-scope release costs
 * the answering thread over a microsecond), so a host that has seen the
 * done word takes the answer once both tags say seq (sim_exec.c).
 * taken[seq % SLOTS] is seq once every band has read command seq, written
 * only without a relay (the CPU): a region command completes when the bands
 * it touches are done, maybe before the others have read it, and the host
 * may write its slot again only after both. With a relay a command completes
 * only after the relay has copied it to the log, so done alone frees the
 * slot, and the relay writes nothing over the bus but the log's copy. */
typedef struct rk_sim_mailbox {
    uint64_t cmd[RK_SIM_SLOTS][RK_SIM_CMD_WORDS];
    uint64_t reply[RK_SIM_SLOTS][2]; /* 16-byte aligned: cmd[] is a multiple of 16 bytes */
    uint64_t taken[RK_SIM_SLOTS];
} rk_sim_mailbox;

/* Device memory. log[]: the relay's copies of the host's ring (same tagged
 * words), read by the bands from the L2. band_words[]: for each band b its
 * band_done (the ticks band b has finished) and band_taken (the last
 * command band b has read from the log), where sim_device.c's RK_SIM_DONE
 * and RK_SIM_TAKEN place them. The bands of a command add their answers in acc[] and count
 * themselves in arrived[]; the last one answers and sets both back.
 * answered[seq % SLOTS] has seq in its low half once command seq is
 * answered, and the answering thread's clock (low 32 bits) in its high
 * half: the relay reads it from the L2 to know when the host may write its
 * next command.
 * readers[]: without a relay, the blocks that have read a command from the
 * host's ring (the last one says taken). */
#define RK_SIM_MAX_BANDS 1024
/* trace[seq % RK_SIM_TRACE_SLOTS]: with RK_SIM_TRACE compiled in (a
 * measuring aid, 0 by default: nothing is written), %globaltimer stamps of
 * command seq on its way (RK_SIM_T_*), dumped by rk_sim_destroy to
 * $RK_SIM_TRACE_FILE (sim.c). */
#define RK_SIM_TRACE_SLOTS 1024u
enum {
    RK_SIM_T_SEQ,    /* seq, so that a reader knows the slot is this command's */
    RK_SIM_T_OP,     /* its OP word */
    RK_SIM_T_ISSUE,  /* the relay issued the read of the host's ring that found it */
    RK_SIM_T_FOUND,  /* that read came back */
    RK_SIM_T_LOGGED, /* the relay has stored it (and the rest of its read) to the log */
    RK_SIM_T_BAND,   /* the band that answers it (band 0 for a step or global command) read it from the log;
                      * for one the relay's block applies, the block started on it */
    RK_SIM_T_ANSWER, /* its answer's stores to the host were issued */
    RK_SIM_T_DECIDING, /* the relay block's applier has the command (sim_applier.c); for a query
                        * answered ahead at its band's read, packed (sim_bands.c, rk_sim_batch.polled):
                        * bits 63-32 the low 32 bits of when the band began to poll the log for it, 31-16
                        * 8-ns units since the band found its batch before, 15-8 its looks at the
                        * log, 7-4 the commands read, bit 0 whether its neighbours were past the step
                        * before (scripts/sim-trace-summary.py decodes it) */
    RK_SIM_T_MARK_SEEN, /* the relay, waiting before its next read, saw its answer's mark */
    RK_SIM_T_READ_BACK, /* the read the relay issued after copying it came back */
    /* A step's way through band RK_SIM_TRACE_BAND (sim_bands.c); each of its
     * stamps held the band up 0.1-0.4 us in the wave's mixed workload (H200,
     * session 22: stores behind its other warps' loads), so the later ones are late: */
    RK_SIM_T_B_READ,     /* the band has the batch it is in (after the read's barrier) */
    RK_SIM_T_B_READY,    /* the band starts its rows: what it waited for is done */
    RK_SIM_T_B_STEPPED,  /* the band's rows are stepped (after the barrier) */
    RK_SIM_T_B_SAID,     /* its finisher has released that it finished the step */
    RK_SIM_T_B_GATHERED, /* its gatherer (sim_bands.c) has counted the band in (rk_sim_gather_ returned) */
    RK_SIM_T_WORDS = 15
};
/* Copies of the log the relay writes (RK_SIM_LOG_COPIES, at most
 * RK_SIM_LOG_ROOM; one store each): band b reads copy b % RK_SIM_LOG_COPIES,
 * so that 16 bands poll a line of the L2 rather than all of them (H200,
 * session 25, 8 against 1: the wave's 10 000 steps 18.14 -> 17.69 ms, heat3d
 * 64^3's step 7.16 -> 7.07 us; the mixed workload with queries waited moved
 * within its runs' spread). */
#define RK_SIM_LOG_ROOM 8
#ifndef RK_SIM_LOG_COPIES
#define RK_SIM_LOG_COPIES 8
#endif
#if RK_SIM_LOG_COPIES < 1 || RK_SIM_LOG_COPIES > RK_SIM_LOG_ROOM
#error "RK_SIM_LOG_COPIES must be 1 .. RK_SIM_LOG_ROOM"
#endif
typedef struct rk_sim_board {
    uint64_t log[RK_SIM_LOG_ROOM][RK_SIM_SLOTS][RK_SIM_CMD_WORDS];
    uint64_t band_words[2 * RK_SIM_MAX_BANDS]; /* band_done and band_taken of each band, and of the relay block's applier (sim_device.c, RK_SIM_DONE) */
    uint64_t answered[RK_SIM_SLOTS];
    uint64_t acc[RK_SIM_SLOTS];
    int arrived[RK_SIM_SLOTS];
    int readers[RK_SIM_SLOTS];
    uint64_t trace[RK_SIM_TRACE_SLOTS][RK_SIM_T_WORDS];
    uint64_t released[RK_SIM_SLOTS]; /* seq once the relay block's applier has released command seq's writes */
} rk_sim_board;

/* Band b of `bands` owns rows RK_SIM_BAND_FIRST(b) up to the next band's
 * first row (bands <= rows: every band has a row). */
#define RK_SIM_BAND_FIRST(b, bands, rows) ((int)((uint64_t)(b) * (uint64_t)(rows) / (uint64_t)(bands)))
#define RK_SIM_BAND_OF_ROW(r, bands, rows) ((int)((((uint64_t)(r) + 1) * (uint64_t)(bands) - 1) / (uint64_t)(rows)))

#endif
