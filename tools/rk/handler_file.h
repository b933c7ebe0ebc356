/* What rk check, rk header and rk bench kernel --handler share: a DSL
 * handler file read and transpiled the way rk_kernel_launch sees it (after
 * <ringkernel/dsl.h>, its own directory searched by #include "..."). */
#ifndef RK_TOOL_HANDLER_FILE_H
#define RK_TOOL_HANDLER_FILE_H

#include <stdbool.h>
#include <stddef.h>

#include "ringkernel/transpile.h"

enum { HANDLER_MAX_OPTIONS = 64 };

typedef struct handler_options {
    const char *include_dirs[HANDLER_MAX_OPTIONS + 1];
    size_t include_dir_count;
    const char *defines[HANDLER_MAX_OPTIONS];
    size_t define_count;
} handler_options;

/* Takes "-I DIR", "-IDIR", "-D X", "-DX" at argv[*i] (advancing *i past a
 * separate value). Returns 1 when taken, 0 when argv[*i] is something else,
 * -1 (with a message on stderr, naming cmd) when its value is missing or
 * there are too many. */
int handler_option(const char *cmd, int argc, char **argv, int *i, handler_options *o);

/* The file's text (NUL-terminated; free it), or NULL with a message. */
char *handler_read(const char *cmd, const char *path);

/* Transpiles path's text for target; *out as rk_transpile gives it. */
rk_status handler_transpile(const char *path, const char *text, const handler_options *o,
                            rk_transpile_target target, rk_transpile_result **out);

#endif
