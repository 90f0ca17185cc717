/* options.h — the `scaling` command line: one getopt_long table that also prints --help, then validation.
 * Host-only (no CUDA headers): CI tests parsing and every rejection. */
#pragma once
#include <stddef.h>
#include <stdio.h>
#include "../engine/dtype.h"

#define OPT_LIST_MAX 32

typedef struct {
    const char *strategy;               /* default "single" */
    int gpus[OPT_LIST_MAX];  int n_gpus;        /* GPU counts to sweep, default {1} */
    int gpus_given;                     /* 1 when --gpus was on the command line */
    const char *model;                  /* lenet | resnet18, default resnet18 */
    const char *dataset;                /* fashion-mnist | mnist | synthetic, default fashion-mnist */
    const char *data_dir;               /* default data/<dataset> */
    int batch[OPT_LIST_MAX]; int n_batch;       /* global batch on one GPU, default {256} */
    double lr[OPT_LIST_MAX]; int n_lr;          /* lr on one GPU, default {0.1} */
    int weak;                           /* 1: --scale weak (default), 0: strong */
    int epochs;                         /* default 3 */
    unsigned long long seeds[OPT_LIST_MAX]; int n_seeds;  /* default {1} */
    double momentum;                    /* default 0 (plain SGD, as the PyTorch reference) */
    double weight_decay;                /* default 0 */
    const char *math[OPT_LIST_MAX]; int n_math;         /* fp32 | tf32 | bf16 to sweep, default {tf32} */
    dtype_t grad_dtype[OPT_LIST_MAX]; int n_grad_dtype; /* naive, nccl: gradients on the wire, default {fp32} */
    const char *init;                   /* normal | xavier; default: normal for resnet18, xavier for lenet */
    const char *out;                    /* CSV path, default results/scaling.csv */
    int steps;                          /* cap on steps per epoch, 0 = whole epoch (smoke tests, profiling) */
    const char *naive_path;             /* naive: auto | p2p | host, default auto */
    double bucket_mb;                   /* nccl: all-reduce bucket size in MiB, default 25 */
    int overlap;                        /* nccl: 1 overlap buckets with backward (default), 0 after backward */
    int micro[OPT_LIST_MAX]; int n_micro;       /* pipeline: micro-batch counts to sweep (innermost), default {1} */
    const char *schedule;               /* pipeline: gpipe | 1f1b, default gpipe */
    int split[OPT_LIST_MAX]; int n_split;       /* pipeline: stage starts by layer index; 0 entries = auto */
    const char *bench;                  /* NULL: train; "allreduce": the all-reduce benchmark */
    int resume;                         /* skip configurations already complete in --out */
    const char *trace;                  /* Chrome-trace JSON path, or NULL */
    int cuda_graph;                     /* single: 1 replay steps from a CUDA graph (default), 0 eager */
    const char *conv_cache;             /* convolution algorithm file (engine/conv_cache.h), or NULL */
    double timeout_s;                   /* deadline of every wait on another rank or GPU, default 300 */
    int retry_failed;                   /* --resume runs again configurations whose last run failed/timed out */
} options_t;

/* Valid names, NULL-terminated; the strategy list comes from the strategy registry at run time. */
extern const char *const options_models[];
extern const char *const options_datasets[];
extern const char *const options_maths[];
extern const char *const options_grad_dtypes[];
extern const char *const options_inits[];
extern const char *const options_naive_paths[];
extern const char *const options_schedules[];
extern const char *const options_benches[];

/* Fills defaults, then parses argv. Returns 0 on success, 1 if --help was printed to stdout,
 * 2 on a parse error with a one-line message (naming the option and the bad value) in err. */
int options_parse(options_t *o, int argc, char **argv, char *err, size_t errlen);
/* Checks what parsing cannot: names against the valid lists (strategies given by the caller), GPU counts
 * against n_devices, batch divisibility for strong scaling, and --grad-dtype bf16 only where the strategy reduces
 * gradients (`reducing`: the caller's names of those, from the registry; NULL skips that check). 0 ok, 2 with a
 * one-line message in err. */
int options_validate(const options_t *o, const char *const *strategies, const char *const *reducing, int n_devices,
                     char *err, size_t errlen);
/* One process per GPU (mpirun/srun with `world` processes): --gpus omitted becomes the world size; given, every
 * count must equal it. 0, or 2 with a one-line message in err. */
int options_for_world(options_t *o, int world, char *err, size_t errlen);
/* Writes the --help text (generated from the option table) to f. */
void options_usage(FILE *f, const char *prog);
