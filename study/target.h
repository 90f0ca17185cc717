/* target.h — what a run's accuracy says, defined once for the run's summary line, the answer and the report: its time
 * to a target accuracy (training time and steps to the first epoch that reaches it, evaluation apart), the noise of
 * its accuracy (a language model's: its held-out loss), and its gradient noise scale. Host-only. */
#pragma once
#include "schema.h"

/* A run's time to target. Training time is the sum of its epochs' epoch_s (CUDA events around the steps: evaluation
 * is not in it) through the first epoch whose test accuracy reaches the target, the first epoch's algorithm search
 * and graph capture included: they are part of training a model. */
typedef struct {
    double target;      /* the fraction aimed at (the rows' target_acc); NAN: none (synthetic data) */
    int reached;        /* 1: an epoch reached it */
    int epoch;          /* the first epoch that did; where none did, the last epoch run */
    double train_s;     /* training seconds through `epoch` */
    double steps;       /* optimizer steps through it */
    double images;      /* images trained on through it (steps x global batch): McCandlish et al.'s E */
    double eval_s;      /* evaluation seconds through it, apart from training (NAN where not recorded) */
} study_target_t;

/* The time to target of one run from its rows (any order; rows of other statuses than ok, and setup rows, end the
 * count: a diverged epoch reaches nothing). target <= 0 or NAN: the rows' own target_acc. 1 reached, 0 not (or
 * no target: t->target NAN). */
int study_time_to_target(const study_row_t *const *rows, int n, double target, study_target_t *t);

/* How far apart a run's last k epochs' test accuracies lie (fractions, *lo <= *hi): the noise of its accuracy where
 * only one seed ran. NAN without an accuracy. */
void study_acc_spread(const study_row_t *const *rows, int n, int k, double *lo, double *hi);
/* The same of its held-out losses (test_loss, nats): a language model's seed's noise, in place of its accuracy's. */
void study_loss_spread(const study_row_t *const *rows, int n, int k, double *lo, double *hi);
/* Whether two runs (a row of each) trained to one recipe: optimizer, learning-rate schedule and warm-up; < 0, 0, > 0
 * as strcmp (an older CSV's empty cells are equal). The answer's reference of a row and the batch curves share it. */
int study_cmp_recipe(const study_row_t *a, const study_row_t *b);

/* The epochs of the spread a one-seed run's accuracy or loss is judged with (study_acc_spread, study_loss_spread). */
#define STUDY_SPREAD_EPOCHS 3

/* A run's gradient noise scale (engine/gns.h) over its epochs: the means of its epochs' gns_small_sq and gns_big_sq,
 * weighted alike, into one estimate; B_simple in *b_simple (NAN where not measured). Epochs that did not end ok or
 * whose norms are not finite are left out. 0, or -1 without one. */
int study_noise_scale(const study_row_t *const *rows, int n, double *g2, double *trace, double *b_simple);
