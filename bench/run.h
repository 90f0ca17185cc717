/* run.h — one sweep point run to its rows: its configuration, the child process it runs in (one process drives
 * the GPUs) or the watchdog it runs under (one process per GPU), the rows of every way it can end (doc/faults.md). */
#pragma once
#include "options.h"
#include "sweep.h"
#include "../study/writer.h"
#include "../study/runs.h"
#include "progress.h"
#include "faults/rank_watch.h"
#include "../engine/idx.h"
#include "../strategies/strategy.h"
#include "../strategies/dist.h"
#include "run_config.h"

/* SCALING_PROFILE_STEPS=K (scripts/profile.sh): the profiler range opens at step 0 of epoch 2 (the first steady
 * epoch) of the first run and closes after K steps, so `nsys --capture-range=cudaProfilerApi` records K steady
 * steps and no setup, warmup or evaluation. */
typedef struct {
    int steps;          /* K; 0: not profiling */
    int state;          /* 0 waiting, 1 capturing, 2 done */
} profile_t;
/* Reads SCALING_PROFILE_STEPS (engine/knob.h). */
void profile_init(profile_t *p);

/* How a sweep point ended: a study_status_t (study/schema.h; its rows' status), or skipped by --resume. Diverged and
 * oom are results (recorded, the sweep goes on); failed and timeout are faults of that configuration (recorded, the
 * sweep goes on; replicas-differ rows end a run as failed); interrupted ends the sweep (SIGINT/SIGTERM). */
enum { RUN_SKIPPED = RUN_STATUSES, RUN_OUTCOMES };

/* The tally of the runs of one command over its sweeps (one, or the default study's several): the run count and ETA
 * over all of them, and how the runs ended. */
typedef struct {
    progress_t prog;
    int outcomes[RUN_OUTCOMES];
    rank_watch_t *watch;        /* under mpirun/srun: the deadline between runs, paused while a run's own holds */
    int gpu_held;               /* a run's process outlived its SIGKILL: its GPU may still be held, the sweep stops */
} run_tally_t;

/* Runs one sweep point (o's strategy st) and writes its rows to res (NULL on ranks other than 0 under mpirun/srun).
 * With --resume (done != NULL) a configuration already complete, or faulted, in the CSV is skipped. Returns a RUN_*
 * outcome. */
int run_point(const options_t *o, const strategy_t *st, const sweep_point_t *pt, const idx_dataset_t *data,
              study_csv_t *res, const study_env_t *env, run_tally_t *sd, const study_scan_t *done, profile_t *prof,
              const dist_t *dist);
/* Monotonic wall-clock seconds. */
double wall_now(void);
