/* default_plan.h — what `./scaling` with no options runs: from the GPUs present and the data sets installed, the
 * sweeps of the default study (one per strategy) and the fresh folder it writes. Host-only: CI tests every GPU count.
 *
 * The study (default_plan_usage prints it): ResNet-18 on Fashion-MNIST (LeNet on MNIST where only MNIST loads,
 * ResNet-18 on synthetic data where neither does), 6 epochs per run, learning rate 0.1 at the per-GPU batch grown
 * linearly with each run's global batch (0.4 at 1024, whichever strategy runs it), one epoch of warm-up and a cosine
 * decay, the test accuracy's target the model's (--target-acc: 92 % for ResNet-18 on Fashion-MNIST), so the answer is
 * the time to a trained model; the reference also measures the gradient noise scale (--gns-every 100):
 *   single     1 GPU, batch 256, and 1024 where the pipeline runs (its reference at the same global batch)
 *   naive      2, 4, ... GPUs and all of them, 256 per GPU (weak scaling)
 *   nccl       the same
 *   pipeline   those GPU counts up to 8 that divide 1024: strong scaling at global batch 1024, 1F1B, 4 micro-batches
 *              (8 where there are more than 4 stages, so every stage has one in flight)
 * LeNet: batch 64 per GPU, 256 for the pipeline. Then the all-reduce benchmark (--bench allreduce) on naive's and
 * nccl's GPU counts, into study_allreduce.csv beside the CSV, so the report has its cost model and projection.
 * On one GPU nothing scales, so the study answers what one GPU can instead, in one sweep of the reference strategy:
 * batches 256, 1024, 4096 and 60000 (the whole training set: one step per epoch) in tf32 and in bf16, the same
 * rate, rule and schedule, 6 epochs. A batch that does not fit ends at setup as an oom row and the sweep goes on, so
 * the ladder finds the largest of its batches that fits. By the model's own count of activation bytes
 * (model_activation_bytes) ResNet-18 on 28x28 images needs 28 / 14 GiB (tf32 / bf16) at 4096 and 409 / 205 GiB at
 * 60000, which fits no GPU of 2026 in either math. The answer is the setting soonest to the target, not the fastest
 * epoch: on one H200 (2026-11-29, 10 epochs, 3 seeds) batch 512 reached 92 % sooner than 256, and 2048 and 4096 at
 * the linearly scaled rate never did (results/tta-h200-2026-11-29). Measured on one H200 (2026-11-24), a run's
 * setup (cuDNN's algorithm search at its batch) is what grows: 1, 5, 7, 14 and 19 s at batch 256 .. 4096, 45 s to
 * the oom of 16384 in tf32 and 68 s before 16384 trained in bf16, so the ladder stops at 4096 and the whole set;
 * the epochs of the six runs that fit take about 26 s: about a minute and a half in all.
 * Why these numbers (results/study-h200x2-2026-11-22, 2 H200s): 256 per GPU is the harness's default batch and
 * keeps data-parallel efficiency near 95 %; the pipeline's best there was 1F1B with 4 micro-batches of a 1024 batch;
 * lr 0.1 at 256 with a warm-up and a cosine decay gave 93.7 % (median of 3 seeds) after 10 epochs on one H200, and
 * 93.4 % after 4. Its runs took about 2 s of setup each (5 s for a pipeline's first) plus their epochs: with 6 epochs
 * the 5 runs on 2 H200s add up to about a minute. */
#pragma once
#include "../options.h"
#include "../../engine/idx.h"

#include <stdio.h>
#include <time.h>

#define PLAN_MAX_SWEEPS 8
#define PLAN_MAX_ARGS 48
#define PLAN_MAX_STAGES 8       /* ResNet-18 has 11 valid pipeline cuts (12 stages), LeNet 9 (10): 8 fit both */

typedef struct {
    int n_gpus;                         /* GPUs present: the largest count the study runs */
    const char *model, *dataset;        /* what every sweep trains */
    char note[1024];                     /* for stderr: why not ResNet-18 on Fashion-MNIST; "" when it is */
    int n_sweeps;
    options_t sweep[PLAN_MAX_SWEEPS];   /* in run order, single first; out points at csv, conv_cache at
                                         * conv_cache */
    char dir[256];                      /* results/default-<UTC YYYYmmddTHHMMSSZ>[-K] */
    char csv[300];                      /* <dir>/study.csv */
    char conv_cache[300];               /* <dir>/conv_algos.tsv: every run of the study runs the same kernels */
    /* On 2 or more GPUs, the all-reduce benchmark after the sweeps, on the replicas' GPU counts, into the file the
     * report looks for beside the CSV: the report's cost model, projection and the model's error at each count. */
    int bench_gpus[OPT_LIST_MAX], n_bench_gpus;     /* 0: no benchmark (one GPU) */
    char bench_csv[320];                /* <dir>/study_allreduce.csv */
    /* The sweeps as command-line words (options_parse keeps pointers into them): a plan is never copied. */
    char data_dir[256];
    char words[PLAN_MAX_SWEEPS][768];
    char *argv[PLAN_MAX_SWEEPS][PLAN_MAX_ARGS];
    int argc[PLAN_MAX_SWEEPS];
} default_plan_t;

/* Plans the study for n_gpus GPUs with the registry's strategies (infos, NULL-terminated), chosen by property: the
 * reference on 1 GPU, every strategy of replicas on 2 and more, every staged one on the stage counts that fit. Data
 * sets under data_root ("data" in the current directory for the command): <data_root>/fashion-mnist when it loads,
 * else <data_root>/mnist, else synthetic data; the loaded set is left in *data (idx_free it). The folder is named from `now` (UTC) under "results"; nothing is created. Returns 0,
 * or 2 with a one-line message in err (no GPU: nothing is loaded). */
int default_plan_make(default_plan_t *p, const strategy_info_t *const *infos, int n_gpus, const char *data_root,
                      time_t now, idx_dataset_t *data, char *err, size_t errlen);
/* Creates the plan's folder (and "results" where missing). A study never appends to an older one: where the folder
 * exists, the first free name with "-2", "-3", ... appended is taken, and csv follows. 0, or 2 with a message. */
int default_plan_create_dir(default_plan_t *p, char *err, size_t errlen);
/* Sweep i as the command that would run it alone: "./scaling --strategy ... --out <csv>". */
void default_plan_command(const default_plan_t *p, int i, char *buf, size_t len);
/* The benchmark as the command that would run it alone: "./scaling --bench allreduce --gpus 2,4 --out <bench_csv>". */
void default_plan_bench_command(const default_plan_t *p, char *buf, size_t len);
/* What a second GPU would add to p's one-GPU study, in words: the sweeps the plan runs on 2 GPUs (the registry's
 * strategies of replicas and staged ones, by property), for the answer. */
void default_plan_second_gpu(const default_plan_t *p, const strategy_info_t *const *infos, char *buf, size_t len);
/* The default study in words, for --help. */
void default_plan_usage(FILE *f, const strategy_info_t *const *infos);
