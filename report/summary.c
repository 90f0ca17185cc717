/* summary.c — REPORT.md's summary of a model and dataset: one table per strategy, a row per configuration but its
 * seed (GPUs, schedule, batch, micro-batches, link, learning rate, what else differs, precision): the median over
 * its seeds with their range (epoch, model epoch, speedup, efficiency, accuracy or a language model's held-out loss)
 * and every run's status. */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A summary row: the runs of one configuration but the seed, and what it shows of them. */
typedef struct {
    const study_run_t *const *u;      /* its runs, in the order they started */
    int n;
    const study_run_t *any;           /* the last of them: its strategy, GPUs, batch, link */
    const study_run_t *rep;           /* the run of the median epoch time (the lower one of an even count): its per-step
                                 * cells stand for the row; NULL where no run has a steady epoch */
    study_stat_t t, acc;              /* epoch time (s) and final test accuracy (%) over its seeds; a language
                                       * model's: acc is its final held-out loss (report_quality) */
    const char **st;            /* the statuses its runs ended with, in the order first seen, and their counts */
    int *stc, nst, cst;
    int t1;                     /* T1's run at its batch and math, or -1 */
} srow_t;

/* What a table of a strategy shows, and what the footnotes need. */
typedef struct {
    int variant;                /* a column naming what else differs between its rows */
    int bench;                  /* the all-reduce benchmark's model columns */
    int dagger, ddagger, pipenote;
} notes_t;


static void srow_make(srow_t *w, const study_runs_t *s, const study_run_t *const *u, int n) {
    memset(w, 0, sizeof *w);
    w->u = u;
    w->n = n;
    w->any = u[n - 1];
    w->t = study_stat_runs(u, n, study_run_epoch_s);
    w->acc = study_quality_runs(u, n, s->grp[w->any->group].tokens).st;
    w->rep = study_median_run(u, n);
    for (int i = 0; i < n; i++) {
        int t = 0;
        while (t < w->nst && strcmp(w->st[t], u[i]->fstat)) t++;
        if (t == w->nst) {
            int c = w->cst;   /* two arrays, one capacity */
            mem_reserve((void **)&w->st, &c, t + 1, sizeof *w->st);
            mem_reserve((void **)&w->stc, &w->cst, t + 1, sizeof *w->stc);
            w->st[t] = u[i]->fstat;
            w->stc[t] = 0;
            w->nst++;
        }
        w->stc[t]++;
    }
    w->t1 = study_t1_run(s, w->any->group, w->any->line_batch, w->any->math);
}

/* The precision cells that lead a row where the group has more than one math or gradient dtype. */
static void prec_cells(bytes_t *b, const study_runs_t *s, const study_run_t *r) {
    const study_group_t *g = &s->grp[r->group];
    if (g->maths.n > 1) text_printf(b, "| %s ", r->math);
    if (g->gds.n > 1) text_printf(b, "| %s ", *r->gd ? r->gd : "—");
}

static void statuses(bytes_t *b, const srow_t *w) {
    for (int j = 0; j < w->nst; j++) {
        text_printf(b, "%s%s", j ? ", " : "", w->st[j]);
        if (w->nst > 1 || w->stc[j] > 1) text_printf(b, " (%d)", w->stc[j]);
    }
}

static void table_head(const report_t *r, FILE *md, const srow_t *w, const notes_t *nt) {
    const study_group_t *gr = &r->st.grp[w->any->group];
    int nm = gr->maths.n > 1, ng = gr->gds.n > 1;
    const char *ph = nm && ng ? "| math | grads " : nm ? "| math " : ng ? "| grads " : "";
    const char *pr = nm && ng ? "|---|---" : nm || ng ? "|---" : "";
    const char *vh = nt->variant ? " variant |" : "", *vr = nt->variant ? "---|" : "";
    const char *qh = report_quality(gr->tokens)->head;
    fprintf(md, "\n#### %s\n\n", w->any->strategy);
    if (w->any->pipe) {
        fprintf(md,
                "%s| GPUs (stages) | schedule | batch | M | lr |%s epoch (s) | model epoch (s) | speedup vs %s at the "
                "same batch | efficiency | speedup vs %s at its fastest batch | bubble measured | bubble ideal (its "
                "schedule's) | %s | %s | status |\n",
                ph, vh, study_ref(&r->st), study_ref(&r->st), study_tput_unit(gr->tokens), qh);
        fprintf(md, "%s|---:|---|---:|---:|---:|%s---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n", pr, vr);
    } else if (nt->bench) {
        fprintf(md,
                "%s| GPUs | batch/GPU | lr |%s steps | epoch (s) | model epoch (s) | speedup | model speedup | "
                "efficiency | all-reduce ms/step (measured / model) | %s | status |\n",
                ph, vh, qh);
        fprintf(md, "%s|---:|---:|---:|%s---:|---:|---:|---:|---:|---:|---|---|---|\n", pr, vr);
    } else {
        fprintf(md, "%s| GPUs | batch/GPU | lr |%s steps | epoch (s) | speedup | efficiency | %s | status |\n",
                ph, vh, qh);
        fprintf(md, "%s|---:|---:|---:|%s---:|---:|---:|---:|---|---|\n", pr, vr);
    }
}

static double t1_time(const study_runs_t *s, const srow_t *w, study_col_t c) {
    return w->t1 >= 0 ? s->run[w->t1].med[c] : NAN;
}

/* The reference's run of group g and math m with the most images/s, whatever its batch (NULL: none): the pipeline's
 * second baseline, as torchgpipe measures its speedups. */
static const study_run_t *fastest_reference(const study_runs_t *s, int g, const char *m) {
    const study_run_t *best = NULL;
    for (int i = 0; i < s->nr; i++) {
        const study_run_t *u = &s->run[i];
        double ips = study_run_tput(u);
        if (u->group != g || !study_is_reference(u->info) || strcmp(u->math, m) || isnan(ips)) continue;
        if (!best || ips > study_run_tput(best)) best = u;
    }
    return best;
}

/* What every row of a table says the same way: its speedup and efficiency over T1 (at the median epoch). */
typedef struct {
    const char *lead, *gl, *steps, *acc, *stl, *variant;
    double sp;
} cells_t;

/* A pipeline's row: its model epoch is steps × single's step / p × (M + p − 1)/M; its speedup against the reference
 * at the same global batch (T1) and, images/s over images/s, at the reference's fastest batch, that batch named. */
static void pipe_row(const report_t *r, FILE *md, const srow_t *w, const cells_t *c, notes_t *nt) {
    const study_runs_t *s = &r->st;
    const study_run_t *u = w->any, *b = w->rep;
    int M = u->micro, p = u->gpus;
    double nsteps = b ? b->med[RESULTS_COL_steps] : NAN, step1 = t1_time(s, w, RESULTS_COL_step_ms);
    double model = w->t1 >= 0 && !isnan(nsteps) ? nsteps * step1 / p * (M + p - 1) / M / 1e3 : NAN;
    double bubble = b && !isnan(b->med[RESULTS_COL_bubble]) ? 100 * b->med[RESULTS_COL_bubble] : NAN;
    /* the row's own ideal: (p−1)/(M+p−1) for GPipe and 1F1B, zero bubble's from its measured F, B and W times */
    double ideal = b && !isnan(b->med[RESULTS_COL_bubble_ideal]) ? b->med[RESULTS_COL_bubble_ideal]
                                                                  : (double)(p - 1) / (M + p - 1);
    nt->pipenote = 1;
    const study_run_t *fr = fastest_reference(s, u->group, u->math);
    study_stat_t ips = study_stat_runs(w->u, w->n, study_run_tput);
    char fast[64] = "—";
    if (fr && !isnan(ips.med))
        snprintf(fast, sizeof fast, "%.2f (batch %d)", ips.med / study_run_tput(fr), fr->line_batch);
    fprintf(md, "%s| %d | %s | %d | %d | %s |%s %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", c->lead, p,
            u->sched, u->line_batch, M, u->lr, c->variant, report_ranged("%.3f", w->t).s, report_f3(model).s,
            report_f2(c->sp).s,
            report_pct(isnan(c->sp) ? NAN : 100 * c->sp / p).s, fast, report_pct(bubble).s, report_pct(100.0 * ideal).s,
            report_ranged("%.0f", ips).s, c->acc, c->stl);
}

static double run_comm_ms(const study_run_t *r) { return r->med[RESULTS_COL_comm_ms]; }

/* A data-parallel row with the all-reduce model: steps × (single's step + t(n, S)). */
static void model_row(const report_t *r, FILE *md, const srow_t *w, const cells_t *c, notes_t *nt) {
    const study_runs_t *s = &r->st;
    const study_run_t *u = w->any, *b = w->rep;
    int n = u->gpus;
    double t1 = t1_time(s, w, RESULTS_COL_epoch_s), nsteps = b ? b->med[RESULTS_COL_steps] : NAN;
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
    fprintf(md, "%s| %s | %d | %s |%s %s | %s | %s%s | %s | %s | %s | %s / %s%s | %s | %s |\n", c->lead, c->gl,
            u->line_batch, u->lr, c->variant, c->steps, report_ranged("%.3f", w->t).s, report_f3(model).s,
            !isnan(model) ? mark : "",
            report_f2(c->sp).s, report_f2(msp).s, report_pct(isnan(c->sp) ? NAN : 100 * c->sp / n).s,
            report_ranged("%.3f", study_stat_runs(w->u, w->n, run_comm_ms)).s, report_f3(tar).s, lentm, c->acc,
            c->stl);
}

static void plain_row(FILE *md, const srow_t *w, const cells_t *c) {
    const study_run_t *u = w->any;
    fprintf(md, "%s| %s | %d | %s |%s %s | %s | %s | %s | %s | %s |\n", c->lead, c->gl, u->line_batch, u->lr,
            c->variant, c->steps, report_ranged("%.3f", w->t).s, report_f2(c->sp).s,
            report_pct(isnan(c->sp) ? NAN : 100 * c->sp / u->gpus).s,
            c->acc, c->stl);
}

static void summary_row(const report_t *r, FILE *md, const srow_t *w, notes_t *nt) {
    const study_run_t *u = w->any;
    bytes_t lead = {0}, gl = {0}, stl = {0}, var = {0};
    prec_cells(&lead, &r->st, u);
    text_printf(&gl, "%d%s%s%s", u->gpus, *u->link ? " (" : "", u->link, *u->link ? ")" : "");
    statuses(&stl, w);
    if (nt->variant) text_printf(&var, " %s |", *u->variant ? u->variant : "—");
    numtext_t steps = w->rep && !isnan(w->rep->med[RESULTS_COL_steps]) ? report_num(w->rep->med[RESULTS_COL_steps])
                                                                        : report_f3(NAN);
    numtext_t acc = report_ranged(report_quality(r->st.grp[u->group].tokens)->fmt, w->acc);
    double t1 = t1_time(&r->st, w, RESULTS_COL_epoch_s);
    cells_t c = {text_str(&lead), text_str(&gl), steps.s, acc.s, text_str(&stl), text_str(&var),
                 !isnan(w->t.med) && !isnan(t1) ? t1 / w->t.med : NAN};
    if (u->pipe) pipe_row(r, md, w, &c, nt);
    else if (nt->bench) model_row(r, md, w, &c, nt);
    else plain_row(md, w, &c);
    free(lead.s), free(gl.s), free(stl.s), free(var.s);
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

static int by_strategy(const study_run_t *a, const study_run_t *b) { return strcmp(a->strategy, b->strategy); }

void report_summary(const report_t *r, FILE *md, int g) {
    const study_runs_t *s = &r->st;
    int n;
    const study_run_t **u = study_runs_sorted(s, g, NULL, study_cmp_row_config, &n);
    notes_t nt = {0};
    fprintf(md, "### Summary\n");
    for (int i = 0; i < n;) {
        srow_t w;
        int j = i;
        while (j < n && study_cmp_row_config(u[i], u[j]) == 0) j++;
        srow_make(&w, s, u + i, j - i);
        if (i == 0 || by_strategy(u[i - 1], u[i])) {   /* a table per strategy */
            nt.variant = 0;
            for (int k = i; k < n && !by_strategy(u[i], u[k]); k++) nt.variant |= *u[k]->variant != '\0';
            nt.bench = r->have_bench && r->nfit_bench > 0 && !study_is_reference(w.any->info) && !w.any->pipe;
            table_head(r, md, &w, &nt);
        }
        summary_row(r, md, &w, &nt);
        free(w.st);
        free(w.stc);
        i = j;
    }
    footnotes(r, md, &nt);
    fprintf(md, "\n");
    free(u);
}
