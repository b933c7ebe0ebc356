/* Golden files: the CUDA generated for every case must match golden/<name>.cu
 * byte for byte, and docs/transpiler.md must show the current output of the
 * examples. After an intended change to the emitter, regenerate with
 *   tests/transpile/update-golden.sh [BUILD_DIR]
 * (RK_UPDATE_GOLDEN=1 makes this test write the files, and replace the old
 * outputs in the documentation, instead of comparing). */
#include "cases.h"
#include "check.h"

static void report_difference(const char *name, const char *want, const char *got) {
    int line = 1;
    const char *w = want, *g = got;
    while (*w && *w == *g) {
        if (*w == '\n') line++;
        w++;
        g++;
    }
    const char *wl = w, *gl = g;
    while (wl > want && wl[-1] != '\n') wl--;
    while (gl > got && gl[-1] != '\n') gl--;
    int wn = (int)strcspn(wl, "\n"), gn = (int)strcspn(gl, "\n");
    fprintf(stderr, "%s: output differs from golden/%s.cu at line %d\n  golden: %.*s\n  output: %.*s\n", name, name,
            line, wn, wl, gn, gl);
}

/* The examples whose generated CUDA the documentation shows. */
static bool documented(const char *name) {
    return strcmp(name, "vector_scale") == 0 || strcmp(name, "laplacian") == 0 || strcmp(name, "heat3d") == 0 ||
           strcmp(name, "poly_handler") == 0;
}

static char *doc_path(void) { return tp_case_path("docs/transpiler.md"); }

/* Replaces old with new in the documentation (update mode). */
static void update_doc(const char *old, const char *new_text) {
    char *path = doc_path();
    char *doc = rk_test_read_file(path, NULL);
    char *at = doc && old ? strstr(doc, old) : NULL;
    if (!at) {
        fprintf(stderr, "docs/transpiler.md: the old output was not found; update it by hand\n");
        free(doc), free(path);
        return;
    }
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    fwrite(doc, 1, (size_t)(at - doc), f);
    fputs(new_text, f);
    fputs(at + strlen(old), f);
    CHECK(fclose(f) == 0);
    free(doc), free(path);
}

int main(void) {
    bool update = getenv("RK_UPDATE_GOLDEN") && strcmp(getenv("RK_UPDATE_GOLDEN"), "1") == 0;
    int failures = 0;
    for (int i = 0; i < TP_CASE_COUNT; i++) {
        const tp_case *c = &tp_cases[i];
        rk_transpile_result *r = tp_case_transpile(c);
        CHECK(r != NULL);
        size_t size;
        const char *out = rk_transpile_output(r, &size);
        char rel[256];
        snprintf(rel, sizeof rel, "tests/transpile/golden/%s.cu", c->name);
        char *path = tp_case_path(rel);
        if (update) {
            char *old = rk_test_read_file(path, NULL);
            if (documented(c->name) && (!old || strcmp(old, out) != 0)) update_doc(old, out);
            free(old);
            FILE *f = fopen(path, "wb");
            CHECK(f != NULL);
            CHECK(fwrite(out, 1, size, f) == size);
            CHECK(fclose(f) == 0);
            printf("wrote %s\n", path);
        } else {
            char *want = rk_test_read_file(path, NULL);
            if (!want) {
                fprintf(stderr, "%s: cannot read %s (run tests/transpile/update-golden.sh)\n", c->name, path);
                failures++;
            } else if (strcmp(want, out) != 0) {
                report_difference(c->name, want, out);
                failures++;
            } else {
                printf("%-22s matches golden/%s.cu (%zu bytes)\n", c->name, c->name, size);
            }
            free(want);
            if (documented(c->name)) {
                char *dpath = doc_path();
                char *doc = rk_test_read_file(dpath, NULL);
                if (!doc || !strstr(doc, out)) {
                    fprintf(stderr, "%s: docs/transpiler.md does not show the current output (update-golden.sh fixes it)\n", c->name);
                    failures++;
                }
                free(doc), free(dpath);
            }
        }
        free(path);
        rk_transpile_result_destroy(r);
    }
    return failures ? 1 : 0;
}
