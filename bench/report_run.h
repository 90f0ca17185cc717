/* report_run.h — scripts/report.sh run from inside `scaling` at the end of the default study: found in the source tree
 * the binary was built from (baked in at build time), else beside the binary (build/scaling -> scripts/), and started
 * with posix_spawn, so no path ever passes through a shell. Host-only. */
#pragma once
#include <stddef.h>

/* The report script of source_dir (may be NULL), else of the tree holding the binary at exe (build/scaling ->
 * build/../scripts/report.sh). 0 with its path in path; -1 with a one-line message naming where it looked. */
int report_find(char *path, size_t len, const char *source_dir, const char *exe, char *err, size_t errlen);
/* Runs `script csv --out out_dir` with its stdout sent to stderr (stdout keeps the table and the answer) and waits.
 * Returns its exit status (0: REPORT.md written), or -1 when it could not be started or was killed; err says which. */
int report_run(const char *script, const char *csv, const char *out_dir, char *err, size_t errlen);
