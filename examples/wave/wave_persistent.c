/* The wave showcase's persistent kernel, in the ringkernel DSL: one
 * cooperative launch for the simulation's lifetime. Block 0 relays commands
 * from the host's ring (host-mapped memory) to a log in device memory and
 * applies impulses itself (wave_relay.c); every other block owns a band of
 * rows, reads the log and applies each command to its rows, waiting only
 * for the bands next to it and for impulses that reach it (wave_protocol.h
 * says what each word means; docs/showcase.md draws it). wave_sim.c
 * compiles it last, after wave_kernels.c, whose cell update it shares with
 * the traditional pattern. */
#ifndef WAVE_PROTOCOL_H
#include "wave_protocol.h"
#endif

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
            wave_answer(mb, board, seq, 0);
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
    RK_SHARED wave_relay_shared relay;
    const int bands = grid_dim_x() - 1;
    if (block_idx_x() == 0) {
        const wave_relay_args g = {f0, f1, mb, board, band_words, bands, nx, ny};
        wave_block0(&g, &relay);
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
                            wave_answer(mb, board, next + 1, wave_f32_bits(wave_cell(cur, prev, keep, nx, ny, c2, damping)));
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
                    if (tid == 0) wave_answer(mb, board, next, wave_f32_bits((parity ? f1 : f0)[y * nx + x]));
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
                if (tid == 0 && band == 0) wave_answer(mb, board, next, 0);
            } else if (op == WAVE_OP_STOP) {
                wave_gather(board, mb, next, bands, 0);
                return;
            }
        }
    }
}
