/* strategy.h — a training strategy is a small struct of function pointers (after nccl-tests' testColl):
 * it decides what runs on which GPU and what is exchanged; the engine does all arithmetic.
 * Strategies are registered in strategies/registry.c and chosen by name at run time; the driver asks their
 * properties (strategy_info.h), never their names. */
#pragma once
#include "../engine/model.h"
#include "../engine/dataset.h"
#include "../engine/dtype.h"
#include "../engine/schedule.h"
#include "epoch_stats.h"
#include "strategy_info.h"
#include "naive_path.h"

/* What one run trains: filled by the harness from a sweep point. */
typedef struct {
    const char *model;          /* a MODEL_TABLE name (engine/model_info.h) */
    const char *model_size;     /* its size, for a model with sizes (engine/gpt2/gpt2_shape.h); NULL otherwise */
    int n_gpus;
    const int *devices;         /* CUDA ordinals, n_gpus of them */
    int global_batch;           /* per optimizer step, over all GPUs */
    double lr, momentum, weight_decay;   /* lr: the peak rate (after the scaling rule) */
    optim_cfg_t optim;          /* the optimizer and the schedule of lr over the run; zero: SGD at the constant lr */
    math_t math;
    init_t init;
    unsigned long long seed;
    const idx_dataset_t *data;  /* host copy; the strategy uploads what its GPUs need (a language model's: corpus) */
    int cuda_graph;             /* single: replay each step from a captured CUDA graph */
    int steps_cap;              /* --steps: steps the harness runs per epoch (0: whole epochs); the rate table on the
                                 * device is sized for min(this, steps per epoch) an epoch, not for a 5,000-step
                                 * ImageNet epoch (the step events are one an epoch's step) */
    struct trace *trace;        /* --trace: ranges to record while trace->active, or NULL */
    const char *conv_cache;     /* --conv-cache: the convolution algorithm file (engine/conv_cache.h), or NULL */
    setup_count_t *setup_count; /* where the setup stands, for the run's progress lines (engine/setup_count.h), or
                                 * NULL: every GPU's setup counts into it (run_cfg_gpu_setup) */
    /* data-parallel */
    naive_path_t naive_path;    /* naive_path.h */
    size_t bucket_bytes;        /* nccl: all-reduce bucket size */
    int overlap;                /* nccl: 1 launch each bucket as soon as backward has produced it */
    dtype_t grad_dtype;         /* naive, nccl: the gradients' type on the wire (fp32 default, bf16 as DDP's hook) */
    /* pipeline */
    int micro_batches;          /* M; 0: the pipeline picks (auto: a short timed probe per candidate, pipeline.c) */
    int schedule;               /* the order, a sched_order_t (strategies/pipeline/pipe_schedule.h): gpipe, 1f1b, zb */
    const int *split;           /* n_split stage starts (layer indices), or NULL for automatic balance */
    int n_split;
    int split_probed;           /* 1: split is the one --micro-batches auto's winning probe balanced (not --split) */
    /* One process per GPU (mpirun/srun, strategies/dist.h), only for strategies with multi_process set: this
     * process drives n_gpus = 1 GPU (devices[0], its node-local one) and holds shard dist->rank of the global
     * batch; the run spans dist->size GPUs. NULL: this process drives all n_gpus GPUs. */
    const struct dist *dist;
} run_cfg_t;

/* What cfg lends each GPU's setup: every strategy's replicas and stages set up from this (engine/gpu.h). */
static inline gpu_setup_t run_cfg_gpu_setup(const run_cfg_t *cfg) {
    return (gpu_setup_t){.conv_cache = cfg->conv_cache, .count = cfg->setup_count};
}

/* What cfg tells each GPU's optimizer: cfg->optim with its peak rate cfg->lr (a schedule of no epochs: constant), and
 * the steps of an epoch the harness runs. */
static inline optim_cfg_t run_cfg_optim(const run_cfg_t *cfg) {
    optim_cfg_t o = cfg->optim;
    o.sched.peak = cfg->lr;
    o.steps_cap = cfg->steps_cap;
    return o;
}

struct gpt2_train;
/* A language model's trainer (engine/gpt2/gpt2_train.h) on `device` for rows [first, first + B) of every global batch
 * of cfg (B = cfg->global_batch, first 0: the whole batch), with cfg's size, math, optimizer, seed and --cuda-graph:
 * what single and the data-parallel strategies train a language model with. 0, or -1 with the reason in err (what
 * was set up freed). */
int run_cfg_lm_init(struct gpt2_train *g, const run_cfg_t *cfg, int device, int B, int first, char *err,
                    size_t errlen);

/* The most micro-batches the pipeline's automatic choice (micro_batches 0) tries. */
#define PIPE_AUTO_MAX_MICRO 32


/* A data-parallel strategy's gradient reduction on raw buffers: the code its train_step runs, callable by the
 * all-reduce benchmark (--bench allreduce) and the exact-sum tests. */
typedef struct {
    /* Prepares an in-place sum over n GPUs (gpus[i]: device and streams) of up to max_count elements of type wire
     * per GPU: fp32, or bf16 (--grad-dtype bf16: what goes over the wire and is summed). naive_path is
     * NAIVE_PATH_* (strategies other than naive ignore it). 0, or -1 with a message in err. */
    int (*open)(void **ctx, gpu_t *const *gpus, int n, size_t max_count, int naive_path, dtype_t wire, char *err,
                size_t errlen);
    /* bufs[i] (on gpus[i], count elements of the wire type, count <= max_count) becomes the elementwise sum over all
     * i. With src (count fp32 on each gpus[i]) a bf16 wire is first written from it, rounded to nearest even, on
     * each GPU's comm stream: the path training runs. src NULL: bufs already hold the inputs (the bare reduction,
     * as nccl-tests times it); an fp32 wire needs src NULL. It starts after the work already queued on each
     * gpus[i]->stream, and each gpus[i]->stream waits for it. No host synchronisation. */
    void (*run)(void *ctx, const float *const *src, void *const *bufs, size_t count);
    /* How it reduces, for tables and rows: "p2p", "host" (naive), the NCCL algorithm (nccl). */
    const char *(*algo)(void *ctx);
    void (*close)(void *ctx);
} reduce_ops_t;

typedef struct strategy {
    /* Name and properties: all that bench/ may ask about a strategy (host-only, strategy_info.h; the command's are
     * defined in strategy_info.c, where the host-only build finds them too). */
    const strategy_info_t *info;
    /* Builds replicas/stages on cfg->devices; returns 0, or -1 with a message in err (e.g. out of memory). */
    int (*setup)(void **state, const run_cfg_t *cfg, char *err, size_t errlen);
    /* Optimizer steps in one epoch (the last partial global batch is dropped). */
    int (*steps_per_epoch)(void *state);
    /* Starts an epoch: shuffle (same order on every GPU), reset accumulators, record the start event. */
    void (*epoch_begin)(void *state, int epoch);
    /* One optimizer step over global batch `step` of the epoch. No host synchronisation. */
    void (*train_step)(void *state, int step);
    /* Ends the epoch after `steps` steps (fewer than steps_per_epoch under --steps): record the stop event,
     * synchronise once, read the accumulators. */
    void (*epoch_end)(void *state, int steps, epoch_stats_t *out);
    /* Test-set accuracy with running BN statistics; a language model's held-out loss (strategy_info_t.lm). */
    double (*evaluate)(void *state);
    void (*teardown)(void *state);
    const reduce_ops_t *reduce;     /* optional: NULL for strategies without a gradient reduction */
    /* Optional: copies replica 0's flat parameters (rank 0's under dist) to host, at most max floats, and returns
     * the parameter count (host NULL: the count only). Synchronises. For SCALING_DUMP_PARAMS and tests. */
    size_t (*params)(void *state, float *host, size_t max);
    /* Optional, called from another thread (bench/faults/watchdog.h) while the run goes on: 1 with a one-line reason when
     * an asynchronous fault broke the run (an NCCL communicator's error: it is then aborted, so no call waits on it
     * any longer), else 0. */
    int (*health)(void *state, char *why, size_t len);
    /* Optional, called from another thread about every 10 s while an epoch runs (progress lines): how many of this
     * epoch's `launched` steps the GPUs have finished and the GPU milliseconds they took (*ms), read from the step
     * events the strategy records anyway (timing_steps_done: queried, never waited on). NULL: the harness counts
     * launched steps on the host's clock. */
    int (*steps_done)(void *state, int launched, double *ms);
} strategy_t;

/* NULL-terminated table of every strategy (strategies/registry.c); strategy_find returns NULL for an unknown name. */
extern const strategy_t *const strategy_table[];
const strategy_t *strategy_find(const char *name);
