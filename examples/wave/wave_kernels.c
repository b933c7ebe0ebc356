/* The wave showcase's kernels, in the ringkernel DSL: the same source runs
 * on the CPU backend (compiled by the system compiler) and on CUDA
 * (compiled by NVRTC); wave_sim.c puts wave_protocol.h in front of it.
 *
 * A 2-D wave u_tt = c^2 (u_xx + u_yy) - damping u_t on an nx * ny grid,
 * leapfrog in time (FDTD): two time levels, and the new level overwrites
 * the older one in place. Walls reflect (a neighbour outside the grid reads
 * the edge cell). Stable for a Courant number c <= 1/sqrt(2).
 *
 * Two ways to drive it, with the same arithmetic per cell:
 *   traditional  wave_step / wave_inject launched per command; queries copy
 *                one cell to the host.
 *   persistent   wave_persistent, one cooperative launch for the
 *                simulation's lifetime: block 0 relays commands from a ring
 *                in host-mapped memory to a log in device memory, and every
 *                other block applies each command to its own band of rows,
 *                waiting only for the bands next to it (wave_protocol.h).
 */
#ifndef WAVE_PROTOCOL_H
#include "wave_protocol.h"
#endif

/* u(t+1) for cells first, first + stride, ... below cells, written over
 * u(t-1) in prev. Opposite neighbours are added first, so mirrored cells do
 * the same float operations and a centred impulse stays exactly symmetric.
 * The loads of WAVE_CELLS_AHEAD cells are issued before any of them is used
 * or written (the compiler cannot reorder them itself: prev may alias cur),
 * so a thread waits for memory once per group rather than once per cell. */
#define WAVE_CELLS_AHEAD 4
RK_DEVICE void wave_cells(const float *cur, float *prev, int first, int stride, int cells, int nx, int ny, float c2,
                          float damping) {
    for (int base = first; base < cells; base += WAVE_CELLS_AHEAD * stride) {
        float here[WAVE_CELLS_AHEAD], old[WAVE_CELLS_AHEAD], ns[WAVE_CELLS_AHEAD], we[WAVE_CELLS_AHEAD];
        for (int k = 0; k < WAVE_CELLS_AHEAD; k++) {
            int i = base + k * stride;
            if (i >= cells) i = base; /* past the end: recompute the first cell, not stored */
            int x = i % nx, y = i / nx;
            here[k] = cur[i];
            old[k] = prev[i];
            ns[k] = cur[y > 0 ? i - nx : i] + cur[y < ny - 1 ? i + nx : i];
            we[k] = cur[x > 0 ? i - 1 : i] + cur[x < nx - 1 ? i + 1 : i];
        }
        for (int k = 0; k < WAVE_CELLS_AHEAD; k++) {
            int i = base + k * stride;
            if (i >= cells) break;
            float lap = ns[k] + we[k] - 4.0f * here[k];
            prev[i] = (2.0f - damping) * here[k] - (1.0f - damping) * old[k] + c2 * lap;
        }
    }
}

/* Cell k (0 .. WAVE_BUMP_WIDTH^2 - 1) of an impulse at (x0, y0): a smooth
 * bump of the given height, added to both time levels (displaced, at rest);
 * only in rows row_begin .. row_end - 1 (a band's). */
RK_DEVICE void wave_bump_cell(float *f0, float *f1, int nx, int row_begin, int row_end, int x0, int y0,
                              float amplitude, int k) {
    int dx = k % WAVE_BUMP_WIDTH - WAVE_BUMP_RADIUS, dy = k / WAVE_BUMP_WIDTH - WAVE_BUMP_RADIUS;
    int x = x0 + dx, y = y0 + dy, d2 = dx * dx + dy * dy, r2 = (WAVE_BUMP_RADIUS + 1) * (WAVE_BUMP_RADIUS + 1);
    if (x < 0 || y < row_begin || x >= nx || y >= row_end || d2 >= r2) return;
    float w = 1.0f - (float)d2 / (float)r2;
    float v = amplitude * w * w;
    f0[y * nx + x] += v;
    f1[y * nx + x] += v;
}

/* ---- traditional: one launch per command ---------------------------------- */

/* Grid-stride, so a GPU launches a thread per cell and the CPU a few blocks
 * whose threads loop (one fiber per cell would cost more than the cell). */
RK_KERNEL void wave_step(const float *cur, float *prev, int nx, int ny, float c2, float damping) {
    int cells = nx * ny, stride = grid_dim_x() * block_dim_x();
    wave_cells(cur, prev, block_idx_x() * block_dim_x() + thread_idx_x(), stride, cells, nx, ny, c2, damping);
}

RK_KERNEL void wave_inject(float *f0, float *f1, int nx, int ny, int x, int y, float amplitude) {
    int k = thread_idx_x();
    if (k < WAVE_BUMP_WIDTH * WAVE_BUMP_WIDTH) wave_bump_cell(f0, f1, nx, 0, ny, x, y, amplitude, k);
}

/* ---- persistent: one launch for the simulation's lifetime ------------------- */

RK_DEVICE uint32_t wave_f32_bits(float f) {
    union { float f; uint32_t u; } c;
    c.f = f;
    return c.u;
}

/* Whole tagged words (wave_protocol.h): the host needs no fence to read it. */
RK_DEVICE void wave_reply_to(wave_mailbox *mb, uint32_t seq, int word, uint32_t value_bits) {
    store_relaxed_u64(&mb->reply[seq & (WAVE_RING_SLOTS - 1)][word], (uint64_t)seq << 32 | value_bits);
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

/* The oldest command every band has read from the log, as far as it is
 * behind `next` (warp-wide: each lane reads some bands' words). */
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

/* Block 0: WAVE_RELAY_WARPS warps copy commands from the host's ring into the
 * log, each polling on its own, so their reads reach host memory at
 * different moments and a new command waits less for the next one. Two
 * warps may copy a command twice, with the same words. A log slot is
 * written again only once every band has read the command it held. Returns
 * once the stop command is in the log. */
RK_DEVICE void wave_relay(const wave_mailbox *mb, wave_board *board, const uint64_t *band_words, int bands) {
    RK_SHARED uint32_t relayed; /* every command up to here is in the log */
    RK_SHARED int stopped;
    const int tid = thread_idx_x(), lane = lane_id();
    if (tid == 0) {
        relayed = 0;
        stopped = 0;
    }
    sync_threads();
    if (tid >= 32 * WAVE_RELAY_WARPS) return;
    volatile uint32_t *shared_relayed = &relayed;
    volatile int *shared_stopped = &stopped;
    uint32_t taken = 0; /* every band has read the log up to here */
    /* Shared words are read by lane 0 and passed on, so that the warp
     * decides as one even when another warp writes them meanwhile. */
    for (;;) {
        const uint32_t next = (uint32_t)shfl_i32((int)*shared_relayed, 0) + 1;
        const uint64_t word = load_relaxed_u64(wave_lane_word(&mb->cmd[0][0], WAVE_RING_SLOTS - 1, next));
        const int n = wave_whole_commands(word, next);
        if (n == 0) {
            if (shfl_i32(*shared_stopped, 0)) return;
            sleep_ns(WAVE_CMD_POLL_NS);
            continue;
        }
        const uint32_t last = next + (uint32_t)n - 1;
        while ((int32_t)(taken + WAVE_LOG_SLOTS - last) < 0) {
            taken = wave_oldest_taken(band_words, bands, next);
            if ((int32_t)(taken + WAVE_LOG_SLOTS - last) < 0) sleep_ns(WAVE_LOG_POLL_NS);
        }
        /* Another warp may have copied these meanwhile (same words) and
         * moved on: then leave the log alone. */
        if ((int32_t)((uint32_t)shfl_i32((int)*shared_relayed, 0) - last) >= 0) continue;
        if (lane < n * WAVE_CMD_WORDS)
            store_relaxed_u64((uint64_t *)wave_lane_word(&board->log[0][0], WAVE_LOG_SLOTS - 1, next), word);
        const int stop = warp_any(lane < n * WAVE_CMD_WORDS && lane % WAVE_CMD_WORDS == WAVE_W_OP &&
                                  (uint32_t)word == WAVE_OP_STOP);
        if (lane == 0 && (int32_t)(last - *shared_relayed) > 0) *shared_relayed = last;
        if (stop) {
            if (lane == 0) *shared_stopped = 1;
            return;
        }
    }
}

/* Warp 0 of a band reads commands from the log, from `next` on, until at
 * least one is whole; meanwhile lanes 0 and 1 keep reading the progress of
 * the bands above and below (*neighbour). The fields of the whole commands
 * land in fields[], in order, and their number is returned to the block. */
RK_DEVICE int wave_band_read(const wave_board *board, uint64_t *band_words, int band, int up, int down,
                             uint32_t next, uint32_t *fields, int *count, uint64_t *neighbour) {
    const int tid = thread_idx_x();
    if (tid < 32) {
        const int other = tid == 0 ? up : tid == 1 ? down : -1;
        const uint64_t *at = wave_lane_word(&board->log[0][0], WAVE_LOG_SLOTS - 1, next);
        uint64_t word = 0;
        int n = 0;
        for (;;) {
            word = load_relaxed_u64(at);
            /* After the log's load, so that both are in flight at once. */
            if (other >= 0) *neighbour = load_acquire_gpu_u64(&WAVE_BAND_PROGRESS(band_words, other));
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
    int n = *count;
    sync_threads(); /* everyone has n before warp 0 reads again */
    return n;
}

/* Before the band changes its rows: the bands above and below have made
 * every change to theirs that came before (`above` and `below` of them), so
 * the cells of theirs that the stencil reads are current and none of them
 * still reads ours. Lanes 0 and 1 of warp 0 keep the progress they last
 * read in *neighbour, often recent enough to need no read at all. */
RK_DEVICE void wave_wait_for_neighbours(const uint64_t *band_words, int up, int down, uint64_t above,
                                        uint64_t below, uint64_t *neighbour) {
    const int tid = thread_idx_x();
    if (tid < 32) {
        const int other = tid == 0 ? up : tid == 1 ? down : -1;
        const uint64_t need = tid == 0 ? above : below;
        while (!warp_all(other < 0 || *neighbour >= need)) {
            sleep_ns(WAVE_LOG_POLL_NS);
            if (other >= 0 && *neighbour < need)
                *neighbour = load_acquire_gpu_u64(&WAVE_BAND_PROGRESS(band_words, other));
        }
    }
    sync_threads();
}

/* The band has made `changes` changes to its rows: release them to its
 * neighbours. Warp 1 does it when there is one, so that thread 0 can answer
 * the host meanwhile (the release waits for the block's writes). */
RK_DEVICE void wave_publish(uint64_t *band_words, int band, uint64_t changes) {
    sync_threads();
    if (thread_idx_x() == (block_dim_x() > 32 ? 32 : 0))
        store_release_gpu_u64(&WAVE_BAND_PROGRESS(band_words, band), changes);
}

/* Every band has finished command seq: the last one to get here answers it
 * (and sets the count back for the command that takes the slot next).
 * Warp 2 waits for the count when there is one, not thread 0, which may
 * have a query to answer next. */
RK_DEVICE void wave_gather(wave_board *board, wave_mailbox *mb, uint32_t seq, int bands) {
    if (thread_idx_x() == (block_dim_x() > 64 ? 64 : 0)) {
        int *done = &board->done[seq & (WAVE_LOG_SLOTS - 1)];
        if (atomic_add_i32(done, 1) == bands - 1) {
            atomic_exch_i32(done, 0);
            wave_reply_to(mb, seq, 0, 0);
        }
    }
}

/* f0/f1: the two time levels, f[parity] the current one. c2 = c^2.
 * band_words: 2 words per band (wave_protocol.h). Needs 2 blocks or more,
 * and no more than ny + 1: block 0 relays, block b > 0 is band b - 1. */
RK_KERNEL void wave_persistent(float *f0, float *f1, wave_mailbox *mb, wave_board *board, uint64_t *band_words,
                               int nx, int ny, float c2, float damping, unsigned parity) {
    RK_SHARED uint32_t fields[WAVE_POLL_CMDS * WAVE_CMD_WORDS];
    RK_SHARED int count;
    const int bands = grid_dim_x() - 1;
    if (block_idx_x() == 0) {
        wave_relay(mb, board, band_words, bands);
        return;
    }
    const int tid = thread_idx_x(), nt = block_dim_x(), band = block_idx_x() - 1;
    const int row_begin = WAVE_BAND_FIRST_ROW(band, bands, ny), row_end = WAVE_BAND_FIRST_ROW(band + 1, bands, ny);
    const int up = band - 1, down = band + 1 < bands ? band + 1 : -1;
    /* Changes made to the rows of this band and of the bands above and
     * below: every step, and each impulse that reaches the band's rows. */
    uint64_t mine = 0, above = 0, below = 0;
    uint64_t neighbour = 0; /* lanes 0 and 1 of warp 0: the progress last read of the band above / below */
    uint32_t next = 1;
    for (;;) {
        const int n = wave_band_read(board, band_words, band, up, down, next, fields, &count, &neighbour);
        for (int i = 0; i < n; i++, next++) {
            const uint32_t *f = &fields[i * WAVE_CMD_WORDS];
            const uint32_t op = f[WAVE_W_OP], steps = f[WAVE_W_COUNT];
            const int x = (int)f[WAVE_W_X], y = (int)f[WAVE_W_Y];
            union { uint32_t u; float f; } value;
            value.u = f[WAVE_W_VALUE];
            if (op == WAVE_OP_INJECT) {
                const int top = y - WAVE_BUMP_RADIUS < 0 ? 0 : y - WAVE_BUMP_RADIUS;
                const int bottom = y + WAVE_BUMP_RADIUS > ny - 1 ? ny - 1 : y + WAVE_BUMP_RADIUS;
                const int first = WAVE_BAND_OF_ROW(top, bands, ny), last = WAVE_BAND_OF_ROW(bottom, bands, ny);
                if (band >= first && band <= last) {
                    wave_wait_for_neighbours(band_words, up, down, above, below, &neighbour);
                    for (int k = tid; k < WAVE_BUMP_WIDTH * WAVE_BUMP_WIDTH; k += nt)
                        wave_bump_cell(f0, f1, nx, row_begin, row_end, x, y, value.f, k);
                    mine++;
                    wave_publish(band_words, band, mine);
                    if (tid == 0) wave_reply_to(mb, next, band - first, 0);
                }
                above += up >= first && up <= last;
                below += down >= first && down <= last;
            } else if (op == WAVE_OP_STEP || op == WAVE_OP_FENCE || op == WAVE_OP_STOP) {
                for (uint32_t s = 0; op == WAVE_OP_STEP && s < steps; s++) {
                    wave_wait_for_neighbours(band_words, up, down, above, below, &neighbour);
                    const float *cur = parity ? f1 : f0;
                    float *prev = parity ? f0 : f1;
                    wave_cells(cur, prev, row_begin * nx + tid, nt, row_end * nx, nx, ny, c2, damping);
                    mine++;
                    above++;
                    below++;
                    wave_publish(band_words, band, mine);
                    parity ^= 1u;
                }
                if (op == WAVE_OP_FENCE) {
                    /* Before the host copies the field: this band's cells
                     * are performed before its arrival, the last arrival
                     * before the reply. Kept off the inject path. */
                    sync_threads();
                    if (tid == 0) thread_fence();
                }
                wave_gather(board, mb, next, bands);
                if (op == WAVE_OP_STOP) return;
            } else if (op == WAVE_OP_QUERY) {
                if (tid == 0 && WAVE_BAND_OF_ROW(y, bands, ny) == band)
                    wave_reply_to(mb, next, 0, wave_f32_bits((parity ? f1 : f0)[y * nx + x]));
            } else if (op == WAVE_OP_SET_SPEED || op == WAVE_OP_SET_DAMPING) {
                if (op == WAVE_OP_SET_SPEED) c2 = value.f * value.f;
                else damping = value.f;
                if (tid == 0 && band == 0) wave_reply_to(mb, next, 0, 0);
            }
        }
    }
}
