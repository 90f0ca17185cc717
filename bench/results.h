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
    char nccl_transport[256];   /* the NCCL transport settings in force (strategies/dist.h), for nccl rows */
} results_env_t;

/* One epoch of one run. Numbers < 0 (or empty strings) are written as empty cells: "not applicable". */
typedef struct {
    char run_id[64];            /* <timestamp>-<sweep index>-<pid>: unique per run, shared by its epochs */
    char timestamp[32];         /* ISO 8601 UTC, when the row was written */
    const char *strategy, *model, *dataset, *math, *init;
    const char *grad_dtype;     /* "fp32" / "bf16" on the wire; empty for a strategy without a gradient reduction */
    unsigned long long seed;
    int gpus, global_batch, per_gpu_batch;
    double lr, momentum, weight_decay;
    int epoch;                  /* 1-based */
    const char *phase;          /* "warmup" (epoch 1: algorithm search, first touch) or "steady" */
    int steps;                  /* optimizer steps in the epoch */
    double epoch_s;             /* CUDA-event time of the epoch's training steps */
    double images_per_s;
    double step_ms;             /* median of the per-step CUDA-event times */
    double train_loss, train_acc, test_acc;
    /* "ok", "diverged", "oom", "failed", "timeout", "interrupted", "replicas-differ" */
    const char *status;
    const char *reason;         /* one line: why a run is oom/failed/timeout/interrupted; empty otherwise */
    /* data-parallel (issue: naive / nccl) */
    double compute_ms, comm_ms, exposed_comm_ms;    /* per step */
    double idle_ms;             /* step - compute - exposed (strategies/breakdown.h) */
    double bytes_per_step, algbw_gbs, busbw_gbs;
    const char *nccl_algo;
    const char *replicas;       /* "identical" / "DIFFER" */
    /* pipeline */
    int stages, micro_batches;
    const char *schedule, *split;
    double bubble, bubble_ideal;
    const char *stage_busy_ms;  /* ";"-separated per stage */
    double peak_mem_mb;         /* max over GPUs, device memory in use by this run */
    double mem_free_mb, mem_total_mb;   /* device memory at an oom (cudaMemGetInfo); written when total > 0 */
    double timeout_s;           /* --timeout in force: every wait on another rank or GPU; written when > 0 */
    /* where the GPUs are: nodes (distinct host names, or SCALING_NODE_ID) and GPUs on each; the NCCL transport
     * settings in force for nccl rows ("default" when none is set), empty for the other strategies */
    int nodes, gpus_per_node;
    const char *nccl_transport;
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
/* Read-only: 2 with results_open's one-line message when path exists with another header, else 0. Lets the
 * command refuse a foreign CSV before anything else (even on a machine without a GPU) while writing nothing. */
int results_check(const char *path, char *err, size_t errlen);
/* Writes one row with libcsv quoting, then fflush + fsync. 0 ok, -1 on an I/O error (message in err). */
int results_write(results_t *r, const results_row_t *row, char *err, size_t errlen);
void results_close(results_t *r);
/* Formats one row to a caller buffer as the CSV line (without newline), for tests and the table. */
int results_format(const results_row_t *row, char *buf, size_t len);

// ---- resume: what an existing CSV already holds (host-only; --resume)

/* A configuration is the columns that define one experiment, as the CSV cells (numbers formatted as
 * results_write formats them): strategy, model, dataset, seed, gpus, global_batch, lr, momentum, weight_decay,
 * math, grad_dtype, init, micro_batches, schedule, steps (per epoch: a --steps smoke test is not the full study),
 * nodes, nccl_transport (the same run over another link is another experiment) and nccl_algo (NCCL's algorithm, or
 * naive's copy path: p2p, host). Not part of it: the per-GPU batch (follows from gpus and global_batch), the
 * pipeline split (measured when automatic), and timings. A row's empty grad_dtype, micro_batches, schedule, steps
 * or nccl_algo cell matches any value: strategies without a gradient reduction leave grad_dtype empty,
 * data-parallel rows the pipeline columns, and a setup-failure row has no steps or algorithm. An empty cell in the
 * query matches alike: an nccl_algo not known before the run is set up (NCCL's choice, --naive-path auto). */
#define RESULTS_KEY_FIELDS 18
/* A key cell holds the longest value a row can have in a key column (nccl_transport: up to 255 characters), so two
 * configurations never compare equal on a cut-off prefix. */
#define RESULTS_CELL_MAX 256
typedef struct {
    char cell[RESULTS_KEY_FIELDS][RESULTS_CELL_MAX];
} results_key_t;

/* Column names of the key, in results_key_t order. */
extern const char *const results_key_columns[RESULTS_KEY_FIELDS];

/* One run (one run_id) found in the CSV. A run whose rows stop short (killed) is re-run from epoch 1 under a
 * new run_id; its rows stay in the CSV and summaries use the latest complete run of each configuration. */
typedef struct {
    char run_id[64];
    results_key_t key;
    int epochs;         /* highest epoch written with a measured status (ok, diverged, oom, replicas-differ) */
    int ended;          /* 1: a row has status diverged or oom; re-running would only repeat it */
    int faulted;        /* 1: a row of it is failed, timeout or replicas-differ (interrupted is not) */
} results_run_t;

typedef struct {
    results_run_t *runs;
    int n, cap;
    int rows;           /* data rows read */
    int bad_rows;       /* records with the wrong number of fields (a line cut short by a kill), skipped */
} results_scan_t;

/* Reads path with libcsv's parser. A missing or empty file is an empty scan. 0 ok; 2 with a one-line message
 * when the file cannot be read or its header is not this version's. */
int results_scan(const char *path, results_scan_t *s, char *err, size_t errlen);
void results_scan_free(results_scan_t *s);
/* The key of a row about to be written (the same cells results_write would write). */
void results_key_of_row(const results_row_t *row, results_key_t *k);
/* The resume decision: 1 if a run of k's configuration reached `epochs` epochs or ended diverged or oom, or its
 * latest run faulted (failed, timeout, replicas-differ) and retry_failed is 0, so the configuration is skipped; 0 if
 * it must run (again): never run, killed or interrupted. *best gets the most epochs any run of it reached. */
int results_scan_done(const results_scan_t *s, const results_key_t *k, int epochs, int retry_failed, int *best);
