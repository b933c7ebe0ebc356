/* A 3-D heat grid on the rk_sim API, in the ringkernel DSL: one source for
 * the CPU (system C compiler) and CUDA (NVRTC). The partition's rows are
 * the grid's planes (z); each plane exchanges heat with the planes above
 * and below and with its four neighbours in the plane. Insulated walls: a
 * neighbour outside the grid reads the cell itself. Two time levels, t0
 * and t1; level (step & 1) is the current one.
 *
 * Commands (heat3d.h): add heat to a cell, read a cell, count the cells
 * above a threshold over some planes (an answer that adds up over bands),
 * set the diffusion number (a global command). Their payloads are the
 * structs of heat3d_args.h, compiled in front of this file. */

RK_DEVICE float *heat_level(const rk_sim_state *s, uint64_t step) { return (step & 1u) ? s->t1 : s->t0; }

/* The new value of cell i: the opposite neighbours added first, so mirrored
 * cells do the same operations. */
RK_DEVICE float heat_cell_next(const float *cur, int i, int nx, int ny, int nz, float alpha) {
    const int plane = nx * ny, x = i % nx, y = (i / nx) % ny, z = i / plane;
    const float here = cur[i];
    const float ew = cur[x > 0 ? i - 1 : i] + cur[x < nx - 1 ? i + 1 : i];
    const float ns = cur[y > 0 ? i - nx : i] + cur[y < ny - 1 ? i + nx : i];
    const float ud = cur[z > 0 ? i - plane : i] + cur[z < nz - 1 ? i + plane : i];
    return here + alpha * ((ew + ns + ud) - 6.0f * here);
}

/* One step of the planes r->row_begin .. r->row_end - 1. */
RK_DEVICE void heat_step(const rk_sim_state *s, const rk_sim_region *r) {
    const int nx = s->scalars->nx, ny = s->scalars->ny, nz = s->rows;
    const float alpha = s->scalars->alpha;
    const float *cur = heat_level(s, r->step);
    float *next = heat_level(s, r->step + 1);
    const int end = r->row_end * nx * ny;
    for (int i = r->row_begin * nx * ny + r->tid; i < end; i += r->threads) next[i] = heat_cell_next(cur, i, nx, ny, nz, alpha);
}

RK_DEVICE uint64_t heat_add(const rk_sim_state *s, const rk_sim_region *r, const heat_cell_args *a) {
    if (r->tid == 0) heat_level(s, r->step)[(a->z * s->scalars->ny + a->y) * s->scalars->nx + a->x] += a->amount;
    return 0;
}

RK_DEVICE uint64_t heat_query(const rk_sim_state *s, const rk_sim_region *r, const heat_cell_args *a) {
    return rk_sim_answer_f32(heat_level(s, r->step)[(a->z * s->scalars->ny + a->y) * s->scalars->nx + a->x]);
}

/* Every thread counts its cells of the band's planes; thread 0 answers the band's total. */
RK_DEVICE uint64_t heat_count_hot(const rk_sim_state *s, const rk_sim_region *r, const heat_count_args *a) {
    RK_SHARED int hot;
    const int plane = s->scalars->nx * s->scalars->ny;
    const float *cur = heat_level(s, r->step);
    if (r->tid == 0) hot = 0;
    sync_threads();
    int mine = 0;
    for (int i = r->row_begin * plane + r->tid; i < r->row_end * plane; i += r->threads) mine += cur[i] > a->threshold;
    atomic_add_i32(&hot, mine);
    sync_threads();
    return (uint64_t)hot;
}

RK_DEVICE uint64_t heat_set_alpha(const rk_sim_state *s, const rk_sim_region *r, const heat_alpha_args *a) {
    if (r->tid == 0) s->scalars->alpha = a->alpha;
    return 0;
}
