/* Clocks, human-readable numbers and percentiles for rk's output. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cli.h"

uint64_t cli_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void cli_utc_timestamp(char *out, size_t size) {
    time_t now = time(NULL);
    struct tm tm;
    if (!gmtime_r(&now, &tm) || strftime(out, size, "%Y-%m-%d %H:%M:%S UTC", &tm) == 0)
        snprintf(out, size, "unknown");
}

void cli_format_count(double value, char *out, size_t size) {
    if (value >= 1e9)
        snprintf(out, size, "%.2f G", value / 1e9);
    else if (value >= 1e6)
        snprintf(out, size, "%.2f M", value / 1e6);
    else if (value >= 1e4)
        snprintf(out, size, "%.1f k", value / 1e3);
    else
        snprintf(out, size, "%.0f", value);
}

void cli_format_duration_ns(double ns, char *out, size_t size) {
    if (ns >= 1e9)
        snprintf(out, size, "%.2f s", ns / 1e9);
    else if (ns >= 1e6)
        snprintf(out, size, "%.2f ms", ns / 1e6);
    else if (ns >= 1e3)
        snprintf(out, size, "%.2f us", ns / 1e3);
    else
        snprintf(out, size, "%.0f ns", ns);
}

void cli_format_bytes(uint64_t bytes, char *out, size_t size) {
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    size_t u = 0;
    while (v >= 1024.0 && u + 1 < sizeof units / sizeof units[0]) {
        v /= 1024.0;
        u++;
    }
    snprintf(out, size, u ? "%.1f %s" : "%.0f %s", v, units[u]);
}

static int compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

double cli_percentile_u64(uint64_t *values, size_t n, double p) {
    if (n == 0) return 0.0;
    qsort(values, n, sizeof *values, compare_u64);
    /* Nearest rank: the smallest value with at least p% of values at or below it. */
    double rank = ceil(p / 100.0 * (double)n);
    size_t index = rank <= 1.0 ? 0 : (size_t)rank - 1;
    if (index >= n) index = n - 1;
    return (double)values[index];
}
