/* Sobel edges on an int image: magnitude |gx| + |gy| and a direction in
 * four classes chosen by an else-if chain (0 none, 1 horizontal, 2
 * vertical, 3 diagonal). Border pixels are clamped. */
#include <ringkernel/dsl.h>

RK_DEVICE int clampi(int v, int n) { return v < 0 ? 0 : (v >= n ? n - 1 : v); }

#define px(img, x, y, w, h) (img)[clampi((y), (h)) * (w) + clampi((x), (w))]

RK_KERNEL void sobel_dir(const int *img, int *mag, int *dir, int w, int h, int threshold) {
    int x = block_idx_x() * block_dim_x() + thread_idx_x();
    int y = block_idx_y() * block_dim_y() + thread_idx_y();
    if (x >= w || y >= h) return;
    int gx = -px(img, x - 1, y - 1, w, h) - 2 * px(img, x - 1, y, w, h) - px(img, x - 1, y + 1, w, h) +
             px(img, x + 1, y - 1, w, h) + 2 * px(img, x + 1, y, w, h) + px(img, x + 1, y + 1, w, h);
    int gy = -px(img, x - 1, y - 1, w, h) - 2 * px(img, x, y - 1, w, h) - px(img, x + 1, y - 1, w, h) +
             px(img, x - 1, y + 1, w, h) + 2 * px(img, x, y + 1, w, h) + px(img, x + 1, y + 1, w, h);
    int ax = gx < 0 ? -gx : gx, ay = gy < 0 ? -gy : gy;
    int m = ax + ay;
    int d;
    if (m < threshold) d = 0;
    else if (ax > 2 * ay) d = 1;
    else if (ay > 2 * ax) d = 2;
    else d = 3;
    mag[y * w + x] = m;
    dir[y * w + x] = d;
}
