/* A 3-D heat grid on the rk_sim API, in the ringkernel DSL: one source for
 * the CPU (system C compiler), CUDA (NVRTC) and WebGPU (transpiled to
 * WGSL). The partition's rows are the grid's planes (z); each plane
 * exchanges heat with the planes above and below and with its four
 * neighbours in the plane. Insulated walls: a neighbour outside the grid
 * reads the cell itself. Both time levels are in one field t of 2 * cells:
 * level (step & 1) is the current one and starts at (step & 1) * cells.
 * Offsets, not pointers, because WGSL cannot pass a pointer into a field.
 *
 * Commands (heat3d.h): add heat to a cell, read a cell, count the cells
 * above a threshold over some planes (an answer that adds up over bands),
 * set the diffusion number (a global command). Their payloads are the
 * structs of heat3d_args.h, compiled in front of this file. */

/* Where the time level of `step` starts in t. */
RK_DEVICE int heat_level(const rk_sim_state *s, uint64_t step) {
    return (int)(step & 1u) * s->scalars->nx * s->scalars->ny * s->rows;
}

/* The new value of cell i, at (x, y, z), of the level that starts at cur:
 * the opposite neighbours added first, so mirrored cells do the same
 * operations. */
RK_DEVICE float heat_cell_next(const rk_sim_state *s, int cur, int i, int x, int y, int z, int nx, int ny, int nz,
                               float alpha) {
    const int plane = nx * ny;
    const float here = s->t[cur + i];
    const float ew = s->t[cur + (x > 0 ? i - 1 : i)] + s->t[cur + (x < nx - 1 ? i + 1 : i)];
    const float ns = s->t[cur + (y > 0 ? i - nx : i)] + s->t[cur + (y < ny - 1 ? i + nx : i)];
    const float ud = s->t[cur + (z > 0 ? i - plane : i)] + s->t[cur + (z < nz - 1 ? i + plane : i)];
    return here + alpha * ((ew + ns + ud) - 6.0f * here);
}

/* (*x, *y, *z) of the cell `offset` cells into plane `plane_z` of an nx *
 * ny plane, by taking whole rows and planes off rather than by integer
 * divisions: their latency (some hundred cycles each) held up every load
 * of the step after them (heat3d 64^3's step 7.2 -> 6.0 us with the cells
 * carried below; H200, session 27). A block's threads span a few rows;
 * only planes narrower or shorter than an eighth of them take a division. */
RK_DEVICE void heat_place(int plane_z, int offset, int nx, int ny, int *x, int *y, int *z) {
    int row = 0;
    if (offset >= 8 * nx) {
        row = offset / nx;
        offset = offset % nx;
    }
    if (row >= 8 * ny) {
        plane_z += row / ny;
        row = row % ny;
    }
    while (offset >= nx) {
        offset -= nx;
        row += 1;
    }
    while (row >= ny) {
        row -= ny;
        plane_z += 1;
    }
    *x = offset;
    *y = row;
    *z = plane_z;
}

/* One step of the planes r->row_begin .. r->row_end - 1, HEAT_CELLS_AHEAD
 * cells a thread at a time: every load of the group before any store (the
 * compiler cannot reorder them itself: the stores go to the array the loads
 * read), so a thread waits for memory once per group, not once per cell. A
 * cell's (x, y, z) is carried from the one before (heat_place). */
#define HEAT_CELLS_AHEAD 4
RK_DEVICE void heat_step(const rk_sim_state *s, const rk_sim_region *r) {
    const int nx = s->scalars->nx, ny = s->scalars->ny, nz = s->rows, plane = nx * ny;
    const float alpha = s->scalars->alpha;
    const int cur = heat_level(s, r->step), next = heat_level(s, r->step + 1);
    const int end = r->row_end * plane, stride = r->threads;
    const int first = r->row_begin * plane + r->tid;
    int x = 0, y = 0, z = 0, dx = 0, dy = 0, dz = 0;
    heat_place(r->row_begin, r->tid, nx, ny, &x, &y, &z); /* of the group's first cell */
    heat_place(0, stride, nx, ny, &dx, &dy, &dz);          /* one stride */
    for (int base = first; base < end; base += HEAT_CELLS_AHEAD * stride) {
        float v[HEAT_CELLS_AHEAD];
        int cx = x, cy = y, cz = z;
        for (int k = 0; k < HEAT_CELLS_AHEAD; k++) {
            const int i = base + k * stride;
            const int past = i >= end; /* past the end: the first cell again, not stored */
            v[k] = heat_cell_next(s, cur, past ? base : i, past ? x : cx, past ? y : cy, past ? z : cz, nx, ny, nz,
                                  alpha);
            cx += dx;
            cy += dy;
            cz += dz;
            if (cx >= nx) {
                cx -= nx;
                cy += 1;
            }
            if (cy >= ny) {
                cy -= ny;
                cz += 1;
            }
        }
        x = cx;
        y = cy;
        z = cz;
        for (int k = 0; k < HEAT_CELLS_AHEAD && base + k * stride < end; k++) s->t[next + base + k * stride] = v[k];
    }
}

/* Where cell (x, y, z) of the level of `step` is in t. */
RK_DEVICE int heat_cell(const rk_sim_state *s, uint64_t step, int x, int y, int z) {
    return heat_level(s, step) + (z * s->scalars->ny + y) * s->scalars->nx + x;
}

RK_DEVICE uint64_t heat_add(const rk_sim_state *s, const rk_sim_region *r, const heat_cell_args *a) {
    if (r->tid == 0) s->t[heat_cell(s, r->step, a->x, a->y, a->z)] += a->amount;
    return 0;
}

/* The cell after r->step steps. Ahead (RK_SIM_QUERY_NEXT: the planes still
 * hold step r->step - 1), the cell's update as heat_step makes it. */
RK_DEVICE uint64_t heat_query(const rk_sim_state *s, const rk_sim_region *r, const heat_cell_args *a) {
    if (r->ahead) {
        const int nx = s->scalars->nx, ny = s->scalars->ny;
        return rk_sim_answer_f32(heat_cell_next(s, heat_level(s, r->step - 1u), (a->z * ny + a->y) * nx + a->x, a->x,
                                                a->y, a->z, nx, ny, s->rows, s->scalars->alpha));
    }
    return rk_sim_answer_f32(s->t[heat_cell(s, r->step, a->x, a->y, a->z)]);
}

/* Every thread counts its cells of the band's planes; thread 0 answers the band's total. */
RK_DEVICE uint64_t heat_count_hot(const rk_sim_state *s, const rk_sim_region *r, const heat_count_args *a) {
    RK_SHARED int hot;
    const int plane = s->scalars->nx * s->scalars->ny, cur = heat_level(s, r->step);
    if (r->tid == 0) hot = 0;
    sync_threads();
    int mine = 0;
    for (int i = r->row_begin * plane + r->tid; i < r->row_end * plane; i += r->threads)
        mine += s->t[cur + i] > a->threshold;
    atomic_add_i32(&hot, mine);
    sync_threads();
    return (uint64_t)hot;
}

RK_DEVICE uint64_t heat_set_alpha(const rk_sim_state *s, const rk_sim_region *r, const heat_alpha_args *a) {
    if (r->tid == 0) s->scalars->alpha = a->alpha;
    return 0;
}
