/* test_progress.c — a study's progress line: the run number over every sweep and the ETA from the mean setup and
 * epoch so far, applied to what is left, with skipped and diverged runs taken out. */
#include "bench/progress.h"
#include "test.h"

static int near(double a, double b) { return fabs(a - b) < 1e-12; }

static void test_progress(void) {
    progress_t p;
    progress_init(&p, 3, 6);    /* 3 runs of 2 epochs */
    EXPECT(progress_eta(&p) < 0, "no estimate before an epoch is timed");
    EXPECT(progress_next_run(&p) == 1, "run 1");
    progress_setup_done(&p, 2.0);
    progress_epoch_done(&p, 1.0);
    /* 5 epochs at 1 s and 2 setups at 2 s are left */
    EXPECT(near(progress_eta(&p), 9.0), "eta %g, want 9", progress_eta(&p));
    progress_epoch_done(&p, 3.0);
    EXPECT(near(progress_eta(&p), 4 * 2.0 + 2 * 2.0), "eta %g, want 12", progress_eta(&p));
    EXPECT(progress_next_run(&p) == 2, "run 2");
    progress_drop(&p, 2, 1);    /* run 2 skipped: neither its setup nor its epochs come */
    EXPECT(near(progress_eta(&p), 2 * 2.0 + 1 * 2.0), "eta %g after a skip, want 6", progress_eta(&p));
    EXPECT(progress_next_run(&p) == 3 && p.runs == 3, "run 3 of 3");
    progress_setup_done(&p, 4.0);
    progress_epoch_done(&p, 2.0);
    progress_drop(&p, 5, 0);    /* diverged: the rest of it is not run (more than is left clamps at 0) */
    EXPECT(near(progress_eta(&p), 0), "eta %g at the end, want 0", progress_eta(&p));
}

int main(void) {
    test_progress();
    return test_summary();
}
