/* answer.c — the answer's row choice (answer.h): runs sorted into tables, rows and settings, a setting chosen per row
 * (time to target, else speed within the accuracy's noise), its statistics against the reference, the picks. */
#include "answer.h"
#include "target.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One table: a group and a math. */
static int cmp_table(const study_run_t *a, const study_run_t *b) {
    int c = study_cmp_int(a->group, b->group);
    return c ? c : study_math_cmp(a->math, b->math);
}
/* One row: a strategy with what tells its runs apart, on a GPU count, at a batch: a configuration but its seed, its
 * learning rate and its micro-batches, which are its settings. */
static int cmp_answer_row(const study_run_t *a, const study_run_t *b) {
    int c = cmp_table(a, b);
    if (!c) c = study_cmp_int(study_run_class(a), study_run_class(b));
    if (!c) c = strcmp(a->strategy, b->strategy);
    if (!c) c = study_cmp_int(a->gpus, b->gpus);
    if (!c) c = study_cmp_int(a->line_batch, b->line_batch);
    if (!c) c = strcmp(a->link, b->link);
    if (!c) c = strcmp(a->sched, b->sched);
    const unsigned settings = STUDY_CMP_SKIP(RESULTS_KEY_lr) | STUDY_CMP_SKIP(RESULTS_KEY_micro_batches);
    return c ? c : study_cmp_config(a, b, settings | STUDY_CMP_COMMIT);
}
/* One setting of a row: a configuration but its seed (its runs are the seeds). */
static int cmp_setting(const study_run_t *a, const study_run_t *b) {
    int c = cmp_answer_row(a, b);
    return c ? c : study_cmp_config(a, b, STUDY_CMP_COMMIT);
}

/* Whether setting a (its time to target over its seeds, n runs) trains the model sooner than b: every seed reached the
 * target, in less median time. */
static int sooner(study_stat_t a, int na, study_stat_t b, int nb) {
    int a_all = a.n == na && na > 0, b_all = b.n == nb && nb > 0;
    return a_all && (!b_all || a.med < b.med);
}

study_quality_t study_answer_quality(const study_answer_row_t *w, int lower_is_better) {
    return lower_is_better ? (study_quality_t){w->loss, w->loss_lo, w->loss_hi, 1, 1}
                           : (study_quality_t){w->acc, w->acc_lo, w->acc_hi, 0, 1};
}

double study_answer_change(const study_answer_row_t *w, int lower_is_better) {
    return lower_is_better ? w->dloss : w->dacc;
}

/* The row of runs u[0..n) (one row key): its settings, and of them the soonest to the target where one was set
 * (every seed reached it), else the fastest whose quality held against the best setting's (study_quality_held). */
static void row_make(study_answer_row_t *w, const study_run_t *const *u, int n) {
    const int lm = u[0]->tokens;   /* the row's runs are one group's, of its kind */
    study_quality_best_t best = {0};
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && cmp_setting(u[i], u[j]) == 0) j++;
        study_quality_t q = study_quality_runs(u + i, j - i, lm);
        study_quality_best_add(&best, &q);
        i = j;
    }
    memset(w, 0, sizeof *w);
    int chosen_held = 0;
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && cmp_setting(u[i], u[j]) == 0) j++;
        study_stat_t ips = study_stat_steady(u + i, j - i, study_run_tput_col(u[i])),
                     tt = study_stat_runs(u + i, j - i, study_run_tt_s);
        /* both kinds' qualities: the row keeps both, and its kind's is what a faster setting must not give up */
        study_quality_t qa = study_quality_runs(u + i, j - i, 0), ql = study_quality_runs(u + i, j - i, 1);
        int held = study_quality_held(lm ? &ql : &qa, study_quality_best(&best));
        int faster = !isnan(ips.med) && !(w->ips.med >= ips.med);
        int pick = !w->u || sooner(tt, j - i, w->tt, w->n);
        if (!pick && !sooner(w->tt, w->n, tt, j - i))   /* neither reached the target sooner: by accuracy, speed */
            pick = (held && !chosen_held) || (held == chosen_held && faster);
        if (pick) {
            w->u = u + i, w->n = j - i, w->ips = ips, w->tt = tt;
            w->acc = qa.st, w->acc_lo = qa.lo, w->acc_hi = qa.hi;
            w->loss = ql.st, w->loss_lo = ql.lo, w->loss_hi = ql.hi;
            w->tt_steps = study_stat_runs(u + i, j - i, study_run_tt_steps);
            chosen_held = held;
        }
        i = j;
    }
    w->run = w->u[0];
    w->target = 100 * w->run->tt.target;
    w->status = "ok";
    for (int i = 0; i < w->n; i++)
        if (strcmp(w->u[i]->fstat, "ok") != 0) {
            w->status = w->u[i]->fstat;
            break;
        }
}

/* The reference row at each row's batch; speedup, efficiency and the change of accuracy (and of held-out loss)
 * against it; whether the accuracy held (against the reference; a row on one GPU, against the best of the group's
 * rows on one GPU): a language model's row by its held-out loss. */
static void table_finish(study_answer_table_t *t, const study_answer_row_t *best_one) {
    for (int i = 0; i < t->n; i++) {
        study_answer_row_t *w = &t->row[i];
        /* the reference row at its batch, of its own recipe where there are several (sgd and lars); a reference's
         * row is its own */
        w->ref = study_is_reference(w->run->info) ? i : -1;
        for (int k = 0; k < t->n && w->ref < 0; k++)
            if (study_is_reference(t->row[k].run->info) && t->row[k].run->line_batch == w->run->line_batch &&
                !study_cmp_recipe(t->row[k].run->rows[0], w->run->rows[0]))
                w->ref = k;
        for (int k = 0; k < t->n && w->ref < 0; k++)
            if (study_is_reference(t->row[k].run->info) && t->row[k].run->line_batch == w->run->line_batch)
                w->ref = k;
        const study_answer_row_t *r = w->ref >= 0 ? &t->row[w->ref] : NULL;
        w->speedup = r ? w->ips.med / r->ips.med : NAN;
        w->efficiency = w->speedup / w->run->gpus;
        w->dacc = r ? w->acc.med - r->acc.med : NAN;
        w->dloss = r ? w->loss.med - r->loss.med : NAN;
        int lm = w->run->tokens;
        const study_answer_row_t *o = best_one;
        study_quality_t q = study_answer_quality(w, lm);
        if (w->run->gpus == 1 && o && o != w) {
            study_quality_t qo = study_answer_quality(o, lm);
            w->below = study_quality_fell(&qo, &q);
        }
        if (!study_is_reference(w->run->info) && r) {
            study_quality_t qr = study_answer_quality(r, lm);
            w->fell = study_quality_fell(&qr, &q);
        }
    }
}

void study_answer_make(const study_runs_t *s, study_answer_t *a) {
    memset(a, 0, sizeof *a);
    a->s = s;
    int n, cap = 0;
    a->scratch = study_runs_sorted(s, -1, NULL, cmp_setting, &n);
    const study_run_t **u = a->scratch;
    for (int i = 0; i < n;) {   /* a table per group and math */
        int j = i;
        while (j < n && cmp_table(u[i], u[j]) == 0) j++;
        study_answer_table_t *t = MEM_PUSH(a->t, a->n, cap);
        t->group = u[i]->group;
        t->math = u[i]->math;
        int rcap = 0;
        for (int k = i; k < j;) {
            int e = k;
            while (e < j && cmp_answer_row(u[k], u[e]) == 0) e++;
            row_make(MEM_PUSH(t->row, t->n, rcap), u + k, e - k);
            k = e;
        }
        i = j;
    }
    for (int i = 0; i < a->n; i++) {   /* the best accuracy (least held-out loss) on one GPU of each group */
        const study_answer_row_t *best = NULL;
        for (int k = 0; k < a->n; k++)
            for (int r = 0; a->t[k].group == a->t[i].group && r < a->t[k].n; r++) {
                const study_answer_row_t *w = &a->t[k].row[r];
                if (w->run->gpus != 1) continue;
                study_quality_t q = study_answer_quality(w, w->run->tokens), qb;
                if (best) qb = study_answer_quality(best, w->run->tokens);
                if (study_quality_better(&q, best ? &qb : NULL)) best = w;
            }
        table_finish(&a->t[i], best);
    }
}

void study_answer_free(study_answer_t *a) {
    for (int i = 0; i < a->n; i++) free(a->t[i].row);
    free(a->t);
    free(a->scratch);
    memset(a, 0, sizeof *a);
}

/* The soonest to target on `gpus` GPUs (every seed reached it), and the row of the most images/s beside it where that
 * is another. 0 when no row there had a target. */
static int soonest(const study_answer_t *a, int g, int gpus, int *ti, int *ri, int *at, int *ar) {
    int any = 0;
    for (int t = 0; t < a->n; t++)
        for (int r = 0; a->t[t].group == g && r < a->t[t].n; r++) {
            const study_answer_row_t *w = &a->t[t].row[r];
            if (w->run->gpus != gpus || !study_answer_has_target(w)) continue;
            any = 1;
            if (sooner(w->tt, w->n, *ti < 0 ? (study_stat_t){NAN, NAN, NAN, 0} : a->t[*ti].row[*ri].tt,
                       *ti < 0 ? 0 : a->t[*ti].row[*ri].n))
                *ti = t, *ri = r;
            if (!isnan(w->ips.med) && (*at < 0 || w->ips.med > a->t[*at].row[*ar].ips.med)) *at = t, *ar = r;
        }
    if (*ti >= 0 && *at == *ti && *ar == *ri) *at = *ar = -1;
    return any;
}

int study_answer_has_target(const study_answer_row_t *w) { return !isnan(w->target); }

int study_answer_target_mode(const study_answer_t *a, int g, int gpus) {
    for (int t = 0; t < a->n; t++)
        for (int r = 0; a->t[t].group == g && r < a->t[t].n; r++)
            if (a->t[t].row[r].run->gpus == gpus && study_answer_has_target(&a->t[t].row[r])) return 1;
    return 0;
}

int study_answer_fastest(const study_answer_t *a, int g, int gpus, int *ti, int *ri, int *at, int *ar) {
    *ti = *ri = *at = *ar = -1;
    if (soonest(a, g, gpus, ti, ri, at, ar)) return *ti >= 0;
    for (int t = 0; t < a->n; t++)
        for (int r = 0; a->t[t].group == g && r < a->t[t].n; r++) {
            const study_answer_row_t *w = &a->t[t].row[r];
            if (w->run->gpus != gpus || isnan(w->ips.med)) continue;
            /* one GPU: a row below the best accuracy is no answer; more: the fastest is, and a held one beside it */
            int alt = gpus == 1 ? w->below : 0;
            int *bt = alt ? at : ti, *br = alt ? ar : ri;
            if (*bt < 0 || w->ips.med > a->t[*bt].row[*br].ips.med) *bt = t, *br = r;
            if (gpus > 1 && !w->fell && (*at < 0 || w->ips.med > a->t[*at].row[*ar].ips.med)) *at = t, *ar = r;
        }
    if (*ti < 0) return 0;
    const study_answer_row_t *pick = &a->t[*ti].row[*ri];
    if (*at >= 0 && (gpus > 1 ? !pick->fell : a->t[*at].row[*ar].ips.med <= pick->ips.med)) *at = *ar = -1;
    return 1;
}

int study_answer_soonest_gpus(const study_answer_t *a, int g, double *tt, int *batch) {
    int best = 0;
    *tt = NAN;
    *batch = 0;
    for (int t = 0; t < a->n; t++)
        for (int r = 0; a->t[t].group == g && r < a->t[t].n; r++) {
            int gpus = a->t[t].row[r].run->gpus, ti, ri, at, ar;
            if (gpus == best || !study_answer_fastest(a, g, gpus, &ti, &ri, &at, &ar)) continue;
            const study_answer_row_t *w = &a->t[ti].row[ri];
            /* the pick under a target has every seed at it; without one it has no time to target */
            if (!(w->tt.n == w->n && w->tt.med > 0)) continue;
            if (!best || w->tt.med < *tt || (w->tt.med == *tt && gpus < best))
                best = gpus, *tt = w->tt.med, *batch = w->run->global_batch;
        }
    return best;
}
