/* Golden files: the CUDA generated for every case must match golden/<name>.cu
 * byte for byte. After an intended change to the emitter, regenerate with
 *   tests/transpile/update-golden.sh [BUILD_DIR]
 * (RK_UPDATE_GOLDEN=1 makes this test write the files instead of comparing). */
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
            FILE *f = fopen(path, "wb");
            CHECK(f != NULL);
            CHECK(fwrite(out, 1, size, f) == size);
            CHECK(fclose(f) == 0);
            printf("wrote %s\n", path);
        } else {
            char *want = tp_read_file(path, NULL);
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
        }
        free(path);
        rk_transpile_result_destroy(r);
    }
    return failures ? 1 : 0;
}
