/* study_runs.h — a study CSV gathered for the report: its runs grouped into configurations (study/key.h, study/study.h), the one
 * run that stands for each, that run's steady medians, and the model-and-dataset groups. Host-only. */
#pragma once
#include "../study/reader.h"
#include "../study/key.h"
#include "../study/study.h"

typedef struct {
    double *v;
    int n, cap;
} vec_t;

/* One reported run. Strings point into the rows read, or into the run's own cells. Medians are NAN where the run
 * has no such steady value. */
typedef struct {
    const char *run_id, *strategy, *lr, *seed, *mb, *sched, *algo, *math, *gd, *tr, *model, *dataset;
    const results_env_t *env;   /* the machine and build of its first row */
    const results_row_t *final; /* its last epoch's row: facc's, and the cells a run ended with */
    const strategy_info_t *info; /* its strategy's properties; NULL for one this binary does not know */
    char lr_s[32], seed_s[24], mb_s[16]; /* lr, seed, mb: the cells as the writer formats them, "" for none */
    char link[300]; /* the link its GPUs talked over: "" on one node with NCCL's default transports */
    int group, gpus, G, b, bk, M, nodes, gpn;
    int pipe;   /* a pipeline's run (study_is_pipeline) */
    int global; /* its line batch bk is the global batch (study_t1_global), else the per-GPU batch */
    double facc;       /* final test accuracy, %, NAN without one */
    double peak_mb;    /* the largest peak_mem_mb of its rows, NAN without one */
    char fstat[32];    /* how it ended (study_verdict) */
    int last;          /* its last epoch */
    vec_t T, I, S, C, X, D, Q, Y, B, BI, N, acc_e, acc_v;
    vec_t *sb; /* stage_busy_ms per stage, steady rows */
    int ns;
    double tmed, imed, smed, cmed, xmed, dmed, qmed, ymed, bmed, bimed, nmed;
} run_t;

typedef struct {
    char id[200], sub[220]; /* file-name-safe "model-dataset", and "model on dataset" */
    char gpus[400], hosts[400], commits[400], d0[16], d1[16];
    int nm, ngd, nseeds; /* distinct maths, gradient dtypes, seeds */
    char maths[8][16], gds[8][16], seeds[64][32];
} group_t;

typedef struct {
    const strategy_info_t *const *infos; /* the registry's strategies, NULL-terminated (strategy_info.h) */
    results_rows_t rows;
    run_t *run; /* the reported runs, in the order of their first row */
    int nr;
    group_t *grp;
    int ng;
    int allruns, leftout; /* runs in the file, and runs not reported (superseded in their configuration) */
    char unknown[400];    /* the reported strategies infos lacks, "a, b", or "" */
    char ref[200];        /* the reference strategy's name as the report prints it (study_load says which) */
} study_runs_t;

/* Reads a study CSV, each run's strategy looked up in infos (the registry's, NULL-terminated). 0, or 2 with a
 * one-line message (unreadable, or no run_id column: not a study). */
int study_load(study_runs_t *s, const char *path, const strategy_info_t *const *infos, char *err, size_t errlen);
void study_free(study_runs_t *s);
/* The run that is T1 for group g, line batch bk and math m (study.h), or -1. */
int study_t1_run(const study_runs_t *s, int g, int bk, const char *m);
/* "fp32" before "tf32" before "bf16", others after by name: the order a study reads. */
void study_math_rank(char *out, size_t len, const char *m);

/* A number as awk prints it (integers in full, else %.6g): the data files' and tables' plain numbers. */
const char *num_s(char *buf, size_t len, double x);
/* Sort keys built like strings: fixed-width numbers that sort as numbers, fields separated by \034. */
void key_num(char *k, size_t len, double x);
void key_str(char *k, size_t len, const char *s);
int isnum(const char *s);
void vec_push(vec_t *v, double x);
