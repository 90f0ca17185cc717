/* precision.c — the maths of a study side by side in REPORT.md, for a model and dataset whose runs hold more than
 * one: a row pairs the configurations that differ in math only (strategy, GPUs, batch, schedule, M, link, learning
 * rate, what else differs, gradient dtype); per math the median steady epoch over seeds, its ratio to the reference
 * math's (tf32 where present, else the first), speedup and efficiency over single at the same batch and math, the
 * communication share of a step and the median final accuracy (a language model's: held-out loss). */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A row pairs the configurations that differ in math only (and in seed: each math's cells are medians over them). */
static int cmp_pair(const study_run_t *a, const study_run_t *b) {
    int c = study_cmp_row(a, b);
    return c ? c : study_cmp_config(a, b, STUDY_CMP_SKIP(RESULTS_KEY_math) | STUDY_CMP_COMMIT);
}

static int by_math(const void *a, const void *b) {
    return study_math_cmp(*(const char *const *)a, *(const char *const *)b);
}

static void row_fill(const study_runs_t *s, int g, const precision_t *t, precision_row_t *w,
                     const study_run_t *const *u, int n) {
    int nm = t->nm;
    w->best = mem_alloc((size_t)nm * sizeof *w->best);
    w->acc = mem_alloc((size_t)nm * sizeof *w->acc);
    double **cols[] = {&w->t, &w->ratio, &w->speedup, &w->efficiency, &w->comm, &w->exposed, &w->accuracy};
    for (size_t c = 0; c < sizeof cols / sizeof *cols; c++) *cols[c] = mem_alloc((size_t)nm * sizeof **cols[c]);
    w->pair = (int)(u[0] - s->run);
    const study_run_t **m = mem_alloc((size_t)n * sizeof *m);
    for (int j = 0; j < nm; j++) {   /* per math: its runs' median (the median-time run for the per-step cells) */
        int k = 0;
        for (int i = 0; i < n; i++)
            if (!strcmp(u[i]->math, t->math[j])) m[k++] = u[i];
        w->t[j] = study_stat_runs(m, k, study_run_epoch_s).med;
        /* a language model's held-out loss in its accuracy's place (report_quality) */
        w->accuracy[j] = study_quality_runs(m, k, s->grp[g].tokens).st.med;
        w->acc[j] = isnan(w->accuracy[j]) ? -1 : (int)(m[0] - s->run);
        const study_run_t *med = study_median_run(m, k);
        w->best[j] = med ? (int)(med - s->run) : -1;
    }
    free(m);
    const study_run_t *p = &s->run[w->pair];
    for (int j = 0; j < nm; j++) {
        const study_run_t *b = w->best[j] >= 0 ? &s->run[w->best[j]] : NULL;
        int t1 = study_t1_run(s, g, p->line_batch, t->math[j]);
        double step = b ? b->med[RESULTS_COL_step_ms] : NAN;
        w->ratio[j] = w->t[j] / w->t[t->ref];
        w->speedup[j] = t1 >= 0 ? s->run[t1].med[RESULTS_COL_epoch_s] / w->t[j] : NAN;
        w->efficiency[j] = isnan(w->speedup[j]) ? NAN : 100 * w->speedup[j] / p->gpus;
        w->comm[j] = b && !isnan(b->med[RESULTS_COL_comm_ms]) && !isnan(step) && step > 0
                         ? 100 * b->med[RESULTS_COL_comm_ms] / step : NAN;
        w->exposed[j] = b && !isnan(b->med[RESULTS_COL_exposed_comm_ms]) && !isnan(step) && step > 0
                            ? 100 * b->med[RESULTS_COL_exposed_comm_ms] / step : NAN;
    }
}

int precision_table(const study_runs_t *s, int g, precision_t *t) {
    memset(t, 0, sizeof *t);
    const study_group_t *gr = &s->grp[g];
    if (gr->maths.n < 2) return -1;
    t->nm = gr->maths.n;
    t->math = mem_alloc((size_t)t->nm * sizeof *t->math);
    memcpy(t->math, gr->maths.v, (size_t)t->nm * sizeof *t->math);
    qsort(t->math, (size_t)t->nm, sizeof *t->math, by_math);   /* ties: none, the names are distinct */
    for (int j = 0; j < t->nm; j++)
        if (strcmp(t->math[j], "tf32") == 0) t->ref = j;
    t->grads = gr->gds.n > 1;
    int n;
    const study_run_t **u = study_runs_sorted(s, g, NULL, cmp_pair, &n);
    t->row = mem_zalloc((size_t)(n ? n : 1), sizeof *t->row);
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && cmp_pair(u[i], u[j]) == 0) j++;
        row_fill(s, g, t, &t->row[t->nrow++], u + i, j - i);
        i = j;
    }
    free(u);
    return 0;
}

void precision_free(precision_t *t) {
    for (int i = 0; i < t->nrow; i++) {
        precision_row_t *w = &t->row[i];
        free(w->best), free(w->acc), free(w->t), free(w->ratio), free(w->speedup), free(w->efficiency);
        free(w->comm), free(w->exposed), free(w->accuracy);
    }
    free(t->row);
    free(t->math);
    memset(t, 0, sizeof *t);
}

void report_precision(const report_t *r, FILE *md, int g) {
    const study_runs_t *s = &r->st;
    precision_t t;
    if (precision_table(s, g, &t)) return;
    const char *const *pm = t.math;
    int nm = t.nm, ref = t.ref, grads = t.grads;

    fprintf(md, "### ");
    for (int j = 0; j < nm; j++) fprintf(md, "%s%s", j ? " against " : "", pm[j]);
    fprintf(md,
            "\n\nEach row holds the configurations that differ in math only (medians over seeds, as above); a column "
            "m / %s is the ratio of the two epoch times. ",
            pm[ref]);
    fprintf(md,
            "Speedup and efficiency are over `%s` at the same batch and math; communication is the gradient "
            "reduction's time per step as a share of the step, with the part the compute waited for (exposed) in "
            "parentheses.\n\n",
            study_ref(s));
    fprintf(md, "| strategy | GPUs | batch | lr%s", grads ? " | grads" : "");
    for (int j = 0; j < nm; j++) fprintf(md, " | epoch (s) %s", pm[j]);
    for (int j = 0; j < nm; j++)
        if (j != ref) fprintf(md, " | %s / %s", pm[j], pm[ref]);
    const report_quality_t *q = report_quality(s->grp[g].tokens);
    const char *const cols[] = {"speedup", "efficiency", "communication", q->head};
    for (int c = 0; c < 4; c++)
        for (int j = 0; j < nm; j++) fprintf(md, " | %s %s", cols[c], pm[j]);
    fprintf(md, " |\n|---|---:|---:|---:%s", grads ? "|---" : "");
    for (int j = 0; j < nm + (nm - 1) + 4 * nm; j++) fprintf(md, "|---:");
    fprintf(md, "|\n");

    for (int i = 0; i < t.nrow; i++) {
        const precision_row_t *w = &t.row[i];
        const study_run_t *u = &s->run[w->pair];
        bytes_t b = {0};
        report_batch_word(&b, u);
        fprintf(md, "| %s", u->strategy);
        if (u->pipe) fprintf(md, " %s, M=%s", u->sched, u->mb);
        fprintf(md, " | %d", u->gpus);
        if (*u->variant) fprintf(md, " (%s)", u->variant);
        if (*u->link) fprintf(md, " (%s)", u->link);
        fprintf(md, " | %s | %s", b.s, u->lr);
        free(b.s);
        if (grads) fprintf(md, " | %s", *u->gd ? u->gd : "—");
        for (int j = 0; j < nm; j++) fprintf(md, " | %s", report_f3(w->t[j]).s);
        for (int j = 0; j < nm; j++)
            if (j != ref) fprintf(md, " | %s", report_f2(w->ratio[j]).s);
        for (int j = 0; j < nm; j++) fprintf(md, " | %s", report_f2(w->speedup[j]).s);
        for (int j = 0; j < nm; j++) fprintf(md, " | %s", report_pct(w->efficiency[j]).s);
        for (int j = 0; j < nm; j++) {
            if (isnan(w->comm[j]))
                fprintf(md, " | —");
            else if (isnan(w->exposed[j]))
                fprintf(md, " | %.1f %%", w->comm[j]);
            else
                fprintf(md, " | %.1f %% (%.1f %%)", w->comm[j], w->exposed[j]);
        }
        for (int j = 0; j < nm; j++) fprintf(md, " | %s", report_fmt(q->fmt, w->accuracy[j]).s);
        fprintf(md, " |\n");
    }
    fprintf(md, "\n");
    precision_free(&t);
}
