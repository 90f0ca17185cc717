/* table.h — the loaded study's run table, which the report and the answer read: its runs grouped into configurations (study/key.h,
 * study/study.h), the one run that stands for each, that run's steady medians per column of the schema, and the
 * model-and-dataset groups. Host-only. */
#pragma once
#include "reader.h"
#include "key.h"
#include "study.h"
#include "target.h"
#include "mem.h"

/* One reported run. Strings point into the rows read, or into the run's own cells. */
typedef struct {
    const char *run_id, *strategy, *model, *dataset, *math, *gd, *sched, *algo, *tr;   /* its first row's cells */
    char lr[32], seed[24], mb[16];      /* lr, seed, micro_batches as the writer formats them, "" for none */
    char *link;                         /* the link its GPUs talked over: "" on one node with NCCL's defaults */
    char *variant;                      /* what tells it from its strategy's other runs in its group where they differ:
                                         * copy path or NCCL algorithm, init, momentum, weight decay, commit ("") */
    const study_env_t *env;           /* the machine and build of its first row */
    const study_row_t *final;         /* its last epoch's row: facc's, floss's, and the cells a run ended with */
    const strategy_info_t *info;        /* its strategy's properties; NULL for one this binary does not know */
    int group;                          /* its model and dataset (study_runs_t.grp) */
    int gpus, global_batch, per_gpu;
    int line_batch;                     /* the batch its line stands at: global where `global`, else per GPU */
    int micro;                          /* micro-batches (0 where the row has none) */
    int nodes, gpn;                     /* nodes and GPUs per node (1 and gpus where the row does not say) */
    int pipe;                           /* a pipeline's run (study_is_pipeline) */
    int tokens;                         /* a language model's run: its group's (study_group_t.tokens; study_run_tput_col) */
    int global;                         /* its line batch is the global batch (study_t1_global) */
    double facc;                        /* final test accuracy, %, NAN without one */
    double acc_lo, acc_hi;              /* its last epochs' test accuracy, % (study_acc_spread): a seed's noise */
    double floss;                       /* a language model's final held-out loss (test_loss, nats), NAN without */
    double loss_lo, loss_hi;            /* its last epochs' held-out loss (study_loss_spread): a seed's noise */
    study_target_t tt;                  /* its time to target (study/target.h) */
    double gns_b;                       /* its gradient noise scale B_simple (study_noise_scale), NAN: not measured */
    double peak_mb;                     /* the largest peak_mem_mb of its rows, NAN without one */
    char fstat[32];                     /* how it ended (study_verdict) */
    int last;                           /* its last epoch */
    const study_row_t **rows;         /* its rows, in file order */
    int nrows, caprows;
    double med[RESULTS_NCOLS];          /* per number column, the median over its steady rows (NAN: none there) */
    double *busy;                       /* per pipeline stage, the median of its steady rows' stage_busy_ms */
    int nbusy;
} study_run_t;

typedef struct {
    char *id, *sub;                     /* file-name-safe "model-dataset", and "model on dataset" */
    names_t gpus, hosts, commits;       /* distinct GPU names, hosts and commits of its rows */
    names_t maths, gds, seeds;          /* distinct maths, gradient dtypes and seeds of its runs */
    char d0[16], d1[16];                /* the first and last date of its rows */
    int tokens;                         /* a language model's group (a row of it holds tokens_per_s): its runs'
                                         * throughput is in tokens a second, their quality the held-out loss */
} study_group_t;

/* What the report's speeds are: a language model's tokens a second (tokens_per_s, in its rows), else images a second.
 * The column a run's throughput is read from, and the unit a run's or a group's tables, words and figures name. */
static inline study_col_t study_run_tput_col(const study_run_t *r) {
    return r->tokens ? RESULTS_COL_tokens_per_s : RESULTS_COL_images_per_s;
}
static inline const char *study_tput_unit(int tokens) { return tokens ? "tokens/s" : "images/s"; }
/* What a batch counts: a language model's sequences, else images (a figure's batch axis). */
static inline const char *study_sample_unit(int tokens) { return tokens ? "sequences" : "images"; }

typedef struct {
    const strategy_info_t *const *infos; /* the registry's strategies, NULL-terminated (strategy_info.h) */
    int nrow, bad_rows;                 /* rows read, and records skipped (study_pass_t) */
    const study_env_t **envs;         /* the machines and builds of every row of the file, each once */
    int nenv, capenv;
    pool_t pool;                        /* the reported runs' rows, and every string of the table */
    study_run_t *run;                         /* the reported runs, in the order of their first row */
    int nr;
    study_group_t *grp;
    int ng, capg;
    int allruns, leftout;               /* runs in the file, and runs not reported (superseded in a configuration) */
    names_t unknown;                    /* the reported strategies infos lacks */
    bytes_t ref;                        /* the reference strategy's name as the report prints it */
    const study_run_t **t1;             /* the reference runs with a steady time, by group, batch, math, then time */
    int nt1;
} study_runs_t;

/* Reads a study CSV, each run's strategy looked up in infos (the registry's, NULL-terminated). 0, or 2 with a
 * one-line message (unreadable, or no run_id column: not a study). */
int study_load(study_runs_t *s, const char *path, const strategy_info_t *const *infos, char *err, size_t errlen);
void study_free(study_runs_t *s);
/* The run that is T1 for group g, line batch bk and math m (study.h): the reference's fastest there, or -1. */
int study_t1_run(const study_runs_t *s, int g, int bk, const char *m);
/* The run's steady values of column c (value >= 0), their extremes; NAN without one. */
double study_steady_min(const study_run_t *r, study_col_t c);
double study_steady_max(const study_run_t *r, study_col_t c);
/* The number of its steady rows with a value of column c. */
int study_steady_count(const study_run_t *r, study_col_t c);
/* v, r's nccl_algo cell, in words: "host copies" (a strategy whose nccl_algo is its copy path), "NCCL Ring" (one
 * that runs NCCL), else v; by the strategy's properties. */
void study_algo_words(bytes_t *b, const study_run_t *r, const char *v);
/* The reference strategy's name, as the report prints it. */
const char *study_ref(const study_runs_t *s);

/* The order a study reads maths in: math_mode.h's table (fp32, tf32, bf16, fp16), then others by name (< 0, 0, > 0 as
 * strcmp). */
int study_math_cmp(const char *a, const char *b);
/* Orders of numbers and strings for comparators: < 0, 0, > 0. */
int study_cmp_int(long long a, long long b);
int study_cmp_num(double a, double b);    /* NAN as 0 */

/* A number as awk prints it (integers in full, else %.6g): the data files' and tables' plain numbers. */
const char *study_num_s(char *buf, size_t len, double x);
int study_isnum(const char *s);
