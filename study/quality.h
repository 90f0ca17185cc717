/* quality.h — what a trained model is judged by, defined once: its quality (a language model's final held-out loss,
 * lower is better; else its final test accuracy) with its noise; the rules "better", "held", "fell". Host-only. */
#pragma once
#include "stat.h"

/* Accuracy "held" within this many points (of the reference at the same batch; on one GPU, of the best). */
#define STUDY_ACC_POINTS 1.0

/* A quality over seeds (or of one run or cell), either kind: the answer's rows, its settings and a one-GPU study's
 * cells are weighed by the rules below, which read the direction and the kind's threshold from it. */
typedef struct {
    study_stat_t st;        /* the value over the seeds: median, range, count (NAN, 0: none) */
    double lo, hi;          /* its noise, lo <= hi: the seeds' range, or with one seed its last epochs' (target.h);
                             * NAN where not known */
    int lower_is_better;    /* 1: a language model's held-out loss (nats), "held" while its noise reaches the best's;
                             * 0: an accuracy, "held" within STUDY_ACC_POINTS of the best */
    double unit;            /* an accuracy's scale: 1 in %, 0.01 as a fraction (a point is STUDY_ACC_POINTS * unit) */
} study_quality_t;

/* The quality of runs u[0..n) (the seeds of one setting) of either kind: the median of their final accuracies (%)
 * or held-out losses, and its noise (the seeds' range, or one seed's last epochs'). */
study_quality_t study_quality_runs(const study_run_t *const *u, int n, int lower_is_better);

/* 1 when a has a value and is better than b (b NULL: there is none yet); ties are not better. */
int study_quality_better(const study_quality_t *a, const study_quality_t *b);
/* 1 when b fell against a past the noise of both: b's whole interval on the worse side of a's (an accuracy's below,
 * a held-out loss's above); 0 where they overlap ("within noise") or either is missing. */
int study_quality_fell(const study_quality_t *a, const study_quality_t *b);
/* 1 when q held against the best of its kind (best NULL, or without a value: held): an accuracy within
 * STUDY_ACC_POINTS of the best's median; a held-out loss, which has no points to count, not risen past the noise of
 * both (study_quality_fell). A missing q is not held. */
int study_quality_held(const study_quality_t *q, const study_quality_t *best);

/* The best of some qualities of one kind: the settings of an answer's row, the cells of a one-GPU study, each one
 * group's runs, whose kind is the group's (table.c). Zero-initialised: none yet. */
typedef struct {
    study_quality_t best;
    int got;
} study_quality_best_t;
void study_quality_best_add(study_quality_best_t *b, const study_quality_t *q);
/* The best, NULL for none. */
const study_quality_t *study_quality_best(const study_quality_best_t *b);
