/* The wave showcase's persistent kernel, in the ringkernel DSL: one
 * cooperative launch for the simulation's lifetime. Block 0 relays commands
 * from the host's ring (host-mapped memory) to a log in device memory and
 * applies impulses itself; every other block owns a band of rows, reads the
 * log and applies each command to its rows, waiting only for the bands next
 * to it and for impulses that reach it (wave_protocol.h says what each word
 * means; docs/showcase.md draws it). wave_sim.c compiles it after
 * wave_protocol.h and wave_kernels.c, whose cell update it shares with the
 * traditional pattern. */
#ifndef WAVE_PROTOCOL_H
#include "wave_protocol.h"
#endif

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

/* Warp-wide, each lane for bands lane, lane + 32, ...: whether every band
 * has finished command seq and those before it (relaxed loads, in flight
 * together; a fence after a true answer makes it an acquire). */
RK_DEVICE int wave_bands_done(const uint64_t *band_words, int bands, uint32_t seq) {
    int done = 1;
    for (int b = lane_id(); b < bands; b += 32)
        done &= (int32_t)((uint32_t)load_relaxed_u64(&WAVE_BAND_FINISHED(band_words, b)) - seq) >= 0;
    return warp_all(done);
}

/* Warp-wide: the oldest command every band has read from the log, as far
 * as it is behind `next`. */
RK_DEVICE uint32_t wave_oldest_taken(const uint64_t *band_words, int bands, uint32_t next) {
    int lag = 0;
    for (int b = lane_id(); b < bands; b += 32) {
        int behind = (int)(next - (uint32_t)load_relaxed_u64(&WAVE_BAND_TAKEN(band_words, b)));
        lag = behind > lag ? behind : lag;
    }
    for (int d = 16; d > 0; d /= 2) {
        int other = shfl_xor_i32(lag, d);
        lag = other > lag ? other : lag;
    }
    return next - (uint32_t)lag;
}

/* Block 0. Warp 0 copies commands from the host's ring into the log (a log
 * slot is written again only once every band has read the command it
 * held) and keeps an eye on how far the bands are. The whole block applies
 * impulses itself, as soon as it reads them: once every band has finished
 * the commands sent before one (the bands' next step, query or fence waits
 * for it in turn). Returns once the stop command is in the log. */
RK_DEVICE void wave_relay(float *f0, float *f1, wave_mailbox *mb, wave_board *board, uint64_t *band_words,
                          int bands, int nx, int ny, uint32_t (*fields)[WAVE_POLL_CMDS * WAVE_CMD_WORDS], int *count) {
    const int tid = thread_idx_x(), nt = block_dim_x(), lane = lane_id();
    uint32_t next = 1, taken = 0; /* taken: every band has read the log up to here */
    uint64_t impulses = 0;        /* impulses applied */
    int buf = 0;                  /* fields[buf]: this batch of commands (two, so that warp 0 can read the next
                                   * batch while the others finish this one) */
    /* The last command sent that reads or writes cells in the bands (a step,
     * query or fence), and the last such command block 0 has seen every band
     * finish, with a fence after: an impulse needs both equal before it
     * changes cells. The same in every thread (they follow the commands). */
    uint32_t last_access = 0, acquired = 0;
    int lone = 0;                 /* warp 0: the host seems to wait for each answer (ping-pong) */
    for (;;) {
        if (tid < 32) {
            uint64_t word = 0;
            int n = 0, empty = 0;
            /* A host that waits for each answer sends its next command only
             * once the answer has crossed the bus: a read that reaches host
             * memory before that finds nothing and costs a whole round trip. */
            if (lone) wave_pause(WAVE_REPOLL_NS);
            int caught_up = 0;
            for (;; empty++) {
                word = load_relaxed_u64(wave_lane_word(&mb->cmd[0][0], WAVE_RING_SLOTS - 1, next));
                if (acquired != last_access) /* while the bus answers */
                    caught_up = wave_bands_done(band_words, bands, last_access);
                n = wave_whole_commands(word, next);
                if (n) break;
                sleep_ns(WAVE_CMD_POLL_NS);
            }
            /* Ping-pong: one command that the ring made us wait for, or
             * one found at once after such a pause (without this, a pause
             * that works would switch itself off). */
            lone = n == 1 && (empty >= 1 || lone);
            /* With the loads that saw the bands done, an acquire, if the
             * batch starts with an impulse that needs one. */
            const int fence_now = acquired != last_access && caught_up &&
                                  warp_any(lane == WAVE_W_OP && (uint32_t)word == WAVE_OP_INJECT);
            const uint32_t last = next + (uint32_t)n - 1;
            while ((int32_t)(taken + WAVE_LOG_SLOTS - last) < 0) {
                taken = wave_oldest_taken(band_words, bands, next);
                if ((int32_t)(taken + WAVE_LOG_SLOTS - last) < 0) sleep_ns(WAVE_LOG_POLL_NS);
            }
            if (lane < n * WAVE_CMD_WORDS)
                store_relaxed_u64((uint64_t *)wave_lane_word(&board->log[0][0], WAVE_LOG_SLOTS - 1, next), word);
            if (fence_now) thread_fence(); /* after the log's stores: the bands need not wait for it */
            fields[buf][tid] = (uint32_t)word;
            if (tid == 0) count[buf] = n | fence_now << 8; /* the block learns both at the barrier */
        }
        sync_threads();
        const int n = count[buf] & 0xff, fenced = count[buf] >> 8;
        for (int i = 0; i < n; i++, next++) {
            const uint32_t *f = &fields[buf][i * WAVE_CMD_WORDS];
            const uint32_t op = f[WAVE_W_OP];
            if (op == WAVE_OP_STEP || op == WAVE_OP_QUERY || op == WAVE_OP_FENCE) {
                last_access = next;
            } else if (op == WAVE_OP_INJECT) {
                /* Unless warp 0 fenced before the barrier above, for this
                 * impulse: wait for the bands, fence, and meet again. */
                if (acquired != last_access && (i > 0 || !fenced)) {
                    if (tid < 32) {
                        while (!wave_bands_done(band_words, bands, last_access)) sleep_ns(WAVE_LOG_POLL_NS);
                        thread_fence(); /* after the loads that saw the bands done: no cell below is touched earlier */
                    }
                    sync_threads();
                }
                acquired = last_access;
                const float amplitude = wave_bits_f32(f[WAVE_W_VALUE]);
                for (int k = tid; k < WAVE_BUMP_WIDTH * WAVE_BUMP_WIDTH; k += nt)
                    wave_bump_cell(f0, f1, nx, 0, ny, (int)f[WAVE_W_X], (int)f[WAVE_W_Y], amplitude, k);
                impulses++;
                sync_threads();
                if (tid == 0) wave_reply_to(mb, next, 0);
                /* Warp 1 releases the cells to the bands they reach (each
                 * such band's word: the last impulse that reached it), so
                 * that the reply need not wait for it. */
                const int first = WAVE_IMPULSE_FIRST_BAND((int)f[WAVE_W_Y], bands, ny);
                const int last = WAVE_IMPULSE_LAST_BAND((int)f[WAVE_W_Y], bands, ny);
                const int b = first + tid - (nt > 32 ? 32 : 0);
                if (b >= first && b <= last && b < first + 32)
                    store_release_gpu_u64(&WAVE_BAND_IMPULSES(band_words, b), impulses);
            } else if (op == WAVE_OP_STOP) {
                return;
            }
        }
        buf ^= 1;
    }
}

/* The word lane 0, 1 and 2 of a band's warp 0 watch: the steps of the band
 * above and below, and the impulses block 0 has applied that reach the
 * band; NULL otherwise. */
RK_DEVICE const uint64_t *wave_watched_word(const uint64_t *band_words, int band, int bands) {
    const int tid = thread_idx_x();
    if (tid == 0 && band > 0) return &WAVE_BAND_STEPS(band_words, band - 1);
    if (tid == 1 && band + 1 < bands) return &WAVE_BAND_STEPS(band_words, band + 1);
    if (tid == 2) return &WAVE_BAND_IMPULSES(band_words, band);
    return 0;
}

/* The band has finished every command before `next`: released by thread
 * 0, which made the last reads of cells without a barrier after them, once
 * per command (*said: what thread 0 last released; a release waits for the
 * thread's stores, and a batch of steps would pay it at every step). */
RK_DEVICE void wave_finished(uint64_t *band_words, int band, uint32_t next, uint32_t *said) {
    if (thread_idx_x() == 0 && *said != next - 1) {
        store_release_gpu_u64(&WAVE_BAND_FINISHED(band_words, band), next - 1);
        *said = next - 1;
    }
}

/* Warp 0 of a band reads commands from the log, from `next` on, until at
 * least one is whole; meanwhile lanes 0 to 2 keep reading the words they
 * watch into *seen. The fields of the whole commands land in fields[] and
 * their number in *count, which the block returns. Two buffers, taken in
 * turns: warp 0 fills one while the block may still use the other. First,
 * the band says it has finished every command before `next`. */
RK_DEVICE int wave_band_read(const wave_board *board, uint64_t *band_words, int band, const uint64_t *watch,
                             uint32_t next, uint32_t *fields, int *count, uint64_t *seen, uint32_t *said) {
    const int tid = thread_idx_x();
    wave_finished(band_words, band, next, said);
    if (tid < 32) {
        const uint64_t *at = wave_lane_word(&board->log[0][0], WAVE_LOG_SLOTS - 1, next);
        uint64_t word = 0;
        int n = 0;
        for (;;) {
            word = load_relaxed_u64(at);
            if (watch) *seen = load_acquire_gpu_u64(watch); /* after the log's load: both in flight */
            n = wave_whole_commands(word, next);
            if (n) break;
            sleep_ns(WAVE_LOG_POLL_NS);
        }
        fields[tid] = (uint32_t)word;
        if (tid == 0) {
            *count = n;
            store_relaxed_u64(&WAVE_BAND_TAKEN(band_words, band), next + (uint32_t)n - 1);
        }
    }
    sync_threads();
    return *count;
}

/* The whole band waits until each watching lane has seen its word reach
 * `need` (*seen: the value it last read, often recent enough). Before it
 * waits, it says how far it is: block 0 may be waiting for that to apply
 * the impulse this band waits for. */
RK_DEVICE void wave_wait_for(uint64_t *band_words, int band, uint32_t next, const uint64_t *watch, uint64_t need,
                             uint64_t *seen, uint32_t *said) {
    if (thread_idx_x() < 32 && !warp_all(!watch || *seen >= need)) {
        wave_finished(band_words, band, next, said);
        while (!warp_all(!watch || *seen >= need)) {
            sleep_ns(WAVE_LOG_POLL_NS);
            if (watch && *seen < need) *seen = load_acquire_gpu_u64(watch);
        }
    }
    sync_threads();
}

/* Every band has finished command seq: the last one to get here answers it
 * (and sets the count back for the command that takes the slot next).
 * Warp 2 waits for the count when there is one, not thread 0, which may
 * have a query to answer next. With fence, the block's writes (ordered
 * before by a barrier) are performed before the band arrives. */
RK_DEVICE void wave_gather(wave_board *board, wave_mailbox *mb, uint32_t seq, int bands, int fence) {
    if (thread_idx_x() == (block_dim_x() > 64 ? 64 : 0)) {
        if (fence) thread_fence();
        int *done = &board->done[seq & (WAVE_LOG_SLOTS - 1)];
        if (atomic_add_i32(done, 1) == bands - 1) {
            atomic_exch_i32(done, 0);
            wave_reply_to(mb, seq, 0);
        }
    }
}

/* f0/f1: the two time levels, f[parity] the current one. c2 = c^2.
 * band_words: WAVE_BAND_WORDS per band (wave_protocol.h), zero at launch.
 * Needs 2 blocks or more, and no more than ny + 1: block 0 relays and
 * applies impulses, block b > 0 is band b - 1. */
RK_KERNEL void wave_persistent(float *f0, float *f1, wave_mailbox *mb, wave_board *board, uint64_t *band_words,
                               int nx, int ny, float c2, float damping, unsigned parity) {
    RK_SHARED uint32_t fields[2][WAVE_POLL_CMDS * WAVE_CMD_WORDS];
    RK_SHARED int count[2];
    const int bands = grid_dim_x() - 1;
    if (block_idx_x() == 0) {
        wave_relay(f0, f1, mb, board, band_words, bands, nx, ny, fields, count);
        return;
    }
    const int tid = thread_idx_x(), nt = block_dim_x(), band = block_idx_x() - 1;
    const int row_begin = WAVE_BAND_FIRST_ROW(band, bands, ny), row_end = WAVE_BAND_FIRST_ROW(band + 1, bands, ny);
    const uint64_t *watch = wave_watched_word(band_words, band, bands);
    const int watches_impulses = tid == 2;
    uint64_t steps = 0;                       /* steps done */
    uint64_t impulses = 0, last_reaching = 0; /* impulses sent so far; the last that reached the band */
    int impulse_pending = 0;                  /* one reached the band since it last waited for them */
    int answered = 0;                         /* the next command, a query, was answered with the step before it */
    uint64_t seen = 0;                        /* lanes 0 to 2 of warp 0: their word as last read */
    uint32_t said = ~0u;                      /* thread 0: the last "finished" it released (none yet) */
    uint32_t next = 1;
    for (int buf = 0;; buf ^= 1) {
        const int n = wave_band_read(board, band_words, band, watch, next, fields[buf], &count[buf], &seen, &said);
        for (int i = 0; i < n; i++, next++) {
            const uint32_t *f = &fields[buf][i * WAVE_CMD_WORDS];
            const uint32_t op = f[WAVE_W_OP], count_or_steps = f[WAVE_W_COUNT];
            const int x = (int)f[WAVE_W_X], y = (int)f[WAVE_W_Y];
            if (op == WAVE_OP_INJECT) {
                /* Block 0 applies it. */
                impulses++;
                if (WAVE_IMPULSE_REACHES(y, row_begin, row_end)) {
                    last_reaching = impulses;
                    impulse_pending = 1;
                }
            } else if (op == WAVE_OP_STEP) {
                /* A query of this band's right after the step (read with
                 * it) is answered by the thread that updates its cell, which
                 * computes that cell first. */
                const uint32_t *q = &fields[buf][(i + 1) * WAVE_CMD_WORDS];
                if (i + 1 < n && q[WAVE_W_OP] == WAVE_OP_QUERY && count_or_steps > 0 &&
                    (int)q[WAVE_W_Y] >= row_begin && (int)q[WAVE_W_Y] < row_end)
                    answered = 1;
                for (uint32_t s = 0; s < count_or_steps; s++) {
                    /* The neighbours' rows the stencil reads are current and
                     * they no longer read ours; the impulses are in. */
                    wave_wait_for(band_words, band, next, watch, watches_impulses ? last_reaching : steps, &seen, &said);
                    impulse_pending = 0;
                    const float *cur = parity ? f1 : f0;
                    float *prev = parity ? f0 : f1;
                    /* The query's cell first, by the thread that updates it
                     * below (the only one that writes it): its loads go out
                     * ahead of the band's. */
                    if (answered && s + 1 == count_or_steps) {
                        const int keep = (int)q[WAVE_W_Y] * nx + (int)q[WAVE_W_X];
                        if ((keep - row_begin * nx) % nt == tid)
                            wave_reply_to(mb, next + 1, wave_f32_bits(wave_cell(cur, prev, keep, nx, ny, c2, damping)));
                    }
                    wave_cells(cur, prev, row_begin * nx + tid, nt, row_end * nx, nx, ny, c2, damping);
                    steps++;
                    sync_threads();
                    /* Warp 1 releases the rows, so that thread 0 may answer
                     * a query meanwhile. */
                    if (tid == (nt > 32 ? 32 : 0)) store_release_gpu_u64(&WAVE_BAND_STEPS(band_words, band), steps);
                    parity ^= 1u;
                }
                wave_gather(board, mb, next, bands, 0);
            } else if (op == WAVE_OP_QUERY) {
                if (answered) {
                    answered = 0;
                } else if (y >= row_begin && y < row_end) {
                    /* The band's own cells are ordered by the barrier after
                     * its last step; only a new impulse needs waiting for
                     * (a barrier here would also wait for warps 1 and 2). */
                    if (impulse_pending)
                        wave_wait_for(band_words, band, next, watch, watches_impulses ? last_reaching : 0, &seen, &said);
                    impulse_pending = 0;
                    if (tid == 0) wave_reply_to(mb, next, wave_f32_bits((parity ? f1 : f0)[y * nx + x]));
                }
            } else if (op == WAVE_OP_FENCE) {
                /* Before the host copies the field: the impulses are in,
                 * this band's cells are performed before its arrival, the
                 * last arrival before the reply. Kept off the inject path. */
                wave_wait_for(band_words, band, next, watch, watches_impulses ? last_reaching : 0, &seen, &said);
                impulse_pending = 0;
                wave_gather(board, mb, next, bands, 1);
            } else if (op == WAVE_OP_SET_SPEED || op == WAVE_OP_SET_DAMPING) {
                const float value = wave_bits_f32(f[WAVE_W_VALUE]);
                if (op == WAVE_OP_SET_SPEED) c2 = value * value;
                else damping = value;
                if (tid == 0 && band == 0) wave_reply_to(mb, next, 0);
            } else if (op == WAVE_OP_STOP) {
                wave_gather(board, mb, next, bands, 0);
                return;
            }
        }
    }
}
