/* errmsg.c — formats a validator's one-line error message into the caller's buffer, and prints one as a line.
 * Host-only, so the options, sweep, CSV and pipeline-plan code that CI tests shares it without CUDA headers. */
#include "errmsg.h"
#include <stdlib.h>

int errmsg(int rc, char *err, size_t errlen, const char *fmt, ...) {
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return rc;
}

void errmsg_vline(FILE *f, const char *prefix, const char *fmt, va_list ap) {
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *msg = malloc(n > 0 ? (size_t)n + 1 : 1);
    if (msg) vsnprintf(msg, (size_t)(n > 0 ? n : 0) + 1, fmt, again);
    va_end(again);
    fputs(prefix, f);
    for (const unsigned char *p = (const unsigned char *)(msg ? msg : "out of host memory"); *p; p++)
        if (*p >= 0x20 && *p != 0x7f) fputc(*p, f);
        else if (*p == '\n') fputs("\\n", f);
        else fprintf(f, "\\x%02x", *p);
    fputc('\n', f);
    free(msg);
}

void errmsg_line(FILE *f, const char *prefix, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    errmsg_vline(f, prefix, fmt, ap);
    va_end(ap);
}
