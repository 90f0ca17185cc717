/* batch.c — how far the batch scales (REPORT.md's section per model and data set, and its figure): the steps to the
 * target accuracy against the global batch, fitted with Shallue et al.'s and McCandlish et al.'s
 * (S/S_min - 1)(E/E_min - 1) = 1, the critical batch E_min / S_min beside the gradient noise scale measured while
 * training (study/target.h), and which batches buy time to target. */
#include "report.h"
#include "../engine/opt_table.h"
#include "../engine/schedule.h"
#include "../study/paths.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* With E = S B, the model is S = S_min + E_min / B: a straight line in 1/B, fitted by least squares. */
int report_batch_fit(const double *batch, const double *steps, int n, batch_fit_t *f) {
    memset(f, 0, sizeof *f);
    f->smin = f->emin = f->bcrit = f->se = f->r2 = NAN;
    f->n = n;
    if (n < 2) return -1;
    double mx = 0, my = 0, sxx = 0, sxy = 0, syy = 0;
    for (int i = 0; i < n; i++) mx += 1 / batch[i] / n, my += steps[i] / n;
    for (int i = 0; i < n; i++) {
        double dx = 1 / batch[i] - mx, dy = steps[i] - my;
        sxx += dx * dx, sxy += dx * dy, syy += dy * dy;
    }
    if (!(sxx > 0)) return -1;
    f->bmin = f->bmax = batch[0];
    for (int i = 1; i < n; i++) f->bmin = fmin(f->bmin, batch[i]), f->bmax = fmax(f->bmax, batch[i]);
    double b = sxy / sxx, a = my - b * mx, rss = 0;
    for (int i = 0; i < n; i++) rss += pow(steps[i] - a - b / batch[i], 2);
    f->smin = a, f->emin = b;
    f->r2 = syy > 0 ? 1 - rss / syy : 1;
    f->ok = a > 0 && b > 0;   /* steps that flatten (S_min > 0) and fall with the batch (E_min > 0) */
    double s2 = n > 2 ? rss / (n - 2) : 0;   /* the fit's covariance (none with 2 points: an exact fit) */
    f->va = s2 * (1.0 / n + mx * mx / sxx), f->vb = s2 / sxx, f->cab = -mx * s2 / sxx;
    if (!f->ok) return 0;
    f->bcrit = b / a;
    if (n > 2) {   /* the delta method on b / a */
        double v = f->vb / (a * a) + b * b * f->va / pow(a, 4) - 2 * b * f->cab / pow(a, 3);
        f->se = v > 0 ? sqrt(v) : 0;
    }
    return 0;
}

int report_batch_projects(const batch_fit_t *f) { return f->n >= 2 && f->emin > 0 && isfinite(f->smin); }

double report_batch_steps(const batch_fit_t *f, double b, double *se) {
    double v = f->va + f->vb / (b * b) + 2 * f->cab / b;
    *se = f->n > 2 ? sqrt(v > 0 ? v : 0) : NAN;
    return f->smin + f->emin / b;
}

/* One curve: the runs with a target of one group and math, optimizer, schedule, warm-up and scaling rule from one rate
 * at one base batch; points by global batch. */
static double base_lr(const study_run_t *r) {
    const study_row_t *w = r->rows[0];
    int rule = w->lr_scaling ? opt_name_index(lr_scaling_names, w->lr_scaling) : -1;
    double k = rule >= 0 && w->lr_base_batch > 0 ? lr_scale(1.0, (lr_scaling_t)rule, r->global_batch, w->lr_base_batch)
                                                 : 1.0;
    double lr = study_run_lr(r);
    return (isnan(lr) ? 0 : lr) / k;   /* no rate: 0, below every curve's */
}
static int cmp_curve(const study_run_t *a, const study_run_t *b) {
    const study_row_t *x = a->rows[0], *y = b->rows[0];
    int c = study_cmp_int(a->group, b->group);
    if (!c) c = study_math_cmp(a->math, b->math);
    if (!c) c = study_cmp_recipe(x, y);
    if (!c) c = strcmp(study_cell(x->lr_scaling), study_cell(y->lr_scaling));
    if (!c && fabs(base_lr(a) - base_lr(b)) > 1e-4 * base_lr(a))   /* lr cells hold 6 digits */
        c = study_cmp_num(base_lr(a), base_lr(b));
    return c;
}
static int cmp_point(const study_run_t *a, const study_run_t *b) {
    int c = cmp_curve(a, b);
    return c ? c : study_cmp_int(a->global_batch, b->global_batch);
}
/* A run on a curve: measured to a target, at a global batch the log-scale axes and the fit in 1/B can take (a CSV is
 * data: a hand-edited or foreign one may hold none). */
static int with_target(const study_run_t *r) { return !isnan(r->tt.target) && r->nrows > 0 && r->global_batch >= 1; }

/* "sgd, cosine rate, warm-up 2 epochs, linear rule from 0.1 at 256" */
static void curve_words(bytes_t *b, const study_run_t *r) {
    const study_row_t *w = r->rows[0];
    text_printf(b, "%s, %s", *study_cell(w->optimizer) ? w->optimizer : "sgd", r->math);
    if (*study_cell(w->lr_schedule)) text_printf(b, ", %s rate", w->lr_schedule);
    if (w->warmup_epochs > 0) text_printf(b, ", warm-up %g epochs", w->warmup_epochs);
    if (*study_cell(w->lr_scaling) && w->lr_base_batch > 0)
        text_printf(b, ", %s rule from %.4g at %d", w->lr_scaling, base_lr(r), w->lr_base_batch);
}

typedef struct {
    int batch, runs;
    const char *lr;
    study_stat_t steps, tt, ips, gns;
} bpoint_t;

static double run_gns(const study_run_t *r) { return r->gns_b; }

/* The points of the curve u[0..n) (sorted by batch). */
static int points(const study_run_t *const *u, int n, bpoint_t *p) {
    int k = 0;
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && u[j]->global_batch == u[i]->global_batch) j++;
        p[k] = (bpoint_t){.batch = u[i]->global_batch, .runs = j - i, .lr = u[i]->lr};
        p[k].steps = study_stat_runs(u + i, j - i, study_run_tt_steps);
        p[k].tt = study_stat_runs(u + i, j - i, study_run_tt_s);
        p[k].ips = study_stat_runs(u + i, j - i, study_run_tput);
        p[k].gns = study_stat_runs(u + i, j - i, run_gns);
        k++, i = j;
    }
    return k;
}

/* Which batches buy time to target: each step up the batches that every seed reached, and where the rest stop. */
static void buys(FILE *md, const bpoint_t *p, int k) {
    int prev = -1;
    fprintf(md, "Which batches buy time to target:");
    for (int i = 0; i < k; i++) {
        if (p[i].steps.n < p[i].runs) {
            fprintf(md, " at %d, %d of %d seeds reached the target;", p[i].batch, p[i].steps.n, p[i].runs);
            continue;
        }
        if (prev >= 0)
            fprintf(md, " %d → %d: %.2f× %s (%.2f → %.2f s);", p[prev].batch, p[i].batch,
                    p[i].tt.med < p[prev].tt.med ? p[prev].tt.med / p[i].tt.med : p[i].tt.med / p[prev].tt.med,
                    p[i].tt.med < p[prev].tt.med ? "sooner" : "later", p[prev].tt.med, p[i].tt.med);
        prev = i;
    }
    int best = -1;
    for (int i = 0; i < k; i++)
        if (p[i].steps.n == p[i].runs && (best < 0 || p[i].tt.med < p[best].tt.med)) best = i;
    if (best >= 0) fprintf(md, " the soonest is batch %d, %.2f s of training.\n\n", p[best].batch, p[best].tt.med);
    else fprintf(md, " no batch reached the target in every seed.\n\n");
}

/* A curve's points and its fit over the batches every seed reached (bx, sy: their batches and median steps, m). */
typedef struct {
    bpoint_t *p;
    int k, m;
    double *bx, *sy;
    batch_fit_t f;
} curve_t;

static void curve_make(curve_t *c, const study_run_t *const *u, int n) {
    c->p = mem_alloc((size_t)n * sizeof *c->p);
    c->k = points(u, n, c->p);
    c->bx = mem_alloc((size_t)c->k * sizeof *c->bx);
    c->sy = mem_alloc((size_t)c->k * sizeof *c->sy);
    c->m = 0;
    for (int i = 0; i < c->k; i++)
        if (c->p[i].steps.n == c->p[i].runs) c->bx[c->m] = c->p[i].batch, c->sy[c->m++] = c->p[i].steps.med;
    report_batch_fit(c->bx, c->sy, c->m, &c->f);
}
static void curve_free(curve_t *c) { free(c->p), free(c->bx), free(c->sy); }

static void projected(FILE *md, const report_t *r, int g, const study_run_t *curve0, const batch_fit_t *f);

/* One curve's table, fit, noise scale, the batches that buy time and the projection of the rest. */
static void curve_section(FILE *md, const report_t *r, int g, const study_run_t *const *u, int n) {
    curve_t c;
    curve_make(&c, u, n);
    const bpoint_t *p = c.p;
    const batch_fit_t f = c.f;
    bytes_t w = {0};
    curve_words(&w, u[0]);
    fprintf(md, "**%s**, to %s test accuracy:\n\n", w.s, report_pct(100 * u[0]->tt.target).s);
    fprintf(md, "| global batch | lr | reached | steps to target | time to target (s) | images/s | noise scale "
                "B_simple |\n|---:|---:|---:|---:|---:|---:|---:|\n");
    study_stat_t all_gns = study_stat_runs(u, n, run_gns);
    for (int i = 0; i < c.k; i++)
        fprintf(md, "| %d | %s | %d/%d | %s | %s | %s | %s |\n", p[i].batch, p[i].lr, p[i].steps.n, p[i].runs,
                report_ranged("%.0f", p[i].steps).s, report_ranged("%.2f", p[i].tt).s, report_f0(p[i].ips.med).s,
                report_ranged("%.0f", p[i].gns).s);
    fprintf(md, "\nFit of S = S_min + E_min / B over the %d batches every seed reached: ", c.m);
    /* the first batch above the fitted ones that some seed did not train to the target */
    int miss = -1;
    for (int i = 0; i < c.k && miss < 0; i++)
        if (c.m && p[i].batch > c.bx[c.m - 1] && p[i].steps.n < p[i].runs) miss = i;
    if (c.m < 2) fprintf(md, "needs 2 or more.");
    else if (!f.ok && f.emin > 0 && miss >= 0)
        fprintf(md, "S_min %.4g, E_min %.4g: the steps still fall as 1/B through batch %.0f, and at %d not every seed "
                    "reached the target in the epochs run, so the critical batch lies between %.0f and %d (at this "
                    "schedule and rule).", f.smin, f.emin, c.bx[c.m - 1], p[miss].batch, c.bx[c.m - 1], p[miss].batch);
    else if (!f.ok)
        fprintf(md, "S_min %.4g, E_min %.4g: %s, so the critical batch is %s.", f.smin, f.emin,
                f.emin <= 0 ? "the steps do not fall as the batch grows" : "the steps still fall as 1/B",
                f.emin <= 0 ? "at or below the smallest batch run" : "above the largest batch run");
    else {
        fprintf(md, "S_min %.0f steps, E_min %.4g images, critical batch B_crit = E_min / S_min = %.0f", f.smin,
                f.emin, f.bcrit);
        if (!isnan(f.se)) fprintf(md, " ± %.0f (standard error)", f.se);
        fprintf(md, ", R² %.3f.", f.r2);
    }
    if (all_gns.n) {
        fprintf(md, " Gradient noise scale B_simple (tr Σ / |G|², measured while training): median %.0f over %d "
                    "runs (%.0f–%.0f)", all_gns.med, all_gns.n, all_gns.min, all_gns.max);
        if (f.ok) fprintf(md, "; B_crit / B_simple = %.2f", f.bcrit / all_gns.med);
        else if (c.m >= 2 && f.emin > 0 && miss >= 0)
            fprintf(md, "; the bracket over B_simple: %.2f to %.2f", c.bx[c.m - 1] / all_gns.med,
                    p[miss].batch / all_gns.med);
        fprintf(md, ".");
    } else fprintf(md, " No noise scale was measured (--gns-every).");
    fprintf(md, "\n\n");
    buys(md, p, c.k);
    if (report_batch_projects(&f)) projected(md, r, g, u[0], &f);
    free(w.s);
    curve_free(&c);
}

/* A point the figure draws: every seed reached the target, in a step count a log-scale axis takes. */
static int drawable(const bpoint_t *p) {
    return p->steps.n == p->runs && p->steps.min > 0 && isfinite(p->steps.max);
}

/* A configuration's step time where it has one: the median of its steady step_ms. */
static int has_step(const study_run_t *r) { return !isnan(r->med[RESULTS_COL_step_ms]); }
static int cmp_projected(const study_run_t *a, const study_run_t *b) {
    int c = study_math_cmp(a->math, b->math);
    if (!c) c = study_cmp_int(a->global_batch, b->global_batch);
    if (!c) c = strcmp(a->strategy, b->strategy);
    if (!c) c = study_cmp_int(a->gpus, b->gpus);
    return c ? c : strcmp(a->variant, b->variant);
}

/* Projected time to target: for every strategy, GPU count and global batch of the group's math that ran steady steps
 * but has no measured time to target at the curve's recipe, the fit's steps at its global batch times its median
 * step (images/s hold no recipe: the step time is the configuration's own). Only inside the batches fitted: the fit
 * says nothing past them. */
static void projected(FILE *md, const report_t *r, int g, const study_run_t *curve0, const batch_fit_t *f) {
    int n, rows = 0;
    const study_run_t **u = study_runs_sorted(&r->st, g, has_step, cmp_projected, &n);
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && !cmp_projected(u[i], u[j])) j++;
        const study_run_t *x = u[i];
        int measured = 0;
        for (int k = i; k < j; k++) measured |= u[k]->tt.reached && !cmp_curve(u[k], curve0);
        double b = x->global_batch;
        if (!measured && !study_math_cmp(x->math, curve0->math) && b >= f->bmin && b <= f->bmax) {
            double se, s = report_batch_steps(f, b, &se);
            study_stat_t step = study_stat_runs(u + i, j - i, study_run_step_ms);
            if (!rows++)
                fprintf(md, "Projected time to target (no run of the configuration measured it at this recipe): the "
                            "fit's steps at its global batch × its median step; ± the fit's standard error.\n\n"
                            "| strategy | GPUs | global batch | step (ms) | projected steps | projected time to "
                            "target (s) |\n|---|---:|---:|---:|---:|---:|\n");
            bytes_t l = {0};
            text_printf(&l, "%s", x->strategy);
            if (*x->variant) text_printf(&l, " (%s)", x->variant);
            fprintf(md, "| %s | %d | %d | %.3f | %.0f", l.s, x->gpus, x->global_batch, step.med, s);
            if (!isnan(se)) fprintf(md, " ± %.0f", se);
            fprintf(md, " | %.2f", s * step.med / 1000);
            if (!isnan(se)) fprintf(md, " ± %.2f", se * step.med / 1000);
            fprintf(md, " (projected) |\n");
            free(l.s);
        }
        i = j;
    }
    if (rows) fprintf(md, "\n");
    free(u);
}

/* The curves of group g: u sorted by curve and batch (the caller frees), *n runs. */
static const study_run_t **curves_of(const report_t *r, int g, int *n) {
    return study_runs_sorted(&r->st, g, with_target, cmp_point, n);
}

int report_batch_fit_of(const report_t *r, int g, const study_run_t *u, batch_fit_t *f) {
    int n, k = 0;
    const study_run_t **c = curves_of(r, g, &n);
    for (int i = 0; i < n; i++)
        if (!cmp_curve(c[i], u)) c[k++] = c[i];   /* in batch order still */
    curve_t cv;
    curve_make(&cv, c, k);
    *f = cv.f;
    curve_free(&cv);
    free(c);
    return report_batch_projects(f) ? 0 : -1;
}

/* At each batch that two or more curves ran (LARS beside SGD, another rule): what each reached. */
static int cmp_same_batch(const study_run_t *a, const study_run_t *b) {
    int c = study_cmp_int(a->group, b->group);
    if (!c) c = study_math_cmp(a->math, b->math);
    if (!c) c = study_cmp_int(a->global_batch, b->global_batch);
    return c ? c : cmp_curve(a, b);
}
static void same_batch(const report_t *r, FILE *md, int g) {
    int n, rows = 0;
    const study_run_t **u = study_runs_sorted(&r->st, g, with_target, cmp_same_batch, &n);
    for (int i = 0; i < n;) {
        int j = i + 1, curves = 1;
        for (; j < n && u[j]->global_batch == u[i]->global_batch && !study_math_cmp(u[j]->math, u[i]->math); j++)
            curves += cmp_curve(u[j - 1], u[j]) != 0;
        for (int k = i; curves > 1 && k < j;) {
            int e = k;
            while (e < j && !cmp_curve(u[k], u[e])) e++;
            if (!rows++)
                fprintf(md, "At the same batch, by optimizer and rule (final test accuracy over seeds):\n\n| global "
                            "batch | optimizer and schedule | lr | reached | time to target (s) | final test acc |\n"
                            "|---:|---|---:|---:|---:|---:|\n");
            bytes_t w = {0};
            curve_words(&w, u[k]);
            study_stat_t tt = study_stat_runs(u + k, e - k, study_run_tt_s),
            acc = study_stat_runs(u + k, e - k, study_run_facc);
            fprintf(md, "| %d | %s | %s | %d/%d | %s | %s |\n", u[k]->global_batch, w.s, u[k]->lr, tt.n, e - k,
                    report_ranged("%.2f", tt).s, report_ranged("%.1f %%", acc).s);
            free(w.s);
            k = e;
        }
        i = j;
    }
    if (rows) fprintf(md, "\n");
    free(u);
}

void report_batch_section(const report_t *r, FILE *md, int g) {
    int n;
    const study_run_t **u = curves_of(r, g, &n);
    if (n) fprintf(md, "### How far the batch scales\n\nSteps to the target against the global batch (Shallue et al. "
                       "2018; McCandlish et al. 2018): they fall as 1/B below the critical batch and flatten above "
                       "it. Medians over seeds, ranges in brackets; a batch enters the fit where every seed reached "
                       "the target. Figure: `batch-%s.png`.\n\n", r->st.grp[g].id);
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && cmp_curve(u[i], u[j]) == 0) j++;
        curve_section(md, r, g, u + i, j - i);
        i = j;
    }
    if (n) same_batch(r, md, g);
    free(u);
}

int report_batch_figure(report_t *r, int g, const char *caption, char *err, size_t errlen) {
    int n;
    const study_run_t **u = curves_of(r, g, &n);
    const study_group_t *gr = &r->st.grp[g];
    if (!n) {
        report_skip(r, "batch.gp", gr, "no run measured to a target accuracy (column target_acc)");
        return free(u), 0;
    }
    char *path = mem_printf("%s/batch-%s.dat", r->out, gr->id), *path2 = mem_printf("%s/batch_fit-%s.dat", r->out,
                                                                                       gr->id);
    paths_replace_t o, of;
    int rc = paths_replace_begin(&o, path, NULL, 0) != 0, lines = 0, fits = 0;
    if (!rc && paths_replace_begin(&of, path2, NULL, 0) != 0) rc = 1, paths_replace_end(&o, NULL, 0);
    for (int i = 0; !rc && i < n;) {
        int j = i;
        while (j < n && cmp_curve(u[i], u[j]) == 0) j++;
        curve_t c;
        curve_make(&c, u + i, j - i);
        bytes_t w = {0};
        curve_words(&w, u[i]);
        /* a line of the batches every seed reached, each with a step count a log-scale axis takes (a CSV is data:
         * 0 steps or a non-finite one may stand in it); gnuplot takes no block without a point */
        int pts = 0;
        for (int k = 0; k < c.k; k++)
            pts += drawable(&c.p[k]);
        if (pts && lines++) fprintf(o.f, "\n\n");
        if (pts) report_data_title(o.f, w.s);
        for (int k = 0; k < c.k; k++)
            if (drawable(&c.p[k]))
                fprintf(o.f, "%d %.6g %.6g %.6g\n", c.p[k].batch, c.p[k].steps.med, c.p[k].steps.min,
                        c.p[k].steps.max);
        if (c.f.ok) {   /* the fit's curve, sampled: gnuplot draws numbers, it computes none */
            if (fits++) fprintf(of.f, "\n\n");
            text_printf(&w, ", fit: B_crit %.0f", c.f.bcrit);
            report_data_title(of.f, w.s);
            for (double b = c.bx[0] / 2; b <= 2 * c.bx[c.m - 1] * 1.0001; b *= pow(2, 0.25))
                fprintf(of.f, "%.6g %.6g\n", b, c.f.smin + c.f.emin / b);   /* > 0: S_min and E_min are (ok) */
        }
        free(w.s);
        curve_free(&c);
        i = j;
    }
    if (!rc && (paths_replace_end(&o, NULL, 0) != 0) + (paths_replace_end(&of, NULL, 0) != 0)) rc = 1;
    if (rc) snprintf(err, errlen, "%s: cannot write", path);
    else if (!lines) report_skip(r, "batch.gp", gr, "no batch whose every seed reached the target");
    else {
        char *name = mem_printf("batch-%s", gr->id);
        report_emit(r, "batch.gp", name, path, fits ? path2 : "", gr, gr->sub, caption);
        free(name);
    }
    free(u), free(path), free(path2);
    return rc;
}
