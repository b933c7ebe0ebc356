/* Block 0 of the wave showcase's persistent kernel, in the ringkernel DSL
 * (wave_protocol.h says what each word means; docs/showcase.md draws it).
 * Two jobs, a warp each, so that neither waits for the other:
 *   warp 0 relays: it reads the host's ring over the bus and copies what it
 *          finds to the log in device memory, where the bands read it;
 *   warp 1 reads the log like a band and applies impulses, once the bands
 *          an impulse reaches have finished the commands sent before it,
 *          and answers them.
 * They share nothing but the log (no shared memory between them). A block
 * of one warp does both in turn (the CPU backend's default). wave_sim.c
 * compiles it after wave_words.c. */
#ifndef WAVE_PROTOCOL_H
#include "wave_protocol.h"
#endif

/* What the commands so far say about the bands' cells: the last command
 * that reads or writes them (a step, query or fence), and the last such
 * command every band has been seen to finish, with a fence after. An
 * impulse changes cells once the bands it reaches (the only ones that read
 * or write those cells) have finished every such command before it; with
 * both equal, it need not ask. */
typedef struct wave_cells_seen {
    uint32_t last_access, acquired;
} wave_cells_seen;

RK_DEVICE void wave_note_command(wave_cells_seen *c, uint32_t op, uint32_t seq) {
    if (op == WAVE_OP_STEP || op == WAVE_OP_QUERY || op == WAVE_OP_FENCE) c->last_access = seq;
}

/* The warp that applies impulses: the next command, impulses applied. */
typedef struct wave_applier {
    uint32_t next;
    uint64_t impulses;
    wave_cells_seen cells;
} wave_applier;

/* Warp-wide, each lane for bands lane, lane + 32, ...: whether the bands
 * first .. last have finished command seq and those before it (1), and all
 * of them too (2), or not (0). Relaxed loads, in flight together; a fence
 * after a true answer makes it an acquire. */
RK_DEVICE int wave_bands_done(const uint64_t *band_words, int bands, uint32_t seq, int first, int last) {
    int all = 1, some = 1;
    for (int b = lane_id(); b < bands; b += 32) {
        const int done = (int32_t)((uint32_t)load_relaxed_u64(&WAVE_BAND_FINISHED(band_words, b)) - seq) >= 0;
        all &= done;
        if (b >= first && b <= last) some &= done;
    }
    return warp_all(all) ? 2 : warp_all(some);
}

/* Warp-wide: the oldest command every band, and block 0's warp 1 (its
 * word on the board), has read from the log, as far as it is behind `next`. */
RK_DEVICE uint32_t wave_oldest_taken(const wave_grid *g, uint32_t next) {
    int lag = lane_id() == 0 ? (int)(next - (uint32_t)load_relaxed_u64(&g->board->applier_taken)) : 0;
    for (int b = lane_id(); b < g->bands; b += 32) {
        int behind = (int)(next - (uint32_t)load_relaxed_u64(&WAVE_BAND_TAKEN(g->band_words, b)));
        lag = behind > lag ? behind : lag;
    }
    for (int d = 16; d > 0; d /= 2) {
        int other = shfl_xor_i32(lag, d);
        lag = other > lag ? other : lag;
    }
    return next - (uint32_t)lag;
}

/* Warp 0, before it reads the host's ring again after a batch: a host that
 * waits for an answer writes its next command only once the answer has
 * crossed the bus, and a read of the ring that gets there before then finds
 * nothing and holds the next read back a whole bus round trip (a warp has
 * one read of host memory in flight). So warp 0 waits until the batch's
 * last command has been answered (its mark on the board, read from the L2,
 * not over the bus), or for WAVE_ANSWER_POLLS reads of that mark: a host
 * that does not wait is not held up for longer. */
RK_DEVICE void wave_await_answer(const wave_board *board, uint32_t seq) {
    for (int i = 0; i < WAVE_ANSWER_POLLS; i++) {
        if (warp_all((uint32_t)load_relaxed_u64(&board->answered[seq & (WAVE_LOG_SLOTS - 1)]) == seq)) {
            wave_pause(WAVE_ANSWER_PAUSE_NS);
            return;
        }
        sleep_ns(WAVE_LOG_POLL_NS);
    }
}

/* The impulse at (x0, y0), by one warp: cells lane and lane + 32 of the
 * bump, both loaded before either is written (one wait for memory, not
 * two), with the arithmetic of wave_bump_cell. */
RK_DEVICE void wave_bump_warp(float *f0, float *f1, int nx, int ny, int x0, int y0, float amplitude) {
    for (int base = lane_id(); base < WAVE_BUMP_WIDTH * WAVE_BUMP_WIDTH; base += 64) {
        float v[2] = {0.0f, 0.0f}, a[2] = {0.0f, 0.0f}, b[2] = {0.0f, 0.0f};
        int at[2];
        for (int r = 0; r < 2; r++) {
            const int k = base + 32 * r;
            at[r] = k < WAVE_BUMP_WIDTH * WAVE_BUMP_WIDTH ? wave_bump_at(nx, 0, ny, x0, y0, amplitude, k, &v[r]) : -1;
            if (at[r] >= 0) {
                a[r] = f0[at[r]];
                b[r] = f1[at[r]];
            }
        }
        for (int r = 0; r < 2; r++) {
            if (at[r] >= 0) {
                f0[at[r]] = a[r] + v[r];
                f1[at[r]] = b[r] + v[r];
            }
        }
    }
}

/* The bands an impulse at row y reaches: first .. last. */
RK_DEVICE void wave_impulse_bands(const wave_grid *g, int y, int *first, int *last) {
    *first = WAVE_IMPULSE_FIRST_BAND(y, g->bands, g->ny);
    *last = WAVE_IMPULSE_LAST_BAND(y, g->bands, g->ny);
}

/* One warp applies a batch of n commands from a->next on (lane l holding
 * word l % 8 of command a->next + l / 8): impulses it applies and answers,
 * every other command only moves the bookkeeping. Returns 1 at the stop
 * command. */
RK_DEVICE int wave_apply_batch(const wave_grid *g, wave_applier *a, uint64_t word, int n) {
    const int lane = lane_id();
    for (int i = 0; i < n; i++, a->next++) {
        const int cmd = i * WAVE_CMD_WORDS;
        const uint32_t op = (uint32_t)shfl_i32((int)(uint32_t)word, cmd + WAVE_W_OP);
        if (op == WAVE_OP_STOP) return 1;
        if (op == WAVE_OP_INJECT) {
            const int x = shfl_i32((int)(uint32_t)word, cmd + WAVE_W_X), y = shfl_i32((int)(uint32_t)word, cmd + WAVE_W_Y);
            const float amplitude = wave_bits_f32((uint32_t)shfl_i32((int)(uint32_t)word, cmd + WAVE_W_VALUE));
            /* The bands it reaches: worked out only where needed before the
             * cells change (64-bit divisions, off the usual path). */
            int first = -1, last = -1;
            if (a->cells.acquired != a->cells.last_access) {
                wave_impulse_bands(g, y, &first, &last);
                int done;
                while (!(done = wave_bands_done(g->band_words, g->bands, a->cells.last_access, first, last)))
                    sleep_ns(WAVE_LOG_POLL_NS);
                if (done == 2) a->cells.acquired = a->cells.last_access;
                thread_fence(); /* after the loads that saw the bands done: no cell below is touched earlier */
                sync_warp();    /* ... by any lane: each loaded other bands' words */
            }
            wave_bump_warp(g->f0, g->f1, g->nx, g->ny, x, y, amplitude);
            a->impulses++;
            sync_warp(); /* every lane's cells before the answer and the release */
            if (lane == 0) wave_answer(g->mb, g->board, a->next, 0);
            /* Each band the impulse reaches learns that it is in. */
            if (first < 0) wave_impulse_bands(g, y, &first, &last);
            for (int b = first + lane; b <= last; b += 32)
                store_release_gpu_u64(&WAVE_BAND_IMPULSES(g->band_words, b), a->impulses);
        }
        wave_note_command(&a->cells, op, a->next);
    }
    return 0;
}

/* Warp 0: reads commands from the host's ring and copies them to the log (a
 * log slot is written again only once every band and warp 1 have read the
 * command it held); with self, it applies each batch itself. Returns once
 * the stop command is in the log. */
RK_DEVICE void wave_relay_read(const wave_grid *g, wave_applier *self) {
    const int lane = lane_id();
    uint32_t next = 1, taken = 0, awaited = 0; /* taken: every reader of the log has read it up to here */
    int step_last = 0;                         /* the last batch ended with a step */
    for (;;) {
        /* After a step, one read at once first: a host that waits for the
         * step's answer loses nothing (a step takes longer than a read),
         * and one that sends a query right behind it (a batch cut between
         * the two) is not held up for the whole step. */
        if (awaited && !step_last) wave_await_answer(g->board, awaited);
        uint64_t word = 0;
        int n = 0;
        for (;;) {
            word = load_relaxed_u64(wave_lane_word(&g->mb->cmd[0][0], WAVE_RING_SLOTS - 1, next));
            n = wave_whole_commands(word, next);
            if (n) break;
            if (step_last) wave_await_answer(g->board, awaited); /* the one read at once found nothing */
            else sleep_ns(WAVE_CMD_POLL_NS);
            step_last = 0;
        }
        const uint32_t last = next + (uint32_t)n - 1;
        while ((int32_t)(taken + WAVE_LOG_SLOTS - last) < 0) {
            taken = wave_oldest_taken(g, next);
            if ((int32_t)(taken + WAVE_LOG_SLOTS - last) < 0) sleep_ns(WAVE_LOG_POLL_NS);
        }
        if (lane < n * WAVE_CMD_WORDS)
            store_relaxed_u64((uint64_t *)wave_lane_word(&g->board->log[0][0], WAVE_LOG_SLOTS - 1, next), word);
        int stop = 0;
        for (int i = 0; i < n; i++) {
            const uint32_t op = (uint32_t)shfl_i32((int)(uint32_t)word, i * WAVE_CMD_WORDS + WAVE_W_OP);
            stop |= op == WAVE_OP_STOP;
            step_last = op == WAVE_OP_STEP;
        }
        awaited = last;
        next = last + 1;
        if (!self) {
            if (stop) return;
        } else {
            if (lane == 0) store_relaxed_u64(&g->board->applier_taken, last); /* the applier is this warp */
            if (wave_apply_batch(g, self, word, n)) return;
        }
    }
}

/* Warp 1: reads the log as the bands do and applies each batch, in order,
 * until the stop command. */
RK_DEVICE void wave_relay_apply(const wave_grid *g) {
    wave_applier a = {1, 0, {0, 0}};
    for (;;) {
        const uint64_t *at = wave_lane_word(&g->board->log[0][0], WAVE_LOG_SLOTS - 1, a.next);
        uint64_t word = 0;
        int n = 0;
        for (;;) {
            word = load_relaxed_u64(at);
            n = wave_whole_commands(word, a.next);
            if (n) break;
            sleep_ns(WAVE_LOG_POLL_NS);
        }
        if (lane_id() == 0) store_relaxed_u64(&g->board->applier_taken, a.next + (uint32_t)n - 1);
        if (wave_apply_batch(g, &a, word, n)) return;
    }
}

/* Block 0 of wave_persistent: warp 0 relays, warp 1 applies impulses (warp
 * 0 both, in a block of one warp); the block's other warps have nothing to
 * do. */
RK_DEVICE void wave_block0(const wave_grid *g) {
    const int tid = thread_idx_x();
    if (tid < 32) {
        wave_applier self = {1, 0, {0, 0}};
        wave_relay_read(g, block_dim_x() > 32 ? 0 : &self);
    } else if (tid < 64) {
        wave_relay_apply(g);
    }
}
