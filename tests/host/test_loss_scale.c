/* test_loss_scale.c — the loss scale's schedule (engine/loss_scale.h) on the host, against torch.amp.GradScaler's:
 * doubling after exactly `interval` clean steps, halving and a counted skip on an inf or NaN, the clean count reset
 * by either, no growth past fp32's range; and a negative control (a schedule that grows one step early must differ).
 * Host only; runs on CI. */
#include "engine/loss_scale.h"
#include "test.h"
#include <float.h>

/* The scale after `steps` steps with an overflow at the steps listed (sorted, -1 ended), from a fresh start. */
static loss_scale_t run(loss_scale_cfg_t c, int steps, const int *bad) {
    loss_scale_t s = loss_scale_start(c);
    for (int i = 0, b = 0; i < steps; i++) {
        s.found_inf = bad[b] == i;
        b += bad[b] == i;
        loss_scale_update(&s, c);
    }
    return s;
}

int main(void) {
    const loss_scale_cfg_t t = loss_scale_torch();
    const int none[] = {-1};
    loss_scale_t s = loss_scale_start(t);
    EXPECT(s.scale == 65536.0f && s.clean == 0 && s.skipped == 0, "start: scale %g clean %d", s.scale, s.clean);

    /* 1999 clean steps keep 2^16, the 2000th doubles it, and the count starts over */
    s = run(t, 1999, none);
    EXPECT(s.scale == 65536.0f && s.clean == 1999, "after 1999 clean steps: scale %g clean %d", s.scale, s.clean);
    s = run(t, 2000, none);
    EXPECT(s.scale == 131072.0f && s.clean == 0, "after 2000: scale %g clean %d", s.scale, s.clean);
    s = run(t, 4000, none);
    EXPECT(s.scale == 262144.0f, "after 4000: scale %g", s.scale);

    /* an overflow halves the scale, counts a skip, reports the step skipped, and restarts the clean count */
    s = loss_scale_start(t);
    s.found_inf = 1;
    int applied = loss_scale_update(&s, t);
    EXPECT(!applied && s.scale == 32768.0f && s.skipped == 1 && s.clean == 0 && !s.found_inf,
           "overflow: applied %d scale %g skipped %d clean %d flag %d", applied, s.scale, s.skipped, s.clean, s.found_inf);
    applied = loss_scale_update(&s, t);
    EXPECT(applied && s.clean == 1, "the next clean step: applied %d clean %d", applied, s.clean);
    const int at1500[] = {1500, -1};
    s = run(t, 3499, at1500);   /* 1500 clean, a skip, then 1998 clean: not yet */
    EXPECT(s.scale == 32768.0f && s.skipped == 1 && s.clean == 1998, "skip at 1500, 3499 steps: scale %g clean %d",
           s.scale, s.clean);
    s = run(t, 3501, at1500);   /* the 2000th clean step after the skip (step 3500) doubles it */
    EXPECT(s.scale == 65536.0f && s.clean == 0, "skip at 1500, 3501 steps: scale %g clean %d", s.scale, s.clean);
    const int burst[] = {0, 1, 2, 3, -1};
    s = run(t, 4, burst);
    EXPECT(s.scale == 4096.0f && s.skipped == 4, "four overflows: scale %g skipped %d", s.scale, s.skipped);

    /* never past fp32's range: the doubled value must be finite */
    loss_scale_cfg_t big = {FLT_MAX / 1.5f, 2.0f, 0.5f, 1};
    s = run(big, 3, none);
    EXPECT(s.scale == FLT_MAX / 1.5f && s.clean == 0, "no growth to inf: scale %g", s.scale);

    /* negative control: growing after interval - 1 clean steps is a different schedule, and the test sees it */
    loss_scale_cfg_t early = t;
    early.interval = t.interval - 1;
    EXPECT(run(early, 1999, none).scale != run(t, 1999, none).scale, "an early-growing schedule is not told apart");
    return test_summary();
}
