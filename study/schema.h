/* schema.h — the CSV schema of a scaling study in one table (RESULTS_SCHEMA: columns, row members, types) and the
 * row struct it reads into and writes from; writer.h writes rows, reader.h reads them. Host-only. The schema holds
 * every strategy's columns (empty where they do not apply), so one CSV holds every strategy. */
#pragma once
#include <stddef.h>

#include "../strategies/epoch_stats.h"

/* Run-independent facts recorded in every row. */
typedef struct {
    char gpu_name[96];
    char driver[32];
    char cuda[32];
    char cudnn[32];
    char nccl[32];
    char host[64];
    char git_commit[48];
    char nccl_transport[256];   /* the NCCL transport settings in force (strategies/dist.h; "default" when none is
                                 * set), recorded for strategies that use NCCL */
    char nccl_env[512];         /* every other NCCL_* variable in force (NCCL_NVLS_ENABLE=0;...), "" where none */
} study_env_t;

/* One epoch of one run (or one row for a run that ended before its first epoch: epoch 0, phase "setup").
 * Numbers < 0 and NULL or empty strings are written as empty cells: "not applicable"; study_row_init sets every
 * number so. A strategy's measurements are its epoch_stats_t, embedded as epoch_end filled it. */
typedef struct {
    char run_id[64];            /* <timestamp>-<sweep index>-<pid>: unique per run, shared by its epochs */
    char timestamp[32];         /* ISO 8601 UTC, when the row was written */
    const char *strategy, *model, *dataset, *math, *init;
    const char *grad_dtype;     /* "fp32" / "bf16" on the wire; empty for a strategy without a gradient reduction */
    unsigned long long seed;
    int gpus, global_batch, per_gpu_batch;
    double lr, momentum, weight_decay;   /* lr: the peak rate, after the scaling rule */
    /* How the rate moves (engine/schedule.h): the schedule's name, its warm-up and the epochs its decay spans (< 0
     * for a constant rate, whose span changes nothing), the scaling rule and the batch lr was given at, and the
     * optimizer's name */
    const char *lr_schedule, *lr_scaling, *optimizer;
    double warmup_epochs;
    int lr_epochs, lr_base_batch;
    double target_acc;          /* the test accuracy a run's time to target is measured to (study/target.h) */
    int gns_every;              /* --gns-every: the noise scale measured every this many steps, 0 never; < 0 unknown */
    int epoch;                  /* 1-based; 0 for a run that ended at setup */
    const char *phase;          /* study_phase(epoch) */
    double images_per_s;        /* steps x global batch / epoch_s: images, or a language model's sequences */
    double tokens_per_s;        /* a language model's: images_per_s x its sequence length; < 0 (empty) otherwise */
    double test_acc;
    double test_loss;           /* a language model's held-out loss (mean cross-entropy, nats) in place of test_acc */
    double eval_s;              /* the epoch's evaluation, on the host's clock: apart from training time */
    const char *status;         /* study_status_names below */
    const char *reason;         /* one line: why the run did not end ok; empty when it did */
    double mem_free_mb, mem_total_mb;   /* the device's free and total memory when an oom happened */
    /* where the GPUs are: nodes (distinct host names, or SCALING_NODE_ID) and GPUs on each (<= 0: unknown, empty) */
    int nodes, gpus_per_node;
    double timeout_s;           /* the --timeout in force: the deadline of every wait on another rank or GPU */
    epoch_stats_t stats;        /* the strategy's measurements */
    study_env_t env;          /* env.nccl_transport: empty for a strategy that does not use NCCL */
} study_row_t;

/* The statuses a row may have (how a run ended, or how its epoch went), each named once in study_status_names:
 *   ok               the epoch ran and its loss is finite
 *   diverged         the loss became NaN/inf or exploded past 1000x the first epoch's: the run stops there
 *   oom              the run did not fit in device memory (at setup: epoch 0; mem_free_mb, mem_total_mb say how much
 *                    was there)
 *   failed           any other error at setup or in the run (reason says which)
 *   timeout          a wait on another rank or GPU passed --timeout (timeout_s)
 *   interrupted      SIGINT or SIGTERM ended the run at a step boundary
 *   replicas-differ  the data-parallel replicas' parameters differ after the epoch: a failed run, whatever its loss */
typedef enum {
    RUN_OK, RUN_DIVERGED, RUN_OOM, RUN_FAILED, RUN_TIMEOUT, RUN_INTERRUPTED, RUN_REPLICAS_DIFFER, RUN_STATUSES
} study_status_t;
/* The status cells, in study_status_t order, NULL-terminated. */
extern const char *const study_status_names[RUN_STATUSES + 1];
static inline const char *study_status_name(study_status_t s) { return study_status_names[s]; }
/* The status a cell names, or -1 for a name this version does not know (a CSV is data). */
int study_status_parse(const char *cell);

/* A row's phase cell, from its epoch: "setup" (0: a run that ended before its first epoch), "warmup" (1: algorithm
 * search, first touch), "steady" (the epochs every median is taken over). */
const char *study_phase(int epoch);
/* 1 for a row of a steady epoch whose time is a measurement (the rows a steady median is taken over). */
int study_is_steady(const study_row_t *row);
/* Sets row->timestamp to now, ISO 8601 UTC, as every row records when it was written. */
void study_stamp(study_row_t *row);

/* The schema: every CSV column once, in file order, with its type and the row member it is written from and read
 * into. X(name, type, member, number format, flags): name is the column's name as an identifier (the header has it
 * as text, study_col_t as RESULTS_COL_<name>). Types: TEXT a char array, STR a const char *, U64, INT (< 0:
 * empty), COUNT (<= 0: empty), NUM a double (< 0: empty; NaN stays "nan", a diverged loss), REPLICAS the int
 * replicas_identical as "identical" / "DIFFER" / empty. Flags: NAME, a cell that names something and goes into
 * figures, tables and labels: on read it must hold only RESULTS_NAME_CHARS, or the CSV is refused (a CSV from
 * elsewhere is data, and a newline or a quote in a name could end a string in a gnuplot script or a table); SET,
 * a list of settings (NCCL_HOSTID=a|b): RESULTS_NAME_CHARS and '|'; WILD, a key column (study/key.h) whose empty
 * cell matches any value in a configuration (a strategy without a gradient reduction has no grad_dtype, a
 * data-parallel row no pipeline cells, a setup failure no steps or algorithm); NAME_WILD, both; SIZE, a count the
 * report multiplies and adds (GPUs, the batch per GPU, micro-batches, stages, nodes): on read, where present, an
 * integer from 1 to RESULTS_SIZE_MAX, or the CSV is refused; SIZE_WILD, both; POS (the global batch): an integer
 * from 1 up. Any change of names or order makes an older CSV's header differ, so appending to it is refused;
 * study_read still reads it, by column name. */
#define RESULTS_SCHEMA(X) \
    X(run_id,            TEXT,     run_id,                   NULL,    NAME) \
    X(timestamp,         TEXT,     timestamp,                NULL,    NAME) \
    X(strategy,          STR,      strategy,                 NULL,    NAME) \
    X(model,             STR,      model,                    NULL,    NAME) \
    X(dataset,           STR,      dataset,                  NULL,    NAME) \
    X(seed,              U64,      seed,                     NULL,    0   ) \
    X(gpus,              INT,      gpus,                     NULL,    SIZE) \
    X(global_batch,      INT,      global_batch,             NULL,    POS ) \
    X(per_gpu_batch,     INT,      per_gpu_batch,            NULL,    SIZE) \
    X(lr,                NUM,      lr,                       "%.6g",  0   ) \
    X(momentum,          NUM,      momentum,                 "%.6g",  0   ) \
    X(weight_decay,      NUM,      weight_decay,             "%.6g",  0   ) \
    X(math,              STR,      math,                     NULL,    NAME) \
    X(grad_dtype,        STR,      grad_dtype,               NULL,    NAME_WILD) \
    X(init,              STR,      init,                     NULL,    NAME) \
    X(lr_schedule,       STR,      lr_schedule,              NULL,    NAME_WILD) \
    X(warmup_epochs,     NUM,      warmup_epochs,            "%.6g",  WILD) \
    X(lr_epochs,         INT,      lr_epochs,                NULL,    WILD) \
    X(lr_scaling,        STR,      lr_scaling,               NULL,    NAME) \
    X(lr_base_batch,     INT,      lr_base_batch,            NULL,    0   ) \
    X(optimizer,         STR,      optimizer,                NULL,    NAME_WILD) \
    X(gns_every,         INT,      gns_every,                NULL,    WILD) \
    X(target_acc,        NUM,      target_acc,               "%.6g",  0   ) \
    X(epoch,             INT,      epoch,                    NULL,    0   ) \
    X(phase,             STR,      phase,                    NULL,    NAME) \
    X(steps,             INT,      stats.steps,              NULL,    WILD) \
    X(epoch_s,           NUM,      stats.epoch_s,            "%.6f",  0   ) \
    X(images_per_s,      NUM,      images_per_s,             "%.6g",  0   ) \
    X(step_ms,           NUM,      stats.step_ms,            "%.4f",  0   ) \
    X(train_loss,        NUM,      stats.train_loss,         "%.6g",  0   ) \
    X(train_acc,         NUM,      stats.train_acc,          "%.6g",  0   ) \
    X(test_acc,          NUM,      test_acc,                 "%.6g",  0   ) \
    X(eval_s,            NUM,      eval_s,                   "%.6f",  0   ) \
    X(lr_now,            NUM,      stats.lr_now,             "%.6g",  0   ) \
    X(gns_small_sq,      NUM,      stats.gns_small_sq,       "%.6g",  0   ) \
    X(gns_big_sq,        NUM,      stats.gns_big_sq,         "%.6g",  0   ) \
    X(gns_b_small,       INT,      stats.gns_b_small,        NULL,    0   ) \
    X(gns_b_big,         INT,      stats.gns_b_big,          NULL,    0   ) \
    X(loss_scale,        NUM,      stats.loss_scale,         "%.6g",  0   ) \
    X(skipped_steps,     INT,      stats.skipped_steps,      NULL,    0   ) \
    X(status,            STR,      status,                   NULL,    NAME) \
    X(reason,            STR,      reason,                   NULL,    0   ) \
    X(compute_ms,        NUM,      stats.compute_ms,         "%.6g",  0   ) \
    X(comm_ms,           NUM,      stats.comm_ms,            "%.6g",  0   ) \
    X(exposed_comm_ms,   NUM,      stats.exposed_comm_ms,    "%.6g",  0   ) \
    X(idle_ms,           NUM,      stats.idle_ms,            "%.6g",  0   ) \
    X(bytes_per_step,    NUM,      stats.bytes_per_step,     "%.0f",  0   ) /* a byte count: %.6g would round it */ \
    X(algbw_gbs,         NUM,      stats.algbw_gbs,          "%.6g",  0   ) \
    X(busbw_gbs,         NUM,      stats.busbw_gbs,          "%.6g",  0   ) \
    X(nccl_algo,         TEXT,     stats.nccl_algo,          NULL,    NAME_WILD) \
    X(replicas,          REPLICAS, stats.replicas_identical, NULL,    0   ) \
    X(stages,            INT,      stats.stages,             NULL,    SIZE) \
    X(micro_batches,     INT,      stats.micro_batches,      NULL,    SIZE_WILD) \
    X(schedule,          TEXT,     stats.schedule,           NULL,    NAME_WILD) \
    X(split,             TEXT,     stats.split,              NULL,    NAME) \
    X(bubble,            NUM,      stats.bubble,             "%.6g",  0   ) \
    X(bubble_ideal,      NUM,      stats.bubble_ideal,       "%.6g",  0   ) \
    X(stage_busy_ms,     TEXT,     stats.stage_busy_ms,      NULL,    NAME) \
    X(stage_balance,     NUM,      stats.stage_balance,      "%.4g",  0   ) \
    X(peak_mem_mb,       NUM,      stats.peak_mem_mb,        "%.6g",  0   ) \
    X(mem_free_mb,       NUM,      mem_free_mb,              "%.6g",  0   ) \
    X(mem_total_mb,      NUM,      mem_total_mb,             "%.6g",  0   ) \
    X(nodes,             COUNT,    nodes,                    NULL,    SIZE) \
    X(gpus_per_node,     COUNT,    gpus_per_node,            NULL,    SIZE) \
    X(nccl_transport,    TEXT,     env.nccl_transport,       NULL,    SET ) \
    X(nccl_env,          TEXT,     env.nccl_env,             NULL,    SET ) \
    X(timeout_s,         NUM,      timeout_s,                "%.6g",  0   ) \
    X(gpu_name,          TEXT,     env.gpu_name,             NULL,    NAME) \
    X(driver,            TEXT,     env.driver,               NULL,    NAME) \
    X(cuda,              TEXT,     env.cuda,                 NULL,    NAME) \
    X(cudnn,             TEXT,     env.cudnn,                NULL,    NAME) \
    X(nccl,              TEXT,     env.nccl,                 NULL,    NAME) \
    X(host,              TEXT,     env.host,                 NULL,    NAME) \
    X(git_commit,        TEXT,     env.git_commit,           NULL,    NAME) \
    /* a language model's (engine/model_info.h), last: the columns before them stand where they stood */ \
    X(tokens_per_s,      NUM,      tokens_per_s,             "%.6g",  0   ) \
    X(test_loss,         NUM,      test_loss,                "%.6g",  0   )

/* Every column as a constant, RESULTS_COL_<name>, in file order: the index of its entry in study_schema and
 * study_columns, and what code that reads a column by meaning (the report) indexes with. */
#define RESULTS_COL_ENUM(name, type, member, fmt, flags) RESULTS_COL_##name,
typedef enum { RESULTS_SCHEMA(RESULTS_COL_ENUM) RESULTS_NCOLS } study_col_t;
#undef RESULTS_COL_ENUM

/* The schema as a table (from RESULTS_SCHEMA), study_ncolumns() entries: what the writer and the readers walk. */
typedef enum { RESULTS_TEXT, RESULTS_STR, RESULTS_U64, RESULTS_INT, RESULTS_COUNT, RESULTS_NUM, RESULTS_REPLICAS }
    study_type_t;
/* The bytes a NAME cell may hold: letters, digits, space and punctuation that no consumer (gnuplot, Markdown, a
 * shell word in quotes, a data file's quoted title) treats as syntax. */
#define RESULTS_NAME_CHARS                                                                                             \
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 ._+-:/()@=,;"
/* RESULTS_NAME_CHARS in words, for the messages that refuse a byte outside it. */
#define RESULTS_NAME_WORDS "letters, digits, space and ._+-:/()@=,;"
/* The longest a NAME cell of a STR column (strategy, model, dataset, ...) may be: the report names files after them
 * (model-dataset-strategy and a prefix stay under NAME_MAX with a temporary suffix). */
#define RESULTS_NAME_MAX 64
enum {
    RESULTS_F_0 = 0, RESULTS_F_NAME = 1, RESULTS_F_SET = 2, RESULTS_F_WILD = 4, RESULTS_F_SIZE = 8, RESULTS_F_POS = 16,
    RESULTS_F_NAME_WILD = RESULTS_F_NAME | RESULTS_F_WILD, RESULTS_F_SIZE_WILD = RESULTS_F_SIZE | RESULTS_F_WILD
};
/* The largest count a SIZE cell may hold (GPUs, batch per GPU, micro-batches, stages, nodes): sums of a few stay
 * far inside an int, and the report takes products in double. */
#define RESULTS_SIZE_MAX 65536
typedef struct {
    const char *name;
    study_type_t type;
    int flags;                  /* RESULTS_F_* */
    size_t offset, size;        /* of the member in study_row_t */
    const char *fmt;            /* NUM: the printf format */
} study_column_t;
extern const study_column_t study_schema[];
/* 1 when byte b may stand in a cell of a column with these flags (always, for a column that is not NAME or SET). */
int study_name_byte_ok(int flags, unsigned char b);
#define RESULTS_MEMBER(row, c, T) ((T *)((char *)(row) + (c)->offset))
#define RESULTS_CMEMBER(row, c, T) ((const T *)((const char *)(row) + (c)->offset))
/* A string cell as text: an absent one (NULL) is empty. */
static inline const char *study_cell(const char *s) { return s ? s : ""; }

/* Column names in order, NULL-terminated (from RESULTS_SCHEMA). */
extern const char *const study_columns[];
int study_ncolumns(void);
/* The index of column `name`, or -1. */
int study_column_index(const char *name);

/* Every number "not applicable" (< 0), every string NULL, the stats likewise: a row to fill. */
void study_row_init(study_row_t *row);
