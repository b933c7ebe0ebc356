/* A PNG writer: signature, IHDR, one IDAT, IEND (wave_png.h). */
#include "wave_png.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { STORED_MAX = 65535 }; /* bytes in one stored deflate block */

static uint32_t crc_table[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void make_crc_table(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) c = c & 1u ? 0xedb88320u ^ (c >> 1) : c >> 1;
        crc_table[n] = c;
    }
}

uint32_t wave_crc32(uint32_t crc, const void *data, size_t size) {
    pthread_once(&crc_once, make_crc_table);
    const uint32_t *table = crc_table;
    const uint8_t *p = data;
    crc = ~crc;
    for (size_t i = 0; i < size; i++) crc = table[(crc ^ p[i]) & 0xffu] ^ (crc >> 8);
    return ~crc;
}

uint32_t wave_adler32(uint32_t adler, const void *data, size_t size) {
    const uint8_t *p = data;
    uint32_t a = adler & 0xffffu, b = adler >> 16;
    for (size_t i = 0; i < size; i++) {
        a = (a + p[i]) % 65521u;
        b = (b + a) % 65521u;
    }
    return (b << 16) | a;
}

static void put32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* Length, type, data, CRC of type and data. */
static bool write_chunk(FILE *f, const char type[4], const uint8_t *data, size_t size) {
    uint8_t head[8], tail[4];
    put32(head, (uint32_t)size);
    memcpy(head + 4, type, 4);
    uint32_t crc = wave_crc32(0, type, 4);
    crc = wave_crc32(crc, data, size);
    put32(tail, crc);
    return fwrite(head, 1, 8, f) == 8 && (size == 0 || fwrite(data, 1, size, f) == size) && fwrite(tail, 1, 4, f) == 4;
}

bool wave_png_write(const char *path, const uint8_t *rgb, int width, int height) {
    if (!path || !rgb || width <= 0 || height <= 0 || width > 16384 || height > 16384) {
        errno = EINVAL;
        return false;
    }
    /* The filtered image: each row is filter type 0 (none), then its pixels. */
    size_t row = (size_t)width * 3 + 1, raw_size = row * (size_t)height;
    size_t blocks = (raw_size + STORED_MAX - 1) / STORED_MAX;
    size_t idat_size = 2 + blocks * 5 + raw_size + 4;
    uint8_t *raw = malloc(raw_size), *idat = malloc(idat_size);
    if (!raw || !idat) {
        free(raw);
        free(idat);
        errno = ENOMEM;
        return false;
    }
    for (int y = 0; y < height; y++) {
        raw[(size_t)y * row] = 0;
        memcpy(raw + (size_t)y * row + 1, rgb + (size_t)y * width * 3, (size_t)width * 3);
    }
    /* zlib: deflate, 32 KiB window, no dictionary (0x78 0x01 is a multiple of 31). */
    uint8_t *p = idat;
    *p++ = 0x78;
    *p++ = 0x01;
    for (size_t done = 0; done < raw_size;) {
        size_t n = raw_size - done < STORED_MAX ? raw_size - done : STORED_MAX;
        *p++ = done + n == raw_size ? 1 : 0; /* BFINAL, BTYPE 00 = stored */
        *p++ = (uint8_t)n;
        *p++ = (uint8_t)(n >> 8);
        *p++ = (uint8_t)~n;
        *p++ = (uint8_t)(~n >> 8);
        memcpy(p, raw + done, n);
        p += n;
        done += n;
    }
    put32(p, wave_adler32(1, raw, raw_size));

    uint8_t ihdr[13];
    put32(ihdr, (uint32_t)width);
    put32(ihdr + 4, (uint32_t)height);
    ihdr[8] = 8;  /* bits per channel */
    ihdr[9] = 2;  /* truecolour RGB */
    ihdr[10] = 0; /* deflate */
    ihdr[11] = 0; /* adaptive filtering (every row says "none") */
    ihdr[12] = 0; /* no interlace */
    static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    FILE *f = fopen(path, "wb");
    bool ok = f && fwrite(signature, 1, 8, f) == 8 && write_chunk(f, "IHDR", ihdr, sizeof ihdr) &&
              write_chunk(f, "IDAT", idat, idat_size) && write_chunk(f, "IEND", NULL, 0);
    int saved = errno;
    if (f && fclose(f) != 0 && ok) {
        ok = false;
        saved = errno;
    }
    free(raw);
    free(idat);
    errno = saved;
    return ok;
}
