/* answer.h — the default study's closing answer, from the rows it wrote: per strategy the speedup T1/TN and efficiency
 * T1/(N·TN) at the largest GPU count it ran, against single on 1 GPU, and the fastest strategy there; on one GPU,
 * what one GPU can: throughput and accuracy per batch and math, the fastest, the largest batch that fit. Host-only.
 *
 * Numbers as the report computes them (study/study.h, used by both): a run's time is the median of its steady
 * epochs' epoch_s; T1 is the reference strategy's (single's) fastest at the same batch (per GPU for replicas, the
 * global batch for a strategy with t1_global_batch, the pipeline) and math, each run's strategy asked by its
 * properties; where a strategy has several runs at one GPU count and batch, the fastest counts. */
#pragma once
#include "../study/schema.h"
#include "../strategies/strategy_info.h"

#include <stdio.h>

#define ANSWER_MAX_STEADY 256

/* One run, from its rows. */
typedef struct {
    char run_id[64], strategy[32], status[32], math[16];
    const strategy_info_t *info;                /* its properties; NULL for a strategy the registry lacks */
    int gpus, batch, pipeline;                  /* pipeline: batch is the global batch (study_t1_global), else
                                                 * per GPU */
    double steady[ANSWER_MAX_STEADY];           /* the steady epochs' epoch_s */
    double steady_ips[ANSWER_MAX_STEADY];       /* and their images_per_s */
    int n_steady;
    double acc;                                 /* the last epoch's test_acc (a fraction), < 0 without one */
} answer_run_t;

typedef struct {
    answer_run_t *runs;
    int n, cap;
    /* The registry's strategies (NULL-terminated), set by the caller: which one is the reference (T1) and which
     * measure against it at the global batch. */
    const strategy_info_t *const *strategies;
    /* What a second GPU would add to a one-GPU study (the sweeps the default study runs on 2), set by the caller;
     * NULL: not said. */
    const char *second_gpu;
} answer_t;

/* One strategy's line: its fastest run at the largest GPU count it ran (t < 0: no steady epoch, status says why). */
typedef struct {
    const char *strategy, *status;
    int gpus, batch, pipeline;
    double t, t1;                               /* median steady epoch (s); single's at the same batch, or < 0 */
    double speedup, efficiency;                 /* t1 / t and speedup / gpus; < 0 without t or t1 */
} answer_line_t;

#define ANSWER_MAX_LINES 16

typedef struct {
    int n;
    answer_line_t line[ANSWER_MAX_LINES];       /* single first, then the strategies in the order they ran */
    int gpus;                                   /* the largest GPU count any run had */
    int fastest;                                /* index in line of the fastest strategy on `gpus` GPUs (>= 2), or -1 */
} answer_summary_t;

/* A one-GPU study (every run on 1 GPU) asks what one GPU can, per batch and math: one cell per run, as the answer
 * and the report's one-GPU section read it. */
typedef struct {
    const char *math, *status;
    int batch;
    double ips, acc;        /* the median of the steady epochs' images_per_s, the final test accuracy; < 0 without */
} answer_cell_t;

#define ANSWER_MAX_MATHS 8

typedef struct {
    int n_math;
    const char *math[ANSWER_MAX_MATHS];     /* in the order the cells have them */
    /* Per math: the largest batch that fit (a run with a steady epoch that did not end oom), and the smallest batch
     * that did not (a run that ended oom, at setup or in an epoch); 0 where there is none. */
    int fit[ANSWER_MAX_MATHS], no_fit[ANSWER_MAX_MATHS];
    int fastest;            /* the cell of the highest throughput, -1 without one */
    /* Per math, the fastest cell's batch in that math: its cell (-1 for the fastest's own math, or where that math
     * has no throughput at that batch) and how many times slower than the fastest it is. */
    int there[ANSWER_MAX_MATHS];
    double slower[ANSWER_MAX_MATHS];
} answer_one_t;

/* The facts of a one-GPU study, computed once for the printed answer and REPORT.md's one-GPU section. */
void answer_one_gpu(const answer_cell_t *c, int n, answer_one_t *o);
/* Writes the fastest cell (o->fastest >= 0) and each other math at its batch ("bf16 at batch 4096, 100000 images/s;
 * tf32 there<colon> 50000 images/s (2.00<times> slower)"): the words both the answer and the report say after their
 * "fastest" label, in their own punctuation. */
void answer_one_fastest(FILE *f, const answer_cell_t *c, const answer_one_t *o, const char *colon, const char *times);
/* Writes the largest batch that fit per math, each after a blank and the maths separated by sep: the words both the
 * answer and the report say after their "largest batch that fit" label. */
void answer_one_fit(FILE *f, const answer_one_t *o, const char *sep);
/* The cell of math m at batch b with a throughput, or -1. */
int answer_cell_at(const answer_cell_t *c, int n, const char *m, int b);

/* Adds one written row (a setup-failure row included) to its run. 0, or -1 when out of host memory. */
int answer_add(answer_t *a, const results_row_t *row);
void answer_free(answer_t *a);
/* The median of x[0..n-1] (reorders x); < 0 for n = 0. */
double answer_median(double *x, int n);
void answer_summarise(const answer_t *a, answer_summary_t *s);
/* Prints the answer: a '#' title, one line per strategy, the fastest one, and where the report is. */
void answer_print(FILE *f, const answer_t *a, const char *what, const char *report);
