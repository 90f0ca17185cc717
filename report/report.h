/* report.h — `scaling report STUDY.csv [--out DIR] [options]`: REPORT.md, one data file per figure and the figures
 * (gnuplot, where it is) of a study CSV, computed here in C (doc/report.md says what each part means). Host-only:
 * it runs on a machine without a GPU. */
#pragma once
#include "fit.h"
#include "../study/table.h"
#include "../study/config.h"
#include "../study/quality.h"

#include <limits.h>
#include <stdio.h>

/* The report's page and its summary table, in its output folder. */
#define REPORT_MD "REPORT.md"
#define REPORT_SUMMARY_CSV "summary.csv"

/* An error message: a path and a line about it. */
#define REPORT_ERR (PATH_MAX + 512)

/* A figure to draw: plots/<script> on data (and data2) into <out>/<name>.{png,svg}; or, with skip set, the reason it
 * has no data. Every string is the plot's own (freed with it). */
typedef struct plot {
    char *script, *name, *data, *data2, *subtitle, *caption, *skip;
    int tokens;         /* its group's speeds are a language model's: gnuplot's `unit` is tokens/s, `samples`
                         * sequences (else images/s, images) */
} plot_t;

/* `--baseline OLD.csv` (baseline.c): a configuration of either study (every key column but seed and commit), side
 * 0 this study and side 1 the baseline, and the gate's verdict on it (doc/report.md, "Against the baseline"). */
typedef enum {
    BASE_SAME,          /* measured on both sides, no fall past the threshold */
    BASE_NOISE,         /* fell past the threshold but inside the two sides' spread: no finding */
    BASE_REGRESSED,     /* fell past the threshold and both spreads, failed here, or missing here */
    BASE_NEW,           /* only in this study: listed, never gates */
    BASE_UNJUDGED,      /* the baseline has no measurement of it: nothing to fall from */
} base_verdict_t;
typedef struct {
    const study_run_t *run[2];                /* a run of each side, NULL where that side lacks the configuration */
    int n[2];                           /* its runs (seeds) on each side */
    study_stat_t ips[2];                      /* images/s over the steady epochs of those runs */
    double eff[2];                      /* efficiency (%): ips over N × the side's own T1 run's images/s */
    double d_ips, d_eff;                /* the change of the median images/s (%), of the efficiency (points) */
    base_verdict_t verdict;
    char why[96];                       /* a failed side's reason ("diverged here", "not in this study"), or "" */
} baseline_row_t;
/* The machine and build facts each side's rows name, compared side by side. */
#define BASE_ENV 5
typedef struct {
    const char *src;                    /* OLD.csv as named */
    study_runs_t st;
    double threshold;                   /* %: a fall of images/s past it (and past the spreads) is a regression */
    baseline_row_t *row;                /* in the order of the tables: model, dataset, precision, row key, lr */
    int n;
    int both, only[2];                  /* configurations of both sides, of one side only */
    int regressions;
    int across_gpus;                    /* the sides ran on other GPU models (--baseline-any-gpu) */
    char *env[2][BASE_ENV];             /* per side, the distinct GPU, driver, CUDA, cuDNN and NCCL of its rows */
    int env_differs[BASE_ENV];
} baseline_t;

typedef struct {
    const char *src;                    /* the study CSV as named */
    char out[PATH_MAX];                 /* where REPORT.md and the figures go */
    char plots[PATH_MAX];               /* the gnuplot scripts (plots/), "" to draw none */
    char bench_src[PATH_MAX], bench_default[PATH_MAX], net_src[PATH_MAX];
    double net_gbs, net_lat;            /* NAN unless given */
    int gpn;                            /* GPUs per node of the projected cluster */
    int gnuplot;                        /* 1 where gnuplot runs: figures are drawn and linked */
    const char *figs_note;              /* why there are no figures, or NULL */
    study_runs_t st;
    fits_t fits;                        /* the benchmark's fits, then the network benchmark's under "net " */
    int have_bench, nfit_bench;
    char bench_err[REPORT_ERR];
    bytes_t inter_src, inter_cap, inter_note;   /* the projection's inter-node path: source, caption, why none */
    char **fig;                         /* PNGs drawn (file names), in the order drawn */
    int nfig, capfig;
    plot_t *plot;                       /* figures to draw (figures.c) */
    int nplot, capplot;
    baseline_t *base;                   /* --baseline's comparison, or NULL */
} report_t;

/* The command: argv[0] is "report"; infos the registry's strategies (NULL-terminated), whose properties the report
 * asks. Returns the exit status (0, 1 when writing failed, 2 on bad input). */
int report_main(int argc, char **argv, const char *source_dir, const char *exe, const strategy_info_t *const *infos);

/* `--runs` (runs.c): a header line, then one tab-separated line per reported run of s, in the order of its first row:
 * its configuration, the steady medians (and the extremes of epoch_s and images_per_s), its last epoch's cells, the
 * peak memory, how it ended and its machine. 0, or 1 when f could not be written. */
int report_runs(const study_runs_t *s, FILE *f);
/* summary.csv (runs.c): a header, then per reported run (configuration) its key columns (study_key_columns, the
 * cells as the study CSV writes them), run_id, git_commit, variant, steady_epochs, images_per_s (the steady
 * median), its min and max, images_per_s_per_gpu, a language model's tokens_per_s and tokens_per_s_per_gpu, epoch_s,
 * speedup and efficiency (T1/TN, T1/(N·TN)),
 * final_test_acc (a fraction), final_test_loss (a language model's held-out loss, nats) and status. 0, or 1 when f
 * could not be written. */
int report_summary_csv(const study_runs_t *s, FILE *f);

/* One GPU's section for group g: throughput and accuracy per batch and math, the fastest, the largest batch. */
void report_one_gpu(const report_t *r, FILE *md, int g);

/* The parts of REPORT.md (markdown.c, summary.c, precision.c, project.c) and the figures' data files (figures.c). */
void report_markdown(report_t *r, FILE *md);
/* The all-reduce benchmark that would give this study its cost model, at the study's own GPU counts from 2 (2 where
 * it has none), writing where the report looks (bench_default). Freed by the caller. */
char *report_bench_command(const report_t *r);
void report_summary(const report_t *r, FILE *md, int g);
void report_precision(const report_t *r, FILE *md, int g);
void report_projection(report_t *r, FILE *md);

/* Writes the study figures' data files into r->out and adds each figure (or why it is skipped) to r->plot. 0, or 1
 * with a message when a file cannot be written. */
int report_figures(report_t *r, char *err, size_t errlen);
/* Adds a figure to r->plot, its strings NULL. */
plot_t *report_plot_add(report_t *r);
/* A figure to draw: plots/script over data (and data2, "" for none) of group g (its unit), named name, with subtitle
 * and caption; or one skipped, with why, in REPORT.md's list. */
void report_emit(report_t *r, const char *script, const char *name, const char *data, const char *data2,
                 const study_group_t *g, const char *subtitle, const char *caption);
void report_skip(report_t *r, const char *script, const study_group_t *g, const char *why);
/* A data file's block title: the quoted line gnuplot's columnheader reads, quotes and control bytes as '?'. */
void report_data_title(FILE *o, const char *s);

/* How far the batch scales (batch.c): the fit of S = S_min + E_min / B (Shallue et al.; McCandlish et al.) to steps
 * to target S at global batches B, least squares in 1/B. ok: S_min > 0 and E_min > 0, so B_crit = E_min / S_min;
 * se its standard error (n > 2), r2 the fit's R^2. 0, or -1 with fewer than 2 distinct batches. */
typedef struct {
    double smin, emin, bcrit, se, r2;
    double va, vb, cab;     /* the variances of S_min and E_min and their covariance (n > 2; 0 otherwise) */
    double bmin, bmax;      /* the batches fitted */
    int n, ok;
} batch_fit_t;
int report_batch_fit(const double *batch, const double *steps, int n, batch_fit_t *f);
/* 1 where the fit may give steps inside the batches it fitted: steps fall with the batch (E_min > 0), whether or not
 * they flatten there (S_min > 0, a critical batch). */
int report_batch_projects(const batch_fit_t *f);
/* The fit's steps at batch b and their standard error (*se NAN with 2 points: an exact fit has none). */
double report_batch_steps(const batch_fit_t *f, double b, double *se);
/* The fit of the curve of group g that run u's recipe is on (its math, optimizer, schedule, warm-up, scaling rule
 * and base rate; u itself need not have a target): 0, or -1 where that curve's fit projects nothing
 * (report_batch_projects). */
int report_batch_fit_of(const report_t *r, int g, const study_run_t *u, batch_fit_t *f);
/* REPORT.md's section of group g (nothing where no run had a target), and its figure's data files (batch.gp). */
void report_batch_section(const report_t *r, FILE *md, int g);
int report_batch_figure(report_t *r, int g, const char *caption, char *err, size_t errlen);
/* Draws r->plot[from..] with gnuplot (the scripts of plots/), notes the skipped ones on stderr, adds the PNGs
 * drawn to r->fig. 0, or 1 with a message. */
int report_render(report_t *r, int from, char *err, size_t errlen);
void report_plots_free(report_t *r);

/* --baseline (baseline.c): OLD.csv read and every configuration of either side judged; 0, or 2 with one line: the
 * reader's message, a baseline without runs, one that shares no configuration with now, or one of another GPU model
 * without any_gpu. The table on stdout ('#' lines, a line per configuration, the regressions' count last); REPORT.md's
 * section (after the answer); the figure's data file and plot (1 with a message where it cannot be written). */
int baseline_load(baseline_t *b, const char *path, double threshold, int any_gpu, const study_runs_t *now,
                  const strategy_info_t *const *infos, char *err, size_t errlen);
void baseline_free(baseline_t *b);
void baseline_print(const baseline_t *b, const study_runs_t *now, const char *src, FILE *f);
void report_baseline(const report_t *r, FILE *md);
int baseline_figure(report_t *r, char *err, size_t errlen);

/* The maths of a model and dataset side by side (precision.c): a row pairs the configurations that differ in math
 * only; per math j the median over seeds of the steady epoch t (s), t over the reference math's (tf32 where present,
 * else the first), speedup and efficiency (%) over single at the same batch and math, communication and its exposed
 * part as % of the step (of the median run), and the median final accuracy (%; a language model's: held-out loss,
 * report_quality); NAN where there is none. */
typedef struct {
    int pair;           /* a run of the row */
    int *best, *acc;    /* per math, its median-time run and a run with an accuracy, or -1 */
    double *t, *ratio, *speedup, *efficiency, *comm, *exposed, *accuracy;
} precision_row_t;
typedef struct {
    int nm, ref, grads; /* maths, the reference's index, 1 when the rows differ in gradient dtype too */
    const char **math;
    precision_row_t *row;
    int nrow;
} precision_t;
/* -1 where group g holds one math (no table); else 0 and t to free with precision_free. */
int precision_table(const study_runs_t *s, int g, precision_t *t);
void precision_free(precision_t *t);

/* NCCL's cost model (ar_model.c): all-reduce time in ms of S bytes over N nodes × g GPUs, ring (tree = 0) or tree,
 * with the intra-node α (µs) and β (µs per byte) and the inter-node ones per GPU; NAN past one node without
 * an inter-node path (ae or be NAN). */
double project_ar_ms(int tree, int N, int g, double S, double ai, double bi, double ae, double be);

/* The paths a projected all-reduce crosses. */
typedef struct {
    const fit_t *ki; /* the intra-node fit */
    double ae, be;   /* inter-node α (µs) and β (µs per byte per GPU); NAN without a path */
    int inter;
} ar_path_t;
/* project_ar_ms over p with the intra-node fit ki; _row_: the algorithm a row ran (Ring, Tree; NCCL's choice, the
 * faster, otherwise). */
double ar_path_ms(const ar_path_t *p, int tree, int N, int g, double S, const fit_t *ki);
double ar_path_row_ms(const ar_path_t *p, const char *algo, int N, int g, double S, const fit_t *ki);
/* The inter-node path: the network benchmark's nccl fit (r->net_src), each parameter replaced where given
 * (--net-latency-us, --net-gbs); fills r's inter_src, inter_cap and inter_note for the report. */
void ar_path_inter(ar_path_t *p, report_t *r);

/* A number as text, long enough for any double in any of these formats. */
typedef struct {
    char s[352];
} numtext_t;
/* "%.0f", "%.1f", "%.3f", "%.2f", "%.1f %%" of x, or "—" for NAN: the tables' one way to show a missing number. */
numtext_t report_f0(double x);
numtext_t report_f1(double x);
numtext_t report_f3(double x);
numtext_t report_f2(double x);
numtext_t report_pct(double x);
/* study_num_s's text of x. */
numtext_t report_num(double x);

/* s (a path, or a message naming one) as a Markdown code span, freed by the caller: a file name is data, so no HTML,
 * link, heading or table cell is made of it. Bytes below 0x20 and 0x7f become '?'; the fence is one backtick longer
 * than the longest run in s; in_table: '|' is written "\|", which a table cell needs even in a code span. */
char *report_md_code(const char *s, int in_table);

/* "0.785", or "0.785 (0.780–0.790)" where the values differ: fmt is report_f3, report_f2, report_pct or
 * report_f0's format. */
numtext_t report_ranged(const char *fmt, study_stat_t st);

/* What a group's trained model is judged by, in the report's words, defined once for its tables and sentences: an
 * image model's final test accuracy (%, higher is better), a language model's final held-out loss (test_loss, nats,
 * lower is better: it has no accuracy). The numbers are study/'s (answer.h's acc and loss, one_gpu.h's cells). */
typedef struct {
    const char *head;           /* the tables' column: "final test acc" */
    const char *text_head;      /* the printed answer's shorter one: "test acc" */
    const char *delta_head;     /* the change against the reference: "Δ acc (points)" */
    const char *words;          /* in a sentence, before its number: "final test accuracy" */
    const char *name;           /* what holds, falls or is the best: "accuracy" */
    const char *fell, *worse;   /* past the noise: "fell" and "below" (the best); a loss "rose", "above" */
    const char *fmt, *dfmt;     /* its number and its change: "%.1f %%" (report_pct's), "%+.1f" */
    const char *dunit;          /* the change's unit in a sentence: " points" */
} report_quality_t;
const report_quality_t *report_quality(int tokens);
/* fmt (a report_quality_t's fmt or dfmt, or another format of one double) of x, or "—" for NAN. */
numtext_t report_fmt(const char *fmt, double x);

/* Words of labels, appended to b: "1 GPU" / "4 GPUs"; a run's batch ("256/GPU", or "batch 1024" for the pipeline);
 * ", <link>" or nothing; the run's math and gradient dtype, each only where its group holds more than one (nothing
 * for one precision); ", " and that where there is one. */
void report_gpus_word(bytes_t *b, int gpus);
void report_batch_word(bytes_t *b, const study_run_t *r);
void report_link_word(bytes_t *b, const study_run_t *r);
void report_prec_word(bytes_t *b, const study_runs_t *s, const study_run_t *r);
void report_with_prec(bytes_t *b, const study_runs_t *s, const study_run_t *r);
/* The dates of a group's rows: "2026-01-05", or "2026-01-05 to 2026-01-06". */
void report_study_dates(bytes_t *b, const study_group_t *g);
