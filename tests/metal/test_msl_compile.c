/* Every MSL the emitter produces, compiled by clang++ against the Metal shim
 * (tests/metal/shim/metal_stdlib): the transpiler's golden cases,
 * the example kernels, the differential corpus and the fuzz corpus. A source
 * the MSL target refuses must be refused with diagnostics that name it
 * "(MSL target)" (the fuzz corpus may hold any error). The golden cases'
 * output (or their diagnostics) must also match tests/transpile/golden/
 * <name>.metal byte for byte; RK_UPDATE_GOLDEN=1 rewrites those files.
 * Skips (77) without clang++. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../transpile/cases.h"
#include "check.h"
#include "msl_host.h"

#ifndef RK_MSL_CXX
#define RK_MSL_CXX "clang++"
#endif

static char scratch[256];
static int compiled, refused, failures;

static bool write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    bool ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok;
}

/* clang++ -fsyntax-only on one MSL output; prints the log on failure. */
static bool compiles(const char *label, const char *msl) {
    char src[300], log[300], cmd[2000];
    snprintf(src, sizeof src, "%s/check.metal", scratch);
    snprintf(log, sizeof log, "%s/check.log", scratch);
    diff_text code = {0}, flags = {0};
    msl_host_rewrite(&code, msl, NULL, NULL);
    msl_host_flags(&flags, RK_SOURCE_DIR);
    CHECK(write_file(src, code.s));
    snprintf(cmd, sizeof cmd, "%s -fsyntax-only %s %s >%s 2>&1", RK_MSL_CXX, flags.s, src, log);
    bool ok = system(cmd) == 0;
    if (!ok) {
        char *text = rk_test_read_file(log, NULL);
        fprintf(stderr, "FAIL %s: clang++ rejects the MSL against the shim:\n%s\n--- MSL ---\n%s\n", label,
                text ? text : "(no log)", msl);
        free(text);
    }
    free(code.s);
    free(flags.s);
    return ok;
}

/* Every error of a refusal must name the MSL target. */
static bool refused_for_msl(const rk_transpile_result *r) {
    for (size_t i = 0; i < rk_transpile_diagnostic_count(r); i++) {
        const rk_diagnostic *d = rk_transpile_diagnostic(r, i);
        if (d->severity == RK_DIAG_ERROR && !strstr(d->message, "(MSL target)") && !strstr(d->message, "rk_emit"))
            return false;
    }
    return true;
}

/* Transpiles desc for MSL and checks the outcome; returns the result. */
static rk_transpile_result *check_source(const char *label, rk_transpile_desc *d, bool any_error_ok) {
    d->target = RK_TARGET_MSL;
    rk_transpile_result *r = NULL;
    rk_status s = rk_transpile(d, &r);
    if (s == RK_OK) {
        compiled++;
        if (!compiles(label, rk_transpile_output(r, NULL))) failures++;
    } else if (r && (any_error_ok || refused_for_msl(r))) {
        refused++;
    } else {
        fprintf(stderr, "FAIL %s: refused for a reason that is not the MSL target's:\n%s\n", label,
                r ? rk_transpile_diagnostics_text(r) : rk_last_error());
        failures++;
    }
    return r;
}

/* text without the source tree's directory (diagnostics name files by path). */
static char *relative(const char *text) {
    const char *root = RK_SOURCE_DIR "/";
    size_t n = strlen(root);
    char *out = malloc(strlen(text) + 1), *o = out;
    CHECK(out != NULL);
    while (*text) {
        if (strncmp(text, root, n) == 0)
            text += n;
        else
            *o++ = *text++;
    }
    *o = '\0';
    return out;
}

static void golden(const tp_case *c, const rk_transpile_result *r, bool update) {
    char *text = relative(rk_transpile_error_count(r) ? rk_transpile_diagnostics_text(r) : rk_transpile_output(r, NULL));
    char rel[256];
    snprintf(rel, sizeof rel, "tests/transpile/golden/%s.metal", c->name);
    char *path = tp_case_path(rel);
    if (update) {
        CHECK(write_file(path, text));
        printf("wrote %s\n", path);
    } else {
        char *want = rk_test_read_file(path, NULL);
        if (!want || strcmp(want, text) != 0) {
            fprintf(stderr, "FAIL %s: the MSL differs from %s (after an intended change: RK_UPDATE_GOLDEN=1)\n",
                    c->name, rel);
            failures++;
        }
        free(want);
    }
    free(path);
    free(text);
}

/* Every file of dir (relative to the source tree) whose name ends in .c,
 * except the harness's own (corpus_*.c, test_*.c). */
static void directory(const char *rel, bool any_error_ok) {
    char *dir = tp_case_path(rel);
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    struct dirent *ent;
    while ((ent = readdir(d))) {
        const char *n = ent->d_name;
        size_t len = strlen(n);
        if (len < 3 || strcmp(n + len - 2, ".c") != 0 || strncmp(n, "corpus_", 7) == 0 || strncmp(n, "test_", 5) == 0)
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, n);
        char *source = rk_test_read_file(path, NULL);
        CHECK(source != NULL);
        rk_transpile_desc desc = {.source = source, .path = path, .no_file_system = any_error_ok};
        rk_transpile_result_destroy(check_source(path, &desc, any_error_ok));
        free(source);
    }
    closedir(d);
    free(dir);
}

int main(void) {
    char probe[300];
    snprintf(probe, sizeof probe, "%s --version >/dev/null 2>&1", RK_MSL_CXX);
    if (system(probe) != 0) {
        printf("SKIP: no %s (scripts/install-deps.sh installs clang)\n", RK_MSL_CXX);
        return 77;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(scratch, sizeof scratch, "%s/rk-msl-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    CHECK(mkdtemp(scratch) != NULL);
    bool update = getenv("RK_UPDATE_GOLDEN") && strcmp(getenv("RK_UPDATE_GOLDEN"), "1") == 0;

    for (int i = 0; i < TP_CASE_COUNT; i++) {
        const tp_case *c = &tp_cases[i];
        char *path = tp_case_path(c->source);
        rk_transpile_desc d = {.path = path, .kind = c->kind};
        memcpy(d.stencil.tile, c->tile, sizeof d.stencil.tile);
        d.stencil.halo = c->halo;
        rk_transpile_result *r = check_source(c->name, &d, false);
        if (r) golden(c, r, update);
        rk_transpile_result_destroy(r);
        free(path);
    }
    directory("examples/kernels", false);
    directory("tests/transpile/corpus", false);
    directory("tests/fuzz/corpus", true);

    char path[300];
    snprintf(path, sizeof path, "%s/check.metal", scratch);
    unlink(path);
    snprintf(path, sizeof path, "%s/check.log", scratch);
    unlink(path);
    rmdir(scratch);
    printf("MSL compile check: %d outputs compiled against the shim, %d sources refused for the MSL target, %d failures\n",
           compiled, refused, failures);
    return failures ? 1 : 0;
}
