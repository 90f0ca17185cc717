/* markdown.c — REPORT.md's study parts: the header, the all-reduce fits, and per model and dataset the figures, one
 * summary table per strategy (best steady epoch, model epoch, speedup, efficiency, accuracy, statuses), the maths
 * side by side (precision.c) and the runs that did not end ok. The projection is project.c. */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* x in fmt, or "—" for NAN: the tables' one way to show a missing number. */
static const char *num_or_dash(char *b, size_t n, const char *fmt, double x) {
    if (isnan(x)) snprintf(b, n, "—");
    else snprintf(b, n, fmt, x);
    return b;
}
const char *f3(char *b, size_t n, double x) { return num_or_dash(b, n, "%.3f", x); }
const char *f2(char *b, size_t n, double x) { return num_or_dash(b, n, "%.2f", x); }
const char *pct(char *b, size_t n, double x) { return num_or_dash(b, n, "%.1f %%", x); }
const char *gpus_word(char *b, size_t n, int g) {
    snprintf(b, n, g == 1 ? "1 GPU" : "%d GPUs", g);
    return b;
}
const char *batch_word(char *b, size_t n, const run_t *r) {
    snprintf(b, n, r->global ? "batch %d" : "%d/GPU", r->bk);
    return b;
}
const char *link_word(char *b, size_t n, const run_t *r) {
    snprintf(b, n, "%s%s", *r->link ? ", " : "", r->link);
    return b;
}
const char *prec_word(char *b, size_t n, const study_runs_t *s, const run_t *r) {
    const group_t *g = &s->grp[r->group];
    b[0] = '\0';
    if (g->nm > 1) snprintf(b, n, "%s", r->math);
    if (g->ngd > 1 && *r->gd) {
        size_t l = strlen(b);
        snprintf(b + l, n - l, "%s%s grads", l ? ", " : "", r->gd);
    }
    return b;
}
const char *with_prec(char *b, size_t n, const char *label, const study_runs_t *s, const run_t *r) {
    char w[64];
    prec_word(w, sizeof w, s, r);
    snprintf(b, n, "%s%s%s", label, *w ? ", " : "", w);
    return b;
}
void key_prec(char *k, size_t n, const run_t *r) {
    char a[32];
    study_math_rank(a, sizeof a, r->math);
    key_str(k, n, a);
    study_math_rank(a, sizeof a, r->gd);
    key_str(k, n, a);
}
void key_row(char *k, size_t n, const run_t *r) {
    char s[80];
    snprintf(s, sizeof s, "%s%s", r->pipe ? "2" : study_is_reference(r->info) ? "0" : "1", r->strategy);
    key_str(k, n, s);
    key_num(k, n, r->gpus);
    key_str(k, n, r->sched);
    key_num(k, n, r->bk);
    key_num(k, n, r->M);
    key_str(k, n, r->link);
}
const char *study_dates(char *b, size_t n, const group_t *g) {
    if (strcmp(g->d0, g->d1) == 0)
        snprintf(b, n, "%s", g->d0);
    else
        snprintf(b, n, "%s to %s", g->d0, g->d1);
    return b;
}

/* A summary row: the runs of one strategy, GPU count, schedule, batch, M, link and precision. */
typedef struct {
    char key[600];
    int best, acc, any;
    int nst;
    const char *st[8];
    int stc[8];
} srow_t;

static int cmp_srow(const void *a, const void *b) { return strcmp(((const srow_t *)a)->key, ((const srow_t *)b)->key); }

static void prec_cells(char *b, size_t n, const study_runs_t *s, const run_t *r) {
    const group_t *g = &s->grp[r->group];
    b[0] = '\0';
    if (g->nm > 1) snprintf(b, n, "| %s ", r->math);
    size_t l = strlen(b);
    if (g->ngd > 1) snprintf(b + l, n - l, "| %s ", *r->gd ? r->gd : "—");
}

void report_precision(report_t *r, FILE *md, int g);

static void figure(const report_t *r, FILE *md, const char *name, const char *alt) {
    for (int i = 0; i < r->nfig; i++)
        if (strcmp(r->fig[i], name) == 0) {
            fprintf(md, "![%s](%s)\n\n", alt, name);
            return;
        }
}

static void summary(report_t *r, FILE *md, int g) {
    const study_runs_t *s = &r->st;
    const group_t *gr = &s->grp[g];
    srow_t *row = calloc((size_t)(s->nr ? s->nr : 1), sizeof *row);
    if (!row) return;
    int nrow = 0;
    for (int i = 0; i < s->nr; i++) {
        const run_t *u = &s->run[i];
        if (u->group != g) continue;
        char k[600] = "";
        key_row(k, sizeof k, u);
        key_prec(k, sizeof k, u);
        int j = 0;
        while (j < nrow && strcmp(row[j].key, k)) j++;
        if (j == nrow) {
            snprintf(row[j].key, sizeof row[j].key, "%s", k);
            row[j].best = row[j].acc = -1;
            nrow++;
        }
        srow_t *w = &row[j];
        if (!isnan(u->tmed) && (w->best < 0 || u->tmed < s->run[w->best].tmed)) w->best = i;
        if (!isnan(u->facc) && (w->acc < 0 || u->facc > s->run[w->acc].facc)) w->acc = i;
        int t = 0;
        while (t < w->nst && strcmp(w->st[t], u->fstat)) t++;
        if (t == w->nst && t < 8) w->st[w->nst++] = u->fstat;
        if (t < 8) w->stc[t]++;
        w->any = i;
    }
    qsort(row, (size_t)nrow, sizeof *row, cmp_srow);
    int bench = r->have_bench && r->nfit_bench > 0;
    int dagger = 0, ddagger = 0, pipenote = 0;
    const char *cur = NULL;
    char ph[32], pr[32];
    snprintf(ph, sizeof ph, "%s%s", gr->nm > 1 ? "| math " : "", gr->ngd > 1 ? "| grads " : "");
    snprintf(pr, sizeof pr, "%s%s", gr->nm > 1 ? "|---" : "", gr->ngd > 1 ? "|---" : "");
    fprintf(md, "### Summary\n");
    for (int i = 0; i < nrow; i++) {
        const srow_t *w = &row[i];
        const run_t *u = &s->run[w->any];
        const run_t *b = w->best >= 0 ? &s->run[w->best] : NULL, *a = w->acc >= 0 ? &s->run[w->acc] : NULL;
        const char *st = s->run[w->any].strategy;
        int single = study_is_reference(u->info);
        if (!cur || strcmp(st, cur)) {
            cur = st;
            fprintf(md, "\n#### %s\n\n", st);
            if (u->pipe) {
                pipenote = 1;
                fprintf(md,
                        "%s| GPUs (stages) | schedule | batch | M | best epoch (s) | model epoch (s) | speedup | "
                        "efficiency | bubble measured | bubble ideal (p−1)/(M+p−1) | images/s | final test acc (lr) | "
                        "status |\n",
                        ph);
                fprintf(md, "%s|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n", pr);
            } else if (bench && !single) {
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
        int n = u->gpus, bk = u->bk;
        char gl[400], pc[64], acc[96], steps[32], stl[300] = "", x1[32], x2[32], x3[32], x4[32], x5[32], x6[32];
        snprintf(gl, sizeof gl, "%d%s%s%s", n, *u->link ? " (" : "", u->link, *u->link ? ")" : "");
        prec_cells(pc, sizeof pc, s, u);
        double t = b ? b->tmed : NAN;
        int t1r = study_t1_run(s, g, bk, u->math);
        double t1 = t1r >= 0 ? s->run[t1r].tmed : NAN, step1 = t1r >= 0 ? s->run[t1r].smed : NAN;
        double sp = !isnan(t) && !isnan(t1) ? t1 / t : NAN, ef = isnan(sp) ? NAN : 100 * sp / n;
        if (a)
            snprintf(acc, sizeof acc, "%.1f %% (lr %s)", a->facc, a->lr);
        else
            snprintf(acc, sizeof acc, "—");
        double nsteps = b ? b->nmed : NAN;
        if (isnan(nsteps))
            snprintf(steps, sizeof steps, "—");
        else
            num_s(steps, sizeof steps, nsteps);
        for (int j = 0; j < w->nst; j++) {
            size_t l = strlen(stl);
            snprintf(stl + l, sizeof stl - l, "%s%s", j ? ", " : "", w->st[j]);
            l = strlen(stl);
            if (w->nst > 1 || w->stc[j] > 1) snprintf(stl + l, sizeof stl - l, " (%d)", w->stc[j]);
        }
        if (u->pipe) {
            int M = u->M, p = n;
            double model = t1r >= 0 && !isnan(nsteps) ? nsteps * step1 / p * (M + p - 1) / M / 1e3 : NAN;
            char bm[32], bi[32], ims[32];
            if (b && !isnan(b->bmed))
                pct(bm, sizeof bm, 100 * b->bmed);
            else
                snprintf(bm, sizeof bm, "—");
            pct(bi, sizeof bi, 100.0 * (p - 1) / (M + p - 1));
            if (b && !isnan(b->imed))
                snprintf(ims, sizeof ims, "%.0f", b->imed);
            else
                snprintf(ims, sizeof ims, "—");
            fprintf(md, "%s| %d | %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", pc, n, u->sched, bk,
                    M, f3(x1, 32, t), f3(x2, 32, model), f2(x3, 32, sp), pct(x4, 32, ef), bm, bi, ims, acc, stl);
        } else if (bench && !single) {
            double tc = t1r >= 0 ? step1 : (b ? b->cmed : NAN);
            const char *mark = t1r >= 0 ? "" : " †";
            int lent = 0;
            double tar = NAN;
            if (b) {
                const fit_t *k = fit_of_grads(&r->fits, st, b->algo, b->gd, &lent);
                tar = fit_allreduce_ms(k, n, b->ymed);
                if (n < 2) tar = 0;
            }
            const char *lentm = b && !isnan(tar) && lent ? " ‡" : "";
            double model = !isnan(tc) && !isnan(tar) && !isnan(nsteps) ? nsteps * (tc + tar) / 1e3 : NAN;
            double msp = !isnan(model) && !isnan(t1) ? t1 / model : NAN;
            char comm[96], q[32], m[32];
            if (b && !isnan(b->qmed))
                snprintf(q, sizeof q, "%.3f", b->qmed);
            else
                snprintf(q, sizeof q, "—");
            if (!isnan(tar))
                snprintf(m, sizeof m, "%.3f", tar);
            else
                snprintf(m, sizeof m, "—");
            snprintf(comm, sizeof comm, "%s / %s%s", q, m, lentm);
            if (!isnan(model) && *mark) dagger = 1;
            if (*lentm) ddagger = 1;
            fprintf(md, "%s| %s | %d | %s | %s | %s%s | %s | %s | %s | %s | %s | %s |\n", pc, gl, bk, steps,
                    f3(x1, 32, t), f3(x2, 32, model), !isnan(model) ? mark : "", f2(x3, 32, sp), f2(x5, 32, msp),
                    pct(x4, 32, ef), comm, acc, stl);
        } else {
            fprintf(md, "%s| %s | %d | %s | %s | %s | %s | %s | %s |\n", pc, gl, bk, steps, f3(x1, 32, t),
                    f2(x3, 32, sp), pct(x4, 32, ef), acc, stl);
        }
        (void)x6;
    }
    if (dagger)
        fprintf(md, "\n† no `%s` run at this batch and math: the model uses this run's own compute time per step.\n",
                s->ref);
    if (ddagger)
        fprintf(
            md,
            "\n‡ the benchmark has no bfloat16 rows (run `--bench allreduce` of this version): the float fit, at the "
            "bf16 gradients' bytes.\n");
    if (pipenote)
        fprintf(md,
                "\nPipeline: T1 and the model use `%s` at the same global batch; model epoch = steps × %s's "
                "median step / p × (M + p − 1)/M, i.e. p balanced stages with the ideal bubble (p−1)/(M+p−1) and free "
                "transfers between them.\n",
                s->ref, s->ref);
    fprintf(md, "\n");
    free(row);
}

static void not_ok(const report_t *r, FILE *md, int g) {
    const study_runs_t *s = &r->st;
    int nf = 0;
    for (int i = 0; i < s->nr; i++) {
        const run_t *u = &s->run[i];
        if (u->group != g || strcmp(u->fstat, "ok") == 0) continue;
        if (!nf++)
            fprintf(md,
                    "### Runs that did not end ok\n\n| strategy | GPUs | batch | lr | M | status | last epoch | run |\n"
                    "|---|---:|---:|---:|---:|---|---:|---|\n");
        char w[200];
        fprintf(md, "| %s | %d | %d | %s | %s | %s | %d | `%s` |\n", with_prec(w, sizeof w, u->strategy, s, u), u->gpus,
                u->G, u->lr, *u->mb ? u->mb : "—", u->fstat, u->last, u->run_id);
    }
    if (nf) fprintf(md, "\n");
}

static void allreduce_model(const report_t *r, FILE *md) {
    fprintf(md, "## All-reduce model\n\n");
    if (!r->have_bench) {
        fprintf(md,
                "no all-reduce benchmark: model line omitted (run `./scaling --bench allreduce --gpus 2,4 --out %s`, "
                "or pass `--allreduce FILE`).\n\n",
                r->bench_default);
        return;
    }
    if (*r->bench_err || r->nfit_bench == 0) {
        fprintf(md, "%s: %s: model line omitted.\n\n", r->bench_src,
                *r->bench_err ? r->bench_err : "no usable rows (gpus >= 2, bytes and time_us > 0, wrong = 0)");
        return;
    }
    fprintf(md, "α-β fit to `%s` (least squares on the relative error; t in µs, S in bytes):\n\n", r->bench_src);
    fprintf(md, "| strategy | model t(n, S) | α (µs) | 1/β (GB/s) | points | GPU counts | sizes | max error |\n"
                "|---|---|---:|---:|---:|---|---|---:|\n");
    for (int i = 0; i < r->nfit_bench; i++) {
        const fit_t *k = &r->fits.fit[i];
        if (k->bad) {
            fprintf(md, "| %s | — | — | — | %d | %s | | not enough distinct points |\n", k->name, k->n, k->gpus);
            continue;
        }
        char ib[32], b0[32], b1[32];
        if (k->beta > 0)
            snprintf(ib, sizeof ib, "%.1f", 1e-3 / k->beta);
        else
            snprintf(ib, sizeof ib, "—");
        fprintf(md, "| %s | %s | %.2f | %s | %d | %s | %s–%s B | %.1f %% |\n", k->name,
                k->ring ? "2(n−1)α + 2(n−1)/n·S·β (ring)" : "2(n−1)α + 2(n−1)·S·β (in and out of GPU 0)", k->alpha, ib,
                k->n, k->gpus, num_s(b0, sizeof b0, k->bmin), num_s(b1, sizeof b1, k->bmax), 100 * k->err);
    }
    fprintf(md,
            "\nThe model epoch time is steps × (%s's median step at the same per-GPU batch and math + t(n, S)), "
            "with S the gradient bytes reduced per step (the bytes on the wire) and t the fit of the gradients' type: "
            "no overlap of communication with backward, so an overlapping strategy can beat it.\n\n",
            r->st.ref);
}

void report_markdown(report_t *r, FILE *md) {
    const study_runs_t *s = &r->st;
    char d[64];
    fprintf(md, "# Scaling study: %s\n\n", r->src);
    for (int g = 0; g < s->ng; g++) {
        const group_t *gr = &s->grp[g];
        fprintf(md, "- **%s**: %s; host %s; commit %s; %s\n", gr->sub, *gr->gpus ? gr->gpus : "GPU unknown",
                *gr->hosts ? gr->hosts : "?", *gr->commits ? gr->commits : "?", study_dates(d, sizeof d, gr));
    }
    fprintf(md, "- %d rows, %d runs, %d configurations", s->rows.n, s->allruns, s->nr);
    if (s->leftout > 0)
        fprintf(md,
                "; %d run(s) left out (killed part-way and run again later by `--resume`, or superseded by a later run "
                "of the same configuration)",
                s->leftout);
    fprintf(md, "\n");
    if (*s->unknown)
        fprintf(md,
                "- strategies this binary does not know: %s (no properties: not the reference, a pipeline where its "
                "rows have micro_batches, no model or projection)\n",
                s->unknown);
    fprintf(md, "\n");
    fprintf(
        md,
        "Times are medians over each run's steady epochs (epoch 1 is warmup). A table row stands for the runs of one "
        "strategy, GPU count, batch, math and gradient dtype; **best** is the lowest epoch time over their learning "
        "rates and seeds, and the final test accuracy is the best over them, with its learning rate. Speedup T1/TN "
        "and efficiency T1/(N·TN) take T1 from the strategy `%s` at the same batch and math (weak scaling: the "
        "same batch per GPU).\n\n",
        s->ref);
    if (!report_one_gpu_study(s)) allreduce_model(r, md);
    for (int g = 0; g < s->ng; g++) {
        const group_t *gr = &s->grp[g];
        char n[300];
        fprintf(md, "## %s\n\n### Figures\n\n", gr->sub);
        static const char *const figs[][2] = {{"epoch_time", "epoch time against GPU count"},
                                              {"speedup", "speedup and efficiency against GPU count"},
                                              {"throughput", "throughput against per-GPU batch"},
                                              {"acc_batch", "final test accuracy against batch"},
                                              {"breakdown", "per-step compute, exposed communication and idle time"},
                                              {"bubble", "pipeline bubble against micro-batches"},
                                              {"acc_lr", "final test accuracy against learning rate"}};
        for (size_t i = 0; i < sizeof figs / sizeof *figs; i++) {
            snprintf(n, sizeof n, "%s-%s.png", figs[i][0], gr->id);
            figure(r, md, n, figs[i][1]);
        }
        snprintf(n, sizeof n, "acc_epoch-%s-", gr->id);
        for (int i = 0; i < r->nfig; i++)
            if (strncmp(r->fig[i], n, strlen(n)) == 0) figure(r, md, r->fig[i], "test accuracy against epoch");
        if (r->nfig == 0) fprintf(md, "(no figures: %s)\n\n", r->figs_note ? r->figs_note : "none drawn");
        if (report_one_gpu_group(s, g)) report_one_gpu(r, md, g);
        summary(r, md, g);
        report_precision(r, md, g);
        not_ok(r, md, g);
    }
}
