/* Collecting and printing rk bench results. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_report.h"
#include "cli.h"
#include "output.h"

bench_row bench_row_make(const char *group, const char *name) {
    bench_row row;
    memset(&row, 0, sizeof row);
    snprintf(row.group, sizeof row.group, "%s", group);
    snprintf(row.name, sizeof row.name, "%s", name);
    row.rate = row.bytes_per_second = row.p50_us = row.p99_us = row.vs_floor = NAN;
    return row;
}

void bench_row_against(bench_row *row, const bench_row *floor) {
    snprintf(row->floor, sizeof row->floor, "%s", floor->name);
    if (!isnan(row->p50_us) && !isnan(floor->p50_us) && floor->p50_us > 0)
        row->vs_floor = row->p50_us / floor->p50_us;
    else if (!isnan(row->rate) && !isnan(floor->rate) && floor->rate > 0)
        row->vs_floor = row->rate / floor->rate;
}

bool bench_report_add(bench_report *r, const bench_row *row) {
    if (r->count == r->capacity) {
        size_t cap = r->capacity ? r->capacity * 2 : 16;
        bench_row *grown = realloc(r->rows, cap * sizeof *grown);
        if (!grown) return false;
        r->rows = grown;
        r->capacity = cap;
    }
    r->rows[r->count++] = *row;
    return true;
}

void bench_report_free(bench_report *r) {
    free(r->rows);
    r->rows = NULL;
    r->count = r->capacity = 0;
}

void bench_note(const bench_config *cfg, const char *fmt, ...) {
    if (cfg->json) return;
    va_list ap;
    va_start(ap, fmt);
    fputs("  running ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs(" ...\n", stderr);
    va_end(ap);
}

static void print_facts_text(const bench_report *r, const char *date) {
    printf("rk bench  ringkernel %s\n", rk_version());
    printf("  date        %s\n", date);
    printf("  commit      %s\n", cli_git_describe());
    printf("  build       %s, %s%s%s\n", cli_build_type(), cli_compiler(), cli_sanitizers()[0] ? ", sanitize=" : "",
           cli_sanitizers());
    printf("  host CPU    %s\n", r->host_cpu[0] ? r->host_cpu : "unknown");
    if (r->device[0]) printf("  device      %s\n", r->device);
    printf("\n");
}

static void cell_or_dash(char *out, size_t size, double v, void (*fmt)(double, char *, size_t)) {
    if (isnan(v))
        snprintf(out, size, "-");
    else
        fmt(v, out, size);
}

static void fmt_us(double us, char *out, size_t size) { cli_format_duration_ns(us * 1e3, out, size); }
static void fmt_rate(double v, char *out, size_t size) { cli_format_count(v, out, size); }
static void fmt_gbps(double v, char *out, size_t size) { snprintf(out, size, "%.2f", v / 1e9); }
static void fmt_ratio(double v, char *out, size_t size) { snprintf(out, size, "%.2fx", v); }

void bench_report_print_table(const bench_report *r, const char *date) {
    print_facts_text(r, date);
    static const char *const headers[] = {"group", "benchmark", "backend", ">count", ">per s",
                                          ">GB/s",  ">p50",      ">p99",     ">vs floor"};
    text_table t;
    table_init(&t, 9, headers);
    for (size_t i = 0; i < r->count; i++) {
        const bench_row *row = &r->rows[i];
        char msgs[32], rate[32], gbps[32], p50[32], p99[32], ratio[32];
        if (row->messages)
            snprintf(msgs, sizeof msgs, "%llu", (unsigned long long)row->messages);
        else
            snprintf(msgs, sizeof msgs, "-");
        cell_or_dash(rate, sizeof rate, row->rate, fmt_rate);
        cell_or_dash(gbps, sizeof gbps, row->bytes_per_second, fmt_gbps);
        cell_or_dash(p50, sizeof p50, row->p50_us, fmt_us);
        cell_or_dash(p99, sizeof p99, row->p99_us, fmt_us);
        cell_or_dash(ratio, sizeof ratio, row->vs_floor, fmt_ratio);
        if (row->is_floor) snprintf(ratio, sizeof ratio, "floor");
        const char *cells[] = {row->group, row->name, row->backend[0] ? row->backend : "host", msgs, rate, gbps,
                               p50, p99, ratio};
        table_add_row(&t, cells);
    }
    table_print(&t, stdout, "");
    table_free(&t);
    /* Notes and wrong results after the table, one line each. */
    bool blank_done = false;
    for (size_t i = 0; i < r->count; i++) {
        const bench_row *row = &r->rows[i];
        if (!row->errors && !row->note[0]) continue;
        if (!blank_done) putchar('\n');
        blank_done = true;
        if (row->errors)
            printf("%s/%s: %llu WRONG RESULTS\n", row->group, row->name, (unsigned long long)row->errors);
        if (row->note[0]) printf("%s/%s: %s\n", row->group, row->name, row->note);
    }
}

void bench_report_print_json(const bench_report *r, const char *date) {
    json_writer j;
    json_init(&j, stdout);
    json_object_begin(&j);
    json_field_string(&j, "tool", "rk bench");
    json_field_string(&j, "version", rk_version());
    json_field_string(&j, "date", date);
    json_field_string(&j, "commit", cli_git_describe());
    json_field_string(&j, "build_type", cli_build_type());
    json_field_string(&j, "compiler", cli_compiler());
    json_field_string(&j, "sanitizers", cli_sanitizers());
    json_field_string(&j, "host_cpu", r->host_cpu);
    json_field_string(&j, "device", r->device[0] ? r->device : NULL);
    json_key(&j, "results");
    json_array_begin(&j);
    for (size_t i = 0; i < r->count; i++) {
        const bench_row *row = &r->rows[i];
        json_object_begin(&j);
        json_field_string(&j, "group", row->group);
        json_field_string(&j, "name", row->name);
        json_field_string(&j, "backend", row->backend[0] ? row->backend : NULL);
        json_field_u64(&j, "messages", row->messages);
        json_field_double(&j, "seconds", row->seconds);
        json_field_double(&j, "messages_per_second", row->rate);
        json_field_double(&j, "bytes_per_second", row->bytes_per_second);
        json_field_double(&j, "p50_us", row->p50_us);
        json_field_double(&j, "p99_us", row->p99_us);
        json_field_u64(&j, "errors", row->errors);
        json_field_u64(&j, "launches", row->launches);
        json_field_string(&j, "note", row->note[0] ? row->note : NULL);
        json_field_bool(&j, "is_floor", row->is_floor);
        json_field_string(&j, "floor", row->floor[0] ? row->floor : NULL);
        json_field_double(&j, "vs_floor", row->vs_floor);
        json_object_end(&j);
    }
    json_array_end(&j);
    json_object_end(&j);
    json_finish(&j);
}
