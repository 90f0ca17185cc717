/* front.h — what the `scaling` command does before any GPU work, shared by the CUDA build (scaling.c) and the
 * host-only build (scaling_host.c): the strategies' part of --help, the checks of the environment and of every output,
 * the data set, and the line a training command gets where this build has no CUDA. */
#pragma once
#include "options.h"
#include "../engine/idx.h"
#include "../study/paths.h"
#include "../strategies/strategy_info.h"
#include <stdio.h>

/* The end of --help: the registry's strategies (infos, NULL-terminated), one line each, and the default study. */
void front_help(FILE *f, const strategy_info_t *const *infos);
/* The environment's values that runs read: SCALING_FAULT (test-only, engine/fault.h) and the knobs (engine/knob.h),
 * each read where what it configures is made, in every run: refused here, once, before anything runs, rather than
 * failing every configuration in turn. 0, or 2 with a message. */
int front_check_env(char *err, size_t errlen);
/* SCALING_DUMP_PARAMS as a file the command will write (study/paths.h): 1 where set, with *u filled; else 0. */
int front_dump_use(paths_use_t *u);
/* Every file the command will write (study/paths.h): --out, --conv-cache, SCALING_DUMP_PARAMS and each run's --trace
 * file (the runs' names differ from one another by construction, so each is checked against the others only).
 * 0, or 2 with a message. */
int front_check_outputs(const options_t *o, int n_points, char *err, size_t errlen);
/* The data set of --dataset into data (synthetic: generated, no file read). 0, or 2 with a message. */
int front_load_data(const options_t *o, idx_dataset_t *data, char *err, size_t errlen);
/* What a training command gets from the host-only build: one line, no newline. */
#define FRONT_NO_CUDA "this build of scaling has no CUDA (no CUDA toolkit was found when it was configured), so it " \
                      "cannot train: --dry-run, --version, `scaling report` and `scaling tsv` work; build on a " \
                      "machine with the CUDA toolkit, cuDNN and NCCL to train"
