/* project.c — the report's projection past this host (doc/report.md): nccl data parallelism at 1 to 1024 GPUs as
 * nodes × GPUs per node, with NCCL's own cost model (src/graph/tuning.cc) over an intra-node and an inter-node α-β
 * path, and the pipeline on one node from its measured stage times; the model's error at every measured point; the
 * projection figure's data files. */
#include "report.h"
#include "../study/paths.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A data-parallel line of a strategy with NCCL's all-reduce (nccl): per-GPU batch, math, grad dtype. */
typedef struct {
    const study_run_t *key;        /* its first run: strategy, per-GPU batch, math */
    const char *gd;          /* its gradient dtype ("fp32" where the rows have none) */
    double S;                /* bytes per step, the largest of its runs */
    const char *algo;        /* the first on-host run's nccl_algo */
    double exposed, allreduce, exposed_e, allreduce_e; /* per step, summed: runs on this host, runs across nodes */
    int nr, nr_e;
    const fit_t *ki;
    double phi, phi_e;       /* the overlap on one node, and across nodes */
    int drawn;
} project_line_t;

/* A measured point: a line's best run per GPU count and node layout (nccl) or stage and M count (pipeline). */
typedef struct {
    const study_run_t *run;
    int line, pipe;
} meas_t;

typedef struct {
    report_t *r;
    const study_runs_t *s;
    FILE *md, *dat, *mdat;
    int nblk_dat, nblk_mdat;
    ar_path_t path;
    project_line_t *ln;
    int nl;
    const study_run_t **pl;  /* the pipeline lines: global batch, math, schedule; each its run with the most stages */
    int np;
    meas_t *ms;
    int nm;
} proj_t;

static const char *gd_of(const study_run_t *u) { return *u->gd ? u->gd : "fp32"; }
static int on_host_link(const study_run_t *u) { return !*u->link; }

/* The nccl lines by per-GPU batch, math, gradient dtype and strategy; a pipeline's by batch, math and schedule. */
static int cmp_nccl_line(const study_run_t *a, const study_run_t *b) {
    int c = study_cmp_int(a->per_gpu, b->per_gpu);
    if (!c) c = strcmp(a->math, b->math);
    if (!c) c = strcmp(gd_of(a), gd_of(b));
    return c ? c : strcmp(a->strategy, b->strategy);
}
static int cmp_pipe_line(const study_run_t *a, const study_run_t *b) {
    int c = study_cmp_int(a->line_batch, b->line_batch);
    if (!c) c = strcmp(a->math, b->math);
    return c ? c : strcmp(a->sched, b->sched);
}
static int cmp_nccl_point(const study_run_t *a, const study_run_t *b) {
    int c = cmp_nccl_line(a, b);
    if (!c) c = study_cmp_int(a->gpus, b->gpus);
    if (!c) c = study_cmp_int(a->nodes, b->nodes);
    return c ? c : strcmp(a->tr, b->tr);
}
static int cmp_pipe_point(const study_run_t *a, const study_run_t *b) {
    int c = cmp_pipe_line(a, b);
    if (!c) c = study_cmp_int(a->gpus, b->gpus);
    return c ? c : study_cmp_int(a->micro, b->micro);
}

/* The measured points of both kinds in one order: batch and math first, then a data-parallel point's gradient
 * dtype beside a pipeline's schedule, as text; where those are equal, the pipeline's point first: its stage count is
 * a number and the other's strategy a name, and the order puts numbers before names. */
static int cmp_meas(const void *x, const void *y) {
    const meas_t *a = x, *b = y;
    if (a->pipe == b->pipe) return a->pipe ? cmp_pipe_point(a->run, b->run) : cmp_nccl_point(a->run, b->run);
    const study_run_t *n = a->pipe ? b->run : a->run, *p = a->pipe ? a->run : b->run;
    int c = study_cmp_int(n->per_gpu, p->line_batch);
    if (!c) c = strcmp(n->math, p->math);
    if (!c) c = strcmp(gd_of(n), p->sched);
    if (!c) c = 1;
    return a->pipe ? -c : c;
}

static int is_nccl_point(const study_run_t *u) {
    return !isnan(u->med[RESULTS_COL_epoch_s]) && u->info && u->info->allreduce == STRATEGY_AR_NCCL && u->gpus >= 2;
}
static int is_pipe_point(const study_run_t *u) {
    return !isnan(u->med[RESULTS_COL_epoch_s]) && !is_nccl_point(u) && u->pipe && u->nbusy > 0;
}

/* A line's runs (in the order they started): its bytes, algorithm and overlap sums. */
static void line_of(project_line_t *l, const study_run_t *const *u, int n) {
    memset(l, 0, sizeof *l);
    l->key = u[0];
    l->gd = gd_of(u[0]);
    l->S = NAN;
    l->algo = "";
    for (int i = 0; i < n; i++) {
        double bytes = u[i]->med[RESULTS_COL_bytes_per_step], x = u[i]->med[RESULTS_COL_exposed_comm_ms],
               q = u[i]->med[RESULTS_COL_comm_ms];
        if (!isnan(bytes) && (isnan(l->S) || bytes > l->S)) l->S = bytes;
        if (u[i]->nodes > 1 && !isnan(x) && q > 0) l->exposed_e += x, l->allreduce_e += q, l->nr_e++;
        if (!on_host_link(u[i])) continue;
        if (!*l->algo) l->algo = u[i]->algo;
        if (!isnan(x) && q > 0) l->exposed += x, l->allreduce += q, l->nr++;
    }
}

/* The best (fastest, then first) run of each run of equal points in u, as measured points of line `line`. */
static void points_of(proj_t *p, const study_run_t **u, int n, int line, int pipe) {
    int (*cmp)(const study_run_t *, const study_run_t *) = pipe ? cmp_pipe_point : cmp_nccl_point;
    for (int i = 0; i < n;) {
        int j = i;
        const study_run_t *best = u[i];
        for (; j < n && cmp(u[i], u[j]) == 0; j++)
            if (u[j]->med[RESULTS_COL_epoch_s] < best->med[RESULTS_COL_epoch_s]) best = u[j];
        p->ms[p->nm++] = (meas_t){.run = best, .line = line, .pipe = pipe};
        i = j;
    }
}

static void gather(proj_t *p, int g) {
    const study_runs_t *s = p->s;
    p->nl = p->np = p->nm = 0;
    int n;
    const study_run_t **u = study_runs_sorted(s, g, is_nccl_point, cmp_nccl_line, &n);
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && cmp_nccl_line(u[i], u[j]) == 0) j++;
        line_of(&p->ln[p->nl], u + i, j - i);
        study_runs_sort(u + i, j - i, cmp_nccl_point);    /* its points by GPUs, nodes and transport */
        points_of(p, u + i, j - i, p->nl++, 0);
        i = j;
    }
    free(u);
    u = study_runs_sorted(s, g, is_pipe_point, cmp_pipe_line, &n);
    for (int i = 0; i < n;) {
        int j = i;
        const study_run_t *best = u[i];
        for (; j < n && cmp_pipe_line(u[i], u[j]) == 0; j++)
            if (u[j]->gpus > best->gpus ||
                (u[j]->gpus == best->gpus && u[j]->med[RESULTS_COL_epoch_s] < best->med[RESULTS_COL_epoch_s]))
                best = u[j];
        p->pl[p->np] = best;
        study_runs_sort(u + i, j - i, cmp_pipe_point);    /* its points by stages and micro-batches */
        points_of(p, u + i, j - i, p->np++, 1);
        i = j;
    }
    free(u);
    qsort(p->ms, (size_t)p->nm, sizeof *p->ms, cmp_meas);
}

/* "strategy, 256/GPU, tf32" and ", bf16 gradients" where they are not fp32; the data file's "strategy 256/GPU tf32
 * bf16 grads". */
static void line_label(bytes_t *b, const project_line_t *l) {
    int other = strcmp(l->gd, "fp32") != 0;
    text_printf(b, "%s, %d/GPU, %s%s%s%s", l->key->strategy, l->key->per_gpu, l->key->math, other ? ", " : "",
                other ? l->gd : "", other ? " gradients" : "");
}
static void line_key(bytes_t *b, const project_line_t *l) {
    int other = strcmp(l->gd, "fp32") != 0;
    text_printf(b, "%s %d/GPU %s%s%s%s", l->key->strategy, l->key->per_gpu, l->key->math, other ? " " : "",
                other ? l->gd : "", other ? " grads" : "");
}

static void curve(FILE *f, int *nblk, const char *title) {
    fprintf(f, "%s\"%s\"\n", *nblk ? "\n\n" : "", title);
    (*nblk)++;
}
static void point(FILE *f, int x, double sp, double ef) { fprintf(f, "%d %.6g %.6g\n", x, sp, ef); }

/* Medians of a pipeline run's stage busy times (none: 0): their sum, max and list. */
static void busy(const study_run_t *u, double *sum, double *max, bytes_t *list) {
    *sum = *max = 0;
    for (int k = 0; k < u->nbusy; k++) {
        double v = isnan(u->busy[k]) ? 0 : u->busy[k];
        *sum += v;
        if (v > *max) *max = v;
        if (list) text_printf(list, "%s%.3f", k ? "; " : "", v);
    }
}

static void err_row(FILE *md, const char *label, int n, const char *layout, double measured, double model,
                    const char *expo, const char *idle) {
    double e = isnan(model) ? NAN : 100 * (model - measured) / measured;
    if (!isnan(e) && e > -0.05 && e < 0.05) e = 0;
    char er[64] = "—";
    if (!isnan(e)) snprintf(er, sizeof er, "%+.1f %%", e);
    fprintf(md, "| %s | %d | %s | %.3f | %s | %s | %s | %s |\n", label, n, layout, measured, report_f3(model).s, er,
            expo,
            idle);
}

/* T1's runs, one row each: their model is their own steps × median step. */
static void t1_errors(proj_t *p, int g) {
    const study_runs_t *s = p->s;
    char *seen = mem_zalloc((size_t)(s->nr ? s->nr : 1), 1);
    for (int i = 0; i < p->nl + p->np; i++) {
        const study_run_t *k = i < p->nl ? p->ln[i].key : p->pl[i - p->nl];
        int bk = i < p->nl ? k->per_gpu : k->line_batch;
        int r1 = study_t1_run(s, g, bk, k->math);
        if (r1 < 0 || seen[r1]) continue;
        seen[r1] = 1;
        const study_run_t *u = &s->run[r1];
        char *lab = mem_printf(i < p->nl ? "%s, %d/GPU, %s" : "%s, batch %d, %s", u->strategy, bk, u->math);
        err_row(p->md, lab, 1, "1 × 1", u->med[RESULTS_COL_epoch_s],
                u->med[RESULTS_COL_steps] * u->med[RESULTS_COL_step_ms] / 1e3, "—", "—");
        free(lab);
    }
    free(seen);
}

static void pipe_error(proj_t *p, const study_run_t *u) {
    double sum, max;
    busy(u, &sum, &max, NULL);
    double model = u->med[RESULTS_COL_steps] * (u->micro + u->gpus - 1) / (double)u->micro * max / 1e3;
    char *lab = mem_printf("pipeline, batch %d, %s, %s, M = %d", u->line_batch, u->math, u->sched, u->micro);
    char *lay = mem_printf("1 × %d", u->gpus);
    err_row(p->md, lab, u->gpus, lay, u->med[RESULTS_COL_epoch_s], model, "—", "—");
    free(lab), free(lay);
}

/* A data-parallel point: the model at its node layout and algorithm; 1 when φ across nodes came from it. */
static int nccl_error(proj_t *p, int g, const study_run_t *u, const project_line_t *l) {
    const study_runs_t *s = p->s;
    int N = u->nodes;
    if (N <= 1 && !on_host_link(u)) return 0; /* one node over a forced transport: no path the model has */
    double bytes = u->med[RESULTS_COL_bytes_per_step];
    double ex = ar_path_row_ms(&p->path, u->algo, N, u->gpus / N, !isnan(bytes) ? bytes : l->S, l->ki);
    if (!isnan(ex)) ex *= N > 1 ? l->phi_e : l->phi;
    int r1 = study_t1_run(s, g, l->key->per_gpu, l->key->math);
    double model = isnan(ex) ? NAN : u->med[RESULTS_COL_steps] * (s->run[r1].med[RESULTS_COL_step_ms] + ex) / 1e3;
    bytes_t lab = {0};
    line_label(&lab, l);
    if (N > 1) text_printf(&lab, ", across nodes%s%s%s", *u->tr ? " (`" : "", u->tr, *u->tr ? "`)" : "");
    char *lay = mem_printf("%d × %d", N, u->gpn);
    char *expo = mem_printf("%s / %s", report_f3(u->med[RESULTS_COL_exposed_comm_ms]).s, report_f3(ex).s);
    err_row(p->md, lab.s, u->gpus, lay, u->med[RESULTS_COL_epoch_s], model, expo,
            report_f3(u->med[RESULTS_COL_idle_ms]).s);
    free(lab.s), free(lay), free(expo);
    return N > 1 && l->nr_e > 0;
}

static void errors(proj_t *p, int g) {
    FILE *md = p->md;
    fprintf(md, "#### Model error at the measured points\n\n");
    fprintf(md, "Error = (model − measured) / measured epoch time; exposed and idle are per step, from the rows.\n\n");
    fprintf(
        md,
        "| run | GPUs | nodes × GPUs | measured epoch (s) | model epoch (s) | error | exposed ms (measured / model) "
        "| idle ms |\n|---|---:|---:|---:|---:|---:|---|---:|\n");
    t1_errors(p, g);
    int own = 0;
    for (int i = 0; i < p->nm; i++) {
        const study_run_t *u = p->ms[i].run;
        if (u->pipe) {
            pipe_error(p, u);
            continue;
        }
        const project_line_t *l = p->ms[i].line >= 0 ? &p->ln[p->ms[i].line] : NULL;
        if (l && l->drawn) own += nccl_error(p, g, u, l);
    }
    fprintf(md, "\n");
    if (own)
        fprintf(md, "φ across nodes is measured on the runs across nodes above: at those points the error tests t₁, "
                    "the network fit and the cost model, not the overlap.\n\n");
}

static void measured_points(proj_t *p, int line, int pipe, int r1, int M) {
    const study_runs_t *s = p->s;
    curve(p->mdat, &p->nblk_mdat, "");
    point(p->mdat, 1, 1, 100);
    double t1 = s->run[r1].med[RESULTS_COL_epoch_s];
    for (int i = 0; i < p->nm; i++) {
        const study_run_t *u = p->ms[i].run;
        if (p->ms[i].pipe != pipe || p->ms[i].line != line || !on_host_link(u) || (pipe && u->micro != M)) continue;
        double t = u->med[RESULTS_COL_epoch_s];
        point(p->mdat, u->gpus, t1 / t, 100 * t1 / (u->gpus * t));
    }
}

static void emulated_points(proj_t *p, int g) {
    const study_runs_t *s = p->s;
    for (int i = 0; i < p->nm; i++) {
        const study_run_t *u = p->ms[i].run;
        if (p->ms[i].pipe || u->group != g || u->nodes <= 1 || p->ms[i].line < 0) continue;
        const project_line_t *l = &p->ln[p->ms[i].line];
        int r1 = study_t1_run(s, g, l->key->per_gpu, l->key->math);
        if (r1 < 0) continue;
        bytes_t t = {0};
        line_key(&t, l);
        text_printf(&t, ", %d nodes x %d, measured", u->nodes, u->gpn);
        curve(p->mdat, &p->nblk_mdat, t.s);
        free(t.s);
        double t1 = s->run[r1].med[RESULTS_COL_epoch_s], tn = u->med[RESULTS_COL_epoch_s];
        point(p->mdat, u->gpus, t1 / tn, 100 * t1 / (u->gpus * tn));
    }
}

/* One nccl line: its parameters, its table at 1 to 1024 GPUs, its curve and its measured points. */
static void nccl_line(proj_t *p, int g, int i) {
    report_t *r = p->r;
    const study_runs_t *s = p->s;
    FILE *md = p->md;
    project_line_t *l = &p->ln[i];
    bytes_t lab = {0};
    line_label(&lab, l);
    fprintf(md, "#### %s\n\n", lab.s);
    free(lab.s);
    int r1 = study_t1_run(s, g, l->key->per_gpu, l->key->math);
    if (r1 < 0 || isnan(l->S)) {
        if (r1 < 0) fprintf(md, "Not projected: no `%s` run at this batch and math (t₁).\n\n", study_ref(s));
        else fprintf(md, "Not projected: no bytes_per_step.\n\n");
        return;
    }
    int lent;
    const fit_t *ki = fit_of_grads(&r->fits, l->key->strategy, l->algo, l->gd, &lent);
    if (!fit_usable(ki)) ki = fit_of(&r->fits, l->key->strategy, l->algo, "float");
    l->ki = ki;
    l->drawn = 1;
    double S = l->S, t1 = s->run[r1].med[RESULTS_COL_step_ms], st1 = s->run[r1].med[RESULTS_COL_steps];
    l->phi = l->nr ? l->exposed / l->allreduce : 1;
    l->phi_e = l->nr_e ? l->exposed_e / l->allreduce_e : 1;
    fprintf(md, "S = %.0f B per step, t₁ = %.3f ms (`%s`, %d steps per epoch), φ = %.3f on one node ", S, t1,
            s->run[r1].strategy, (int)st1, l->phi);
    if (l->nr) fprintf(md, "(exposed / all-reduce time over %d nccl run(s) on this host)", l->nr);
    else fprintf(md, "(no overlap measured on this host: none assumed)");
    if (p->path.inter) {
        fprintf(md, ", φ = %.3f across nodes ", l->phi_e);
        if (l->nr_e) fprintf(md, "(over %d nccl run(s) across nodes)", l->nr_e);
        else fprintf(md, "(no nccl run across nodes in the CSV: no overlap assumed)");
    }
    fprintf(md, ", intra-node fit `%s`.", ki->name);
    /* Time to target where the batch curve of the line's recipe has a fit: its steps at the global batch, inside
     * the batches fitted, times the projected step. */
    batch_fit_t bf;
    int tt = report_batch_fit_of(r, g, l->key, &bf) == 0;
    if (tt)
        fprintf(md, " To target: the steps of the batch curve's fit at the global batch (%d/GPU × GPUs, within the "
                    "batches fitted, %.0f to %.0f) × the step, ± the fit's standard error.", l->key->per_gpu, bf.bmin,
                bf.bmax);
    fprintf(md, "\n\n| GPUs | nodes × GPUs | ring (ms) | tree (ms) | faster | exposed (ms) | step (ms) | epoch (s) "
                "| speedup | efficiency |%s\n|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|%s\n",
            tt ? " to target (s) |" : "", tt ? "---:|" : "");
    bytes_t t = {0};
    line_key(&t, l);
    if (p->path.inter) text_printf(&t, ", φ %.2f, %.2f across nodes", l->phi, l->phi_e);
    else text_printf(&t, ", φ %.2f", l->phi);
    curve(p->dat, &p->nblk_dat, t.s);
    free(t.s);
    int dagger = 0;
    for (int G = 1; G <= 1024; G *= 2) {
        int N = G <= r->gpn ? 1 : G / r->gpn, gg = G <= r->gpn ? G : r->gpn;
        if (N > 1 && !p->path.inter) break;
        double rr = ar_path_ms(&p->path, 0, N, gg, S, ki), tt_ms = ar_path_ms(&p->path, 1, N, gg, S, ki);
        double tar = fmin(rr, tt_ms), ex = (N > 1 ? l->phi_e : l->phi) * tar, step = t1 + ex;
        if (G > st1) dagger = 1;
        fprintf(md, "| %d | %d × %d | %s | %s | %s | %s | %s | %.4f%s | %.2f | %.1f %% |", G, N, gg, report_f3(rr).s,
                report_f3(tt_ms).s, G == 1 ? "—" : (tt_ms < rr ? "tree" : "ring"), report_f3(ex).s, report_f3(step).s,
                st1 / G * step / 1e3, G > st1 ? " †" : "", G * t1 / step, 100 * t1 / step);
        double b = (double)l->key->per_gpu * G, se;
        if (tt && b >= bf.bmin && b <= bf.bmax) {
            double steps = report_batch_steps(&bf, b, &se);
            fprintf(md, " %.2f", steps * step / 1e3);
            if (!isnan(se)) fprintf(md, " ± %.2f", se * step / 1e3);
            fprintf(md, " |");
        } else if (tt) fprintf(md, " — |");
        fprintf(md, "\n");
        point(p->dat, G, G * t1 / step, 100 * t1 / step);
    }
    if (dagger)
        fprintf(md, "\n† the global batch exceeds the training set: an epoch is less than a step (a throughput view).\n");
    fprintf(md, "\n");
    measured_points(p, i, 0, r1, 0);
}

/* One pipeline line on one node, from the stage busy times at its largest stage count. */
static void pipe_line(proj_t *p, int g, int i) {
    report_t *r = p->r;
    const study_runs_t *s = p->s;
    FILE *md = p->md;
    const study_run_t *u = p->pl[i];
    int P = u->gpus, M = u->micro;
    int r1 = study_t1_run(s, g, u->line_batch, u->math);
    fprintf(md, "#### pipeline, batch %d, %s, %s, M = %d\n\n", u->line_batch, u->math, u->sched, M);
    if (r1 < 0 || M < 1) {
        if (M < 1) fprintf(md, "Not projected: no micro-batch count.\n\n");
        else fprintf(md, "Not projected: no `%s` run at this batch and math (t₁).\n\n", study_ref(s));
        return;
    }
    double sum, max;
    bytes_t list = {0};
    busy(u, &sum, &max, &list);
    double imb = max / (sum / u->nbusy), t1 = s->run[r1].med[RESULTS_COL_step_ms];
    fprintf(md, "Stage busy times measured at p = %d (%s ms per step, medians): ΣB = %.3f ms, imbalance %.3f; ", P,
            text_str(&list), sum, imb);
    free(list.s);
    fprintf(md, "t₁ = %.3f ms.\n\n", t1);
    fprintf(md, "| GPUs (stages) | bubble (p−1)/(M+p−1) | step (ms) | epoch (s) | speedup | efficiency |\n"
                "|---:|---:|---:|---:|---:|---:|\n");
    char *t = mem_printf("pipeline batch %d %s %s M=%d", u->line_batch, u->math, u->sched, M);
    curve(p->dat, &p->nblk_dat, t);
    free(t);
    for (int G = 1; G <= r->gpn && G <= 1024; G *= 2) {
        double step = (double)(M + G - 1) / M * sum / G * (G > 1 ? imb : 1);
        fprintf(md, "| %d | %.1f %% | %.3f | %.3f | %.2f | %.1f %% |\n", G, 100.0 * (G - 1) / (M + G - 1), step,
                u->med[RESULTS_COL_steps] * step / 1e3, t1 / step, 100 * t1 / (G * step));
        point(p->dat, G, t1 / step, 100 * t1 / (G * step));
    }
    fprintf(md, "\n");
    measured_points(p, i, 1, r1, M);
}

/* The projection figure, its caption holding the model's assumptions. */
static void projection_plot(proj_t *p, const study_group_t *gr, const char *dat, const char *mdat) {
    report_t *r = p->r;
    plot_t *f = report_plot_add(r);
    const fit_t *ki = p->path.ki;
    f->script = mem_printf("projection.gp");
    f->name = mem_printf("projection-%s", gr->id);
    f->data = mem_printf("%s", dat);
    f->data2 = mem_printf("%s", mdat);
    f->subtitle = mem_printf("%s", gr->sub);
    bytes_t inter = {0}, gpus = {0}, dates = {0};
    if (p->path.inter)
        text_printf(&inter, "inter-node %.1f us + %.1f GB/s per GPU (%s)", p->path.ae, 1e-3 / p->path.be,
                    text_str(&r->inter_cap));
    else text_printf(&inter, "no inter-node path: one node only");
    names_join(&gpus, &gr->gpus, ", ");
    report_study_dates(&dates, gr);
    /* lines separated by a literal \n, which projection.gp turns into line breaks */
    f->caption = mem_printf(
        "model: nccl step = t1 + phi x all-reduce (ring or tree, the faster: NCCL's cost model), weak scaling, "
        "%d GPUs per node\\nall-reduce: intra-node %.1f us per step + %.1f GB/s (fit); %s\\n"
        "pipeline: (M+p-1)/M x sum of measured stage times / p x imbalance, one node, copies free; "
        "points: measured (T1: %s's epoch)\\nGPU: %s  |  %s  |  %s",
        r->gpn, ki->alpha, 1e-3 / ki->beta, inter.s, study_ref(p->s), gpus.len ? gpus.s : "unknown", text_str(&dates),
        r->src);
    free(inter.s), free(gpus.s), free(dates.s);
}

static void group(proj_t *p, int g) {
    report_t *r = p->r;
    const study_runs_t *s = p->s;
    const study_group_t *gr = &s->grp[g];
    FILE *md = p->md;
    fprintf(md, "### %s\n\n", gr->sub);
    p->nblk_dat = p->nblk_mdat = 0;
    gather(p, g);
    if (p->nl + p->np == 0) {
        fprintf(md, "No nccl or pipeline runs to project.\n\n");
        return;
    }
    int drawn = 0;
    for (int i = 0; i < p->nl; i++)
        drawn += study_t1_run(s, g, p->ln[i].key->per_gpu, p->ln[i].key->math) >= 0 && !isnan(p->ln[i].S);
    for (int i = 0; i < p->np; i++) drawn += study_t1_run(s, g, p->pl[i]->line_batch, p->pl[i]->math) >= 0 &&
                                             p->pl[i]->micro >= 1;
    if (!drawn) {
        fprintf(md,
                "Not projected: no `%s` run at the batch and math of any nccl or pipeline run (t₁); run one "
                "beside them.\n\n",
                study_ref(s));
        return;
    }
    char *dat = mem_printf("%s/projection-%s.dat", r->out, gr->id);
    char *mdat = mem_printf("%s/projection_measured-%s.dat", r->out, gr->id);
    paths_replace_t d, m;   /* written whole, then renamed into place (study/paths.h) */
    int ok = paths_replace_begin(&d, dat, NULL, 0) == 0;
    if (ok && paths_replace_begin(&m, mdat, NULL, 0) != 0) paths_replace_abort(&d), ok = 0;
    if (!ok) {
        fprintf(md, "(cannot write %s)\n\n", dat);
        free(dat), free(mdat);
        return;
    }
    p->dat = d.f;
    p->mdat = m.f;
    if (r->gnuplot)
        fprintf(md, "![projected speedup and efficiency, 1 to 1024 GPUs](projection-%s.png)\n\n*The model's speedup "
                    "and efficiency from 1 to 1024 GPUs (lines), with the measured points (markers) it must meet: "
                    "where a line bends is where communication starts to cost.*\n\n",
                gr->id);
    for (int i = 0; i < p->nl; i++) nccl_line(p, g, i);
    for (int i = 0; i < p->np; i++) pipe_line(p, g, i);
    emulated_points(p, g);
    ok = paths_replace_end(&d, NULL, 0) == 0;
    if (paths_replace_end(&m, NULL, 0) != 0) ok = 0;
    p->dat = p->mdat = NULL;
    if (!ok) fprintf(md, "(cannot write %s)\n\n", dat);
    errors(p, g);
    if (ok && r->gnuplot) projection_plot(p, gr, dat, mdat);
    free(dat), free(mdat);
}

static void explain(proj_t *p) {
    report_t *r = p->r;
    FILE *md = p->md;
    fprintf(
        md,
        "Predicted from the measured steps, the all-reduce fits and NCCL's cost model, at 1 to 1024 GPUs as nodes × "
        "%d GPUs per node (`--gpus-per-node`). Data parallel (nccl), weak scaling at the measured per-GPU batch:\n\n",
        r->gpn);
    fprintf(md,
            "- step(n) = t₁ + φ·t_AR(N, g, S); epoch = steps₁/n × step(n); speedup = n·t₁/step(n); efficiency = "
            "t₁/step(n). t₁ is `%s`'s median step at that batch, steps₁ its steps per epoch, S the bytes the nccl "
            "rows reduce per step (the gradients in the run's grad dtype), φ the measured overlap (exposed over total "
            "all-reduce time) of the nccl runs over the link nearest the projected one, held constant as the "
            "all-reduce grows: on one node, the runs on this host; across nodes, the runs across nodes where the CSV "
            "has them (emulated or real), else none (φ = 1, said below), since overlap on NVLink says little about "
            "overlap over a network.\n",
            study_ref(&r->st));
    fprintf(md, "- t_AR over N nodes × g GPUs (n = N·g) is NCCL's own cost model (`src/graph/tuning.cc`, "
                "`ncclTopoTuneModel`: latency per step, bus bandwidth as nccl-tests' `doc/PERFORMANCE.md` defines it, "
                "busbw = algbw·2(n−1)/n for a ring):\n");
    fprintf(md, "  - ring: (2(n−1) − 2(N−1))·α_intra + 2(N−1)·α_inter + 2(n−1)/n·S·β: 2(n−1) steps, 2(N−1) of them "
                "between nodes, and 2(n−1)/n of the bytes through the slowest link;\n");
    fprintf(md, "  - tree: 2((g−1)·α_intra + log₂N·α_inter) + 2·S·β: a chain inside each node and a double binary tree "
                "across nodes, reduce then broadcast (NCCL's tree algbw is half its busbw);\n");
    fprintf(md, "  - β = β_intra on one node, else max(β_intra, β_inter/g): a node's g rings (NCCL channels) leave it "
                "through g NICs, one per GPU.\n");
    fprintf(md,
            "  NCCL picks whichever its model says is faster (the harness pins `NCCL_ALGO=Ring` unless `NCCL_ALGO` is "
            "set: unset it at scale); the projection takes the faster and names it. At a measured point the model uses "
            "the algorithm the row records.\n");
    fprintf(md,
            "- Pipeline (every stage sees the global batch), on one node only: step(p) = (M + p − 1)/M × ΣB/p × "
            "imbalance, with B the stage busy times measured at the largest stage count and imbalance = max B / mean B "
            "(1 at p = 1); at a measured point step = (M + p − 1)/M × max B: the bubble (p−1)/(M+p−1) with the "
            "measured stage times. Copies between stages are not modelled, nor how many stages a model can be cut "
            "into.\n\n");
    fprintf(md, "| path | α (µs per step) | bandwidth (GB/s) | source |\n|---|---:|---:|---|\n");
    char *src = report_md_code(r->bench_src, 1);
    fprintf(md, "| intra-node | %.2f | %.1f | ring fit `%s` to %s (above) |\n", p->path.ki->alpha,
            1e-3 / p->path.ki->beta, p->path.ki->name, src);
    free(src);
    if (p->path.inter)
        fprintf(md, "| inter-node, per GPU | %.2f | %.1f | %s |\n", p->path.ae, 1e-3 / p->path.be,
                text_str(&r->inter_src));
    fprintf(md, "\n");
    if (r->inter_note.len) fprintf(md, "%s.\n\n", r->inter_note.s);
    if (!p->path.inter)
        fprintf(md,
                "no inter-node path (no emulated-network benchmark: pass `--net-allreduce FILE`, or `--net-gbs` and "
                "`--net-latency-us`): data parallelism projected on one node only, up to %d GPUs.\n\n",
                r->gpn);
}

void report_projection(report_t *r, FILE *md) {
    fprintf(md, "## Projection past this host\n\n");
    if (!r->have_bench) {
        char *cmd = report_bench_command(r);
        char *c = report_md_code(cmd, 0);
        fprintf(md, "no all-reduce benchmark: projection omitted (it needs the intra-node α-β fit: run %s, or pass "
                    "`--allreduce FILE`).\n", c);
        free(cmd), free(c);
        return;
    }
    const fit_t *ki = fit_nccl(&r->fits, "", "float");
    if (*r->bench_err || !fit_usable(ki)) {
        char *src = report_md_code(r->bench_src, 0), *why = *r->bench_err ? report_md_code(r->bench_err, 0) : NULL;
        fprintf(md, "%s: %s: projection omitted.\n", src, why ? why : "no nccl rows that fit α ≥ 0 and β > 0");
        free(src), free(why);
        return;
    }
    proj_t p = {.r = r, .s = &r->st, .md = md};
    int n = r->st.nr ? r->st.nr : 1;
    p.ln = mem_zalloc((size_t)n, sizeof *p.ln);
    p.pl = mem_zalloc((size_t)n, sizeof *p.pl);
    p.ms = mem_zalloc((size_t)n, sizeof *p.ms);
    ar_path_inter(&p.path, r);
    /* fits_read may have moved the fits: find the intra-node one again */
    p.path.ki = fit_nccl(&r->fits, "", "float");
    explain(&p);
    for (int g = 0; g < r->st.ng; g++) group(&p, g);
    free(p.ln);
    free(p.pl);
    free(p.ms);
}
