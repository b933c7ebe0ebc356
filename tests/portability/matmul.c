/* The textbook 16x16 tiled matrix multiply and a tiled transpose (the tile
 * padded by one column against bank conflicts), launched with 16x16 blocks;
 * sizes are not multiples of the tile. */
#include <ringkernel/dsl.h>

#define TILE 16

RK_KERNEL void matmul(const float *a, const float *b, float *c, int m, int n, int k) {
    RK_SHARED float ta[TILE][TILE];
    RK_SHARED float tb[TILE][TILE];
    int tx = thread_idx_x(), ty = thread_idx_y();
    int row = block_idx_y() * TILE + ty;
    int col = block_idx_x() * TILE + tx;
    float acc = 0.0f;
    for (int t0 = 0; t0 < k; t0 += TILE) {
        ta[ty][tx] = (row < m && t0 + tx < k) ? a[row * k + t0 + tx] : 0.0f;
        tb[ty][tx] = (t0 + ty < k && col < n) ? b[(t0 + ty) * n + col] : 0.0f;
        sync_threads();
        for (int j = 0; j < TILE; j++) acc += ta[ty][j] * tb[j][tx];
        sync_threads();
    }
    if (row < m && col < n) c[row * n + col] = acc;
}

RK_KERNEL void transpose(const float *in, float *out, int rows, int cols) {
    RK_SHARED float tile[TILE][TILE + 1];
    int x = block_idx_x() * block_dim_x() + thread_idx_x();
    int y = block_idx_y() * block_dim_y() + thread_idx_y();
    if (x < cols && y < rows) tile[thread_idx_y()][thread_idx_x()] = in[y * cols + x];
    sync_threads();
    int ox = block_idx_y() * block_dim_y() + thread_idx_x();
    int oy = block_idx_x() * block_dim_x() + thread_idx_y();
    if (ox < rows && oy < cols) out[oy * rows + ox] = tile[thread_idx_x()][thread_idx_y()];
}
