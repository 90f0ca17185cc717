/* errmsg.c — formats a validator's one-line error message into the caller's buffer. Host-only, so the options,
 * sweep, CSV and pipeline-plan code that CI tests shares it without CUDA headers. */
#include "errmsg.h"
#include <stdarg.h>
#include <stdio.h>

int errmsg(int rc, char *err, size_t errlen, const char *fmt, ...) {
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return rc;
}
