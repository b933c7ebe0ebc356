/* Pictures of the field: a colour for each value, an RGB image of any size
 * (for PNG frames and the terminal view). */
#ifndef WAVE_VIEW_H
#define WAVE_VIEW_H

#include <stddef.h>
#include <stdint.h>

/* v / scale clamped to [-1, 1]: crests warm (amber to white), troughs cool
 * (blue to cyan), still water near black. */
void wave_colour(float v, float scale, uint8_t rgb[3]);

/* The nx * ny field resampled (nearest cell) to a width * height RGB image. */
void wave_render_rgb(const float *field, int nx, int ny, float scale, uint8_t *rgb, int width, int height);

/* The largest |v| in the field. */
float wave_peak(const float *field, size_t count);

#endif
