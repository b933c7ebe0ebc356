/* Aligned text tables for rk's human-readable output. */
#include <stdlib.h>
#include <string.h>

#include "output.h"

void table_init(text_table *t, size_t columns, const char *const *headers) {
    memset(t, 0, sizeof *t);
    t->columns = columns < TABLE_MAX_COLUMNS ? columns : TABLE_MAX_COLUMNS;
    for (size_t c = 0; c < t->columns; c++) {
        t->numeric[c] = headers[c][0] == '>';
        t->headers[c] = headers[c] + (t->numeric[c] ? 1 : 0);
    }
}

bool table_add_row(text_table *t, const char *const *cells) {
    if (t->rows == t->capacity) {
        size_t cap = t->capacity ? t->capacity * 2 : 16;
        void *grown = realloc(t->cells, cap * sizeof *t->cells);
        if (!grown) return false;
        t->cells = grown;
        t->capacity = cap;
    }
    for (size_t c = 0; c < t->columns; c++) {
        char *cell = t->cells[t->rows][c];
        strncpy(cell, cells[c] ? cells[c] : "", TABLE_CELL_SIZE - 1);
        cell[TABLE_CELL_SIZE - 1] = '\0';
    }
    t->rows++;
    return true;
}

static void print_row(const text_table *t, FILE *out, const char *indent, const size_t *width,
                      const char *const *cells) {
    fputs(indent, out);
    for (size_t c = 0; c < t->columns; c++) {
        bool last = c + 1 == t->columns;
        if (t->numeric[c])
            fprintf(out, "%*s", (int)width[c], cells[c]);
        else if (last)
            fputs(cells[c], out);
        else
            fprintf(out, "%-*s", (int)width[c], cells[c]);
        if (!last) fputs("  ", out);
    }
    fputc('\n', out);
}

void table_print(const text_table *t, FILE *out, const char *indent) {
    size_t width[TABLE_MAX_COLUMNS] = {0};
    for (size_t c = 0; c < t->columns; c++) {
        width[c] = strlen(t->headers[c]);
        for (size_t r = 0; r < t->rows; r++) {
            size_t w = strlen(t->cells[r][c]);
            if (w > width[c]) width[c] = w;
        }
    }
    print_row(t, out, indent, width, t->headers);
    char rule[TABLE_MAX_COLUMNS][TABLE_CELL_SIZE];
    const char *rules[TABLE_MAX_COLUMNS];
    for (size_t c = 0; c < t->columns; c++) {
        size_t w = width[c] < TABLE_CELL_SIZE - 1 ? width[c] : TABLE_CELL_SIZE - 1;
        memset(rule[c], '-', w);
        rule[c][w] = '\0';
        rules[c] = rule[c];
    }
    print_row(t, out, indent, width, rules);
    for (size_t r = 0; r < t->rows; r++) {
        const char *cells[TABLE_MAX_COLUMNS];
        for (size_t c = 0; c < t->columns; c++) cells[c] = t->cells[r][c];
        print_row(t, out, indent, width, cells);
    }
}

void table_free(text_table *t) {
    free(t->cells);
    memset(t, 0, sizeof *t);
}
