/* PNG frames of the wave showcase: a written file has the right chunks and
 * checksums, and its stored deflate blocks give back the pixels written.
 * Blocks span more than 64 KiB so the file holds several of them. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "wave_png.h"
#include "wave_view.h"

static uint32_t get32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int main(void) {
    /* the checksums against known values */
    CHECK_U64_EQ(wave_crc32(0, "123456789", 9), 0xcbf43926u);
    CHECK_U64_EQ(wave_adler32(1, "Wikipedia", 9), 0x11e60398u);

    enum { W = 300, H = 90 };
    float field[W * H];
    for (int i = 0; i < W * H; i++) field[i] = (float)((i * 37) % 101 - 50) / 50.0f;
    uint8_t *rgb = malloc(W * H * 3);
    CHECK(rgb);
    wave_render_rgb(field, W, H, wave_peak(field, W * H), rgb, W, H);
    char path[] = "/tmp/rk_wave_png_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    CHECK(wave_png_write(path, rgb, W, H));
    CHECK(!wave_png_write(path, rgb, 0, H));

    FILE *f = fopen(path, "rb");
    CHECK(f);
    static uint8_t file[1 << 20];
    size_t size = fread(file, 1, sizeof file, f);
    fclose(f);
    unlink(path);
    CHECK(memcmp(file, "\x89PNG\r\n\x1a\n", 8) == 0);

    size_t pos = 8, raw_size = (size_t)(W * 3 + 1) * H, got = 0;
    uint8_t *raw = malloc(raw_size);
    CHECK(raw);
    int chunks = 0, blocks = 0;
    bool ended = false;
    while (pos + 12 <= size && !ended) {
        uint32_t len = get32(file + pos);
        const uint8_t *type = file + pos + 4, *data = file + pos + 8;
        CHECK(pos + 12 + len <= size);
        CHECK_U64_EQ(get32(data + len), wave_crc32(0, type, 4 + (size_t)len));
        if (memcmp(type, "IHDR", 4) == 0) {
            CHECK_EQ(get32(data), W);
            CHECK_EQ(get32(data + 4), H);
            CHECK_EQ(data[8], 8);
            CHECK_EQ(data[9], 2);
        } else if (memcmp(type, "IDAT", 4) == 0) {
            CHECK_EQ((data[0] * 256 + data[1]) % 31, 0); /* zlib header check */
            size_t at = 2;
            for (bool last = false; !last;) {
                last = data[at] & 1;
                CHECK_EQ(data[at] >> 1, 0); /* stored */
                size_t n = data[at + 1] | (size_t)data[at + 2] << 8;
                CHECK_EQ(n ^ 0xffff, data[at + 3] | (size_t)data[at + 4] << 8);
                CHECK(got + n <= raw_size);
                memcpy(raw + got, data + at + 5, n);
                got += n;
                at += 5 + n;
                blocks++;
            }
            CHECK_U64_EQ(get32(data + at), wave_adler32(1, raw, got));
            CHECK_EQ(at + 4, len);
        } else if (memcmp(type, "IEND", 4) == 0) {
            ended = true;
        }
        chunks++;
        pos += 12 + len;
    }
    CHECK(ended);
    CHECK_EQ(chunks, 3);
    CHECK_EQ(pos, size);
    CHECK_EQ(got, raw_size);
    CHECK_GT(blocks, 1);
    for (int y = 0; y < H; y++) {
        CHECK_EQ(raw[(size_t)y * (W * 3 + 1)], 0);
        CHECK(memcmp(raw + (size_t)y * (W * 3 + 1) + 1, rgb + (size_t)y * W * 3, W * 3) == 0);
    }
    /* colours: still water is dark, crests warm, troughs cool */
    uint8_t c[3];
    wave_colour(0.0f, 1.0f, c);
    CHECK(c[0] < 20 && c[1] < 20 && c[2] < 20);
    wave_colour(1.0f, 1.0f, c);
    CHECK(c[0] > 200 && c[0] > c[2]);
    wave_colour(-1.0f, 1.0f, c);
    CHECK(c[2] > 200 && c[2] > c[0]);
    free(raw);
    free(rgb);
    printf("png: %d chunks, %d stored blocks, checksums and pixels ok\n", chunks, blocks);
    return 0;
}
