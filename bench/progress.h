/* progress.h — where a study stands: which run of how many overall, and the ETA over every run still to come, from
 * the wall time its setups and epochs have taken so far. One sweep or the default study's several. Host-only. */
#pragma once

typedef struct {
    int runs;               /* runs in the study */
    int run;                /* the run under way, 1-based; 0 before the first */
    long epochs_left;       /* epochs still to run, over the study */
    int setups_left;        /* runs whose setup is still to come */
    int setups, epochs;     /* timed so far */
    double setup_s, epoch_s;/* their wall time */
} progress_t;

void progress_init(progress_t *p, int runs, long epochs);
/* The next run begins; returns its number (1-based). */
int progress_next_run(progress_t *p);
void progress_setup_done(progress_t *p, double seconds);
void progress_epoch_done(progress_t *p, double seconds);
/* A run that will not spend `epochs` of its epochs (skipped by --resume, failed setup, diverged early); setup: 1 when
 * its setup will not run either. */
void progress_drop(progress_t *p, int epochs, int setup);
/* Seconds until the study ends: the epochs left at the mean epoch so far plus the setups left at the mean setup;
 * < 0 until an epoch has been timed. */
double progress_eta(const progress_t *p);
