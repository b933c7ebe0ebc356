/* The type declarations of a DSL source, for a host header (rk header):
 * preprocessor lines and file-scope typedef/struct/union/enum declarations
 * are kept as written, function definitions and everything else dropped. */
#ifndef RK_TOOL_HEADER_EXTRACT_H
#define RK_TOOL_HEADER_EXTRACT_H

#include <stdio.h>

/* Writes the kept text of src to out. */
void header_extract_types(const char *src, FILE *out);

/* The type a handler's parameter points at, as written ("Pair", "struct
 * Req"; "" for void), for parameter index 0..2 of the RK_HANDLER function
 * name in src. False when the definition is not found. */
int header_param_type(const char *src, const char *name, int index, char *out, size_t size);

#endif
