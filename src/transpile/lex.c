/* The tokenizer: text -> tokens with file, line and column. Numbers stay
 * preprocessing numbers until rk__tp_convert_literals runs after the
 * preprocessor; string and character literals are decoded here. */
#include <ctype.h>
#include <errno.h>
#include <locale.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#ifdef __APPLE__
#include <xlocale.h>
#endif

#include "tp.h"

bool rk__tp_equal(const tp_token *tok, const char *s) {
    /* The first character rules out almost every mismatch without strlen. */
    if (tok->len == 0 || tok->loc[0] != s[0]) return false;
    size_t n = strlen(s);
    return (size_t)tok->len == n && memcmp(tok->loc, s, n) == 0 && tok->kind != TK_STR;
}

/* Sorted (strcmp order) for bsearch. */
static const char *const keywords[] = {
    "_Alignas", "_Alignof", "_Atomic", "_Bool", "_Complex", "_Generic", "_Imaginary", "_Noreturn",
    "_Static_assert", "_Thread_local", "__asm__", "__attribute__", "__builtin_offsetof", "__extension__",
    "__inline", "__inline__", "__restrict", "__restrict__", "__rk_block_size", "__rk_device", "__rk_grid_pos", "__rk_handler",
    "__rk_kernel", "__rk_shared", "__typeof__", "asm", "auto", "break", "case", "char", "const", "continue",
    "default", "do", "double", "else", "enum", "extern", "float", "for", "goto", "if", "inline", "int",
    "long", "register", "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch",
    "typedef", "typeof", "union", "unsigned", "void", "volatile", "while",
};

typedef struct span {
    const char *s;
    int len;
} span;

static int compare_keyword(const void *key, const void *elem) {
    const span *k = key;
    const char *w = *(const char *const *)elem;
    int r = strncmp(k->s, w, (size_t)k->len);
    if (r) return r;
    return w[k->len] ? -1 : 0; /* the key is a prefix of the keyword: it sorts first */
}

bool rk__tp_is_keyword(const char *s, int len) {
    span key = {s, len};
    return bsearch(&key, keywords, sizeof keywords / sizeof keywords[0], sizeof keywords[0], compare_keyword) != NULL;
}

typedef struct lexer {
    tp_ctx *ctx;
    tp_file *file;
    const char *p;
    const char *line_start;
    int line;
    bool at_bol, has_space;
    const char *pending; /* error for the token being read */
    tp_token head, *cur;
} lexer;

static void defer_error(lexer *lx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void defer_error(lexer *lx, const char *fmt, ...) {
    if (lx->pending) return;
    va_list ap;
    va_start(ap, fmt);
    lx->pending = rk__tp_vformat(lx->ctx, fmt, ap);
    va_end(ap);
}

static tp_token *new_token(lexer *lx, tp_token_kind kind, const char *start, const char *end) {
    tp_token *t = rk__tp_alloc(lx->ctx, sizeof *t);
    t->kind = kind;
    t->loc = start;
    t->len = (int)(end - start);
    t->file = lx->file;
    t->line = lx->line;
    t->col = (int)(start - lx->line_start) + 1;
    t->line_start = lx->line_start;
    t->at_bol = lx->at_bol;
    t->has_space = lx->has_space;
    t->lex_error = lx->pending;
    lx->pending = NULL;
    lx->at_bol = lx->has_space = false;
    lx->cur = lx->cur->next = t;
    return t;
}

/* A token-shaped position for diagnostics raised by the lexer itself. */
static tp_token *position(lexer *lx, const char *at) {
    tp_token *t = rk__tp_alloc(lx->ctx, sizeof *t);
    t->loc = at;
    t->len = 1;
    t->file = lx->file;
    t->line = lx->line;
    t->col = (int)(at - lx->line_start) + 1;
    t->line_start = lx->line_start;
    return t;
}

static void newline(lexer *lx, const char *after) {
    lx->line++;
    lx->line_start = after;
    lx->at_bol = true;
    lx->has_space = false;
}

static int read_punct(const char *p) {
    static const char *const long_puncts[] = {
        "<<=", ">>=", "...", "==", "!=", "<=", ">=", "->", "+=", "-=", "*=", "/=", "++", "--",
        "%=", "&=", "|=", "^=", "&&", "||", "<<", ">>", "##",
    };
    if (!*p || !strchr("!%&()*+,-./:;<=>?[]^{|}~#", *p)) return 0;
    if (strchr("(),;?[]{}~:", *p)) return 1; /* never the start of a longer one */
    for (size_t i = 0; i < sizeof long_puncts / sizeof long_puncts[0]; i++) {
        const char *q = long_puncts[i];
        if (q[0] == p[0] && q[1] == p[1] && (q[2] == '\0' || q[2] == p[2])) return q[2] ? 3 : 2;
    }
    return 1;
}

static int from_hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return c - 'A' + 10;
}

/* Decodes one escape sequence after the backslash at *pp. */
static int read_escape(lexer *lx, const char **pp) {
    const char *p = *pp;
    int c;
    if (*p >= '0' && *p <= '7') {
        c = *p++ - '0';
        for (int i = 0; i < 2 && *p >= '0' && *p <= '7'; i++) c = (c << 3) | (*p++ - '0');
        *pp = p;
        return c;
    }
    if (*p == 'x') {
        p++;
        if (!isxdigit((unsigned char)*p)) {
            defer_error(lx, "\\x used with no following hex digits");
            *pp = p;
            return 0;
        }
        c = 0;
        for (; isxdigit((unsigned char)*p); p++) c = ((c << 4) | from_hex(*p)) & 0xff;
        *pp = p;
        return c;
    }
    *pp = p + 1;
    switch (*p) {
    case 'a': return 7;
    case 'b': return 8;
    case 't': return 9;
    case 'n': return 10;
    case 'v': return 11;
    case 'f': return 12;
    case 'r': return 13;
    case 'e': return 27;
    case '\\': case '\'': case '"': case '?': return *p;
    default:
        defer_error(lx, "unknown escape sequence '\\%c'", isprint((unsigned char)*p) ? *p : '?');
        return *p;
    }
}

/* Scans a quoted literal; returns the end (after the closing quote) or the
 * end of the line when it is unterminated. */
static const char *literal_end(lexer *lx, const char *start, char quote) {
    const char *p = start + 1;
    for (; *p != quote; p++) {
        if (*p == '\n' || *p == '\0') {
            defer_error(lx, "missing terminating %c character", quote);
            return p;
        }
        if (*p == '\\' && p[1] != '\0' && p[1] != '\n') p++;
    }
    return p + 1;
}

static void read_string(lexer *lx, const char *start) {
    const char *end = literal_end(lx, start, '"');
    char *buf = rk__tp_alloc(lx->ctx, (size_t)(end - start) + 1);
    int len = 0;
    const char *stop = end[-1] == '"' && end - 1 > start ? end - 1 : end;
    for (const char *p = start + 1; p < stop;) {
        if (*p == '\\' && p + 1 < stop) {
            p++;
            buf[len++] = (char)read_escape(lx, &p);
        } else {
            buf[len++] = *p++;
        }
    }
    tp_token *t = new_token(lx, TK_STR, start, end);
    t->str = buf;
    t->str_len = len;
    lx->p = end;
}

static void read_char(lexer *lx, const char *start) {
    const char *end = literal_end(lx, start, '\'');
    const char *p = start + 1;
    int c = 0;
    if (p >= end - 1 || *p == '\'') {
        if (end[-1] == '\'') defer_error(lx, "empty character constant");
    } else if (*p == '\\') {
        p++;
        c = read_escape(lx, &p);
    } else {
        c = (unsigned char)*p++;
    }
    if (end[-1] == '\'' && p < end - 1)
        defer_error(lx, "multi-character character constants are not supported");
    tp_token *t = new_token(lx, TK_NUM, start, end);
    t->ty = &rk__tp_ty_int;
    t->ival = (signed char)c; /* plain char is signed on x86-64 */
    lx->p = end;
}

tp_token *rk__tp_tokenize(tp_ctx *ctx, tp_file *file) {
    lexer lx = {.ctx = ctx, .file = file, .p = file->contents, .line_start = file->contents, .line = 1,
                .at_bol = true};
    lx.cur = &lx.head;
    while (*lx.p) {
        const char *p = lx.p;
        if (*p == '\n') {
            lx.p = p + 1;
            newline(&lx, lx.p);
            continue;
        }
        if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\f' || *p == '\v') {
            lx.p++;
            lx.has_space = true;
            continue;
        }
        if (p[0] == '/' && p[1] == '/') {
            while (*lx.p && *lx.p != '\n') lx.p++;
            lx.has_space = true;
            continue;
        }
        if (p[0] == '/' && p[1] == '*') {
            const char *q = p + 2;
            for (;;) {
                if (*q == '\0') {
                    rk__tp_error(ctx, position(&lx, p), "unterminated comment");
                    break;
                }
                if (q[0] == '*' && q[1] == '/') {
                    q += 2;
                    break;
                }
                if (*q == '\n') {
                    /* Keep line numbers, but stay on the comment's logical line. */
                    lx.line++;
                    lx.line_start = q + 1;
                }
                q++;
            }
            lx.p = q;
            lx.has_space = true;
            continue;
        }
        if (isdigit((unsigned char)*p) || (*p == '.' && isdigit((unsigned char)p[1]))) {
            const char *q = p + 1;
            for (;;) {
                if (q[0] && q[1] && strchr("eEpP", q[0]) && strchr("+-", q[1]))
                    q += 2;
                else if (isalnum((unsigned char)*q) || *q == '.' || *q == '_')
                    q++;
                else
                    break;
            }
            new_token(&lx, TK_PP_NUM, p, q);
            lx.p = q;
            continue;
        }
        if (*p == '"') {
            read_string(&lx, p);
            continue;
        }
        if (*p == '\'') {
            read_char(&lx, p);
            continue;
        }
        if ((p[0] == 'L' || p[0] == 'u' || p[0] == 'U') && (p[1] == '"' || p[1] == '\'')) {
            const char *end = literal_end(&lx, p + 1, p[1]);
            lx.pending = NULL;
            defer_error(&lx, "wide and Unicode literals are not supported");
            new_token(&lx, TK_PUNCT, p, end);
            lx.p = end;
            continue;
        }
        if (isalpha((unsigned char)*p) || *p == '_') {
            const char *q = p + 1;
            while (isalnum((unsigned char)*q) || *q == '_') q++;
            new_token(&lx, TK_IDENT, p, q);
            lx.p = q;
            continue;
        }
        int n = read_punct(p);
        if (n) {
            new_token(&lx, TK_PUNCT, p, p + n);
            lx.p = p + n;
            continue;
        }
        if ((unsigned char)*p >= 0x80)
            defer_error(&lx, "non-ASCII characters are only allowed in comments");
        else
            defer_error(&lx, "invalid character '%c' (0x%02x)", isprint((unsigned char)*p) ? *p : '?',
                        (unsigned char)*p);
        const char *q = p + 1;
        while ((unsigned char)*q >= 0x80 && (unsigned char)*q < 0xc0) q++; /* rest of a UTF-8 sequence */
        new_token(&lx, TK_PUNCT, p, q);
        lx.p = q;
    }
    tp_token *eof = new_token(&lx, TK_EOF, lx.p, lx.p);
    eof->at_bol = true;
    return lx.head.next;
}

tp_token *rk__tp_new_eof(tp_ctx *ctx, const tp_token *like) {
    tp_token *t = rk__tp_alloc(ctx, sizeof *t);
    if (like) *t = *like;
    t->kind = TK_EOF;
    t->len = 0;
    t->next = NULL;
    t->at_bol = true; /* every "to the end of the line" loop stops here */
    return t;
}

/* ---- numbers ------------------------------------------------------------- */

static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static void make_c_locale(void) { c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0); }

/* strtod that ignores the process's locale (a decimal comma would break it). */
static double parse_double(const char *s, char **end) {
    pthread_once(&c_locale_once, make_c_locale);
    if (c_locale) return strtod_l(s, end, c_locale);
    return strtod(s, end);
}

static bool convert_int(tp_ctx *ctx, tp_token *tok) {
    const char *p = tok->loc, *end = tok->loc + tok->len;
    int base = 10;
    if (end - p >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && end - p > 2 &&
        isxdigit((unsigned char)p[2])) {
        base = 16;
        p += 2;
    } else if (end - p >= 2 && p[0] == '0' && (p[1] == 'b' || p[1] == 'B') && end - p > 2 &&
               (p[2] == '0' || p[2] == '1')) {
        base = 2;
        p += 2;
    } else if (p[0] == '0') {
        base = 8;
    }
    uint64_t val = 0;
    bool overflow = false;
    const char *digits = p;
    for (; p < end; p++) {
        int d;
        if (isdigit((unsigned char)*p))
            d = *p - '0';
        else if (base == 16 && isxdigit((unsigned char)*p))
            d = from_hex(*p);
        else
            break;
        if (d >= base) return false;
        if (val > (UINT64_MAX - (uint64_t)d) / (uint64_t)base) overflow = true;
        val = val * (uint64_t)base + (uint64_t)d;
    }
    if (p == digits && base != 8) return false;
    bool u = false;
    int l = 0;
    for (; p < end; p++) {
        if ((*p == 'u' || *p == 'U') && !u)
            u = true;
        else if ((*p == 'l' || *p == 'L') && l < 2 && (l == 0 || p[-1] == *p))
            l++;
        else
            return false;
    }
    if (overflow) {
        rk__tp_error(ctx, tok, "integer literal is too large");
        val = 0;
    }
    tp_type *ty;
    if (u) {
        ty = (!l && val <= UINT32_MAX) ? &rk__tp_ty_uint : &rk__tp_ty_ulong;
    } else if (base == 10) {
        if (!l && val <= INT32_MAX)
            ty = &rk__tp_ty_int;
        else if (val <= INT64_MAX)
            ty = &rk__tp_ty_long;
        else {
            rk__tp_warn(ctx, tok, "integer literal is so large that it is unsigned");
            ty = &rk__tp_ty_ulong;
        }
    } else {
        if (!l && val <= INT32_MAX)
            ty = &rk__tp_ty_int;
        else if (!l && val <= UINT32_MAX)
            ty = &rk__tp_ty_uint;
        else if (val <= INT64_MAX)
            ty = &rk__tp_ty_long;
        else
            ty = &rk__tp_ty_ulong;
    }
    tok->kind = TK_NUM;
    tok->ty = ty;
    tok->ival = (int64_t)val;
    return true;
}

bool rk__tp_convert_number(tp_ctx *ctx, tp_token *tok) {
    if (convert_int(ctx, tok)) return true;
    /* A floating constant: check the shape ourselves, then take the value. */
    const char *p = tok->loc, *end = tok->loc + tok->len;
    bool hex = end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
    const char *q = hex ? p + 2 : p;
    int mantissa = 0;
    bool dot = false, exp = false;
    for (; q < end && (hex ? isxdigit((unsigned char)*q) : isdigit((unsigned char)*q)); q++) mantissa++;
    if (q < end && *q == '.') {
        dot = true;
        for (q++; q < end && (hex ? isxdigit((unsigned char)*q) : isdigit((unsigned char)*q)); q++) mantissa++;
    }
    if (!mantissa) return false;
    if (q < end && (hex ? (*q == 'p' || *q == 'P') : (*q == 'e' || *q == 'E'))) {
        exp = true;
        q++;
        if (q < end && (*q == '+' || *q == '-')) q++;
        if (q >= end || !isdigit((unsigned char)*q)) return false;
        while (q < end && isdigit((unsigned char)*q)) q++;
    }
    if (hex && !exp) return false;
    if (!dot && !exp) return false;
    tp_type *ty = &rk__tp_ty_double;
    if (q < end && (*q == 'f' || *q == 'F')) {
        ty = &rk__tp_ty_float;
        q++;
    } else if (q < end && (*q == 'l' || *q == 'L')) {
        rk__tp_error(ctx, tok, "long double is not supported");
        q++;
    }
    if (q != end) return false;
    char *copy = rk__tp_strndup(ctx, tok->loc, (size_t)tok->len);
    errno = 0;
    double v = parse_double(copy, NULL);
    tok->kind = TK_NUM;
    tok->ty = ty;
    tok->fval = ty == &rk__tp_ty_float ? (double)(float)v : v;
    return true;
}

void rk__tp_convert_literals(tp_ctx *ctx, tp_token *tok) {
    for (tp_token *t = tok; t; t = t->next) {
        if (t->lex_error) {
            rk__tp_error(ctx, t, "%s", t->lex_error);
            t->lex_error = NULL;
        }
        if (t->kind == TK_IDENT && rk__tp_is_keyword(t->loc, t->len))
            t->kind = TK_KEYWORD;
        else if (t->kind == TK_PP_NUM && !rk__tp_convert_number(ctx, t)) {
            rk__tp_error(ctx, t, "invalid number '%.*s'", t->len, t->loc);
            t->kind = TK_NUM;
            t->ty = &rk__tp_ty_int;
            t->ival = 0;
        }
    }
}
