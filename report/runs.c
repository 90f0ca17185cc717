/* runs.c — `scaling report STUDY.csv --runs`: the runs REPORT.md reports (study_runs.h), one TSV line each with
 * their steady medians, so that a script joining our numbers with another program's counts nothing itself. */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The table's columns, in order; report_runs writes a line's cells in this order. */
static const char *const columns[] = {
    "run_id", "strategy", "model", "dataset", "math", "grad_dtype", "gpus", "global_batch", "per_gpu_batch", "lr",
    "seed", "steps_median", "steady_epochs", "epoch_s_median", "epoch_s_min", "epoch_s_max", "images_per_s_median",
    "images_per_s_min", "images_per_s_max", "step_ms_median", "final_test_acc", "final_comm_ms",
    "final_exposed_comm_ms", "final_busbw_gbs", "peak_mem_mb", "status", "gpu_name", "driver", "cuda", "cudnn", "nccl",
    "git_commit", NULL,
};

/* One cell: a tab or line break inside would split the line, so each becomes a space. */
static void put_text(FILE *f, int *col, const char *s) {
    if ((*col)++) fputc('\t', f);
    for (; s && *s; s++) fputc(*s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s, f);
}

/* A number as num_s prints it, but with the fewest digits that read back as the same double: a script rounds it
 * again, and the report's %.6g would move the last digit of a ratio (1.520557 / (2 x 0.785819) is 96.7 %, with
 * 1.52056 96.8 %). Empty for none (NAN, or < 0: the CSV's empty cell). */
static void put_num(FILE *f, int *col, double x) {
    char b[48] = "";
    if (!isnan(x) && x >= 0) {
        num_s(b, sizeof b, x);
        for (int digits = 7; digits <= 17 && strtod(b, NULL) != x; digits++) snprintf(b, sizeof b, "%.*g", digits, x);
    }
    put_text(f, col, b);
}

/* The extremes of the steady values whose median the run holds (NAN for none). */
static double vec_min(const vec_t *v) {
    double m = NAN;
    for (int i = 0; i < v->n; i++)
        if (!(m <= v->v[i])) m = v->v[i];
    return m;
}

static double vec_max(const vec_t *v) {
    double m = NAN;
    for (int i = 0; i < v->n; i++)
        if (!(m >= v->v[i])) m = v->v[i];
    return m;
}

int report_runs(const study_runs_t *s, FILE *f) {
    int col = 0;
    for (int c = 0; columns[c]; c++) put_text(f, &col, columns[c]);
    fputc('\n', f);
    for (int i = 0; i < s->nr; i++) {
        const run_t *r = &s->run[i];
        const results_row_t *last = r->final;
        const results_env_t *env = r->env;
        col = 0;
        put_text(f, &col, r->run_id);
        put_text(f, &col, r->strategy);
        put_text(f, &col, r->model);
        put_text(f, &col, r->dataset);
        put_text(f, &col, r->math);
        put_text(f, &col, r->gd);
        put_num(f, &col, r->gpus);
        put_num(f, &col, r->G);
        put_num(f, &col, r->pipe ? -1 : r->b); /* a pipeline's stages each see the whole batch: no per-GPU batch */
        put_text(f, &col, r->lr);
        put_text(f, &col, r->seed);
        put_num(f, &col, r->nmed);
        put_num(f, &col, r->T.n);
        put_num(f, &col, r->tmed);
        put_num(f, &col, vec_min(&r->T));
        put_num(f, &col, vec_max(&r->T));
        put_num(f, &col, r->imed);
        put_num(f, &col, vec_min(&r->I));
        put_num(f, &col, vec_max(&r->I));
        put_num(f, &col, r->smed);
        put_num(f, &col, last && !isnan(r->facc) ? last->test_acc : NAN); /* facc's cell, unscaled */
        put_num(f, &col, last ? last->stats.comm_ms : NAN);
        put_num(f, &col, last ? last->stats.exposed_comm_ms : NAN);
        put_num(f, &col, last ? last->stats.busbw_gbs : NAN);
        put_num(f, &col, r->peak_mb);
        put_text(f, &col, r->fstat);
        put_text(f, &col, env->gpu_name);
        put_text(f, &col, env->driver);
        put_text(f, &col, env->cuda);
        put_text(f, &col, env->cudnn);
        put_text(f, &col, env->nccl);
        put_text(f, &col, env->git_commit);
        fputc('\n', f);
    }
    return fflush(f) != 0 || ferror(f) ? 1 : 0;
}
