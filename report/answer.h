/* answer.h — a study's answer, first in REPORT.md and printed by the default study (the same table from the same
 * function): per model and math a row per strategy (with what tells its runs apart: link, copy path or NCCL
 * algorithm, schedule, gradient dtype), GPU count and batch, at the setting (learning rate, micro-batches) that is
 * fastest within 1 point of that row's best accuracy: images/s in total and per GPU over its steady epochs and seeds
 * (median, range, counts), speedup and efficiency against the reference strategy (single) at the same batch and
 * math, final test accuracy and its change against the reference's; then the fastest row per GPU count (on one
 * GPU the fastest within 1 point of the best accuracy), the rows whose accuracy fell by more than 1 point against the
 * reference, and a sentence that states the finding with its numbers. Host-only. */
#pragma once
#include "report.h"

#include <stdio.h>

/* Accuracy "held" within this many points (of the reference at the same batch; on one GPU, of the best). */
#define ANSWER_ACC_POINTS 1.0

/* One row: a strategy's runs on a GPU count at a batch, the setting chosen among them. */
typedef struct {
    const study_run_t *run;           /* a run of the chosen setting: strategy, GPUs, batch, math, variant, link */
    const study_run_t *const *u;      /* the chosen setting's runs (its seeds), n of them */
    int n;
    stat_t ips;                 /* images/s over the steady epochs of those runs: median, range, count */
    double speedup, efficiency; /* ips over the reference row's at the same batch and math; NAN without one */
    stat_t acc;                 /* final test accuracy (%) over the seeds */
    double acc_lo, acc_hi;      /* its noise: the seeds' range, or with one seed its last epochs' (study/target.h) */
    double target;              /* the target accuracy (%) its runs were measured to; NAN: none */
    stat_t tt, tt_steps;        /* time to target (training seconds, steps) over the seeds that reached it */
    double dacc;                /* acc.med minus the reference row's (points); NAN without */
    int fell;                   /* not the reference, and its accuracy fell against the reference's at its batch past
                                 * both noises (study_acc_fell): a difference inside them is "within noise" */
    int below;                  /* on one GPU, below the best accuracy of the group's rows on one GPU, past the
                                 * noise */
    const char *status;         /* "ok", or the first other way one of its runs ended */
    int ref;                    /* the reference row at its batch and math (itself for the reference), or -1 */
} answer_row_t;

/* The answer of one model and dataset in one math. */
typedef struct {
    int group;
    const char *math;
    answer_row_t *row;          /* the reference first, then by strategy, GPUs, batch */
    int n;
} answer_table_t;

typedef struct {
    const study_runs_t *s;
    answer_table_t *t;          /* by group, then math in the order a study reads (fp32, tf32, bf16, fp16, others) */
    int n;
    const study_run_t **scratch;      /* the runs the rows point into */
} answer_t;

/* The answer of every group and math of s (the caller frees it with answer_free). */
void answer_make(const study_runs_t *s, answer_t *a);
void answer_free(answer_t *a);
/* The answer's pick on `gpus` GPUs of group g, across its maths (table *ti, row *ri; 0 when there is none). Where
 * its runs have a target accuracy, the row whose every seed reached it soonest (time to target), *alt the row of the
 * most images/s where that is another (the fastest epoch, which is not the fastest trained model). Without a target:
 * on one GPU the fastest row whose accuracy is not below the best past the noise, *alt a faster row below it; on
 * more, the fastest row, *alt (where the pick's accuracy fell) the fastest whose accuracy held. *at, *ar -1 without. */
int answer_fastest(const answer_t *a, int g, int gpus, int *ti, int *ri, int *at, int *ar);

/* The GPU count of group g whose pick (answer_fastest) trains to the target soonest, every seed at it: the count, its
 * median time to target in *tt and global batch in *batch (the fewer GPUs on a tie); 0 where no count has one. */
int answer_soonest_gpus(const answer_t *a, int g, double *tt, int *batch);
/* Where fewer GPUs than `gpus` (the most) trained to the target soonest, the finding's words past which count more
 * stop helping, appended to b; nothing otherwise. */
void answer_stop_helping(bytes_t *b, const answer_t *a, int g, int gpus);

/* The printed answer's width: its table is compact and its lines wrapped to fit (REPORT.md's are not). */
#define ANSWER_TEXT_WIDTH 100
/* Writes the answer of group g: REPORT.md's Markdown (markdown 1) or the default study's text (lines of '#' notes
 * and aligned columns, markdown 0), the same rows and words. */
void answer_write(FILE *f, const answer_t *a, int g, int markdown);
/* The default study's printed answer: `path` read (study_load), every group's answer written as text (on one GPU
 * with the largest batch that fit and, where second_gpu is not NULL, what a second GPU would add), then where the
 * report is. 0, or 2 with the reader's message on stderr. */
int answer_print_csv(FILE *f, const char *path, const strategy_info_t *const *infos, const char *report,
                     const char *second_gpu);

/* A one-GPU study (every run on 1 GPU) asks what one GPU can, per batch and math: one cell per run, as the answer
 * and the report's one-GPU section read it. */
typedef struct {
    const char *math, *status;
    int batch;
    double ips, acc;        /* the median of the steady epochs' throughput (report_run_tput), the final test
                             * accuracy (a fraction); NAN without */
    int tokens;             /* ips is in tokens/s (a language model's run), else images/s */
} answer_cell_t;

#define ANSWER_MAX_MATHS 8

typedef struct {
    int n_math;
    const char *math[ANSWER_MAX_MATHS];     /* in the order the cells have them */
    /* Per math: the largest batch that fit (a run with a steady epoch that did not end oom), and the smallest batch
     * that did not (a run that ended oom, at setup or in an epoch); 0 where there is none. */
    int fit[ANSWER_MAX_MATHS], no_fit[ANSWER_MAX_MATHS];
    /* The cell of the highest throughput among those whose accuracy is within ANSWER_ACC_POINTS of the best cell's
     * (every cell with a throughput where no cell has an accuracy), -1 without one; and the best accuracy. */
    int fastest;
    double best_acc;
    /* Per math, the fastest cell's batch in that math: its cell (-1 for the fastest's own math, or where that math
     * has no throughput at that batch) and how many times slower than the fastest it is. */
    int there[ANSWER_MAX_MATHS];
    double slower[ANSWER_MAX_MATHS];
} answer_one_t;

/* The cells of group g of s (every run on one GPU) into c (room for s->nr); returns how many (one_gpu.c). */
int report_one_gpu_cells(const study_runs_t *s, int g, answer_cell_t *c);
/* The facts of a one-GPU study, computed once for REPORT.md's one-GPU section and the printed answer. */
void answer_one_gpu(const answer_cell_t *c, int n, answer_one_t *o);
/* Writes the fastest cell (o->fastest >= 0), that it is the fastest within ANSWER_ACC_POINTS of the best accuracy,
 * and each other math at its batch ("bf16 at batch 256, 82647 images/s, the fastest within 1 point of the best
 * accuracy (92.0 %); tf32 there: 46872 images/s (1.76× slower)"). */
void answer_one_fastest(FILE *f, const answer_cell_t *c, const answer_one_t *o);
/* Writes the largest batch that fit per math, each after a blank and the maths separated by sep. */
void answer_one_fit(FILE *f, const answer_one_t *o, const char *sep);
/* The cell of math m at batch b with a throughput, or -1. */
int answer_cell_at(const answer_cell_t *c, int n, const char *m, int b);
