/* target.c — time to target, the noise of a run's accuracy and its noise scale (target.h): each from the rows the
 * writer wrote, in one place for the run's summary, the answer and the report. */
#include "target.h"
#include "../engine/gns.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The rows in epoch order (n small: a run has at most a few hundred). */
static const study_row_t **by_epoch(const study_row_t *const *rows, int n) {
    const study_row_t **r = malloc((size_t)(n > 0 ? n : 1) * sizeof *r);
    if (!r) return NULL;
    memcpy(r, rows, (size_t)n * sizeof *r);
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && r[j - 1]->epoch > r[j]->epoch; j--) {
            const study_row_t *x = r[j];
            r[j] = r[j - 1], r[j - 1] = x;
        }
    return r;
}

int study_time_to_target(const study_row_t *const *rows, int n, double target, study_target_t *t) {
    memset(t, 0, sizeof *t);
    t->target = NAN;
    for (int i = 0; !(target > 0) && i < n; i++)
        if (rows[i]->target_acc > 0) target = rows[i]->target_acc;
    if (!(target > 0)) return 0;
    t->target = target;
    const study_row_t **r = by_epoch(rows, n);
    if (!r) return 0;
    int evals = 0;
    for (int i = 0; i < n && !t->reached; i++) {
        const study_row_t *w = r[i];
        if (w->epoch < 1) continue;
        if (study_status_parse(w->status) != RUN_OK || !(w->stats.epoch_s >= 0) || w->stats.steps < 0) break;
        t->epoch = w->epoch;
        t->train_s += w->stats.epoch_s;
        t->steps += w->stats.steps;
        t->images += (double)w->stats.steps * w->global_batch;
        if (w->eval_s >= 0) t->eval_s += w->eval_s, evals++;
        t->reached = w->test_acc >= target;
    }
    if (!evals) t->eval_s = NAN;
    free(r);
    return t->reached;
}

/* The extremes of the last k ok epochs' values of one measure (the test accuracy, or the held-out loss): one
 * definition of a seed's noise for both. */
static void last_spread(const study_row_t *const *rows, int n, int k, int loss, double *lo, double *hi) {
    *lo = *hi = NAN;
    const study_row_t **r = by_epoch(rows, n);
    if (!r) return;
    for (int i = n - 1, got = 0; i >= 0 && got < k; i--) {
        double a = loss ? r[i]->test_loss : r[i]->test_acc;
        /* a diverged epoch's accuracy or loss is no measure of a seed's noise */
        if (r[i]->epoch < 1 || a < 0 || isnan(a) || study_status_parse(r[i]->status) != RUN_OK) continue;
        if (!(*lo <= a)) *lo = a;
        if (!(*hi >= a)) *hi = a;
        got++;
    }
    free(r);
}

void study_acc_spread(const study_row_t *const *rows, int n, int k, double *lo, double *hi) {
    last_spread(rows, n, k, 0, lo, hi);
}

void study_loss_spread(const study_row_t *const *rows, int n, int k, double *lo, double *hi) {
    last_spread(rows, n, k, 1, lo, hi);
}

int study_cmp_recipe(const study_row_t *a, const study_row_t *b) {
    int c = strcmp(study_cell(a->optimizer), study_cell(b->optimizer));
    if (!c) c = strcmp(study_cell(a->lr_schedule), study_cell(b->lr_schedule));
    if (!c) c = (a->warmup_epochs > b->warmup_epochs) - (a->warmup_epochs < b->warmup_epochs);
    return c;
}

int study_noise_scale(const study_row_t *const *rows, int n, double *g2, double *trace, double *b_simple) {
    double small = 0, big = 0;
    int k = 0, bs = -1, bb = -1;
    *g2 = *trace = *b_simple = NAN;
    for (int i = 0; i < n; i++) {
        const epoch_stats_t *s = &rows[i]->stats;
        /* an epoch whose squared norms overflowed (an fp16 step before its loss scale backed off) or that did not end
         * ok measures nothing: it is left out, not allowed to poison the run's means */
        if (!(s->gns_small_sq >= 0) || !(s->gns_big_sq >= 0) || !isfinite(s->gns_small_sq) ||
            !isfinite(s->gns_big_sq) || s->gns_b_small < 1 || s->gns_b_big < 1 ||
            study_status_parse(rows[i]->status) != RUN_OK)
            continue;
        if (k && (s->gns_b_small != bs || s->gns_b_big != bb)) return -1;   /* one run measures at one pair */
        bs = s->gns_b_small, bb = s->gns_b_big;
        small += s->gns_small_sq, big += s->gns_big_sq, k++;
    }
    gns_est_t e;
    if (!k || gns_estimate(small / k, big / k, bs, bb, &e) != 0) return -1;
    *g2 = e.g2, *trace = e.trace, *b_simple = gns_b_simple(e.trace, e.g2);
    return 0;
}
