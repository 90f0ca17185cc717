/* run_config.h — a sweep point's configuration as its rows and --resume see it, before anything runs: host-only, so
 * the run (run.c) and the dry run of either build (dry_run.c) make it alike. */
#pragma once
#include "options.h"
#include "sweep.h"
#include "../study/key.h"
#include "../study/schema.h"
#include "../engine/idx.h"
#include "../strategies/strategy_info.h"
#include "../strategies/dist.h"

/* The cells of sweep point pt's configuration with strategy info as its rows will have them (no run id, nothing
 * measured); dist NULL: one process. */
void run_row_of(const options_t *o, const strategy_info_t *info, const sweep_point_t *pt, const study_env_t *env,
                const dist_t *dist, study_row_t *row);
/* Its configuration (study/key.h) as --resume and the dry run look it up: row's cells with the steps per epoch of data
 * and the pipeline's and the copy path's cells known before the run. */
void run_key_of(const options_t *o, const strategy_info_t *info, const sweep_point_t *pt, const idx_dataset_t *data,
                const study_row_t *row, study_key_t *key);
