/* results.h — the CSV schema of a scaling study, written with libcsv one row per epoch and flushed each
 * epoch, so a killed sweep loses at most the epoch in progress. Host-only. The schema already holds the
 * columns of the data-parallel and pipeline strategies (empty where they do not apply), so one CSV can hold
 * every strategy and appending never changes the header. */
#pragma once
#include <stdio.h>
#include <stddef.h>

/* Run-independent facts recorded in every row. */
typedef struct {
    char gpu_name[96];
    char driver[32];
    char cuda[32];
    char cudnn[32];
    char nccl[32];
    char host[64];
    char git_commit[48];
} results_env_t;

/* One epoch of one run. Numbers < 0 (or empty strings) are written as empty cells: "not applicable". */
typedef struct {
    char run_id[64];            /* <timestamp>-<sweep index>-<pid>: unique per run, shared by its epochs */
    char timestamp[32];         /* ISO 8601 UTC, when the row was written */
    const char *strategy, *model, *dataset, *math, *init;
    unsigned long long seed;
    int gpus, global_batch, per_gpu_batch;
    double lr, momentum, weight_decay;
    int epoch;                  /* 1-based */
    const char *phase;          /* "warmup" (epoch 1: algorithm search, first touch) or "steady" */
    int steps;                  /* optimizer steps in the epoch */
    double epoch_s;             /* CUDA-event time of the epoch's training steps */
    double images_per_s;
    double step_ms;             /* epoch_s / steps * 1000 */
    double train_loss, train_acc, test_acc;
    const char *status;         /* "ok", "diverged", "oom", "failed" */
    /* data-parallel (issue: naive / nccl) */
    double compute_ms, comm_ms, exposed_comm_ms;    /* per step */
    double bytes_per_step, algbw_gbs, busbw_gbs;
    const char *nccl_algo;
    const char *replicas;       /* "identical" / "DIFFER" */
    /* pipeline */
    int stages, micro_batches;
    const char *schedule, *split;
    double bubble, bubble_ideal;
    const char *stage_busy_ms;  /* ";"-separated per stage */
    double peak_mem_mb;         /* max over GPUs, device memory in use by this run */
    const results_env_t *env;
} results_row_t;

/* Column names in order, NULL-terminated. */
extern const char *const results_columns[];
int results_ncolumns(void);

typedef struct {
    FILE *f;
    char path[512];
} results_t;

/* Opens path for appending. A new or empty file gets the header; an existing file must have exactly this
 * header, otherwise returns 2 with a one-line message ("<path>: header differs from this version's ...").
 * Parent directories are created. */
int results_open(results_t *r, const char *path, char *err, size_t errlen);
/* Writes one row with libcsv quoting, then fflush + fsync. 0 ok, -1 on an I/O error (message in err). */
int results_write(results_t *r, const results_row_t *row, char *err, size_t errlen);
void results_close(results_t *r);
/* Formats one row to a caller buffer as the CSV line (without newline), for tests and the table. */
int results_format(const results_row_t *row, char *buf, size_t len);
