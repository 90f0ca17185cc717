/* breakdown.h — where a step goes on one GPU's compute stream, and which GPU a row reports: pure arithmetic on
 * CUDA-event intervals (no CUDA here), shared by the data-parallel strategies and the pipeline, tested on CI.
 *
 * Per GPU and timed step, on its compute stream, from events recorded there:
 *   step      from the previous step's end to this step's end (the step's CUDA events)
 *   compute   the busy time: the sum of the intervals between events recorded before and after each forward,
 *             backward (bucket) and update segment (a CUDA graph, or the eager launches of one); a segment that
 *             runs beside an all-reduce counts at most its solo time as compute (breakdown_stall)
 *   exposed   the time the stream waits for communication: data parallel, from the end of the last backward
 *             segment to the start of the update (the wait for the reduced gradients), plus the stalls; pipeline,
 *             the part of the gap before an op during which an incoming copy that op waits on is in flight
 *   idle      step - compute - exposed: every other gap (the host late to launch, a pipeline stage waiting for
 *             another stage's compute); never negative beyond the events' resolution, clipped at 0
 * The figures are means over the timed steps, so compute + exposed + idle = the GPU's mean step over them. A row
 * takes one GPU's four figures together: the GPU with the most compute, the one the others wait for. */
#pragma once
#include <stdio.h>

typedef struct {
    double step_ms, compute_ms, exposed_ms, idle_ms;
    int steps;              /* timed steps summed (breakdown_add) */
} breakdown_t;

/* Adds one timed step: its length, busy time and exposed wait; idle is what is left. */
static inline void breakdown_add(breakdown_t *b, double step_ms, double compute_ms, double exposed_ms) {
    double idle = step_ms - compute_ms - exposed_ms;
    b->step_ms += step_ms;
    b->compute_ms += compute_ms;
    b->exposed_ms += exposed_ms;
    b->idle_ms += idle > 0 ? idle : 0;
    b->steps++;
}

/* The sums of breakdown_add as means per step (all zero when no step was added). */
static inline breakdown_t breakdown_mean(breakdown_t b) {
    breakdown_t m = {0, 0, 0, 0, b.steps};
    if (b.steps > 0) {
        m.step_ms = b.step_ms / b.steps;
        m.compute_ms = b.compute_ms / b.steps;
        m.exposed_ms = b.exposed_ms / b.steps;
        m.idle_ms = b.idle_ms / b.steps;
    }
    return m;
}

/* The GPU a row reports, of n >= 1: the one with the most compute (the first of equals). */
static inline int breakdown_pick(const breakdown_t *gpu, int n) {
    int best = 0;
    for (int i = 1; i < n; i++)
        if (gpu[i].compute_ms > gpu[best].compute_ms) best = i;
    return best;
}

/* The part of a segment's busy time that is communication's, not compute's: a segment's kernels can wait inside
 * it for a kernel on another stream. cuDNN's persistent NHWC batch-norm kernels need every SM; while an NCCL
 * kernel holds two, the next one does not start until that all-reduce ends (2 H200s, NCCL's socket transport: 6.4
 * ms of kernels in a 16 ms busy backward, each stall ending with an NCCL kernel). Events around the segment cannot
 * tell waiting from computing, so the same segment timed in a step where no communication ran beside it (its solo
 * time) is its compute and the excess is exposed. Never negative; noise in the solo time shifts a few us. */
static inline double breakdown_stall(double busy_ms, double solo_ms) {
    return busy_ms > solo_ms ? busy_ms - solo_ms : 0;
}

/* Length of the overlap of the intervals [a0, a1] and [b0, b1] (0 when they do not meet): the part of a gap on the
 * compute stream during which a copy it waits on is in flight. */
static inline double breakdown_overlap(double a0, double a1, double b0, double b1) {
    double lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;
    return hi > lo ? hi - lo : 0;
}

/* One line on f with every GPU's figures (many GPUs: the row's only), the row's marked, for a look at the GPUs a row
 * does not show; GPU i is named unit i ("gpu 3", "stage 1"). */
static inline void breakdown_print(FILE *f, const char *unit, const breakdown_t *gpu, int n, int row) {
    fprintf(f, "breakdown: ms per step, mean of %d timed steps:", gpu[row].steps);
    for (int i = 0; i < n; i++)
        if (n <= 16 || i == row)
            fprintf(f, "%s %s %d step %.3f = compute %.3f + exposed %.3f + idle %.3f%s", i ? ";" : "", unit, i,
                    gpu[i].step_ms, gpu[i].compute_ms, gpu[i].exposed_ms, gpu[i].idle_ms, i == row ? " (row)" : "");
    fprintf(f, "\n");
}
