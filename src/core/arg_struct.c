/* The layout of a struct argument from its field letters (arg_struct.h). */
#include "arg_struct.h"

#include <string.h>

#include "backend_impl.h"

static size_t letter_size(char c) {
    switch (c) {
    case 'i': case 'u': case 'f': return 4;
    case 'l': case 'L': case 'd': return 8;
    default: return 0;
    }
}

rk_status rk__arg_struct_layout(const rk_arg_struct *s, size_t index, rk__struct_field *out, size_t *count) {
    if (!s->data || !s->fields)
        return rk__fail(RK_NULL_ARGUMENT, "rk_launch: struct argument %zu has no %s", index, s->data ? "fields" : "data");
    size_t n = strlen(s->fields), offset = 0, align = 1;
    if (n == 0 || n > RK_ARG_STRUCT_MAX_FIELDS)
        return rk__fail(RK_INVALID_ARGUMENT, "rk_launch: struct argument %zu needs 1 to %d field letters, has %zu", index,
                        RK_ARG_STRUCT_MAX_FIELDS, n);
    for (size_t i = 0; i < n; i++) {
        char c = s->fields[i];
        size_t size = letter_size(c);
        if (c == 'p' || c == '*')
            return rk__fail(RK_INVALID_ARGUMENT,
                            "rk_launch: struct argument %zu has a pointer member (field %zu): a pointer cannot be "
                            "passed inside a struct, since a buffer's address means something else on every backend; "
                            "pass the buffer as an argument of its own",
                            index, i);
        if (!size)
            return rk__fail(RK_INVALID_ARGUMENT,
                            "rk_launch: struct argument %zu: field letter '%c' (field %zu) is not one of i u l L f d",
                            index, c, i);
        offset = (offset + size - 1) & ~(size - 1);
        if (out) out[i] = (rk__struct_field){c, offset, size};
        offset += size;
        if (size > align) align = size;
    }
    offset = (offset + align - 1) & ~(align - 1);
    if (offset != s->size)
        return rk__fail(RK_INVALID_ARGUMENT,
                        "rk_launch: struct argument %zu: fields \"%s\" lay out as %zu bytes but the struct is %zu "
                        "(a field missing or extra, or a nested struct whose padding the letters do not show)",
                        index, s->fields, offset, s->size);
    *count = n;
    return RK_OK;
}
