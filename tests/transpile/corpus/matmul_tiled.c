/* C = A * B with 8x8 tiles of A and B staged in shared memory; sizes need
 * not be multiples of the tile. */
#include <ringkernel/dsl.h>

#define TILE 8

RK_KERNEL void matmul_tiled(const float *a, const float *b, float *c, int m, int n, int k) {
    RK_SHARED float ta[TILE][TILE];
    RK_SHARED float tb[TILE][TILE];
    int tx = thread_idx_x(), ty = thread_idx_y();
    int row = block_idx_y() * TILE + ty;
    int col = block_idx_x() * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < (k + TILE - 1) / TILE; t++) {
        int ac = t * TILE + tx, br = t * TILE + ty;
        ta[ty][tx] = (row < m && ac < k) ? a[row * k + ac] : 0.0f;
        tb[ty][tx] = (br < k && col < n) ? b[br * n + col] : 0.0f;
        sync_threads();
        for (int j = 0; j < TILE; j++) acc += ta[ty][j] * tb[j][tx];
        sync_threads();
    }
    if (row < m && col < n) c[row * n + col] = acc;
}
