/* test_breakdown.c — strategies/breakdown.h without a GPU: compute, exposed and idle add up to the step, the row's
 * GPU is the one with the most compute (with its own figures, not a mix of GPUs), and the overlap of a gap with a
 * copy in flight. The numbers mirror the slow-link run of results/slowlink-h200x2-2026-11-23: 6.7 ms of kernels in a 22 ms step. */
#include "strategies/breakdown.h"
#include "test.h"

static int near(double a, double b) { return fabs(a - b) <= 1e-9 * (fabs(b) > 1 ? fabs(b) : 1); }

static void test_adds_up(void) {
    breakdown_t b = {0};
    /* Three steps on a slow link: the compute stream is busy 6.7 ms, waits 1 ms for the all-reduce, and sits
     * without work the rest. */
    breakdown_add(&b, 22.0, 6.7, 1.0);
    breakdown_add(&b, 20.0, 6.6, 1.2);
    breakdown_add(&b, 24.0, 6.8, 0.8);
    breakdown_t m = breakdown_mean(b);
    EXPECT(m.steps == 3, "steps %d", m.steps);
    EXPECT(near(m.step_ms, 22.0) && near(m.compute_ms, 6.7) && near(m.exposed_ms, 1.0),
           "means step %.6f compute %.6f exposed %.6f", m.step_ms, m.compute_ms, m.exposed_ms);
    EXPECT(near(m.idle_ms, 22.0 - 6.7 - 1.0), "idle %.6f, want 14.3", m.idle_ms);
    EXPECT(near(m.compute_ms + m.exposed_ms + m.idle_ms, m.step_ms), "%.6f + %.6f + %.6f != step %.6f",
           m.compute_ms, m.exposed_ms, m.idle_ms, m.step_ms);
    /* The figure the old rows gave as compute (step - exposed) is not the busy time: a negative control. */
    EXPECT(!near(m.step_ms - m.exposed_ms, m.compute_ms), "step - exposed equals compute: the case does not test");

    /* Events a few hundred ns apart can make a step's remainder slightly negative: clipped, never subtracted. */
    breakdown_t c = {0};
    breakdown_add(&c, 5.0, 4.0, 1.0004);
    breakdown_add(&c, 5.0, 4.0, 0.5);
    m = breakdown_mean(c);
    EXPECT(near(m.idle_ms, 0.25), "idle %.6f, want (0 + 0.5) / 2", m.idle_ms);

    breakdown_t none = breakdown_mean((breakdown_t){0});
    EXPECT(none.steps == 0 && none.step_ms == 0 && none.idle_ms == 0, "no steps: not all zero");
}

static void test_pick(void) {
    /* GPU 1 computes longest (the straggler), GPU 2 has the longest mean step by a few microseconds. */
    breakdown_t g[3] = {
        {.step_ms = 10.000, .compute_ms = 6.0, .exposed_ms = 1.5, .idle_ms = 2.5},
        {.step_ms = 10.001, .compute_ms = 7.0, .exposed_ms = 0.4, .idle_ms = 2.601},
        {.step_ms = 10.004, .compute_ms = 6.5, .exposed_ms = 1.0, .idle_ms = 2.504},
    };
    int k = breakdown_pick(g, 3);
    EXPECT(k == 1, "picked GPU %d, want 1 (most compute)", k);
    EXPECT(near(g[k].compute_ms + g[k].exposed_ms + g[k].idle_ms, g[k].step_ms), "the row's figures do not add up");
    /* The old row took the maximum of each figure over the GPUs: 7.0 + 1.5 over a 10 ms step, from two GPUs. */
    double mixed = 7.0 + 1.5 + 2.601;
    EXPECT(!near(mixed, g[k].step_ms), "mixing GPUs adds up too: the case does not test");
    breakdown_t tie[2] = {{.compute_ms = 3.0}, {.compute_ms = 3.0}};
    EXPECT(breakdown_pick(tie, 2) == 0, "a tie goes to the first GPU");
    EXPECT(breakdown_pick(g, 1) == 0, "one GPU: itself");
}

static void test_overlap(void) {
    /* A 2 ms gap [10, 12] before a backward; the gradient copy it waits on runs [11.5, 12]: 0.5 ms exposed. */
    EXPECT(near(breakdown_overlap(10, 12, 11.5, 12), 0.5), "copy at the gap's end");
    EXPECT(near(breakdown_overlap(10, 12, 9, 12), 2.0), "copy spanning the gap");
    EXPECT(near(breakdown_overlap(10, 12, 10.5, 11), 0.5), "copy inside the gap");
    EXPECT(breakdown_overlap(10, 12, 8, 9.5) == 0, "copy done before the gap");
    EXPECT(breakdown_overlap(10, 12, 12, 13) == 0, "copy after the gap");
    EXPECT(breakdown_overlap(10, 10, 9, 11) == 0, "no gap");
}

static void test_stall(void) {
    /* 2 H200s, socket transport: a backward bucket busy 9.9 ms of which 3.1 ms are its kernels run alone. */
    EXPECT(near(breakdown_stall(9.9, 3.1), 6.8), "stall %.6f, want 6.8", breakdown_stall(9.9, 3.1));
    EXPECT(breakdown_stall(3.0, 3.1) == 0, "faster than solo (noise): no stall, never negative");
    EXPECT(breakdown_stall(3.1, 3.1) == 0, "as fast as solo: no stall");
    /* Booked as exposed, the step still adds up and compute is the solo time. */
    double busy = 1.0 + 9.9 + 0.5, stall = breakdown_stall(9.9, 3.1);
    breakdown_t b = {0};
    breakdown_add(&b, 12.0, busy - stall, 0.4 + stall);
    breakdown_t m = breakdown_mean(b);
    EXPECT(near(m.compute_ms, 1.0 + 3.1 + 0.5) && near(m.exposed_ms, 7.2) && near(m.idle_ms, 12.0 - 11.8),
           "compute %.6f exposed %.6f idle %.6f", m.compute_ms, m.exposed_ms, m.idle_ms);
}

int main(void) {
    test_adds_up();
    test_stall();
    test_pick();
    test_overlap();
    return test_summary();
}
