/* errmsg.h — the one-line error message every host-side validator returns: format into the caller's buffer and
 * hand back the caller's status code, so "return errmsg(2, err, errlen, ...)" reads as one statement. */
#pragma once
#include <stddef.h>

#if defined(__GNUC__)
#define ERRMSG_PRINTF __attribute__((format(printf, 4, 5)))
#else
#define ERRMSG_PRINTF
#endif

/* Writes the message into err (when err and errlen are non-zero) and returns rc. */
int errmsg(int rc, char *err, size_t errlen, const char *fmt, ...) ERRMSG_PRINTF;
