/* A light scan of DSL source text (header_extract.h): comments, literals,
 * preprocessor lines and brace depth are tracked, nothing more. The
 * transpiler has checked the source first, so it is well formed. */
#include "header_extract.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

/* The index just past a comment, literal or preprocessor line starting at
 * i, or i when none starts there. */
static size_t skip_lexeme(const char *s, size_t i, bool line_start) {
    if (s[i] == '/' && s[i + 1] == '/') {
        while (s[i] && s[i] != '\n') i++;
        return i;
    }
    if (s[i] == '/' && s[i + 1] == '*') {
        const char *end = strstr(s + i + 2, "*/");
        return end ? (size_t)(end - s) + 2 : strlen(s);
    }
    if (s[i] == '"' || s[i] == '\'') {
        char q = s[i++];
        while (s[i] && s[i] != q) i += s[i] == '\\' && s[i + 1] ? 2 : 1;
        return s[i] ? i + 1 : i;
    }
    if (s[i] == '#' && line_start) {
        while (s[i] && s[i] != '\n') i += s[i] == '\\' && s[i + 1] == '\n' ? 2 : 1;
        return i;
    }
    return i;
}

static bool starts_word(const char *s, const char *word) {
    size_t n = strlen(word);
    return strncmp(s, word, n) == 0 && !isalnum((unsigned char)s[n]) && s[n] != '_';
}

/* Index of the first character of a chunk that is not blank or a comment. */
static size_t chunk_head(const char *s, size_t i, size_t end) {
    while (i < end) {
        if (isspace((unsigned char)s[i])) {
            i++;
            continue;
        }
        size_t j = s[i] == '/' ? skip_lexeme(s, i, false) : i;
        if (j == i) break;
        i = j;
    }
    return i;
}

static bool is_type_declaration(const char *s) {
    return starts_word(s, "typedef") || starts_word(s, "struct") || starts_word(s, "union") || starts_word(s, "enum");
}

static bool is_dsl_include(const char *s, size_t n) {
    return strstr(s, "#include") == s && (memmem(s, n, "ringkernel/dsl.h", 16) || memmem(s, n, "ringkernel/dsl_stencil.h", 24));
}

void header_extract_types(const char *s, FILE *out) {
    size_t i = 0, chunk = 0, depth = 0;
    bool line_start = true, in_function = false;
    char last = 0; /* the last significant character at depth 0 */
    while (s[i]) {
        if (depth == 0 && line_start && s[i] == '#') {
            size_t end = skip_lexeme(s, i, true);
            if (!is_dsl_include(s + i, end - i)) fprintf(out, "%.*s\n", (int)(end - i), s + i);
            i = chunk = end;
            continue;
        }
        size_t j = skip_lexeme(s, i, line_start);
        if (j != i) {
            line_start = false;
            i = j;
            continue;
        }
        char c = s[i];
        if (c == '\n') line_start = true;
        else if (!isspace((unsigned char)c)) line_start = false;
        if (c == '{') {
            if (depth == 0 && last == ')') in_function = true;
            depth++;
        } else if (c == '}') {
            if (depth) depth--;
            if (depth == 0 && in_function) {
                in_function = false;
                chunk = i + 1; /* a definition: dropped */
                last = '}';
                i++;
                continue;
            }
        } else if (c == ';' && depth == 0) {
            size_t head = chunk_head(s, chunk, i);
            if (is_type_declaration(s + head)) fprintf(out, "%.*s\n", (int)(i + 1 - head), s + head);
            chunk = i + 1;
        }
        if (depth == 0 && !isspace((unsigned char)c)) last = c;
        i++;
    }
}

int header_param_type(const char *s, const char *name, int index, char *out, size_t size) {
    size_t n = strlen(name);
    for (const char *p = strstr(s, "RK_HANDLER"); p; p = strstr(p + 1, "RK_HANDLER")) {
        const char *f = strstr(p, name);
        while (f && (isalnum((unsigned char)f[n]) || f[n] == '_' || isalnum((unsigned char)f[-1]) || f[-1] == '_'))
            f = strstr(f + 1, name);
        if (!f) return 0;
        const char *q = f + n;
        while (isspace((unsigned char)*q)) q++;
        if (*q != '(') continue;
        q++;
        for (int k = 0; k < index; k++) {
            q = strchr(q, ',');
            if (!q) return 0;
            q++;
        }
        const char *end = q;
        while (*end && *end != ',' && *end != ')') end++;
        /* "const Pair *req": drop the name, the stars and const. */
        const char *star = end;
        while (star > q && *star != '*') star--;
        if (*star != '*') return 0;
        while (star > q && (star[-1] == '*' || isspace((unsigned char)star[-1]))) star--;
        while (isspace((unsigned char)*q)) q++;
        if (starts_word(q, "const")) q += 5;
        while (isspace((unsigned char)*q)) q++;
        size_t len = (size_t)(star - q);
        if (len >= 6 && strncmp(star - 6, " const", 6) == 0) len -= 6;
        if (len == 4 && strncmp(q, "void", 4) == 0) len = 0;
        if (len >= size) return 0;
        memcpy(out, q, len);
        out[len] = '\0';
        return 1;
    }
    return 0;
}
