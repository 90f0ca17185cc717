/* report_run.h — the report made from inside `scaling` at the end of the default study: the binary itself started as
 * `scaling report CSV --out DIR` with posix_spawn (no shell, so any path is safe), in a process of its own so that a
 * report that fails costs neither the rows nor the answer. Host-only. */
#pragma once
#include <stddef.h>

/* Runs `exe report csv --out out_dir` with its stdout sent to stderr (stdout keeps the table and the answer) and
 * waits. Returns its exit status (0: REPORT.md written), or -1 when it could not be started or was killed; err says
 * which. */
int report_run(const char *exe, const char *csv, const char *out_dir, char *err, size_t errlen);
