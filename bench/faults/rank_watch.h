/* rank_watch.h — under mpirun/srun, a rank's deadline outside its runs, from MPI's start to its end: every phase that
 * waits on the other ranks or on a file system or a device (the option and data agreements, data loading, device
 * selection, the CSV, the per-run broadcasts, the final barrier) has the --timeout deadline, and past it this rank
 * says which phase it was in and ends every rank (MPI_Abort). A run's own watchdog (run.c) holds the deadline while
 * the run goes on. Nothing is written: no configuration is running between runs, so no row is lost. */
#pragma once
#include "watchdog.h"
#include "../../strategies/dist.h"

typedef struct {
    watchdog_t wd;
    const dist_t *dist;
    int local;                  /* atomically: 1 while the phase waits on this rank alone (its files, its GPU) */
} rank_watch_t;

/* Starts the thread for dist (NULL: one process, nothing to watch; w is then inert), with the default --timeout
 * until rank_watch_timeout, in the phase "the start-up". 0, or -1 when the thread cannot be made (said on stderr). */
int rank_watch_start(rank_watch_t *w, const dist_t *dist);
/* The phase from now on, its deadline starting now: `phase` names it ("data loading", a literal); local 1 where this
 * rank waits on nothing but itself (a file system, its GPU), 0 for a collective. NULL phase: no deadline (a run).
 * NULL w, or one never started: nothing. */
void rank_watch_phase(rank_watch_t *w, const char *phase, int local);
/* The deadline (--timeout, once parsed). */
void rank_watch_timeout(rank_watch_t *w, double timeout_s);
/* Stops the thread (after the final barrier). */
void rank_watch_stop(rank_watch_t *w);
