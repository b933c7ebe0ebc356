/* rk bench's results: each benchmark group adds rows; the report prints them
 * as a table or as JSON with the facts needed to reproduce them (device,
 * date, commit, build type). */
#ifndef RK_TOOL_BENCH_REPORT_H
#define RK_TOOL_BENCH_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct bench_row {
    char group[16];        /* "queue", "kernel", "cuda", "transpile" */
    char name[96];         /* what was measured */
    char backend[32];      /* "cpu:0", "cuda:0", or "" for host-only */
    uint64_t messages;     /* items processed; 0 when not a message benchmark */
    double seconds;
    double rate;           /* items per second; NAN when not meaningful */
    double bytes_per_second; /* NAN when not meaningful */
    double p50_us, p99_us; /* NAN unless a latency benchmark */
    uint64_t errors;       /* wrong results: must be 0 */
    uint64_t launches;     /* device launches (ring kernels); 0 when not applicable */
    char note[256];
    /* Judged against a floor measured in the same run (bench/bench_floor.h):
     * a floor row has is_floor; another row names its floor and vs_floor is
     * its rate as a fraction of the floor's (throughput rows, <= 1 is the
     * expectation) or its p50 as a multiple of the floor's (latency rows). */
    bool is_floor;
    char floor[96];
    double vs_floor;
} bench_row;

typedef struct bench_config {
    bool quick;            /* small counts: a smoke test, not figures */
    bool json;
    const char *backend;   /* for ring-kernel groups; NULL = cpu unless RK_BACKEND */
    uint64_t messages;     /* 0 = each benchmark's default */
    uint64_t pairs;        /* queue and kernel groups: each row and its floor this many times, the median pair
                              reported (0 = once) */
    const char *cpus;      /* queue and CPU kernel rows: "auto" (NULL), "none" or "A,B": the CPUs of a row's
                              two threads and its floor's (bench_group_cpu.c) */
    /* kernel --handler: the user's DSL handler instead of the built-in one. */
    const char *handler_file, *handler_name, *requests_file;
} bench_config;

typedef struct bench_report {
    bench_row *rows;
    size_t count, capacity;
    char device[512];      /* the device the kernel benchmarks ran on */
    char host_cpu[256];    /* the CPU the host side ran on */
} bench_report;

/* A row with every figure unset (NAN), for a group to fill in. */
bench_row bench_row_make(const char *group, const char *name);
bool bench_report_add(bench_report *r, const bench_row *row);
/* Sets row's floor and vs_floor from floor (latency when both have a p50). */
void bench_row_against(bench_row *row, const bench_row *floor);
void bench_report_print_table(const bench_report *r, const char *date);
void bench_report_print_json(const bench_report *r, const char *date);
void bench_report_free(bench_report *r);

/* Progress to stderr ("running queue: spsc 64 B ...") unless quiet. */
void bench_note(const bench_config *cfg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Each group runs its benchmarks and adds rows. Returns an rk exit code:
 * 0, 1 (a benchmark failed or gave wrong results) or 77 (its device is
 * unavailable). `requested` is true when the user named the group. */
int bench_group_queue(const bench_config *cfg, bench_report *rep, bool requested);
int bench_group_kernel(const bench_config *cfg, bench_report *rep, bool requested);
int bench_group_cuda(const bench_config *cfg, bench_report *rep, bool requested);
int bench_group_transpile(const bench_config *cfg, bench_report *rep, bool requested);
/* Rows of the kernel group: many client threads calling one kernel, beside
 * one thread's raw send + receive (bench_group_clients.c). */
typedef struct rk_runtime rk_runtime;
int bench_clients_rows(const bench_config *cfg, bench_report *rep, rk_runtime *rt, const char *backend);
/* The kernel group's rows for cfg->handler_file (bench_handler.c). */
int bench_handler_rows(const bench_config *cfg, bench_report *rep, rk_runtime *rt, const char *backend);
int bench_group_k2k(const bench_config *cfg, bench_report *rep, bool requested); /* bench_group_k2k.c */

#endif
