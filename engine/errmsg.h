/* errmsg.h — the one-line error message every host-side validator returns: format into the caller's buffer and
 * hand back the caller's status code, so "return errmsg(2, err, errlen, ...)" reads as one statement; and the line
 * a command prints it as. */
#pragma once
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#if defined(__GNUC__)
#define ERRMSG_PRINTF __attribute__((format(printf, 4, 5)))
#define ERRMSG_LINE_PRINTF __attribute__((format(printf, 3, 4)))
#else
#define ERRMSG_PRINTF
#define ERRMSG_LINE_PRINTF
#endif

/* Writes the message into err (when err and errlen are non-zero) and returns rc. */
int errmsg(int rc, char *err, size_t errlen, const char *fmt, ...) ERRMSG_PRINTF;
/* Writes prefix and the formatted message to f as one line. A message quotes what it was given (a path, an option's
 * value, an environment variable's), so a byte a terminal acts on (a newline, an escape) is written as \n or \xHH:
 * the line stays one line whatever the input holds. */
void errmsg_line(FILE *f, const char *prefix, const char *fmt, ...) ERRMSG_LINE_PRINTF;
void errmsg_vline(FILE *f, const char *prefix, const char *fmt, va_list ap);
