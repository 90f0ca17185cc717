/* default_study.h — `./scaling` with no options: the default study's set-up and close around scaling.c's sweeps.
 * Set-up checks everything (a GPU, the plan, every sweep) before it creates the fresh folder and its CSV; the close
 * runs `scaling report` on the CSV and prints the answer from the rows the study wrote. */
#pragma once
#include "default_plan.h"
#include "../sweep.h"
#include "../../study/writer.h"

#include <stdio.h>

#define DEFAULT_STUDY_MAX_STRATEGIES 64

typedef struct {
    default_plan_t plan;
    idx_dataset_t data;                         /* the plan's data set, loaded once for every sweep */
    sweep_point_t *pts[PLAN_MAX_SWEEPS];        /* each sweep's runs */
    int n_pts[PLAN_MAX_SWEEPS];
    int runs;                                   /* over every sweep */
    long epochs;
    study_csv_t res;                              /* plan.csv, open */
    char second_gpu[512];                       /* what a second GPU would add (one GPU: the answer says it) */
    const strategy_info_t *infos[DEFAULT_STUDY_MAX_STRATEGIES];     /* the registry's, NULL-terminated */
} default_study_t;

/* Plans the study for n_dev GPUs (the caller counted them), validates and expands every sweep, then creates the
 * folder and opens its CSV and prints what will run. 0, or 2 with a one-line message in err and nothing created. */
int default_study_begin(default_study_t *ds, int n_dev, char *err, size_t errlen);
/* Prints sweep i (of n) as the command that runs it alone. */
void default_study_announce(const default_study_t *ds, int i, FILE *f);
/* Closes the CSV, runs `scaling report` into the folder, prints the answer (report/answer.h: the CSV read back, the
 * same table as REPORT.md's) and frees ds. 0; 1 when the report
 * failed (said on stderr, with the command that makes it again; the CSV is complete either way). */
int default_study_end(default_study_t *ds);
