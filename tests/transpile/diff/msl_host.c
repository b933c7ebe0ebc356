/* The transpiler's MSL as host C++ (msl_host.h). */
#include "msl_host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void msl_host_flags(diff_text *out, const char *root) {
    /* Warnings about the program's own style (unused variables, constant
     * operands) are not Metal's errors: only what the shim models fails. */
    diff_text_printf(out, "-std=c++17 -Werror=unknown-attributes -I%s/tests/metal/shim -I%s/include -x c++", root,
                     root);
}

/* A line "<indent>threadgroup T name[..];": a threadgroup variable (a
 * pointer into threadgroup memory has a '*', a parameter list a '('). */
static bool threadgroup_variable(const char *line, size_t len) {
    size_t i = 0;
    while (i < len && line[i] == ' ') i++;
    if (len - i < 12 || strncmp(line + i, "threadgroup ", 12) != 0 || line[len - 1] != ';') return false;
    return !memchr(line, '*', len) && !memchr(line, '(', len);
}

static void append_line(diff_text *out, const char *line, size_t len, const char *find, const char *replace) {
    size_t n = find ? strlen(find) : 0;
    if (!n) {
        diff_text_printf(out, "%.*s", (int)len, line);
        return;
    }
    for (size_t i = 0; i < len;) {
        if (n && i + n <= len && memcmp(line + i, find, n) == 0) {
            diff_text_printf(out, "%s", replace ? replace : "");
            i += n;
        } else {
            diff_text_printf(out, "%c", line[i++]);
        }
    }
}

void msl_host_rewrite(diff_text *out, const char *msl, const char *find, const char *replace) {
    for (const char *s = msl; *s;) {
        const char *nl = strchr(s, '\n');
        size_t len = nl ? (size_t)(nl - s) : strlen(s);
        if (threadgroup_variable(s, len)) diff_text_printf(out, "static thread_local ");
        append_line(out, s, len, find, replace);
        diff_text_printf(out, "%s", nl ? "\n" : "");
        s += len + (nl ? 1 : 0);
    }
}

/* The parameter list of "kernel void NAME(" in msl. */
static bool kernel_params(const char *msl, const char *name, const char **begin, const char **end) {
    char head[400];
    snprintf(head, sizeof head, "kernel void %s(", name);
    const char *s = strstr(msl, head);
    if (!s) return false;
    *begin = s + strlen(head);
    int depth = 1;
    for (const char *c = *begin; *c; c++) {
        depth += *c == '(' ? 1 : *c == ')' ? -1 : 0;
        if (!depth) {
            *end = c;
            return true;
        }
    }
    return false;
}

static bool ident_char(char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

/* One parameter "device float *data [[buffer(0)]]": the declaration without
 * its attribute, and the parameter's name. */
static void split_param(const char *p, size_t len, size_t *decl_len, const char **id, size_t *id_len) {
    const char *attr = NULL;
    for (size_t i = 0; i + 1 < len; i++)
        if (p[i] == '[' && p[i + 1] == '[') {
            attr = p + i;
            break;
        }
    const char *e = attr ? attr : p + len;
    while (e > p && e[-1] == ' ') e--;
    *decl_len = (size_t)(e - p);
    const char *b = e;
    while (b > p && ident_char(b[-1])) b--;
    *id = b;
    *id_len = (size_t)(e - b);
}

bool msl_host_wrapper(diff_text *out, const char *msl, const char *kernel, const char *name, bool handler) {
    char ring[300];
    snprintf(ring, sizeof ring, handler ? "rk_ring_%s" : "%s", kernel);
    const char *begin, *end;
    if (!kernel_params(msl, ring, &begin, &end)) return false;
    diff_text params = {0}, call = {0};
    if (handler) {
        diff_text_printf(&params, "unsigned char *in, unsigned char *out, unsigned char *st, int *rc, int n");
    }
    int depth = 0, index = 0;
    const char *start = begin;
    for (const char *c = begin; c <= end; c++) {
        if (c < end) {
            depth += (*c == '(' || *c == '[') ? 1 : (*c == ')' || *c == ']') ? -1 : 0;
            if (*c != ',' || depth) continue;
        }
        while (*start == ' ') start++;
        size_t decl_len, id_len;
        const char *id;
        split_param(start, (size_t)(c - start), &decl_len, &id, &id_len);
        const char *sep = call.len ? ", " : "";
        if (strncmp(start, "uint3 rk__", 10) == 0) {
            const char *which = strncmp(id, "rk__tid", id_len) == 0    ? "RK_MSL_TID"
                                : strncmp(id, "rk__bid", id_len) == 0  ? "RK_MSL_BID"
                                : strncmp(id, "rk__bdim", id_len) == 0 ? "RK_MSL_BDIM"
                                                                       : "RK_MSL_GDIM";
            diff_text_printf(&call, "%s%s", sep, which);
        } else if (handler) {
            /* control, requests, replies, status, state */
            static const char *const ring_args[] = {"(device rk__ring_control *)&rk__c", "(device const uchar *)in",
                                                    "(device uchar *)out", "(device int *)rc", "(device uchar *)st"};
            diff_text_printf(&call, "%s%s", sep, index < 5 ? ring_args[index] : "0");
        } else if (memchr(start, '&', decl_len)) {
            /* "constant T &name": the executor passes the value */
            const char *type = start + 9, *amp = memchr(start, '&', decl_len);
            diff_text_printf(&params, "%s%.*s%.*s", params.len ? ", " : "", (int)(amp - type), type, (int)id_len, id);
            diff_text_printf(&call, "%s*(constant %.*s*)&%.*s", sep, (int)(amp - type), type, (int)id_len, id);
        } else {
            diff_text_printf(&params, "%s%.*s", params.len ? ", " : "", (int)decl_len, start);
            diff_text_printf(&call, "%s%.*s", sep, (int)id_len, id);
        }
        index++;
        start = c + 1;
    }
    diff_text_printf(out, "\nextern \"C\" __attribute__((visibility(\"default\"))) void rk_msl_host_%s(%s) {\n", name,
                     params.s ? params.s : "void");
    if (handler)
        diff_text_printf(out, "    rk__ring_control rk__c = {1u, 0u, (uint)n, 0u, (uint)n, 0u, 0u, 0u};\n");
    diff_text_printf(out, "    %s(%s);\n}\n", ring, call.s ? call.s : "");
    free(params.s);
    free(call.s);
    return true;
}
