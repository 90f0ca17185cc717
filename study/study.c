/* study.c — one definition of "complete", of the run that stands for a configuration, of a steady median and of T1
 * (study.h), for --resume, the answer and the report alike. */
#include "study.h"
#include "schema.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void study_progress_init(study_progress_t *p) {
    memset(p, 0, sizeof *p);
    p->last_epoch = -1;
}

const char *study_verdict(const study_progress_t *p) {
    return p->faulted && study_status_parse(p->status) == RUN_INTERRUPTED ? p->fault : p->status;
}

int study_is_fault(const char *status) {
    int s = study_status_parse(status);
    return s == RUN_FAILED || s == RUN_TIMEOUT || s == RUN_REPLICAS_DIFFER;
}

void study_progress_add(study_progress_t *p, int epoch, const char *status) {
    int s = study_status_parse(status);
    int measured = s == RUN_OK || s == RUN_DIVERGED || s == RUN_OOM;
    if (measured && epoch > p->epochs) p->epochs = epoch;
    if (study_is_fault(status) && !p->faulted) {
        p->faulted = 1;
        snprintf(p->fault, sizeof p->fault, "%s", status);
    }
    if (epoch >= p->last_epoch) {
        p->last_epoch = epoch;
        snprintf(p->status, sizeof p->status, "%s", status ? status : "");
    }
}

int study_complete(const study_progress_t *p, int epochs, int retry_failed) {
    int s = study_status_parse(p->status);
    if (s == RUN_DIVERGED || s == RUN_OOM) return 1;
    /* A fault (replicas-differ included: a failure of the run, not a measurement) would most likely happen again */
    if (p->faulted) return !retry_failed;
    return p->epochs >= epochs;
}

int study_pick(const study_progress_t *const *p, int n) {
    int most = 0, pick = -1, furthest = -1;
    for (int i = 0; i < n; i++)
        if (p[i]->epochs > most) most = p[i]->epochs;
    for (int i = 0; i < n; i++) {
        if (study_complete(p[i], most, 1)) pick = i;
        if (p[i]->epochs == most) furthest = i;
    }
    /* none complete (every run failed, timed out or was interrupted): the latest that got furthest */
    return pick >= 0 ? pick : furthest;
}

static int cmp_double(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

double study_median(double *x, int n) {
    if (n <= 0) return NAN;
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

int study_is_pipeline(const strategy_info_t *info, int micro_batches) {
    return info ? info->staged : micro_batches > 0;
}

int study_t1_global(const strategy_info_t *info, int micro_batches) {
    return info ? info->t1_global_batch : micro_batches > 0;
}

int study_line_batch(int global, int per_gpu_batch, int global_batch) { return global ? global_batch : per_gpu_batch; }

int study_is_reference(const strategy_info_t *info) { return info && info->reference; }

void study_t1_init(study_t1_t *t1) {
    t1->t = NAN;
    t1->run = -1;
}

void study_t1_offer(study_t1_t *t1, const strategy_info_t *info, int run, double t) {
    if (!study_is_reference(info) || isnan(t)) return;
    if (t1->run < 0 || t < t1->t) {
        t1->t = t;
        t1->run = run;
    }
}
