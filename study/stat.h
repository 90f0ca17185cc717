/* stat.h — the statistics the answer and the report take over a study's runs (table.h): the median and range of a
 * number over seeds or runs, or over the steady epochs of runs, and each run's numbers as they read them. Host-only. */
#pragma once
#include "table.h"

/* A statistic over seeds (or runs): the median and the range of n values (NAN, NAN, NAN and 0 for none). */
typedef struct {
    double med, min, max;
    int n;
} study_stat_t;

/* Of x[0..n) (NAN values left out; x is reordered). */
study_stat_t study_stat_of(double *x, int n);
/* Of a number of each run (NAN: none): f(run). */
study_stat_t study_stat_runs(const study_run_t *const *u, int n, double (*f)(const study_run_t *));
/* Of number column c over the steady rows of runs u[0..n) (value >= 0): every epoch of every seed. */
study_stat_t study_stat_steady(const study_run_t *const *u, int n, study_col_t c);

/* Numbers of a run, for study_stat_runs: its steady medians, its final test accuracy (%). */
double study_run_epoch_s(const study_run_t *r);
/* Its throughput in its unit: tokens/s for a language model's run, else images/s (study_run_tput_col). */
double study_run_tput(const study_run_t *r);
double study_run_step_ms(const study_run_t *r);
double study_run_facc(const study_run_t *r);
/* Its final held-out loss (a language model's, nats), NAN without. */
double study_run_floss(const study_run_t *r);
/* Of runs u[0..n), the one of median epoch time (the lower middle of an even count) over those timed; NULL for none.
 * The run whose per-step cells a table shows for them. */
const study_run_t *study_median_run(const study_run_t *const *u, int n);
/* Its time to target in training seconds, and in steps; NAN where it did not reach the target (or has none). */
double study_run_tt_s(const study_run_t *r);
double study_run_tt_steps(const study_run_t *r);
