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
/* How many of `launched` steps the GPU has finished, from the per-step events ev[0..launched] (ev[0] the epoch's
 * start, ev[k] the end of step k - 1) without waiting: each is asked with cudaEventQuery, never synchronised. *ms gets
 * the GPU time from the epoch's start to the end of the last finished step (0 with none). A progress line's reading,
 * about every 10 s, on any thread: it costs the step loop nothing. */
int timing_steps_done(const cudaEvent_t *ev, int launched, double *ms);
/* One line on stderr saying where an epoch's mean step (epoch / steps, what images/s by epoch counts) goes beyond its
 * median (what step_ms reports): the first step, the median, the 90th percentile and the slowest step, and how much
 * of the excess the first step and the steps over the median's 1.02x carry. `who` names the GPU or rank. */
void timing_print_steps(const char *who, const cudaEvent_t *ev, int steps);
/* Median GPU milliseconds of fn(ctx) on stream s over reps calls (reps <= TIMING_MAX_REPS), after one untimed call:
 * the stream is held for about a millisecond first (gpu_hold_stream), so that the timed calls queued behind it run
 * back to back and the event gaps are GPU time, not the host's time to enqueue. For choosing between kernels at setup. */
#define TIMING_MAX_REPS 16
float timing_call_ms(cudaStream_t s, int reps, void (*fn)(void *ctx), void *ctx);
#ifdef __cplusplus
}
#endif
