/* precision.c — the maths of a study side by side in REPORT.md, for a model and dataset whose runs hold more than
 * one: a row pairs the runs that differ in math only (strategy, GPUs, batch, schedule, M, link, gradient dtype); per
 * math the best steady epoch, its ratio to the reference math's (tf32 where present, else the first), speedup and
 * efficiency over single at the same batch and math, the communication share of a step and the best accuracy. */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PMAX 8

typedef struct {
    char key[600];
    int pair;
    int best[PMAX], acc[PMAX];
} prow_t;

static int cmp_prow(const void *a, const void *b) { return strcmp(((const prow_t *)a)->key, ((const prow_t *)b)->key); }

/* The group's maths in study order into pm; returns how many. */
static int maths(const study_runs_t *s, int g, const char *pm[PMAX]) {
    char key[PMAX][40];
    int n = 0;
    for (int i = 0; i < s->nr && n < PMAX; i++) {
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
            memcpy(t, key[j], 40); memcpy(key[j], key[j - 1], 40); memcpy(key[j - 1], t, 40);
            const char *p = pm[j]; pm[j] = pm[j - 1]; pm[j - 1] = p;
        }
    return n;
}

/* Communication per step as a share of the step, the exposed part in parentheses: "2.7 % (1.6 %)". */
static const char *share(char *b, size_t n, const run_t *u) {
    if (!u || isnan(u->qmed) || isnan(u->smed) || u->smed <= 0) { snprintf(b, n, "—"); return b; }
    int l = snprintf(b, n, "%.1f %%", 100 * u->qmed / u->smed);
    if (!isnan(u->xmed) && l > 0 && (size_t)l < n) snprintf(b + l, n - (size_t)l, " (%.1f %%)", 100 * u->xmed / u->smed);
    return b;
}

void report_precision(report_t *r, FILE *md, int g) {
    const study_runs_t *s = &r->st;
    const group_t *gr = &s->grp[g];
    if (gr->nm < 2) return;
    const char *pm[PMAX];
    int nm = maths(s, g, pm), ref = 0;
    for (int j = 0; j < nm; j++)
        if (strcmp(pm[j], "tf32") == 0) ref = j;
    int grads = gr->ngd > 1;
    prow_t *row = calloc((size_t)(s->nr ? s->nr : 1), sizeof *row);
    if (!row) return;
    int nrow = 0;
    for (int i = 0; i < s->nr; i++) {
        const run_t *u = &s->run[i];
        if (u->group != g) continue;
        char k[600] = "", rk[24];
        key_row(k, sizeof k, u);
        study_math_rank(rk, sizeof rk, u->gd);
        key_str(k, sizeof k, rk);
        int j = 0;
        while (j < nrow && strcmp(row[j].key, k)) j++;
        if (j == nrow) {
            snprintf(row[j].key, sizeof row[j].key, "%s", k);
            row[j].pair = i;
            for (int m = 0; m < PMAX; m++) row[j].best[m] = row[j].acc[m] = -1;
            nrow++;
        }
        int m = 0;
        while (m < nm && strcmp(pm[m], u->math)) m++;
        if (m == nm) continue;
        prow_t *w = &row[j];
        if (!isnan(u->tmed) && (w->best[m] < 0 || u->tmed < s->run[w->best[m]].tmed)) w->best[m] = i;
        if (!isnan(u->facc) && (w->acc[m] < 0 || u->facc > s->run[w->acc[m]].facc)) w->acc[m] = i;
    }
    qsort(row, (size_t)nrow, sizeof *row, cmp_prow);

    fprintf(md, "### ");
    for (int j = 0; j < nm; j++) fprintf(md, "%s%s", j ? " against " : "", pm[j]);
    fprintf(md, "\n\nEach row holds the runs that differ in math only (the best over learning rates and seeds, as above); "
                "a column m / %s is the ratio of the two epoch times. ", pm[ref]);
    fprintf(md, "Speedup and efficiency are over `single` at the same batch and math; communication is the gradient "
                "reduction's time per step as a share of the step, with the part the compute waited for (exposed) in "
                "parentheses.\n\n");
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

    for (int i = 0; i < nrow; i++) {
        const prow_t *w = &row[i];
        const run_t *u = &s->run[w->pair];
        char b[64], x[64];
        fprintf(md, "| %s", u->strategy);
        if (u->pipe) fprintf(md, " %s, M=%s", u->sched, u->mb);
        fprintf(md, " | %d", u->gpus);
        if (*u->link) fprintf(md, " (%s)", u->link);
        fprintf(md, " | %s", batch_word(b, sizeof b, u));
        if (grads) fprintf(md, " | %s", *u->gd ? u->gd : "—");
        for (int j = 0; j < nm; j++) fprintf(md, " | %s", f3(x, sizeof x, w->best[j] >= 0 ? s->run[w->best[j]].tmed : NAN));
        for (int j = 0; j < nm; j++) {
            if (j == ref) continue;
            double t = w->best[j] >= 0 && w->best[ref] >= 0 ? s->run[w->best[j]].tmed / s->run[w->best[ref]].tmed : NAN;
            fprintf(md, " | %s", f2(x, sizeof x, t));
        }
        double sp[PMAX];
        for (int j = 0; j < nm; j++) {
            int t1 = study_t1_run(s, g, u->bk, pm[j]);
            sp[j] = w->best[j] >= 0 && t1 >= 0 ? s->run[t1].tmed / s->run[w->best[j]].tmed : NAN;
            fprintf(md, " | %s", f2(x, sizeof x, sp[j]));
        }
        for (int j = 0; j < nm; j++) fprintf(md, " | %s", pct(x, sizeof x, isnan(sp[j]) ? NAN : 100 * sp[j] / u->gpus));
        for (int j = 0; j < nm; j++) fprintf(md, " | %s", share(x, sizeof x, w->best[j] >= 0 ? &s->run[w->best[j]] : NULL));
        for (int j = 0; j < nm; j++) {
            if (w->acc[j] >= 0) fprintf(md, " | %.1f %%", s->run[w->acc[j]].facc);
            else fprintf(md, " | —");
        }
        fprintf(md, " |\n");
    }
    fprintf(md, "\n");
    free(row);
}
