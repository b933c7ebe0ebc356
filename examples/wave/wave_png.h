/* PNG files without a library: 8-bit RGB, the image data as a zlib stream
 * of stored (uncompressed) deflate blocks, CRC-32 and Adler-32 computed
 * here. Larger files than a compressor makes, but any viewer reads them. */
#ifndef WAVE_PNG_H
#define WAVE_PNG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* rgb: width * height pixels, 3 bytes each, rows top to bottom. false (with
 * errno set) if the file cannot be written. */
bool wave_png_write(const char *path, const uint8_t *rgb, int width, int height);

/* The checksums, for anyone who checks a file. crc starts at 0, adler at 1. */
uint32_t wave_crc32(uint32_t crc, const void *data, size_t size);
uint32_t wave_adler32(uint32_t adler, const void *data, size_t size);

#endif
