/* The words the wave showcase's persistent kernel reads and writes, in the
 * ringkernel DSL: a float's bits, replies, commands read a warp at a time,
 * and the pause a polling loop takes. Shared by block 0 (wave_relay.c) and
 * the bands (wave_persistent.c); wave_sim.c compiles it after
 * wave_protocol.h and wave_kernels.c. */
#ifndef WAVE_PROTOCOL_H
#include "wave_protocol.h"
#endif

/* What every block of the persistent kernel works on: the two time levels,
 * the host's mailbox, the board, the bands' progress words, the grid. */
typedef struct wave_grid {
    float *f0, *f1;
    wave_mailbox *mb;
    wave_board *board;
    uint64_t *band_words;
    int bands, nx, ny;
} wave_grid;

/* A float's bits and back: replies and command fields carry floats as
 * 32-bit words. */
RK_DEVICE uint32_t wave_f32_bits(float f) {
    union { float f; uint32_t u; } c;
    c.f = f;
    return c.u;
}

RK_DEVICE float wave_bits_f32(uint32_t u) {
    union { float f; uint32_t u; } c;
    c.u = u;
    return c.f;
}

/* Command seq has been applied; value_bits: a query's answer. One whole
 * tagged word, so the host needs no fence to read it. */
RK_DEVICE void wave_reply_to(wave_mailbox *mb, uint32_t seq, uint32_t value_bits) {
    store_relaxed_u64(&mb->reply[seq & (WAVE_RING_SLOTS - 1)], (uint64_t)seq << 32 | value_bits);
}

/* Command seq has been answered: the reply, and its mark on the board,
 * where warp 0 of block 0 watches for it (wave_await_answer); the reply's
 * store first, so that it is on its way to the host. */
RK_DEVICE void wave_answer(wave_mailbox *mb, wave_board *board, uint32_t seq, uint32_t value_bits) {
    wave_reply_to(mb, seq, value_bits);
    store_relaxed_u64(&board->answered[seq & (WAVE_LOG_SLOTS - 1)], seq);
}

/* For a warp whose lane l loaded word l % WAVE_CMD_WORDS of command
 * next + l / WAVE_CMD_WORDS: how many commands from next on are whole
 * (every word tagged with its number); the same in every lane. */
RK_DEVICE int wave_whole_commands(uint64_t word, uint32_t next) {
    const uint32_t seq = next + (uint32_t)(lane_id() / WAVE_CMD_WORDS);
    unsigned whole = warp_ballot((uint32_t)(word >> 32) == seq);
    int n = 0;
    while (n < WAVE_POLL_CMDS && ((whole >> (n * WAVE_CMD_WORDS)) & 0xffu) == 0xffu) n++;
    return n;
}

/* The word of `ring` (slots - 1 = mask) that this lane reads for commands
 * next .. next + WAVE_POLL_CMDS - 1. */
RK_DEVICE const uint64_t *wave_lane_word(const uint64_t *ring, uint32_t mask, uint32_t next) {
    const int lane = lane_id();
    const uint32_t seq = next + (uint32_t)(lane / WAVE_CMD_WORDS);
    return &ring[(seq & mask) * WAVE_CMD_WORDS + (uint32_t)(lane % WAVE_CMD_WORDS)];
}

/* About ns nanoseconds, in short naps: one long sleep_ns may end anywhere
 * between 0 and twice its argument on a GPU, and this wait is only useful
 * when it ends close to its length. */
RK_DEVICE void wave_pause(unsigned ns) {
    for (unsigned t = 0; t < ns; t += WAVE_NAP_NS) sleep_ns(WAVE_NAP_NS);
}

