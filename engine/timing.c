/* timing.c — event intervals and per-epoch step medians. The median, not the mean, so one slow step (a page
 * fault, a preempted host thread) does not move the step time a row reports. */
#include "timing.h"
#include "check.h"
#include <stdlib.h>

float timing_ms(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0.0f;
    CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
    return ms;
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
