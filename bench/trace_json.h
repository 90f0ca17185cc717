/* trace_json.h — writes timeline ranges as Chrome-trace / Perfetto JSON (chrome://tracing, ui.perfetto.dev):
 * one process per GPU, one thread per stream (compute, communication). Host-only. */
#pragma once
#include <stddef.h>
#include "../engine/trace_event.h"

/* Sorts ev by (gpu, lane, start) and writes path. title goes into the file's metadata. 0, or -1 with a
 * one-line reason in err. */
int trace_json_write(const char *path, trace_event_t *ev, int n, const char *title, char *err, size_t errlen);
/* The file of run `index` (0-based) of n_runs for --trace base: base itself for one run, else "-run<N>" before its
 * extension. 0, or -1 when it does not fit len (never cut). */
int trace_json_run_path(char *buf, size_t len, const char *base, int n_runs, int index);
