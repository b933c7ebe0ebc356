/* Stencil kernels: a grid position and neighbour reads, for the CPU.
 *
 * A stencil kernel is an RK_KERNEL that takes an rk_grid_pos and reads its
 * buffers through it:
 *
 *   RK_KERNEL void laplacian(const float *in, float *out, rk_grid_pos p) {
 *       out[rk_pos_idx(p)] = rk_north(p, in) + rk_south(p, in) + rk_east(p, in)
 *                          + rk_west(p, in) - 4.0f * in[rk_pos_idx(p)];
 *   }
 *
 * On the CPU it is ordinary C: rk_stencil_run (below) calls it once per
 * cell. `rk transpile` turns it into a tiled CUDA kernel (docs/transpiler.md).
 *
 * Layout and orientation. A grid is nx * ny (* nz) cells stored row-major:
 * cell (x, y, z) is element (z * ny + y) * nx + x. x grows to the east, y to
 * the south (row 0 is the northern edge, as an image is drawn), z upward:
 *   rk_north: y - 1    rk_south: y + 1    rk_west: x - 1    rk_east: x + 1
 *   rk_down:  z - 1    rk_up:    z + 1    rk_at(p, buf, dx, dy), rk_at3(p, buf, dx, dy, dz)
 *
 * Boundary rule (the same on every backend): a neighbour outside the grid
 * reads the nearest cell inside it (clamp-to-edge, coordinates clamped one
 * axis at a time). Every cell of the grid is computed, whatever the grid's
 * size; no cell outside it is written.
 *
 * Rules the transpiler enforces, so the CPU and GPU agree: offsets are
 * integer constant expressions; a buffer read at offsets is not written by
 * the same kernel (use separate input and output buffers); the body uses no
 * thread or block index, barrier, warp operation or shared memory. Grids
 * hold fewer than 2^31 cells (indices are int, as on the GPU).
 */
#ifndef RINGKERNEL_DSL_STENCIL_H
#define RINGKERNEL_DSL_STENCIL_H

#include "dsl.h"

/* Usable from CUDA code compiled directly too (the transpiler's output does
 * not need this header). */
#if defined(__CUDACC__)
#define RK_STENCIL_FN_ __host__ __device__ static inline
#else
#define RK_STENCIL_FN_ static inline
#endif

/* Where a stencil invocation is. Treat it as opaque in kernel code: only the
 * rk_* functions below are available on every target. */
typedef struct rk_grid_pos {
    int x, y, z;    /* this cell */
    int nx, ny, nz; /* the grid (nz = 1 for a 2-D grid) */
} rk_grid_pos;

RK_STENCIL_FN_ int rk_pos_idx(rk_grid_pos p) { return (p.z * p.ny + p.y) * p.nx + p.x; }
RK_STENCIL_FN_ int rk_pos_x(rk_grid_pos p) { return p.x; }
RK_STENCIL_FN_ int rk_pos_y(rk_grid_pos p) { return p.y; }
RK_STENCIL_FN_ int rk_pos_z(rk_grid_pos p) { return p.z; }
RK_STENCIL_FN_ int rk_pos_nx(rk_grid_pos p) { return p.nx; }
RK_STENCIL_FN_ int rk_pos_ny(rk_grid_pos p) { return p.ny; }
RK_STENCIL_FN_ int rk_pos_nz(rk_grid_pos p) { return p.nz; }

RK_STENCIL_FN_ int rk_grid_clamp_(int v, int n) { return v < 0 ? 0 : v >= n ? n - 1 : v; }

/* The index of the cell at (x + dx, y + dy, z + dz), clamped to the grid. */
RK_STENCIL_FN_ int rk_grid_offset_(rk_grid_pos p, int dx, int dy, int dz) {
    int x = rk_grid_clamp_(p.x + dx, p.nx);
    int y = rk_grid_clamp_(p.y + dy, p.ny);
    int z = rk_grid_clamp_(p.z + dz, p.nz);
    return (z * p.ny + y) * p.nx + x;
}

/* Neighbour reads work on a buffer of any element type. */
#define rk_at(p, buf, dx, dy) ((buf)[rk_grid_offset_((p), (dx), (dy), 0)])
#define rk_at3(p, buf, dx, dy, dz) ((buf)[rk_grid_offset_((p), (dx), (dy), (dz))])
#define rk_north(p, buf) rk_at3(p, buf, 0, -1, 0)
#define rk_south(p, buf) rk_at3(p, buf, 0, 1, 0)
#define rk_west(p, buf) rk_at3(p, buf, -1, 0, 0)
#define rk_east(p, buf) rk_at3(p, buf, 1, 0, 0)
#define rk_down(p, buf) rk_at3(p, buf, 0, 0, -1)
#define rk_up(p, buf) rk_at3(p, buf, 0, 0, 1)

/* ---- the CPU driver ------------------------------------------------------ */

/* Visits every cell of an nx * ny * nz grid in storage order:
 *   rk_stencil_for_each(p, nx, ny, 1) laplacian(in, out, p);
 * Nothing runs when a dimension is 0 or negative. */
#define rk_stencil_for_each(p, nx_, ny_, nz_) \
    for (rk_grid_pos p = rk_grid_first_((nx_), (ny_), (nz_)); p.z < p.nz; rk_grid_next_(&p))

RK_STENCIL_FN_ rk_grid_pos rk_grid_first_(int nx, int ny, int nz) {
    rk_grid_pos p = {0, 0, 0, nx, ny, nz};
    if (nx <= 0 || ny <= 0 || nz <= 0) p.z = p.nz = 0;
    return p;
}

RK_STENCIL_FN_ void rk_grid_next_(rk_grid_pos *p) {
    if (++p->x < p->nx) return;
    p->x = 0;
    if (++p->y < p->ny) return;
    p->y = 0;
    ++p->z;
}

/* Calls fn(user, p) for every cell: for kernels behind a small adapter,
 *   static void run(void *u, rk_grid_pos p) { struct args *a = u; laplacian(a->in, a->out, p); }
 *   rk_stencil_run(nx, ny, 1, run, &args);                                          */
typedef void (*rk_stencil_cell_fn)(void *user, rk_grid_pos p);

static inline void rk_stencil_run(int nx, int ny, int nz, rk_stencil_cell_fn fn, void *user) {
    rk_stencil_for_each(p, nx, ny, nz) fn(user, p);
}

#endif
