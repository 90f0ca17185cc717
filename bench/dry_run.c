/* dry_run.c — `scaling --dry-run`: the sweep's runs as the scaling rules make them (GPUs, global batch, lr, M), their
 * count, and where --out already holds rows of the same configurations an estimate of the time their epochs take;
 * nothing is run or written and no GPU is touched. */
#include "dry_run.h"
#include "../study/reader.h"
#include "../study/study.h"
#include "../study/runs.h"
#include "progress.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The earlier epochs of key's configuration in rows: the median warm-up epoch and steady epoch, NAN where none. */
static void earlier(const study_rows_t *rows, const study_key_t *key, double *warm, double *steady) {
    size_t cap = (size_t)(rows->n ? rows->n : 1);
    double *w = malloc(cap * sizeof *w), *s = malloc(cap * sizeof *s);
    if (!w || !s) { fprintf(stderr, "scaling: error: out of host memory\n"); exit(1); }
    int nw = 0, ns = 0;
    for (int i = 0; i < rows->n; i++) {
        const study_row_t *r = &rows->row[i];
        if (!r->status || strcmp(r->status, "ok") != 0 || !(r->stats.epoch_s > 0)) continue;
        study_key_t k;
        study_key_of_row(r, &k);
        if (!study_key_match(&k, key)) continue;
        if (r->epoch == 1) w[nw++] = r->stats.epoch_s;
        else s[ns++] = r->stats.epoch_s;
    }
    *warm = study_median(w, nw);
    *steady = study_median(s, ns);
    free(w);
    free(s);
}

int dry_run_print(const options_t *o, const strategy_info_t *info, const sweep_point_t *pts, int n,
                  const idx_dataset_t *data, const study_env_t *env, FILE *f) {
    study_rows_t rows = {0};
    char err[512] = "";
    int have = access(o->out, F_OK) == 0 && study_read(o->out, &rows, err, sizeof err) == 0;
    study_scan_t done = {0};
    if (o->resume && have && study_scan(o->out, &done, err, sizeof err) != 0) done.n = 0;
    fprintf(f, "# dry run: strategy %s, model %s on %s, %d run(s) x %d epoch(s) -> %s; nothing is run or written\n",
            info->name, options_model_cell(o), o->dataset, n, o->epochs, o->out);
    fprintf(f, "#%4s %5s %7s %8s %9s %5s %5s %4s %6s %6s  %s\n", "run", "gpus", "gbatch", "per-gpu", "lr", "math",
            "grads", "M", "seed", "steps", "estimate (epochs, from --out's rows of it)");
    double total = 0;
    int known = 0, skipped = 0;
    for (int i = 0; i < n; i++) {
        const sweep_point_t *pt = &pts[i];
        study_row_t row;
        study_key_t key;
        run_row_of(o, info, pt, env, NULL, &row);
        run_key_of(o, info, pt, data, &row, &key);
        char est[96] = "?";
        if (o->resume && done.n && study_scan_done(&done, &key, o->epochs, o->retry_failed, NULL)) {
            snprintf(est, sizeof est, "skipped by --resume");
            skipped++;
        } else if (have) {
            double warm, steady;
            earlier(&rows, &key, &warm, &steady);
            double t = isnan(steady) ? (isnan(warm) ? NAN : warm * o->epochs)
                                     : (isnan(warm) ? steady : warm) + (o->epochs - 1) * steady;
            if (!isnan(t)) {
                snprintf(est, sizeof est, "%.1f s", t);
                total += t;
                known++;
            }
        }
        int full = data->train.n / pt->global_batch, steps = o->steps > 0 && o->steps < full ? o->steps : full;
        char m[8] = "-";
        if (info->staged && pt->micro_batches == OPT_MICRO_AUTO) snprintf(m, sizeof m, "auto");
        else if (info->staged) snprintf(m, sizeof m, "%d", pt->micro_batches);
        fprintf(f, "%5d %5d %7d %8d %9.4g %5s %5s %4s %6llu %6d  %s\n", i + 1, pt->gpus, pt->global_batch,
                pt->per_gpu_batch, pt->lr, math_name(pt->math), info->reduces ? dtype_name(pt->grad_dtype) : "-",
                m, pt->seed, steps, est);
    }
    fprintf(f, "# %d run(s)", n);
    if (skipped) fprintf(f, ", %d skipped by --resume", skipped);
    if (known) {
        char sum[32];
        progress_duration(sum, sizeof sum, total);
        fprintf(f, "; %d with earlier rows of their configuration in %s: about %s of epochs (CUDA-event time; "
                "setup and evaluation not counted)", known, o->out, sum);
    }
    if (n - skipped - known > 0) fprintf(f, "; %d without an estimate", n - skipped - known);
    fprintf(f, "\n");
    if (!have && access(o->out, F_OK) == 0) fprintf(f, "# no estimate from %s: %s\n", o->out, err);
    study_scan_free(&done);
    study_rows_free(&rows);
    return 0;
}
