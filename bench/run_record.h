/* run_record.h — what a run records besides its rows: the profiler range (SCALING_PROFILE_STEPS), the --trace
 * timeline, the parameter dump (SCALING_DUMP_PARAMS), and the clock and stamps of rows and progress lines. */
#pragma once
#include "run.h"
#include "../engine/trace.h"

/* --trace: TRACE_STEPS steps from the middle of epoch 2 (epoch 1 with --epochs 1) are recorded per run. */
#define TRACE_STEPS 5

void utc_stamp(char *buf, size_t len, const char *fmt);
void profile_before_step(profile_t *p, int epoch, int step);
/* After step `step` (last: the epoch's last): closes the range after K steps, every GPU of cfg synchronised. */
void profile_after_step(profile_t *p, int step, int last, const run_cfg_t *cfg);
/* Writes SCALING_DUMP_PARAMS where set (rank 0 only). */
void dump_params(const strategy_t *st, void *state, const dist_t *dist);
/* Writes the recorded timeline after an epoch; with several runs the file name gets "-run<N>" before its extension. */
void trace_after_epoch(trace_t *tr, const options_t *o, const sweep_point_t *pt, int n_points, const char *strategy,
                       int is_root);
