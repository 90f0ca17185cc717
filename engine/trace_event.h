/* trace_event.h — one resolved timeline range, host-side and CUDA-free, shared by the recorder (engine/trace.c)
 * and the Chrome-trace JSON writer (bench/trace_json.c, tested on CI). */
#pragma once

#define TRACE_NAME 48

/* The streams a GPU's ranges run on, one timeline row each. TRACE_COMM_IN2: the pipeline's second incoming copy
 * stream (activation gradients from the next stage; activations from the previous one use TRACE_COMM). */
enum { TRACE_COMPUTE = 0, TRACE_COMM = 1, TRACE_COMM_IN2 = 2, TRACE_LANES = 3 };

typedef struct {
    int gpu;                    /* CUDA ordinal */
    int lane;                   /* TRACE_COMPUTE, TRACE_COMM or TRACE_COMM_IN2: the stream it ran on */
    char name[TRACE_NAME];
    double ts_us, dur_us;       /* microseconds from its GPU's origin */
} trace_event_t;
