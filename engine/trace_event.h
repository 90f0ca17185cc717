/* trace_event.h — one resolved timeline range, host-side and CUDA-free, shared by the recorder (engine/trace.c)
 * and the Chrome-trace JSON writer (bench/trace_json.c, tested on CI). */
#pragma once

#define TRACE_NAME 48

enum { TRACE_COMPUTE = 0, TRACE_COMM = 1 };

typedef struct {
    int gpu;                    /* CUDA ordinal */
    int lane;                   /* TRACE_COMPUTE or TRACE_COMM: the stream it ran on */
    char name[TRACE_NAME];
    double ts_us, dur_us;       /* microseconds from its GPU's origin */
} trace_event_t;
