/* summary.c — REPORT.md's summary of a model and dataset: one table per strategy, a row per GPU count, schedule,
 * batch, micro-batches, link and precision (best steady epoch, model epoch, speedup, efficiency, accuracy, statuses),
 * then the runs that did not end ok. */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A summary row: the runs of one key (cmp_row, cmp_prec), and what it shows of them. */
typedef struct {
    const run_t *any;           /* the last of its runs: its strategy, GPUs, batch, link */
    const run_t *best, *acc;    /* its fastest, and its most accurate run; NULL without */
    const char **st;            /* the statuses its runs ended with, in the order first seen, and their counts */
    int *stc, nst;
    int t1;                     /* T1's run at its batch and math, or -1 */
} srow_t;

/* What the tables' footnotes need. */
typedef struct {
    int dagger, ddagger, pipenote;
} notes_t;

static int cmp_srow(const run_t *a, const run_t *b) {
    int c = cmp_row(a, b);
    return c ? c : cmp_prec(a, b);
}

static void srow_add(srow_t *w, const run_t *u) {
    if (!isnan(u->med[RESULTS_COL_epoch_s]) &&
        (!w->best || u->med[RESULTS_COL_epoch_s] < w->best->med[RESULTS_COL_epoch_s]))
        w->best = u;
    if (!isnan(u->facc) && (!w->acc || u->facc > w->acc->facc)) w->acc = u;
    int t = 0;
    while (t < w->nst && strcmp(w->st[t], u->fstat)) t++;
    if (t == w->nst) {
        w->st = mem_realloc(w->st, (size_t)(t + 1) * sizeof *w->st);
        w->stc = mem_realloc(w->stc, (size_t)(t + 1) * sizeof *w->stc);
        w->st[t] = u->fstat;
        w->stc[t] = 0;
        w->nst++;
    }
    w->stc[t]++;
    w->any = u;
}

/* The precision cells that lead a row where the group has more than one math or gradient dtype. */
static void prec_cells(bytes_t *b, const study_runs_t *s, const run_t *r) {
    const group_t *g = &s->grp[r->group];
    if (g->maths.n > 1) text_printf(b, "| %s ", r->math);
    if (g->gds.n > 1) text_printf(b, "| %s ", *r->gd ? r->gd : "—");
}

static void statuses(bytes_t *b, const srow_t *w) {
    for (int j = 0; j < w->nst; j++) {
        text_printf(b, "%s%s", j ? ", " : "", w->st[j]);
        if (w->nst > 1 || w->stc[j] > 1) text_printf(b, " (%d)", w->stc[j]);
    }
}

static void table_head(const report_t *r, FILE *md, const srow_t *w, int bench) {
    const group_t *gr = &r->st.grp[w->any->group];
    const char *ph = gr->maths.n > 1 && gr->gds.n > 1 ? "| math | grads " : gr->maths.n > 1 ? "| math " :
                     gr->gds.n > 1 ? "| grads " : "";
    const char *pr = gr->maths.n > 1 && gr->gds.n > 1 ? "|---|---" : gr->maths.n > 1 || gr->gds.n > 1 ? "|---" : "";
    fprintf(md, "\n#### %s\n\n", w->any->strategy);
    if (w->any->pipe) {
        fprintf(md,
                "%s| GPUs (stages) | schedule | batch | M | best epoch (s) | model epoch (s) | speedup vs %s at the "
                "same batch | efficiency | speedup vs %s at its fastest batch | bubble measured | bubble ideal (its "
                "schedule's) | images/s | final test acc (lr) | status |\n",
                ph, study_ref(&r->st), study_ref(&r->st));
        fprintf(md, "%s|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n", pr);
    } else if (bench && !study_is_reference(w->any->info)) {
        fprintf(md,
                "%s| GPUs | batch/GPU | steps | best epoch (s) | model epoch (s) | speedup | model speedup | "
                "efficiency | all-reduce ms/step (measured / model) | final test acc (lr) | status |\n",
                ph);
        fprintf(md, "%s|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|\n", pr);
    } else {
        fprintf(md,
                "%s| GPUs | batch/GPU | steps | best epoch (s) | speedup | efficiency | final test acc (lr) | "
                "status |\n",
                ph);
        fprintf(md, "%s|---:|---:|---:|---:|---:|---:|---|---|\n", pr);
    }
}

static double t1_time(const study_runs_t *s, const srow_t *w, results_col_t c) {
    return w->t1 >= 0 ? s->run[w->t1].med[c] : NAN;
}

/* The reference's run of group g and math m with the most images/s, whatever its batch (NULL: none): the pipeline's
 * second baseline, as torchgpipe measures its speedups. */
static const run_t *fastest_reference(const study_runs_t *s, int g, const char *m) {
    const run_t *best = NULL;
    for (int i = 0; i < s->nr; i++) {
        const run_t *u = &s->run[i];
        double ips = u->med[RESULTS_COL_images_per_s];
        if (u->group != g || !study_is_reference(u->info) || strcmp(u->math, m) || isnan(ips)) continue;
        if (!best || ips > best->med[RESULTS_COL_images_per_s]) best = u;
    }
    return best;
}

/* A pipeline's row: its model epoch is steps × single's step / p × (M + p − 1)/M; its speedup against the reference
 * at the same global batch (T1) and, images/s over images/s, at the reference's fastest batch, that batch named. */
static void pipe_row(const report_t *r, FILE *md, const srow_t *w, const char *lead, const char *acc,
                     const char *stl, notes_t *nt) {
    const study_runs_t *s = &r->st;
    const run_t *u = w->any, *b = w->best;
    int M = u->micro, p = u->gpus;
    double t = b ? b->med[RESULTS_COL_epoch_s] : NAN, t1 = t1_time(s, w, RESULTS_COL_epoch_s);
    double nsteps = b ? b->med[RESULTS_COL_steps] : NAN, sp = !isnan(t) && !isnan(t1) ? t1 / t : NAN;
    double step1 = t1_time(s, w, RESULTS_COL_step_ms);
    double model = w->t1 >= 0 && !isnan(nsteps) ? nsteps * step1 / p * (M + p - 1) / M / 1e3 : NAN;
    double bubble = b && !isnan(b->med[RESULTS_COL_bubble]) ? 100 * b->med[RESULTS_COL_bubble] : NAN;
    /* the row's own ideal: (p−1)/(M+p−1) for GPipe and 1F1B, zero bubble's from its measured F, B and W times */
    double ideal = b && !isnan(b->med[RESULTS_COL_bubble_ideal]) ? b->med[RESULTS_COL_bubble_ideal]
                                                                  : (double)(p - 1) / (M + p - 1);
    nt->pipenote = 1;
    const run_t *fr = fastest_reference(s, u->group, u->math);
    double ips = b ? b->med[RESULTS_COL_images_per_s] : NAN;
    char fast[64] = "—";
    if (fr && !isnan(ips))
        snprintf(fast, sizeof fast, "%.2f (batch %d)", ips / fr->med[RESULTS_COL_images_per_s], fr->line_batch);
    fprintf(md, "%s| %d | %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", lead, p, u->sched,
            u->line_batch, M, f3(t).s, f3(model).s, f2(sp).s, pct(isnan(sp) ? NAN : 100 * sp / p).s, fast,
            pct(bubble).s, pct(100.0 * ideal).s, f0(ips).s, acc, stl);
}

/* A data-parallel row with the all-reduce model: steps × (single's step + t(n, S)). */
static void model_row(const report_t *r, FILE *md, const srow_t *w, const char *lead, const char *gl,
                      const char *steps, const char *acc, const char *stl, notes_t *nt) {
    const study_runs_t *s = &r->st;
    const run_t *u = w->any, *b = w->best;
    int n = u->gpus;
    double t = b ? b->med[RESULTS_COL_epoch_s] : NAN, t1 = t1_time(s, w, RESULTS_COL_epoch_s);
    double nsteps = b ? b->med[RESULTS_COL_steps] : NAN, sp = !isnan(t) && !isnan(t1) ? t1 / t : NAN;
    double tc = w->t1 >= 0 ? t1_time(s, w, RESULTS_COL_step_ms) : (b ? b->med[RESULTS_COL_compute_ms] : NAN);
    const char *mark = w->t1 >= 0 ? "" : " †";
    int lent = 0;
    double tar = NAN;
    if (b) {
        const fit_t *k = fit_of_grads(&r->fits, u->strategy, b->algo, b->gd, &lent);
        tar = n < 2 ? 0 : fit_allreduce_ms(k, n, b->med[RESULTS_COL_bytes_per_step]);
    }
    const char *lentm = b && !isnan(tar) && lent ? " ‡" : "";
    double model = !isnan(tc) && !isnan(tar) && !isnan(nsteps) ? nsteps * (tc + tar) / 1e3 : NAN;
    double msp = !isnan(model) && !isnan(t1) ? t1 / model : NAN;
    if (!isnan(model) && *mark) nt->dagger = 1;
    if (*lentm) nt->ddagger = 1;
    fprintf(md, "%s| %s | %d | %s | %s | %s%s | %s | %s | %s | %s / %s%s | %s | %s |\n", lead, gl, u->line_batch, steps,
            f3(t).s, f3(model).s, !isnan(model) ? mark : "", f2(sp).s, f2(msp).s,
            pct(isnan(sp) ? NAN : 100 * sp / n).s, f3(b ? b->med[RESULTS_COL_comm_ms] : NAN).s, f3(tar).s, lentm, acc,
            stl);
}

static void plain_row(const report_t *r, FILE *md, const srow_t *w, const char *lead, const char *gl,
                      const char *steps, const char *acc, const char *stl) {
    const run_t *u = w->any, *b = w->best;
    double t = b ? b->med[RESULTS_COL_epoch_s] : NAN, t1 = t1_time(&r->st, w, RESULTS_COL_epoch_s);
    double sp = !isnan(t) && !isnan(t1) ? t1 / t : NAN;
    fprintf(md, "%s| %s | %d | %s | %s | %s | %s | %s | %s |\n", lead, gl, u->line_batch, steps, f3(t).s, f2(sp).s,
            pct(isnan(sp) ? NAN : 100 * sp / u->gpus).s, acc, stl);
}

static void summary_row(const report_t *r, FILE *md, const srow_t *w, int bench, notes_t *nt) {
    const run_t *u = w->any;
    bytes_t lead = {0}, gl = {0}, acc = {0}, stl = {0};
    prec_cells(&lead, &r->st, u);
    text_printf(&gl, "%d%s%s%s", u->gpus, *u->link ? " (" : "", u->link, *u->link ? ")" : "");
    if (w->acc) text_printf(&acc, "%.1f %% (lr %s)", w->acc->facc, w->acc->lr);
    else text_printf(&acc, "—");
    statuses(&stl, w);
    double nsteps = w->best ? w->best->med[RESULTS_COL_steps] : NAN;
    const char *steps = isnan(nsteps) ? "—" : NULL;
    numtext_t st = num(nsteps);
    if (!steps) steps = st.s;
    if (u->pipe) pipe_row(r, md, w, text_str(&lead), text_str(&acc), text_str(&stl), nt);
    else if (bench && !study_is_reference(u->info))
        model_row(r, md, w, text_str(&lead), text_str(&gl), steps, text_str(&acc), text_str(&stl), nt);
    else plain_row(r, md, w, text_str(&lead), text_str(&gl), steps, text_str(&acc), text_str(&stl));
    free(lead.s), free(gl.s), free(acc.s), free(stl.s);
}

static void footnotes(const report_t *r, FILE *md, const notes_t *nt) {
    const char *ref = study_ref(&r->st);
    if (nt->dagger)
        fprintf(md, "\n† no `%s` run at this batch and math: the model uses this run's own compute time per step.\n",
                ref);
    if (nt->ddagger)
        fprintf(md,
                "\n‡ the benchmark has no bfloat16 rows (run `--bench allreduce` of this version): the float fit, at "
                "the bf16 gradients' bytes.\n");
    if (nt->pipenote)
        fprintf(md,
                "\nPipeline: T1 and the model use `%s` at the same global batch; model epoch = steps × %s's "
                "median step / p × (M + p − 1)/M, i.e. p balanced stages with the ideal bubble (p−1)/(M+p−1) and free "
                "transfers between them.\n",
                ref, ref);
}

void report_summary(const report_t *r, FILE *md, int g) {
    const study_runs_t *s = &r->st;
    int n;
    const run_t **u = runs_sorted(s, g, NULL, cmp_srow, &n);
    int bench = r->have_bench && r->nfit_bench > 0;
    notes_t nt = {0};
    const char *cur = NULL;
    fprintf(md, "### Summary\n");
    for (int i = 0; i < n;) {
        srow_t w = {0};
        int j = i;
        while (j < n && cmp_srow(u[i], u[j]) == 0) srow_add(&w, u[j++]);
        w.t1 = study_t1_run(s, g, w.any->line_batch, w.any->math);
        if (!cur || strcmp(w.any->strategy, cur)) {
            cur = w.any->strategy;
            table_head(r, md, &w, bench);
        }
        summary_row(r, md, &w, bench, &nt);
        free(w.st);
        free(w.stc);
        i = j;
    }
    footnotes(r, md, &nt);
    fprintf(md, "\n");
    free(u);
}
