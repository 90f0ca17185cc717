/* figures.c — the study figures' data files (one per figure, plain whitespace-separated columns, gnuplot blocks
 * under a quoted title line) and their drawing with the gnuplot scripts of plots/: times are steady medians, a line's
 * point the best (lowest time, highest throughput) over the runs it stands for (learning rates, seeds, micro-batch
 * counts). */
#define _POSIX_C_SOURCE 200809L
#include "report.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

typedef struct {
    char x[40];
    double xv, y, y2; /* y2: a second column (efficiency), NAN without */
} pt_t;

typedef struct {
    char key[600], label[400];
    pt_t *pt;
    int n, cap;
} series_t;

typedef struct {
    series_t *s;
    int n, cap;
} fig_t;

static series_t *series(fig_t *f, const char *key, const char *label) {
    for (int i = 0; i < f->n; i++)
        if (strcmp(f->s[i].key, key) == 0) return &f->s[i];
    if (f->n == f->cap) {
        int cap = f->cap ? 2 * f->cap : 16;
        series_t *p = realloc(f->s, (size_t)cap * sizeof *p);
        if (!p) return NULL;
        f->s = p;
        f->cap = cap;
    }
    series_t *s = &f->s[f->n++];
    memset(s, 0, sizeof *s);
    snprintf(s->key, sizeof s->key, "%s", key);
    snprintf(s->label, sizeof s->label, "%s", label ? label : "");
    return s;
}

static pt_t *find_pt(series_t *s, const char *x) {
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->pt[i].x, x) == 0) return &s->pt[i];
    return NULL;
}

/* Adds (x, y) to series key of f, keeping the best y per x (lowest when lo, else highest). */
static void point(fig_t *f, const char *key, const char *x, double y, double y2, int lo, const char *label) {
    series_t *s = series(f, key, label);
    if (!s) return;
    pt_t *p = find_pt(s, x);
    if (!p) {
        if (s->n == s->cap) {
            int cap = s->cap ? 2 * s->cap : 8;
            pt_t *q = realloc(s->pt, (size_t)cap * sizeof *q);
            if (!q) return;
            s->pt = q;
            s->cap = cap;
        }
        p = &s->pt[s->n++];
        snprintf(p->x, sizeof p->x, "%s", x);
        p->xv = atof(x);
        p->y = y;
        p->y2 = y2;
    } else if (lo ? y < p->y : y > p->y)
        p->y = y, p->y2 = y2;
}
static void pointn(fig_t *f, const char *key, double x, double y, double y2, int lo, const char *label) {
    char b[40];
    point(f, key, num_s(b, sizeof b, x), y, y2, lo, label);
}

static void fig_free(fig_t *f) {
    for (int i = 0; i < f->n; i++) free(f->s[i].pt);
    free(f->s);
    memset(f, 0, sizeof *f);
}

static int cmp_series(const void *a, const void *b) {
    return strcmp(((const series_t *)a)->key, ((const series_t *)b)->key);
}
static int cmp_pt(const void *a, const void *b) {
    const pt_t *p = a, *q = b;
    return (p->xv > q->xv) - (p->xv < q->xv);
}

/* Writes f's series (sorted by key) as gnuplot blocks: a quoted title line, then "x y" sorted by x. Returns how many
 * series have at least need points; with drop, the others are left out. -1 when the file cannot be written. */
/* A series title in a data file, quoted: a byte that would end the quote or the line becomes '?' (names are
 * checked on read; this keeps a label built from anything else inside its line). */
static void data_title(FILE *o, const char *s) {
    fputc('"', o);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) fputc(*p == '"' || *p == '\\' || *p < 0x20 ? '?' : *p, o);
    fputs("\"\n", o);
}

static int write_series(fig_t *f, const char *path, int need, int drop) {
    FILE *o = fopen(path, "w");
    if (!o) return -1;
    qsort(f->s, (size_t)f->n, sizeof *f->s, cmp_series);
    int ok = 0, w = 0;
    for (int i = 0; i < f->n; i++) {
        series_t *s = &f->s[i];
        if (drop && s->n < need) continue;
        qsort(s->pt, (size_t)s->n, sizeof *s->pt, cmp_pt);
        if (w++) fprintf(o, "\n\n");
        data_title(o, s->label);
        for (int j = 0; j < s->n; j++) {
            char y[40];
            if (isnan(s->pt[j].y2))
                fprintf(o, "%s %s\n", s->pt[j].x, num_s(y, sizeof y, s->pt[j].y));
            else
                fprintf(o, "%s %.6g %.6g\n", s->pt[j].x, s->pt[j].y, s->pt[j].y2);
        }
        if (s->n >= need) ok++;
    }
    if (fclose(o) != 0) return -1;
    return ok;
}

static plot_t *emit(report_t *r, const char *script, const char *name, const char *data, const char *data2,
                    const char *subtitle, const char *caption) {
    plot_t *p = report_plot_add(r);
    if (!p) return NULL;
    snprintf(p->script, sizeof p->script, "%s", script);
    snprintf(p->name, sizeof p->name, "%s", name);
    snprintf(p->data, sizeof p->data, "%s", data);
    snprintf(p->data2, sizeof p->data2, "%s", data2);
    snprintf(p->subtitle, sizeof p->subtitle, "%s", subtitle);
    snprintf(p->caption, sizeof p->caption, "%s", caption);
    return p;
}
static void skip(report_t *r, const char *script, const group_t *g, const char *why) {
    plot_t *p = report_plot_add(r);
    if (!p) return;
    snprintf(p->script, sizeof p->script, "%s", script);
    snprintf(p->subtitle, sizeof p->subtitle, "%s", g->sub);
    snprintf(p->skip, sizeof p->skip, "%s", why);
}

/* One figure from one series file: OUT/STEM-ID.dat written (2 points a series at least, dropping shorter series
 * with drop), then STEM.gp emitted, or skipped with why where no series is long enough. path receives the file's
 * path; -1 when it cannot be written. */
static int figure_out(report_t *r, const group_t *gr, fig_t *f, const char *stem, int drop, const char *cap,
                      const char *why, char *path, size_t plen) {
    char name[400], script[64];
    snprintf(path, plen, "%s/%s-%s.dat", r->out, stem, gr->id);
    snprintf(name, sizeof name, "%s-%s", stem, gr->id);
    snprintf(script, sizeof script, "%s.gp", stem);
    int rc = write_series(f, path, 2, drop);
    if (rc < 0) return -1;
    if (rc > 0) emit(r, script, name, path, "", gr->sub, cap);
    else skip(r, script, gr, why);
    return 0;
}

plot_t *report_plot_add(report_t *r) {
    plot_t *p = realloc(r->plot, (size_t)(r->nplot + 1) * sizeof *p);
    if (!p) return NULL;
    r->plot = p;
    memset(&p[r->nplot], 0, sizeof *p);
    return &p[r->nplot++];
}

/* The series key parts every line of a figure shares: precision, then link. */
static void key_pl(char *k, size_t n, const run_t *u) {
    key_prec(k, n, u);
    key_str(k, n, u->link);
}

#define FAIL(path)                                                                                                     \
    do {                                                                                                               \
        snprintf(err, errlen, "%s: cannot write", path);                                                               \
        goto fail;                                                                                                     \
    } while (0)

static int group_figures(report_t *r, int g, char *err, size_t errlen) {
    const study_runs_t *s = &r->st;
    const group_t *gr = &s->grp[g];
    fig_t tf = {0}, sf = {0}, thr = {0}, lr = {0}, bub = {0}, bubi = {0}, ab = {0};
    int one = report_one_gpu_group(s, g);
    char cap[1400], d[64], path[1400], path2[1400], name[400], lab[600], w1[64], w2[400], w3[64], k[600];
    int rc = 0;
    snprintf(cap, sizeof cap, "GPU: %s  |  %s  |  %s", *gr->gpus ? gr->gpus : "unknown", study_dates(d, sizeof d, gr),
             r->src);
    /* (a) epoch time and (b) speedup: one line per strategy, batch, precision and link; its 1-GPU point is its own
     * run, else single's at that batch and math; T1 single's where there is one, else the line's own 1-GPU time */
    int *t1k = calloc((size_t)(s->nr ? s->nr : 1), sizeof *t1k); /* per series: a run whose bk and math it has */
    if (!t1k) {
        snprintf(err, errlen, "out of memory");
        return 1;
    }
    for (int i = 0; i < s->nr; i++) {
        const run_t *u = &s->run[i];
        if (u->group != g || study_is_reference(u->info) || isnan(u->tmed)) continue;
        k[0] = '\0';
        key_str(k, sizeof k, u->strategy);
        key_num(k, sizeof k, u->bk);
        key_pl(k, sizeof k, u);
        snprintf(lab, sizeof lab, "%s, %s%s%s", u->strategy, batch_word(w1, sizeof w1, u), link_word(w2, sizeof w2, u),
                 u->pipe ? " (best M)" : "");
        with_prec(w2, sizeof w2, lab, s, u);
        pointn(&tf, k, u->gpus, u->tmed, NAN, 1, w2);
        series_t *se = series(&tf, k, NULL);
        if (se) t1k[se - tf.s] = i;
    }
    for (int i = 0; i < tf.n; i++) {
        const run_t *u = &s->run[t1k[i]];
        int t1 = study_t1_run(s, g, u->bk, u->math);
        if (!find_pt(&tf.s[i], "1") && t1 >= 0) pointn(&tf, tf.s[i].key, 1, s->run[t1].tmed, NAN, 1, NULL);
    }
    for (int i = 0; i < tf.n; i++) {
        const run_t *u = &s->run[t1k[i]];
        int t1r = study_t1_run(s, g, u->bk, u->math);
        pt_t *one = find_pt(&tf.s[i], "1");
        double t1 = t1r >= 0 ? s->run[t1r].tmed : one ? one->y : NAN;
        if (isnan(t1)) continue;
        for (int j = 0; j < tf.s[i].n; j++) {
            double n = tf.s[i].pt[j].xv, tn = tf.s[i].pt[j].y;
            point(&sf, tf.s[i].key, tf.s[i].pt[j].x, t1 / tn, 100 * t1 / (n * tn), 1, tf.s[i].label);
        }
    }
    free(t1k);
    const char *why_t = one ? "every run is on one GPU: nothing scales"
                            : "no strategy has steady epoch times on 2 or more GPU counts";
    if (figure_out(r, gr, &tf, "epoch_time", 0, cap, why_t, path, sizeof path) < 0) FAIL(path);
    const char *why_s = one ? "every run is on one GPU: nothing scales"
                            : "no line with a 1-GPU time (strategy single at the same batch) and another GPU count";
    if (figure_out(r, gr, &sf, "speedup", 0, cap, why_s, path, sizeof path) < 0) FAIL(path);

    /* (c) throughput against the per-GPU batch: one line per strategy, GPU count, precision and link */
    for (int i = 0; i < s->nr; i++) {
        const run_t *u = &s->run[i];
        if (u->group != g || u->pipe || isnan(u->imed)) continue;
        k[0] = '\0';
        key_str(k, sizeof k, u->strategy);
        key_num(k, sizeof k, u->gpus);
        key_pl(k, sizeof k, u);
        snprintf(lab, sizeof lab, "%s, %s%s", u->strategy, gpus_word(w1, sizeof w1, u->gpus),
                 link_word(w2, sizeof w2, u));
        with_prec(w2, sizeof w2, lab, s, u);
        pointn(&thr, k, u->b, u->imed, NAN, 0, w2);
    }
    if (figure_out(r, gr, &thr, "throughput", 0, cap, "no strategy and GPU count with 2 or more batch sizes", path,
                   sizeof path) < 0)
        FAIL(path);

    /* (c') on one GPU, final test accuracy against the batch beside the throughput: one line per strategy and
     * precision, the best over learning rates and seeds (a study across GPU counts has acc_lr and acc_epoch) */
    for (int i = 0; one && i < s->nr; i++) {
        const run_t *u = &s->run[i];
        if (u->group != g || u->pipe || isnan(u->facc)) continue;
        k[0] = '\0';
        key_str(k, sizeof k, u->strategy);
        key_pl(k, sizeof k, u);
        with_prec(w2, sizeof w2, u->strategy, s, u);
        pointn(&ab, k, u->b, u->facc, NAN, 0, w2);
    }
    if (one) {
        if (figure_out(r, gr, &ab, "acc_batch", 0, cap,
                       "no strategy and math with a final accuracy at 2 or more batch sizes", path, sizeof path) < 0)
            FAIL(path);
    }

    /* (d) test accuracy against epoch: one figure per strategy (by name), one line per run */
    const char *names[64];
    int nnames = 0;
    for (int i = 0; i < s->nr; i++) {
        const run_t *u = &s->run[i];
        if (u->group != g || !u->acc_e.n) continue;
        int j = 0;
        while (j < nnames && strcmp(names[j], u->strategy)) j++;
        if (j == nnames && nnames < 64) names[nnames++] = u->strategy;
    }
    for (int i = 1; i < nnames; i++)
        for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            const char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    for (int a = 0; a < nnames; a++) {
        fig_t af = {0};
        for (int i = 0; i < s->nr; i++) {
            const run_t *u = &s->run[i];
            if (u->group != g || !u->acc_e.n || strcmp(u->strategy, names[a])) continue;
            k[0] = '\0';
            key_num(k, sizeof k, u->gpus);
            key_num(k, sizeof k, u->bk);
            key_num(k, sizeof k, atof(u->lr));
            key_num(k, sizeof k, u->M);
            key_pl(k, sizeof k, u);
            key_str(k, sizeof k, u->seed);
            key_str(k, sizeof k, u->run_id);
            snprintf(lab, sizeof lab, "%s%s, %s, lr %s", gpus_word(w1, sizeof w1, u->gpus), link_word(w2, sizeof w2, u),
                     batch_word(w3, sizeof w3, u), u->lr);
            with_prec(w2, sizeof w2, lab, s, u);
            size_t l = strlen(w2);
            if (u->pipe) snprintf(w2 + l, sizeof w2 - l, ", M=%s", u->mb), l = strlen(w2);
            if (gr->nseeds > 1) snprintf(w2 + l, sizeof w2 - l, ", seed %s", u->seed), l = strlen(w2);
            if (strcmp(u->fstat, "ok")) snprintf(w2 + l, sizeof w2 - l, " (%s)", u->fstat);
            for (int j = 0; j < u->acc_e.n; j++) pointn(&af, k, u->acc_e.v[j], u->acc_v.v[j], NAN, 0, w2);
        }
        char sn[100];
        snprintf(sn, sizeof sn, "%s", names[a]);
        for (char *q = sn; *q; q++)
            if (!((*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '.' ||
                  *q == '_' || *q == '-'))
                *q = '_';
        snprintf(path, sizeof path, "%s/acc_epoch-%s-%s.dat", r->out, gr->id, sn);
        snprintf(name, sizeof name, "acc_epoch-%s-%s", gr->id, sn);
        int wr = write_series(&af, path, 1, 0);
        fig_free(&af);
        if (wr < 0) FAIL(path);
        snprintf(lab, sizeof lab, "%s, strategy %s", gr->sub, names[a]);
        emit(r, "acc_epoch.gp", name, path, "", lab, cap);
    }
    if (!nnames) skip(r, "acc_epoch.gp", gr, "no epoch with a test accuracy");

    /* (e) final test accuracy against learning rate: one line per strategy, GPU count, global batch, M, precision
     * and link; the seeds of a configuration give their median; only lines with 2 or more learning rates */
    for (int i = 0; i < s->nr; i++) {
        const run_t *u = &s->run[i];
        if (u->group != g || isnan(u->facc)) continue;
        int first = 1;
        for (int j = 0; j < i && first; j++) {
            const run_t *v = &s->run[j];
            first = !(v->group == g && !isnan(v->facc) && !strcmp(v->strategy, u->strategy) && v->gpus == u->gpus &&
                      v->G == u->G && v->M == u->M && !strcmp(v->math, u->math) && !strcmp(v->gd, u->gd) &&
                      !strcmp(v->link, u->link) && !strcmp(v->lr, u->lr));
        }
        if (!first) continue;
        double acc[256];
        int na = 0;
        for (int j = i; j < s->nr && na < 256; j++) {
            const run_t *v = &s->run[j];
            if (v->group == g && !isnan(v->facc) && !strcmp(v->strategy, u->strategy) && v->gpus == u->gpus &&
                v->G == u->G && v->M == u->M && !strcmp(v->math, u->math) && !strcmp(v->gd, u->gd) &&
                !strcmp(v->link, u->link) && !strcmp(v->lr, u->lr))
                acc[na++] = v->facc;
        }
        k[0] = '\0';
        key_str(k, sizeof k, u->strategy);
        key_num(k, sizeof k, u->gpus);
        key_num(k, sizeof k, u->G);
        key_num(k, sizeof k, u->M);
        key_pl(k, sizeof k, u);
        snprintf(lab, sizeof lab, "%s, %s%s, batch %d%s%s", u->strategy, gpus_word(w1, sizeof w1, u->gpus),
                 link_word(w2, sizeof w2, u), u->G, u->pipe ? ", M=" : "", u->pipe ? u->mb : "");
        with_prec(w2, sizeof w2, lab, s, u);
        point(&lr, k, u->lr, study_median(acc, na), NAN, 0, w2);
    }
    if (figure_out(r, gr, &lr, "acc_lr", 1, cap,
                   "no configuration swept over 2 or more learning rates", path, sizeof path) < 0)
        FAIL(path);

    /* (f) per-step compute, exposed communication and idle: one bar per batch, strategy, GPU count, precision and
     * link, from its run with the best median step; single shows its whole step as compute, at the batches the
     * others ran; idle is idle_ms (older CSVs: step - compute - exposed, clipped at 0) */
    {
        int has = 0;
        for (int i = 0; i < s->nr; i++)
            if (s->run[i].group == g && !isnan(s->run[i].smed) && !isnan(s->run[i].cmed)) has = 1;
        if (!has)
            skip(r, "breakdown.gp", gr, "no rows with compute_ms (data-parallel strategies)");
        else {
            typedef struct {
                char key[600];
                int run;
            } bar_t;
            bar_t *bar = calloc((size_t)s->nr, sizeof *bar);
            int nbar = 0;
            for (int i = 0; bar && i < s->nr; i++) {
                const run_t *u = &s->run[i];
                if (u->group != g || isnan(u->smed)) continue;
                if (isnan(u->cmed)) {
                    int at = 0;
                    for (int j = 0; j < s->nr && !at; j++)
                        at = s->run[j].group == g && s->run[j].bk == u->bk && !isnan(s->run[j].smed) &&
                             !isnan(s->run[j].cmed);
                    if (!study_is_reference(u->info) || !at) continue;
                }
                k[0] = '\0';
                key_num(k, sizeof k, u->bk);
                snprintf(w2, sizeof w2, "%s%s", study_is_reference(u->info) ? "0" : "1", u->strategy);
                key_str(k, sizeof k, w2);
                key_num(k, sizeof k, u->gpus);
                key_pl(k, sizeof k, u);
                int j = 0;
                while (j < nbar && strcmp(bar[j].key, k)) j++;
                if (j == nbar) {
                    snprintf(bar[j].key, sizeof bar[j].key, "%s", k);
                    bar[j].run = i;
                    nbar++;
                } else if (u->smed < s->run[bar[j].run].smed)
                    bar[j].run = i;
            }
            if (bar) qsort(bar, (size_t)nbar, sizeof *bar, (int (*)(const void *, const void *))strcmp);
            snprintf(path, sizeof path, "%s/breakdown-%s.dat", r->out, gr->id);
            FILE *o = fopen(path, "w");
            if (!o || !bar) {
                free(bar);
                if (o) fclose(o);
                FAIL(path);
            }
            fprintf(o, "label compute exposed_comm idle\n");
            for (int i = 0; i < nbar; i++) {
                const run_t *u = &s->run[bar[i].run];
                double comp = !isnan(u->cmed) ? u->cmed : u->smed, expo = !isnan(u->xmed) ? u->xmed : 0;
                double idle = !isnan(u->dmed) ? u->dmed : u->smed - comp - expo;
                if (idle < 0) idle = 0;
                char bw[64], pw[64];
                if (u->global)
                    snprintf(bw, sizeof bw, "b%d", u->bk);
                else
                    snprintf(bw, sizeof bw, "%d/GPU", u->bk);
                prec_word(pw, sizeof pw, s, u);
                fprintf(o, "\"%s %dx %s%s%s%s\" %.6g %.6g %.6g\n", u->strategy, u->gpus, bw,
                        link_word(w2, sizeof w2, u), *pw ? " " : "", pw, comp, expo, idle);
            }
            free(bar);
            if (fclose(o) != 0) FAIL(path);
            snprintf(name, sizeof name, "breakdown-%s", gr->id);
            emit(r, "breakdown.gp", name, path, "", gr->sub, cap);
        }
    }

    /* (g) pipeline bubble against micro-batches: measured per stage count, schedule, batch and precision (median
     * over the runs of one M); ideal (p-1)/(M+p-1) per stage count */
    for (int i = 0; i < s->nr; i++) {
        const run_t *u = &s->run[i];
        if (u->group != g || isnan(u->bmed) || !isnum(u->mb)) continue;
        int first = 1;
        double b[256];
        int nb = 0;
        for (int j = 0; j < s->nr; j++) {
            const run_t *v = &s->run[j];
            int same = v->group == g && !isnan(v->bmed) && isnum(v->mb) && v->gpus == u->gpus &&
                       !strcmp(v->sched, u->sched) && v->G == u->G && !strcmp(v->math, u->math) &&
                       !strcmp(v->gd, u->gd) && !strcmp(v->mb, u->mb);
            if (same && j < i) first = 0;
            if (same && nb < 256) b[nb++] = v->bmed;
        }
        if (!first) continue;
        k[0] = '\0';
        key_num(k, sizeof k, u->gpus);
        key_str(k, sizeof k, u->sched);
        key_num(k, sizeof k, u->G);
        key_prec(k, sizeof k, u);
        snprintf(lab, sizeof lab, "measured, %d stages, %s, batch %d", u->gpus, u->sched, u->G);
        with_prec(w2, sizeof w2, lab, s, u);
        pointn(&bub, k, u->M, 100 * study_median(b, nb), NAN, 0, w2);
        int p = u->gpus;
        k[0] = '\0';
        key_num(k, sizeof k, p);
        snprintf(lab, sizeof lab, "ideal (p-1)/(M+p-1), p = %d", p);
        pointn(&bubi, k, u->M, 100.0 * (p - 1) / (u->M + p - 1), NAN, 0, lab);
    }
    if (!bub.n)
        skip(r, "bubble.gp", gr, "no pipeline rows (columns micro_batches, bubble)");
    else {
        snprintf(path, sizeof path, "%s/bubble-%s.dat", r->out, gr->id);
        snprintf(path2, sizeof path2, "%s/bubble_ideal-%s.dat", r->out, gr->id);
        if (write_series(&bub, path, 1, 0) < 0) FAIL(path);
        if (write_series(&bubi, path2, 1, 0) < 0) FAIL(path2);
        snprintf(name, sizeof name, "bubble-%s", gr->id);
        emit(r, "bubble.gp", name, path, path2, gr->sub, cap);
    }
    rc = 0;
    goto done;
fail:
    rc = 1;
done:
    fig_free(&tf);
    fig_free(&sf);
    fig_free(&thr);
    fig_free(&lr);
    fig_free(&bub);
    fig_free(&bubi);
    fig_free(&ab);
    return rc;
}

int report_figures(report_t *r, char *err, size_t errlen) {
    for (int g = 0; g < r->st.ng; g++)
        if (group_figures(r, g, err, errlen)) return 1;
    return 0;
}

/* A gnuplot string assignment that no byte can end: double-quoted, with every byte outside a plain set written as
 * an octal escape (gnuplot reassembles the bytes, UTF-8 included). A file name or a CSV cell is data here, never
 * code: a quote, a backslash or a newline in it stays inside the string. */
static void gq(FILE *f, const char *var, const char *s) {
    fprintf(f, "%s = \"", var);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (isalnum(*p) || strchr(" ._,:/()+=@-", *p)) fputc(*p, f);
        else fprintf(f, "\\%03o", *p);
    fprintf(f, "\"\n");
}

/* Waits for gnuplot, at most GNUPLOT_DEADLINE_S: a figure that takes longer is a stuck process, killed. 0 when it
 * exited 0. */
#define GNUPLOT_DEADLINE_S 120
static int gnuplot_wait(pid_t pid) {
    int status = 0;
    struct timespec t0, now, nap = {0, 10 * 1000 * 1000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
        if (w < 0 && errno != EINTR) return -1;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec >= GNUPLOT_DEADLINE_S) {
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
            fprintf(stderr, "report: gnuplot ran past %d s: stopped\n", GNUPLOT_DEADLINE_S);
            return -1;
        }
        nanosleep(&nap, NULL);
    }
}

int report_render(report_t *r, int from, char *err, size_t errlen) {
    char vars[1400], errf[1400];
    snprintf(vars, sizeof vars, "%s/.gnuplot_vars.gp", r->out);
    snprintf(errf, sizeof errf, "%s/.gnuplot.err", r->out);
    int rc = 0;
    for (int i = from; i < r->nplot && !rc; i++) {
        const plot_t *p = &r->plot[i];
        if (*p->skip) {
            fprintf(stderr, "report: skip %.*s (%s): %s\n", (int)(strlen(p->script) - 3), p->script, p->subtitle,
                    p->skip);
            continue;
        }
        for (int fmt = 0; fmt < 2 && !rc; fmt++) {
            FILE *v = fopen(vars, "w");
            if (!v) {
                rc = 1;
                snprintf(err, errlen, "%s: cannot write", vars);
                break;
            }
            char out[1400], common[1100], script[1100];
            snprintf(out, sizeof out, "%s/%s", r->out, p->name);
            gq(v, "fmt", fmt ? "svg" : "png");
            gq(v, "out", out);
            gq(v, "data", p->data);
            gq(v, "data2", p->data2);
            gq(v, "subtitle", p->subtitle);
            gq(v, "caption", p->caption);
            fclose(v);
            snprintf(common, sizeof common, "%s/common.gp", r->plots);
            snprintf(script, sizeof script, "%s/%s", r->plots, p->script);
            char *argv[] = {"gnuplot", vars, common, script, NULL};
            posix_spawn_file_actions_t fa;
            posix_spawn_file_actions_init(&fa);
            posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, errf, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            pid_t pid;
            int e = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
            posix_spawn_file_actions_destroy(&fa);
            int failed = e != 0 || gnuplot_wait(pid) != 0;
            /* gnuplot warns on stderr without failing; a warning here is a script bug worth seeing */
            FILE *ef = fopen(errf, "r");
            char line[1024];
            while (ef && fgets(line, sizeof line, ef))
                if (line[0] != '\n') fputs(line, stderr);
            if (ef) fclose(ef);
            if (failed) {
                rc = 1;
                snprintf(err, errlen, "gnuplot failed on plots/%s for %s", p->script, p->name);
            }
        }
        if (!rc && r->nfig < REPORT_MAX_FIGS) snprintf(r->fig[r->nfig++], sizeof r->fig[0], "%s.png", p->name);
    }
    unlink(vars);
    unlink(errf);
    return rc;
}
