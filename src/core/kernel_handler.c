/* A kernel's handler at launch: read from its file, checked in the one
 * dialect every backend accepts, and its types' sizes made the kernel's.
 *
 * The check transpiles the handler for the CUDA and the WGSL targets on
 * every backend (under a millisecond each), so a handler that launches on
 * the CPU also launches on a GPU; the same pass gives the request, reply and
 * state sizes of the handler's signature (the host's C layout). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_impl.h"
#include "kernel_handler.h"
#include "ringkernel/transpile.h"

enum { MAX_HANDLER_FILE = 16 << 20 };

static char *copy_string(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

const char *rk__handler_source_name(const rk_kernel_desc *d) {
    return d->handler_file ? d->handler_file : "handler_source";
}

/* ---- the handler's text ------------------------------------------------------- */

static rk_status read_file(const char *path, char **out) {
    static const char fn[] = "rk_kernel_launch";
    FILE *f = fopen(path, "rb");
    if (!f) return rk__fail(RK_IO_ERROR, "%s: cannot open handler_file '%s': %s", fn, path, strerror(errno));
    size_t cap = 4096, len = 0;
    char *text = malloc(cap);
    rk_status s = text ? RK_OK : rk__fail(RK_OUT_OF_MEMORY, "%s: out of memory", fn);
    while (s == RK_OK) {
        if (len + 1 == cap) {
            char *more = cap >= MAX_HANDLER_FILE ? NULL : realloc(text, cap * 2);
            if (!more) {
                s = cap >= MAX_HANDLER_FILE ? rk__fail(RK_INVALID_ARGUMENT, "%s: handler_file '%s' is larger than 16 MiB", fn, path)
                                            : rk__fail(RK_OUT_OF_MEMORY, "%s: out of memory", fn);
                break;
            }
            text = more;
            cap *= 2;
        }
        size_t n = fread(text + len, 1, cap - 1 - len, f);
        len += n;
        if (n == 0) {
            if (ferror(f)) s = rk__fail(RK_IO_ERROR, "%s: reading handler_file '%s' failed", fn, path);
            break;
        }
    }
    fclose(f);
    if (s != RK_OK) {
        free(text);
        return s;
    }
    text[len] = '\0';
    if (memchr(text, '\0', len)) {
        free(text);
        return rk__fail(RK_INVALID_ARGUMENT, "%s: handler_file '%s' holds a NUL byte: not C source", fn, path);
    }
    *out = text;
    return RK_OK;
}

/* The file's directory, searched after the caller's include dirs (the
 * transpiler and the compilers see the handler as a copy, not in place). */
static rk_status add_file_directory(rk__handler_text *t, const rk_compile_options *o) {
    size_t given = o ? o->include_dir_count : 0;
    t->include_dirs = calloc(given + 1, sizeof *t->include_dirs);
    if (!t->include_dirs) return rk__fail(RK_OUT_OF_MEMORY, "rk_kernel_launch: out of memory");
    for (size_t i = 0; i < given; i++) {
        t->include_dirs[i] = copy_string(o->include_dirs[i] ? o->include_dirs[i] : ".");
        if (!t->include_dirs[i]) return rk__fail(RK_OUT_OF_MEMORY, "rk_kernel_launch: out of memory");
        t->include_dir_count++;
    }
    const char *slash = strrchr(t->file, '/');
    char *dir = slash ? strndup(t->file, slash == t->file ? 1 : (size_t)(slash - t->file)) : copy_string(".");
    if (!dir) return rk__fail(RK_OUT_OF_MEMORY, "rk_kernel_launch: out of memory");
    t->include_dirs[t->include_dir_count++] = dir;
    if (o) t->options = *o;
    t->options.include_dirs = (const char *const *)t->include_dirs;
    t->options.include_dir_count = t->include_dir_count;
    return RK_OK;
}

rk_status rk__handler_text_load(rk_kernel_desc *d, rk__handler_text *t) {
    static const char fn[] = "rk_kernel_launch";
    memset(t, 0, sizeof *t);
    int given = (d->handler_source != NULL) + (d->handler_file != NULL) + (d->handler != NULL);
    if (given > 1)
        return rk__fail(RK_INVALID_ARGUMENT, "%s: more than one of handler_source, handler_file and handler is set (give exactly one)",
                        fn);
    if (given == 0)
        return rk__fail(RK_INVALID_ARGUMENT,
                        "%s: no handler (set handler_source or handler_file with handler_name, or handler)", fn);
    if (d->handler) return RK_OK;
    if (!d->handler_name)
        return rk__fail(RK_NULL_ARGUMENT, "%s: %s is set but handler_name is NULL", fn,
                        d->handler_file ? "handler_file" : "handler_source");
    rk_status s = RK_OK;
    if (d->handler_file) {
        /* It is named in #line and #include directives: keep it plain. */
        if (strpbrk(d->handler_file, "\"\\\n") || !*d->handler_file)
            return rk__fail(RK_INVALID_ARGUMENT, "%s: handler_file '%s' is empty or holds a quote, backslash or newline",
                            fn, d->handler_file);
        t->file = copy_string(d->handler_file);
        if (!t->file) return rk__fail(RK_OUT_OF_MEMORY, "%s: out of memory", fn);
        s = read_file(t->file, &t->source);
        if (s == RK_OK) s = add_file_directory(t, d->compile_options);
        if (s != RK_OK) return s;
        d->compile_options = &t->options;
    } else {
        t->source = copy_string(d->handler_source);
        if (!t->source) return rk__fail(RK_OUT_OF_MEMORY, "%s: out of memory", fn);
    }
    d->handler_source = t->source;
    d->handler_file = t->file;
    return RK_OK;
}

void rk__handler_text_free(rk__handler_text *t) {
    for (size_t i = 0; i < t->include_dir_count; i++) free(t->include_dirs[i]);
    free(t->include_dirs);
    free(t->source);
    free(t->file);
    memset(t, 0, sizeof *t);
}

/* ---- the dialect and the sizes ---------------------------------------------------- */

/* Transpiles the handler for one target. The source is a virtual file named
 * as the user knows it, included after dsl.h as the backends do, so
 * diagnostics carry the user's own file and lines. */
static rk_status transpile_for(const rk_kernel_desc *d, rk_transpile_target target, rk_transpile_result **out) {
    const char *name = rk__handler_source_name(d);
    char wrapper[1200];
    int n = snprintf(wrapper, sizeof wrapper, "#include <ringkernel/dsl.h>\n#include \"%s\"\n", name);
    if (n < 0 || (size_t)n >= sizeof wrapper)
        return rk__fail(RK_INVALID_ARGUMENT, "rk_kernel_launch: handler_file path is too long (%zu bytes)", strlen(name));
    const rk_transpile_file file = {.name = name, .contents = d->handler_source};
    const rk_compile_options *o = d->compile_options;
    rk_transpile_desc td = {
        .source = wrapper,
        .path = "<launch>",
        .files = &file,
        .file_count = 1,
        .include_dirs = o ? o->include_dirs : NULL,
        .include_dir_count = o ? o->include_dir_count : 0,
        .defines = o ? o->defines : NULL,
        .define_count = o ? o->define_count : 0,
        .target = target,
        .kind = RK_TRANSPILE_AUTO,
    };
    return rk_transpile(&td, out);
}

static const rk_transpiled_kernel *find_handler(const rk_transpile_result *r, const char *name) {
    for (size_t i = 0; i < rk_transpile_kernel_count(r); i++) {
        const rk_transpiled_kernel *k = rk_transpile_kernel(r, i);
        if (k->kind == RK_TRANSPILE_HANDLER && strcmp(k->name, name) == 0) return k;
    }
    return NULL;
}

/* 0 takes the type's size; another value must equal it. A void * parameter
 * (type size 0) leaves the desc's value alone. */
static rk_status reconcile(const rk_kernel_desc *d, const char *field, uint32_t *size, uint32_t type_size,
                           const char *role) {
    if (type_size == 0) return RK_OK;
    if (*size == 0) {
        *size = type_size;
        return RK_OK;
    }
    if (*size == type_size) return RK_OK;
    return rk__fail(RK_INVALID_ARGUMENT,
                    "rk_kernel_launch: kernel '%s': %s is %u but handler '%s' takes a %u-byte %s (give 0 to take the "
                    "handler's size)",
                    d->name ? d->name : "kernel", field, *size, d->handler_name, type_size, role);
}

static rk_status refuse_dialect(const rk_kernel_desc *d, rk_transpile_result *const res[2], const rk_status st[2]) {
    const char *cuda = res[0] ? rk_transpile_diagnostics_text(res[0]) : "";
    const char *wgsl = res[1] ? rk_transpile_diagnostics_text(res[1]) : "";
    if (st[0] != RK_OK && st[1] != RK_OK && strcmp(cuda, wgsl) != 0)
        return rk__fail(RK_COMPILE_FAILED,
                        "rk_kernel_launch: handler '%s' is outside the dialect every backend runs; the cuda target "
                        "refuses it:\n%sthe wgsl target refuses it:\n%s",
                        d->handler_name, cuda, wgsl);
    /* Often both say the same (an unknown function): say it once. */
    const char *who = st[0] != RK_OK && st[1] != RK_OK ? "the cuda and wgsl targets refuse"
                      : st[0] != RK_OK                 ? "the cuda target refuses"
                                                       : "the wgsl target refuses";
    return rk__fail(RK_COMPILE_FAILED, "rk_kernel_launch: handler '%s' is outside the dialect every backend runs; %s it:\n%s",
                    d->handler_name, who, st[0] != RK_OK ? cuda : wgsl);
}

rk_status rk__handler_check(rk_kernel_desc *d) {
    if (!d->handler_source || !strstr(d->handler_source, "RK_HANDLER")) return RK_OK;
    rk_transpile_result *res[2] = {NULL, NULL};
    rk_status st[2];
    st[0] = transpile_for(d, RK_TARGET_CUDA, &res[0]);
    st[1] = transpile_for(d, RK_TARGET_WGSL, &res[1]);
    rk_status s = RK_OK;
    for (int i = 0; i < 2 && s == RK_OK; i++)
        if (st[i] != RK_OK && st[i] != RK_PARSE_ERROR && st[i] != RK_UNSUPPORTED) s = st[i];
    if (s == RK_OK && (st[0] != RK_OK || st[1] != RK_OK)) s = refuse_dialect(d, res, st);
    const rk_transpiled_kernel *k = s == RK_OK && res[0] ? find_handler(res[0], d->handler_name) : NULL;
    if (s == RK_OK && !k)
        s = rk__fail(RK_NOT_FOUND, "rk_kernel_launch: %s has no RK_HANDLER named '%s'", rk__handler_source_name(d),
                     d->handler_name);
    if (s == RK_OK) s = reconcile(d, "message_size", &d->message_size, k->request_size, "request");
    if (s == RK_OK) s = reconcile(d, "reply_size", &d->reply_size, k->reply_size, "reply");
    if (s == RK_OK) s = reconcile(d, "state_size", &d->state_size, k->state_size, "state");
    rk_transpile_result_destroy(res[0]);
    rk_transpile_result_destroy(res[1]);
    /* A CPU-only feature let through leaves the transpiler's text behind. */
    if (s == RK_OK) rk__clear_error();
    return s;
}
