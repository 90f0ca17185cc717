/* test_batch_fit.c — the critical-batch fit (report/batch.c) on synthetic curves with a known answer: exact steps of
 * S = S_min + E_min / B, the same with a known perturbation, a curve that never flattens and one that does not fall
 * (no critical batch inside the batches run, said so rather than a number). */
#include "report/report.h"
#include "test.h"

int main(void) {
    const double b[5] = {256, 512, 1024, 2048, 4096};
    double s[5];
    batch_fit_t f;
    for (int i = 0; i < 5; i++) s[i] = 1000 + 512000 / b[i];   /* S_min 1000, E_min 512000: B_crit 512 */
    EXPECT(report_batch_fit(b, s, 5, &f) == 0 && f.ok && fabs(f.smin - 1000) < 1e-6 && fabs(f.emin - 512000) < 1e-3 &&
               fabs(f.bcrit - 512) < 1e-6 && f.se < 1e-6 && fabs(f.r2 - 1) < 1e-12,
           "exact curve: S_min %g, E_min %g, B_crit %g (se %g, R2 %g)", f.smin, f.emin, f.bcrit, f.se, f.r2);
    const double wiggle[5] = {1.03, 0.97, 1.02, 0.99, 1.01};
    for (int i = 0; i < 5; i++) s[i] *= wiggle[i];
    EXPECT(report_batch_fit(b, s, 5, &f) == 0 && f.ok && fabs(f.bcrit - 512) < 0.15 * 512 && f.se > 0 && f.r2 < 1,
           "perturbed by up to 3 %%: B_crit %g ± %g", f.bcrit, f.se);
    for (int i = 0; i < 5; i++) s[i] = 512000 / b[i];   /* perfect scaling: no flattening seen */
    EXPECT(report_batch_fit(b, s, 5, &f) == 0 && !f.ok && f.emin > 0 && isnan(f.bcrit),
           "steps that halve with each doubling: no critical batch below 4096 (S_min %g)", f.smin);
    for (int i = 0; i < 5; i++) s[i] = 700;   /* flat from the start */
    EXPECT(report_batch_fit(b, s, 5, &f) == 0 && !f.ok && isnan(f.bcrit), "flat steps: no critical batch above 256");
    EXPECT(report_batch_fit(b, s, 1, &f) == -1, "one batch fits nothing");
    return test_summary();
}
