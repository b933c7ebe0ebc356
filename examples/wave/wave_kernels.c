/* The wave's physics on the rk_sim API, in the ringkernel DSL: one source
 * for the CPU (system C compiler), CUDA (NVRTC) and WebGPU (transpiled to
 * WGSL). wave_sim.c puts the grid's width in front of it as a constant
 * (WAVE_NX), then wave_args.h; the library generates rk_sim_state (the
 * field u, the scalars c2 and damping) around it.
 *
 * A 2-D wave u_tt = c^2 (u_xx + u_yy) - damping u_t on an nx * ny grid,
 * leapfrog in time (FDTD). Walls reflect (a neighbour outside the grid
 * reads the edge cell). Stable for a Courant number c <= 1/sqrt(2). The
 * partition's rows are the grid's rows; a cell reads the rows above and
 * below (halo_rows 1).
 *
 * Both time levels are in the field u of 2 * nx * ny floats: level
 * (step & 1) is the current one and starts at (step & 1) * nx * ny; a step
 * overwrites the older level in place, each cell from the current level
 * and its own old value. Offsets, not pointers, because WGSL cannot pass a
 * pointer into a field.
 */

/* Where the time level of `step` starts in u. */
RK_DEVICE int wave_level(const rk_sim_state *s, uint64_t step) {
    return (int)(step & 1u) * WAVE_NX * s->rows;
}

/* What the update of cell i reads: the cell in the level at cur, its value
 * in the level at prev, and the sums of its opposite neighbours (walls
 * reflect). Opposite neighbours are added first, so mirrored cells do the
 * same float operations and a centred impulse stays exactly symmetric. */
RK_DEVICE void wave_cell_inputs(const rk_sim_state *s, int cur, int prev, int i, int nx, int ny, float *here,
                                float *old, float *ns, float *we) {
    int x = i % nx, y = i / nx;
    *here = s->u[cur + i];
    *old = s->u[prev + i];
    *ns = s->u[cur + (y > 0 ? i - nx : i)] + s->u[cur + (y < ny - 1 ? i + nx : i)];
    *we = s->u[cur + (x > 0 ? i - 1 : i)] + s->u[cur + (x < nx - 1 ? i + 1 : i)];
}

/* u(t+1) of a cell from what wave_cell_inputs read: one function, so that
 * every place that computes a cell gets the same bits. */
RK_DEVICE float wave_cell_next(float here, float old, float ns, float we, float c2, float damping) {
    float lap = ns + we - 4.0f * here;
    return (2.0f - damping) * here - (1.0f - damping) * old + c2 * lap;
}

/* u(t+1) for cells first, first + stride, ... below end, written over
 * u(t-1) in the level at prev. The loads of WAVE_CELLS_AHEAD cells are
 * issued before any of them is used or written (the compiler cannot
 * reorder them itself: the stores go to the field the loads read), so a
 * thread waits for memory once per group rather than once per cell. */
#define WAVE_CELLS_AHEAD 4
RK_DEVICE void wave_cells(const rk_sim_state *s, int cur, int prev, int first, int stride, int end, int nx, int ny,
                          float c2, float damping) {
    for (int base = first; base < end; base += WAVE_CELLS_AHEAD * stride) {
        float here[WAVE_CELLS_AHEAD], old[WAVE_CELLS_AHEAD], ns[WAVE_CELLS_AHEAD], we[WAVE_CELLS_AHEAD];
        for (int k = 0; k < WAVE_CELLS_AHEAD; k++) {
            int i = base + k * stride;
            if (i >= end) i = base; /* past the end: recompute the first cell, not stored */
            wave_cell_inputs(s, cur, prev, i, nx, ny, &here[k], &old[k], &ns[k], &we[k]);
        }
        for (int k = 0; k < WAVE_CELLS_AHEAD; k++) {
            int i = base + k * stride;
            if (i >= end) break;
            s->u[prev + i] = wave_cell_next(here[k], old[k], ns[k], we[k], c2, damping);
        }
    }
}

/* u(t+1) of cell i alone, with the arithmetic of wave_cells. */
RK_DEVICE float wave_cell(const rk_sim_state *s, int cur, int prev, int i, int nx, int ny, float c2, float damping) {
    float here, old, ns, we;
    wave_cell_inputs(s, cur, prev, i, nx, ny, &here, &old, &ns, &we);
    return wave_cell_next(here, old, ns, we, c2, damping);
}

/* The step function: the band's rows, its threads taking every
 * r->threads-th cell. */
RK_DEVICE void wave_advance(const rk_sim_state *s, const rk_sim_region *r) {
    const int nx = WAVE_NX;
    wave_cells(s, wave_level(s, r->step), wave_level(s, r->step + 1u), r->row_begin * nx + r->tid, r->threads,
               r->row_end * nx, nx, s->rows, s->scalars->c2, s->scalars->damping);
}

/* Cell k (0 .. WAVE_BUMP_WIDTH^2 - 1) of an impulse at (x0, y0): a smooth
 * bump of the given height; only in rows row_begin .. row_end - 1 (the
 * call's). Returns the cell's index and its share in *v, or -1 for a cell
 * outside those rows or the bump. */
RK_DEVICE int wave_bump_at(int nx, int row_begin, int row_end, int x0, int y0, float amplitude, int k, float *v) {
    int dx = k % WAVE_BUMP_WIDTH - WAVE_BUMP_RADIUS, dy = k / WAVE_BUMP_WIDTH - WAVE_BUMP_RADIUS;
    int x = x0 + dx, y = y0 + dy, d2 = dx * dx + dy * dy, r2 = (WAVE_BUMP_RADIUS + 1) * (WAVE_BUMP_RADIUS + 1);
    if (x < 0 || y < row_begin || x >= nx || y >= row_end || d2 >= r2) return -1;
    float w = 1.0f - (float)d2 / (float)r2;
    *v = amplitude * w * w;
    return y * nx + x;
}

/* WAVE_INJECT (row-wise, over the bump's rows): the bump added to both
 * time levels (displaced, at rest), a thread per cell of it -- two cells a
 * thread where the call has fewer threads than the bump has cells (one
 * warp: the relay block's applier). Every load before any store: the
 * compiler may not move a load above a store (they may alias), and each
 * wait is a trip to memory. */
RK_DEVICE uint64_t wave_apply_impulse(const rk_sim_state *s, const rk_sim_region *r, const wave_cell_args *a) {
    const int nx = WAVE_NX, other = nx * s->rows, cells = WAVE_BUMP_WIDTH * WAVE_BUMP_WIDTH;
    for (int k = r->tid; k < cells; k += 2 * r->threads) {
        const int k2 = k + r->threads;
        float v = 0.0f, v2 = 0.0f, now = 0.0f, then = 0.0f, now2 = 0.0f, then2 = 0.0f;
        const int i = wave_bump_at(nx, r->row_begin, r->row_end, a->x, a->y, a->amplitude, k, &v);
        const int i2 = k2 < cells ? wave_bump_at(nx, r->row_begin, r->row_end, a->x, a->y, a->amplitude, k2, &v2) : -1;
        if (i >= 0) {
            now = s->u[i];
            then = s->u[other + i];
        }
        if (i2 >= 0) {
            now2 = s->u[i2];
            then2 = s->u[other + i2];
        }
        if (i >= 0) {
            s->u[i] = now + v;
            s->u[other + i] = then + v;
        }
        if (i2 >= 0) {
            s->u[i2] = now2 + v2;
            s->u[other + i2] = then2 + v2;
        }
    }
    return 0;
}

/* WAVE_QUERY: the cell after r->step steps. Ahead (RK_SIM_QUERY_NEXT: the
 * rows still hold step r->step - 1), the cell's update as wave_advance
 * makes it, from level r->step - 1 and the cell's own old value in level
 * r->step. */
RK_DEVICE uint64_t wave_read_cell(const rk_sim_state *s, const rk_sim_region *r, const wave_cell_args *a) {
    const int nx = WAVE_NX, i = a->y * nx + a->x;
    if (r->ahead)
        return rk_sim_answer_f32(wave_cell(s, wave_level(s, r->step - 1u), wave_level(s, r->step), i, nx, s->rows,
                                           s->scalars->c2, s->scalars->damping));
    return rk_sim_answer_f32(s->u[wave_level(s, r->step) + i]);
}

/* WAVE_SET_C2 and WAVE_SET_DAMPING: global commands, the only kind that may
 * change a scalar. */
RK_DEVICE uint64_t wave_put_c2(const rk_sim_state *s, const rk_sim_region *r, const wave_value_args *a) {
    if (r->tid == 0) s->scalars->c2 = a->value;
    return 0;
}

RK_DEVICE uint64_t wave_put_damping(const rk_sim_state *s, const rk_sim_region *r, const wave_value_args *a) {
    if (r->tid == 0) s->scalars->damping = a->value;
    return 0;
}
