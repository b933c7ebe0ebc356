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
 *   persistent   wave_persistent, one cooperative launch that loops: block 0
 *                reads commands from a ring in host-mapped memory, applies
 *                the small ones itself, and hands steps to the whole grid.
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
 * bump of the given height, added to both time levels (displaced, at rest). */
RK_DEVICE void wave_bump_cell(float *f0, float *f1, int nx, int ny, int x0, int y0, float amplitude, int k) {
    int dx = k % WAVE_BUMP_WIDTH - WAVE_BUMP_RADIUS, dy = k / WAVE_BUMP_WIDTH - WAVE_BUMP_RADIUS;
    int x = x0 + dx, y = y0 + dy, d2 = dx * dx + dy * dy, r2 = (WAVE_BUMP_RADIUS + 1) * (WAVE_BUMP_RADIUS + 1);
    if (x < 0 || y < 0 || x >= nx || y >= ny || d2 >= r2) return;
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
    if (k < WAVE_BUMP_WIDTH * WAVE_BUMP_WIDTH) wave_bump_cell(f0, f1, nx, ny, x, y, amplitude, k);
}

/* ---- persistent: one launch for the simulation's lifetime ------------------- */

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

/* About ns nanoseconds, in short naps: one long sleep_ns may end anywhere
 * between 0 and twice its argument on a GPU, and this wait is only useful
 * when it ends close to its length. */
RK_DEVICE void wave_pause(unsigned ns) {
    for (unsigned t = 0; t < ns; t += WAVE_NAP_NS) sleep_ns(WAVE_NAP_NS);
}

/* Command seq has been applied; value_bits: a query's answer. One whole
 * tagged word, so the host needs no fence to read it. */
RK_DEVICE void wave_reply_to(wave_mailbox *mb, uint32_t seq, uint32_t value_bits) {
    store_relaxed_u64(&mb->reply[seq & (WAVE_RING_SLOTS - 1)], (uint64_t)seq << 32 | value_bits);
}

/* Warp 0 of block 0 reads commands next .. next + WAVE_POLL_CMDS - 1 with one
 * round of loads, a tagged word per lane, until at least the first is
 * current; the fields of the current ones, in order, land in fields[] and
 * their number is returned to the whole block. */
RK_DEVICE int wave_read_commands(const wave_mailbox *mb, uint32_t next, uint32_t *fields, int *count) {
    const int tid = thread_idx_x();
    if (tid < 32) { /* the whole warp, for the ballot */
        const int mine = tid < WAVE_POLL_CMDS * WAVE_CMD_WORDS;
        const uint32_t seq = next + (uint32_t)(tid / WAVE_CMD_WORDS);
        int n = 0;
        for (;;) {
            uint64_t w = mine ? load_relaxed_u64(&mb->cmd[seq & (WAVE_RING_SLOTS - 1)][tid % WAVE_CMD_WORDS]) : 0;
            unsigned current = warp_ballot(mine && (uint32_t)(w >> 32) == seq);
            if (mine) fields[tid] = (uint32_t)w;
            while (n < WAVE_POLL_CMDS && ((current >> (n * WAVE_CMD_WORDS)) & 0xffu) == 0xffu) n++;
            if (n) break;
            sleep_ns(WAVE_CMD_POLL_NS);
        }
        if (tid == 0) *count = n;
    }
    sync_threads();
    int n = *count;
    sync_threads(); /* everyone has n before warp 0 can poll again */
    return n;
}

/* f0/f1: the two time levels, f[parity] the current one. c2 = c^2.
 * Block 0 reads commands and applies those that need no grid itself; for a
 * step (or stop) it writes the command into bc and joins the other blocks,
 * which wait for it in a grid barrier, so the barrier's own ordering hands
 * the command and every cell block 0 wrote to the whole grid. */
RK_KERNEL void wave_persistent(float *f0, float *f1, wave_mailbox *mb, wave_broadcast *bc, int nx, int ny,
                               float c2, float damping, unsigned parity) {
    RK_SHARED uint32_t fields[WAVE_POLL_CMDS * WAVE_CMD_WORDS];
    RK_SHARED int count;
    const int tid = thread_idx_x(), nt = block_dim_x(), block = block_idx_x();
    const int gtid = block * nt + tid, gthreads = grid_dim_x() * nt, cells = nx * ny;
    uint32_t next = 1;    /* block 0: the next command */
    int have = 0, at = 0; /* block 0: commands read by the last poll, and taken */
    for (;;) {
        if (block == 0) {
            uint32_t grid_op = 0;
            while (grid_op == 0) {
                if (at == have) {
                    /* The ring looked drained: let the host see our replies first. */
                    if (have > 0 && have < WAVE_POLL_CMDS) wave_pause(WAVE_REPOLL_NS);
                    have = wave_read_commands(mb, next, fields, &count);
                    at = 0;
                }
                const uint32_t *f = &fields[at * WAVE_CMD_WORDS];
                const uint32_t c_op = f[WAVE_W_OP], c_count = f[WAVE_W_COUNT];
                const int x = (int)f[WAVE_W_X], y = (int)f[WAVE_W_Y];
                const float value = wave_bits_f32(f[WAVE_W_VALUE]);
                at++;
                if ((c_op == WAVE_OP_STEP && c_count > 0) || c_op == WAVE_OP_STOP) {
                    if (tid == 0) {
                        bc->op = c_op;
                        bc->count = c_count;
                        bc->c2 = c2;
                        bc->damping = damping;
                    }
                    grid_op = c_op;
                    break;
                }
                uint32_t answer = 0;
                if (c_op == WAVE_OP_INJECT) {
                    for (int k = tid; k < WAVE_BUMP_WIDTH * WAVE_BUMP_WIDTH; k += nt)
                        wave_bump_cell(f0, f1, nx, ny, x, y, value, k);
                    sync_threads();
                } else if (c_op == WAVE_OP_FENCE) {
                    /* Before the host copies the field: every cell written so
                     * far (this block's, ordered by its barriers, and the
                     * others', by the grid barrier) is performed before the
                     * reply. Kept off the inject path, where it cost up to
                     * 0.5 us on an H100. */
                    if (tid == 0) thread_fence();
                } else if (c_op == WAVE_OP_SET_SPEED) {
                    c2 = value * value;
                } else if (c_op == WAVE_OP_SET_DAMPING) {
                    damping = value;
                } else if (c_op == WAVE_OP_QUERY) {
                    answer = wave_f32_bits((parity ? f1 : f0)[y * nx + x]);
                }
                if (tid == 0) wave_reply_to(mb, next, answer); /* and zero steps */
                next++;
            }
        }
        grid_sync(); /* the other blocks wait here for block 0's next grid-wide command */
        const uint32_t op = bc->op, steps = bc->count;
        c2 = bc->c2;
        damping = bc->damping;
        if (op == WAVE_OP_STOP) {
            if (block == 0 && tid == 0) wave_reply_to(mb, next, 0);
            return;
        }
        for (uint32_t s = 0; s < steps; s++) {
            const float *cur = parity ? f1 : f0;
            float *prev = parity ? f0 : f1;
            wave_cells(cur, prev, gtid, gthreads, cells, nx, ny, c2, damping);
            grid_sync(); /* the next step, or block 0's next command, sees every cell */
            parity ^= 1u;
        }
        if (block == 0) {
            if (tid == 0) wave_reply_to(mb, next, 0);
            next++;
        }
    }
}
