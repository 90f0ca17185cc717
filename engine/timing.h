/* timing.h — CUDA-event intervals, and the median step time of an epoch's per-step events: the one way every
 * strategy turns events into the milliseconds of its rows. */
#pragma once
#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif
/* Milliseconds from a to b (both recorded and complete). */
float timing_ms(cudaEvent_t a, cudaEvent_t b);
/* Median of ev[i] -> ev[i+1] over i < steps (ev holds steps + 1 events); 0 when steps < 1. */
double timing_median_step_ms(const cudaEvent_t *ev, int steps);
#ifdef __cplusplus
}
#endif
