/* figures.c — the study figures' data files, one function per figure (plain whitespace-separated columns, gnuplot
 * blocks under a quoted title line), drawn by render.c with the scripts of plots/: times are steady medians, a
 * line's point the best (lowest time, highest throughput) over the runs it stands for (learning rates, seeds,
 * micro-batch counts). A line is the runs one comparator calls equal, so building a figure is a sort. */
#include "report.h"
#include "../strategies/pipeline/pipe_schedule.h"
#include "../study/one_gpu.h"
#include "../study/paths.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A point as it is offered: the run whose line it joins, x (as written, and its value), y and a second column. */
typedef struct {
    const study_run_t *run;
    char x[32];                     /* a number as study_num_s writes it, or a learning rate's cell (both shorter) */
    double xv, y, y2;               /* y2: a second column (efficiency), NAN without */
    int order;                      /* the order offered: the first point of a line names it */
} pt_t;

/* A line: its name and its points, one per x, by x. */
typedef struct {
    const study_run_t *run;               /* the run of its first point: its key */
    char *label;
    pt_t *pt;
    int n, cap;
} series_t;

typedef struct {
    const study_runs_t *s;
    int (*same)(const study_run_t *, const study_run_t *);                      /* one line: equal */
    void (*label)(bytes_t *, const study_runs_t *, const study_run_t *);  /* its name, from its first run */
    int lo;                         /* per x the lowest y (times), else the highest */
    pt_t *pt;
    int n, cap;
    series_t *ser;                  /* after fig_build */
    int nser;
} fig_t;

static void fig_point(fig_t *f, const study_run_t *run, const char *x, double y, double y2) {
    pt_t *p = MEM_PUSH(f->pt, f->n, f->cap);
    p->run = run;
    snprintf(p->x, sizeof p->x, "%.31s", x);
    p->xv = atof(x);
    p->y = y;
    p->y2 = y2;
    p->order = f->n - 1;
}
static void fig_pointn(fig_t *f, const study_run_t *run, double x, double y, double y2) {
    char b[32];
    fig_point(f, run, study_num_s(b, sizeof b, x), y, y2);
}

/* The figure whose order the sort of its points reads (qsort passes no context). */
static int by_x(const pt_t *a, const pt_t *b) {
    int c = study_cmp_num(a->xv, b->xv);
    if (!c) c = strcmp(a->x, b->x);
    return c;
}

static void pt_sort(pt_t *a, pt_t *tmp, int n, const fig_t *f) {   /* stable: by line, x, then order offered */
    if (n < 2) return;
    int h = n / 2;
    pt_sort(a, tmp, h, f);
    pt_sort(a + h, tmp, n - h, f);
    int i = 0, j = h, k = 0;
    while (i < h && j < n) {
        int c = f->same ? f->same(a[j].run, a[i].run) : 0;
        if (!c) c = by_x(&a[j], &a[i]);
        tmp[k++] = c < 0 ? a[j++] : a[i++];
    }
    while (i < h) tmp[k++] = a[i++];
    while (j < n) tmp[k++] = a[j++];
    memcpy(a, tmp, (size_t)n * sizeof *a);
}

static void series_sort(series_t *l) {
    pt_t *tmp = mem_alloc((size_t)(l->n ? l->n : 1) * sizeof *tmp);
    fig_t byx = {0};
    pt_sort(l->pt, tmp, l->n, &byx);
    free(tmp);
}

/* The points gathered into lines (sorted by their key), each x once with its best y (the first offered on a tie). */
static void fig_build(fig_t *f) {
    pt_t *tmp = mem_alloc((size_t)(f->n ? f->n : 1) * sizeof *tmp);
    pt_sort(f->pt, tmp, f->n, f);
    free(tmp);
    int cap = 0;
    for (int i = 0; i < f->n;) {
        int j = i, first = i;
        while (j < f->n && (!f->same || f->same(f->pt[i].run, f->pt[j].run) == 0)) {
            if (f->pt[j].order < f->pt[first].order) first = j;
            j++;
        }
        series_t *l = MEM_PUSH(f->ser, f->nser, cap);
        l->run = f->pt[first].run;
        bytes_t b = {0};
        f->label(&b, f->s, l->run);
        text_printf(&b, "%s", "");
        l->label = b.s;
        for (int k = i; k < j; k++) {
            pt_t *last = l->n ? &l->pt[l->n - 1] : NULL;
            if (last && strcmp(last->x, f->pt[k].x) == 0) {
                if (f->lo ? f->pt[k].y < last->y : f->pt[k].y > last->y) last->y = f->pt[k].y, last->y2 = f->pt[k].y2;
            } else
                *MEM_PUSH(l->pt, l->n, l->cap) = f->pt[k];
        }
        i = j;
    }
}

static void fig_free(fig_t *f) {
    for (int i = 0; i < f->nser; i++) free(f->ser[i].label), free(f->ser[i].pt);
    free(f->ser);
    free(f->pt);
    f->ser = NULL, f->pt = NULL, f->n = f->nser = f->cap = 0;
}

/* A series title in a data file, quoted: a byte that would end the quote or the line becomes '?' (names are
 * checked on read; this keeps a label built from anything else inside its line). */
void report_data_title(FILE *o, const char *s) {
    fputc('"', o);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        fputc(*p == '"' || *p == '\\' || *p < 0x20 ? '?' : *p, o);
    fputs("\"\n", o);
}

/* Writes f's lines as gnuplot blocks: a quoted title line, then "x y" by x. Returns how many lines have at least
 * need points; with drop, the others are left out. -1 when the file cannot be written. */
static int write_series(const fig_t *f, const char *path, int need, int drop) {
    paths_replace_t out;
    if (paths_replace_begin(&out, path, NULL, 0) != 0) return -1;
    FILE *o = out.f;
    int ok = 0, w = 0;
    for (int i = 0; i < f->nser; i++) {
        const series_t *l = &f->ser[i];
        if (drop && l->n < need) continue;
        if (w++) fprintf(o, "\n\n");
        report_data_title(o, l->label);
        for (int j = 0; j < l->n; j++) {
            if (isnan(l->pt[j].y2)) fprintf(o, "%s %s\n", l->pt[j].x, report_num(l->pt[j].y).s);
            else fprintf(o, "%s %.6g %.6g\n", l->pt[j].x, l->pt[j].y, l->pt[j].y2);
        }
        if (l->n >= need) ok++;
    }
    return paths_replace_end(&out, NULL, 0) != 0 ? -1 : ok;
}

/* What one group's figures share: its runs, its caption and the path of the file being written (for a message). */
typedef struct {
    report_t *r;
    int g;
    const study_group_t *gr;
    int one;                        /* every run on one GPU */
    char *cap;                      /* the caption: GPU, dates, CSV */
    char *path;                     /* the data file written last */
} figs_t;

/* OUT/STEM-ID.dat written (2 points a line at least, dropping shorter lines with drop), then STEM.gp emitted, or
 * skipped with why where no line is long enough. -1 when the file cannot be written. */
static int figure_out(figs_t *x, fig_t *f, const char *stem, int drop, const char *why) {
    free(x->path);
    x->path = mem_printf("%s/%s-%s.dat", x->r->out, stem, x->gr->id);
    char *name = mem_printf("%s-%s", stem, x->gr->id), *script = mem_printf("%s.gp", stem);
    fig_build(f);
    int rc = write_series(f, x->path, 2, drop);
    if (rc > 0) report_emit(x->r, script, name, x->path, "", x->gr, x->gr->sub, x->cap);
    else if (rc == 0) report_skip(x->r, script, x->gr, why);
    free(name), free(script);
    fig_free(f);
    return rc < 0 ? -1 : 0;
}

/* ---- the lines' keys and names */

/* Precision, link and what else differs (copy path, NCCL algorithm, ...): what every line of a figure keeps apart. */
static int cmp_link(const study_run_t *a, const study_run_t *b) {
    int c = study_cmp_prec(a, b);
    if (!c) c = strcmp(a->link, b->link);
    return c ? c : strcmp(a->variant, b->variant);
}
static void variant_word(bytes_t *b, const study_run_t *u) {
    if (*u->variant) text_printf(b, ", %s", u->variant);
}
/* strategy, batch, schedule, precision, link */
static int same_batch_line(const study_run_t *a, const study_run_t *b) {
    int c = strcmp(a->strategy, b->strategy);
    if (!c) c = study_cmp_int(a->line_batch, b->line_batch);
    if (!c) c = strcmp(a->sched, b->sched);
    return c ? c : cmp_link(a, b);
}
static void batch_label(bytes_t *b, const study_runs_t *s, const study_run_t *u) {
    text_printf(b, "%s, ", u->strategy);
    report_batch_word(b, u);
    report_link_word(b, u);
    if (u->pipe) text_printf(b, ", %s (best M)", u->sched);
    report_with_prec(b, s, u);
    variant_word(b, u);
}
static int same_gpus_line(const study_run_t *a, const study_run_t *b) {   /* strategy, GPUs, precision, link */
    int c = strcmp(a->strategy, b->strategy);
    if (!c) c = study_cmp_int(a->gpus, b->gpus);
    return c ? c : cmp_link(a, b);
}
static void gpus_label(bytes_t *b, const study_runs_t *s, const study_run_t *u) {
    text_printf(b, "%s, ", u->strategy);
    report_gpus_word(b, u->gpus);
    report_link_word(b, u);
    report_with_prec(b, s, u);
    variant_word(b, u);
}
static int same_strategy_line(const study_run_t *a, const study_run_t *b) {   /* strategy, precision, link */
    int c = strcmp(a->strategy, b->strategy);
    return c ? c : cmp_link(a, b);
}
static void strategy_label(bytes_t *b, const study_runs_t *s, const study_run_t *u) {
    text_printf(b, "%s", u->strategy);
    report_with_prec(b, s, u);
    variant_word(b, u);
}

/* ---- the figures */

/* (a) epoch time and (b) speedup: one line per strategy, batch, precision and link; its 1-GPU point is its own run,
 * else single's at that batch and math; T1 single's where there is one, else the line's own 1-GPU time. */
static int fig_scaling(figs_t *x) {
    const study_runs_t *s = &x->r->st;
    fig_t tf = {.s = s, .same = same_batch_line, .label = batch_label, .lo = 1};
    fig_t sf = {.s = s, .same = same_batch_line, .label = batch_label, .lo = 1};
    for (int i = 0; i < s->nr; i++) {
        const study_run_t *u = &s->run[i];
        if (u->group != x->g || study_is_reference(u->info) || isnan(u->med[RESULTS_COL_epoch_s])) continue;
        fig_pointn(&tf, u, u->gpus, u->med[RESULTS_COL_epoch_s], NAN);
    }
    fig_build(&tf);
    for (int i = 0; i < tf.nser; i++) {
        series_t *l = &tf.ser[i];
        int t1r = study_t1_run(s, x->g, l->run->line_batch, l->run->math), one = -1;
        for (int j = 0; j < l->n; j++)
            if (strcmp(l->pt[j].x, "1") == 0) one = j;
        if (one < 0 && t1r >= 0) {
            pt_t *p = MEM_PUSH(l->pt, l->n, l->cap);
            *p = l->pt[0];
            snprintf(p->x, sizeof p->x, "1");
            p->xv = 1;
            p->y = s->run[t1r].med[RESULTS_COL_epoch_s];
            p->y2 = NAN;
            series_sort(l);
            one = 0;
        }
        double t1 = t1r >= 0 ? s->run[t1r].med[RESULTS_COL_epoch_s] : one >= 0 ? l->pt[one].y : NAN;
        if (isnan(t1)) continue;
        for (int j = 0; j < l->n; j++)
            fig_point(&sf, l->run, l->pt[j].x, t1 / l->pt[j].y, 100 * t1 / (l->pt[j].xv * l->pt[j].y));
    }
    /* tf is built: write it as it stands */
    free(x->path);
    x->path = mem_printf("%s/epoch_time-%s.dat", x->r->out, x->gr->id);
    int rc = write_series(&tf, x->path, 2, 0);
    char *name = mem_printf("epoch_time-%s", x->gr->id);
    if (rc > 0) report_emit(x->r, "epoch_time.gp", name, x->path, "", x->gr, x->gr->sub, x->cap);
    else if (rc == 0)
        report_skip(x->r, "epoch_time.gp", x->gr,
             x->one ? "every run is on one GPU: nothing scales"
                    : "no strategy has steady epoch times on 2 or more GPU counts");
    free(name);
    fig_free(&tf);
    if (rc < 0) return fig_free(&sf), -1;
    return figure_out(x, &sf, "speedup", 0,
                      x->one ? "every run is on one GPU: nothing scales"
                             : "no line with a 1-GPU time (strategy single at the same batch) and another GPU count");
}

/* (c) throughput against the per-GPU batch: one line per strategy, GPU count, precision and link. */
static int fig_throughput(figs_t *x) {
    const study_runs_t *s = &x->r->st;
    fig_t f = {.s = s, .same = same_gpus_line, .label = gpus_label};
    for (int i = 0; i < s->nr; i++) {
        const study_run_t *u = &s->run[i];
        if (u->group != x->g || u->pipe || isnan(study_run_tput(u))) continue;
        fig_pointn(&f, u, u->per_gpu, study_run_tput(u), NAN);
    }
    return figure_out(x, &f, "throughput", 0, "no strategy and GPU count with 2 or more batch sizes");
}

/* (c') on one GPU, final test accuracy against the batch beside the throughput: one line per strategy and precision,
 * the best over learning rates and seeds (a study across GPU counts has acc_lr and acc_epoch). */
static int fig_acc_batch(figs_t *x) {
    const study_runs_t *s = &x->r->st;
    fig_t f = {.s = s, .same = same_strategy_line, .label = strategy_label};
    for (int i = 0; i < s->nr; i++) {
        const study_run_t *u = &s->run[i];
        if (u->group != x->g || u->pipe || isnan(u->facc)) continue;
        fig_pointn(&f, u, u->per_gpu, u->facc, NAN);
    }
    return figure_out(x, &f, "acc_batch", 0, "no strategy and math with a final accuracy at 2 or more batch sizes");
}

/* (d) test accuracy against epoch: one figure per strategy (by name), one line per run. */
static int cmp_acc_run(const study_run_t *a, const study_run_t *b) {
    int c = study_cmp_int(a->gpus, b->gpus);
    if (!c) c = study_cmp_int(a->line_batch, b->line_batch);
    if (!c) c = study_cmp_num(study_run_lr(a), study_run_lr(b));
    if (!c) c = study_cmp_int(a->micro, b->micro);
    if (!c) c = cmp_link(a, b);
    if (!c) c = strcmp(a->seed, b->seed);
    return c ? c : strcmp(a->run_id, b->run_id);
}
static void acc_run_label(bytes_t *b, const study_runs_t *s, const study_run_t *u) {
    report_gpus_word(b, u->gpus);
    report_link_word(b, u);
    text_printf(b, ", ");
    report_batch_word(b, u);
    text_printf(b, ", lr %s", u->lr);
    report_with_prec(b, s, u);
    if (u->pipe) text_printf(b, ", M=%s", u->mb);
    if (s->grp[u->group].seeds.n > 1) text_printf(b, ", seed %s", u->seed);
    variant_word(b, u);
    if (strcmp(u->fstat, "ok")) text_printf(b, " (%s)", u->fstat);
}
static int has_acc(const study_row_t *row) {
    return row->epoch >= 1 && !(row->test_acc < 0) && !isnan(row->test_acc);
}
static int any_acc(const study_run_t *u) {
    for (int i = 0; i < u->nrows; i++)
        if (has_acc(u->rows[i])) return 1;
    return 0;
}
static int by_strategy(const study_run_t *a, const study_run_t *b) { return strcmp(a->strategy, b->strategy); }

static int fig_acc_epoch(figs_t *x) {
    const study_runs_t *s = &x->r->st;
    int n;
    const study_run_t **u = study_runs_sorted(s, x->g, any_acc, by_strategy, &n);
    int rc = 0;
    for (int i = 0; i < n && !rc;) {
        int j = i;
        fig_t f = {.s = s, .same = cmp_acc_run, .label = acc_run_label};
        for (; j < n && !strcmp(u[i]->strategy, u[j]->strategy); j++)
            for (int k = 0; k < u[j]->nrows; k++) {
                const study_row_t *row = u[j]->rows[k];
                if (has_acc(row)) fig_pointn(&f, u[j], row->epoch, 100 * row->test_acc, NAN);
            }
        char *sn = mem_printf("%s", u[i]->strategy);
        for (char *q = sn; *q; q++)
            if (!((*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '.' ||
                  *q == '_' || *q == '-'))
                *q = '_';
        free(x->path);
        x->path = mem_printf("%s/acc_epoch-%s-%s.dat", x->r->out, x->gr->id, sn);
        fig_build(&f);
        rc = write_series(&f, x->path, 1, 0) < 0 ? -1 : 0;
        fig_free(&f);
        char *name = mem_printf("acc_epoch-%s-%s", x->gr->id, sn), *sub = mem_printf("%s, strategy %s", x->gr->sub,
                                                                                        u[i]->strategy);
        if (!rc) report_emit(x->r, "acc_epoch.gp", name, x->path, "", x->gr, sub, x->cap);
        free(name), free(sub), free(sn);
        i = j;
    }
    if (!n) report_skip(x->r, "acc_epoch.gp", x->gr, "no epoch with a test accuracy");
    free(u);
    return rc;
}

/* (e) final test accuracy against learning rate: one line per strategy, GPU count, global batch, M, precision and
 * link; the seeds of a configuration give their median; only lines with 2 or more learning rates. */
static int same_lr_line(const study_run_t *a, const study_run_t *b) {
    int c = strcmp(a->strategy, b->strategy);
    if (!c) c = study_cmp_int(a->gpus, b->gpus);
    if (!c) c = study_cmp_int(a->global_batch, b->global_batch);
    if (!c) c = study_cmp_int(a->micro, b->micro);
    if (!c) c = strcmp(a->sched, b->sched);
    return c ? c : cmp_link(a, b);
}
static int same_lr_point(const study_run_t *a, const study_run_t *b) {
    int c = same_lr_line(a, b);
    return c ? c : study_cmp_num(study_run_lr(a), study_run_lr(b));
}
static void lr_label(bytes_t *b, const study_runs_t *s, const study_run_t *u) {
    text_printf(b, "%s, ", u->strategy);
    report_gpus_word(b, u->gpus);
    report_link_word(b, u);
    text_printf(b, ", batch %d", u->global_batch);
    if (u->pipe) text_printf(b, ", %s, M=%s", u->sched, u->mb);
    report_with_prec(b, s, u);
    variant_word(b, u);
}
static int has_facc(const study_run_t *u) { return !isnan(u->facc); }

static int fig_acc_lr(figs_t *x) {
    const study_runs_t *s = &x->r->st;
    fig_t f = {.s = s, .same = same_lr_line, .label = lr_label};
    int n;
    const study_run_t **u = study_runs_sorted(s, x->g, has_facc, same_lr_point, &n);
    double *acc = mem_alloc((size_t)(n ? n : 1) * sizeof *acc);
    for (int i = 0; i < n;) {
        int j = i, na = 0;
        for (; j < n && same_lr_point(u[i], u[j]) == 0; j++) acc[na++] = u[j]->facc;
        fig_point(&f, u[i], u[i]->lr, study_median(acc, na), NAN);
        i = j;
    }
    free(acc);
    free(u);
    return figure_out(x, &f, "acc_lr", 1, "no configuration swept over 2 or more learning rates");
}

/* (f) per-step compute, exposed communication and idle: one bar per batch, strategy, GPU count, precision and link,
 * from its run with the best median step; single shows its whole step as compute, at the batches the others ran;
 * idle is idle_ms (older CSVs: step - compute - exposed, clipped at 0). */
static int has_step(const study_run_t *u) { return !isnan(u->med[RESULTS_COL_step_ms]); }
static int has_compute(const study_run_t *u) { return has_step(u) && !isnan(u->med[RESULTS_COL_compute_ms]); }
static int cmp_bar(const study_run_t *a, const study_run_t *b) {
    int c = study_cmp_int(a->line_batch, b->line_batch);
    if (!c) c = study_cmp_int(!study_is_reference(a->info), !study_is_reference(b->info));
    if (!c) c = strcmp(a->strategy, b->strategy);
    if (!c) c = study_cmp_int(a->gpus, b->gpus);
    return c ? c : cmp_link(a, b);
}
static int by_int(const void *a, const void *b) { return study_cmp_int(*(const int *)a, *(const int *)b); }

/* One bar's line; 0 (nothing written) where a time is not finite: a CSV's "inf" parses, and gnuplot's histogram
 * takes no such point (a figure of nothing but them fails). */
static int bar_line(FILE *o, const study_runs_t *s, const study_run_t *u) {
    double step = u->med[RESULTS_COL_step_ms], compute = u->med[RESULTS_COL_compute_ms];
    double comp = !isnan(compute) ? compute : step;
    double expo = !isnan(u->med[RESULTS_COL_exposed_comm_ms]) ? u->med[RESULTS_COL_exposed_comm_ms] : 0;
    double idle = !isnan(u->med[RESULTS_COL_idle_ms]) ? u->med[RESULTS_COL_idle_ms] : step - comp - expo;
    if (idle < 0) idle = 0;
    if (!isfinite(comp) || !isfinite(expo) || !isfinite(idle)) return 0;
    bytes_t l = {0}, pw = {0};
    text_printf(&l, "%s %dx ", u->strategy, u->gpus);
    if (u->global) text_printf(&l, "b%d", u->line_batch);
    else text_printf(&l, "%d/GPU", u->line_batch);
    report_link_word(&l, u);
    report_prec_word(&pw, s, u);
    if (pw.len) text_printf(&l, " %s", pw.s);
    variant_word(&l, u);
    fprintf(o, "\"%s\" %.6g %.6g %.6g\n", l.s, comp, expo, idle);
    free(l.s), free(pw.s);
    return 1;
}

static int fig_breakdown(figs_t *x) {
    const study_runs_t *s = &x->r->st;
    int nc, n, bars = 0;
    const study_run_t **c = study_runs_sorted(s, x->g, has_compute, NULL, &nc);
    if (!nc) {
        free(c);
        report_skip(x->r, "breakdown.gp", x->gr, "no rows with compute_ms (data-parallel strategies)");
        return 0;
    }
    /* the batches some run has a compute time at: single's bars stand there only */
    int *batches = mem_alloc((size_t)nc * sizeof *batches);
    for (int i = 0; i < nc; i++) batches[i] = c[i]->line_batch;
    qsort(batches, (size_t)nc, sizeof *batches, by_int);
    free(c);
    const study_run_t **u = study_runs_sorted(s, x->g, has_step, cmp_bar, &n);
    free(x->path);
    x->path = mem_printf("%s/breakdown-%s.dat", x->r->out, x->gr->id);
    paths_replace_t out;
    FILE *o = paths_replace_begin(&out, x->path, NULL, 0) == 0 ? out.f : NULL;
    if (o) {
        fprintf(o, "label compute exposed_comm idle\n");
        for (int i = 0; i < n;) {
            const study_run_t *best = NULL;
            int j = i;
            for (; j < n && cmp_bar(u[i], u[j]) == 0; j++) {
                const study_run_t *v = u[j];
                int there = bsearch(&v->line_batch, batches, (size_t)nc, sizeof *batches, by_int) != NULL;
                if (isnan(v->med[RESULTS_COL_compute_ms]) && (!study_is_reference(v->info) || !there)) continue;
                if (!best || v->med[RESULTS_COL_step_ms] < best->med[RESULTS_COL_step_ms]) best = v;
            }
            if (best) bars += bar_line(o, s, best);
            i = j;
        }
    }
    free(u);
    free(batches);
    if (!o || paths_replace_end(&out, NULL, 0) != 0) return -1;
    if (!bars) {
        report_skip(x->r, "breakdown.gp", x->gr, "no bar with finite times");
        return 0;
    }
    char *name = mem_printf("breakdown-%s", x->gr->id);
    report_emit(x->r, "breakdown.gp", name, x->path, "", x->gr, x->gr->sub, x->cap);
    free(name);
    return 0;
}

/* (g) pipeline bubble against micro-batches: measured per stage count, schedule, batch and precision (median over
 * the runs of one M); ideal per stage count, the rows' own (bubble_ideal): (p-1)/(M+p-1) for GPipe and 1F1B, zero
 * bubble's per schedule. */
static int has_bubble(const study_run_t *u) { return !isnan(u->med[RESULTS_COL_bubble]) && study_isnum(u->mb); }
static int same_bubble_line(const study_run_t *a, const study_run_t *b) {
    int c = study_cmp_int(a->gpus, b->gpus);
    if (!c) c = strcmp(a->sched, b->sched);
    if (!c) c = study_cmp_int(a->global_batch, b->global_batch);
    return c ? c : study_cmp_prec(a, b);
}
static int same_bubble_point(const study_run_t *a, const study_run_t *b) {
    int c = same_bubble_line(a, b);
    return c ? c : strcmp(a->mb, b->mb);
}
static void bubble_label(bytes_t *b, const study_runs_t *s, const study_run_t *u) {
    text_printf(b, "measured, %d stages, %s, batch %d", u->gpus, u->sched, u->global_batch);
    report_with_prec(b, s, u);
}
static int zero_bubble(const study_run_t *u) { return strcmp(u->sched, sched_order_name(SCHED_ZB)) == 0; }
static int same_stages(const study_run_t *a, const study_run_t *b) {
    int c = study_cmp_int(a->gpus, b->gpus);
    if (!c) c = study_cmp_int(zero_bubble(a), zero_bubble(b));
    return c;
}
static void ideal_label(bytes_t *b, const study_runs_t *s, const study_run_t *u) {
    (void)s;
    if (zero_bubble(u)) text_printf(b, "ideal, p = %d, %s", u->gpus, sched_order_name(SCHED_ZB));
    else text_printf(b, "ideal (p-1)/(M+p-1), p = %d", u->gpus);
}

static int fig_bubble(figs_t *x) {
    const study_runs_t *s = &x->r->st;
    fig_t bub = {.s = s, .same = same_bubble_line, .label = bubble_label};
    fig_t ideal = {.s = s, .same = same_stages, .label = ideal_label};
    int n;
    const study_run_t **u = study_runs_sorted(s, x->g, has_bubble, same_bubble_point, &n);
    double *b = mem_alloc((size_t)(n ? n : 1) * sizeof *b);
    for (int i = 0; i < n;) {
        int j = i, nb = 0;
        for (; j < n && same_bubble_point(u[i], u[j]) == 0; j++) b[nb++] = u[j]->med[RESULTS_COL_bubble];
        const study_run_t *v = u[i];
        int p = v->gpus;
        fig_pointn(&bub, v, v->micro, 100 * study_median(b, nb), NAN);
        double id = !isnan(v->med[RESULTS_COL_bubble_ideal]) ? v->med[RESULTS_COL_bubble_ideal]
                                                              : (double)(p - 1) / (v->micro + p - 1);
        fig_pointn(&ideal, v, v->micro, 100.0 * id, NAN);
        i = j;
    }
    free(b);
    free(u);
    int rc = 0;
    if (!n) report_skip(x->r, "bubble.gp", x->gr, "no pipeline rows (columns micro_batches, bubble)");
    else {
        char *path2 = mem_printf("%s/bubble_ideal-%s.dat", x->r->out, x->gr->id);
        free(x->path);
        x->path = mem_printf("%s/bubble-%s.dat", x->r->out, x->gr->id);
        fig_build(&bub);
        fig_build(&ideal);
        if (write_series(&bub, x->path, 1, 0) < 0) rc = -1;
        else if (write_series(&ideal, path2, 1, 0) < 0) rc = -1, free(x->path), x->path = path2, path2 = NULL;
        if (!rc) {
            char *name = mem_printf("bubble-%s", x->gr->id);
            report_emit(x->r, "bubble.gp", name, x->path, path2, x->gr, x->gr->sub, x->cap);
            free(name);
        }
        free(path2);
    }
    fig_free(&bub);
    fig_free(&ideal);
    return rc;
}

static int group_figures(report_t *r, int g, char *err, size_t errlen) {
    figs_t x = {.r = r, .g = g, .gr = &r->st.grp[g], .one = study_one_gpu_group(&r->st, g)};
    bytes_t cap = {0}, gpus = {0};
    names_join(&gpus, &x.gr->gpus, ", ");
    text_printf(&cap, "GPU: %s  |  ", gpus.len ? gpus.s : "unknown");
    report_study_dates(&cap, x.gr);
    text_printf(&cap, "  |  %s", r->src);
    x.cap = cap.s;
    free(gpus.s);
    int rc = fig_scaling(&x) || fig_throughput(&x) || (x.one && fig_acc_batch(&x)) || fig_acc_epoch(&x) ||
             fig_acc_lr(&x) || fig_breakdown(&x) || fig_bubble(&x) || report_batch_figure(r, g, x.cap, err, errlen);
    if (rc) snprintf(err, errlen, "%s: cannot write", x.path);
    free(x.cap);
    free(x.path);
    return rc ? 1 : 0;
}

int report_figures(report_t *r, char *err, size_t errlen) {
    for (int g = 0; g < r->st.ng; g++)
        if (group_figures(r, g, err, errlen)) return 1;
    return 0;
}
