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

/* ---- docs/transpiler.md's table of builtins by target ---- */

static const char *arg_text(tp_bt bt) {
    switch (bt) {
    case BT_INT: return "1";
    case BT_UINT: return "1u";
    case BT_U64: return "(uint64_t)1";
    case BT_FLOAT: return "0.5f";
    case BT_DOUBLE: return "0.5";
    case BT_PINT: return "ib";
    case BT_PUINT: case BT_PCUINT: return "ub";
    case BT_PU64: case BT_PCU64: return "lb";
    case BT_PFLOAT: return "fb";
    case BT_POS: return "p";
    case BT_ANY_BUFFER: return "in";
    default: return "?";
    }
}

/* Does a kernel that calls builtin b (on buffers of a global kernel, or in a
 * stencil) transpile for target? */
static bool probe(const tp_builtin *b, rk_transpile_target target) {
    char call[256];
    int n = snprintf(call, sizeof call, "%s(", b->name);
    for (int i = 0; i < b->nargs; i++) n += snprintf(call + n, sizeof call - (size_t)n, "%s%s", i ? ", " : "", arg_text(b->args[i]));
    snprintf(call + n, sizeof call - (size_t)n, ")");
    char src[1024];
    bool stencil = b->flags & TP_BF_STENCIL;
    const char *use = b->ret == BT_VOID ? "%s;" : b->ret == BT_VOIDPTR ? "fb[1] = *(float *)%s;" : "fb[1] = (float)%s;";
    char stmt[320];
    snprintf(stmt, sizeof stmt, use, call);
    if (stencil)
        snprintf(src, sizeof src,
                 "#include <ringkernel/dsl_stencil.h>\n"
                 "RK_KERNEL void k(const float *in, float *fb, rk_grid_pos p) {\n    if (rk_pos_idx(p) == 0) %s\n}\n", stmt);
    else
        snprintf(src, sizeof src,
                 "#include <ringkernel/dsl.h>\n"
                 "RK_KERNEL void k(int *ib, uint32_t *ub, uint64_t *lb, float *fb, const float *in) {\n    %s\n}\n", stmt);
    rk_transpile_desc d = {.source = src, .path = "probe.c", .target = target, .no_file_system = true};
    rk_transpile_result *r = NULL;
    rk_status s = rk_transpile(&d, &r);
    if (s != RK_OK && target == RK_TARGET_WGSL && !strstr(rk_transpile_diagnostics_text(r), "(WGSL target)")) {
        fprintf(stderr, "%s: refused for WGSL without naming the target:\n%s", b->name, rk_transpile_diagnostics_text(r));
        exit(1);
    }
    rk_transpile_result_destroy(r);
    return s == RK_OK;
}

/* The table's rows ("| `name` | CPU | CUDA | WGSL |"), in builtins.def
 * order: each cell "yes", "no ..." or "partly ..." as the probes find. */
static int check_docs_table(void) {
    char *path = tp_case_path("docs/transpiler.md");
    char *text = rk_test_read_file(path, NULL);
    CHECK(text != NULL);
    const char *table = strstr(text, "| builtin | CPU | CUDA | WGSL |");
    CHECK(table != NULL);
    int bad = 0, row = 0;
    const char *line = strchr(table, '\n') + 1;
    line = strchr(line, '\n') + 1; /* the |---| line */
    for (; line && strncmp(line, "| `", 3) == 0; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL, row++) {
        const char *end = strchr(line + 3, '`');
        char name[64], cells[3][160];
        snprintf(name, sizeof name, "%.*s", (int)(end - line - 3), line + 3);
        const char *c = strchr(end, '|');
        for (int i = 0; i < 3; i++) {
            const char *next = c ? strchr(c + 1, '|') : NULL;
            snprintf(cells[i], sizeof cells[i], "%.*s", next ? (int)(next - c - 2) : 0, next ? c + 2 : "");
            c = next;
        }
        if (row >= TP_B_COUNT || strcmp(name, rk__tp_builtins[row].name) != 0) {
            fprintf(stderr, "docs/transpiler.md: row %d is '%s'; builtins.def has '%s' there\n", row + 1, name,
                    row < TP_B_COUNT ? rk__tp_builtins[row].name : "(nothing)");
            bad++;
            continue;
        }
        const tp_builtin *b = &rk__tp_builtins[row];
        bool cuda = probe(b, RK_TARGET_CUDA), wgsl = probe(b, RK_TARGET_WGSL);
        /* CPU: check_header/check_table hold the DSL to dsl.h; <math.h> is the C library's. */
        if (strncmp(cells[0], "yes", 3) != 0 || strncmp(cells[1], cuda ? "yes" : "no", cuda ? 3 : 2) != 0 ||
            (wgsl ? strncmp(cells[2], "yes", 3) != 0
                  : strncmp(cells[2], "no", 2) != 0 && strncmp(cells[2], "partly", 6) != 0)) {
            fprintf(stderr, "docs/transpiler.md: '%s' says CPU '%s', CUDA '%s', WGSL '%s'; the transpiler: CUDA %s, "
                            "WGSL %s\n", name, cells[0], cells[1], cells[2], cuda ? "yes" : "no", wgsl ? "yes" : "no");
            bad++;
        }
    }
    if (row != TP_B_COUNT) {
        fprintf(stderr, "docs/transpiler.md lists %d builtins; builtins.def has %d\n", row, (int)TP_B_COUNT);
        for (int i = row; i < TP_B_COUNT; i++) {
            const tp_builtin *b = &rk__tp_builtins[i];
            fprintf(stderr, "| `%s` | yes | %s | %s |\n", b->name, probe(b, RK_TARGET_CUDA) ? "yes" : "no",
                    probe(b, RK_TARGET_WGSL) ? "yes" : "no");
        }
        bad++;
    }
    printf("docs/transpiler.md: %d builtins, each with the support the transpiler gives it\n", row);
    free(text);
    free(path);
    return bad;
}

int main(void) {
    int missing = check_docs_table();
    missing += check_header("include/ringkernel/dsl.h", " * CPU:");
    missing += check_header("include/ringkernel/dsl_stencil.h", NULL);
    missing += check_table();
    return missing ? 1 : 0;
}
