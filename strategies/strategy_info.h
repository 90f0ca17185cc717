/* strategy_info.h — what the driver, the options, the default study and the answer may know of a strategy: its name
 * and its properties, never its code. Host-only (no CUDA headers), so host-tested modules ask properties too. */
#pragma once

typedef enum { STRATEGY_AR_NONE = 0, STRATEGY_AR_NCCL, STRATEGY_AR_CENTRAL } strategy_ar_t;
/* How a strategy measures the gradient noise scale (--gns-every, engine/gns.h): not at all; from the two halves of
 * one GPU's batch (an extra backward a measured step); or from each replica's gradient against the all-reduced one
 * (two sums of squares a measured step, so at least 2 replicas). */
typedef enum { STRATEGY_GNS_NONE = 0, STRATEGY_GNS_HALVES, STRATEGY_GNS_REPLICAS } strategy_gns_t;

typedef struct strategy_info {
    const char *name;
    const char *summary;        /* one line for --help */
    /* 1: the one-GPU baseline, no communication: the default --strategy, the reference run (T1) every speedup is
     * measured against, and the default study's first sweep. One strategy of the command's registry has it (a test
     * registry may add another: T1 is the fastest of their runs, the default study runs the first). */
    int reference;
    /* 1: replicas whose gradients are reduced: --grad-dtype and the grad_dtype column apply (its strategy_t has a
     * reduce_ops_t, used by --bench allreduce). */
    int reduces;
    /* 1: the model is cut into consecutive stages, one per GPU: --micro-batches, --schedule and --split apply and
     * a setup-failure row names them. 0: every GPU holds a whole replica. */
    int staged;
    /* 1: its speedup is against the reference at the same global batch (a pipeline splits one batch); 0: at the
     * same per-GPU batch (weak-scaling replicas). */
    int t1_global_batch;
    /* 1: can run one process per GPU under mpirun/srun (run_cfg_t.dist); 0: one process drives all its GPUs. */
    int multi_process;
    /* 1: communicates through NCCL, so its rows record the NCCL transport settings in force (nccl_transport). */
    int uses_nccl;
    /* 1: --naive-path p2p|host is the copy path it uses, known before setup and recorded as its nccl_algo cell
     * (the --resume key); auto is its own choice, known after setup. */
    int path_is_algo;
    /* 1: does no CUDA work (a test strategy): the driver runs it on a machine without a GPU. */
    int no_gpu;
    /* How its gradient all-reduce costs (reduces only), for the report's α-β fit of its `--bench allreduce` rows and
     * its projection: STRATEGY_AR_NCCL, NCCL's all-reduce (ring or tree): fitted as a ring and projected past this
     * host with NCCL's cost model; STRATEGY_AR_CENTRAL, every GPU's gradients into one GPU and the sum back out:
     * t = 2(n-1)α + 2(n-1)·S·β, not projected. STRATEGY_AR_NONE (0): no all-reduce, or none the report models. */
    strategy_ar_t allreduce;
    /* How it measures the gradient noise scale (--gns-every); STRATEGY_GNS_NONE (0): it does not. */
    strategy_gns_t noise_scale;
    /* 1: trains a language model (GPT-2, engine/gpt2/) as well as the image classifiers; 0: the image classifiers
     * only, and --model gpt2 is refused before anything runs. */
    int lm;
    /* The most GPUs one of its runs can use; 0: no bound. --gpus past it is refused before anything runs (and in
     * --dry-run), rather than ending as a failed row at setup. */
    int max_gpus;
} strategy_info_t;

/* The command's strategies, in the registry's (and --help's) order: X(name) for each. strategies/registry.c makes
 * the table of their code from it, strategies/registry_host.c the table of their properties alone. */
#define STRATEGY_LIST(X) X(single) X(naive) X(nccl) X(pipeline)

/* Each of the command's strategies' properties, defined once (strategy_info.c): its strategy_t points at it, and the
 * host-only build (no CUDA: the report, --dry-run) links it without the strategy's code. */
#define STRATEGY_INFO_DECLARE(name) extern const strategy_info_t strategy_info_##name;
STRATEGY_LIST(STRATEGY_INFO_DECLARE)
#undef STRATEGY_INFO_DECLARE

/* The registry's (strategies/registry.c with the strategies' code, or strategies/registry_host.c with their properties
 * alone; a test's registry may add its own): every strategy's info, NULL-terminated, into out (max entries including
 * the NULL); returns the count. */
int strategy_infos(const strategy_info_t **out, int max);
/* The entry of infos (NULL-terminated) named name, or NULL. */
const strategy_info_t *strategy_info_find(const strategy_info_t *const *infos, const char *name);
