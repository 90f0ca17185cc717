/* run_rows.c — a run's rows other than an epoch's measurements: the configuration's cells and key, and the one row of
 * a run that did not finish (from the run, from another rank, from a CHECK_* failure, for the launcher's signal). */
#include "run_state.h"
#include "table.h"
#include "faults/isolate.h"
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* res NULL: this process writes no CSV (ranks other than 0 under mpirun/srun). */
void run_write_row(study_csv_t *res, const study_row_t *row, void *state, const strategy_t *st) {
    char err[512];
    if (res && study_write(res, row, err, sizeof err) != 0) {
        fprintf(stderr, "scaling: error: %s\n", err);
        if (state) st->teardown(state);
        exit(1);
    }
    table_row(stdout, row);
    fflush(stdout);
}

/* A line on stderr from the run's root process: on a terminal the progress line is rewritten in place, so a line of
 * another kind first ends it. */
void run_say_begin(run_ctx_t *r) {
    if (__atomic_exchange_n(&r->line_open, 0, __ATOMIC_ACQ_REL)) fputs("\r\033[K", stderr);
}

/* The one row of a run that did not finish: status (oom, failed, timeout, interrupted) and a one-line reason, at
 * `epoch` (0: setup), every measurement empty. Also the line on stderr. */
void run_write_fault_row(run_ctx_t *r, study_status_t status, const char *reason, int epoch, double free_mb,
                            double total_mb) {
    study_row_t row = r->row;
    row.epoch = epoch;
    row.phase = study_phase(epoch);
    row.status = study_status_name(status);
    row.reason = reason;
    row.mem_free_mb = total_mb > 0 ? free_mb : -1;     /* only a fault that measured the memory has these cells */
    row.mem_total_mb = total_mb > 0 ? total_mb : -1;
    if (r->st->info->staged) {  /* fault rows name the stages too, so --resume can tell the micro-batch counts apart */
        row.stats.stages = r->pt->gpus;
        row.stats.micro_batches = r->pt->micro_batches > 0 ? r->pt->micro_batches : -1;   /* auto: not yet picked */
        snprintf(row.stats.schedule, sizeof row.stats.schedule, "%s", r->o->schedule);
    }
    study_stamp(&row);
    if (r->is_root) run_say_begin(r);
    if (r->is_root)
        fprintf(stderr, "scaling: run %d/%d (%s, %d GPUs, batch %d, math %s): %s%s: %s\n", r->k, r->n_points,
                r->st->info->name, r->pt->gpus, r->pt->global_batch, math_name(r->pt->math), row.status,
                epoch ? "" : " at setup", reason);
    run_write_row(r->res, &row, NULL, r->st);
}

/* Device memory now, in MiB, on the run's first GPU (-1 where it cannot be read). */
void run_mem_now(const run_ctx_t *r, double *free_mb, double *total_mb) {
    size_t f = 0, t = 0;
    *free_mb = *total_mb = -1;
    if (cudaSetDevice(r->devices[0]) == cudaSuccess && cudaMemGetInfo(&f, &t) == cudaSuccess)
        *free_mb = f / 1048576.0, *total_mb = t / 1048576.0;
}

/* Under mpirun/srun the row of a fault seen by a rank other than 0, which is about to end the job: appended to --out
 * where that file is reachable from this rank (a shared file system, as a cluster's submit folder is). */
void run_dist_row_from_rank(run_ctx_t *r, study_status_t status, const char *reason) {
    char err[512];
    study_csv_t own = {0};
    if (access(r->o->out, F_OK) != 0 || study_open(&own, r->o->out, err, sizeof err) != 0) return;
    r->res = &own;
    run_write_fault_row(r, status, reason, r->epoch, -1, -1);
    r->res = NULL;
    study_close(&own);
}

/* Under mpirun/srun a CHECK_* failure ends the job (MPI_Abort at exit), so the failing rank leaves the row first. */
void run_dist_fail_hook(const char *reason, void *ctx) {
    run_ctx_t *r = ctx;
    char why[700];
    snprintf(why, sizeof why, "rank %d on %s: %s", r->dist->rank, r->dist->host, reason);
    fprintf(stderr, "scaling: %s; ending every rank\n", why);
    isolate_last_words(-1, NULL, 0);
    study_status_t status = strstr(reason, "out of memory") ? RUN_OOM : RUN_FAILED;
    if (r->is_root) run_write_fault_row(r, status, why, r->epoch, -1, -1);
    else run_dist_row_from_rank(r, status, why);
}

/* Rank 0's row for a job the launcher ends with SIGTERM (a rank died, or the job was cancelled or ran out of time),
 * prepared before each epoch for the signal handler to write at once (isolate_last_words). */
void run_prepare_last_words(run_ctx_t *r, int epoch) {
    if (!r->dist || !r->is_root || !r->res || !r->res->f) return;
    study_row_t row = r->row;
    row.epoch = epoch;
    row.phase = study_phase(epoch);
    row.status = study_status_name(RUN_INTERRUPTED);
    row.reason = "SIGTERM/SIGINT from the launcher on rank 0 (a rank died, or the job was cancelled or timed out)";
    study_stamp(&row);
    isolate_last_words(-1, NULL, 0);
    int n = study_format(&row, r->last_words, sizeof r->last_words - 1);
    if (n <= 0) return;
    r->last_words[n] = '\n';
    isolate_last_words(fileno(r->res->f), r->last_words, (size_t)n + 1);
}
