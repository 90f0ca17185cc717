/* trace_json.h — writes timeline ranges as Chrome-trace / Perfetto JSON (chrome://tracing, ui.perfetto.dev):
 * one process per GPU, one thread per stream (compute, communication). Host-only. */
#pragma once
#include <stddef.h>
#include "../engine/trace_event.h"

/* Sorts ev by (gpu, lane, start) and writes path. title goes into the file's metadata. 0, or -1 with a
 * one-line reason in err. */
int trace_json_write(const char *path, trace_event_t *ev, int n, const char *title, char *err, size_t errlen);
