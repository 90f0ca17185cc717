/* answer_gpus.c — across the GPU counts of a study with a target accuracy (answer.h): which count trains the model
 * soonest, where more GPUs stop buying time to a trained model. */
#include "answer.h"
#include "report.h"

#include <math.h>

int answer_soonest_gpus(const answer_t *a, int g, double *tt, int *batch) {
    int best = 0;
    *tt = NAN;
    *batch = 0;
    for (int t = 0; t < a->n; t++)
        for (int r = 0; a->t[t].group == g && r < a->t[t].n; r++) {
            int gpus = a->t[t].row[r].run->gpus, ti, ri, at, ar;
            if (gpus == best || !answer_fastest(a, g, gpus, &ti, &ri, &at, &ar)) continue;
            const answer_row_t *w = &a->t[ti].row[ri];
            /* the pick under a target has every seed at it; without one it has no time to target */
            if (!(w->tt.n == w->n && w->tt.med > 0)) continue;
            if (!best || w->tt.med < *tt || (w->tt.med == *tt && gpus < best))
                best = gpus, *tt = w->tt.med, *batch = w->run->global_batch;
        }
    return best;
}

void answer_stop_helping(bytes_t *b, const answer_t *a, int g, int gpus) {
    double tt;
    int batch, best = answer_soonest_gpus(a, g, &tt, &batch);
    if (best > 0 && best < gpus)
        text_printf(b, "; more GPUs stop helping past %d GPU%s (global batch %d), the soonest to the target at %.2f s",
                    best, best == 1 ? "" : "s", batch, tt);
}
