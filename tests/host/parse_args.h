/* parse_args.h — the host tests' way to run the `scaling` option parser on a list of arguments (test_options.c,
 * test_cli.c): argv[0] added, --help's text sent to a scratch file. */
#pragma once
#include "bench/options.h"
#include <stdarg.h>
#include <stdio.h>

#ifndef MAXARGS
#define MAXARGS 32
#endif

/* Parses a NULL-terminated list of arguments (argv[0] added), with --help output sent to a scratch file. */
static int parse(options_t *o, char *err, size_t errlen, ...) {
    char *argv[MAXARGS + 2] = {"scaling"};
    int argc = 1;
    va_list ap;
    va_start(ap, errlen);
    for (char *a; (a = va_arg(ap, char *)) != NULL && argc <= MAXARGS; ) argv[argc++] = a;
    va_end(ap);
    fflush(stdout);
    FILE *saved = stdout, *sink = tmpfile();
    if (sink) stdout = sink;
    int rc = options_parse(o, argc, argv, err, errlen);
    if (sink) { stdout = saved; fclose(sink); }
    return rc;
}

#define PARSE(o, err, ...) parse(o, err, sizeof err, __VA_ARGS__, (char *)NULL)
