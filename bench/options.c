/* options.c — the `scaling` command line: one table, an entry per option holding its name, argument, default, help
 * and parser (engine/opt_table.h makes getopt_long's table, the defaults and --help from it; every error is one line
 * naming the option and the bad value), then what follows from the options and the checks parsing cannot make. */
#include "options.h"
#include "../engine/errmsg.h"
#include "../engine/model_info.h"
#include "../strategies/pipeline/pipe_lm.h"
#include "../strategies/pipeline/pipe_schedule.h"
#include "../study/paths.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

const char *const options_models[] = {MODEL_TABLE(MODEL_NAME_STR) NULL};
/* Every --dataset: X(name, default --data-dir, the model kind that learns from it; -1: synthetic, either). */
#define DATASET_TABLE(X)                                                                                               \
    X("fashion-mnist", "data/fashion-mnist", MODEL_IMAGES) X("mnist", "data/mnist", MODEL_IMAGES)                     \
    X("sotu", "data/sotu", MODEL_TOKENS) X("synthetic", "data/synthetic", -1)
#define DATASET_NAME(name, dir, kind) name,
#define DATASET_DIR(name, dir, kind) dir,
#define DATASET_KIND(name, dir, kind) kind,
const char *const options_datasets[] = {DATASET_TABLE(DATASET_NAME) NULL};
/* Parallel to options_datasets: the default --data-dir is a constant, so options_t needs no buffer. */
static const char *const dataset_dirs[] = {DATASET_TABLE(DATASET_DIR) NULL};
static const int dataset_kinds[] = {DATASET_TABLE(DATASET_KIND)};
/* dtype_name()'s spellings, in dtype_t order, so a parsed name maps back to its dtype_t. */
const char *const options_grad_dtypes[] = {DTYPE_TABLE(DTYPE_NAME_STR) NULL};
static const char *const scales[] = {"weak", "strong", NULL};
const char *const options_schedules[] = {SCHED_NAMES, NULL};   /* index = sched_order_t */
const char *const options_benches[] = {"allreduce", NULL};
static const char *const on_off[] = {"on", "off", NULL};
/* --out's default, and the benchmark's beside it under the name `scaling report` looks for (study/paths.h): a study
 * and its benchmark, both run with their defaults, are reported together. */
#define OUT_STEM "results/scaling"
#define OUT_DEFAULT OUT_STEM ".csv"
#define OUT_BENCH OUT_STEM PATHS_ALLREDUCE_SUFFIX

_Static_assert(sizeof(math_t) == sizeof(int) && sizeof(init_t) == sizeof(int) && sizeof(naive_path_t) == sizeof(int) &&
               sizeof(lr_kind_t) == sizeof(int) && sizeof(lr_scaling_t) == sizeof(int) &&
               sizeof(optim_kind_t) == sizeof(int),
               "an enum member of options_t is parsed as the int it is stored in (opt_enum)");

static int parse_dtype(const opt_t *opt, const char *s, void *dst, char *err, size_t errlen) {
    if (opt_check_choice(opt->name, "gradient dtype", options_grad_dtypes, s, err, errlen)) return 2;
    *(dtype_t *)dst = (dtype_t)opt_name_index(options_grad_dtypes, s);
    return 0;
}

static int p_dtype_list(void *o, const opt_t *opt, const char *arg, char *err, size_t errlen) {
    options_t *x = o;
    return opt_list(opt, arg, parse_dtype, x->grad_dtype, sizeof *x->grad_dtype, &x->n_grad_dtype, err, errlen);
}

/* A micro-batch count, or "auto" (OPT_MICRO_AUTO). */
static int parse_micro(const opt_t *opt, const char *s, void *dst, char *err, size_t errlen) {
    if (strcmp(s, "auto") == 0) {
        *(int *)dst = OPT_MICRO_AUTO;
        return 0;
    }
    char *end;
    long v = s[0] >= '1' && s[0] <= '9' ? strtol(s, &end, 10) : 0;
    if (v > 0 && !*end && v <= 1 << 20) {
        *(int *)dst = (int)v;
        return 0;
    }
    return errmsg(2, err, errlen, "--%s: \"%s\" is neither auto nor a positive integer", opt->name, s);
}

static int p_micro_list(void *o, const opt_t *opt, const char *arg, char *err, size_t errlen) {
    options_t *x = o;
    return opt_list(opt, arg, parse_micro, x->micro, sizeof *x->micro, &x->n_micro, err, errlen);
}

int options_dataset_kind(const char *name) {
    int i = opt_name_index(options_datasets, name);
    return i < 0 ? -1 : dataset_kinds[i];
}

// ---- the option table

#define FIELD(m) offsetof(options_t, m)
#define LIST(m) FIELD(m), FIELD(n_##m)

/* The default of the options a model's recipe sets (model_info.h), filled in after parsing where not given. */
#define RECIPE "the model's recipe"

static const opt_t opts[] = {
    {"strategy", "NAME", "single", NULL, opt_str, FIELD(strategy), 0, "strategy name", NULL,
     "parallel strategy (an unknown name prints the valid ones)"},
    {"gpus", "LIST", "1", "1; under mpirun/srun the process count", opt_int_list, LIST(gpus), NULL, NULL,
     "comma-separated GPU counts to sweep, e.g. 1,2,4"},
    {"model", "NAME", "resnet18", NULL, opt_choice, FIELD(model), 0, "model", options_models,
     "network (the models, their default batch and image size: below)"},
    {"model-size", "NAME", NULL, "the model's: gpt2 small", opt_str, FIELD(model_size), 0, "size", NULL,
     "the size of a model that has several: gpt2 tiny (tests), small (124M), medium\n"
     "(350M), large (774M), xl (1.5B); refused for a model of one size"},
    {"image-size", "N", NULL, "the model's", opt_pos_int, FIELD(image_size), 0, NULL, NULL,
     "side of the square images the model trains on: MNIST and Fashion-MNIST are resized\n"
     "on the GPU (bilinear without antialiasing, as F.interpolate), synthetic data is generated at it"},
    {"dataset", "NAME", "fashion-mnist", NULL, opt_choice, FIELD(dataset), 0, "dataset", options_datasets,
     "training data: images (fashion-mnist, mnist) for the image classifiers, the text\n"
     "corpus sotu (GPT-2 tokens, data/sotu/{train,val}.bin) for gpt2, synthetic (random\n"
     "images or tokens: throughput only) for either"},
    {"data-dir", "DIR", NULL, "data/<dataset>", opt_str, FIELD(data_dir), 0, "directory", NULL,
     "directory of the IDX files, or of sotu's train.bin and val.bin"},
    {"batch", "LIST", NULL, "the model's", opt_int_list, LIST(batch), NULL, NULL,
     "batch sizes on one GPU (weak scaling multiplies by the GPU count;\n"
     "strong scaling splits it across the GPUs)"},
    {"lr", "LIST", NULL, RECIPE, opt_double_list, LIST(lr), NULL, NULL,
     "peak learning rates at --lr-base-batch, grown to each run's global batch by\n"
     "--lr-scaling (the model's recipe)"},
    {"lr-schedule", "NAME", NULL, RECIPE, opt_enum, FIELD(lr_schedule), 0, "schedule",
     lr_kind_names,
     "how the rate moves over a run's --epochs after warm-up: constant; step (x0.1 at\n"
     "half, x0.01 at three quarters); cosine (to 0); linear (to 0)"},
    {"warmup-epochs", "X", NULL, RECIPE, opt_number, FIELD(warmup_epochs), 0, NULL, NULL,
     "gradual warm-up: the rate grows linearly, step by step, to the peak over X epochs"},
    {"lr-scaling", "RULE", NULL, RECIPE, opt_enum, FIELD(lr_scaling), 0, "rule",
     lr_scaling_names,
     "the peak rate at global batch B: linear, lr x B / base; sqrt, lr x sqrt(B / base);\n"
     "none, lr"},
    {"lr-base-batch", "N", "0", "each --batch value", opt_count, FIELD(lr_base_batch), 0, NULL, NULL,
     "the global batch --lr is given at (e.g. 256 for a batch sweep that grows the rate)"},
    {"optimizer", "NAME", NULL, RECIPE, opt_enum, FIELD(optimizer), 0, "optimizer",
     optim_names,
     "sgd: momentum SGD as torch.optim.SGD; lars: layer-wise adaptive rates (You et al.\n"
     "2017, trust coefficient 0.001) on every layer's weights and biases (both for the\n"
     "image classifiers); adamw (gpt2): AdamW, betas 0.9 and 0.95, eps 1e-8, decoupled\n"
     "--weight-decay on the matrices only, the gradient clipped to a global norm of 1"},
    {"target-acc", "X", NULL, "the model's on its data set", opt_number, FIELD(target_acc), 0, NULL, NULL,
     "test accuracy (a fraction, e.g. 0.92) a run's time to target is measured to:\n"
     "resnet18 0.92 and lenet 0.85 on fashion-mnist, 0.99 and 0.98 on mnist; 0: none"},
    {"gns-every", "N", "0", NULL, opt_count, FIELD(gns_every), 0, NULL, NULL,
     "measure the gradient noise scale every N steps (0: never). single: from the\n"
     "gradients of half and of the whole batch; naive, nccl (2 GPUs or more): of\n"
     "each replica's shard and of the all-reduced batch"},
    {"scale", "MODE", "weak", NULL, opt_flag, FIELD(weak), 0, "scale", scales,
     "weak: batch and lr grow with the GPUs; strong: fixed global batch"},
    {"epochs", "N", "3", NULL, opt_pos_int, FIELD(epochs), 0, NULL, NULL,
     "epochs per run; epoch 1 is warmup, later epochs are steady"},
    {"seed", "LIST", "1", NULL, opt_u64_list, FIELD(seeds), FIELD(n_seeds), NULL, NULL,
     "comma-separated unsigned RNG seeds (init and data order)"},
    {"momentum", "X", "0", NULL, opt_number, FIELD(momentum), 0, NULL, NULL, "SGD momentum (0: plain SGD)"},
    {"weight-decay", "X", NULL, RECIPE, opt_number, FIELD(weight_decay), 0, NULL, NULL,
     "L2 weight decay (sgd, lars); adamw: the decoupled decay of the matrices"},
    {"math", "LIST", "tf32", NULL, opt_enum_list, LIST(math), "math mode", math_names,
     "arithmetic to sweep, e.g. tf32,bf16.\n"
     "tf32: TF32 tensor cores in cuDNN convolutions, fp32 cuBLAS GEMMs\n"
     "(PyTorch's defaults); fp32: strict IEEE fp32 everywhere; bf16: mixed\n"
     "precision as PyTorch's bf16 autocast (bf16 activations and tensor-core\n"
     "operands, fp32 accumulation, master weights and loss; no loss scaling);\n"
     "fp16: the same in fp16, with torch.amp GradScaler's dynamic loss scale\n"
     "(2^16 to start, halved and the step skipped on an inf or NaN, doubled\n"
     "after 2000 clean steps), decided on the GPU"},
    {"grad-dtype", "LIST", "fp32", NULL, p_dtype_list, LIST(grad_dtype), NULL, options_grad_dtypes,
     "naive, nccl: the gradients' type on the wire, a list to sweep, e.g.\n"
     "fp32,bf16; bf16 and fp16 are DDP's bf16 and fp16 compression hooks\n"
     "(cast, all-reduce in that type, the update reads the sum)"},
    {"init", "NAME", NULL, "the model's", opt_enum, FIELD(init), 0, "init", init_names,
     "weight initialisation (kaiming: torchvision's ResNet initialisation)"},
    {"out", "PATH", OUT_DEFAULT, NULL, opt_str, FIELD(out), 0, "path", NULL,
     "CSV file to append one row per epoch to (directories are created); --bench allreduce writes "
     OUT_BENCH " unless given one, where `scaling report " OUT_DEFAULT "` finds it"},
    {"steps", "N", "0", NULL, opt_count, FIELD(steps), 0, NULL, NULL,
     "cap on optimizer steps per epoch, for smoke tests and profiling (0: whole epoch)"},
    {"naive-path", "PATH", "auto", NULL, opt_enum, FIELD(naive_path), 0, "path", naive_path_names,
     "naive: how gradients reach GPU 0; pipeline: how activations and gradients cross\n"
     "between stages (auto: peer copies where peer access exists)"},
    {"bucket-mb", "X", "25", NULL, opt_pos_number, FIELD(bucket_mb), 0, NULL, NULL,
     "nccl: gradient bucket size in MiB for the all-reduce"},
    {"overlap", "MODE", "on", NULL, opt_flag, FIELD(overlap), 0, "overlap", on_off,
     "nccl: overlap the all-reduce of each bucket with the rest of backward"},
    {"micro-batches", "LIST", "auto", NULL, p_micro_list, FIELD(micro), FIELD(n_micro), NULL, NULL,
     "pipeline: micro-batches per global batch to sweep, e.g. auto,4,8 (each must\n"
     "divide the global batch; auto: the count whose short timed probe is fastest\n"
     "within memory, recorded in the row)"},
    {"schedule", "NAME", "gpipe", NULL, opt_choice, FIELD(schedule), 0, "schedule", options_schedules,
     "pipeline: forward/backward order of the micro-batches (zb: zero bubble, ZB-H1,\n"
     "each backward split into input and weight gradients, the latter in the bubbles)"},
    {"split", "LIST", NULL, "auto, balanced by measured layer times", opt_int_list, LIST(split), NULL, NULL,
     "pipeline: layer indices where stages 2..N start"},
    {"bench", "NAME", NULL, NULL, opt_choice, FIELD(bench), 0, "benchmark", options_benches,
     "run a benchmark instead of training: allreduce sweeps 4 KB..256 MB per strategy"},
    {"resume", NULL, NULL, NULL, opt_set, FIELD(resume), 0, NULL, NULL, "skip configurations already complete in --out"},
    {"trace", "PATH", NULL, NULL, opt_str, FIELD(trace), 0, "path", NULL,
     "write a Chrome-trace/Perfetto JSON timeline of 5 steps of epoch 2 (1 with --epochs 1)\n"
     "per run, from CUDA events (compute, copies and update on every GPU)"},
    {"cuda-graph", "MODE", "on", NULL, opt_flag, FIELD(cuda_graph), 0, "cuda-graph", on_off,
     "single/naive/nccl: replay each step's compute from CUDA graphs (a few launches per\n"
     "step); pipeline: each micro-batch's forward and backward (up to 64 micro-batches);\n"
     "off keeps per-step forward/backward NVTX ranges for Nsight timelines"},
    {"conv-cache", "PATH", NULL, "search in every run", opt_str, FIELD(conv_cache), 0, "path", NULL,
     "convolution algorithms from this file, searched and appended where it has none:\n"
     "runs that share it run the same kernels (the search is timed, so two runs can\n"
     "pick differently, and in bf16 that changes rounding; scripts/study.sh shares one)"},
    {"timeout", "SECONDS", "300", NULL, opt_pos_number, FIELD(timeout_s), 0, NULL, NULL,
     "deadline of every wait on another rank or GPU (collectives, synchronisations):\n"
     "past it the run ends with a timeout row (doc/faults.md)"},
    {"retry-failed", NULL, NULL, NULL, opt_set, FIELD(retry_failed), 0, NULL, NULL,
     "with --resume, run again the configurations whose last run failed or timed out"},
    {"dry-run", NULL, NULL, NULL, opt_set, FIELD(dry_run), 0, NULL, NULL,
     "print the runs the sweep would make (GPUs, global batch, lr, M after the scaling rules),\n"
     "their count and, from --out's earlier rows of the same configurations, an estimated time;\n"
     "run nothing, write nothing, need no GPU"},
    {"version", NULL, NULL, NULL, opt_set, FIELD(version), 0, NULL, NULL,
     "print the commit and the CUDA, cuDNN, NCCL and MPI versions built against, and exit"},
    {"help", NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, "print this help and exit"},
};

static const opt_table_t table = {opts, (int)(sizeof opts / sizeof opts[0]), 0};
_Static_assert(sizeof opts / sizeof opts[0] <= OPT_TABLE_MAX, "options_t.given has one bit per option");

int options_given(const options_t *o, const char *name) {
    int i = opt_index(&table, name);
    return i >= 0 && (o->given >> i & 1);
}

int options_parse(options_t *o, int argc, char **argv, char *err, size_t errlen) {
    memset(o, 0, sizeof *o);
    int rc = opt_parse(&table, o, &o->given, argc, argv, NULL, NULL, err, errlen);
    /* the command's name as typed, less its folder: --help fits 80 columns wherever the binary lies */
    const char *prog = argc > 0 && argv[0] ? argv[0] : "scaling", *slash = strrchr(prog, '/');
    if (rc == 1) options_usage(stdout, slash ? slash + 1 : prog);
    if (rc) return rc;
    /* Defaults that follow from other options. */
    if (!o->data_dir) o->data_dir = dataset_dirs[opt_name_index(options_datasets, o->dataset)];
    const model_info_t *mi = model_info(o->model);   /* the parser checked the name */
    /* The model table's default init is a name of init_names (a bug otherwise, said as such). */
    if (!options_given(o, "init") && opt_check_choice("init", "init", init_names, mi->init, err, errlen)) return 2;
    if (!options_given(o, "init")) o->init = (init_t)opt_name_index(init_names, mi->init);
    if (!options_given(o, "batch")) o->batch[0] = mi->batch, o->n_batch = 1;
    if (!options_given(o, "image-size")) o->image_size = mi->image;
    if (!options_given(o, "target-acc")) o->target_acc = model_info_target(mi, o->dataset);
    /* The model's recipe and size where not given. */
    if (!options_given(o, "optimizer")) o->optimizer = mi->optimizer;
    if (!options_given(o, "lr-schedule")) o->lr_schedule = mi->lr_schedule;
    if (!options_given(o, "lr-scaling")) o->lr_scaling = mi->lr_scaling;
    if (!options_given(o, "lr")) o->lr[0] = mi->lr, o->n_lr = 1;
    if (!options_given(o, "warmup-epochs")) o->warmup_epochs = mi->warmup_epochs;
    if (!options_given(o, "weight-decay")) o->weight_decay = mi->weight_decay;
    if (!options_given(o, "model-size")) o->model_size = mi->size;
    if (o->model_size) snprintf(o->model_cell, sizeof o->model_cell, "%.20s-%.20s", o->model, o->model_size);
    if (o->bench && !options_given(o, "out")) o->out = OUT_BENCH;   /* the training CSV's schema differs */
    return 0;
}

static int check_list(const char *opt, int n, char *err, size_t errlen) {
    if (n < 1) return errmsg(2, err, errlen, "--%s: empty list", opt);
    if (n > OPT_LIST_MAX) return errmsg(2, err, errlen, "--%s: more than %d values", opt, OPT_LIST_MAX);
    return 0;
}

/* The names of a table's entries where keep[i] (names NULL-terminated), as "a, b" into buf: the models, data sets or
 * optimizers a message offers, from their tables. */
static void join_where(char *buf, size_t len, const char *const *names, const int *keep) {
    const char *pick[OPT_LIST_MAX + 1];
    int n = 0;
    for (int i = 0; names[i] && i < OPT_LIST_MAX; i++)   /* keep has OPT_LIST_MAX entries */
        if (keep[i]) pick[n++] = names[i];
    pick[n] = NULL;
    opt_join_names(buf, len, pick);
}

/* The names of the strategies for which has() holds, joined as choices are (opt_join_names): what a refusal offers. */
static void strategies_having(const strategy_info_t *const *strategies, int (*has)(const strategy_info_t *),
                              char *valid, size_t len) {
    const char *names[64];
    int n = 0;
    for (int i = 0; strategies[i] && n < 63; i++)
        if (has(strategies[i])) names[n++] = strategies[i]->name;
    names[n] = NULL;
    opt_join_names(valid, len, names);
}
static int trains_lm(const strategy_info_t *s) { return s->lm; }
static int reduces(const strategy_info_t *s) { return s->reduces; }
static int staged(const strategy_info_t *s) { return s->staged; }
static int measures_noise(const strategy_info_t *s) { return s->noise_scale != 0; }

/* What the model's kind (images or tokens) allows: its data, optimizer, size, math and strategy, each refused in one
 * line naming why, before anything is read or written. 0, or 2 with the message in err. */
static int check_model_kind(const options_t *o, const model_info_t *mi, const strategy_info_t *st,
                            const strategy_info_t *const *strategies, char *err, size_t errlen) {
    int lm = model_info_lm(mi), data_kind = options_dataset_kind(o->dataset);
    int keep[OPT_LIST_MAX] = {0};
    char valid[256];
    if (options_given(o, "model-size") && !mi->size) {
        for (int i = 0; model_infos[i].name && i < OPT_LIST_MAX; i++) keep[i] = model_infos[i].size != NULL;
        join_where(valid, sizeof valid, options_models, keep);
        return errmsg(2, err, errlen, "--model-size: model %s has one size (models with sizes: %s)", o->model, valid);
    }
    if (mi->size && !model_info_size_ok(mi, o->model_size)) {
        model_info_sizes(mi, valid, sizeof valid);
        return errmsg(2, err, errlen, "--model-size: unknown size \"%s\" of %s (valid: %s)", o->model_size, o->model,
                      valid);
    }
    if (data_kind >= 0 && data_kind != (int)mi->kind) {
        for (int i = 0; options_datasets[i] && i < OPT_LIST_MAX; i++) {
            int kind = options_dataset_kind(options_datasets[i]);
            keep[i] = kind < 0 || kind == (int)mi->kind;    /* synthetic data is generated for either kind */
        }
        join_where(valid, sizeof valid, options_datasets, keep);
        return errmsg(2, err, errlen, "--dataset %s: model %s learns from %s, and %s holds %s (%s takes: %s)",
                      o->dataset, o->model, lm ? "tokens" : "images", o->dataset, lm ? "images" : "tokens", o->model,
                      valid);
    }
    if (optim_for_tokens[o->optimizer] != lm) {
        for (int i = 0; i < OPTIM_COUNT; i++) keep[i] = optim_for_tokens[i] == lm;
        join_where(valid, sizeof valid, optim_names, keep);
        return errmsg(2, err, errlen, "--optimizer %s: it steps %s, not model %s (%s takes: %s)",
                      optim_names[o->optimizer], lm ? "the image classifiers" : "a language model", o->model, o->model,
                      valid);
    }
    if (!lm) return 0;
    for (int i = 0; i < o->n_math; i++)
        if (math_loss_scaled(o->math[i]))
            return errmsg(2, err, errlen, "--math %s: model %s trains in fp32, tf32 or bf16 (bf16 with fp32 master "
                          "weights); fp16 would need a loss scale it does not have", math_name(o->math[i]), o->model);
    /* Options that would silently do nothing for it. */
    static const char *const not_lm[][2] = {
        {"image-size", "it takes sequences of tokens of its context, not images"},
        {"target-acc", "a language model has no test accuracy: its rows hold the held-out loss (test_loss)"},
        {"init", "GPT-2 initialises as OpenAI's (normal 0.02, residual projections scaled by the depth)"},
        {"momentum", "adamw's moments are its betas, 0.9 and 0.95"},
        {"gns-every", "not yet: the gradient noise scale is measured for the image classifiers"},
        {"conv-cache", "it has no convolutions"},
    };
    for (size_t i = 0; i < sizeof not_lm / sizeof not_lm[0]; i++)
        if (options_given(o, not_lm[i][0]))
            return errmsg(2, err, errlen, "--%s: not with --model %s (%s)", not_lm[i][0], o->model, not_lm[i][1]);
    if (st && !st->lm) {
        char valid[256];
        strategies_having(strategies, trains_lm, valid, sizeof valid);
        return errmsg(2, err, errlen, "--model %s: strategy %s does not train a language model yet (it is built "
                      "for the image classifiers' layers; --strategy %s %s)", o->model, o->strategy, valid,
                      strchr(valid, ',') ? "do" : "does");
    }
    /* GPT-2's backward has no separate weight pass for zero bubble to defer */
    if (st && st->staged && o->schedule && !strcmp(o->schedule, options_schedules[SCHED_ZB]))
        return errmsg(2, err, errlen, "--schedule zb: not with --model %s (" PIPE_LM_ZB_WHY ")", o->model);
    return 0;
}

/* What the strategy's properties allow: a 2-byte wire (a gradient reduction's), micro-batches and a split (a staged
 * strategy's), the noise scale (a strategy that measures it). 0, or 2 with the message. */
static int check_strategy(const options_t *o, const strategy_info_t *st, const strategy_info_t *const *strategies,
                          char *err, size_t errlen) {
    int narrow = -1;   /* a 2-byte wire asked for */
    for (int i = 0; i < o->n_grad_dtype; i++) {
        if ((int)o->grad_dtype[i] < 0 || o->grad_dtype[i] >= DTYPE_COUNT)
            return errmsg(2, err, errlen, "--grad-dtype: unknown gradient dtype %d", (int)o->grad_dtype[i]);
        if (dtype_is_low(o->grad_dtype[i])) narrow = i;
    }
    /* Only a gradient reduction has a wire to narrow; the all-reduce benchmark measures every dtype itself. */
    if (narrow >= 0 && st && !o->bench && !st->reduces) {
        char valid[256];
        const char *t = dtype_name(o->grad_dtype[narrow]);
        strategies_having(strategies, reduces, valid, sizeof valid);
        return errmsg(2, err, errlen, "--grad-dtype %s: strategy %s has no gradient reduction (%s gradients apply "
                      "to: %s)", t, o->strategy, t, valid);
    }
    /* Micro-batches and splits are a staged strategy's: for another a list would repeat identical runs. */
    int micro_given = options_given(o, "micro-batches") && (o->n_micro != 1 || o->micro[0] != 1);
    if (st && !st->staged && (micro_given || o->n_split)) {
        char valid[256];
        strategies_having(strategies, staged, valid, sizeof valid);
        return errmsg(2, err, errlen, "--%s applies to --strategy %s only (strategy is %s)",
                      micro_given ? "micro-batches" : "split", valid, o->strategy);
    }
    for (int i = 0; o->n_split && i < o->n_gpus; i++)   /* one hand split fits one stage count */
        if (o->gpus[i] != o->n_split + 1)
            return errmsg(2, err, errlen, "--split gives %d stage start%s (%d stages) but --gpus has %d", o->n_split,
                        o->n_split == 1 ? "" : "s", o->n_split + 1, o->gpus[i]);
    if (o->gns_every > 0 && st && !st->noise_scale) {
        char valid[256];
        strategies_having(strategies, measures_noise, valid, sizeof valid);
        return errmsg(2, err, errlen, "--gns-every: strategy %s does not measure the gradient noise scale (%s does)",
                      o->strategy, valid);
    }
    return 0;
}

/* n_devices < 0 skips the device-count check (used where devices are not queried, e.g. host tests). */
int options_validate(const options_t *o, const strategy_info_t *const *strategies, int n_devices, char *err,
                     size_t errlen) {
    if (err && errlen) err[0] = '\0';
    if (!o->strategy || !o->model || !o->dataset || !o->data_dir || !o->out)
        return errmsg(2, err, errlen, "options not filled in (call options_parse first)");
    if (o->retry_failed && !o->resume)
        return errmsg(2, err, errlen, "--retry-failed: only with --resume (it picks which runs of --out to repeat)");
    if (o->dry_run && o->bench)
        return errmsg(2, err, errlen, "--dry-run: not with --bench (the benchmark has no sweep to list)");
    /* What the benchmark takes: another option given with it would silently do nothing. --grad-dtype is accepted
     * (and needs none: the benchmark times every dtype itself) so that a study's scripts can pass one list to both. */
    static const char *const bench_takes[] = {"bench", "gpus", "strategy", "naive-path", "out", "grad-dtype", NULL};
    for (int i = 0; o->bench && i < table.n; i++)
        if ((o->given >> i & 1) && opt_name_index(bench_takes, opts[i].name) < 0)
            return errmsg(2, err, errlen, "--%s: not with --bench (the benchmark takes --gpus, --strategy, "
                          "--naive-path and --out)", opts[i].name);
    const strategy_info_t *st = strategy_info_find(strategies, o->strategy);
    if (strategies && !st) {
        const char *names[64];
        int n = 0;
        for (int i = 0; strategies[i] && n < 63; i++) names[n++] = strategies[i]->name;
        names[n] = NULL;
        return opt_check_choice("strategy", "strategy", names, o->strategy, err, errlen);
    }
    if (opt_check_choice("model", "model", options_models, o->model, err, errlen)) return 2;
    const model_info_t *mi = model_info(o->model);
    if (!mi) return errmsg(2, err, errlen, "--model: %s is not in the model table", o->model);
    if (options_given(o, "image-size") && !model_info_lm(mi) && !mi->resizable && o->image_size != mi->image)
        return errmsg(2, err, errlen, "--image-size %d: model %s has a fixed %dx%d input (its dense layers are sized "
                      "for it)", o->image_size, o->model, mi->image, mi->image);
    if (o->image_size < mi->stride)
        return errmsg(2, err, errlen, "--image-size %d is too small for %s: it down-samples %d-fold, so its last "
                      "feature map would be smaller than 1x1 (at least %d)", o->image_size, o->model, mi->stride,
                      mi->stride);
    if (o->image_size > OPT_IMAGE_MAX)
        return errmsg(2, err, errlen, "--image-size %d is larger than %d", o->image_size, OPT_IMAGE_MAX);
    if (opt_check_choice("dataset", "dataset", options_datasets, o->dataset, err, errlen)) return 2;
    if ((int)o->optimizer < 0 || o->optimizer >= OPTIM_COUNT)
        return errmsg(2, err, errlen, "--optimizer: unknown optimizer %d", (int)o->optimizer);
    if (check_model_kind(o, mi, st, strategies, err, errlen)) return 2;
    if (o->bucket_mb > OPT_BUCKET_MB_MAX)   /* its byte count would not fit the size_t it becomes (bench/run.c) */
        return errmsg(2, err, errlen, "--bucket-mb %g is larger than %d (1 TiB)", o->bucket_mb, OPT_BUCKET_MB_MAX);
    if (check_list("gpus", o->n_gpus, err, errlen) || check_list("batch", o->n_batch, err, errlen) ||
        check_list("lr", o->n_lr, err, errlen) || check_list("seed", o->n_seeds, err, errlen) ||
        check_list("micro-batches", o->n_micro, err, errlen) || check_list("math", o->n_math, err, errlen) ||
        check_list("grad-dtype", o->n_grad_dtype, err, errlen))
        return 2;
    if (o->epochs < 1) return errmsg(2, err, errlen, "--epochs: \"%d\" is not a positive integer", o->epochs);
    if (o->target_acc > 1)
        return errmsg(2, err, errlen, "--target-acc %g: a test accuracy is a fraction of 1 (0.92 for 92 %%)",
                      o->target_acc);
    if (o->warmup_epochs > o->epochs)
        return errmsg(2, err, errlen, "--warmup-epochs %g is longer than the run's %d epochs", o->warmup_epochs,
                      o->epochs);
    if (check_strategy(o, st, strategies, err, errlen)) return 2;
    int max_gpus = 0;
    for (int i = 0; i < o->n_gpus; i++) {
        if (o->gpus[i] < 1) return errmsg(2, err, errlen, "--gpus: \"%d\" is not a positive integer", o->gpus[i]);
        if (o->gpus[i] > max_gpus) max_gpus = o->gpus[i];
    }
    for (int i = 0; o->gns_every > 0 && st && st->noise_scale == STRATEGY_GNS_REPLICAS && i < o->n_gpus; i++)
        if (o->gpus[i] < 2)
            return errmsg(2, err, errlen, "--gns-every: strategy %s measures the noise scale between its replicas, "
                          "so on 2 GPUs or more (--gpus has %d; strategy single measures it on one)", st->name,
                          o->gpus[i]);
    /* The strategy's own bound, from its properties: known now, so it is no failed row at setup. The benchmark's
     * --strategy picks among the reducing strategies and has none. */
    if (st && !o->bench && st->max_gpus > 0 && max_gpus > st->max_gpus)
        return errmsg(2, err, errlen, "--gpus %d: strategy %s runs on at most %d GPU%s (another --strategy runs on "
                      "more)", max_gpus, st->name, st->max_gpus, st->max_gpus == 1 ? "" : "s");
    if (n_devices >= 0 && max_gpus > n_devices) {
        if (n_devices == 0)
            return errmsg(2, err, errlen, "--gpus: %d GPU%s requested but no CUDA device present", max_gpus,
                        max_gpus == 1 ? "" : "s");
        return errmsg(2, err, errlen, "--gpus: %d GPU%s requested but only %d CUDA device%s present", max_gpus,
                    max_gpus == 1 ? "" : "s", n_devices, n_devices == 1 ? "" : "s");
    }
    for (int b = 0; b < o->n_batch; b++) {
        if (o->batch[b] < 1) return errmsg(2, err, errlen, "--batch: \"%d\" is not a positive integer", o->batch[b]);
        for (int g = 0; !o->weak && g < o->n_gpus; g++)
            if (o->batch[b] % o->gpus[g])
                return errmsg(2, err, errlen, "--batch %d is not divisible by %d GPU%s (strong scaling)", o->batch[b],
                            o->gpus[g], o->gpus[g] == 1 ? "" : "s");
    }
    return 0;
}

int options_for_world(options_t *o, int world, char *err, size_t errlen) {
    if (err && errlen) err[0] = '\0';
    if (!options_given(o, "gpus")) {
        o->gpus[0] = world;
        o->n_gpus = 1;
        return 0;
    }
    for (int i = 0; i < o->n_gpus; i++)
        if (o->gpus[i] != world)
            return errmsg(2, err, errlen, "--gpus %d, but %d processes were started: with one process per GPU, --gpus is "
                        "the number of processes (or leave it out)", o->gpus[i], world);
    return 0;
}

void options_usage(FILE *f, const char *prog) {
    /* The subcommands first: `scaling report` and `scaling tsv` take their own arguments, not these options. */
    fprintf(f, "Usage: %s [options]                 a sweep; with none, the default study\n"
               "       %s report STUDY.csv [options] REPORT.md and figures (its own --help)\n"
               "       %s tsv FILE                   a CSV as tab-separated columns\n\n"
               "Trains every combination of\n"
               "  --gpus x --batch x --lr x --seed x --math x --grad-dtype x --micro-batches\n", prog, prog, prog);
    opt_wrap(f, "in that order, the last innermost (the precisions of one configuration run back to back), with one "
             "strategy, printing a table per run and appending one CSV row per epoch to --out.", 0, 0);
    fprintf(f, "\n\nOptions:\n");
    opt_usage(f, &table);
    fputc('\n', f);
    opt_wrap(f, "Weak scaling: global batch = batch x gpus, lr grown by --lr-scaling (linear: lr x gpus; sqrt: lr x "
             "sqrt(gpus)). Strong scaling: global batch = batch (must divide by every GPU count), lr "
             "unchanged.", 0, 0);
    fprintf(f, "\n\n");
    opt_wrap(f, "Models (--model), with their defaults of --batch and --image-size, and their recipe (the defaults of "
             "--optimizer, --lr, --lr-schedule, --warmup-epochs, --lr-scaling, --weight-decay):", 0, 0);
    fputc('\n', f);
    for (int i = 0; model_infos[i].name; i++) {
        const model_info_t *mi = &model_infos[i];
        char img[48], line[512];
        if (model_info_lm(mi)) {    /* a language model: sequences of tokens, its sizes */
            char sizes[128];
            model_info_sizes(mi, sizes, sizeof sizes);
            snprintf(line, sizeof line, "  %-10s batch %-4d %-17s %s; --model-size %s (default %s); synthetic: "
                     "random tokens", mi->name, mi->batch, "sequences", mi->summary, sizes, mi->size);
        } else {
            snprintf(img, sizeof img, mi->resizable ? "%d (>= %d)" : "%d (fixed)", mi->image, mi->stride);
            snprintf(line, sizeof line, "  %-10s batch %-4d image %-11s %s; synthetic: %dx%d, %d classes", mi->name,
                     mi->batch, img, mi->summary, mi->synth_channels, mi->image, mi->synth_classes);
        }
        size_t used = strlen(line);
        snprintf(line + used, sizeof line - used,
                 "; recipe: %s at %g, %s, warm-up %g epochs, %s scaling, weight decay %g", optim_names[mi->optimizer],
                 mi->lr, lr_kind_names[mi->lr_schedule], mi->warmup_epochs, lr_scaling_names[mi->lr_scaling],
                 mi->weight_decay);
        opt_wrap(f, line, 0, 13);
        fputc('\n', f);
    }
}
