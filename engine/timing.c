/* timing.c — event intervals and per-epoch step medians. The median, not the mean, so one slow step (a page
 * fault, a preempted host thread) does not move the step time a row reports. */
#include "timing.h"
#include "check.h"
#include "gpu.h"
#include <stdio.h>
#include <stdlib.h>

float timing_ms(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0.0f;
    CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
    return ms;
}

/* 1 when the event has completed; not-ready is no error (anything else is, as for any CUDA call). */
static int event_done(cudaEvent_t e) {
    cudaError_t rc = cudaEventQuery(e);
    if (rc == cudaErrorNotReady) return 0;
    CHECK_CUDA(rc);
    return 1;
}

int timing_steps_done(const cudaEvent_t *ev, int launched, double *ms) {
    *ms = 0;
    if (launched < 1 || !event_done(ev[0])) return 0;
    /* Steps finish in order on the stream that records their events: the finished ones are a prefix. */
    int lo = 0, hi = launched;      /* ev[lo] done; the answer is in [lo, hi] */
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (event_done(ev[mid])) lo = mid;
        else hi = mid - 1;
    }
    if (lo > 0) *ms = timing_ms(ev[0], ev[lo]);
    return lo;
}

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

double timing_median_step_ms(const cudaEvent_t *ev, int steps) {
    if (steps < 1) return 0.0;
    float *d = malloc((size_t)steps * sizeof(float));
    if (!d) check_fail(__FILE__, __LINE__, "malloc", "out of host memory");
    for (int i = 0; i < steps; i++) d[i] = timing_ms(ev[i], ev[i + 1]);
    qsort(d, (size_t)steps, sizeof(float), cmp_float);
    double m = steps % 2 ? d[steps / 2] : 0.5 * (d[steps / 2 - 1] + d[steps / 2]);
    free(d);
    return m;
}

void timing_print_steps(const char *who, const cudaEvent_t *ev, int steps) {
    if (steps < 1) return;
    float *d = malloc((size_t)steps * sizeof(float));
    if (!d) check_fail(__FILE__, __LINE__, "malloc", "out of host memory");
    double sum = 0, first = 0, worst = 0;
    int at = 0;
    for (int i = 0; i < steps; i++) {
        d[i] = timing_ms(ev[i], ev[i + 1]);
        sum += d[i];
        if (i == 0) first = d[i];
        if (d[i] > worst) { worst = d[i]; at = i; }
    }
    double mean = sum / steps;
    qsort(d, (size_t)steps, sizeof(float), cmp_float);
    double med = steps % 2 ? d[steps / 2] : 0.5 * (d[steps / 2 - 1] + d[steps / 2]);
    double p90 = d[(size_t)((steps - 1) * 0.9)];
    /* The excess mean - median, in ms per step: the first step's share, and the share of the slow steps (over 1.02x
     * the median, the first excluded); the rest is spread over typical steps. */
    double ex_first = (first - med) / steps, ex_slow = 0;
    int n_slow = 0;
    for (int i = 0; i < steps; i++)   /* sorted: the first step's value may be among them; counted once below */
        if (d[i] > 1.02 * med) { ex_slow += (d[i] - med) / steps; n_slow++; }
    if (first > 1.02 * med) { ex_slow -= (first - med) / steps; n_slow--; }
    fprintf(stderr, "steps: %s, %d steps: mean %.3f ms = median %.3f + %.3f (first step %.3f: +%.3f; %d slow steps "
            "over 1.02x median: +%.3f); p90 %.3f, slowest %.3f (step %d)\n", who, steps, mean, med, mean - med, first,
            ex_first, n_slow, ex_slow, p90, worst, at);
    free(d);
}

float timing_call_ms(cudaStream_t s, int reps, void (*fn)(void *ctx), void *ctx) {
    cudaEvent_t ev[TIMING_MAX_REPS + 1];
    float ms[TIMING_MAX_REPS];
    if (reps < 1 || reps > TIMING_MAX_REPS) check_fail(__FILE__, __LINE__, "timing_call_ms", "reps out of range");
    for (int i = 0; i <= reps; i++) CHECK_CUDA(cudaEventCreate(&ev[i]));
    fn(ctx);
    gpu_hold_stream(s, 2000000LL);
    for (int i = 0; i < reps; i++) {
        CHECK_CUDA(cudaEventRecord(ev[i], s));
        fn(ctx);
    }
    CHECK_CUDA(cudaEventRecord(ev[reps], s));
    CHECK_CUDA(cudaEventSynchronize(ev[reps]));
    for (int i = 0; i < reps; i++) ms[i] = timing_ms(ev[i], ev[i + 1]);
    for (int i = 0; i <= reps; i++) CHECK_CUDA(cudaEventDestroy(ev[i]));
    qsort(ms, (size_t)reps, sizeof(float), cmp_float);
    return ms[reps / 2];
}
