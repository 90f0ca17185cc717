/* progress.h — where a study stands: which run of how many overall, and the ETA over every run still to come, from
 * the wall time its setups and epochs have taken so far (one sweep or the default study's several); and the lines
 * that say so on stderr about every 10 s inside a long epoch or a long setup. Host-only. */
#pragma once
#include "../engine/setup_count.h"
#include <stddef.h>

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

#define PROGRESS_EVERY_S 10     /* a line inside an epoch or a setup this often: a Slurm log is never silent longer */

/* Where an epoch stands, for its progress line: the steps launched on the host and those the GPUs have finished
 * (done, in gpu_ms of GPU time since the epoch's start; done < 0: not known, the host's count and clock then stand
 * in: host_s since the epoch's start). */
typedef struct {
    int run, runs, epoch, epochs;
    int launched, done, steps;  /* steps of this epoch */
    double gpu_ms, host_s;
    int global_batch;
} progress_step_t;

/* "[run 2/8  epoch 3/5] step 1200/5004  8123 images/s  epoch ETA 1m33s  study ETA 12m05s": images/s from the GPUs'
 * finished steps and their GPU time (from the host's launched steps and clock where those are not known, said as
 * "launched"), the epoch's ETA at that pace, the study's from p (what is left of its epochs and setups, this epoch's
 * pace standing in before an epoch has been timed). */
void progress_step_line(char *buf, size_t len, const progress_t *p, const progress_step_t *s);
/* "[run 2/8] setup 25 s: 61 of 106 layers set up on 2 of 2 GPUs, 12 convolution searches": a long setup (the cuDNN
 * algorithm search) is not silent either. now: where the setup stands (engine/setup_count.h; NULL, or no layer begun:
 * the seconds alone); its total covers the GPUs begun so far, so "on k of gpus GPUs" says how much of the process's
 * setup it covers (not said for one GPU); batch-norm searches are said where there were some. */
void progress_setup_line(char *buf, size_t len, int run, int runs, double seconds, int gpus,
                         const setup_count_now_t *now);
/* "42s", "3m07s", "1h05m"; "?" when unknown. */
void progress_duration(char *buf, size_t len, double s);
