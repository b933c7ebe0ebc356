/* rk's two output forms: aligned text tables for people, JSON for programs. */
#ifndef RK_TOOL_OUTPUT_H
#define RK_TOOL_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- JSON writer (json.c) ------------------------------------------------
 * Streams to a FILE, inserting commas and indentation itself:
 *     json_object_begin(&j);  json_key(&j, "name"); json_string(&j, "cpu");
 *     json_object_end(&j);
 * Numbers that are not finite are written as null (JSON has no NaN). */
enum { JSON_MAX_DEPTH = 16 };

typedef struct json_writer {
    FILE *out;
    int depth;
    bool need_comma[JSON_MAX_DEPTH];
    bool after_key;
} json_writer;

void json_init(json_writer *j, FILE *out);
void json_object_begin(json_writer *j);
void json_object_end(json_writer *j);
void json_array_begin(json_writer *j);
void json_array_end(json_writer *j);
void json_key(json_writer *j, const char *key);
void json_string(json_writer *j, const char *s);   /* NULL writes null */
void json_u64(json_writer *j, uint64_t v);
void json_i64(json_writer *j, int64_t v);
void json_double(json_writer *j, double v);
void json_bool(json_writer *j, bool v);
void json_null(json_writer *j);
/* "key": value in one call. */
void json_field_string(json_writer *j, const char *key, const char *s);
void json_field_u64(json_writer *j, const char *key, uint64_t v);
void json_field_double(json_writer *j, const char *key, double v);
void json_field_bool(json_writer *j, const char *key, bool v);
/* Ends the document with a newline. */
void json_finish(json_writer *j);

/* ---- text tables (table.c) ------------------------------------------------
 * Collects rows of cells, then prints them with every column as wide as its
 * widest cell. Columns marked numeric are right-aligned. */
enum { TABLE_MAX_COLUMNS = 10, TABLE_CELL_SIZE = 64 };

typedef struct text_table {
    size_t columns;
    const char *headers[TABLE_MAX_COLUMNS];
    bool numeric[TABLE_MAX_COLUMNS];
    char (*cells)[TABLE_MAX_COLUMNS][TABLE_CELL_SIZE];
    size_t rows, capacity;
} text_table;

/* headers: columns names; a name starting with '>' is right-aligned (the '>'
 * is not printed). */
void table_init(text_table *t, size_t columns, const char *const *headers);
/* Adds a row of `columns` cells (printf-formatted text each). false if out of memory. */
bool table_add_row(text_table *t, const char *const *cells);
void table_print(const text_table *t, FILE *out, const char *indent);
void table_free(text_table *t);

#endif
