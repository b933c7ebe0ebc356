/* A handler file as rk_kernel_launch reads it (see handler_file.h). */
#include "handler_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int handler_option(const char *cmd, int argc, char **argv, int *i, handler_options *o) {
    const char *a = argv[*i];
    if (a[0] != '-' || (a[1] != 'I' && a[1] != 'D')) return 0;
    const char *value = a[2] ? a + 2 : *i + 1 < argc ? argv[++*i] : NULL;
    if (!value) {
        fprintf(stderr, "rk %s: %s needs a value\n", cmd, a);
        return -1;
    }
    size_t *n = a[1] == 'I' ? &o->include_dir_count : &o->define_count;
    if (*n == HANDLER_MAX_OPTIONS) {
        fprintf(stderr, "rk %s: more than %d %s options\n", cmd, HANDLER_MAX_OPTIONS, a[1] == 'I' ? "-I" : "-D");
        return -1;
    }
    if (a[1] == 'I')
        o->include_dirs[(*n)++] = value;
    else
        o->defines[(*n)++] = value;
    return 1;
}

char *handler_read(const char *cmd, const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "rk %s: cannot open '%s': %s\n", cmd, path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 14, len = 0, n;
    char *text = malloc(cap);
    while (text && (n = fread(text + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (len + 1 == cap) {
            char *more = realloc(text, cap *= 2);
            if (!more) free(text);
            text = more;
        }
    }
    bool failed = ferror(f) != 0;
    fclose(f);
    if (!text || failed || memchr(text, '\0', len)) {
        fprintf(stderr, "rk %s: cannot read '%s'%s\n", cmd, path, text && !failed ? ": it holds a NUL byte" : "");
        free(text);
        return NULL;
    }
    text[len] = '\0';
    return text;
}

rk_status handler_transpile(const char *path, const char *text, const handler_options *o,
                            rk_transpile_target target, rk_transpile_result **out) {
    char wrapper[4200];
    snprintf(wrapper, sizeof wrapper, "#include <ringkernel/dsl.h>\n#include \"%s\"\n", path);
    /* The file's own directory, after the caller's: as rk_kernel_launch does. */
    handler_options with_dir = *o;
    char dir[4096];
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash == path ? 1 : slash - path) : 1, slash ? path : ".");
    with_dir.include_dirs[with_dir.include_dir_count++] = dir;
    const rk_transpile_file file = {.name = path, .contents = text};
    rk_transpile_desc d = {
        .source = wrapper,
        .path = "<rk>",
        .files = &file,
        .file_count = 1,
        .include_dirs = with_dir.include_dirs,
        .include_dir_count = with_dir.include_dir_count,
        .defines = o->defines,
        .define_count = o->define_count,
        .target = target,
    };
    return rk_transpile(&d, out);
}

