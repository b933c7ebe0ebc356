/* Block 0 of the wave showcase's persistent kernel, in the ringkernel DSL
 * (wave_protocol.h says what each word means; docs/showcase.md draws it).
 * Two jobs, a warp each, so that neither waits for the other:
 *   warp 0 relays: it reads the host's ring over the bus, copies what it
 *          finds to the log in device memory, where the bands read it, and
 *          hands each batch to warp 1 in shared memory;
 *   warp 1 applies impulses, once every band has finished the commands
 *          sent before one, and answers them.
 * A block of one warp does both in turn (the CPU backend's default).
 * wave_sim.c compiles it after wave_words.c. */
#ifndef WAVE_PROTOCOL_H
#include "wave_protocol.h"
#endif

/* What block 0's warps share (shared memory): the last two batches warp 0
 * has read, each stamped with its number, and the last batch warp 1 is
 * done with. Batch numbers start at 1 and are compared in 32 bits. */
typedef struct wave_relay_shared {
    uint32_t fields[2][WAVE_POLL_CMDS * WAVE_CMD_WORDS];
    uint64_t posted[2]; /* batch << 32 | fenced << 8 | commands in it */
    uint64_t applied;
} wave_relay_shared;

/* What block 0 works on. */
typedef struct wave_relay_args {
    float *f0, *f1;
    wave_mailbox *mb;
    wave_board *board;
    uint64_t *band_words;
    int bands, nx, ny;
} wave_relay_args;

/* What the commands so far say about the bands' cells: the last command
 * that reads or writes them (a step, query or fence), and the last such
 * command block 0 has seen every band finish, with a fence after. An
 * impulse changes cells once the bands it reaches (the only ones that read
 * or write those cells) have finished every such command before it; with
 * both equal, it need not ask. Each warp keeps its own copy. */
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

/* One warp applies a batch of n commands (their fields, from a->next on):
 * impulses it applies and answers, every other command only moves the
 * bookkeeping. fenced: warp 0 saw every band done, and fenced, before the
 * batch (it then starts with an impulse). Returns 1 at the stop command. */
RK_DEVICE int wave_apply_batch(const wave_relay_args *g, wave_applier *a, const uint32_t *fields, int n, int fenced) {
    const int lane = lane_id();
    for (int i = 0; i < n; i++, a->next++) {
        const uint32_t *f = &fields[i * WAVE_CMD_WORDS];
        const uint32_t op = f[WAVE_W_OP];
        if (op == WAVE_OP_STOP) return 1;
        if (op == WAVE_OP_INJECT) {
            /* The bands it reaches: worked out only where needed before the
             * cells change (64-bit divisions, off the usual path). */
            const int y = (int)f[WAVE_W_Y];
            int first = -1, last = -1;
            if (i == 0 && fenced) {
                a->cells.acquired = a->cells.last_access;
            } else if (a->cells.acquired != a->cells.last_access) {
                first = WAVE_IMPULSE_FIRST_BAND(y, g->bands, g->ny);
                last = WAVE_IMPULSE_LAST_BAND(y, g->bands, g->ny);
                int done;
                while (!(done = wave_bands_done(g->band_words, g->bands, a->cells.last_access, first, last)))
                    sleep_ns(WAVE_LOG_POLL_NS);
                if (done == 2) a->cells.acquired = a->cells.last_access;
                thread_fence(); /* after the loads that saw the bands done: no cell below is touched earlier */
                sync_warp();    /* ... by any lane: each loaded other bands' words */
            }
            wave_bump_warp(g->f0, g->f1, g->nx, g->ny, (int)f[WAVE_W_X], y, wave_bits_f32(f[WAVE_W_VALUE]));
            a->impulses++;
            sync_warp(); /* every lane's cells before the answer and the release */
            if (lane == 0) wave_answer(g->mb, g->board, a->next, 0);
            /* Each band the impulse reaches learns that it is in. */
            if (first < 0) {
                first = WAVE_IMPULSE_FIRST_BAND(y, g->bands, g->ny);
                last = WAVE_IMPULSE_LAST_BAND(y, g->bands, g->ny);
            }
            for (int b = first + lane; b <= last; b += 32)
                store_release_gpu_u64(&WAVE_BAND_IMPULSES(g->band_words, b), a->impulses);
        }
        wave_note_command(&a->cells, op, a->next);
    }
    return 0;
}

/* Warp 0: reads commands from the host's ring, copies them to the log (a
 * log slot is written again only once every band has read the command it
 * held) and posts each batch to the warp that applies impulses, or, with
 * self, applies it itself. Returns once the stop command is in the log. */
RK_DEVICE void wave_relay_read(const wave_relay_args *g, wave_relay_shared *rs, wave_applier *self) {
    const int lane = lane_id();
    uint32_t next = 1, taken = 0, batch = 0, awaited = 0; /* taken: every band has read the log up to here */
    int step_last = 0; /* the last batch ended with a step */
    wave_cells_seen cells = {0, 0};
    for (;;) {
        /* After a step, one read at once first: a host that waits for the
         * step's answer loses nothing (a step takes longer than a read),
         * and one that sends a query right behind it (a batch cut between
         * the two) is not held up for the whole step. */
        if (awaited && !step_last) wave_await_answer(g->board, awaited);
        uint64_t word = 0;
        int n = 0, caught_up = 0;
        for (;;) {
            word = load_relaxed_u64(wave_lane_word(&g->mb->cmd[0][0], WAVE_RING_SLOTS - 1, next));
            if (cells.acquired != cells.last_access) /* while the bus answers */
                caught_up = wave_bands_done(g->band_words, g->bands, cells.last_access, 0, -1) == 2;
            n = wave_whole_commands(word, next);
            if (n) break;
            if (step_last && awaited) wave_await_answer(g->board, awaited);
            else sleep_ns(WAVE_CMD_POLL_NS);
            step_last = 0;
        }
        /* With the loads that saw the bands done, an acquire, if the batch
         * starts with an impulse that needs one. */
        const int fenced = cells.acquired != cells.last_access && caught_up &&
                           warp_any(lane == WAVE_W_OP && (uint32_t)word == WAVE_OP_INJECT);
        const uint32_t last = next + (uint32_t)n - 1;
        while ((int32_t)(taken + WAVE_LOG_SLOTS - last) < 0) {
            taken = wave_oldest_taken(g->band_words, g->bands, next);
            if ((int32_t)(taken + WAVE_LOG_SLOTS - last) < 0) sleep_ns(WAVE_LOG_POLL_NS);
        }
        if (lane < n * WAVE_CMD_WORDS)
            store_relaxed_u64((uint64_t *)wave_lane_word(&g->board->log[0][0], WAVE_LOG_SLOTS - 1, next), word);
        if (fenced) thread_fence(); /* after the log's stores: the bands need not wait for it */
        batch++;
        const int buf = (int)(batch & 1u);
        if (!self) /* the applying warp is done with the batch this buffer held (batch - 2) */
            while (!warp_all((int32_t)((uint32_t)load_relaxed_u64(&rs->applied) + 2u - batch) >= 0))
                sleep_ns(WAVE_LOG_POLL_NS);
        rs->fields[buf][lane] = (uint32_t)word;
        sync_warp();
        if (lane == 0) {
            thread_fence_block(); /* the fields before their stamp */
            store_relaxed_u64(&rs->posted[buf], (uint64_t)batch << 32 | (uint64_t)fenced << 8 | (uint64_t)n);
        }
        if (fenced) cells.acquired = cells.last_access;
        int stop = 0;
        for (int i = 0; i < n; i++) {
            const uint32_t op = (uint32_t)shfl_i32((int)(uint32_t)word, i * WAVE_CMD_WORDS);
            wave_note_command(&cells, op, next + (uint32_t)i);
            stop |= op == WAVE_OP_STOP;
            step_last = op == WAVE_OP_STEP;
        }
        awaited = last;
        next = last + 1;
        if (self ? wave_apply_batch(g, self, rs->fields[buf], n, fenced) : stop) return;
    }
}

/* Warp 1: applies each batch warp 0 posts, in order, until the stop command. */
RK_DEVICE void wave_relay_apply(const wave_relay_args *g, wave_relay_shared *rs) {
    wave_applier a = {1, 0, {0, 0}};
    for (uint32_t batch = 1;; batch++) {
        const int buf = (int)(batch & 1u);
        uint64_t posted = 0;
        while (!warp_all((uint32_t)((posted = load_relaxed_u64(&rs->posted[buf])) >> 32) == batch))
            sleep_ns(WAVE_LOG_POLL_NS);
        thread_fence_block(); /* the fields after their stamp */
        const int stop = wave_apply_batch(g, &a, rs->fields[buf], (int)(posted & 0xffu), (int)(posted >> 8 & 1u));
        sync_warp(); /* every lane has read the fields before warp 0 may write them again */
        if (lane_id() == 0) {
            thread_fence_block();
            store_relaxed_u64(&rs->applied, batch);
        }
        if (stop) return;
    }
}

/* Block 0 of wave_persistent: warp 0 relays, warp 1 applies impulses (warp
 * 0 both, in a block of one warp); the block's other warps have nothing to
 * do. rs: the block's shared memory. */
RK_DEVICE void wave_block0(const wave_relay_args *g, wave_relay_shared *rs) {
    const int tid = thread_idx_x();
    if (tid == 0) {
        rs->posted[0] = rs->posted[1] = 0;
        rs->applied = 0;
    }
    sync_threads(); /* shared memory holds anything at first (the last block's words on the CPU) */
    if (tid < 32) {
        wave_applier self = {1, 0, {0, 0}};
        wave_relay_read(g, rs, block_dim_x() > 32 ? 0 : &self);
    } else if (tid < 64) {
        wave_relay_apply(g, rs);
    }
}
