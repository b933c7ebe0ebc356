/* Random DSL programs (diff_gen.c) on every executor; any difference from
 * the CPU backend, or a failure where the CPU ran the program, is a bug.
 *
 *   transpile_diff_random [--seconds S] [--count N] [--seed X] [--save DIR] [--no-reduce] [--msl]
 *
 * Program i of a run uses seed X + i; `--seed X+i --count 1` runs it again.
 * A failing program is saved under DIR (default $RK_DIFF_SAVE, else the build
 * tree's diff-failures/) as seed-N.c, then reduced (statements deleted while
 * the same executor still differs) into seed-N-reduced.c. The WGSL emitter
 * may refuse a program with "(WGSL target)" (counted, not a failure).
 * --msl adds the msl-host executor (a clang++ build per program, so it is
 * left out of CI's fixed range to keep that run's time; "(MSL target)"
 * refusals are counted, not failures). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "diff_gen.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
enum { DEFAULT_SECONDS = 15 }; /* every program is slower under a sanitizer */
#else
enum { DEFAULT_SECONDS = 50 };
#endif

typedef struct options {
    double seconds;
    long count;
    uint64_t seed;
    const char *save;
    bool reduce;
} options;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* What went wrong with a program: the first executor that differs from the
 * CPU or fails, or -1. */
typedef struct verdict {
    int exec;
    bool failed; /* did not run (vs. ran and differed) */
    char why[16384];
} verdict;

static int refused_count[DIFF_EXEC_COUNT], ran_count[DIFF_EXEC_COUNT];
static bool with_msl; /* --msl */

static verdict judge(diff_env *env, const diff_program *p, bool quiet, int only) {
    verdict v = {.exec = -1};
    void *results[DIFF_EXEC_COUNT][DIFF_MAX_BUFFERS] = {{0}};
    diff_outcome o[DIFF_EXEC_COUNT] = {0};
    char why[16384];
    for (int e = 0; e < DIFF_EXEC_COUNT; e++) {
        o[e] = DIFF_UNAVAILABLE;
        if (e != DIFF_CPU && only >= 0 && e != only) continue;
        if (e == DIFF_MSL_HOST && !with_msl) continue;
        o[e] = diff_run(env, (diff_exec_id)e, p, results[e], why, sizeof why);
        if (!quiet && o[e] == DIFF_RAN) ran_count[e]++;
        if (!quiet && o[e] == DIFF_REFUSED) refused_count[e]++;
        bool bad = o[e] == DIFF_FAILED || (o[e] == DIFF_REFUSED && e != DIFF_WGSL && e != DIFF_MSL_HOST);
        if (e == DIFF_CPU && o[e] != DIFF_RAN) {
            /* The generator must only make programs the CPU runs. */
            v.exec = DIFF_CPU, v.failed = true;
            snprintf(v.why, sizeof v.why, "%s", why);
            return v;
        }
        if (bad && v.exec < 0) {
            v.exec = e, v.failed = true;
            snprintf(v.why, sizeof v.why, "%s", why);
        }
    }
    for (int e = 1; e < DIFF_EXEC_COUNT && v.exec < 0; e++) {
        if (o[e] != DIFF_RAN) continue;
        for (size_t b = 0; b < p->buffer_count; b++)
            if (p->buffers[b].output &&
                diff_compare_buffer(p, b, diff_exec_name((diff_exec_id)e), results[e][b], "cpu", results[DIFF_CPU][b], quiet)) {
                v.exec = e;
                snprintf(v.why, sizeof v.why, "outputs differ from the cpu executor");
                break;
            }
    }
    for (int e = 0; e < DIFF_EXEC_COUNT; e++)
        if (o[e] == DIFF_RAN) diff_free_outputs(p, results[e]);
    return v;
}

static void save(const options *opt, uint64_t seed, const char *suffix, const char *source, const verdict *v) {
    mkdir(opt->save, 0755);
    char path[1024];
    snprintf(path, sizeof path, "%s/seed-%llu%s.c", opt->save, (unsigned long long)seed, suffix);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
        return;
    }
    fprintf(f, "/* transpile_diff_random --seed %llu --count 1: %s %s.\n", (unsigned long long)seed,
            diff_exec_name((diff_exec_id)v->exec), v->failed ? "failed" : "differs from the cpu executor");
    fprintf(f, " * Inputs and launch: tests/transpile/diff/diff_gen.c for this seed. */\n%s", source);
    fclose(f);
    fprintf(stderr, "saved %s\n", path);
}

/* Deletes statements (largest first) while the same executor still fails the
 * same way; returns the reduced source. */
static char *reduce(diff_env *env, diff_gen_program *g, const verdict *orig, double budget) {
    bool *drop = calloc(g->span_count + 1, 1);
    double start = now();
    int tried = 0, kept = 0;
    for (size_t pass = 0; pass < 2; pass++) {
        for (size_t s = 0; s < g->span_count && now() - start < budget; s++) {
            if (drop[s]) continue;
            drop[s] = true;
            char *src = diff_gen_source_without(g, drop);
            diff_program p = g->program;
            p.source = src;
            verdict v = judge(env, &p, true, orig->exec);
            tried++;
            if (v.exec == orig->exec && v.failed == orig->failed)
                kept++;
            else
                drop[s] = false;
            free(src);
        }
    }
    char *out = diff_gen_source_without(g, drop);
    fprintf(stderr, "reduced: %d of %d statement deletions kept (%.0f s)\n", kept, tried, now() - start);
    free(drop);
    return out;
}

static void usage(void) {
    fprintf(stderr, "usage: transpile_diff_random [--seconds S] [--count N] [--seed X] [--save DIR] [--no-reduce] [--msl]\n");
}

static bool parse(int argc, char **argv, options *o) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--no-reduce") == 0) {
            o->reduce = false;
            continue;
        }
        if (strcmp(a, "--msl") == 0) {
            with_msl = true;
            continue;
        }
        if (!val) return false;
        char *end = NULL;
        if (strcmp(a, "--seconds") == 0)
            o->seconds = strtod(val, &end);
        else if (strcmp(a, "--count") == 0)
            o->count = strtol(val, &end, 10);
        else if (strcmp(a, "--seed") == 0)
            o->seed = strtoull(val, &end, 10);
        else if (strcmp(a, "--save") == 0)
            o->save = val, end = (char *)val + strlen(val);
        else
            return false;
        if (!end || *end) return false;
        i++;
    }
    return true;
}

int main(int argc, char **argv) {
    options opt = {.seconds = DEFAULT_SECONDS, .count = -1, .reduce = true, .save = getenv("RK_DIFF_SAVE")};
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    opt.seed = ((uint64_t)ts.tv_sec * 1000003u ^ (uint64_t)ts.tv_nsec) % 1000000000u;
    if (!opt.save || !*opt.save) opt.save = RK_DIFF_SAVE_DIR;
    if (!parse(argc, argv, &opt)) {
        usage();
        return 2;
    }
    printf("transpile_diff_random: seed %llu, %.0f s%s (reproduce: --seed %llu)\n", (unsigned long long)opt.seed,
           opt.seconds, opt.count >= 0 ? " or the count" : "", (unsigned long long)opt.seed);
    fflush(stdout);
    diff_env *env = diff_env_open(false, true);
    if (!env) return 1;
    double start = now();
    long programs = 0, failures = 0;
    while ((opt.count < 0 || programs < opt.count) && (opt.count >= 0 || now() - start < opt.seconds)) {
        uint64_t seed = opt.seed + (uint64_t)programs;
        diff_gen_program g;
        diff_gen(seed, &g);
        verdict v = judge(env, &g.program, false, -1);
        programs++;
        if (v.exec >= 0) {
            failures++;
            fprintf(stderr, "FAIL program seed %llu (%s): %s %s\n%s\n", (unsigned long long)seed, g.program.name,
                    diff_exec_name((diff_exec_id)v.exec), v.failed ? "failed" : "differs", v.why);
            save(&opt, seed, "", g.source, &v);
            if (opt.reduce && v.exec != DIFF_CPU) {
                char *small = reduce(env, &g, &v, 120);
                save(&opt, seed, "-reduced", small, &v);
                free(small);
            }
        }
        diff_gen_free(&g);
        if (programs % 50 == 0) {
            printf("... %ld programs, %.0f s, %ld failing; wgsl ran %d, refused %d\n", programs, now() - start, failures,
                   ran_count[DIFF_WGSL], refused_count[DIFF_WGSL]);
            fflush(stdout);
        }
    }
    printf("%ld programs in %.0f s, seeds %llu..%llu, %ld failing\n", programs, now() - start,
           (unsigned long long)opt.seed, (unsigned long long)(opt.seed + (uint64_t)programs - 1), failures);
    for (int e = 0; e < DIFF_EXEC_COUNT; e++)
        printf("  %-9s ran %d, refused %d%s\n", diff_exec_name((diff_exec_id)e), ran_count[e], refused_count[e],
               diff_exec_present(env, (diff_exec_id)e) ? "" : " (not present)");
    diff_env_close(env);
    return failures ? 1 : 0;
}
