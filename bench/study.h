/* study.h — what a study's rows mean, defined once for --resume (results.c), the default study's answer (answer.c)
 * and the report (report/): a configuration, when a run of it is complete, which run stands for it, a steady median
 * and T1. Host-only. */
#pragma once
#include "results.h"
#include "study_progress.h"

/* A configuration is the key columns of results.h (results_key_columns). Two keys are one configuration when every
 * cell is equal, except that an empty grad_dtype, micro_batches, schedule, steps or nccl_algo cell (in either key)
 * matches any value: strategies without a gradient reduction leave grad_dtype empty, data-parallel rows the
 * pipeline columns, and a setup-failure row has no steps or algorithm yet. */
int study_key_wildcard(int column);
int study_key_match(const results_key_t *a, const results_key_t *b);
/* Fills the empty cells of into from k (after study_key_match(into, k)): a configuration's key keeps the most
 * specific cells its runs wrote, so a later run matches it by what it knows. */
void study_key_merge(results_key_t *into, const results_key_t *k);

void study_progress_init(study_progress_t *p);
/* Adds one row of the run, in file order. */
void study_progress_add(study_progress_t *p, int epoch, const char *status);

/* 1 when the run needs no re-run for a study of `epochs` epochs: it trained them all, or it ended diverged or oom
 * (re-running would repeat it). A run that faulted (a row failed, timeout or replicas-differ) counts as complete only
 * without retry_failed; any other end (killed part-way: its last row ok short of `epochs`, or interrupted) is not
 * complete. The report shows study_pick's run; --resume's decision is results_scan_done's (results.h). */
int study_complete(const study_progress_t *p, int epochs, int retry_failed);

/* The run that stands for a configuration, among its n runs p[0..n-1] in the order they started: the latest of
 * those complete (retry_failed: failures are not) for the most epochs any of them trained, so a run killed part-way
 * gives way to the run --resume made and a setup failure to its successful retry; without one, the latest that
 * trained the most epochs. -1 for n = 0. */
int study_pick(const study_progress_t *const *p, int n);

/* The median of x[0..n-1] (reorders x); NAN for n = 0. A run's steady median is this over its steady epochs. */
double study_median(double *x, int n);

/* A row of the pipeline (its line is the global batch: every stage sees all of it) rather than of a replica. */
int study_is_pipeline(const char *strategy, int micro_batches);
/* The batch a run's line stands at: per GPU for single and the data-parallel strategies (weak scaling), global for
 * the pipeline. */
int study_line_batch(int pipeline, int per_gpu_batch, int global_batch);

/* T1 of a (model and dataset, batch, math): the fastest steady median among the strategy single's runs there.
 * study_t1_offer keeps the fastest run offered; t is NAN and run -1 until one is. */
typedef struct {
    double t;
    int run;
} study_t1_t;

void study_t1_init(study_t1_t *t1);
/* Offers run `run` of `strategy` with steady median t (NAN: none): kept when it is single's and faster. */
void study_t1_offer(study_t1_t *t1, const char *strategy, int run, double t);
/* The reference strategy of every speedup. */
int study_is_reference(const char *strategy);
