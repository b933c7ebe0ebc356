/* rk bench seed-table: the persistent-vs-traditional table, measured
 * by bench/bench_seed_table.c, printed as a table or as JSON (with device,
 * driver, date and commit) that scripts/seed_table_chart.py draws. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_seed_table.h"
#include "cli.h"
#include "output.h"
#include "showcase_cli.h"

/* Published reference figures for these rows on an NVIDIA RTX Ada GPU (the
 * project specification's; not measured by this program), in microseconds;
 * NAN where there is none. Shown beside the measurement for comparison only. */
typedef struct seed_row {
    const char *key, *name, *meaning;
    double spec_persistent_us, spec_traditional_us;
    size_t offset; /* of the rk_seed_stat in rk_seed_pattern_result */
} seed_row;

#define STAT(field) offsetof(rk_seed_pattern_result, field)

static const seed_row rows[] = {
    {"inject", "inject (until applied)", "host call until the running simulation has applied the impulse", 0.03, 317,
     STAT(inject)},
    {"inject_call", "inject (host call alone)", "the host's cost of the call, nothing waited", NAN, NAN,
     STAT(inject_call)},
    {"step", "single compute step", "one step, command to completion seen by the host", 163, 3.2, STAT(step)},
    {"mixed", "mixed 300 ops (each waited)", "inject/step/query by turns, each completed before the next, first to last",
     15300, 40500, STAT(mixed)},
    {"mixed_pipelined", "mixed 300 ops (queries waited)", "the same ops; only queries wait for their answer", NAN, NAN,
     STAT(mixed_pipelined)},
    {"batch", "batch of steps", "N steps: N launches then one sync, or one command 'step N'", NAN, NAN, STAT(batch)},
};
enum { ROW_COUNT = sizeof rows / sizeof rows[0] };

static const rk_seed_stat *stat_of(const rk_seed_pattern_result *p, const seed_row *row) {
    return (const rk_seed_stat *)(const void *)((const char *)p + row->offset);
}

static void on_progress(void *user, const char *line) {
    if (!*(const bool *)user) fprintf(stderr, "running seed-table: %s\n", line);
}

static void fmt_us(double us, char *out, size_t size) {
    if (!isfinite(us)) snprintf(out, size, "-");
    else cli_format_duration_ns(us * 1e3, out, size);
}

/* "persistent 3.1x" or "traditional 2.0x": which is faster, by how much. */
static void fmt_ratio(double persistent, double traditional, char *out, size_t size) {
    if (!isfinite(persistent) || !isfinite(traditional) || persistent <= 0 || traditional <= 0)
        snprintf(out, size, "-");
    else if (traditional >= persistent)
        snprintf(out, size, "persistent %.1fx", traditional / persistent);
    else
        snprintf(out, size, "traditional %.1fx", persistent / traditional);
}

static void print_table(const rk_seed_table_result *r, const char *date) {
    printf("rk bench seed-table: persistent vs traditional, one %d x %d wave grid\n", r->nx, r->ny);
    printf("  device      %s (%s), driver %s\n", r->device, r->backend, r->driver);
    printf("  persistent  %u bands x %u threads, one cooperative launch (on a GPU with the relay's block)\n",
           r->persistent.blocks, r->persistent.threads);
    printf("  traditional %u blocks x %u threads per step launch (rk_sim_step)\n", r->traditional.blocks,
           r->traditional.threads);
    printf("  date        %s\n  commit      %s (%s build)\n\n", date, cli_git_describe(), cli_build_type());
    const char *headers[] = {"row", ">persistent p50", ">p99", ">traditional p50", ">p99", "faster", ">reference P / T"};
    text_table t;
    table_init(&t, 7, headers);
    for (size_t i = 0; i < ROW_COUNT; i++) {
        const rk_seed_stat *p = stat_of(&r->persistent, &rows[i]), *q = stat_of(&r->traditional, &rows[i]);
        char c[7][TABLE_CELL_SIZE];
        if (strcmp(rows[i].key, "batch") == 0)
            snprintf(c[0], sizeof c[0], "%u steps in one batch", r->batch_steps);
        else
            snprintf(c[0], sizeof c[0], "%s", rows[i].name);
        fmt_us(p->median_us, c[1], sizeof c[1]);
        fmt_us(p->p99_us, c[2], sizeof c[2]);
        fmt_us(q->median_us, c[3], sizeof c[3]);
        fmt_us(q->p99_us, c[4], sizeof c[4]);
        if (strcmp(rows[i].key, "inject_call") == 0) snprintf(c[5], sizeof c[5], "-");
        else fmt_ratio(p->median_us, q->median_us, c[5], sizeof c[5]);
        if (isfinite(rows[i].spec_persistent_us)) {
            char a[24], b[24];
            fmt_us(rows[i].spec_persistent_us, a, sizeof a);
            fmt_us(rows[i].spec_traditional_us, b, sizeof b);
            snprintf(c[6], sizeof c[6], "%s / %s", a, b);
        } else {
            snprintf(c[6], sizeof c[6], "-");
        }
        const char *cells[7] = {c[0], c[1], c[2], c[3], c[4], c[5], c[6]};
        table_add_row(&t, cells);
    }
    char pf[32], tf[32], ratio[48];
    snprintf(pf, sizeof pf, "%.0f", r->persistent.commands_per_frame);
    snprintf(tf, sizeof tf, "%.0f", r->traditional.commands_per_frame);
    if (r->traditional.commands_per_frame > 0)
        snprintf(ratio, sizeof ratio, "persistent %.1fx", r->persistent.commands_per_frame / r->traditional.commands_per_frame);
    else
        snprintf(ratio, sizeof ratio, "-");
    const char *frame[7] = {"commands per 60 FPS frame", pf, "", tf, "", ratio, "2.7x (reference)"};
    table_add_row(&t, frame);
    table_print(&t, stdout, "  ");
    table_free(&t);
    printf("\n  p50 = median, p99 over the samples: inject and step rows %u each, mixed %u runs of %u ops, batch %u.\n",
           r->persistent.inject.samples, r->persistent.mixed.samples, r->mixed_ops, r->persistent.batch.samples);
    printf("  reference P / T: published reference figures for these rows on an NVIDIA RTX Ada GPU\n"
           "  (persistent / traditional); not measured by this run, for comparison only.\n");
    printf("  both patterns got the same commands: %llu query answers compared, %llu differ; "
           "final fields differ by at most %.3g\n",
           (unsigned long long)r->queries_compared, (unsigned long long)r->queries_differing, r->max_field_difference);
}

static void json_stat(json_writer *j, const char *key, const rk_seed_stat *s) {
    json_key(j, key);
    json_object_begin(j);
    json_field_double(j, "median_us", s->median_us);
    json_field_double(j, "p99_us", s->p99_us);
    json_field_double(j, "mean_us", s->mean_us);
    json_field_double(j, "min_us", s->min_us);
    json_field_u64(j, "samples", s->samples);
    json_object_end(j);
}

static void print_json(const rk_seed_table_result *r, const char *date, const char *host_cpu) {
    json_writer j;
    json_init(&j, stdout);
    json_object_begin(&j);
    json_field_string(&j, "tool", "rk bench seed-table");
    json_field_string(&j, "version", rk_version());
    json_field_string(&j, "date", date);
    json_field_string(&j, "commit", cli_git_describe());
    json_field_string(&j, "build_type", cli_build_type());
    json_field_string(&j, "compiler", cli_compiler());
    json_field_string(&j, "host_cpu", host_cpu);
    json_field_string(&j, "backend", r->backend);
    json_field_string(&j, "device", r->device);
    json_field_string(&j, "driver", r->driver);
    json_key(&j, "grid");
    json_object_begin(&j);
    json_field_u64(&j, "nx", (uint64_t)r->nx);
    json_field_u64(&j, "ny", (uint64_t)r->ny);
    json_object_end(&j);
    json_key(&j, "persistent_grid");
    json_object_begin(&j);
    json_field_u64(&j, "blocks", r->persistent.blocks);
    json_field_u64(&j, "threads", r->persistent.threads);
    json_object_end(&j);
    json_key(&j, "traditional_grid");
    json_object_begin(&j);
    json_field_u64(&j, "blocks", r->traditional.blocks);
    json_field_u64(&j, "threads", r->traditional.threads);
    json_object_end(&j);
    json_field_u64(&j, "mixed_ops", r->mixed_ops);
    json_field_u64(&j, "batch_steps", r->batch_steps);
    json_key(&j, "rows");
    json_array_begin(&j);
    for (size_t i = 0; i < ROW_COUNT; i++) {
        json_object_begin(&j);
        json_field_string(&j, "key", rows[i].key);
        json_field_string(&j, "name", rows[i].name);
        json_field_string(&j, "meaning", rows[i].meaning);
        json_stat(&j, "persistent", stat_of(&r->persistent, &rows[i]));
        json_stat(&j, "traditional", stat_of(&r->traditional, &rows[i]));
        json_field_double(&j, "spec_persistent_us", rows[i].spec_persistent_us);
        json_field_double(&j, "spec_traditional_us", rows[i].spec_traditional_us);
        json_object_end(&j);
    }
    json_array_end(&j);
    json_key(&j, "commands_per_frame");
    json_object_begin(&j);
    json_field_double(&j, "frame_ms", 1000.0 / 60.0);
    json_field_double(&j, "persistent", r->persistent.commands_per_frame);
    json_field_double(&j, "traditional", r->traditional.commands_per_frame);
    json_field_double(&j, "spec_ratio", 2.7);
    json_object_end(&j);
    json_key(&j, "agreement");
    json_object_begin(&j);
    json_field_u64(&j, "queries_compared", r->queries_compared);
    json_field_u64(&j, "queries_differing", r->queries_differing);
    json_field_double(&j, "max_field_difference", r->max_field_difference);
    json_object_end(&j);
    json_object_end(&j);
    json_finish(&j);
}

int rk_bench_seed_table_cmd(int argc, char **argv) {
    bool json = false, quick = false;
    const char *backend = NULL;
    uint64_t size = 0, repeats = 0, mixed = 0, batch = 0, blocks = 0, threads = 0;
    const cli_opt opts[] = {
        {"json", 0, CLI_FLAG, &json, NULL, "print one JSON object instead of a table", 0, 0},
        {"backend", 'b', CLI_STRING, &backend, "NAME", "device: cpu (default, or RK_BACKEND), cuda, cuda:1", 0, 0},
        {"size", 0, CLI_UINT, &size, "N", "grid of N x N cells (default 256 on the CPU, 512 on a GPU)", 0, 16384},
        {"repeats", 'n', CLI_UINT, &repeats, "N", "samples of the inject and step rows (default 2000 CPU, 5000 GPU)", 0, 10000000},
        {"mixed-repeats", 0, CLI_UINT, &mixed, "N", "runs of the 300-op mixed workload (default 20 CPU, 50 GPU)", 0, 100000},
        {"batch-steps", 0, CLI_UINT, &batch, "N", "steps in the batch row (default 10000)", 0, 100000000},
        {"blocks", 0, CLI_UINT, &blocks, "N", "persistent grid bands (default SMs - 2 on a GPU, cores on the CPU)", 0, 65535},
        {"threads", 0, CLI_UINT, &threads, "N", "persistent threads per block (default 512 GPU, 32 CPU)", 0, 1024},
        {"quick", 0, CLI_FLAG, &quick, NULL, "a smoke run: few samples; the figures mean little", 0, 0},
    };
    const cli_command_spec spec = {
        .name = "bench seed-table",
        .synopsis = "[options]",
        .summary = "A persistent-vs-traditional table on one 2-D wave simulation (the\n"
                   "showcase of rk demo wave), with the same grid and meaning for both patterns:\n"
                   "inject (until applied, and the host call alone), a single step, 300 mixed\n"
                   "inject/step/query ops, a batch of 10,000 steps, and commands per 60 FPS frame.\n"
                   "Median and p99. scripts/seed_table_chart.py draws the --json output as SVG.\n"
                   "Exits 1 if the two patterns' answers differ on the CPU, 77 if the device is missing.",
        .opts = opts,
        .opt_count = sizeof opts / sizeof opts[0],
    };
    switch (cli_parse(&spec, argc, argv, NULL, NULL)) {
    case CLI_PARSE_HELP: return RK_EXIT_OK;
    case CLI_PARSE_ERROR: return RK_EXIT_USAGE;
    case CLI_PARSE_OK: break;
    }
    if (size && (size < 8 || size > 16384)) return cli_usage_error(spec.name, "--size %llu is not 8 to 16384", (unsigned long long)size);
    if (!backend) backend = getenv("RK_BACKEND");
    const rk_backend *b = NULL;
    uint32_t device = 0;
    rk_status s = rk_select_device(backend ? backend : "cpu", &b, &device);
    if (s != RK_OK) {
        cli_report_status(spec.name, "choosing the device", s);
        return cli_exit_for_selection(s);
    }
    rk_seed_table_opts o = {
        .device = backend ? backend : "cpu",
        .size = (int)size,
        .repeats = (uint32_t)repeats,
        .mixed_repeats = (uint32_t)mixed,
        .batch_steps = (uint32_t)batch,
        .quick = quick,
        .blocks = (uint32_t)blocks,
        .threads = (uint32_t)threads,
        .progress = on_progress,
    };
    bool quiet = false; /* progress goes to stderr, so --json output stays clean */
    o.user = &quiet;
    rk_seed_table_result r;
    char date[64];
    cli_utc_timestamp(date, sizeof date);
    s = rk_bench_seed_table(&o, &r);
    if (s != RK_OK) {
        fprintf(stderr, "rk bench seed-table: %s: %s\n", rk_status_name(s), rk_bench_seed_table_error());
        return s == RK_BACKEND_UNAVAILABLE || s == RK_NO_DEVICE ? RK_EXIT_UNAVAILABLE : RK_EXIT_FAILURE;
    }
    char host_cpu[320] = "unknown";
    const rk_backend *cpu = NULL;
    rk_device_info info;
    if (rk_backend_find("cpu", &cpu) == RK_OK && rk_backend_device_info(cpu, 0, &info) == RK_OK)
        snprintf(host_cpu, sizeof host_cpu, "%s (%u cores)", info.name, info.multiprocessors);
    if (json) print_json(&r, date, host_cpu);
    else print_table(&r, date);
    /* On the CPU both patterns run the same compiled code: any difference is a bug. */
    bool cpu_run = strcmp(r.backend, "cpu") == 0;
    if (cpu_run && (r.queries_differing || r.max_field_difference != 0.0)) {
        fprintf(stderr, "rk bench seed-table: the two patterns disagree (%llu answers, field by %.3g)\n",
                (unsigned long long)r.queries_differing, r.max_field_difference);
        return RK_EXIT_FAILURE;
    }
    return RK_EXIT_OK;
}
