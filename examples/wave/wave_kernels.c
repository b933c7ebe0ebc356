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
 *   persistent   wave_persistent (wave_persistent.c, compiled after this
 *                file), one cooperative launch for the simulation's
 *                lifetime.
 */
#ifndef WAVE_PROTOCOL_H
#include "wave_protocol.h"
#endif

/* What the update of cell i reads: the cell, its value one level back, and
 * the sums of its opposite neighbours (walls reflect). Opposite neighbours
 * are added first, so mirrored cells do the same float operations and a
 * centred impulse stays exactly symmetric. */
RK_DEVICE void wave_cell_inputs(const float *cur, const float *prev, int i, int nx, int ny, float *here, float *old,
                                float *ns, float *we) {
    int x = i % nx, y = i / nx;
    *here = cur[i];
    *old = prev[i];
    *ns = cur[y > 0 ? i - nx : i] + cur[y < ny - 1 ? i + nx : i];
    *we = cur[x > 0 ? i - 1 : i] + cur[x < nx - 1 ? i + 1 : i];
}

/* u(t+1) of a cell from what wave_cell_inputs read: one function, so that
 * every place that computes a cell gets the same bits. */
RK_DEVICE float wave_cell_next(float here, float old, float ns, float we, float c2, float damping) {
    float lap = ns + we - 4.0f * here;
    return (2.0f - damping) * here - (1.0f - damping) * old + c2 * lap;
}

/* u(t+1) for cells first, first + stride, ... below cells, written over
 * u(t-1) in prev. The loads of WAVE_CELLS_AHEAD cells are issued before
 * any of them is used or written (the compiler cannot reorder them itself:
 * prev may alias cur), so a thread waits for memory once per group rather
 * than once per cell. */
#define WAVE_CELLS_AHEAD 4
RK_DEVICE void wave_cells(const float *cur, float *prev, int first, int stride, int cells, int nx, int ny, float c2,
                          float damping) {
    for (int base = first; base < cells; base += WAVE_CELLS_AHEAD * stride) {
        float here[WAVE_CELLS_AHEAD], old[WAVE_CELLS_AHEAD], ns[WAVE_CELLS_AHEAD], we[WAVE_CELLS_AHEAD];
        for (int k = 0; k < WAVE_CELLS_AHEAD; k++) {
            int i = base + k * stride;
            if (i >= cells) i = base; /* past the end: recompute the first cell, not stored */
            wave_cell_inputs(cur, prev, i, nx, ny, &here[k], &old[k], &ns[k], &we[k]);
        }
        for (int k = 0; k < WAVE_CELLS_AHEAD; k++) {
            int i = base + k * stride;
            if (i >= cells) break;
            prev[i] = wave_cell_next(here[k], old[k], ns[k], we[k], c2, damping);
        }
    }
}

/* u(t+1) of cell i alone, with the arithmetic of wave_cells. */
RK_DEVICE float wave_cell(const float *cur, const float *prev, int i, int nx, int ny, float c2, float damping) {
    float here, old, ns, we;
    wave_cell_inputs(cur, prev, i, nx, ny, &here, &old, &ns, &we);
    return wave_cell_next(here, old, ns, we, c2, damping);
}

/* Cell k (0 .. WAVE_BUMP_WIDTH^2 - 1) of an impulse at (x0, y0): a smooth
 * bump of the given height, added to both time levels (displaced, at rest);
 * only in rows row_begin .. row_end - 1 (a band's). Returns the cell's index
 * and its share in *v, or -1 for a cell outside those rows or the bump. */
RK_DEVICE int wave_bump_at(int nx, int row_begin, int row_end, int x0, int y0, float amplitude, int k, float *v) {
    int dx = k % WAVE_BUMP_WIDTH - WAVE_BUMP_RADIUS, dy = k / WAVE_BUMP_WIDTH - WAVE_BUMP_RADIUS;
    int x = x0 + dx, y = y0 + dy, d2 = dx * dx + dy * dy, r2 = (WAVE_BUMP_RADIUS + 1) * (WAVE_BUMP_RADIUS + 1);
    if (x < 0 || y < row_begin || x >= nx || y >= row_end || d2 >= r2) return -1;
    float w = 1.0f - (float)d2 / (float)r2;
    *v = amplitude * w * w;
    return y * nx + x;
}

RK_DEVICE void wave_bump_cell(float *f0, float *f1, int nx, int row_begin, int row_end, int x0, int y0,
                              float amplitude, int k) {
    float v = 0.0f;
    int i = wave_bump_at(nx, row_begin, row_end, x0, y0, amplitude, k, &v);
    if (i < 0) return;
    f0[i] += v;
    f1[i] += v;
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
