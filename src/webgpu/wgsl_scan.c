/* Reads entry points, bindings and structs from WGSL source (see wgsl_scan.h). */
#include "wgsl_scan.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { T_IDENT, T_NUMBER, T_PUNCT } tok_kind;

typedef struct tok {
    tok_kind kind;
    const char *p;
    size_t n;
} tok;

typedef struct toks {
    tok *v;
    size_t n, cap;
} toks;

static bool push_tok(toks *t, tok_kind k, const char *p, size_t n) {
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        tok *v = realloc(t->v, cap * sizeof *v);
        if (!v) return false;
        t->v = v;
        t->cap = cap;
    }
    t->v[t->n++] = (tok){k, p, n};
    return true;
}

static bool tokenize(const char *s, toks *t) {
    while (*s) {
        if (isspace((unsigned char)*s)) {
            s++;
        } else if (s[0] == '/' && s[1] == '/') {
            while (*s && *s != '\n') s++;
        } else if (s[0] == '/' && s[1] == '*') { /* WGSL block comments nest */
            int depth = 0;
            do {
                if (s[0] == '/' && s[1] == '*') depth++, s += 2;
                else if (s[0] == '*' && s[1] == '/') depth--, s += 2;
                else s++;
            } while (*s && depth > 0);
        } else if (isalpha((unsigned char)*s) || *s == '_') {
            const char *b = s;
            while (isalnum((unsigned char)*s) || *s == '_') s++;
            if (!push_tok(t, T_IDENT, b, (size_t)(s - b))) return false;
        } else if (isdigit((unsigned char)*s)) {
            const char *b = s;
            while (isalnum((unsigned char)*s) || *s == '_' || *s == '.') s++;
            if (!push_tok(t, T_NUMBER, b, (size_t)(s - b))) return false;
        } else {
            if (!push_tok(t, T_PUNCT, s, 1)) return false;
            s++;
        }
    }
    return true;
}

static bool is(const tok *k, const char *text) { return k->n == strlen(text) && memcmp(k->p, text, k->n) == 0; }

static void copy_name(char *dst, const tok *k) {
    size_t n = k->n < WGSL_NAME_MAX - 1 ? k->n : WGSL_NAME_MAX - 1;
    memcpy(dst, k->p, n);
    dst[n] = '\0';
}

/* An integer literal such as 64, 64u, 0x40i. */
static bool int_literal(const tok *k, long long *out) {
    char buf[32];
    if (k->kind != T_NUMBER || k->n >= sizeof buf) return false;
    memcpy(buf, k->p, k->n);
    buf[k->n] = '\0';
    size_t n = k->n;
    if (n > 1 && (buf[n - 1] == 'u' || buf[n - 1] == 'i')) buf[--n] = '\0';
    char *end = NULL;
    long long v = strtoll(buf, &end, 0);
    if (!end || *end) return false;
    *out = v;
    return true;
}

typedef struct attr {
    const tok *name;
    size_t arg_begin, arg_end; /* token indexes inside the parentheses */
} attr;

typedef struct constant {
    const tok *name;
    long long value;
    bool has_value;   /* a literal value (an override's default may be absent) */
    bool is_override; /* set per pipeline; the launch's block fills a workgroup size */
} constant;

typedef struct scan_state {
    const toks *t;
    size_t *body_begin, *body_end; /* per entry: token range of its body */
    attr pending[8];
    size_t pending_n;
    constant consts[64];
    size_t const_n;
} scan_state;

static const attr *find_attr(const scan_state *st, const char *name) {
    for (size_t i = 0; i < st->pending_n; i++)
        if (is(st->pending[i].name, name)) return &st->pending[i];
    return NULL;
}

static bool attr_int(const scan_state *st, const attr *a, long long *out) {
    return a && a->arg_end == a->arg_begin + 1 && int_literal(&st->t->v[a->arg_begin], out);
}

/* One @workgroup_size argument (dimension d): a literal, the name of a
 * module const, or the name of an override that the launch's block sets. */
static bool eval_size(const scan_state *st, size_t b, size_t e, wgsl_entry *out, size_t d) {
    long long v;
    if (e != b + 1) return false;
    const tok *k = &st->t->v[b];
    if (int_literal(k, &v)) {
        out->workgroup[d] = (uint32_t)v;
        return v > 0;
    }
    for (size_t i = 0; i < st->const_n; i++) {
        const constant *c = &st->consts[i];
        if (k->kind != T_IDENT || c->name->n != k->n || memcmp(c->name->p, k->p, k->n) != 0) continue;
        out->workgroup[d] = c->has_value && c->value > 0 ? (uint32_t)c->value : 0;
        if (c->is_override) {
            out->dim_override[d] = true;
            copy_name(out->dim_name[d], k);
            return true;
        }
        return c->has_value && c->value > 0;
    }
    return false;
}

static void read_workgroup(const scan_state *st, const attr *a, wgsl_entry *e) {
    e->workgroup[0] = e->workgroup[1] = e->workgroup[2] = 1;
    e->workgroup_known = false;
    if (!a) return;
    size_t dim = 0, b = a->arg_begin;
    bool ok = true;
    int depth = 0;
    for (size_t i = a->arg_begin; i <= a->arg_end && dim < 3; i++) {
        const tok *k = i < a->arg_end ? &st->t->v[i] : NULL;
        if (k && k->kind == T_PUNCT && (*k->p == '(' || *k->p == '<')) depth++;
        if (k && k->kind == T_PUNCT && (*k->p == ')' || *k->p == '>')) depth--;
        if (!k || (depth == 0 && k->kind == T_PUNCT && *k->p == ',')) {
            if (i > b) ok = ok && eval_size(st, b, i, e, dim++);
            b = i + 1;
        }
    }
    e->workgroup_known = ok && dim >= 1;
}

/* Skips a balanced (…), <…>, {…} starting at i; returns the index after it. */
static size_t skip_group(const toks *t, size_t i, char open, char close) {
    int depth = 0;
    for (; i < t->n; i++) {
        if (t->v[i].kind != T_PUNCT) continue;
        if (*t->v[i].p == open) depth++;
        else if (*t->v[i].p == close && --depth == 0) return i + 1;
    }
    return t->n;
}

static bool add_struct(const toks *t, size_t *ip, wgsl_facts *f) {
    size_t i = *ip + 1;
    if (i >= t->n || t->v[i].kind != T_IDENT) return true;
    wgsl_struct s = {0};
    copy_name(s.name, &t->v[i]);
    i++;
    if (i >= t->n || !is(&t->v[i], "{")) return true;
    size_t end = skip_group(t, i, '{', '}');
    i++;
    while (i + 1 < end) {
        while (i < end && is(&t->v[i], "@")) { /* member attributes */
            i += 2;
            if (i < end && is(&t->v[i], "(")) i = skip_group(t, i, '(', ')');
        }
        if (i + 2 >= end || !is(&t->v[i + 1], ":")) break;
        i += 2;
        char type[WGSL_NAME_MAX] = "";
        int angle = 0;
        for (; i < end - 1; i++) {
            const tok *k = &t->v[i];
            if (k->kind == T_PUNCT && *k->p == '<') angle++;
            if (k->kind == T_PUNCT && *k->p == '>') angle--;
            if (angle == 0 && k->kind == T_PUNCT && *k->p == ',') break;
            size_t used = strlen(type);
            if (used + k->n < sizeof type) {
                memcpy(type + used, k->p, k->n);
                type[used + k->n] = '\0';
            }
        }
        wgsl_member *m = realloc(s.members, (s.member_count + 1) * sizeof *m);
        if (!m) {
            free(s.members);
            return false;
        }
        s.members = m;
        snprintf(s.members[s.member_count++].type, WGSL_NAME_MAX, "%s", type);
        i++; /* the comma */
    }
    wgsl_struct *v = realloc(f->structs, (f->struct_count + 1) * sizeof *v);
    if (!v) {
        free(s.members);
        return false;
    }
    f->structs = v;
    f->structs[f->struct_count++] = s;
    *ip = end - 1;
    return true;
}

static bool add_var(scan_state *st, size_t *ip, wgsl_facts *f) {
    const toks *t = st->t;
    size_t i = *ip + 1;
    wgsl_binding b = {.space = WGSL_OTHER};
    if (i < t->n && is(&t->v[i], "<")) {
        size_t end = skip_group(t, i, '<', '>');
        if (i + 1 < end && is(&t->v[i + 1], "uniform")) b.space = WGSL_UNIFORM;
        if (i + 1 < end && is(&t->v[i + 1], "storage")) {
            b.space = WGSL_STORAGE_READ;
            for (size_t j = i + 2; j < end; j++)
                if (is(&t->v[j], "read_write")) b.space = WGSL_STORAGE_RW;
        }
        i = end;
    }
    if (i >= t->n || t->v[i].kind != T_IDENT) return true;
    copy_name(b.name, &t->v[i]);
    if (i + 2 < t->n && is(&t->v[i + 1], ":")) copy_name(b.type, &t->v[i + 2]);
    long long group, binding;
    if (!attr_int(st, find_attr(st, "group"), &group) || !attr_int(st, find_attr(st, "binding"), &binding))
        return true;
    b.group = (uint32_t)group;
    b.binding = (uint32_t)binding;
    wgsl_binding *v = realloc(f->bindings, (f->binding_count + 1) * sizeof *v);
    if (!v) return false;
    f->bindings = v;
    f->bindings[f->binding_count++] = b;
    *ip = i;
    return true;
}

static bool add_entry(scan_state *st, size_t i, wgsl_facts *f) {
    if (!find_attr(st, "compute") || i + 1 >= st->t->n || st->t->v[i + 1].kind != T_IDENT) return true;
    wgsl_entry e = {0};
    copy_name(e.name, &st->t->v[i + 1]);
    read_workgroup(st, find_attr(st, "workgroup_size"), &e);
    wgsl_entry *v = realloc(f->entries, (f->entry_count + 1) * sizeof *v);
    size_t *bb = realloc(st->body_begin, (f->entry_count + 1) * sizeof *bb);
    if (bb) st->body_begin = bb;
    size_t *be = bb ? realloc(st->body_end, (f->entry_count + 1) * sizeof *be) : NULL;
    if (be) st->body_end = be;
    if (!v || !bb || !be) {
        if (v) f->entries = v;
        return false;
    }
    /* The body: from the first '{' after the signature to its match. */
    size_t j = i;
    while (j < st->t->n && !is(&st->t->v[j], "{")) j++;
    st->body_begin[f->entry_count] = j;
    st->body_end[f->entry_count] = skip_group(st->t, j, '{', '}');
    f->entries = v;
    f->entries[f->entry_count++] = e;
    return true;
}

static void add_const(scan_state *st, size_t i, bool is_override) {
    const toks *t = st->t;
    if (i + 1 >= t->n || t->v[i + 1].kind != T_IDENT || st->const_n == sizeof st->consts / sizeof st->consts[0])
        return;
    size_t j = i + 2;
    while (j < t->n && !is(&t->v[j], "=") && !is(&t->v[j], ";")) j++;
    long long v = 0;
    bool literal = j + 2 < t->n && is(&t->v[j], "=") && is(&t->v[j + 2], ";") && int_literal(&t->v[j + 1], &v);
    if (literal || is_override) st->consts[st->const_n++] = (constant){&t->v[i + 1], v, literal, is_override};
}

bool rk__wgsl_scan(const char *source, wgsl_facts *out) {
    memset(out, 0, sizeof *out);
    toks t = {0};
    scan_state st = {.t = &t};
    bool ok = tokenize(source, &t);
    int depth = 0;
    for (size_t i = 0; ok && i < t.n; i++) {
        const tok *k = &t.v[i];
        if (k->kind == T_PUNCT && *k->p == '{') {
            depth++;
            st.pending_n = 0;
        } else if (k->kind == T_PUNCT && *k->p == '}') {
            depth--;
        } else if (depth != 0) {
            continue;
        } else if (k->kind == T_PUNCT && *k->p == '@' && i + 1 < t.n && t.v[i + 1].kind == T_IDENT) {
            attr a = {.name = &t.v[i + 1], .arg_begin = i + 2, .arg_end = i + 2};
            i++;
            if (i + 1 < t.n && is(&t.v[i + 1], "(")) {
                size_t end = skip_group(&t, i + 1, '(', ')');
                a.arg_begin = i + 2;
                a.arg_end = end - 1;
                i = end - 1;
            }
            if (st.pending_n < sizeof st.pending / sizeof st.pending[0]) st.pending[st.pending_n++] = a;
        } else if (is(k, "fn")) {
            ok = add_entry(&st, i, out);
            st.pending_n = 0;
        } else if (is(k, "var")) {
            ok = add_var(&st, &i, out);
            st.pending_n = 0;
        } else if (is(k, "struct")) {
            ok = add_struct(&t, &i, out);
            st.pending_n = 0;
        } else if (is(k, "const") || is(k, "override")) {
            add_const(&st, i, is(k, "override"));
            st.pending_n = 0;
        }
    }
    for (size_t b = 0; ok && b < out->binding_count; b++) {
        size_t uses = 0;
        for (size_t i = 0; i < t.n; i++)
            if (t.v[i].kind == T_IDENT && is(&t.v[i], out->bindings[b].name)) uses++;
        out->bindings[b].referenced = uses >= 2;
    }
    if (ok && out->entry_count && out->binding_count) {
        out->mentions = calloc(out->entry_count * out->binding_count, sizeof *out->mentions);
        ok = out->mentions != NULL;
        for (size_t e = 0; ok && e < out->entry_count; e++)
            for (size_t b = 0; b < out->binding_count; b++)
                for (size_t i = st.body_begin[e]; i < st.body_end[e] && i < t.n; i++)
                    if (t.v[i].kind == T_IDENT && is(&t.v[i], out->bindings[b].name)) {
                        out->mentions[e * out->binding_count + b] = true;
                        break;
                    }
    }
    free(st.body_begin);
    free(st.body_end);
    free(t.v);
    if (!ok) rk__wgsl_facts_free(out);
    return ok;
}

void rk__wgsl_facts_free(wgsl_facts *f) {
    for (size_t i = 0; i < f->struct_count; i++) free(f->structs[i].members);
    free(f->structs);
    free(f->bindings);
    free(f->entries);
    free(f->mentions);
    memset(f, 0, sizeof *f);
}

const wgsl_binding *rk__wgsl_binding_for(const wgsl_facts *f, size_t entry, uint32_t index) {
    const wgsl_binding *first = NULL;
    for (size_t b = 0; b < f->binding_count; b++) {
        const wgsl_binding *d = &f->bindings[b];
        if (d->group != 0 || d->binding != index) continue;
        if (f->mentions && entry < f->entry_count && f->mentions[entry * f->binding_count + b]) return d;
        if (!first) first = d;
    }
    return first;
}

const wgsl_struct *rk__wgsl_find_struct(const wgsl_facts *f, const char *name) {
    for (size_t i = 0; i < f->struct_count; i++)
        if (strcmp(f->structs[i].name, name) == 0) return &f->structs[i];
    return NULL;
}
