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

/* What a band works on: the same in every thread of it, but for watch. */
typedef struct wave_band {
    wave_grid g;
    int band, row_begin, row_end;
    const uint64_t *watch; /* lanes 0 to 2 of warp 0: the word each watches (wave_watched_word); NULL otherwise */
} wave_band;

/* How far the band is and the parameters in force: each thread of the band
 * keeps its own copy, following the same commands. */
typedef struct wave_band_state {
    uint64_t steps;                   /* steps done */
    uint64_t impulses, last_reaching; /* impulses sent so far; the last that reached the band */
    float c2, damping;
    unsigned parity;                  /* f[parity] holds the current time level */
} wave_band_state;

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
RK_DEVICE void wave_finished(const wave_band *b, uint32_t next, uint32_t *said) {
    if (thread_idx_x() == 0 && *said != next - 1) {
        store_release_gpu_u64(&WAVE_BAND_FINISHED(b->g.band_words, b->band), next - 1);
        *said = next - 1;
    }
}

/* Warp 0 of a band, with a batch just read (lane l holding word l % 8 of
 * command next + l / 8): a query of this band's cells right after a
 * one-step step, with nothing but impulses before the step in the batch,
 * is answered at once, before the band meets at its barrier, if what lanes
 * 0 to 2 have just read already allows the step (the neighbours' steps;
 * the impulses that reach the band, this batch's counted). The step's
 * arithmetic on the cells before it, so the same bits; the thread that
 * updates the cell writes it only after that barrier. Returns the query's
 * place in the batch plus one, or 0. */
RK_DEVICE int wave_answer_ahead(const wave_band *b, const wave_band_state *st, uint64_t word, int n, uint32_t next,
                                uint64_t seen) {
    const int lane = lane_id();
    uint64_t impulses = st->impulses, reaching = st->last_reaching;
    for (int i = 0; i + 1 < n; i++) {
        const int cmd = i * WAVE_CMD_WORDS, query = cmd + WAVE_CMD_WORDS;
        const uint32_t op = (uint32_t)shfl_i32((int)(uint32_t)word, cmd + WAVE_W_OP);
        if (op == WAVE_OP_INJECT) {
            impulses++;
            if (WAVE_IMPULSE_REACHES(shfl_i32((int)(uint32_t)word, cmd + WAVE_W_Y), b->row_begin, b->row_end))
                reaching = impulses;
            continue;
        }
        const uint32_t count = (uint32_t)shfl_i32((int)(uint32_t)word, cmd + WAVE_W_COUNT);
        const uint32_t then = (uint32_t)shfl_i32((int)(uint32_t)word, query + WAVE_W_OP);
        const int x = shfl_i32((int)(uint32_t)word, query + WAVE_W_X), y = shfl_i32((int)(uint32_t)word, query + WAVE_W_Y);
        if (op != WAVE_OP_STEP || count != 1 || then != WAVE_OP_QUERY || y < b->row_begin || y >= b->row_end) return 0;
        if (!warp_all(!b->watch || seen >= (lane == 2 ? reaching : st->steps))) return 0;
        sync_warp(); /* what lanes 0 to 2 acquired, before lane 0's loads */
        if (lane == 0) {
            const float *cur = st->parity ? b->g.f1 : b->g.f0, *prev = st->parity ? b->g.f0 : b->g.f1;
            const float v = wave_cell(cur, prev, y * b->g.nx + x, b->g.nx, b->g.ny, st->c2, st->damping);
            wave_answer(b->g.mb, b->g.board, next + (uint32_t)i + 1, wave_f32_bits(v));
        }
        return i + 2;
    }
    return 0;
}

/* Warp 0 of a band reads commands from the log, from `next` on, until at
 * least one is whole; meanwhile lanes 0 to 2 keep reading the words they
 * watch into *seen. The fields of the whole commands land in fields[],
 * their number and what wave_answer_ahead returned (shifted by 8) in
 * *count, which the block returns. Two buffers, taken in turns: warp 0
 * fills one while the block may still use the other. First, the band says
 * it has finished every command before `next`. */
RK_DEVICE int wave_band_read(const wave_band *b, const wave_band_state *st, uint32_t next, uint32_t *fields, int *count,
                             uint64_t *seen, uint32_t *said) {
    const int tid = thread_idx_x();
    wave_finished(b, next, said);
    if (tid < 32) {
        const uint64_t *at = wave_lane_word(&b->g.board->log[0][0], WAVE_LOG_SLOTS - 1, next);
        uint64_t word = 0;
        int n = 0;
        for (;;) {
            word = load_relaxed_u64(at);
            if (b->watch) *seen = load_acquire_gpu_u64(b->watch); /* after the log's load: both in flight */
            n = wave_whole_commands(word, next);
            if (n) break;
            sleep_ns(WAVE_LOG_POLL_NS);
        }
        const int ahead = wave_answer_ahead(b, st, word, n, next, *seen);
        fields[tid] = (uint32_t)word;
        if (tid == 0) {
            *count = n | ahead << 8;
            store_relaxed_u64(&WAVE_BAND_TAKEN(b->g.band_words, b->band), next + (uint32_t)n - 1);
        }
    }
    sync_threads();
    return *count;
}

/* The whole band waits until each watching lane has seen its word reach
 * `need` (*seen: the value it last read, often recent enough). Before it
 * waits, it says how far it is: block 0 may be waiting for that to apply
 * the impulse this band waits for. */
RK_DEVICE void wave_wait_for(const wave_band *b, uint32_t next, uint64_t need, uint64_t *seen, uint32_t *said) {
    if (thread_idx_x() < 32 && !warp_all(!b->watch || *seen >= need)) {
        wave_finished(b, next, said);
        while (!warp_all(!b->watch || *seen >= need)) {
            sleep_ns(WAVE_LOG_POLL_NS);
            if (b->watch && *seen < need) *seen = load_acquire_gpu_u64(b->watch);
        }
    }
    sync_threads();
}

/* Every band has finished command seq: the last one to get here answers it
 * (and sets the count back for the command that takes the slot next).
 * Warp 2 waits for the count when there is one, not thread 0, which may
 * have a query to answer next. With fence, the block's writes (ordered
 * before by a barrier) are performed before the band arrives. */
RK_DEVICE void wave_gather(const wave_band *b, uint32_t seq, int fence) {
    if (thread_idx_x() == (block_dim_x() > 64 ? 64 : 0)) {
        if (fence) thread_fence();
        int *done = &b->g.board->done[seq & (WAVE_LOG_SLOTS - 1)];
        if (atomic_add_i32(done, 1) == b->g.bands - 1) {
            atomic_exch_i32(done, 0);
            wave_answer(b->g.mb, b->g.board, seq, 0);
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
    const wave_grid g = {f0, f1, mb, board, band_words, bands, nx, ny};
    if (block_idx_x() == 0) {
        wave_block0(&g);
        return;
    }
    const int tid = thread_idx_x(), nt = block_dim_x(), band = block_idx_x() - 1;
    const int row_begin = WAVE_BAND_FIRST_ROW(band, bands, ny), row_end = WAVE_BAND_FIRST_ROW(band + 1, bands, ny);
    const wave_band b = {g, band, row_begin, row_end, wave_watched_word(band_words, band, bands)};
    wave_band_state st = {0, 0, 0, c2, damping, parity};
    const int watches_impulses = tid == 2;
    int impulse_pending = 0; /* one reached the band since it last waited for them */
    int answered = 0;        /* the next command, a query, was answered with the step before it */
    uint64_t seen = 0;       /* lanes 0 to 2 of warp 0: their word as last read */
    uint32_t said = ~0u;     /* thread 0: the last "finished" it released (none yet) */
    uint32_t next = 1;
    for (int buf = 0;; buf ^= 1) {
        const int read = wave_band_read(&b, &st, next, fields[buf], &count[buf], &seen, &said);
        const int n = read & 0xff, ahead = read >> 8;
        for (int i = 0; i < n; i++, next++) {
            const uint32_t *f = &fields[buf][i * WAVE_CMD_WORDS];
            const uint32_t op = f[WAVE_W_OP], count_or_steps = f[WAVE_W_COUNT];
            const int x = (int)f[WAVE_W_X], y = (int)f[WAVE_W_Y];
            if (op == WAVE_OP_INJECT) {
                /* Block 0 applies it. */
                st.impulses++;
                if (WAVE_IMPULSE_REACHES(y, row_begin, row_end)) {
                    st.last_reaching = st.impulses;
                    impulse_pending = 1;
                }
            } else if (op == WAVE_OP_STEP) {
                /* A query of this band's right after the step (read with
                 * it) is answered with the step: by warp 0 before the band
                 * met (ahead), or by the thread that updates its cell, which
                 * computes that cell first. */
                const uint32_t *q = &fields[buf][(i + 1) * WAVE_CMD_WORDS];
                if (i + 1 < n && q[WAVE_W_OP] == WAVE_OP_QUERY && count_or_steps > 0 &&
                    (int)q[WAVE_W_Y] >= row_begin && (int)q[WAVE_W_Y] < row_end)
                    answered = 1;
                for (uint32_t s = 0; s < count_or_steps; s++) {
                    /* The neighbours' rows the stencil reads are current and
                     * they no longer read ours; the impulses are in. */
                    wave_wait_for(&b, next, watches_impulses ? st.last_reaching : st.steps, &seen, &said);
                    impulse_pending = 0;
                    const float *cur = st.parity ? f1 : f0;
                    float *prev = st.parity ? f0 : f1;
                    /* The query's cell first, by the thread that updates it
                     * below (the only one that writes it): its loads go out
                     * ahead of the band's. */
                    if (answered && ahead != i + 2 && s + 1 == count_or_steps) {
                        const int keep = (int)q[WAVE_W_Y] * nx + (int)q[WAVE_W_X];
                        if ((keep - row_begin * nx) % nt == tid)
                            wave_answer(mb, board, next + 1,
                                        wave_f32_bits(wave_cell(cur, prev, keep, nx, ny, st.c2, st.damping)));
                    }
                    wave_cells(cur, prev, row_begin * nx + tid, nt, row_end * nx, nx, ny, st.c2, st.damping);
                    st.steps++;
                    sync_threads();
                    /* Warp 1 releases the rows, so that thread 0 may answer
                     * a query meanwhile. */
                    if (tid == (nt > 32 ? 32 : 0)) store_release_gpu_u64(&WAVE_BAND_STEPS(band_words, band), st.steps);
                    st.parity ^= 1u;
                }
                wave_gather(&b, next, 0);
            } else if (op == WAVE_OP_QUERY) {
                if (answered) {
                    answered = 0;
                } else if (y >= row_begin && y < row_end) {
                    /* The band's own cells are ordered by the barrier after
                     * its last step; only a new impulse needs waiting for
                     * (a barrier here would also wait for warps 1 and 2). */
                    if (impulse_pending) wave_wait_for(&b, next, watches_impulses ? st.last_reaching : 0, &seen, &said);
                    impulse_pending = 0;
                    if (tid == 0) wave_answer(mb, board, next, wave_f32_bits((st.parity ? f1 : f0)[y * nx + x]));
                }
            } else if (op == WAVE_OP_FENCE) {
                /* Before the host copies the field: the impulses are in,
                 * this band's cells are performed before its arrival, the
                 * last arrival before the reply. Kept off the inject path. */
                wave_wait_for(&b, next, watches_impulses ? st.last_reaching : 0, &seen, &said);
                impulse_pending = 0;
                wave_gather(&b, next, 1);
            } else if (op == WAVE_OP_SET_SPEED || op == WAVE_OP_SET_DAMPING) {
                const float value = wave_bits_f32(f[WAVE_W_VALUE]);
                if (op == WAVE_OP_SET_SPEED) st.c2 = value * value;
                else st.damping = value;
                if (tid == 0 && band == 0) wave_answer(mb, board, next, 0);
            } else if (op == WAVE_OP_STOP) {
                wave_gather(&b, next, 0);
                return;
            }
        }
    }
}
