/* gns.c — the gradient noise scale's estimator (gns.h): two squared norms in, |G|^2 and tr(Sigma) out. The device
 * part (the squared norms of a step's gradients) is engine/optim.cu's. */
#include "gns.h"

#include <math.h>

int gns_estimate(double small_sq, double big_sq, double b_small, double b_big, gns_est_t *est) {
    est->g2 = est->trace = NAN;
    if (!(b_small > 0 && b_big > b_small) || !isfinite(small_sq) || !isfinite(big_sq)) return -1;
    est->g2 = (b_big * big_sq - b_small * small_sq) / (b_big - b_small);
    est->trace = (small_sq - big_sq) / (1.0 / b_small - 1.0 / b_big);
    return 0;
}

double gns_b_simple(double trace, double g2) {
    return isfinite(trace) && isfinite(g2) && g2 > 0 ? trace / g2 : NAN;
}
