/* A minimal streaming JSON writer: enough for rk's reports, nothing more. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "output.h"

void json_init(json_writer *j, FILE *out) {
    *j = (json_writer){.out = out};
}

static void indent(json_writer *j) {
    fputc('\n', j->out);
    for (int i = 0; i < j->depth; i++) fputs("  ", j->out);
}

/* Called before every value and key: separates it from what came before. */
static void before_item(json_writer *j) {
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    if (j->depth == 0) return;
    if (j->need_comma[j->depth]) fputc(',', j->out);
    j->need_comma[j->depth] = true;
    indent(j);
}

static void open_container(json_writer *j, char c) {
    before_item(j);
    fputc(c, j->out);
    if (j->depth + 1 < JSON_MAX_DEPTH) j->depth++;
    j->need_comma[j->depth] = false;
}

static void close_container(json_writer *j, char c) {
    bool had_items = j->need_comma[j->depth];
    if (j->depth > 0) j->depth--;
    if (had_items) indent(j);
    fputc(c, j->out);
}

void json_object_begin(json_writer *j) { open_container(j, '{'); }
void json_object_end(json_writer *j) { close_container(j, '}'); }
void json_array_begin(json_writer *j) { open_container(j, '['); }
void json_array_end(json_writer *j) { close_container(j, ']'); }

static void write_escaped(FILE *out, const char *s) {
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            if (*p < 0x20)
                fprintf(out, "\\u%04x", *p);
            else
                fputc(*p, out);
        }
    }
    fputc('"', out);
}

void json_key(json_writer *j, const char *key) {
    before_item(j);
    write_escaped(j->out, key);
    fputs(": ", j->out);
    j->after_key = true;
}

void json_string(json_writer *j, const char *s) {
    if (!s) {
        json_null(j);
        return;
    }
    before_item(j);
    write_escaped(j->out, s);
}

void json_u64(json_writer *j, uint64_t v) {
    before_item(j);
    fprintf(j->out, "%" PRIu64, v);
}

void json_i64(json_writer *j, int64_t v) {
    before_item(j);
    fprintf(j->out, "%" PRId64, v);
}

void json_double(json_writer *j, double v) {
    if (!isfinite(v)) {
        json_null(j);
        return;
    }
    before_item(j);
    /* The shortest of %.15g and %.17g that reads back as the same double. */
    char text[32];
    snprintf(text, sizeof text, "%.15g", v);
    if (strtod(text, NULL) != v) snprintf(text, sizeof text, "%.17g", v);
    fputs(text, j->out);
}

void json_bool(json_writer *j, bool v) {
    before_item(j);
    fputs(v ? "true" : "false", j->out);
}

void json_null(json_writer *j) {
    before_item(j);
    fputs("null", j->out);
}

void json_field_string(json_writer *j, const char *key, const char *s) {
    json_key(j, key);
    json_string(j, s);
}

void json_field_u64(json_writer *j, const char *key, uint64_t v) {
    json_key(j, key);
    json_u64(j, v);
}

void json_field_double(json_writer *j, const char *key, double v) {
    json_key(j, key);
    json_double(j, v);
}

void json_field_bool(json_writer *j, const char *key, bool v) {
    json_key(j, key);
    json_bool(j, v);
}

void json_finish(json_writer *j) {
    fputc('\n', j->out);
    fflush(j->out);
}
