/* The handler side of rk_kernel_launch: a handler file read into memory, a
 * DSL handler checked against every transpiler target, and the desc's sizes
 * reconciled with the handler's types (kernel_handler.c). */
#ifndef RK_KERNEL_HANDLER_H
#define RK_KERNEL_HANDLER_H

#include "ringkernel/ringkernel.h"

/* What the launch keeps of the handler: owned copies the kernel takes over. */
typedef struct rk__handler_text {
    char *source;         /* the handler's text (the file's, when handler_file) */
    char *file;           /* the file's path, or NULL */
    char **include_dirs;  /* compile_options' include dirs + the file's directory */
    size_t include_dir_count;
    rk_compile_options options; /* compile_options with include_dirs above */
} rk__handler_text;

/* For a desc with handler_file: reads the file into t->source. Otherwise
 * copies handler_source. *d is updated to point at t's copies. */
rk_status rk__handler_text_load(rk_kernel_desc *d, rk__handler_text *t);
void rk__handler_text_free(rk__handler_text *t);

/* For a DSL handler (source marked RK_HANDLER): transpiles it for CUDA and
 * WGSL, refuses what either target refuses, and fills 0 sizes in *d from
 * the handler's types (refusing a differing non-zero size). Other handlers
 * are left as they are. */
rk_status rk__handler_check(rk_kernel_desc *d);

#endif
