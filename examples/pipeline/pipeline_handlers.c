/* The pipeline's two handlers, in the DSL. The host never repeats these
 * types: the build runs `rk header` on this file to make pipeline_types.h,
 * and the kernels are launched from this file (handler_file), so errors
 * name its lines.
 *
 * parse_line reads "SENSOR:VALUE" (decimal, VALUE may be negative), answers
 * the Reading and emits it on port 0; a malformed line gets status -1 and is
 * not emitted. aggregate keeps count, sum, min and max per sensor; a Reading
 * whose sensor is QUERY_BASE + s asks for sensor s's Stat instead. */
#define SENSORS 16u
#define QUERY_BASE 1000u
#define LINE_BYTES 60u

typedef struct { uint32_t len; uint32_t text[15]; } Line; /* ASCII, 4 bytes a word, little-endian */
typedef struct { uint32_t sensor; int32_t value; } Reading;
typedef struct { int64_t sum; uint32_t count; int32_t min, max, pad; } Stat;
typedef struct { Stat sensor[SENSORS]; } Stats;

RK_DEVICE uint32_t byte_at(uint32_t word, uint32_t i) { return (word >> ((i & 3u) * 8u)) & 0xffu; }

RK_HANDLER int parse_line(const Line *line, Reading *out, void *state) {
    (void)state;
    uint32_t n = line->len < LINE_BYTES ? line->len : LINE_BYTES;
    uint32_t sensor = 0u, value = 0u, i = 0u, digits = 0u;
    for (; i < n; i++) { /* SENSOR, up to ':' */
        uint32_t c = byte_at(line->text[i >> 2], i);
        if (c == 58u) break;
        if (c < 48u || c > 57u || digits == 6u) return -1;
        sensor = sensor * 10u + (c - 48u);
        digits++;
    }
    if (digits == 0u || i == n || sensor >= SENSORS) return -1;
    i++;
    int negative = 0;
    if (i < n && byte_at(line->text[i >> 2], i) == 45u) { /* '-' */
        negative = 1;
        i++;
    }
    for (digits = 0u; i < n; i++) { /* VALUE, to the end */
        uint32_t c = byte_at(line->text[i >> 2], i);
        if (c < 48u || c > 57u || digits == 9u) return -1;
        value = value * 10u + (c - 48u);
        digits++;
    }
    if (digits == 0u) return -1;
    out->sensor = sensor;
    out->value = negative ? -(int32_t)value : (int32_t)value;
    return rk_emit(0, out);
}

RK_HANDLER int aggregate(const Reading *r, Stat *out, Stats *state) {
    if (r->sensor >= QUERY_BASE) {
        uint32_t s = r->sensor - QUERY_BASE;
        if (s >= SENSORS) return -1;
        *out = state->sensor[s];
        return 0;
    }
    if (r->sensor >= SENSORS) return -1;
    uint32_t s = r->sensor;
    if (state->sensor[s].count == 0u || r->value < state->sensor[s].min) state->sensor[s].min = r->value;
    if (state->sensor[s].count == 0u || r->value > state->sensor[s].max) state->sensor[s].max = r->value;
    state->sensor[s].count += 1u;
    state->sensor[s].sum += r->value;
    *out = state->sensor[s];
    return 0;
}
