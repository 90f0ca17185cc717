/* report.h — `scaling report STUDY.csv [--out DIR] [options]`: REPORT.md, one data file per figure and the figures
 * (gnuplot, where it is) of a study CSV, computed here in C (doc/report.md says what each part means). Host-only:
 * it runs on a machine without a GPU. */
#pragma once
#include "fit.h"
#include "study_runs.h"

#include <stdio.h>

#define REPORT_MAX_FIGS 256

typedef struct {
    const char *src;  /* the study CSV as named */
    char out[1024];   /* where REPORT.md and the figures go */
    char plots[1024]; /* the gnuplot scripts (plots/), "" to draw none */
    char bench_src[1100], bench_default[1100], net_src[1024];
    double net_gbs, net_lat; /* NAN unless given */
    int gpn;                 /* GPUs per node of the projected cluster */
    int gnuplot;             /* 1 where gnuplot runs: figures are drawn and linked */
    const char *figs_note;   /* why there are no figures, or NULL */
    study_runs_t st;
    fits_t fits; /* the benchmark's fits, then the network benchmark's under "net " */
    int have_bench, nfit_bench;
    char bench_err[256];
    char inter_src[1400], inter_cap[100],
        inter_note[1300];           /* the projection's inter-node path: source, caption, why none */
    char fig[REPORT_MAX_FIGS][310]; /* PNGs drawn (file names), in the order drawn */
    int nfig;
    struct plot *plot; /* figures to draw (figures.c) */
    int nplot;
} report_t;

/* The command: argv[0] is "report"; infos the registry's strategies (NULL-terminated), whose properties the report
 * asks. Returns the exit status (0, 1 when writing failed, 2 on bad input). */
int report_main(int argc, char **argv, const char *source_dir, const char *exe, const strategy_info_t *const *infos);

/* `--runs` (runs.c): a header line, then one tab-separated line per reported run of s, in the order of its first row:
 * its configuration, the steady medians (and the extremes of epoch_s and images_per_s), its last epoch's cells, the
 * peak memory, how it ended and its machine. 0, or 1 when f could not be written. */
int report_runs(const study_runs_t *s, FILE *f);

/* 1 when every run of group g (of every group) is on one GPU: one_gpu.c's section replaces what scales. */
int report_one_gpu_group(const study_runs_t *s, int g);
int report_one_gpu_study(const study_runs_t *s);
/* One GPU's section for group g: throughput and accuracy per batch and math, the fastest, the largest batch. */
void report_one_gpu(const report_t *r, FILE *md, int g);

/* The parts of REPORT.md (markdown.c, project.c) and the figures' data files (figures.c). */
void report_markdown(report_t *r, FILE *md);
void report_projection(report_t *r, FILE *md);
/* A figure to draw: plots/<script> on data (and data2) into <out>/<name>.{png,svg}; or, with skip set, the reason it
 * has no data. */
typedef struct plot {
    char script[32], name[300], data[1400], data2[1400], subtitle[300], caption[1400], skip[200];
} plot_t;

/* Writes the study figures' data files into r->out and adds each figure (or why it is skipped) to r->plot. 0, or 1
 * with a message when a file cannot be written. */
int report_figures(report_t *r, char *err, size_t errlen);
/* Adds a figure to r->plot; NULL when out of memory. */
plot_t *report_plot_add(report_t *r);
/* Draws r->plot[from..] with gnuplot (the scripts of plots/), notes the skipped ones on stderr, adds the PNGs
 * drawn to r->fig. 0, or 1 with a message. */
int report_render(report_t *r, int from, char *err, size_t errlen);

/* The maths of a model and dataset side by side (precision.c): a row pairs the runs that differ in math only; per
 * math j its best steady epoch t (s), t over the reference math's (tf32 where present, else the first), speedup and
 * efficiency (%) over single at the same batch and math, communication and its exposed part as % of the step, and
 * the best final accuracy (%); NAN where there is none. */
#define PRECISION_MAX 8
typedef struct {
    char key[600];
    int pair; /* a run of the row */
    int best[PRECISION_MAX], acc[PRECISION_MAX];
    double t[PRECISION_MAX], ratio[PRECISION_MAX], speedup[PRECISION_MAX], efficiency[PRECISION_MAX];
    double comm[PRECISION_MAX], exposed[PRECISION_MAX], accuracy[PRECISION_MAX];
} precision_row_t;
typedef struct {
    int nm, ref, grads; /* maths, the reference's index, 1 when the rows differ in gradient dtype too */
    const char *math[PRECISION_MAX];
    precision_row_t *row;
    int nrow;
} precision_t;
/* -1 where group g holds one math (no table) or out of memory; else 0 and t to free with precision_free. */
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

/* Shared formatting: "—" for NAN. */
const char *f3(char *b, size_t n, double x);
const char *f2(char *b, size_t n, double x);
const char *pct(char *b, size_t n, double x);
/* "1 GPU" / "4 GPUs"; a run's batch ("256/GPU", or "batch 1024" for the pipeline); ", <link>" or "". */
const char *gpus_word(char *b, size_t n, int gpus);
const char *batch_word(char *b, size_t n, const run_t *r);
const char *link_word(char *b, size_t n, const run_t *r);
/* The run's math and gradient dtype, each only where its group holds more than one ("" for one precision). */
const char *prec_word(char *b, size_t n, const study_runs_t *s, const run_t *r);
/* label, then ", " and prec_word where there is one. */
const char *with_prec(char *b, size_t n, const char *label, const study_runs_t *s, const run_t *r);
/* Sort-key parts: math then gradient dtype rank; strategy, GPUs, schedule, batch, M and link of a summary row. */
void key_prec(char *k, size_t n, const run_t *r);
void key_row(char *k, size_t n, const run_t *r);
const char *study_dates(char *b, size_t n, const group_t *g);
