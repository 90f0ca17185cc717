/* default_study.c — the default study around its sweeps: a GPU count and a plan, every sweep validated before a
 * folder exists, then at the end `scaling report` (the binary itself, in a child process) and
 * the answer, printed from the rows in memory, so a report that fails costs neither rows nor answer. */
#include "default_study.h"
#include "../report_run.h"
#include "../../report/answer.h"
#include "../../strategies/strategy.h"
#include <limits.h>
#include <stdio.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef SCALING_SOURCE_DIR
#define SCALING_SOURCE_DIR ""
#endif

static void free_points(default_study_t *ds) {
    for (int i = 0; i < PLAN_MAX_SWEEPS; i++) {
        free(ds->pts[i]);
        ds->pts[i] = NULL;
    }
}

int default_study_begin(default_study_t *ds, int n_dev, char *err, size_t errlen) {
    memset(ds, 0, sizeof *ds);
    if (n_dev <= 0) {   /* the caller's probe found none */
        snprintf(err, errlen, "no CUDA device");
        return 2;
    }
    const strategy_info_t **infos = ds->infos;
    strategy_infos(infos, DEFAULT_STUDY_MAX_STRATEGIES);
    if (default_plan_make(&ds->plan, infos, n_dev, "data", time(NULL), &ds->data, err, errlen)) return 2;
    default_plan_second_gpu(&ds->plan, infos, ds->second_gpu, sizeof ds->second_gpu);
    for (int i = 0; i < ds->plan.n_sweeps; i++) {
        const options_t *o = &ds->plan.sweep[i];
        ds->n_pts[i] = options_validate(o, infos, n_dev, err, errlen) ? -1 : sweep_expand(o, &ds->pts[i], err, errlen);
        if (ds->n_pts[i] < 0) {
            free_points(ds);
            idx_free(&ds->data);
            return 2;
        }
        ds->runs += ds->n_pts[i];
        ds->epochs += (long)ds->n_pts[i] * o->epochs;
    }
    if (default_plan_create_dir(&ds->plan, err, errlen)) {
        free_points(ds);
        idx_free(&ds->data);
        return 2;
    }
    if (study_open(&ds->res, ds->plan.csv, err, errlen)) {
        rmdir(ds->plan.dir);    /* empty: nothing is left behind */
        free_points(ds);
        idx_free(&ds->data);
        return 2;
    }
    if (ds->plan.note[0]) fprintf(stderr, "scaling: %s\n", ds->plan.note);
    printf("# scaling: default study (./scaling with no options; see --help): %s on %s, %d sweep(s), %d run(s) x %d "
           "epoch(s) on up to %d GPU(s) -> %s/\n", ds->plan.model, ds->plan.dataset, ds->plan.n_sweeps, ds->runs,
           ds->plan.sweep[0].epochs, ds->plan.n_gpus, ds->plan.dir);
    return 0;
}

void default_study_announce(const default_study_t *ds, int i, FILE *f) {
    char cmd[1024];
    default_plan_command(&ds->plan, i, cmd, sizeof cmd);
    fprintf(f, "# sweep %d/%d (%d run(s)): %s\n", i + 1, ds->plan.n_sweeps, ds->n_pts[i], cmd);
}

/* scaling report <csv> --out <folder>; 0, or 1 after saying on stderr how to make the report again. */
static int make_report(const default_plan_t *plan) {
    char exe[PATH_MAX], err[PATH_MAX + 300];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe);
    if (n <= 0 || n >= (ssize_t)sizeof exe) {     /* a cut path would run another program */
        fprintf(stderr, "scaling: error: cannot find this program's path (/proc/self/exe); the study's rows are "
                "complete in %s: make the report with scaling report %s --out %s\n", plan->csv, plan->csv, plan->dir);
        return 1;
    }
    exe[n] = '\0';
    int rc = report_run(exe, plan->csv, plan->dir, err, sizeof err);
    if (rc == 0) return 0;
    fprintf(stderr, "scaling: error: %s; the study's rows are complete in %s: make the report with "
            "scaling report %s --out %s\n", err, plan->csv, plan->csv, plan->dir);
    return 1;
}

int default_study_end(default_study_t *ds) {
    study_close(&ds->res);
    free_points(ds);
    idx_free(&ds->data);
    int rc = make_report(&ds->plan);
    char report[PATH_MAX + 16];
    if (rc == 0) snprintf(report, sizeof report, "%s/REPORT.md", ds->plan.dir);
    else snprintf(report, sizeof report, "not written (scaling report failed: see above)");
    fflush(stderr);
    /* the rows as written, read back by the reader the report uses: the answer is REPORT.md's, to the digit */
    if (answer_print_csv(stdout, ds->plan.csv, ds->infos, report, ds->plan.n_gpus == 1 ? ds->second_gpu : NULL))
        rc = 1;
    fflush(stdout);
    return rc;
}
