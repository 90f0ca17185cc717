/* quality.c — a trained model's quality and its rules (quality.h): "better", "fell" and "held" once for an accuracy
 * and a held-out loss, the loss read through its sign so that one comparison serves both directions. */
#include "quality.h"

#include <math.h>

study_quality_t study_quality_runs(const study_run_t *const *u, int n, int lower_is_better) {
    study_quality_t q = {.lower_is_better = lower_is_better, .unit = 1};
    q.st = study_stat_runs(u, n, lower_is_better ? study_run_floss : study_run_facc);
    /* one seed has no range: its last epochs' spread is its noise */
    q.lo = n > 1 ? q.st.min : !n ? NAN : lower_is_better ? u[0]->loss_lo : u[0]->acc_lo;
    q.hi = n > 1 ? q.st.max : !n ? NAN : lower_is_better ? u[0]->loss_hi : u[0]->acc_hi;
    return q;
}

/* x as "higher is better" reads it: a held-out loss negated (exactly: -x < -y where x > y, NAN stays NAN). */
static double up(const study_quality_t *q, double x) { return q->lower_is_better ? -x : x; }
/* The better and the worse end of its noise, read so. */
static double better_end(const study_quality_t *q) { return up(q, q->lower_is_better ? q->lo : q->hi); }
static double worse_end(const study_quality_t *q) { return up(q, q->lower_is_better ? q->hi : q->lo); }

int study_quality_better(const study_quality_t *a, const study_quality_t *b) {
    return !isnan(a->st.med) && (!b || up(a, a->st.med) > up(b, b->st.med));
}

int study_quality_fell(const study_quality_t *a, const study_quality_t *b) {
    return better_end(b) < worse_end(a);   /* NAN compares false: no value, no finding */
}

int study_quality_held(const study_quality_t *q, const study_quality_t *best) {
    if (!best) return 1;
    if (q->lower_is_better)   /* no points to count: held while the noises overlap */
        return isnan(worse_end(best)) || (!isnan(better_end(q)) && !study_quality_fell(best, q));
    return isnan(best->st.med) || (!isnan(q->st.med) && q->st.med >= best->st.med - STUDY_ACC_POINTS * q->unit);
}

void study_quality_best_add(study_quality_best_t *b, const study_quality_t *q) {
    if (study_quality_better(q, study_quality_best(b))) b->best = *q, b->got = 1;
}

const study_quality_t *study_quality_best(const study_quality_best_t *b) { return b->got ? &b->best : NULL; }
