/* baseline.c — `scaling report NEW.csv --baseline OLD.csv [--threshold PCT]`: the configurations both studies ran,
 * each side's images/s and efficiency with its run-to-run spread, the change, and the regressions past the threshold;
 * as a table on stdout, a section and a figure in REPORT.md, and exit 1 where there is one (nccl-tests' way with
 * NCCL_TESTS_MIN_BW). */
#include "report.h"
#include "../engine/errmsg.h"
#include "../study/paths.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- matching: a configuration but its seed and commit, across two studies (whose groups are numbered apart) */

static int copy_path(const study_run_t *r) { return r->info && r->info->path_is_algo; }

/* Model, dataset, precision and the table row's key (strategy, GPUs, schedule, batch, micro-batches, link), then a
 * configuration but its seed, less NCCL's algorithm (its choice, not the study's, and older CSVs lack it) but the
 * copy path. */
static int cmp_match(const study_run_t *a, const study_run_t *b) {
    int c = strcmp(a->model, b->model);
    if (!c) c = strcmp(a->dataset, b->dataset);
    if (!c) c = study_cmp_prec(a, b);
    if (!c) c = study_cmp_row(a, b);
    if (!c) c = study_cmp_config(a, b, STUDY_CMP_SKIP(RESULTS_KEY_nccl_algo));
    return c ? c : strcmp(copy_path(a) ? a->algo : "", copy_path(b) ? b->algo : "");
}

typedef struct {
    const study_run_t *r;
    int side;                       /* 0: this study, 1: the baseline */
} side_run_t;

static int by_match(const void *x, const void *y) {
    const side_run_t *a = x, *b = y;
    int c = cmp_match(a->r, b->r);
    if (!c) c = study_cmp_int(a->side, b->side);
    return c ? c : (a->r > b->r) - (a->r < b->r);   /* one side's runs are one array */
}

/* Efficiency (%) of a side's median images/s against N × the images/s of its own study's T1 run (the reference's
 * fastest at the same batch and math); NAN without one. */
static double efficiency(const study_runs_t *s, const study_run_t *r, double ips) {
    int t1 = study_t1_run(s, r->group, r->line_batch, r->math);
    double ref = t1 >= 0 ? s->run[t1].med[RESULTS_COL_images_per_s] : NAN;
    return 100 * ips / (ref * r->gpus);
}

/* The run-to-run spread: the range of the steady epochs over their median, in %. */
static double spread(study_stat_t st) { return st.n > 1 ? 100 * (st.max - st.min) / st.med : NAN; }

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* Why a side's runs of one configuration are no measurement: a run that did not end ok (failed, diverged, timed out,
 * out of memory, interrupted, replicas differ), or one without a finite positive steady images/s (crashed after its
 * warm-up, a nan or -1 cell). "" where every run measured. */
static void side_fault(char *why, size_t len, const study_run_t *const *u, int n, const char *where) {
    why[0] = '\0';
    for (int i = 0; i < n && !why[0]; i++) {
        double ips = u[i]->med[RESULTS_COL_images_per_s];
        if (strcmp(u[i]->fstat, study_status_name(RUN_OK)) != 0) snprintf(why, len, "%s %s", u[i]->fstat, where);
        else if (!(isfinite(ips) && ips > 0)) snprintf(why, len, "no steady images/s %s", where);
    }
}

/* The spread both sides share: the wider of the two (a side of one epoch and one seed has none). */
static double noise(const baseline_row_t *w) {
    double a = spread(w->ips[0]), b = spread(w->ips[1]);
    return fmax(isnan(a) ? 0 : a, isnan(b) ? 0 : b);
}

/* The gate on one configuration (doc/report.md, "Against the baseline"): missing or failed here is a regression
 * where the baseline measured it; a fall of images/s past the threshold is one only past both sides' spread. */
static void judge(baseline_row_t *w, double threshold, const study_run_t *const *now_runs,
                  const study_run_t *const *base_runs) {
    char here[sizeof w->why], there[sizeof w->why];
    side_fault(here, sizeof here, now_runs, w->n[0], "here");
    side_fault(there, sizeof there, base_runs, w->n[1], "in the baseline");
    if (!w->n[1]) {
        w->verdict = BASE_NEW;
    } else if (!w->n[0]) {
        w->verdict = BASE_REGRESSED;    /* a configuration dropped fails closed, whatever the baseline measured */
        snprintf(w->why, sizeof w->why, "not in this study");
    } else if (*there) {
        w->verdict = BASE_UNJUDGED;
        snprintf(w->why, sizeof w->why, "%s", there);
    } else if (*here) {
        w->verdict = BASE_REGRESSED;
        snprintf(w->why, sizeof w->why, "%s", here);
    } else if (w->d_ips < -threshold) {
        w->verdict = -w->d_ips > noise(w) ? BASE_REGRESSED : BASE_NOISE;
    } else {
        w->verdict = BASE_SAME;
    }
}

static void match(baseline_t *b, const study_runs_t *now) {
    int n = now->nr + b->st.nr;
    side_run_t *u = mem_alloc((size_t)(n ? n : 1) * sizeof *u);
    for (int i = 0; i < now->nr; i++) u[i] = (side_run_t){&now->run[i], 0};
    for (int i = 0; i < b->st.nr; i++) u[now->nr + i] = (side_run_t){&b->st.run[i], 1};
    qsort(u, (size_t)n, sizeof *u, by_match);
    const study_run_t **side[2] = {mem_alloc((size_t)(n ? n : 1) * sizeof **side),
                             mem_alloc((size_t)(n ? n : 1) * sizeof **side)};
    int cap = 0;
    for (int i = 0; i < n;) {
        int j = i, k = i;
        while (j < n && cmp_match(u[i].r, u[j].r) == 0) j++;
        while (k < j && u[k].side == 0) k++;   /* u[i..k) this study's runs, u[k..j) the baseline's */
        baseline_row_t *w = MEM_PUSH(b->row, b->n, cap);
        const study_runs_t *st[2] = {now, &b->st};
        int from[2] = {i, k}, to[2] = {k, j};
        for (int sd = 0; sd < 2; sd++) {
            for (int m = from[sd]; m < to[sd]; m++) side[sd][m - from[sd]] = u[m].r;
            w->n[sd] = to[sd] - from[sd];
            w->run[sd] = w->n[sd] ? side[sd][0] : NULL;
            w->ips[sd] = study_stat_steady(side[sd], w->n[sd], RESULTS_COL_images_per_s);
            w->eff[sd] = w->n[sd] ? efficiency(st[sd], side[sd][0], w->ips[sd].med) : NAN;
        }
        w->d_ips = 100 * (w->ips[0].med / w->ips[1].med - 1);
        w->d_eff = w->eff[0] - w->eff[1];
        judge(w, b->threshold, side[0], side[1]);
        if (w->n[0] && w->n[1]) b->both++;
        else b->only[w->n[0] == 0]++;
        b->regressions += w->verdict == BASE_REGRESSED;
        i = j;
    }
    free(side[0]), free(side[1]);
    free(u);
}

/* ---- the machine and build of each side */

static const char *const env_names[BASE_ENV] = {"GPU", "driver", "CUDA", "cuDNN", "NCCL"};

static const char *env_cell(const study_env_t *e, int f) {
    const char *v[BASE_ENV] = {e->gpu_name, e->driver, e->cuda, e->cudnn, e->nccl};
    return v[f];
}

/* The distinct values of field f over a study's rows ("unknown" where no row names one), sorted so that two sides
 * holding one set compare equal. */
static char *env_of(const study_runs_t *s, int f) {
    names_t v = {0};
    for (int i = 0; i < s->nenv; i++)
        if (*env_cell(s->envs[i], f)) names_add(&v, env_cell(s->envs[i], f));
    if (v.n) qsort(v.v, (size_t)v.n, sizeof *v.v, cmp_str);
    bytes_t b = {0};
    names_join(&b, &v, " + ");
    char *t = mem_printf("%s", v.n ? text_str(&b) : "unknown");
    names_free(&v);
    free(b.s);
    return t;
}

/* Each side's machine and build, and where they differ; another GPU model is bad input unless any_gpu. 0, or 2. */
static int compare_env(baseline_t *b, const study_runs_t *now, int any_gpu, char *err, size_t errlen) {
    for (int f = 0; f < BASE_ENV; f++) {
        b->env[0][f] = env_of(now, f);
        b->env[1][f] = env_of(&b->st, f);
        b->env_differs[f] = strcmp(b->env[0][f], b->env[1][f]) != 0;
    }
    if (!b->env_differs[0]) return 0;
    if (!any_gpu)
        return errmsg(2, err, errlen, "%s ran on %s, this study on %s: a comparison across GPUs is no regression "
                      "test (--baseline-any-gpu makes one anyway)", b->src, b->env[1][0], b->env[0][0]);
    b->across_gpus = 1;
    return 0;
}

int baseline_load(baseline_t *b, const char *path, double threshold, int any_gpu, const study_runs_t *now,
                  const strategy_info_t *const *infos, char *err, size_t errlen) {
    memset(b, 0, sizeof *b);
    b->src = path;
    b->threshold = threshold;
    if (study_load(&b->st, path, infos, err, errlen)) return 2;
    if (!b->st.nr) return errmsg(2, err, errlen, "%s: no runs (--baseline): nothing to compare with", path);
    match(b, now);
    if (!b->both)
        return errmsg(2, err, errlen, "%s shares no configuration with this study (another model, dataset or sweep?): "
                      "nothing to compare (--baseline)", path);
    return compare_env(b, now, any_gpu, err, errlen);
}

void baseline_free(baseline_t *b) {
    study_free(&b->st);
    free(b->row);
    for (int sd = 0; sd < 2; sd++)
        for (int f = 0; f < BASE_ENV; f++) free(b->env[sd][f]);
    memset(b, 0, sizeof *b);
}

/* ---- words */

/* "nccl, 2 GPUs, 256/GPU, lr 0.2, tf32, host copies" (model and dataset first where the study has several). */
static void row_label(bytes_t *l, const study_runs_t *now, const study_run_t *u) {
    if (now->ng > 1) text_printf(l, "%s on %s: ", u->model, u->dataset);
    text_printf(l, "%s, ", u->strategy);
    report_gpus_word(l, u->gpus);
    text_printf(l, ", ");
    report_batch_word(l, u);
    report_link_word(l, u);
    text_printf(l, ", lr %s", u->lr);
    if (u->pipe) text_printf(l, ", %s, M=%s", u->sched, u->mb);
    text_printf(l, ", %s", u->math);
    if (*u->gd) text_printf(l, ", %s grads", u->gd);
    if (copy_path(u) && *u->algo) text_printf(l, ", "), study_algo_words(l, u, u->algo);
}

/* "+1.5 %" ("+1.5" without a unit), or "—" for NAN. */
static numtext_t change(double x, const char *unit) {
    numtext_t t;
    if (isnan(x)) snprintf(t.s, sizeof t.s, "—");
    else snprintf(t.s, sizeof t.s, "%+.1f%s", x, unit);
    return t;
}

static void commits(bytes_t *b, const study_runs_t *s) {
    names_t c = {0};
    for (int g = 0; g < s->ng; g++)
        for (int i = 0; i < s->grp[g].commits.n; i++) names_add(&c, s->grp[g].commits.v[i]);
    names_join(b, &c, ", ");
    names_free(&c);
}

/* A row's verdict in words, for stdout and REPORT.md ("" for none). */
static void verdict_words(bytes_t *t, const baseline_row_t *w) {
    switch (w->verdict) {
    case BASE_REGRESSED: text_printf(t, "REGRESSION%s%s", *w->why ? ": " : "", w->why); break;
    case BASE_NOISE: text_printf(t, "within noise"); break;
    case BASE_NEW: text_printf(t, "new"); break;
    case BASE_UNJUDGED: text_printf(t, "not judged: %s", w->why); break;
    case BASE_SAME: break;
    }
}

static const study_run_t *row_run(const baseline_row_t *w) { return w->run[0] ? w->run[0] : w->run[1]; }

/* ---- stdout: '#' lines and one aligned line per configuration, the regressions last. Names are data: each line
 * with a path or a cell goes through errmsg_line, which escapes what a terminal would act on. */

void baseline_print(const baseline_t *b, const study_runs_t *now, const char *src, FILE *f) {
    bytes_t cn = {0}, cb = {0};
    commits(&cn, now), commits(&cb, &b->st);
    errmsg_line(f, "# ", "baseline: %s (commit %s) against %s (commit %s)%s: %d configuration(s) in both, %d only here "
                "(new: not judged), %d only there", src, text_str(&cn), b->src, text_str(&cb),
                b->across_gpus ? ", across GPUs" : "", b->both, b->only[0], b->only[1]);
    for (int sd = 0; sd < 2; sd++) {
        bytes_t l = {0};
        for (int e = 0; e < BASE_ENV; e++)
            text_printf(&l, "%s%s %s%s", e ? ", " : "", env_names[e], b->env[sd][e],
                        b->env_differs[e] ? " (differs)" : "");
        errmsg_line(f, "# ", "%s %s", sd ? "baseline:  " : "this study:", text_str(&l));
        free(l.s);
    }
    fprintf(f, "# %10s %7s %10s %7s %8s %8s %8s %8s  %s\n", "img/s", "spread", "base", "spread", "Δ img/s",
            "eff", "base", "Δ eff", "configuration");
    for (int i = 0; i < b->n; i++) {
        const baseline_row_t *w = &b->row[i];
        bytes_t l = {0}, v = {0};
        row_label(&l, now, row_run(w));
        verdict_words(&v, w);
        errmsg_line(f, "  ", "%10s %7s %10s %7s %8s %8s %8s %8s  %s%s%s", report_f0(w->ips[0].med).s,
                    report_pct(spread(w->ips[0])).s, report_f0(w->ips[1].med).s, report_pct(spread(w->ips[1])).s,
                    change(w->d_ips, "%").s,
                    report_pct(w->eff[0]).s, report_pct(w->eff[1]).s, change(w->d_eff, "").s, text_str(&l),
                    v.len ? "  " : "",
                    text_str(&v));
        free(l.s), free(v.s);
    }
    fprintf(f, "# %d regression(s) past %s (images/s below the baseline's by more than that and past both spreads, "
               "or a configuration failed or missing here)\n", b->regressions, report_pct(b->threshold).s);
    free(cn.s), free(cb.s);
}

/* ---- REPORT.md's section and its figure */

int baseline_figure(report_t *r, char *err, size_t errlen) {
    const baseline_t *b = r->base;
    if (!b->n) return 0;
    char *path = mem_printf("%s/baseline.dat", r->out);
    paths_replace_t out;    /* written whole, then renamed into place (study/paths.h) */
    FILE *o = paths_replace_begin(&out, path, NULL, 0) == 0 ? out.f : NULL;
    int rc = o ? 0 : -1;
    if (o) {
        fprintf(o, "# label delta_images_per_s_pct linetype minus_threshold\n");
        for (int i = 0; i < b->n; i++) {
            const baseline_row_t *w = &b->row[i];
            bytes_t l = {0};
            row_label(&l, &r->st, row_run(w));
            fputc('"', o);   /* names are checked on read; a quote or a newline would still stay inside */
            for (const char *p = text_str(&l); *p; p++)
                fputc(*p == '"' || *p == '\\' || (unsigned char)*p < 0x20 ? '?' : *p, o);
            if (isnan(w->d_ips)) fprintf(o, "\" NaN 1 %.6g\n", -b->threshold);
            else fprintf(o, "\" %.6g %d %.6g\n", w->d_ips, w->verdict == BASE_REGRESSED ? 4 : 1, -b->threshold);
            free(l.s);
        }
        if (paths_replace_end(&out, NULL, 0) != 0) rc = -1;
    }
    if (rc) snprintf(err, errlen, "%s: cannot write", path);
    else {
        plot_t *p = report_plot_add(r);
        p->script = mem_printf("baseline.gp");
        p->name = mem_printf("baseline");
        p->data = mem_printf("%s", path);
        p->data2 = mem_printf("%s", "");
        p->subtitle = mem_printf("against %s", b->src);
        p->caption = mem_printf("%s against %s", r->src, b->src);
    }
    free(path);
    return rc ? 1 : 0;
}

static void table(FILE *md, const report_t *r, const baseline_t *b) {
    fprintf(md, "| configuration | images/s | spread | baseline | spread | Δ images/s | efficiency | baseline | "
                "Δ efficiency (points) | runs (here, baseline) | verdict |\n"
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    for (int i = 0; i < b->n; i++) {
        const baseline_row_t *w = &b->row[i];
        int reg = w->verdict == BASE_REGRESSED;
        bytes_t l = {0}, v = {0};
        row_label(&l, &r->st, row_run(w));
        verdict_words(&v, w);
        fprintf(md, "| %s | %s | %s | %s | %s | %s%s%s | %s | %s | %s | %d, %d | %s%s%s |\n", text_str(&l),
                report_f0(w->ips[0].med).s, report_pct(spread(w->ips[0])).s, report_f0(w->ips[1].med).s,
                report_pct(spread(w->ips[1])).s,
                reg ? "**" : "", change(w->d_ips, " %").s, reg ? "**" : "", report_pct(w->eff[0]).s,
                report_pct(w->eff[1]).s,
                change(w->d_eff, "").s, w->n[0], w->n[1], reg ? "**" : "", text_str(&v), reg ? "**" : "");
        free(l.s), free(v.s);
    }
    fprintf(md, "\n");
}

/* Each side's machine and build, a difference in bold. */
static void env_table(FILE *md, const baseline_t *b) {
    fprintf(md, "| | GPU | driver | CUDA | cuDNN | NCCL |\n|---|---|---|---|---|---|\n");
    for (int sd = 0; sd < 2; sd++) {
        fprintf(md, "| %s |", sd ? "baseline" : "this study");
        for (int e = 0; e < BASE_ENV; e++) {
            char *c = report_md_code(b->env[sd][e], 1);
            fprintf(md, " %s%s%s |", b->env_differs[e] ? "**" : "", c, b->env_differs[e] ? "** (differs)" : "");
            free(c);
        }
        fprintf(md, "\n");
    }
    fprintf(md, "\n");
}

void report_baseline(const report_t *r, FILE *md) {
    const baseline_t *b = r->base;
    bytes_t cn = {0}, cb = {0};
    commits(&cn, &r->st), commits(&cb, &b->st);
    char *src = report_md_code(b->src, 0);
    fprintf(md, "## Against the baseline%s\n\n", b->across_gpus ? ", across GPUs" : "");
    fprintf(md,
            "This study (commit %s) against %s (commit %s)%s: %d configuration(s) both ran (every key column but the "
            "seed and the commit), %d only here (new: listed, not judged), %d only there. images/s is the median "
            "over the steady epochs of a configuration's runs (its seeds), its spread their range over that median; "
            "efficiency is images/s over N × that of the study's own T1 run (`%s`'s fastest at the same batch and "
            "math). A **regression** is images/s below the baseline's by more than %s (`--threshold`) and by more "
            "than either side's spread (a fall inside it is *within noise*), or a configuration the baseline measured "
            "that failed here or is missing here: `scaling report` exits 1 where there is one.\n\n",
            text_str(&cn), src, text_str(&cb), b->across_gpus ? ", on other GPUs (`--baseline-any-gpu`)" : "",
            b->both, b->only[0], b->only[1], study_ref(&r->st), report_pct(b->threshold).s);
    free(cn.s), free(cb.s), free(src);
    env_table(md, b);
    if (b->n) table(md, r, b);
    if (!b->regressions) fprintf(md, "**No regression** past %s.\n\n", report_pct(b->threshold).s);
    else {
        fprintf(md, "**Regressions** past %s:\n\n", report_pct(b->threshold).s);
        for (int i = 0; i < b->n; i++) {
            const baseline_row_t *w = &b->row[i];
            if (w->verdict != BASE_REGRESSED) continue;
            bytes_t l = {0};
            row_label(&l, &r->st, row_run(w));
            if (*w->why) fprintf(md, "- %s: %s\n", text_str(&l), w->why);
            else
                fprintf(md, "- %s: %s images/s against %s (%s; spreads %s and %s)\n", text_str(&l),
                        report_f0(w->ips[0].med).s, report_f0(w->ips[1].med).s, change(w->d_ips, " %").s,
                        report_pct(spread(w->ips[0])).s,
                        report_pct(spread(w->ips[1])).s);
            free(l.s);
        }
        fprintf(md, "\n");
    }
    for (int i = 0; i < r->nfig; i++)
        if (strcmp(r->fig[i], "baseline.png") == 0)
            fprintf(md, "![change of images/s against the baseline](baseline.png)\n\n*The change of each "
                        "configuration's images/s against the baseline, in %%: a red bar is a regression past the "
                        "threshold (the dashed line).*\n\n");
}
