/* precision.c — the maths of a study side by side in REPORT.md, for a model and dataset whose runs hold more than
 * one: a row pairs the runs that differ in math only (strategy, GPUs, batch, schedule, M, link, gradient dtype); per
 * math the best steady epoch, its ratio to the reference math's (tf32 where present, else the first), speedup and
 * efficiency over single at the same batch and math, the communication share of a step and the best accuracy. */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_prow(const void *a, const void *b) {
    return strcmp(((const precision_row_t *)a)->key, ((const precision_row_t *)b)->key);
}

/* The group's maths in study order into pm; returns how many. */
static int maths(const study_runs_t *s, int g, const char *pm[PRECISION_MAX]) {
    char key[PRECISION_MAX][40];
    int n = 0;
    for (int i = 0; i < s->nr && n < PRECISION_MAX; i++) {
        const run_t *u = &s->run[i];
        if (u->group != g) continue;
        int j = 0;
        while (j < n && strcmp(pm[j], u->math)) j++;
        if (j < n) continue;
        pm[n] = u->math;
        char rk[24];
        study_math_rank(rk, sizeof rk, u->math);
        snprintf(key[n], sizeof key[n], "%s\034%s", rk, u->math);
        n++;
    }
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && strcmp(key[j - 1], key[j]) > 0; j--) {
            char t[40];
            memcpy(t, key[j], 40);
            memcpy(key[j], key[j - 1], 40);
            memcpy(key[j - 1], t, 40);
            const char *p = pm[j];
            pm[j] = pm[j - 1];
            pm[j - 1] = p;
        }
    return n;
}

int precision_table(const study_runs_t *s, int g, precision_t *t) {
    memset(t, 0, sizeof *t);
    const group_t *gr = &s->grp[g];
    if (gr->nm < 2) return -1;
    t->nm = maths(s, g, t->math);
    for (int j = 0; j < t->nm; j++)
        if (strcmp(t->math[j], "tf32") == 0) t->ref = j;
    t->grads = gr->ngd > 1;
    t->row = calloc((size_t)(s->nr ? s->nr : 1), sizeof *t->row);
    if (!t->row) return -1;
    for (int i = 0; i < s->nr; i++) {
        const run_t *u = &s->run[i];
        if (u->group != g) continue;
        char k[600] = "", rk[24];
        key_row(k, sizeof k, u);
        study_math_rank(rk, sizeof rk, u->gd);
        key_str(k, sizeof k, rk);
        int j = 0;
        while (j < t->nrow && strcmp(t->row[j].key, k)) j++;
        if (j == t->nrow) {
            snprintf(t->row[j].key, sizeof t->row[j].key, "%s", k);
            t->row[j].pair = i;
            for (int m = 0; m < PRECISION_MAX; m++) t->row[j].best[m] = t->row[j].acc[m] = -1;
            t->nrow++;
        }
        int m = 0;
        while (m < t->nm && strcmp(t->math[m], u->math)) m++;
        if (m == t->nm) continue;
        precision_row_t *w = &t->row[j];
        if (!isnan(u->tmed) && (w->best[m] < 0 || u->tmed < s->run[w->best[m]].tmed)) w->best[m] = i;
        if (!isnan(u->facc) && (w->acc[m] < 0 || u->facc > s->run[w->acc[m]].facc)) w->acc[m] = i;
    }
    qsort(t->row, (size_t)t->nrow, sizeof *t->row, cmp_prow);
    for (int i = 0; i < t->nrow; i++) {
        precision_row_t *w = &t->row[i];
        const run_t *u = &s->run[w->pair];
        for (int j = 0; j < t->nm; j++) {
            const run_t *b = w->best[j] >= 0 ? &s->run[w->best[j]] : NULL,
                        *ref = w->best[t->ref] >= 0 ? &s->run[w->best[t->ref]] : NULL;
            int t1 = study_t1_run(s, g, u->bk, t->math[j]);
            w->t[j] = b ? b->tmed : NAN;
            w->ratio[j] = b && ref ? b->tmed / ref->tmed : NAN;
            w->speedup[j] = b && t1 >= 0 ? s->run[t1].tmed / b->tmed : NAN;
            w->efficiency[j] = isnan(w->speedup[j]) ? NAN : 100 * w->speedup[j] / u->gpus;
            w->comm[j] = b && !isnan(b->qmed) && !isnan(b->smed) && b->smed > 0 ? 100 * b->qmed / b->smed : NAN;
            w->exposed[j] = b && !isnan(b->xmed) && !isnan(b->smed) && b->smed > 0 ? 100 * b->xmed / b->smed : NAN;
            w->accuracy[j] = w->acc[j] >= 0 ? s->run[w->acc[j]].facc : NAN;
        }
    }
    return 0;
}

void precision_free(precision_t *t) {
    free(t->row);
    memset(t, 0, sizeof *t);
}

void report_precision(report_t *r, FILE *md, int g) {
    const study_runs_t *s = &r->st;
    precision_t t;
    if (precision_table(s, g, &t)) return;
    const char *const *pm = t.math;
    int nm = t.nm, ref = t.ref, grads = t.grads;

    fprintf(md, "### ");
    for (int j = 0; j < nm; j++) fprintf(md, "%s%s", j ? " against " : "", pm[j]);
    fprintf(md,
            "\n\nEach row holds the runs that differ in math only (the best over learning rates and seeds, as above); "
            "a column m / %s is the ratio of the two epoch times. ",
            pm[ref]);
    fprintf(md,
            "Speedup and efficiency are over `%s` at the same batch and math; communication is the gradient "
            "reduction's time per step as a share of the step, with the part the compute waited for (exposed) in "
            "parentheses.\n\n",
            s->ref);
    fprintf(md, "| strategy | GPUs | batch%s", grads ? " | grads" : "");
    for (int j = 0; j < nm; j++) fprintf(md, " | epoch (s) %s", pm[j]);
    for (int j = 0; j < nm; j++)
        if (j != ref) fprintf(md, " | %s / %s", pm[j], pm[ref]);
    static const char *const cols[] = {"speedup", "efficiency", "communication", "final test acc"};
    for (int c = 0; c < 4; c++)
        for (int j = 0; j < nm; j++) fprintf(md, " | %s %s", cols[c], pm[j]);
    fprintf(md, " |\n|---|---:|---:%s", grads ? "|---" : "");
    for (int j = 0; j < nm + (nm - 1) + 4 * nm; j++) fprintf(md, "|---:");
    fprintf(md, "|\n");

    for (int i = 0; i < t.nrow; i++) {
        const precision_row_t *w = &t.row[i];
        const run_t *u = &s->run[w->pair];
        char b[64], x[64];
        fprintf(md, "| %s", u->strategy);
        if (u->pipe) fprintf(md, " %s, M=%s", u->sched, u->mb);
        fprintf(md, " | %d", u->gpus);
        if (*u->link) fprintf(md, " (%s)", u->link);
        fprintf(md, " | %s", batch_word(b, sizeof b, u));
        if (grads) fprintf(md, " | %s", *u->gd ? u->gd : "—");
        for (int j = 0; j < nm; j++) fprintf(md, " | %s", f3(x, sizeof x, w->t[j]));
        for (int j = 0; j < nm; j++)
            if (j != ref) fprintf(md, " | %s", f2(x, sizeof x, w->ratio[j]));
        for (int j = 0; j < nm; j++) fprintf(md, " | %s", f2(x, sizeof x, w->speedup[j]));
        for (int j = 0; j < nm; j++) fprintf(md, " | %s", pct(x, sizeof x, w->efficiency[j]));
        for (int j = 0; j < nm; j++) {
            if (isnan(w->comm[j]))
                fprintf(md, " | —");
            else if (isnan(w->exposed[j]))
                fprintf(md, " | %.1f %%", w->comm[j]);
            else
                fprintf(md, " | %.1f %% (%.1f %%)", w->comm[j], w->exposed[j]);
        }
        for (int j = 0; j < nm; j++) {
            if (!isnan(w->accuracy[j]))
                fprintf(md, " | %.1f %%", w->accuracy[j]);
            else
                fprintf(md, " | —");
        }
        fprintf(md, " |\n");
    }
    fprintf(md, "\n");
    precision_free(&t);
}
