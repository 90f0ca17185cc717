/* project.c — the report's projection past this host (doc/report.md): nccl data parallelism at 1 to 1024 GPUs as
 * nodes × GPUs per node, with NCCL's own cost model (src/graph/tuning.cc) over an intra-node and an inter-node α-β
 * path, and the pipeline on one node from its measured stage times; the model's error at every measured point; the
 * projection figure's data files. */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A data-parallel line of a strategy with NCCL's all-reduce (nccl): per-GPU batch, math, grad dtype. */
typedef struct {
    char key[300];
    const char *strategy;
    int b;
    const char *math, *gd;
    double S;                /* bytes per step, the largest of its runs */
    const char *algo;        /* the first on-host run's nccl_algo */
    double lx, lq, lxe, lqe; /* exposed and all-reduce time per step: runs on this host, runs across nodes */
    int lnr, lnre;
    const fit_t *ki;
    double phi, phi_e; /* the overlap on one node, and across nodes */
    int drawn;
} line_t;

/* A pipeline line: global batch, math, schedule; its run with the most stages (then the fastest). */
typedef struct {
    char key[300];
    int run;
} pline_t;

/* A measured point: a line's best run per GPU count and node layout (nccl) or stage and M count (pipeline). */
typedef struct {
    char key[400];
    int line, pipe, run;
} meas_t;

static int cmp_key(const void *a, const void *b) { return strcmp((const char *)a, (const char *)b); }

static const char *gd_of(const run_t *u) { return *u->gd ? u->gd : "fp32"; }
static int on_host_link(const run_t *u) { return !*u->link; }

static void line_label(char *b, size_t n, const line_t *l) {
    snprintf(b, n, "%s, %d/GPU, %s%s%s", l->strategy, l->b, l->math, strcmp(l->gd, "fp32") ? ", " : "",
             strcmp(l->gd, "fp32") ? l->gd : "");
    if (strcmp(l->gd, "fp32")) strncat(b, " gradients", n - strlen(b) - 1);
}
static void line_key(char *b, size_t n, const line_t *l) {
    snprintf(b, n, "%s %d/GPU %s%s%s%s", l->strategy, l->b, l->math, strcmp(l->gd, "fp32") ? " " : "",
             strcmp(l->gd, "fp32") ? l->gd : "", strcmp(l->gd, "fp32") ? " grads" : "");
}

typedef struct {
    report_t *r;
    const study_runs_t *s;
    FILE *md, *dat, *mdat;
    int nblk_dat, nblk_mdat;
    ar_path_t path;
    line_t *ln;
    int nl;
    pline_t *pl;
    int np;
    meas_t *ms;
    int nm;
} proj_t;

static void curve(FILE *f, int *nblk, const char *title) {
    fprintf(f, "%s\"%s\"\n", *nblk ? "\n\n" : "", title);
    (*nblk)++;
}
static void point(FILE *f, int x, double sp, double ef) { fprintf(f, "%d %.6g %.6g\n", x, sp, ef); }

static void gather(proj_t *p, int g) {
    const study_runs_t *s = p->s;
    p->nl = p->np = p->nm = 0;
    for (int i = 0; i < s->nr; i++) {
        const run_t *u = &s->run[i];
        if (u->group != g || isnan(u->tmed)) continue;
        char K[300] = "", k[400];
        if (u->info && u->info->allreduce == STRATEGY_AR_NCCL && u->gpus >= 2) {
            key_num(K, sizeof K, u->b);
            key_str(K, sizeof K, u->math);
            key_str(K, sizeof K, gd_of(u));
            key_str(K, sizeof K, u->strategy); /* last: the points' order among the pipeline's as by batch */
            int j = 0;
            while (j < p->nl && strcmp(p->ln[j].key, K)) j++;
            if (j == p->nl) {
                memset(&p->ln[j], 0, sizeof p->ln[j]);
                snprintf(p->ln[j].key, sizeof p->ln[j].key, "%s", K);
                p->ln[j].strategy = u->strategy;
                p->ln[j].b = u->b;
                p->ln[j].math = u->math;
                p->ln[j].gd = gd_of(u);
                p->ln[j].S = NAN;
                p->ln[j].algo = "";
                p->nl++;
            }
            line_t *l = &p->ln[j];
            if (!isnan(u->ymed) && (isnan(l->S) || u->ymed > l->S)) l->S = u->ymed;
            snprintf(k, sizeof k, "%s", K);
            key_num(k, sizeof k, u->gpus);
            key_num(k, sizeof k, u->nodes);
            key_str(k, sizeof k, u->tr);
            int m = 0;
            while (m < p->nm && strcmp(p->ms[m].key, k)) m++;
            if (m == p->nm) {
                snprintf(p->ms[m].key, sizeof p->ms[m].key, "%s", k);
                p->ms[m].run = i;
                p->ms[m].pipe = 0;
                p->nm++;
            } else if (u->tmed < s->run[p->ms[m].run].tmed)
                p->ms[m].run = i;
            if (u->nodes > 1 && !isnan(u->xmed) && u->qmed > 0) {
                l->lxe += u->xmed;
                l->lqe += u->qmed;
                l->lnre++;
            }
            if (!on_host_link(u)) continue;
            if (!*l->algo) l->algo = u->algo;
            if (!isnan(u->xmed) && u->qmed > 0) {
                l->lx += u->xmed;
                l->lq += u->qmed;
                l->lnr++;
            }
        } else if (u->pipe && u->ns > 0) {
            key_num(K, sizeof K, u->bk);
            key_str(K, sizeof K, u->math);
            key_str(K, sizeof K, u->sched);
            int j = 0;
            while (j < p->np && strcmp(p->pl[j].key, K)) j++;
            if (j == p->np) {
                snprintf(p->pl[j].key, sizeof p->pl[j].key, "%s", K);
                p->pl[j].run = i;
                p->np++;
            } else {
                const run_t *o = &s->run[p->pl[j].run];
                if (u->gpus > o->gpus || (u->gpus == o->gpus && u->tmed < o->tmed)) p->pl[j].run = i;
            }
            snprintf(k, sizeof k, "%s", K);
            key_num(k, sizeof k, u->gpus);
            key_num(k, sizeof k, u->M);
            int m = 0;
            while (m < p->nm && strcmp(p->ms[m].key, k)) m++;
            if (m == p->nm) {
                snprintf(p->ms[m].key, sizeof p->ms[m].key, "%s", k);
                p->ms[m].run = i;
                p->ms[m].pipe = 1;
                p->nm++;
            } else if (u->tmed < s->run[p->ms[m].run].tmed)
                p->ms[m].run = i;
        }
    }
    qsort(p->ln, (size_t)p->nl, sizeof *p->ln, cmp_key);
    qsort(p->pl, (size_t)p->np, sizeof *p->pl, cmp_key);
    qsort(p->ms, (size_t)p->nm, sizeof *p->ms, cmp_key);
    /* each measured point's line, by its key's prefix */
    for (int m = 0; m < p->nm; m++) {
        p->ms[m].line = -1;
        int nlines = p->ms[m].pipe ? p->np : p->nl;
        for (int j = 0; j < nlines; j++) {
            const char *K = p->ms[m].pipe ? p->pl[j].key : p->ln[j].key;
            size_t n = strlen(K);
            if (strncmp(p->ms[m].key, K, n) == 0 && p->ms[m].key[n] == '\034') {
                p->ms[m].line = j;
                break;
            }
        }
    }
}

/* Medians of a pipeline run's stage busy times: their sum, max and list. */
static void busy(const run_t *u, double *sum, double *max, char *list, size_t len) {
    *sum = *max = 0;
    list[0] = '\0';
    for (int k = 0; k < u->ns; k++) {
        double *x = malloc((size_t)(u->sb[k].n ? u->sb[k].n : 1) * sizeof *x);
        if (!x) continue;
        memcpy(x, u->sb[k].v, (size_t)u->sb[k].n * sizeof *x);
        double v = study_median(x, u->sb[k].n);
        free(x);
        if (isnan(v)) v = 0;
        *sum += v;
        if (v > *max) *max = v;
        size_t l = strlen(list);
        snprintf(list + l, len - l, "%s%.3f", k ? "; " : "", v);
    }
}

static void err_row(FILE *md, const char *label, int n, const char *layout, double measured, double model,
                    const char *expo, const char *idle) {
    double e = isnan(model) ? NAN : 100 * (model - measured) / measured;
    if (!isnan(e) && e > -0.05 && e < 0.05) e = 0;
    char mo[32], er[32];
    if (isnan(model))
        snprintf(mo, sizeof mo, "—");
    else
        snprintf(mo, sizeof mo, "%.3f", model);
    if (isnan(e))
        snprintf(er, sizeof er, "—");
    else
        snprintf(er, sizeof er, "%+.1f %%", e);
    fprintf(md, "| %s | %d | %s | %.3f | %s | %s | %s | %s |\n", label, n, layout, measured, mo, er, expo, idle);
}

static void errors(proj_t *p, int g) {
    const study_runs_t *s = p->s;
    FILE *md = p->md;
    fprintf(md, "#### Model error at the measured points\n\n");
    fprintf(md, "Error = (model − measured) / measured epoch time; exposed and idle are per step, from the rows.\n\n");
    fprintf(
        md,
        "| run | GPUs | nodes × GPUs | measured epoch (s) | model epoch (s) | error | exposed ms (measured / model) "
        "| idle ms |\n|---|---:|---:|---:|---:|---:|---|---:|\n");
    int *seen = calloc((size_t)(s->nr ? s->nr : 1), sizeof *seen), own = 0;
    for (int i = 0; seen && i < p->nl + p->np; i++) {
        int bk;
        const char *m;
        if (i < p->nl)
            bk = p->ln[i].b, m = p->ln[i].math;
        else
            bk = s->run[p->pl[i - p->nl].run].bk, m = s->run[p->pl[i - p->nl].run].math;
        int r1 = study_t1_run(s, g, bk, m);
        if (r1 < 0 || seen[r1]) continue;
        seen[r1] = 1;
        const run_t *u = &s->run[r1];
        char lab[200];
        snprintf(lab, sizeof lab, i < p->nl ? "%s, %d/GPU, %s" : "%s, batch %d, %s", u->strategy, bk, u->math);
        err_row(md, lab, 1, "1 × 1", u->tmed, u->nmed * u->smed / 1e3, "—", "—");
    }
    free(seen);
    for (int i = 0; i < p->nm; i++) {
        const run_t *u = &s->run[p->ms[i].run];
        char lab[400], lay[64], expo[80], x1[32], x2[32], x3[32];
        if (u->pipe) {
            double sum, max;
            char list[512];
            busy(u, &sum, &max, list, sizeof list);
            double model = u->nmed * (u->M + u->gpus - 1) / (double)u->M * max / 1e3;
            snprintf(lab, sizeof lab, "pipeline, batch %d, %s, %s, M = %d", u->bk, u->math, u->sched, u->M);
            snprintf(lay, sizeof lay, "1 × %d", u->gpus);
            err_row(md, lab, u->gpus, lay, u->tmed, model, "—", "—");
            continue;
        }
        const line_t *l = p->ms[i].line >= 0 ? &p->ln[p->ms[i].line] : NULL;
        if (!l || !l->drawn) continue;
        int N = u->nodes;
        if (N <= 1 && !on_host_link(u)) continue; /* one node over a forced transport: no path the model has */
        double ex = ar_path_row_ms(&p->path, u->algo, N, u->gpus / N, !isnan(u->ymed) ? u->ymed : l->S, l->ki);
        if (!isnan(ex)) ex *= N > 1 ? l->phi_e : l->phi;
        int r1 = study_t1_run(s, g, l->b, l->math);
        double model = isnan(ex) ? NAN : u->nmed * (s->run[r1].smed + ex) / 1e3;
        line_label(lab, sizeof lab, l);
        if (N > 1) {
            size_t n = strlen(lab);
            snprintf(lab + n, sizeof lab - n, ", across nodes%s%s%s", *u->tr ? " (`" : "", u->tr, *u->tr ? "`)" : "");
        }
        snprintf(lay, sizeof lay, "%d × %d", N, u->gpn);
        snprintf(expo, sizeof expo, "%s / %s", f3(x1, 32, u->xmed), f3(x2, 32, ex));
        err_row(md, lab, u->gpus, lay, u->tmed, model, expo, f3(x3, 32, u->dmed));
        own += N > 1 && l->lnre > 0;
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
    for (int i = 0; i < p->nm; i++) {
        const run_t *u = &s->run[p->ms[i].run];
        if (p->ms[i].pipe != pipe || p->ms[i].line != line || !on_host_link(u) || (pipe && u->M != M)) continue;
        double t1 = s->run[r1].tmed;
        point(p->mdat, u->gpus, t1 / u->tmed, 100 * t1 / (u->gpus * u->tmed));
    }
}

static void emulated_points(proj_t *p, int g) {
    const study_runs_t *s = p->s;
    for (int i = 0; i < p->nm; i++) {
        const run_t *u = &s->run[p->ms[i].run];
        if (p->ms[i].pipe || u->group != g || u->nodes <= 1 || p->ms[i].line < 0) continue;
        const line_t *l = &p->ln[p->ms[i].line];
        int r1 = study_t1_run(s, g, l->b, l->math);
        if (r1 < 0) continue;
        char lk[200], t[300];
        line_key(lk, sizeof lk, l);
        snprintf(t, sizeof t, "%s, %d nodes x %d, measured", lk, u->nodes, u->gpn);
        curve(p->mdat, &p->nblk_mdat, t);
        double t1 = s->run[r1].tmed;
        point(p->mdat, u->gpus, t1 / u->tmed, 100 * t1 / (u->gpus * u->tmed));
    }
}

static void group(proj_t *p, int g) {
    report_t *r = p->r;
    const study_runs_t *s = p->s;
    const group_t *gr = &s->grp[g];
    FILE *md = p->md;
    fprintf(md, "### %s\n\n", gr->sub);
    char dat[1400], mdat[1400];
    snprintf(dat, sizeof dat, "%s/projection-%s.dat", r->out, gr->id);
    snprintf(mdat, sizeof mdat, "%s/projection_measured-%s.dat", r->out, gr->id);
    p->nblk_dat = p->nblk_mdat = 0;
    gather(p, g);
    if (p->nl + p->np == 0) {
        fprintf(md, "No nccl or pipeline runs to project.\n\n");
        return;
    }
    int drawn = 0;
    for (int i = 0; i < p->nl; i++) drawn += study_t1_run(s, g, p->ln[i].b, p->ln[i].math) >= 0 && !isnan(p->ln[i].S);
    for (int i = 0; i < p->np; i++) {
        const run_t *u = &s->run[p->pl[i].run];
        drawn += study_t1_run(s, g, u->bk, u->math) >= 0 && u->M >= 1;
    }
    if (!drawn) {
        fprintf(md,
                "Not projected: no `%s` run at the batch and math of any nccl or pipeline run (t₁); run one "
                "beside them.\n\n",
                s->ref);
        return;
    }
    p->dat = fopen(dat, "w");
    p->mdat = fopen(mdat, "w");
    if (!p->dat || !p->mdat) {
        if (p->dat) fclose(p->dat);
        if (p->mdat) fclose(p->mdat);
        fprintf(md, "(cannot write %s)\n\n", dat);
        return;
    }
    if (r->gnuplot) fprintf(md, "![projected speedup and efficiency, 1 to 1024 GPUs](projection-%s.png)\n\n", gr->id);
    for (int i = 0; i < p->nl; i++) {
        line_t *l = &p->ln[i];
        char lab[200];
        line_label(lab, sizeof lab, l);
        fprintf(md, "#### %s\n\n", lab);
        int r1 = study_t1_run(s, g, l->b, l->math);
        if (r1 < 0 || isnan(l->S)) {
            if (r1 < 0)
                fprintf(md, "Not projected: no `%s` run at this batch and math (t₁).\n\n", s->ref);
            else
                fprintf(md, "Not projected: no bytes_per_step.\n\n");
            continue;
        }
        int lent;
        const fit_t *ki = fit_of_grads(&r->fits, l->strategy, l->algo, l->gd, &lent);
        if (!fit_usable(ki)) ki = fit_of(&r->fits, l->strategy, l->algo, "float");
        l->ki = ki;
        l->drawn = 1;
        double S = l->S, t1 = s->run[r1].smed, st1 = s->run[r1].nmed;
        l->phi = l->lnr ? l->lx / l->lq : 1;
        l->phi_e = l->lnre ? l->lxe / l->lqe : 1;
        fprintf(md, "S = %.0f B per step, t₁ = %.3f ms (`%s`, %d steps per epoch), φ = %.3f on one node ", S, t1,
                s->run[r1].strategy, (int)st1, l->phi);
        if (l->lnr)
            fprintf(md, "(exposed / all-reduce time over %d nccl run(s) on this host)", l->lnr);
        else
            fprintf(md, "(no overlap measured on this host: none assumed)");
        if (p->path.inter) {
            fprintf(md, ", φ = %.3f across nodes ", l->phi_e);
            if (l->lnre)
                fprintf(md, "(over %d nccl run(s) across nodes)", l->lnre);
            else
                fprintf(md, "(no nccl run across nodes in the CSV: no overlap assumed)");
        }
        fprintf(md, ", intra-node fit `%s`.\n\n", ki->name);
        fprintf(md, "| GPUs | nodes × GPUs | ring (ms) | tree (ms) | faster | exposed (ms) | step (ms) | epoch (s) "
                    "| speedup | efficiency |\n|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|\n");
        char lk[200], t[260];
        line_key(lk, sizeof lk, l);
        if (p->path.inter)
            snprintf(t, sizeof t, "%s, φ %.2f, %.2f across nodes", lk, l->phi, l->phi_e);
        else
            snprintf(t, sizeof t, "%s, φ %.2f", lk, l->phi);
        curve(p->dat, &p->nblk_dat, t);
        int dagger = 0;
        for (int G = 1; G <= 1024; G *= 2) {
            int N = G <= r->gpn ? 1 : G / r->gpn, gg = G <= r->gpn ? G : r->gpn;
            if (N > 1 && !p->path.inter) break;
            double rr = ar_path_ms(&p->path, 0, N, gg, S, ki), tt = ar_path_ms(&p->path, 1, N, gg, S, ki);
            double tar = fmin(rr, tt), ex = (N > 1 ? l->phi_e : l->phi) * tar, step = t1 + ex;
            if (G > st1) dagger = 1;
            char a[32], b[32], c[32], d[32];
            fprintf(md, "| %d | %d × %d | %s | %s | %s | %s | %s | %.4f%s | %.2f | %.1f %% |\n", G, N, gg,
                    f3(a, 32, rr), f3(b, 32, tt), G == 1 ? "—" : (tt < rr ? "tree" : "ring"), f3(c, 32, ex),
                    f3(d, 32, step), st1 / G * step / 1e3, G > st1 ? " †" : "", G * t1 / step, 100 * t1 / step);
            point(p->dat, G, G * t1 / step, 100 * t1 / step);
        }
        if (dagger)
            fprintf(
                md,
                "\n† the global batch exceeds the training set: an epoch is less than a step (a throughput view).\n");
        fprintf(md, "\n");
        measured_points(p, i, 0, r1, 0);
    }
    for (int i = 0; i < p->np; i++) {
        const run_t *u = &s->run[p->pl[i].run];
        int P = u->gpus, M = u->M;
        int r1 = study_t1_run(s, g, u->bk, u->math);
        fprintf(md, "#### pipeline, batch %d, %s, %s, M = %d\n\n", u->bk, u->math, u->sched, M);
        if (r1 < 0 || M < 1) {
            if (M < 1)
                fprintf(md, "Not projected: no micro-batch count.\n\n");
            else
                fprintf(md, "Not projected: no `%s` run at this batch and math (t₁).\n\n", s->ref);
            continue;
        }
        double sum, max;
        char list[512], t[300];
        busy(u, &sum, &max, list, sizeof list);
        double imb = max / (sum / u->ns), t1 = s->run[r1].smed;
        fprintf(md, "Stage busy times measured at p = %d (%s ms per step, medians): ΣB = %.3f ms, imbalance %.3f; ", P,
                list, sum, imb);
        fprintf(md, "t₁ = %.3f ms.\n\n", t1);
        fprintf(md, "| GPUs (stages) | bubble (p−1)/(M+p−1) | step (ms) | epoch (s) | speedup | efficiency |\n"
                    "|---:|---:|---:|---:|---:|---:|\n");
        snprintf(t, sizeof t, "pipeline batch %d %s %s M=%d", u->bk, u->math, u->sched, M);
        curve(p->dat, &p->nblk_dat, t);
        for (int G = 1; G <= r->gpn && G <= 1024; G *= 2) {
            double step = (double)(M + G - 1) / M * sum / G * (G > 1 ? imb : 1);
            fprintf(md, "| %d | %.1f %% | %.3f | %.3f | %.2f | %.1f %% |\n", G, 100.0 * (G - 1) / (M + G - 1), step,
                    u->nmed * step / 1e3, t1 / step, 100 * t1 / (G * step));
            point(p->dat, G, t1 / step, 100 * t1 / (G * step));
        }
        fprintf(md, "\n");
        measured_points(p, i, 1, r1, M);
    }
    emulated_points(p, g);
    fclose(p->dat);
    fclose(p->mdat);
    errors(p, g);
    plot_t *f = r->gnuplot ? report_plot_add(r) : NULL;
    if (f) {
        char d[64];
        const fit_t *ki = p->path.ki;
        snprintf(f->script, sizeof f->script, "projection.gp");
        snprintf(f->name, sizeof f->name, "projection-%s", gr->id);
        snprintf(f->data, sizeof f->data, "%s", dat);
        snprintf(f->data2, sizeof f->data2, "%s", mdat);
        snprintf(f->subtitle, sizeof f->subtitle, "%s", gr->sub);
        char inter[300];
        if (p->path.inter)
            snprintf(inter, sizeof inter, "inter-node %.1f us + %.1f GB/s per GPU (%s)", p->path.ae, 1e-3 / p->path.be,
                     r->inter_cap);
        else
            snprintf(inter, sizeof inter, "no inter-node path: one node only");
        /* lines separated by a literal \n, which projection.gp turns into line breaks */
        snprintf(
            f->caption, sizeof f->caption,
            "model: nccl step = t1 + phi x all-reduce (ring or tree, the faster: NCCL's cost model), weak scaling, "
            "%d GPUs per node\\nall-reduce: intra-node %.1f us per step + %.1f GB/s (fit); %s\\n"
            "pipeline: (M+p-1)/M x sum of measured stage times / p x imbalance, one node, copies free; "
            "points: measured (T1: %s's epoch)\\nGPU: %s  |  %s  |  %s",
            r->gpn, ki->alpha, 1e-3 / ki->beta, inter, s->ref, *gr->gpus ? gr->gpus : "unknown",
            study_dates(d, sizeof d, gr),
            r->src);
    }
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
            r->st.ref);
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
    fprintf(md, "| intra-node | %.2f | %.1f | ring fit `%s` to `%s` (above) |\n", p->path.ki->alpha,
            1e-3 / p->path.ki->beta, p->path.ki->name, r->bench_src);
    if (p->path.inter)
        fprintf(md, "| inter-node, per GPU | %.2f | %.1f | %s |\n", p->path.ae, 1e-3 / p->path.be, r->inter_src);
    fprintf(md, "\n");
    if (*r->inter_note) fprintf(md, "%s.\n\n", r->inter_note);
    if (!p->path.inter)
        fprintf(md,
                "no inter-node path (no emulated-network benchmark: pass `--net-allreduce FILE`, or `--net-gbs` and "
                "`--net-latency-us`): data parallelism projected on one node only, up to %d GPUs.\n\n",
                r->gpn);
}

void report_projection(report_t *r, FILE *md) {
    fprintf(md, "## Projection past this host\n\n");
    if (!r->have_bench) {
        fprintf(md,
                "no all-reduce benchmark: projection omitted (it needs the intra-node α-β fit: run `./scaling --bench "
                "allreduce --gpus 2,4 --out %s`, or pass `--allreduce FILE`).\n",
                r->bench_default);
        return;
    }
    const fit_t *ki = fit_nccl(&r->fits, "", "float");
    if (*r->bench_err || !fit_usable(ki)) {
        fprintf(md, "%s: %s: projection omitted.\n", r->bench_src,
                *r->bench_err ? r->bench_err : "no nccl rows that fit α ≥ 0 and β > 0");
        return;
    }
    proj_t p = {.r = r, .s = &r->st, .md = md};
    int n = r->st.nr ? r->st.nr : 1;
    p.ln = calloc((size_t)n, sizeof *p.ln);
    p.pl = calloc((size_t)n, sizeof *p.pl);
    p.ms = calloc((size_t)n, sizeof *p.ms);
    if (!p.ln || !p.pl || !p.ms) {
        free(p.ln);
        free(p.pl);
        free(p.ms);
        return;
    }
    ar_path_inter(&p.path, r);
    /* fits_read may have moved the fits: find the intra-node one again */
    p.path.ki = fit_nccl(&r->fits, "", "float");
    explain(&p);
    for (int g = 0; g < r->st.ng; g++) group(&p, g);
    free(p.ln);
    free(p.pl);
    free(p.ms);
}
