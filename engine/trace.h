/* trace.h — a recorder of per-GPU ranges (forward, backward, each communication, update) timed with CUDA events
 * for a few steps, for a Chrome-trace/Perfetto timeline where Nsight Systems is not installed (--trace). */
#pragma once
#include <cuda_runtime.h>
#include "trace_event.h"

#define TRACE_MAX_DEVICES 16

typedef struct {
    int gpu, lane;
    char name[TRACE_NAME];
    cudaEvent_t start, stop;
} trace_range_t;

typedef struct trace {
    int active;                 /* set by the harness for the steps to record */
    int n, cap;
    int dropped;                /* ranges not recorded because the recorder was full (reported, never silent) */
    trace_range_t *r;
    int n_origins;
    int origin_dev[TRACE_MAX_DEVICES];
    cudaEvent_t origin[TRACE_MAX_DEVICES];
} trace_t;

#ifdef __cplusplus
extern "C" {
#endif
void trace_init(trace_t *t, int cap);
/* Marks time zero of `device` on `stream` (the first call per device wins). Strategies call it for every GPU at
 * the start of a traced step, back to back, which is what aligns the GPUs' clocks in the timeline. */
void trace_origin(trace_t *t, int device, cudaStream_t stream);
/* Starts a range on the current device's `stream`; returns its index, or -1 when not recording or full. */
int trace_begin(trace_t *t, int device, int lane, cudaStream_t stream, const char *name);
void trace_end(trace_t *t, int idx, cudaStream_t stream);
/* Waits for the recorded events and converts them; returns the count written to out (at most t->n). */
int trace_resolve(trace_t *t, trace_event_t *out);
/* Forgets the recorded ranges (and origins), keeping the capacity. */
void trace_reset(trace_t *t);
void trace_free(trace_t *t);
#ifdef __cplusplus
}
#endif
