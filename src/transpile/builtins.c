/* The builtin function table (from builtins.def) and the names of host
 * library functions, so a call to printf gets a clear message rather than
 * "undeclared function". */
#include <stdlib.h>
#include <string.h>

#include "tp.h"

const tp_builtin rk__tp_builtins[TP_B_COUNT] = {
#define TP_BUILTIN_(id, name_, ret_, flags_, nargs_, a0, a1, a2, a3, a4, dx_, dy_, dz_)                  \
    [TP_B_##id] = {.name = name_, .ret = BT_##ret_, .nargs = nargs_,                                     \
                   .args = {BT_##a0, BT_##a1, BT_##a2, BT_##a3, BT_##a4}, .flags = flags_, .dx = dx_, \
                   .dy = dy_, .dz = dz_},
#include "builtins.def"
#undef TP_BUILTIN_
};

const tp_builtin *rk__tp_find_builtin(const char *name, int len, tp_builtin_id *id) {
    /* Linear, but only on identifiers that no scope declares: a few per kernel. */
    for (int i = 0; i < TP_B_COUNT; i++) {
        const char *n = rk__tp_builtins[i].name;
        if (n[0] == name[0] && (int)strlen(n) == len && memcmp(n, name, (size_t)len) == 0) {
            if (id) *id = (tp_builtin_id)i;
            return &rk__tp_builtins[i];
        }
    }
    return NULL;
}

static int compare_names(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorted for bsearch. */
static const char *const host_functions[] = {
    "abort", "aligned_alloc", "atexit", "atof", "atoi", "atol", "calloc", "clock", "exit", "fclose",
    "fflush", "fgets", "fopen", "fprintf", "fputs", "fread", "free", "fscanf", "fseek", "fwrite", "getchar",
    "getenv", "longjmp", "malloc", "memcmp", "memcpy", "memmove", "memset", "perror", "printf", "pthread_create",
    "putchar", "puts", "qsort", "rand", "realloc", "scanf", "setjmp", "snprintf", "sprintf", "srand",
    "sscanf", "strcat", "strchr", "strcmp", "strcpy", "strlen", "strncmp", "strncpy", "strstr", "strtod",
    "strtol", "system", "time", "vfprintf", "vprintf", "vsnprintf",
};

bool rk__tp_is_host_library_function(const char *name, int len) {
    char buf[64];
    if (len <= 0 || len >= (int)sizeof buf) return false;
    memcpy(buf, name, (size_t)len);
    buf[len] = '\0';
    const char *key = buf;
    return bsearch(&key, host_functions, sizeof host_functions / sizeof host_functions[0], sizeof host_functions[0],
                   compare_names) != NULL;
}
