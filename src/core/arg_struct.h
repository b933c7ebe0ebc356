/* Struct arguments passed by value (RK_ARG_STRUCT, device.h): the layout
 * their field letters describe, worked out once here for every backend. */
#ifndef RK_CORE_ARG_STRUCT_H
#define RK_CORE_ARG_STRUCT_H

#include <stddef.h>

#include "ringkernel/device.h"

enum { RK_ARG_STRUCT_MAX_FIELDS = 64 };

typedef struct rk__struct_field {
    char letter;   /* 'i', 'u', 'l', 'L', 'f', 'd' */
    size_t offset; /* in the host's layout */
    size_t size;
} rk__struct_field;

/* Lays the fields out by C's natural alignment. RK_INVALID_ARGUMENT (naming
 * argument `index`) when they are missing, unknown, a pointer, too many, or
 * do not add up to the given size. out may be NULL; *count gets the number. */
rk_status rk__arg_struct_layout(const rk_arg_struct *s, size_t index, rk__struct_field *out, size_t *count);

#endif
