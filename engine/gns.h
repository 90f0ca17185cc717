/* gns.h — the gradient noise scale (McCandlish et al. 2018, "An Empirical Model of Large-Batch Training", Appendix A)
 * from squared gradient norms at two batch sizes: the unbiased estimates of |G|^2 and tr(Sigma). Host-only. */
#pragma once

/* One estimate from the means of |G_small|^2 and |G_big|^2 measured at batches b_small < b_big on the same
 * parameters:
 *   |G|^2     = (b_big |G_big|^2 - b_small |G_small|^2) / (b_big - b_small)
 *   tr(Sigma) = (|G_small|^2 - |G_big|^2) / (1 / b_small - 1 / b_big)
 * Each is unbiased; their ratio B_simple = tr(Sigma) / |G|^2 is not, so a run's noise scale is the ratio of the two
 * estimates averaged apart (gns_b_simple), never a mean of per-step ratios. */
typedef struct {
    double g2;      /* |G|^2 */
    double trace;   /* tr(Sigma) */
} gns_est_t;

#ifdef __cplusplus
extern "C" {
#endif
/* 0, or -1 (est NAN) where the batches are not 0 < b_small < b_big or a mean is not finite. */
int gns_estimate(double small_sq, double big_sq, double b_small, double b_big, gns_est_t *est);
/* B_simple = trace / g2: NAN unless both are finite and g2 > 0 (a noise scale needs a signal to measure against). */
double gns_b_simple(double trace, double g2);
#ifdef __cplusplus
}
#endif
