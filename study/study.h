/* study.h — what a study's rows mean, defined once for --resume (runs.c), the default study's answer (answer.c)
 * and the report (report/): how far a run got, when it is complete, which run stands for a
 * configuration (key.h), a steady median and T1. Host-only. */
#pragma once
#include "../strategies/strategy_info.h"

/* What a run's rows say about how far it got: the part of a run that the runs' scan (runs.h) keeps and "complete"
 * reads. */
typedef struct {
    int epochs;      /* highest epoch written with a measured status (ok, diverged, oom): what it trained */
    int last_epoch;  /* highest epoch of any row (-1: no row) */
    char status[32]; /* the status of its last row (highest epoch; the later row on a tie) */
    int faulted;     /* 1: a row of it is failed, timeout or replicas-differ (under mpirun a failing rank's failed
                      * row may be followed by rank 0's interrupted one, so not only the last row tells) */
    char fault[32];  /* the first such row's status, when faulted */
} study_progress_t;

void study_progress_init(study_progress_t *p);
/* Adds one row of the run, in file order. */
void study_progress_add(study_progress_t *p, int epoch, const char *status);
/* How the run ended, for tables: its last row's status, or its fault where an interrupted row followed one (rank 0's
 * after a failing rank's, under mpirun). */
const char *study_verdict(const study_progress_t *p);
/* 1 for a status that says the run itself failed: failed, timeout, replicas-differ (a fault, not a measurement). */
int study_is_fault(const char *status);

/* 1 when the run needs no re-run for a study of `epochs` epochs: it trained them all, or it ended diverged or oom
 * (re-running would repeat it). A run that faulted (a row failed, timeout or replicas-differ) counts as complete only
 * without retry_failed; any other end (killed part-way: its last row ok short of `epochs`, or interrupted) is not
 * complete. The report shows study_pick's run; --resume's decision is study_scan_done's (runs.h). */
int study_complete(const study_progress_t *p, int epochs, int retry_failed);

/* The run that stands for a configuration, among its n runs p[0..n-1] in the order they started: the latest of
 * those complete (retry_failed: failures are not) for the most epochs any of them trained, so a run killed part-way
 * gives way to the run --resume made and a setup failure to its successful retry; without one, the latest that
 * trained the most epochs. -1 for n = 0. */
int study_pick(const study_progress_t *const *p, int n);

/* The median of x[0..n-1] (reorders x); NAN for n = 0. A run's steady median is this over its steady epochs. */
double study_median(double *x, int n);

/* What a row's strategy is, asked of its properties (strategy_info.h): info is the strategy's entry in the
 * registry's table, or NULL for a strategy this binary does not know (an older or foreign CSV), which has no
 * property: it is not the reference, and it is a pipeline only where its micro_batches cell (> 0) says so.
 *
 * study_is_pipeline: a row of a staged strategy (a pipeline: every stage sees the whole batch) rather than of a
 * replica. */
int study_is_pipeline(const strategy_info_t *info, int micro_batches);
/* 1 when its line and its T1 stand at the global batch (t1_global_batch), 0 at the per-GPU batch (weak scaling). */
int study_t1_global(const strategy_info_t *info, int micro_batches);
/* The batch a run's line stands at: global_batch where global (study_t1_global), else per_gpu_batch. */
int study_line_batch(int global, int per_gpu_batch, int global_batch);
/* The reference strategy of every speedup (T1's). */
int study_is_reference(const strategy_info_t *info);

/* T1 of a (model and dataset, batch, math): the fastest steady median among the reference strategy's runs there.
 * study_t1_offer keeps the fastest run offered; t is NAN and run -1 until one is. */
typedef struct {
    double t;
    int run;
} study_t1_t;

void study_t1_init(study_t1_t *t1);
/* Offers run `run` of the strategy info (NULL: unknown) with steady median t (NAN: none): kept when it is the
 * reference's and faster. */
void study_t1_offer(study_t1_t *t1, const strategy_info_t *info, int run, double t);
