/* options.h — the `scaling` command line: one option table (name, argument, default, help, parser) that makes the
 * getopt_long table, the defaults and --help; then validation against the strategies' properties. Host-only (no CUDA
 * headers): CI tests parsing and every rejection. The defaults below are the table's, in options.c. */
#pragma once
#include <stddef.h>
#include <stdio.h>
#include "../engine/dtype.h"
#include "../engine/math_mode.h"
#include "../engine/opt_table.h"
#include "../engine/weight_init.h"
#include "../engine/schedule.h"
#include "../strategies/naive_path.h"
#include "../strategies/strategy_info.h"

/* --micro-batches auto: the pipeline takes the count of its fastest short timed probe that fits
 * (strategies/pipeline/pipeline.c) */
#define OPT_MICRO_AUTO 0
#define OPT_IMAGE_MAX 512   /* --image-size: beyond it a ResNet stem output at batch 256 passes cuDNN's 2^31 elements */
#define OPT_BUCKET_MB_MAX (1 << 20)   /* --bucket-mb: 1 TiB, past any model's gradients; its bytes fit a size_t */

typedef struct {
    const char *strategy;
    int gpus[OPT_LIST_MAX];  int n_gpus;        /* GPU counts to sweep */
    const char *model;                  /* a MODEL_TABLE name (engine/model_info.h) */
    const char *model_size;             /* --model-size: one of the model's sizes; NULL for a model without sizes */
    char model_cell[48];                /* the rows' model cell where the model has sizes (options_model_cell) */
    int image_size;                     /* side of the images the model gets; the model's when not given */
    const char *dataset;                /* fashion-mnist | mnist | sotu | synthetic */
    const char *data_dir;
    int batch[OPT_LIST_MAX]; int n_batch;       /* global batch on one GPU */
    double lr[OPT_LIST_MAX]; int n_lr;          /* lr on one GPU */
    int weak;                           /* 1: --scale weak */
    int epochs;
    unsigned long long seeds[OPT_LIST_MAX]; int n_seeds;
    double momentum;
    double weight_decay;
    lr_kind_t lr_schedule;              /* how the rate moves over a run (engine/schedule.h) */
    double warmup_epochs;               /* gradual warm-up to the peak rate, in epochs (fractions allowed) */
    lr_scaling_t lr_scaling;            /* how --lr grows from --lr-base-batch to a run's global batch */
    int lr_base_batch;                  /* the global batch --lr is given at; 0: each --batch value */
    optim_kind_t optimizer;
    double target_acc;                  /* time to target's test accuracy, a fraction; 0: none (synthetic data) */
    int gns_every;                      /* measure the gradient noise scale every N steps, 0: never */
    math_t math[OPT_LIST_MAX]; int n_math;              /* to sweep */
    dtype_t grad_dtype[OPT_LIST_MAX]; int n_grad_dtype; /* naive, nccl: gradients on the wire */
    init_t init;                        /* the model's when not given */
    const char *out;                    /* CSV path */
    int steps;                          /* cap on steps per epoch, 0 = whole epoch (smoke tests, profiling) */
    naive_path_t naive_path;            /* naive and pipeline: how data crosses between GPUs */
    double bucket_mb;                   /* nccl: all-reduce bucket size in MiB */
    int overlap;                        /* nccl: 1 overlap buckets with backward */
    int micro[OPT_LIST_MAX]; int n_micro;       /* pipeline: micro-batch counts to sweep (innermost), OPT_MICRO_AUTO:
                                                 * the pipeline picks (other strategies ignore it) */
    const char *schedule;               /* pipeline: a SCHED_NAMES name (pipe_schedule.h) */
    int split[OPT_LIST_MAX]; int n_split;       /* pipeline: stage starts by layer index; 0 entries = auto */
    const char *bench;                  /* NULL: train; "allreduce": the all-reduce benchmark */
    int resume;                         /* skip configurations already complete in --out */
    const char *trace;                  /* Chrome-trace JSON path, or NULL */
    int cuda_graph;                     /* single: 1 replay steps from a CUDA graph */
    const char *conv_cache;             /* convolution algorithm file (engine/conv_cache.h), or NULL */
    unsigned long long given;           /* bit i: option i of the table was on the command line (options_given) */
    double timeout_s;                   /* deadline of every wait on another rank or GPU, default 300 */
    int retry_failed;                   /* --resume runs again configurations whose last run failed/timed out */
    int dry_run;                        /* print the runs and an estimate; run and write nothing (bench/dry_run.h) */
    int version;                        /* print the commit and the libraries built against, and exit */
} options_t;

/* Valid names, NULL-terminated; the strategy list comes from the strategy registry at run time. Names that stand for
 * an enum are that enum's own table, parsed once here (engine/opt_table.h: opt_enum): math_names (math_mode.h),
 * init_names (weight_init.h), naive_path_names (naive_path.h). */
extern const char *const options_models[];
extern const char *const options_datasets[];
extern const char *const options_grad_dtypes[];
extern const char *const options_schedules[];
extern const char *const options_benches[];
/* What --dataset `name` holds, as the model kind that learns from it (engine/model_info.h): MODEL_IMAGES,
 * MODEL_TOKENS, or -1 for synthetic data, which is generated for either kind. */
int options_dataset_kind(const char *name);

/* Fills defaults, then parses argv. Returns 0 on success, 1 if --help was printed to stdout,
 * 2 on a parse error with a one-line message (naming the option and the bad value) in err. */
int options_parse(options_t *o, int argc, char **argv, char *err, size_t errlen);
/* 1 if option `name` (without dashes) was on the command line, not a default. */
int options_given(const options_t *o, const char *name);
/* Checks what parsing cannot: names against the valid lists, GPU counts against n_devices (< 0: not checked), batch
 * divisibility for strong scaling, and, given the registry's strategies (NULL-terminated infos; NULL skips these
 * checks): the strategy's name, --grad-dtype bf16 only where it reduces gradients, --micro-batches and --split only
 * where it is staged. 0 ok, 2 with a one-line message in err. */
int options_validate(const options_t *o, const strategy_info_t *const *strategies, int n_devices, char *err,
                     size_t errlen);
/* One process per GPU (mpirun/srun with `world` processes): --gpus omitted becomes the world size; given, every
 * count must equal it. 0, or 2 with a one-line message in err. */
int options_for_world(options_t *o, int world, char *err, size_t errlen);
/* The rows' model cell: --model, and for a model of several sizes the size after a hyphen (gpt2-small), so that each
 * size is its own model in the rows, the configuration key and the report's groups. */
static inline const char *options_model_cell(const options_t *o) {
    return o->model_size && o->model_cell[0] ? o->model_cell : o->model;
}
/* Writes the --help text (generated from the option table) to f. */
void options_usage(FILE *f, const char *prog);
