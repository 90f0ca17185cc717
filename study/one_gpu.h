/* one_gpu.h — a study whose runs are all on one GPU asks what one GPU can: per batch and math a cell per run, the
 * fastest within the accuracy's noise (a language model's: its held-out loss's), what the other maths do there and
 * the largest batch that fit. Host-only. */
#pragma once
#include "answer.h"

/* 1 when every run of group g (of every group) is on one GPU: nothing scales, so the report's one-GPU section
 * replaces what scales. */
int study_one_gpu_group(const study_runs_t *s, int g);
int study_one_gpu_study(const study_runs_t *s);

/* One run of a one-GPU study, as the answer and the report's one-GPU section read it. */
typedef struct {
    const char *math, *status;
    int batch;
    double ips, acc;        /* the median of the steady epochs' throughput (study_run_tput), the final test accuracy
                             * (a fraction); NAN without */
    double loss, loss_lo, loss_hi;  /* a language model's final held-out loss (nats) and its noise (the run's last
                                     * epochs', study_loss_spread); NAN without */
    int tokens;             /* ips is in tokens/s (a language model's run), else images/s */
} study_one_cell_t;

#define STUDY_ONE_MAX_MATHS 8

typedef struct {
    int n_math;
    const char *math[STUDY_ONE_MAX_MATHS];  /* in the order the cells have them */
    /* Per math: the largest batch that fit (a run with a steady epoch that did not end oom), and the smallest batch
     * that did not (a run that ended oom, at setup or in an epoch); 0 where there is none. */
    int fit[STUDY_ONE_MAX_MATHS], no_fit[STUDY_ONE_MAX_MATHS];
    /* The cell of the highest throughput among those whose accuracy is within STUDY_ACC_POINTS of the best cell's
     * (study_quality_held; a language model's: whose held-out loss is within the noise of the least; every cell with a
     * throughput where no cell has either), -1 without one; the best quality of the cells' kind (an accuracy as a
     * fraction, or the least held-out loss), NAN: none. */
    int fastest;
    double best;
    /* Per math, the fastest cell's batch in that math: its cell (-1 for the fastest's own math, or where that math
     * has no throughput at that batch) and how many times slower than the fastest it is (NAN without). */
    int there[STUDY_ONE_MAX_MATHS];
    double slower[STUDY_ONE_MAX_MATHS];
} study_one_t;

/* The cells of group g of s (every run on one GPU) into c (room for s->nr); returns how many. */
int study_one_gpu_cells(const study_runs_t *s, int g, study_one_cell_t *c);
/* The facts of a one-GPU study, computed once for REPORT.md's one-GPU section and the printed answer. */
void study_one_gpu(const study_one_cell_t *c, int n, study_one_t *o);
/* A cell's quality of either kind (quality.h): its held-out loss with its noise (lower_is_better), or its accuracy as a
 * fraction (no noise: the accuracy's rule counts points). */
study_quality_t study_one_cell_quality(const study_one_cell_t *c, int lower_is_better);
/* The cell of math m at batch b with a throughput, or -1. */
int study_one_cell_at(const study_one_cell_t *c, int n, const char *m, int b);
