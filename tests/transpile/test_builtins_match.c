/* The transpiler's builtin table and the DSL headers name the same
 * functions: every DSL function the CPU can call is one the transpiler knows,
 * and every DSL builtin the transpiler accepts exists on the CPU. */
#include <ctype.h>

#include "cases.h"
#include "check.h"
#include "transpile/tp.h"

/* Host-side helpers in dsl_stencil.h that kernels do not call. */
static const char *const host_only[] = {"rk_stencil_run", "rk_stencil_for_each"};

static bool is_host_only(const char *name) {
    for (size_t i = 0; i < sizeof host_only / sizeof host_only[0]; i++)
        if (strcmp(host_only[i], name) == 0) return true;
    return false;
}

/* Names declared in the header's CPU part: "static inline T name(", the
 * stencil header's "RK_STENCIL_FN_ T name(" and "#define rk_name(". */
static int check_header(const char *relative, const char *cpu_marker) {
    char *path = tp_case_path(relative);
    char *text = rk_test_read_file(path, NULL);
    CHECK(text != NULL);
    const char *start = cpu_marker ? strstr(text, cpu_marker) : text;
    CHECK(start != NULL);
    int missing = 0, seen = 0;
    for (const char *line = start; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        bool fn = strncmp(line, "static inline ", 14) == 0 || strncmp(line, "RK_STENCIL_FN_ ", 15) == 0;
        bool macro = strncmp(line, "#define rk_", 11) == 0;
        if (!fn && !macro) continue;
        const char *paren = strchr(line, '(');
        const char *eol = strchr(line, '\n');
        if (!paren || (eol && paren > eol)) continue;
        const char *end = paren, *begin = paren;
        while (begin > line && (isalnum((unsigned char)begin[-1]) || begin[-1] == '_')) begin--;
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(end - begin), begin);
        if (name[strlen(name) - 1] == '_' || is_host_only(name)) continue; /* internal helpers */
        seen++;
        if (!rk__tp_find_builtin(name, (int)strlen(name), NULL)) {
            fprintf(stderr, "%s declares '%s', which the transpiler does not know\n", relative, name);
            missing++;
        }
    }
    printf("%s: %d DSL functions, all known to the transpiler\n", relative, seen - missing);
    CHECK_GT(seen, 10);
    free(text);
    free(path);
    return missing;
}

/* Every DSL builtin (not <math.h>, not the INFINITY/NAN helpers) appears in a header. */
static int check_table(void) {
    char *dsl_path = tp_case_path("include/ringkernel/dsl.h");
    char *stencil_path = tp_case_path("include/ringkernel/dsl_stencil.h");
    char *dsl = rk_test_read_file(dsl_path, NULL), *stencil = rk_test_read_file(stencil_path, NULL);
    CHECK(dsl && stencil);
    int missing = 0;
    for (int i = 0; i < TP_B_COUNT; i++) {
        const tp_builtin *b = &rk__tp_builtins[i];
        if (b->flags & (TP_BF_MATH | TP_BF_CONST)) continue;
        char needle[80], pointer[80];
        snprintf(needle, sizeof needle, " %s(", b->name);
        snprintf(pointer, sizeof pointer, "*%s(", b->name); /* void *dynamic_shared( */
        const char *cpu = strstr(dsl, " * CPU:");
        if (!(cpu && (strstr(cpu, needle) || strstr(cpu, pointer))) && !strstr(stencil, needle)) {
            fprintf(stderr, "the transpiler knows '%s', which neither DSL header defines for the CPU\n", b->name);
            missing++;
        }
    }
    free(dsl);
    free(stencil);
    free(dsl_path);
    free(stencil_path);
    return missing;
}

int main(void) {
    int missing = check_header("include/ringkernel/dsl.h", " * CPU:");
    missing += check_header("include/ringkernel/dsl_stencil.h", NULL);
    missing += check_table();
    return missing ? 1 : 0;
}
