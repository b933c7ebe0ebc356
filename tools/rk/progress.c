/* Live progress output for long-running rk commands. */
#include <stdarg.h>
#include <unistd.h>

#include "progress.h"

void progress_init(progress_line *p, FILE *out, bool enabled) {
    *p = (progress_line){.out = out, .enabled = enabled};
    p->tty = isatty(fileno(out)) == 1;
    /* Logs get a line a second; a terminal a smooth ten updates a second. */
    p->interval_ns = p->tty ? 100000000u : 1000000000u;
}

bool progress_due(const progress_line *p, uint64_t now_ns) {
    return p->enabled && now_ns - p->last_ns >= p->interval_ns;
}

void progress_print(progress_line *p, uint64_t now_ns, const char *fmt, ...) {
    if (!p->enabled) return;
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (n >= (int)sizeof line) n = (int)sizeof line - 1;
    if (p->tty) {
        /* Pad over the tail of a longer previous line. */
        int pad = p->last_width > n ? p->last_width - n : 0;
        fprintf(p->out, "\r%s%*s", line, pad, "");
        p->last_width = n;
    } else {
        fprintf(p->out, "%s\n", line);
    }
    fflush(p->out);
    p->last_ns = now_ns;
}

void progress_finish(progress_line *p) {
    if (p->enabled && p->tty && p->last_width > 0) {
        fputc('\n', p->out);
        fflush(p->out);
    }
    p->last_width = 0;
}
