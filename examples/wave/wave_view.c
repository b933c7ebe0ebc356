/* Colours and resampling for the wave pictures (wave_view.h). */
#include "wave_view.h"

#include <math.h>

static uint8_t channel(float v) { return (uint8_t)(v <= 0.0f ? 0 : v >= 1.0f ? 255 : (int)(v * 255.0f + 0.5f)); }

void wave_colour(float v, float scale, uint8_t rgb[3]) {
    float t = scale > 0.0f ? v / scale : 0.0f;
    if (!(t == t)) t = 0.0f; /* NaN shows as still water */
    t = t > 1.0f ? 1.0f : t < -1.0f ? -1.0f : t;
    float a = sqrtf(fabsf(t)); /* small ripples stay visible */
    float base = 0.04f;
    if (t >= 0.0f) {
        rgb[0] = channel(base + a);
        rgb[1] = channel(base + 0.75f * a * a);
        rgb[2] = channel(base + 0.1f * a + 0.6f * a * a * a * a);
    } else {
        rgb[0] = channel(base + 0.3f * a * a * a * a);
        rgb[1] = channel(base + 0.55f * a * a);
        rgb[2] = channel(base + 0.95f * a);
    }
}

void wave_render_rgb(const float *field, int nx, int ny, float scale, uint8_t *rgb, int width, int height) {
    for (int y = 0; y < height; y++) {
        int fy = (int)(((long long)y * ny + ny / 2) / height);
        if (fy >= ny) fy = ny - 1;
        for (int x = 0; x < width; x++) {
            int fx = (int)(((long long)x * nx + nx / 2) / width);
            if (fx >= nx) fx = nx - 1;
            wave_colour(field[(size_t)fy * nx + fx], scale, rgb + ((size_t)y * width + x) * 3);
        }
    }
}

float wave_peak(const float *field, size_t count) {
    float peak = 0.0f;
    for (size_t i = 0; i < count; i++) {
        float a = fabsf(field[i]);
        if (a > peak) peak = a;
    }
    return peak;
}
