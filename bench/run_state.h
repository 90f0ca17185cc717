/* run_state.h — one run of one sweep point as run.c (the run, its child process, its watchdog) and run_rows.c (its
 * rows other than an epoch's measurements) share it; nothing else includes this header. */
#pragma once
#include "run.h"
#include "faults/watchdog.h"
#include <pthread.h>

/* One run of one sweep point: what its process (the child, or each rank under mpirun/srun) needs. Built by the
 * parent before the fork, so the run_id and the configuration's cells are the same in the child's rows and in a
 * row the parent writes for it. */
typedef struct {
    const options_t *o;
    const strategy_t *st;
    const sweep_point_t *pt;
    const idx_dataset_t *data;
    study_csv_t *res;             /* NULL on ranks other than 0 */
    run_tally_t *sd;
    profile_t *prof;
    const dist_t *dist;
    int devices[OPT_LIST_MAX];
    run_cfg_t cfg;
    study_row_t row;          /* the configuration's cells, nothing measured (study_row_init): each epoch's
                                 * numbers are filled in on a copy, and a fault's row is written from it */
    int k, n_points, is_root;
    double t0;
    void *state;                /* the strategy's, once set up; the watchdog thread uses it under state_lock only,
                                 * and teardown takes it away under that lock first (run_release) */
    pthread_mutex_t state_lock;
    watchdog_t *wd;             /* the run's deadline thread (its child's, or each rank's) */
    int epoch, step;            /* where the run is, for a row written on its behalf */
    setup_count_t setup;        /* where its setup stands (cfg.setup_count points here): the setup's progress lines */
    /* For the progress lines (the watchdog thread reads them under state_lock): the epoch's steps (0 while its
     * events are being recorded anew: epoch_begin), the steps whose train_step returned (their step events are
     * recorded, so the thread queries no event the main thread is recording), the epoch's start on the host's
     * clock, the study's progress when it began, and whether a line on a terminal is still open. */
    int epoch_steps, returned;
    double epoch_t0;
    progress_t prog_at_epoch;
    int line_open;
    char reason[512];
    char last_words[4096];      /* rank 0 under mpirun/srun: run_prepare_last_words */
    int wrote_interrupted;      /* the parent's: the child said it wrote its interrupted row */
    double signal_at;           /* mpirun/srun: when the watchdog first saw a signal (monotonic s), 0 before */
} run_ctx_t;

/* Writes row to res (NULL: this process writes no CSV) and to the table on stdout; a write that fails ends the
 * process after a message (the strategy's state, where not NULL, torn down first). */
void run_write_row(study_csv_t *res, const study_row_t *row, void *state, const strategy_t *st);
/* Ends the progress line open on a terminal, before a line of another kind on stderr. */
void run_say_begin(run_ctx_t *r);
/* The one row of a run that did not finish (status, reason, at `epoch`, 0: setup), and its line on stderr. */
void run_write_fault_row(run_ctx_t *r, study_status_t status, const char *reason, int epoch, double free_mb,
                         double total_mb);
/* Device memory now, in MiB, on the run's first GPU (-1 where it cannot be read). */
void run_mem_now(const run_ctx_t *r, double *free_mb, double *total_mb);
/* Under mpirun/srun, a rank other than 0's row of a fault, appended to --out where this rank reaches it. */
void run_dist_row_from_rank(run_ctx_t *r, study_status_t status, const char *reason);
/* check_on_fail's hook under mpirun/srun (ctx: the run_ctx_t): the failing rank's row before the job ends. */
void run_dist_fail_hook(const char *reason, void *ctx);
/* Rank 0's interrupted row at `epoch`, prepared for the signal handler under mpirun/srun. */
void run_prepare_last_words(run_ctx_t *r, int epoch);
