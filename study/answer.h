/* answer.h — which runs a study's answer reports and what it computes of them: per model and math a row per row key,
 * its setting, its statistics against the reference, the pick per GPU count (report/answer.h: the words). Host-only. */
#pragma once
#include "quality.h"
#include "config.h"

/* One row: a strategy's runs on a GPU count at a batch, the setting chosen among them: the soonest to the target
 * where one was set (every seed reached it), else the fastest whose quality held against the best setting's
 * (study_quality_held: within STUDY_ACC_POINTS of the best accuracy; a held-out loss within the noise of the best). */
typedef struct {
    const study_run_t *run;             /* a run of the chosen setting: strategy, GPUs, batch, math, variant, link */
    const study_run_t *const *u;        /* the chosen setting's runs (its seeds), n of them */
    int n;
    study_stat_t ips;                   /* images/s over the steady epochs of those runs: median, range, count */
    double speedup, efficiency;         /* ips over the reference row's at the same batch and math; NAN without one */
    study_stat_t acc;                   /* final test accuracy (%) over the seeds */
    double acc_lo, acc_hi;              /* its noise: the seeds' range, or with one seed its last epochs' (target.h) */
    double target;                      /* the target accuracy (%) its runs were measured to; NAN: none */
    study_stat_t tt, tt_steps;          /* time to target (training seconds, steps) over the seeds that reached it */
    double dacc;                        /* acc.med minus the reference row's (points); NAN without */
    study_stat_t loss;                  /* a language model's final held-out loss (nats) over the seeds */
    double loss_lo, loss_hi;            /* its noise, as acc_lo and acc_hi are the accuracy's */
    double dloss;                       /* loss.med minus the reference row's; NAN without */
    int fell;                           /* not the reference, and its accuracy fell against the reference's at its
                                         * batch past both noises (study_quality_fell; a language model's: its
                                         * held-out loss rose): a difference inside them is "within noise" */
    int below;                          /* on one GPU, below the best accuracy (above the best held-out loss) of the
                                         * group's rows on one GPU, past the noise */
    const char *status;                 /* "ok", or the first other way one of its runs ended */
    int ref;                            /* the reference row at its batch and math (itself for the reference), or -1 */
} study_answer_row_t;

/* The answer of one model and dataset in one math. */
typedef struct {
    int group;
    const char *math;
    study_answer_row_t *row;            /* the reference first, then by strategy, GPUs, batch */
    int n;
} study_answer_table_t;

typedef struct {
    const study_runs_t *s;
    study_answer_table_t *t;            /* by group, then math in the order a study reads (fp32, tf32, bf16, fp16,
                                         * others) */
    int n;
    const study_run_t **scratch;        /* the runs the rows point into */
} study_answer_t;

/* A row's quality of either kind (quality.h): its held-out loss (lower_is_better) or its accuracy (%), each with its
 * noise; and that quality's change against the reference row's (dloss or dacc). */
study_quality_t study_answer_quality(const study_answer_row_t *w, int lower_is_better);
double study_answer_change(const study_answer_row_t *w, int lower_is_better);

/* The answer of every group and math of s (the caller frees it with study_answer_free). */
void study_answer_make(const study_runs_t *s, study_answer_t *a);
void study_answer_free(study_answer_t *a);
/* 1 when a row's runs were measured to a target. */
int study_answer_has_target(const study_answer_row_t *w);
/* Whether group g's rows on `gpus` GPUs were measured to a target: the answer is then the soonest to it. */
int study_answer_target_mode(const study_answer_t *a, int g, int gpus);
/* The answer's pick on `gpus` GPUs of group g, across its maths (table *ti, row *ri; 0 when there is none). Where
 * its runs have a target accuracy, the row whose every seed reached it soonest (time to target), *alt the row of the
 * most images/s where that is another (the fastest epoch, which is not the fastest trained model). Without a target:
 * on one GPU the fastest row whose accuracy is not below the best past the noise (held-out loss not above), *alt a
 * faster row below it; on more, the fastest row, *alt (where the pick's accuracy fell) the fastest whose accuracy
 * held. *at, *ar -1 without. */
int study_answer_fastest(const study_answer_t *a, int g, int gpus, int *ti, int *ri, int *at, int *ar);
/* The GPU count of group g whose pick (study_answer_fastest) trains to the target soonest, every seed at it: the
 * count, its median time to target in *tt and global batch in *batch (the fewer GPUs on a tie); 0 where no count has
 * one. */
int study_answer_soonest_gpus(const study_answer_t *a, int g, double *tt, int *batch);
