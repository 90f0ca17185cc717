/* stat.c — statistics over a study's runs (stat.h): a median and a range with the missing values left out, over
 * a number of each run or over the steady epochs of runs. */
#include "stat.h"
#include "mem.h"

#include <math.h>
#include <stdlib.h>

study_stat_t study_stat_of(double *x, int n) {
    int k = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(x[i])) x[k++] = x[i];
    study_stat_t st = {study_median(x, k), NAN, NAN, k};
    if (k) st.min = x[0], st.max = x[k - 1];   /* study_median sorted them */
    return st;
}

study_stat_t study_stat_runs(const study_run_t *const *u, int n, double (*f)(const study_run_t *)) {
    double *x = mem_alloc((size_t)(n ? n : 1) * sizeof *x);
    for (int i = 0; i < n; i++) x[i] = f(u[i]);
    study_stat_t st = study_stat_of(x, n);
    free(x);
    return st;
}

study_stat_t study_stat_steady(const study_run_t *const *u, int n, study_col_t c) {
    const study_column_t *col = &study_schema[c];
    int m = 0;
    for (int i = 0; i < n; i++) m += u[i]->nrows;
    double *x = mem_alloc((size_t)(m ? m : 1) * sizeof *x);
    int k = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < u[i]->nrows; j++) {
            const study_row_t *row = u[i]->rows[j];
            double v = *RESULTS_MEMBER(row, col, const double);
            if (study_is_steady(row) && v >= 0) x[k++] = v;
        }
    study_stat_t st = study_stat_of(x, k);
    free(x);
    return st;
}

double study_run_epoch_s(const study_run_t *r) { return r->med[RESULTS_COL_epoch_s]; }
double study_run_tput(const study_run_t *r) { return r->med[study_run_tput_col(r)]; }
double study_run_step_ms(const study_run_t *r) { return r->med[RESULTS_COL_step_ms]; }
double study_run_facc(const study_run_t *r) { return r->facc; }
double study_run_floss(const study_run_t *r) { return r->floss; }

static int by_time(const void *a, const void *b) {
    return study_cmp_num(study_run_epoch_s(*(const study_run_t *const *)a),
                         study_run_epoch_s(*(const study_run_t *const *)b));
}

const study_run_t *study_median_run(const study_run_t *const *u, int n) {
    const study_run_t **timed = mem_alloc((size_t)(n > 0 ? n : 1) * sizeof *timed);
    int k = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(study_run_epoch_s(u[i]))) timed[k++] = u[i];
    qsort(timed, (size_t)k, sizeof *timed, by_time);
    const study_run_t *m = k ? timed[(k - 1) / 2] : NULL;
    free(timed);
    return m;
}
double study_run_tt_s(const study_run_t *r) { return r->tt.reached ? r->tt.train_s : NAN; }
double study_run_tt_steps(const study_run_t *r) { return r->tt.reached ? r->tt.steps : NAN; }
