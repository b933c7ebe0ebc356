/* Every corpus kernel on every executor against its plain C reference:
 * the DSL on the CPU backend, the CUDA output on the CPU (g++ + shim), the
 * WGSL on WebGPU and the CUDA output on a GPU, whichever are present.
 *
 *   transpile_diff_corpus [NAME...]   only the named cases (file names without .c)
 *   transpile_diff_corpus --portability [NAME...]   the portability suite
 *                                     (tests/portability/) instead of the corpus
 *
 * A case that uses what WGSL lacks must be refused by the WGSL emitter with
 * "(WGSL target)"; any other refusal or failure, and any difference, fails,
 * except in a case marked with a known bug, which is listed as an EXPECTED
 * FAILURE at the end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"
#include "support/read_file.h"

static bool selected(const char *file, int argc, char **argv) {
    if (argc < 1) return true;
    const char *slash = strrchr(file, '/');
    const char *base = slash ? slash + 1 : file;
    for (int i = 0; i < argc; i++)
        if (strncmp(base, argv[i], strlen(argv[i])) == 0 && base[strlen(argv[i])] == '.') return true;
    return false;
}

/* A portability case names its launch shape: one kernel runs with several. */
static const char *case_label(const corpus_case *c, const diff_program *p, char *buf, size_t size) {
    if (!strchr(c->file, '/') || !p->launch_count) return c->file;
    rk_dim3 b = p->launches[0].block;
    if (b.y == 1 && b.z == 1)
        snprintf(buf, size, "%s (block %u)", c->file, b.x);
    else
        snprintf(buf, size, "%s (block %ux%ux%u)", c->file, b.x, b.y, b.z);
    return buf;
}

/* Runs one case everywhere; returns the number of problems. */
static int run_case(diff_env *env, const corpus_case *c, int ran[DIFF_EXEC_COUNT]) {
    char path[512], label[256];
    snprintf(path, sizeof path, "%s/tests/%s%s", RK_SOURCE_DIR, strchr(c->file, '/') ? "" : "transpile/corpus/",
             c->file);
    size_t size = 0;
    char *source = rk_test_read_file(path, &size);
    if (!source) {
        fprintf(stderr, "FAIL %s: cannot read %s\n", c->file, path);
        return 1;
    }
    diff_program p = {.name = c->file, .source = source};
    c->setup(&p);
    const char *name_shown = case_label(c, &p, label, sizeof label);
    void *expected[DIFF_MAX_BUFFERS] = {0};
    for (size_t b = 0; b < p.buffer_count; b++) {
        size_t bytes = p.buffers[b].count * diff_type_size(p.buffers[b].type);
        expected[b] = calloc(1, bytes + 8);
        if (p.buffers[b].init) memcpy(expected[b], p.buffers[b].init, bytes);
    }
    c->reference(&p, expected);
    int problems = 0;
    void *results[DIFF_EXEC_COUNT][DIFF_MAX_BUFFERS] = {{0}};
    diff_outcome outcome[DIFF_EXEC_COUNT];
    char why[16384];
    for (int e = 0; e < DIFF_EXEC_COUNT; e++) {
        outcome[e] = diff_run(env, (diff_exec_id)e, &p, results[e], why, sizeof why);
        const char *name = diff_exec_name((diff_exec_id)e);
        if (outcome[e] == DIFF_RAN) {
            ran[e]++;
        } else if (outcome[e] == DIFF_REFUSED && e == DIFF_MSL_HOST) {
            /* What Metal lacks (double, 64-bit atomics, grid barriers): the diagnostic names the MSL target. */
            const char *nl = strchr(why, '\n');
            printf("  %s: refused by the MSL emitter: %.*s\n", c->file, nl ? (int)(nl - why) : (int)strlen(why), why);
        } else if (outcome[e] == DIFF_REFUSED && e == DIFF_WGSL && c->wgsl_refuses) {
            const char *nl = strchr(why, '\n');
            printf("  %s: refused by the WGSL emitter, as expected: %.*s\n", c->file, nl ? (int)(nl - why) : (int)strlen(why), why);
        } else if (outcome[e] != DIFF_UNAVAILABLE) {
            fprintf(stderr, "FAIL %s on %s: %s\n%s\n", name_shown, name,
                    outcome[e] == DIFF_REFUSED ? "refused" : "did not run", why);
            problems++;
        }
    }
    if (outcome[DIFF_WGSL] == DIFF_RAN && c->wgsl_refuses) {
        fprintf(stderr, "FAIL %s: WGSL was expected to refuse it but ran it (update the case)\n", c->file);
        problems++;
    }
    size_t bad = diff_compare_all(&p, results, outcome, expected, false);
    if (bad) {
        fprintf(stderr, "FAIL %s: %zu elements differ from the reference\n", name_shown, bad);
        problems++;
    }
    for (int e = 0; e < DIFF_EXEC_COUNT; e++)
        if (outcome[e] == DIFF_RAN) diff_free_outputs(&p, results[e]);
    for (size_t b = 0; b < p.buffer_count; b++) free(expected[b]);
    corpus_free_inputs();
    free(source);
    if (!problems) printf("ok %s\n", name_shown);
    return problems;
}

int main(int argc, char **argv) {
    diff_env *env = diff_env_open(false, false);
    if (!env) return 1;
    bool portability = argc > 1 && strcmp(argv[1], "--portability") == 0;
    const corpus_case *corpus_sets[] = {corpus_compute, corpus_stencil, corpus_regress};
    const size_t corpus_counts[] = {corpus_compute_count, corpus_stencil_count, corpus_regress_count};
    const corpus_case *const *sets = portability ? (const corpus_case *const[]){corpus_portable} : corpus_sets;
    const size_t *counts = portability ? (const size_t[]){corpus_portable_count} : corpus_counts;
    size_t set_count = portability ? 1 : 3;
    int names = portability ? argc - 2 : argc - 1;
    char **name_list = argv + (portability ? 2 : 1);
    int ran[DIFF_EXEC_COUNT] = {0}, cases = 0, failed = 0, expected_failures = 0;
    for (size_t s = 0; s < set_count; s++)
        for (size_t i = 0; i < counts[s]; i++) {
            const corpus_case *c = &sets[s][i];
            if (!selected(c->file, names, name_list)) continue;
            cases++;
            int problems = run_case(env, c, ran);
            if (c->known_bug && problems) {
                fprintf(stderr, "EXPECTED FAILURE %s: known bug: %s\n", c->file, c->known_bug);
                expected_failures++;
            } else if (c->known_bug) {
                fprintf(stderr, "FAIL %s passes now: remove its known_bug (\"%s\")\n", c->file, c->known_bug);
                failed++;
            } else if (problems) {
                failed++;
            }
        }
    if (expected_failures)
        fprintf(stderr, "%d EXPECTED FAILURES (known bugs, listed above)\n", expected_failures);
    printf("%d %s: runs per executor:", cases, portability ? "portability cases" : "corpus kernels");
    for (int e = 0; e < DIFF_EXEC_COUNT; e++)
        printf(" %s %d%s", diff_exec_name((diff_exec_id)e), ran[e], diff_exec_present(env, (diff_exec_id)e) ? "" : " (absent)");
    printf("\n");
    diff_env_close(env);
    if (failed) fprintf(stderr, "%d of %d corpus kernels FAILED\n", failed, cases);
    return failed ? 1 : 0;
}
