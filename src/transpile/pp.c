/* The preprocessor: #include, #define (object- and function-like, # and ##,
 * variadic), #undef, #if/#ifdef/#ifndef/#elif/#else/#endif, #error,
 * #warning, #pragma once. Macro expansion follows the C standard's
 * hide-set algorithm (Prosser's), so self-referencing macros stop. */
#include <stdio.h>
#include <string.h>

#include "tp.h"

typedef struct macro_param {
    struct macro_param *next;
    tp_token *name;
} macro_param;

typedef enum { MB_NONE, MB_FILE, MB_LINE } macro_builtin;

typedef struct macro {
    tp_token *name;
    bool objlike;
    macro_param *params;
    bool variadic;
    const char *va_name; /* __VA_ARGS__ or a GNU named variadic parameter */
    tp_token *body;      /* ends with TK_EOF */
    macro_builtin builtin;
} macro;

typedef struct macro_arg {
    struct macro_arg *next;
    tp_token *name;
    tp_token *tok;       /* ends with TK_EOF */
    bool is_va;
} macro_arg;

struct tp_hideset {
    tp_hideset *next;
    const char *name;
    int len;
};

typedef enum { IN_THEN, IN_ELIF, IN_ELSE } cond_ctx;
typedef struct cond_incl {
    struct cond_incl *next;
    cond_ctx ctx;
    tp_token *tok;
    bool included;
} cond_incl;

typedef struct pp {
    tp_ctx *ctx;
    tp_map macros;
    cond_incl *conds;
    int include_depth;
    int expand_depth;
    int in_arg; /* expanding a macro argument */
} pp;

static tp_token *preprocess2(pp *pp, tp_token *tok);

/* ---- tokens and hide sets ------------------------------------------------- */

static tp_token *copy_token(pp *pp, const tp_token *tok) {
    if (++pp->ctx->tokens_made > TP_MAX_TOKENS) {
        rk__tp_error(pp->ctx, tok, "macro expansion produces more than %d tokens", TP_MAX_TOKENS);
        pp->ctx->fatal_status = RK_PARSE_ERROR;
        rk__tp_fatal(pp->ctx);
    }
    tp_token *t = rk__tp_alloc(pp->ctx, sizeof *t);
    *t = *tok;
    t->next = NULL;
    return t;
}

static tp_token *new_eof(pp *pp, const tp_token *like) { return rk__tp_new_eof(pp->ctx, like); }

static tp_hideset *new_hideset(pp *pp, const char *name, int len) {
    tp_hideset *hs = rk__tp_alloc(pp->ctx, sizeof *hs);
    hs->name = name;
    hs->len = len;
    return hs;
}

static bool hideset_contains(const tp_hideset *hs, const char *s, int len) {
    for (; hs; hs = hs->next)
        if (hs->len == len && memcmp(hs->name, s, (size_t)len) == 0) return true;
    return false;
}

static tp_hideset *hideset_union(pp *pp, tp_hideset *a, tp_hideset *b) {
    tp_hideset head = {0}, *cur = &head;
    for (; a; a = a->next) cur = cur->next = new_hideset(pp, a->name, a->len);
    cur->next = b;
    return head.next;
}

static tp_hideset *hideset_intersection(pp *pp, tp_hideset *a, tp_hideset *b) {
    tp_hideset head = {0}, *cur = &head;
    for (; a; a = a->next)
        if (hideset_contains(b, a->name, a->len)) cur = cur->next = new_hideset(pp, a->name, a->len);
    return head.next;
}

static tp_token *add_hideset(pp *pp, tp_token *tok, tp_hideset *hs) {
    tp_token head = {0}, *cur = &head;
    for (; tok; tok = tok->next) {
        tp_token *t = copy_token(pp, tok);
        t->hideset = hideset_union(pp, t->hideset, hs);
        cur = cur->next = t;
    }
    return head.next;
}

/* Appends tok1 (without its EOF) before tok2. */
static tp_token *append(pp *pp, tp_token *tok1, tp_token *tok2) {
    if (tok1->kind == TK_EOF) return tok2;
    tp_token head = {0}, *cur = &head;
    for (; tok1->kind != TK_EOF; tok1 = tok1->next) cur = cur->next = copy_token(pp, tok1);
    cur->next = tok2;
    return head.next;
}

/* A directive starts with # at the beginning of a line of the source; a #
 * that a macro expansion produced (it has a hide set) never does. */
static bool is_hash(const tp_token *tok) { return tok->at_bol && !tok->hideset && rk__tp_equal(tok, "#"); }

/* Skips to the end of the directive's line, warning about extra tokens. */
static tp_token *skip_line(pp *pp, tp_token *tok) {
    if (tok->at_bol) return tok;
    rk__tp_warn(pp->ctx, tok, "extra tokens after the preprocessing directive");
    while (!tok->at_bol) tok = tok->next;
    return tok;
}

/* Copies the rest of the line into a new list ending with EOF. */
static tp_token *copy_line(pp *pp, tp_token **rest, tp_token *tok) {
    tp_token head = {0}, *cur = &head;
    for (; !tok->at_bol; tok = tok->next) cur = cur->next = copy_token(pp, tok);
    cur->next = new_eof(pp, tok);
    *rest = tok;
    return head.next;
}

/* Places a token produced by an expansion where the macro was used. */
static void relocate(tp_token *t, const tp_token *origin) {
    t->file = origin->file;
    t->line = origin->line;
    t->col = origin->col;
    t->line_start = origin->line_start;
}

/* Tokenizes text as a fragment of the file `at` is in (for # and ##). */
static tp_token *tokenize_fragment(pp *pp, const char *text, const tp_token *at) {
    tp_file *f = rk__tp_new_file(pp->ctx, at->file ? at->file->name : "<fragment>", NULL, text, strlen(text), true);
    tp_token *tok = rk__tp_tokenize(pp->ctx, f);
    for (tp_token *t = tok; t; t = t->next) relocate(t, at);
    return tok;
}

/* ---- macros ------------------------------------------------------------------ */

static macro *find_macro(pp *pp, const tp_token *tok) {
    if (tok->kind != TK_IDENT) return NULL;
    return rk__tp_map_get(&pp->macros, tok->loc, tok->len);
}

static macro *add_macro(pp *pp, tp_token *name, bool objlike, tp_token *body) {
    macro *m = rk__tp_alloc(pp->ctx, sizeof *m);
    m->name = name;
    m->objlike = objlike;
    m->body = body;
    rk__tp_map_put(pp->ctx, &pp->macros, name->loc, name->len, m);
    return m;
}

static macro_param *read_macro_params(pp *pp, tp_token **rest, tp_token *tok, macro *m) {
    macro_param head = {0}, *cur = &head;
    while (!rk__tp_equal(tok, ")")) {
        if (cur != &head) {
            if (!rk__tp_equal(tok, ",")) rk__tp_syntax_error(pp->ctx, tok, "expected ',' or ')' in macro parameter list");
            tok = tok->next;
        }
        if (rk__tp_equal(tok, "...")) {
            m->variadic = true;
            m->va_name = "__VA_ARGS__";
            tok = tok->next;
            if (!rk__tp_equal(tok, ")")) rk__tp_syntax_error(pp->ctx, tok, "expected ')' after '...'");
            break;
        }
        if (tok->kind != TK_IDENT || tok->at_bol)
            rk__tp_syntax_error(pp->ctx, tok, "expected a parameter name in the macro parameter list");
        if (rk__tp_equal(tok->next, "...")) {
            m->variadic = true;
            m->va_name = rk__tp_strndup(pp->ctx, tok->loc, (size_t)tok->len);
            tok = tok->next->next;
            if (!rk__tp_equal(tok, ")")) rk__tp_syntax_error(pp->ctx, tok, "expected ')' after '...'");
            break;
        }
        for (macro_param *p = head.next; p; p = p->next)
            if (p->name->len == tok->len && memcmp(p->name->loc, tok->loc, (size_t)tok->len) == 0)
                rk__tp_error(pp->ctx, tok, "duplicate macro parameter '%.*s'", tok->len, tok->loc);
        cur = cur->next = rk__tp_alloc(pp->ctx, sizeof(macro_param));
        cur->name = tok;
        tok = tok->next;
        if (tok->at_bol) rk__tp_syntax_error(pp->ctx, tok, "missing ')' in the macro parameter list");
    }
    *rest = tok->next;
    return head.next;
}

static void read_macro_definition(pp *pp, tp_token **rest, tp_token *tok) {
    if (tok->kind != TK_IDENT || tok->at_bol) rk__tp_syntax_error(pp->ctx, tok, "macro name must be an identifier");
    tp_token *name = tok;
    if (rk__tp_equal(name, "defined")) rk__tp_error(pp->ctx, name, "'defined' cannot be used as a macro name");
    tok = tok->next;
    if (!tok->at_bol && !tok->has_space && rk__tp_equal(tok, "(")) {
        macro m0 = {0};
        macro_param *params = read_macro_params(pp, &tok, tok->next, &m0);
        macro *m = add_macro(pp, name, false, copy_line(pp, rest, tok));
        m->params = params;
        m->variadic = m0.variadic;
        m->va_name = m0.va_name;
        if (m->body->kind != TK_EOF && rk__tp_equal(m->body, "##"))
            rk__tp_error(pp->ctx, m->body, "'##' cannot appear at either end of a macro expansion");
    } else {
        add_macro(pp, name, true, copy_line(pp, rest, tok));
    }
}

static macro_arg *read_one_arg(pp *pp, tp_token **rest, tp_token *tok, bool read_rest, const tp_token *start) {
    tp_token head = {0}, *cur = &head;
    int level = 0;
    for (;;) {
        if (level == 0 && rk__tp_equal(tok, ")")) break;
        if (level == 0 && !read_rest && rk__tp_equal(tok, ",")) break;
        if (tok->kind == TK_EOF) rk__tp_syntax_error(pp->ctx, start, "unterminated argument list invoking macro '%.*s'", start->len, start->loc);
        if (tok->kind == TK_INCLUDE_END) {
            tok = tok->next; /* a macro call may not span files, but do not crash if it does */
            continue;
        }
        if (rk__tp_equal(tok, "("))
            level++;
        else if (rk__tp_equal(tok, ")"))
            level--;
        cur = cur->next = copy_token(pp, tok);
        tok = tok->next;
    }
    cur->next = new_eof(pp, tok);
    macro_arg *arg = rk__tp_alloc(pp->ctx, sizeof *arg);
    arg->tok = head.next;
    *rest = tok;
    return arg;
}

static macro_arg *read_macro_args(pp *pp, tp_token **rest, tp_token *tok, macro *m) {
    tp_token *start = tok;
    tok = tok->next->next; /* the name and '(' */
    macro_arg head = {0}, *cur = &head;
    macro_param *p = m->params;
    for (; p; p = p->next) {
        if (cur != &head) {
            if (!rk__tp_equal(tok, ","))
                rk__tp_syntax_error(pp->ctx, start, "too few arguments to macro '%.*s'", start->len, start->loc);
            tok = tok->next;
        }
        cur = cur->next = read_one_arg(pp, &tok, tok, false, start);
        cur->name = p->name;
    }
    if (m->variadic) {
        macro_arg *arg;
        if (rk__tp_equal(tok, ")")) {
            arg = rk__tp_alloc(pp->ctx, sizeof *arg);
            arg->tok = new_eof(pp, tok);
        } else {
            if (m->params) {
                if (!rk__tp_equal(tok, ","))
                    rk__tp_syntax_error(pp->ctx, start, "too few arguments to macro '%.*s'", start->len, start->loc);
                tok = tok->next;
            }
            arg = read_one_arg(pp, &tok, tok, true, start);
        }
        arg->is_va = true;
        cur = cur->next = arg;
    } else if (!rk__tp_equal(tok, ")")) {
        rk__tp_syntax_error(pp->ctx, start, "too many arguments to macro '%.*s'", start->len, start->loc);
    }
    *rest = tok; /* the closing ')' */
    return head.next;
}

static macro_arg *find_arg(macro *m, macro_arg *args, const tp_token *tok) {
    for (macro_arg *a = args; a; a = a->next) {
        if (a->is_va) {
            size_t n = strlen(m->va_name);
            if ((size_t)tok->len == n && memcmp(tok->loc, m->va_name, n) == 0) return a;
        } else if (a->name->len == tok->len && memcmp(a->name->loc, tok->loc, (size_t)tok->len) == 0) {
            return a;
        }
    }
    return NULL;
}

/* The spelling of a token list, spaces where the source had them. */
static char *join_tokens(pp *pp, tp_token *tok, tp_token *end) {
    tp_buf b;
    rk__tp_buf_init(&b, pp->ctx);
    for (tp_token *t = tok; t && t != end && t->kind != TK_EOF; t = t->next) {
        if (t != tok && t->has_space) rk__tp_buf_puts(&b, " ");
        rk__tp_buf_putn(&b, t->loc, (size_t)t->len);
    }
    return b.data;
}

static tp_token *stringize(pp *pp, const tp_token *hash, tp_token *arg) {
    char *s = join_tokens(pp, arg, NULL);
    tp_buf b;
    rk__tp_buf_init(&b, pp->ctx);
    rk__tp_buf_puts(&b, "\"");
    for (const char *p = s; *p; p++) {
        if (*p == '\\' || *p == '"') rk__tp_buf_puts(&b, "\\");
        if (*p == '\n') {
            rk__tp_buf_puts(&b, "\\n");
            continue;
        }
        rk__tp_buf_putn(&b, p, 1);
    }
    rk__tp_buf_puts(&b, "\"");
    return tokenize_fragment(pp, b.data, hash);
}

static tp_token *paste(pp *pp, tp_token *lhs, tp_token *rhs) {
    char *text = rk__tp_format(pp->ctx, "%.*s%.*s", lhs->len, lhs->loc, rhs->len, rhs->loc);
    tp_token *tok = tokenize_fragment(pp, text, lhs);
    if (tok->kind == TK_EOF || tok->next->kind != TK_EOF) {
        rk__tp_error(pp->ctx, lhs, "pasting \"%.*s\" and \"%.*s\" does not give a valid token", lhs->len, lhs->loc,
                     rhs->len, rhs->loc);
        return copy_token(pp, lhs);
    }
    tok->has_space = lhs->has_space;
    tok->hideset = lhs->hideset;
    return tok;
}

/* A fully macro-expanded copy of an argument. */
static tp_token *expand_arg(pp *pp, macro_arg *arg) {
    tp_token *copy = append(pp, arg->tok, new_eof(pp, arg->tok));
    pp->in_arg++;
    tp_token *t = preprocess2(pp, copy);
    pp->in_arg--;
    return t;
}

static tp_token *body_token(pp *pp, const tp_token *tok, const tp_token *origin) {
    tp_token *t = copy_token(pp, tok);
    relocate(t, origin);
    return t;
}

static tp_token *substitute(pp *pp, macro *m, tp_token *tok, macro_arg *args, const tp_token *origin) {
    tp_token head = {0}, *cur = &head;
    while (tok->kind != TK_EOF) {
        if (rk__tp_equal(tok, "#") && !m->objlike) {
            macro_arg *arg = find_arg(m, args, tok->next);
            if (!arg) {
                rk__tp_error(pp->ctx, tok, "'#' is not followed by a macro parameter");
                tok = tok->next;
                continue;
            }
            cur = cur->next = stringize(pp, origin, arg->tok);
            tok = tok->next->next;
            continue;
        }
        if (rk__tp_equal(tok, "##")) {
            if (cur == &head || tok->next->kind == TK_EOF) {
                rk__tp_error(pp->ctx, tok, "'##' cannot appear at either end of a macro expansion");
                tok = tok->next;
                continue;
            }
            macro_arg *arg = find_arg(m, args, tok->next);
            if (arg) {
                if (arg->tok->kind != TK_EOF) {
                    *cur = *paste(pp, cur, arg->tok);
                    for (tp_token *t = arg->tok->next; t->kind != TK_EOF; t = t->next) cur = cur->next = copy_token(pp, t);
                }
                tok = tok->next->next;
                continue;
            }
            tp_token *next = cur->next;
            *cur = *paste(pp, cur, tok->next);
            relocate(cur, origin);
            cur->next = next;
            tok = tok->next->next;
            continue;
        }
        macro_arg *arg = find_arg(m, args, tok);
        if (arg && rk__tp_equal(tok->next, "##")) {
            tp_token *rhs = tok->next->next;
            if (arg->tok->kind == TK_EOF) {
                macro_arg *arg2 = find_arg(m, args, rhs);
                if (arg2) {
                    for (tp_token *t = arg2->tok; t->kind != TK_EOF; t = t->next) cur = cur->next = copy_token(pp, t);
                } else if (rhs->kind != TK_EOF) {
                    cur = cur->next = body_token(pp, rhs, origin);
                }
                tok = rhs->kind == TK_EOF ? rhs : rhs->next;
                continue;
            }
            for (tp_token *t = arg->tok; t->kind != TK_EOF; t = t->next) cur = cur->next = copy_token(pp, t);
            tok = tok->next;
            continue;
        }
        if (arg) {
            tp_token *t = expand_arg(pp, arg);
            if (t->kind != TK_EOF) t->has_space = tok->has_space;
            for (; t->kind != TK_EOF; t = t->next) cur = cur->next = copy_token(pp, t);
            tok = tok->next;
            continue;
        }
        cur = cur->next = body_token(pp, tok, origin);
        tok = tok->next;
    }
    cur->next = tok;
    return head.next;
}

static tp_token *expand_builtin(pp *pp, macro *m, tp_token *tok) {
    char *text;
    if (m->builtin == MB_FILE)
        text = rk__tp_format(pp->ctx, "\"%s\"", tok->file ? tok->file->name : "");
    else
        text = rk__tp_format(pp->ctx, "%d", tok->line);
    tp_token *t = tokenize_fragment(pp, text, tok);
    t->at_bol = tok->at_bol;
    t->has_space = tok->has_space;
    return t;
}

/* If tok is a macro to expand, expands it in place and returns true. */
static bool expand_macro(pp *pp, tp_token **rest, tp_token *tok) {
    if (hideset_contains(tok->hideset, tok->loc, tok->len)) return false;
    macro *m = find_macro(pp, tok);
    if (!m) return false;
    if (m->builtin) {
        tp_token *t = expand_builtin(pp, m, tok);
        t->next = tok->next;
        *rest = t;
        return true;
    }
    if (m->objlike) {
        tp_hideset *hs = hideset_union(pp, tok->hideset, new_hideset(pp, m->name->loc, m->name->len));
        tp_token *body = add_hideset(pp, m->body, hs);
        for (tp_token *t = body; t->kind != TK_EOF; t = t->next) relocate(t, tok);
        *rest = append(pp, body, tok->next);
        if ((*rest) != tok->next) {
            (*rest)->at_bol = tok->at_bol;
            (*rest)->has_space = tok->has_space;
        }
        return true;
    }
    /* A function-like macro name without '(' is an ordinary identifier. */
    if (!rk__tp_equal(tok->next, "(")) return false;
    if (++pp->expand_depth > TP_MAX_NESTING) {
        rk__tp_error(pp->ctx, tok, "macro invocations nested too deeply");
        pp->ctx->fatal_status = RK_PARSE_ERROR;
        rk__tp_fatal(pp->ctx);
    }
    tp_token *macro_tok = tok;
    macro_arg *args = read_macro_args(pp, &tok, tok, m);
    tp_token *rparen = tok;
    tp_hideset *hs = hideset_intersection(pp, macro_tok->hideset, rparen->hideset);
    hs = hideset_union(pp, hs, new_hideset(pp, m->name->loc, m->name->len));
    tp_token *body = substitute(pp, m, m->body, args, macro_tok);
    body = add_hideset(pp, body, hs);
    *rest = append(pp, body, rparen->next);
    if (*rest != rparen->next) {
        (*rest)->at_bol = macro_tok->at_bol;
        (*rest)->has_space = macro_tok->has_space;
    }
    pp->expand_depth--;
    return true;
}

/* ---- #include -------------------------------------------------------------- */

static tp_token *include_file(pp *pp, tp_token *tok, tp_file *file, const tp_token *directive) {
    if (file->pragma_once && file->included) return tok;
    if (pp->include_depth >= TP_MAX_INCLUDE_DEPTH) {
        rk__tp_error(pp->ctx, directive, "#include nested more than %d levels deep", TP_MAX_INCLUDE_DEPTH);
        return tok;
    }
    file->included = true;
    pp->include_depth++;
    tp_token *body = rk__tp_tokenize(pp->ctx, file);
    tp_token *end = rk__tp_alloc(pp->ctx, sizeof *end);
    *end = *directive;
    end->kind = TK_INCLUDE_END;
    end->at_bol = true;
    end->next = tok;
    end->hideset = NULL;
    end->pp_data = pp->conds; /* the #if stack at entry */
    tp_token *t = body;
    if (t->kind == TK_EOF) return end;
    while (t->next->kind != TK_EOF) t = t->next;
    t->next = end;
    return body;
}

static char *read_include_name(pp *pp, tp_token **rest, tp_token *tok, bool *angled) {
    if (tok->kind == TK_STR && !tok->at_bol) {
        *angled = false;
        *rest = skip_line(pp, tok->next);
        /* The raw spelling, not the escape-decoded one: "a\b" names a\b. */
        return rk__tp_strndup(pp->ctx, tok->loc + 1, (size_t)(tok->len >= 2 ? tok->len - 2 : 0));
    }
    if (rk__tp_equal(tok, "<") && !tok->at_bol) {
        tp_token *start = tok;
        for (; !rk__tp_equal(tok, ">"); tok = tok->next)
            if (tok->at_bol || tok->kind == TK_EOF) rk__tp_syntax_error(pp->ctx, start, "expected '>' to close the #include name");
        *angled = true;
        *rest = skip_line(pp, tok->next);
        char *s = join_tokens(pp, start->next, tok);
        return s;
    }
    if (tok->kind == TK_IDENT && !tok->at_bol) {
        /* #include MACRO: expand the line, then try again. */
        tp_token *line = preprocess2(pp, copy_line(pp, rest, tok));
        tp_token *dummy;
        if (line->kind == TK_STR || rk__tp_equal(line, "<")) {
            line->at_bol = false;
            tp_token *t = line;
            while (t->kind != TK_EOF) t = t->next;
            t->at_bol = true;
            return read_include_name(pp, &dummy, line, angled);
        }
    }
    rk__tp_syntax_error(pp->ctx, tok, "expected \"FILENAME\" or <FILENAME> after #include");
}

/* ---- conditionals -------------------------------------------------------- */

static void push_cond(pp *pp, tp_token *tok, bool included) {
    cond_incl *c = rk__tp_alloc(pp->ctx, sizeof *c);
    c->next = pp->conds;
    c->ctx = IN_THEN;
    c->tok = tok;
    c->included = included;
    pp->conds = c;
}

/* Skips a group of lines until the #elif/#else/#endif that ends it. */
static tp_token *skip_cond_incl(pp *pp, tp_token *tok) {
    (void)pp;
    int depth = 0;
    while (tok->kind != TK_EOF && tok->kind != TK_INCLUDE_END) {
        if (is_hash(tok)) {
            tp_token *d = tok->next;
            if (rk__tp_equal(d, "if") || rk__tp_equal(d, "ifdef") || rk__tp_equal(d, "ifndef")) {
                depth++;
            } else if (rk__tp_equal(d, "endif")) {
                if (depth == 0) return tok;
                depth--;
            } else if (depth == 0 && (rk__tp_equal(d, "elif") || rk__tp_equal(d, "else"))) {
                return tok;
            }
        }
        tok = tok->next;
    }
    return tok;
}

/* Reads and evaluates a #if/#elif expression. */
static bool eval_cond(pp *pp, tp_token **rest, tp_token *directive, tp_token *tok) {
    tp_token *line = copy_line(pp, rest, tok);
    if (line->kind == TK_EOF) {
        rk__tp_error(pp->ctx, directive, "#%.*s with no expression", directive->len, directive->loc);
        return false;
    }
    /* `defined` is resolved before expansion. */
    tp_token head = {0}, *cur = &head;
    for (tp_token *t = line; t->kind != TK_EOF;) {
        if (rk__tp_equal(t, "defined")) {
            tp_token *start = t;
            t = t->next;
            bool paren = rk__tp_equal(t, "(");
            if (paren) t = t->next;
            if (t->kind != TK_IDENT) {
                rk__tp_error(pp->ctx, start, "'defined' must be followed by a macro name");
                return false;
            }
            tp_token *num = copy_token(pp, start);
            num->kind = TK_NUM;
            num->ty = &rk__tp_ty_long;
            num->ival = find_macro(pp, t) != NULL;
            t = t->next;
            if (paren) {
                if (!rk__tp_equal(t, ")")) {
                    rk__tp_error(pp->ctx, start, "expected ')' after 'defined(NAME'");
                    return false;
                }
                t = t->next;
            }
            cur = cur->next = num;
            continue;
        }
        cur = cur->next = t;
        t = t->next;
    }
    cur->next = new_eof(pp, line);
    tp_token *expr = preprocess2(pp, head.next);
    for (tp_token *t = expr; t->kind != TK_EOF; t = t->next) {
        if (t->kind == TK_IDENT) {
            /* An identifier left after expansion is 0, as in C. */
            t->kind = TK_NUM;
            t->ty = &rk__tp_ty_long;
            t->ival = 0;
        } else if (t->kind == TK_PP_NUM && !rk__tp_convert_number(pp->ctx, t)) {
            rk__tp_error(pp->ctx, t, "invalid number '%.*s' in #%.*s", t->len, t->loc, directive->len, directive->loc);
            return false;
        }
    }
    return rk__tp_pp_eval(pp->ctx, expr, directive) != 0;
}

/* ---- the main loop --------------------------------------------------------- */

static void check_cond_stack_at_file_end(pp *pp, cond_incl *entry) {
    while (pp->conds && pp->conds != entry) {
        rk__tp_error(pp->ctx, pp->conds->tok, "unterminated conditional directive");
        pp->conds = pp->conds->next;
    }
}

static tp_token *directive(pp *pp, tp_token *hash, tp_token **out_cur);

static tp_token *preprocess2(pp *pp, tp_token *tok) {
    tp_token head = {0}, *cur = &head;
    while (tok->kind != TK_EOF) {
        if (tok->kind == TK_INCLUDE_END) {
            check_cond_stack_at_file_end(pp, tok->pp_data);
            pp->include_depth--;
            tok = tok->next;
            continue;
        }
        if (expand_macro(pp, &tok, tok)) continue;
        if (!is_hash(tok)) {
            cur = cur->next = tok;
            tok = tok->next;
            continue;
        }
        if (pp->in_arg) {
            /* Undefined in C; refuse rather than guess. */
            rk__tp_error(pp->ctx, tok, "preprocessing directives inside macro arguments are not supported");
            do
                tok = tok->next;
            while (!tok->at_bol);
            continue;
        }
        tok = directive(pp, tok, &cur);
    }
    cur->next = tok;
    return head.next;
}

/* Runs a directive in a fresh recovery scope: a syntax error skips the rest
 * of the line. */
static tp_token *directive_body(pp *pp, tp_token *hash);

static tp_token *directive(pp *pp, tp_token *hash, tp_token **out_cur) {
    (void)out_cur;
    jmp_buf here;
    jmp_buf *outer = pp->ctx->recover;
    int depth = pp->expand_depth, in_arg = pp->in_arg;
    pp->ctx->recover = &here;
    if (setjmp(here) == 0) {
        tp_token *result = directive_body(pp, hash);
        pp->ctx->recover = outer;
        return result;
    }
    {
        pp->expand_depth = depth;
        pp->in_arg = in_arg;
        tp_token *name = hash->next;
        tp_token *result = name;
        while (!result->at_bol) result = result->next;
        /* Keep #if nesting intact so one bad condition is one error. */
        if (rk__tp_equal(name, "if") || rk__tp_equal(name, "ifdef") || rk__tp_equal(name, "ifndef")) {
            push_cond(pp, name, false);
            result = skip_cond_incl(pp, result);
        } else if (rk__tp_equal(name, "elif") && pp->conds) {
            pp->conds->included = true;
            result = skip_cond_incl(pp, result);
        }
        pp->ctx->recover = outer;
        return result;
    }
}

static tp_token *directive_body(pp *pp, tp_token *hash) {
    tp_token *tok = hash->next;
    if (tok->at_bol) return tok; /* null directive */
    tp_ctx *ctx = pp->ctx;

    if (rk__tp_equal(tok, "include")) {
        bool angled = false;
        tp_token *rest;
        char *name = read_include_name(pp, &rest, tok->next, &angled);
        if (!*name) {
            rk__tp_error(ctx, tok, "empty file name in #include");
            return rest;
        }
        tp_file *f = rk__tp_find_include(ctx, name, angled, tok->file, tok);
        if (!f) {
            const char *why = rk__tp_unavailable_header_reason(name);
            if (why)
                rk__tp_error(ctx, tok, "'%s' file not found: %s", name, why);
            else
                rk__tp_error(ctx, tok, "'%s' file not found", name);
            return rest;
        }
        return include_file(pp, rest, f, tok);
    }
    if (rk__tp_equal(tok, "define")) {
        tp_token *rest;
        read_macro_definition(pp, &rest, tok->next);
        return rest;
    }
    if (rk__tp_equal(tok, "undef")) {
        tok = tok->next;
        if (tok->kind != TK_IDENT || tok->at_bol) rk__tp_syntax_error(ctx, tok, "macro name must be an identifier");
        rk__tp_map_delete(&pp->macros, tok->loc, tok->len);
        return skip_line(pp, tok->next);
    }
    if (rk__tp_equal(tok, "if")) {
        tp_token *rest;
        bool val = eval_cond(pp, &rest, tok, tok->next);
        push_cond(pp, tok, val);
        return val ? rest : skip_cond_incl(pp, rest);
    }
    if (rk__tp_equal(tok, "ifdef") || rk__tp_equal(tok, "ifndef")) {
        bool want = rk__tp_equal(tok, "ifdef");
        tp_token *name = tok->next;
        if (name->kind != TK_IDENT || name->at_bol) {
            push_cond(pp, tok, false);
            rk__tp_error(ctx, tok, "#%.*s needs a macro name", tok->len, tok->loc);
            while (!name->at_bol) name = name->next;
            return skip_cond_incl(pp, name);
        }
        bool defined = find_macro(pp, name) != NULL;
        push_cond(pp, tok, defined == want);
        tp_token *rest = skip_line(pp, name->next);
        return defined == want ? rest : skip_cond_incl(pp, rest);
    }
    if (rk__tp_equal(tok, "elif")) {
        if (!pp->conds || pp->conds->ctx == IN_ELSE) {
            rk__tp_error(ctx, tok, pp->conds ? "#elif after #else" : "#elif without #if");
            tp_token *t = tok;
            while (!t->next->at_bol) t = t->next;
            return t->next;
        }
        pp->conds->ctx = IN_ELIF;
        if (pp->conds->included) {
            tp_token *t = tok->next;
            while (!t->at_bol) t = t->next;
            return skip_cond_incl(pp, t);
        }
        tp_token *rest;
        bool val = eval_cond(pp, &rest, tok, tok->next);
        pp->conds->included = val;
        return val ? rest : skip_cond_incl(pp, rest);
    }
    if (rk__tp_equal(tok, "else")) {
        if (!pp->conds || pp->conds->ctx == IN_ELSE) {
            rk__tp_error(ctx, tok, pp->conds ? "#else after #else" : "#else without #if");
            return skip_line(pp, tok->next);
        }
        pp->conds->ctx = IN_ELSE;
        tp_token *rest = skip_line(pp, tok->next);
        if (pp->conds->included) return skip_cond_incl(pp, rest);
        pp->conds->included = true;
        return rest;
    }
    if (rk__tp_equal(tok, "endif")) {
        if (!pp->conds) {
            rk__tp_error(ctx, tok, "#endif without #if");
        } else {
            pp->conds = pp->conds->next;
        }
        return skip_line(pp, tok->next);
    }
    if (rk__tp_equal(tok, "error") || rk__tp_equal(tok, "warning")) {
        bool is_error = rk__tp_equal(tok, "error");
        tp_token *rest;
        tp_token *line = copy_line(pp, &rest, tok->next);
        char *text = join_tokens(pp, line, NULL);
        if (is_error)
            rk__tp_error(ctx, tok, "#error %s", text);
        else
            rk__tp_warn(ctx, tok, "#warning %s", text);
        return rest;
    }
    if (rk__tp_equal(tok, "pragma")) {
        tp_token *t = tok->next;
        if (rk__tp_equal(t, "once") && !t->at_bol) {
            if (tok->file) tok->file->pragma_once = true;
            return skip_line(pp, t->next);
        }
        if (!t->at_bol && !(rk__tp_equal(t, "unroll") || rk__tp_equal(t, "GCC") || rk__tp_equal(t, "clang") ||
                            rk__tp_equal(t, "nv_diag_suppress")))
            rk__tp_warn(ctx, t, "ignoring #pragma %.*s", t->len, t->loc);
        while (!t->at_bol) t = t->next;
        return t;
    }
    if (rk__tp_equal(tok, "line")) {
        rk__tp_warn(ctx, tok, "ignoring #line");
        while (!tok->at_bol) tok = tok->next;
        return tok;
    }
    if (tok->kind == TK_PP_NUM) { /* GNU line marker "# 12 file" */
        while (!tok->at_bol) tok = tok->next;
        return tok;
    }
    rk__tp_error(ctx, tok, "invalid preprocessing directive #%.*s", tok->len, tok->loc);
    while (!tok->at_bol) tok = tok->next;
    return tok;
}

/* ---- entry point ------------------------------------------------------------ */

static void define_builtin(pp *pp, const char *name, macro_builtin kind) {
    tp_token *t = tokenize_fragment(pp, name, &(tp_token){0});
    macro *m = add_macro(pp, t, true, new_eof(pp, t));
    m->builtin = kind;
}

tp_token *rk__tp_preprocess(tp_ctx *ctx, tp_token *tok) {
    pp p = {.ctx = ctx};
    define_builtin(&p, "__FILE__", MB_FILE);
    define_builtin(&p, "__LINE__", MB_LINE);

    /* Predefined macros and -D definitions come first, as a small file. */
    tp_buf b;
    rk__tp_buf_init(&b, ctx);
    rk__tp_buf_puts(&b,
                    "#define __STDC__ 1\n#define __STDC_VERSION__ 201112L\n#define __STDC_HOSTED__ 0\n"
                    "#define __RK_TRANSPILER__ 1\n");
    const rk_transpile_desc *d = ctx->desc;
    for (size_t i = 0; i < d->define_count; i++) {
        const char *def = d->defines[i];
        if (!def) continue;
        const char *eq = strchr(def, '=');
        if (eq)
            rk__tp_buf_printf(&b, "#define %.*s %s\n", (int)(eq - def), def, eq + 1);
        else
            rk__tp_buf_printf(&b, "#define %s 1\n", def);
    }
    tp_file *pre = rk__tp_new_file(ctx, "<command line>", NULL, b.data, b.len, true);
    tp_token *pre_tok = rk__tp_tokenize(ctx, pre);
    tp_token *t = pre_tok;
    if (t->kind == TK_EOF) {
        pre_tok = tok;
    } else {
        while (t->next->kind != TK_EOF) t = t->next;
        t->next = tok;
    }

    /* Syntax errors outside any directive's recovery scope end the run. */
    tp_token *out = preprocess2(&p, pre_tok);
    for (cond_incl *c = p.conds; c; c = c->next) rk__tp_error(ctx, c->tok, "unterminated conditional directive");
    return out;
}
