/* dry_run.h — `scaling --dry-run`: what a sweep would run, without running it: its points after the scaling rules and,
 * from --out's earlier rows of the same configurations, the time their epochs took. Nothing written, no GPU. */
#pragma once
#include "run_config.h"

#include <stdio.h>

/* The n points of o's sweep with strategy info on data, one line each (GPUs, global and per-GPU batch, lr, math,
 * gradient dtype, micro-batches, seed, steps per epoch, the estimate or "skipped by --resume"), then their count and
 * the sum of the estimates. An estimate is the median warm-up epoch plus (epochs - 1) median steady epochs of the
 * configuration's ok rows in --out (CUDA-event time: setup and evaluation are not in it). Returns 0. */
int dry_run_print(const options_t *o, const strategy_info_t *info, const sweep_point_t *pts, int n,
                  const idx_dataset_t *data, const study_env_t *env, FILE *f);
