/* A live progress line: rewritten in place with '\r' on a terminal, printed
 * as plain lines at a slower pace when output goes to a file or pipe. */
#ifndef RK_TOOL_PROGRESS_H
#define RK_TOOL_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct progress_line {
    FILE *out;
    bool tty;
    bool enabled;
    uint64_t interval_ns;
    uint64_t last_ns;
    int last_width;
} progress_line;

void progress_init(progress_line *p, FILE *out, bool enabled);
/* True when it is time for another update. */
bool progress_due(const progress_line *p, uint64_t now_ns);
void progress_print(progress_line *p, uint64_t now_ns, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Ends a '\r' line so the next output starts on a fresh line. */
void progress_finish(progress_line *p);

#endif
