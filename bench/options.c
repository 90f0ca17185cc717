/* options.c — the `scaling` command line: one getopt_long table with a parallel help table, so --help and the
 * parser cannot drift; every error is one line naming the option and the bad value. */
#include "options.h"
#include "../engine/errmsg.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const options_models[] = {"lenet", "resnet18", NULL};
const char *const options_datasets[] = {"fashion-mnist", "mnist", "synthetic", NULL};
const char *const options_maths[] = {"fp32", "tf32", "bf16", NULL};
/* dtype_name()'s spellings, so a parsed name maps back to its dtype_t. */
const char *const options_grad_dtypes[] = {"fp32", "bf16", NULL};
const char *const options_inits[] = {"normal", "xavier", NULL};
static const char *const scales[] = {"weak", "strong", NULL};
const char *const options_naive_paths[] = {"auto", "p2p", "host", NULL};
const char *const options_schedules[] = {"gpipe", "1f1b", NULL};
const char *const options_benches[] = {"allreduce", NULL};
static const char *const on_off[] = {"on", "off", NULL};
/* Parallel to options_datasets: the default --data-dir is a constant, so options_t needs no buffer. */
static const char *const dataset_dirs[] = {"data/fashion-mnist", "data/mnist", "data/synthetic", NULL};

/* Long-only options get codes above any char, so getopt's optopt identifies them unambiguously. */
enum {
    OPT_HELP = 'h',
    OPT_STRATEGY = 256, OPT_GPUS, OPT_MODEL, OPT_DATASET, OPT_DATA_DIR, OPT_BATCH, OPT_LR, OPT_SCALE,
    OPT_EPOCHS, OPT_SEED, OPT_MOMENTUM, OPT_WEIGHT_DECAY, OPT_MATH, OPT_INIT, OPT_OUT, OPT_STEPS,
    OPT_NAIVE_PATH, OPT_BUCKET_MB, OPT_OVERLAP, OPT_MICRO_BATCHES, OPT_SCHEDULE, OPT_SPLIT, OPT_BENCH, OPT_RESUME,
    OPT_TRACE, OPT_CUDA_GRAPH, OPT_GRAD_DTYPE, OPT_CONV_CACHE, OPT_TIMEOUT, OPT_RETRY_FAILED,
};

static const struct option long_opts[] = {
    {"strategy",     required_argument, NULL, OPT_STRATEGY},
    {"gpus",         required_argument, NULL, OPT_GPUS},
    {"model",        required_argument, NULL, OPT_MODEL},
    {"dataset",      required_argument, NULL, OPT_DATASET},
    {"data-dir",     required_argument, NULL, OPT_DATA_DIR},
    {"batch",        required_argument, NULL, OPT_BATCH},
    {"lr",           required_argument, NULL, OPT_LR},
    {"scale",        required_argument, NULL, OPT_SCALE},
    {"epochs",       required_argument, NULL, OPT_EPOCHS},
    {"seed",         required_argument, NULL, OPT_SEED},
    {"momentum",     required_argument, NULL, OPT_MOMENTUM},
    {"weight-decay", required_argument, NULL, OPT_WEIGHT_DECAY},
    {"math",         required_argument, NULL, OPT_MATH},
    {"grad-dtype",   required_argument, NULL, OPT_GRAD_DTYPE},
    {"init",         required_argument, NULL, OPT_INIT},
    {"out",          required_argument, NULL, OPT_OUT},
    {"steps",        required_argument, NULL, OPT_STEPS},
    {"naive-path",   required_argument, NULL, OPT_NAIVE_PATH},
    {"bucket-mb",    required_argument, NULL, OPT_BUCKET_MB},
    {"overlap",      required_argument, NULL, OPT_OVERLAP},
    {"micro-batches", required_argument, NULL, OPT_MICRO_BATCHES},
    {"schedule",     required_argument, NULL, OPT_SCHEDULE},
    {"split",        required_argument, NULL, OPT_SPLIT},
    {"bench",        required_argument, NULL, OPT_BENCH},
    {"resume",       no_argument,       NULL, OPT_RESUME},
    {"trace",        required_argument, NULL, OPT_TRACE},
    {"cuda-graph",   required_argument, NULL, OPT_CUDA_GRAPH},
    {"conv-cache",   required_argument, NULL, OPT_CONV_CACHE},
    {"timeout",      required_argument, NULL, OPT_TIMEOUT},
    {"retry-failed", no_argument,       NULL, OPT_RETRY_FAILED},
    {"help",         no_argument,       NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

/* Same order as long_opts. choices, when set, is printed as the valid values (the lists the parser checks). */
typedef struct {
    const char *arg;
    const char *help;               /* '\n' starts a continuation line */
    const char *const *choices;
    const char *def;
} opt_help_t;

static const opt_help_t opt_help[] = {
    {"NAME", "parallel strategy (an unknown name prints the valid ones)", NULL, "single"},
    {"LIST", "comma-separated GPU counts to sweep, e.g. 1,2,4", NULL, "1; under mpirun/srun the process count"},
    {"NAME", "network", options_models, "resnet18"},
    {"NAME", "training data", options_datasets, "fashion-mnist"},
    {"DIR",  "directory of the IDX files", NULL, "data/<dataset>"},
    {"LIST", "batch sizes on one GPU (weak scaling multiplies by the GPU count;\n"
             "strong scaling splits it across the GPUs)", NULL, "256"},
    {"LIST", "learning rates on one GPU (weak scaling multiplies by the GPU count)", NULL, "0.1"},
    {"MODE", "weak: batch and lr grow with the GPUs; strong: fixed global batch", scales, "weak"},
    {"N",    "epochs per run; epoch 1 is warmup, later epochs are steady", NULL, "3"},
    {"LIST", "comma-separated unsigned RNG seeds (init and data order)", NULL, "1"},
    {"X",    "SGD momentum (0: plain SGD)", NULL, "0"},
    {"X",    "L2 weight decay", NULL, "0"},
    {"LIST", "arithmetic to sweep, e.g. tf32,bf16.\n"
             "tf32: TF32 tensor cores in cuDNN convolutions, fp32 cuBLAS GEMMs\n"
             "(PyTorch's defaults); fp32: strict IEEE fp32 everywhere; bf16: mixed\n"
             "precision as PyTorch's bf16 autocast (bf16 activations and tensor-core\n"
             "operands, fp32 accumulation, master weights and loss; no loss scaling)", options_maths, "tf32"},
    {"LIST", "naive, nccl: the gradients' type on the wire, a list to sweep, e.g.\n"
             "fp32,bf16; bf16 is DDP's bf16 compression hook (cast, all-reduce in\n"
             "bf16, cast back into the fp32 gradients)", options_grad_dtypes, "fp32"},
    {"NAME", "weight initialisation", options_inits, "normal for resnet18, xavier for lenet"},
    {"PATH", "CSV file to append one row per epoch to (directories are created);\n"
             "--bench allreduce writes results/allreduce.csv unless given one", NULL, "results/scaling.csv"},
    {"N",    "cap on optimizer steps per epoch, for smoke tests and profiling (0: whole epoch)", NULL, "0"},
    {"PATH", "naive: how gradients reach GPU 0; pipeline: how activations and gradients cross\n"
             "between stages (auto: peer copies where peer access exists)", options_naive_paths, "auto"},
    {"X",    "nccl: gradient bucket size in MiB for the all-reduce", NULL, "25"},
    {"MODE", "nccl: overlap the all-reduce of each bucket with the rest of backward", on_off, "on"},
    {"LIST", "pipeline: micro-batches per global batch to sweep, e.g. 1,2,4,8 (each must\n"
             "divide the global batch)", NULL, "1"},
    {"NAME", "pipeline: forward/backward order of the micro-batches", options_schedules, "gpipe"},
    {"LIST", "pipeline: layer indices where stages 2..N start", NULL, "auto, balanced by measured layer times"},
    {"NAME", "run a benchmark instead of training: allreduce sweeps 4 KB..256 MB per strategy",
             options_benches, NULL},
    {NULL,   "skip configurations already complete in --out", NULL, NULL},
    {"PATH", "write a Chrome-trace/Perfetto JSON timeline of 5 steps of epoch 2 (1 with --epochs 1)\n"
             "per run, from CUDA events (compute, copies and update on every GPU)", NULL, NULL},
    {"MODE", "single/naive/nccl: replay each step's compute from CUDA graphs (a few launches per\n"
             "step); pipeline: each micro-batch's forward and backward (up to 64 micro-batches);\n"
             "off keeps per-step forward/backward NVTX ranges for Nsight timelines", on_off, "on"},
    {"PATH", "convolution algorithms from this file, searched and appended where it has none:\n"
             "runs that share it run the same kernels (the search is timed, so two runs can\n"
             "pick differently, and in bf16 that changes rounding; scripts/study.sh shares one)", NULL,
             "search in every run"},
    {"SECONDS", "deadline of every wait on another rank or GPU (collectives, synchronisations):\n"
             "past it the run ends with a timeout row (doc/faults.md)", NULL, "300"},
    {NULL,   "with --resume, run again the configurations whose last run failed or timed out", NULL, NULL},
    {NULL,   "print this help and exit", NULL, NULL},
};

_Static_assert(sizeof long_opts / sizeof long_opts[0] == sizeof opt_help / sizeof opt_help[0] + 1,
               "every long option needs exactly one help entry");


static void join_names(char *buf, size_t len, const char *const *names) {
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; names && names[i]; i++) {
        int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", names[i]);
        if (n < 0 || (size_t)n >= len - used) break;
        used += (size_t)n;
    }
}

static int name_index(const char *const *names, const char *s) {
    for (int i = 0; names && names[i]; i++)
        if (strcmp(names[i], s) == 0) return i;
    return -1;
}

/* "unknown model "vgg" (valid: lenet, resnet18)": `what` is the option name without dashes. */
static int check_choice(const char *opt, const char *what, const char *const *names, const char *s,
                        char *err, size_t errlen) {
    if (name_index(names, s) >= 0) return 0;
    char valid[256];
    join_names(valid, sizeof valid, names);
    return errmsg(2, err, errlen, "--%s: unknown %s \"%s\" (valid: %s)", opt, what, s, valid);
}

/* strtol/strtod accept leading blanks and signs we do not want to silently take, so items must start
 * with a digit (or '.', or '-' for numbers where the sign earns its own message). */
static int starts_number(const char *s, int allow_minus) {
    if (allow_minus && *s == '-') s++;
    return (*s >= '0' && *s <= '9') || (*s == '.' && s[1] >= '0' && s[1] <= '9');
}

static int parse_pos_int(const char *opt, const char *s, int *out, char *err, size_t errlen) {
    char *end;
    errno = 0;
    long v = starts_number(s, 1) ? strtol(s, &end, 10) : 0;
    if (!starts_number(s, 1) || *end || errno || v <= 0 || v > INT_MAX)
        return errmsg(2, err, errlen, "--%s: \"%s\" is not a positive integer", opt, s);
    *out = (int)v;
    return 0;
}

static int parse_u64(const char *opt, const char *s, unsigned long long *out, char *err, size_t errlen) {
    char *end;
    errno = 0;
    unsigned long long v = starts_number(s, 0) ? strtoull(s, &end, 10) : 0;
    if (!starts_number(s, 0) || *end || errno)
        return errmsg(2, err, errlen, "--%s: \"%s\" is not an unsigned integer", opt, s);
    *out = v;
    return 0;
}

/* positive: > 0 required, otherwise >= 0. */
static int parse_number(const char *opt, const char *s, int positive, double *out, char *err, size_t errlen) {
    char *end;
    errno = 0;
    double v = starts_number(s, 1) ? strtod(s, &end) : 0;
    if (!starts_number(s, 1) || *end)
        return errmsg(2, err, errlen, "--%s: \"%s\" is not a number", opt, s);
    if (!isfinite(v) || errno == ERANGE)
        return errmsg(2, err, errlen, "--%s: \"%s\" is not a finite number", opt, s);
    if (positive ? !(v > 0) : !(v >= 0))
        return errmsg(2, err, errlen, "--%s: \"%s\" must be a %s number", opt, s,
                    positive ? "positive" : "non-negative");
    *out = v;
    return 0;
}

/* A name from names, stored as names' own pointer so it outlives argv and the scratch copy it was cut from. */
static int parse_name(const char *opt, const char *what, const char *const *names, const char *s, const char **out,
                      char *err, size_t errlen) {
    if (check_choice(opt, what, names, s, err, errlen)) return 2;
    *out = names[name_index(names, s)];
    return 0;
}

static int parse_dtype(const char *opt, const char *s, dtype_t *out, char *err, size_t errlen) {
    const char *name;
    if (parse_name(opt, "gradient dtype", options_grad_dtypes, s, &name, err, errlen)) return 2;
    *out = strcmp(name, dtype_name(DTYPE_BF16)) == 0 ? DTYPE_BF16 : DTYPE_FP32;
    return 0;
}

typedef enum { LIST_INT, LIST_DOUBLE, LIST_U64, LIST_MATH, LIST_DTYPE } list_kind_t;

/* Splits a comma list into a scratch copy, so the message can quote the bad item alone. */
static int parse_list(const char *opt, const char *arg, list_kind_t kind, void *dst, int *n,
                      char *err, size_t errlen) {
    size_t len = strlen(arg);
    char item[128];
    int count = 0;
    if (len == 0) return errmsg(2, err, errlen, "--%s: empty list", opt);
    for (const char *p = arg;; ) {
        const char *comma = strchr(p, ',');
        size_t ilen = comma ? (size_t)(comma - p) : strlen(p);
        if (ilen == 0) return errmsg(2, err, errlen, "--%s: empty item in list \"%s\"", opt, arg);
        if (count == OPT_LIST_MAX)
            return errmsg(2, err, errlen, "--%s: more than %d values in \"%s\"", opt, OPT_LIST_MAX, arg);
        if (ilen >= sizeof item) ilen = sizeof item - 1;    /* too long to be valid; still quoted in the error */
        memcpy(item, p, ilen);
        item[ilen] = '\0';
        int rc = kind == LIST_INT    ? parse_pos_int(opt, item, (int *)dst + count, err, errlen)
               : kind == LIST_DOUBLE ? parse_number(opt, item, 1, (double *)dst + count, err, errlen)
               : kind == LIST_MATH   ? parse_name(opt, "math mode", options_maths, item, (const char **)dst + count,
                                                  err, errlen)
               : kind == LIST_DTYPE  ? parse_dtype(opt, item, (dtype_t *)dst + count, err, errlen)
                                     : parse_u64(opt, item, (unsigned long long *)dst + count, err, errlen);
        if (rc) return rc;
        count++;
        if (!comma) break;
        p = comma + 1;
    }
    *n = count;
    return 0;
}

static void set_defaults(options_t *o) {
    memset(o, 0, sizeof *o);
    o->strategy = "single";
    o->gpus[0] = 1;     o->n_gpus = 1;
    o->model = "resnet18";
    o->dataset = "fashion-mnist";
    o->data_dir = NULL;                 /* resolved from the dataset after parsing */
    o->batch[0] = 256;  o->n_batch = 1;
    o->lr[0] = 0.1;     o->n_lr = 1;
    o->weak = 1;
    o->epochs = 3;
    o->seeds[0] = 1;    o->n_seeds = 1;
    o->momentum = 0;
    o->weight_decay = 0;
    o->math[0] = "tf32";    o->n_math = 1;
    o->grad_dtype[0] = DTYPE_FP32;  o->n_grad_dtype = 1;
    o->init = NULL;                     /* resolved from the model after parsing */
    o->out = "results/scaling.csv";
    o->steps = 0;
    o->naive_path = "auto";
    o->bucket_mb = 25.0;
    o->overlap = 1;
    o->micro[0] = 1;    o->n_micro = 1;
    o->schedule = "gpipe";
    o->n_split = 0;
    o->bench = NULL;
    o->resume = 0;
    o->trace = NULL;
    o->cuda_graph = 1;
    o->conv_cache = NULL;
    o->timeout_s = 300;
    o->retry_failed = 0;
}

static const char *long_name(int val) {
    for (int i = 0; long_opts[i].name; i++)
        if (long_opts[i].val == val) return long_opts[i].name;
    return "?";
}

static int nonempty(const char *opt, const char *what, const char *s, char *err, size_t errlen) {
    return *s ? 0 : errmsg(2, err, errlen, "--%s: empty %s", opt, what);
}

/* One option with its argument; 0, or 2 with the message in err. */
static int apply(options_t *o, int c, const char *arg, char *err, size_t errlen) {
    const char *opt = long_name(c);
    double x;
    switch (c) {
    case OPT_STRATEGY: o->strategy = arg; return nonempty(opt, "strategy name", arg, err, errlen);
    case OPT_GPUS:     o->gpus_given = 1; return parse_list(opt, arg, LIST_INT, o->gpus, &o->n_gpus, err, errlen);
    case OPT_BATCH:    return parse_list(opt, arg, LIST_INT, o->batch, &o->n_batch, err, errlen);
    case OPT_LR:       return parse_list(opt, arg, LIST_DOUBLE, o->lr, &o->n_lr, err, errlen);
    case OPT_SEED:     return parse_list(opt, arg, LIST_U64, o->seeds, &o->n_seeds, err, errlen);
    case OPT_MODEL:    o->model = arg;   return check_choice(opt, "model", options_models, arg, err, errlen);
    case OPT_DATASET:  o->dataset = arg; return check_choice(opt, "dataset", options_datasets, arg, err, errlen);
    case OPT_MATH:     return parse_list(opt, arg, LIST_MATH, o->math, &o->n_math, err, errlen);
    case OPT_GRAD_DTYPE: return parse_list(opt, arg, LIST_DTYPE, o->grad_dtype, &o->n_grad_dtype, err, errlen);
    case OPT_INIT:     o->init = arg;    return check_choice(opt, "init", options_inits, arg, err, errlen);
    case OPT_DATA_DIR: o->data_dir = arg; return nonempty(opt, "directory", arg, err, errlen);
    case OPT_OUT:      o->out = arg;     return nonempty(opt, "path", arg, err, errlen);
    case OPT_EPOCHS:   return parse_pos_int(opt, arg, &o->epochs, err, errlen);
    case OPT_STEPS: {   /* 0 is allowed here (the whole epoch), unlike --epochs */
        unsigned long long v;
        if (parse_u64(opt, arg, &v, err, errlen)) return 2;
        if (v > INT_MAX) return errmsg(2, err, errlen, "--%s: \"%s\" is too large", opt, arg);
        o->steps = (int)v;
        return 0;
    }
    case OPT_NAIVE_PATH: o->naive_path = arg; return check_choice(opt, "path", options_naive_paths, arg, err, errlen);
    case OPT_SCHEDULE: o->schedule = arg; return check_choice(opt, "schedule", options_schedules, arg, err, errlen);
    case OPT_BENCH:    o->bench = arg;    return check_choice(opt, "benchmark", options_benches, arg, err, errlen);
    case OPT_TRACE:    o->trace = arg;    return nonempty(opt, "path", arg, err, errlen);
    case OPT_CONV_CACHE: o->conv_cache = arg; return nonempty(opt, "path", arg, err, errlen);
    case OPT_RESUME:   o->resume = 1;     return 0;
    case OPT_RETRY_FAILED: o->retry_failed = 1; return 0;
    case OPT_TIMEOUT:
        if (parse_number(opt, arg, 1, &x, err, errlen)) return 2;
        o->timeout_s = x;
        return 0;
    case OPT_MICRO_BATCHES: return parse_list(opt, arg, LIST_INT, o->micro, &o->n_micro, err, errlen);
    case OPT_SPLIT:    return parse_list(opt, arg, LIST_INT, o->split, &o->n_split, err, errlen);
    case OPT_BUCKET_MB:
        if (parse_number(opt, arg, 1, &x, err, errlen)) return 2;
        o->bucket_mb = x;
        return 0;
    case OPT_CUDA_GRAPH:
        if (check_choice(opt, "cuda-graph", on_off, arg, err, errlen)) return 2;
        o->cuda_graph = strcmp(arg, "on") == 0;
        return 0;
    case OPT_OVERLAP:
        if (check_choice(opt, "overlap", on_off, arg, err, errlen)) return 2;
        o->overlap = strcmp(arg, "on") == 0;
        return 0;
    case OPT_SCALE:
        if (check_choice(opt, "scale", scales, arg, err, errlen)) return 2;
        o->weak = strcmp(arg, "weak") == 0;
        return 0;
    case OPT_MOMENTUM:
        if (parse_number(opt, arg, 0, &x, err, errlen)) return 2;
        o->momentum = x;
        return 0;
    case OPT_WEIGHT_DECAY:
        if (parse_number(opt, arg, 0, &x, err, errlen)) return 2;
        o->weight_decay = x;
        return 0;
    }
    return errmsg(2, err, errlen, "internal error: option code %d has no handler", c);
}

/* getopt reports '?' for unknown, ambiguous and argument-taking-no-argument options alike; the offending
 * word is argv[optind - 1] for long options, optopt for short ones. */
static int unknown_option(int argc, char **argv, char *err, size_t errlen) {
    const char *word = optind >= 1 && optind <= argc ? argv[optind - 1] : NULL;
    if (word && strncmp(word, "--", 2) == 0) {
        const char *eq = strchr(word, '=');
        if (eq) {
            for (int i = 0; long_opts[i].name; i++)
                if (long_opts[i].has_arg == no_argument && strlen(long_opts[i].name) == (size_t)(eq - word - 2)
                    && strncmp(long_opts[i].name, word + 2, (size_t)(eq - word - 2)) == 0)
                    return errmsg(2, err, errlen, "--%s: takes no argument (got \"%s\")", long_opts[i].name, word);
        }
        return errmsg(2, err, errlen, "unknown or ambiguous option \"%s\" (see --help)", word);
    }
    if (optopt > 0 && optopt < 256) return errmsg(2, err, errlen, "unknown option \"-%c\" (see --help)", optopt);
    return errmsg(2, err, errlen, "unknown option \"%s\" (see --help)", word ? word : "?");
}

int options_parse(options_t *o, int argc, char **argv, char *err, size_t errlen) {
    if (err && errlen) err[0] = '\0';
    set_defaults(o);
    /* optind = 0 makes glibc reinitialise completely, so tests (and sweeps) can parse many argv in turn.
     * '+' keeps argv unpermuted and stops at the first positional, which we then reject;
     * ':' makes a missing argument distinguishable from an unknown option. */
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "+:h", long_opts, NULL)) != -1) {
        if (c == OPT_HELP) {
            options_usage(stdout, argc > 0 && argv[0] ? argv[0] : "scaling");
            return 1;
        }
        if (c == ':') {
            if (optopt == OPT_HELP || optopt <= 0) return errmsg(2, err, errlen, "missing argument");
            return errmsg(2, err, errlen, "--%s: missing argument", long_name(optopt));
        }
        if (c == '?') return unknown_option(argc, argv, err, errlen);
        /* "--gpus --batch 4" would otherwise parse "--batch" as the GPU list and report a confusing value. */
        if (optarg && strncmp(optarg, "--", 2) == 0 && optarg[2])
            return errmsg(2, err, errlen, "--%s: missing argument (got option \"%s\")", long_name(c), optarg);
        int rc = apply(o, c, optarg ? optarg : "", err, errlen);
        if (rc) return rc;
    }
    if (optind < argc)
        return errmsg(2, err, errlen, "unexpected argument \"%s\" (options take the form --name VALUE)", argv[optind]);
    if (!o->data_dir) o->data_dir = dataset_dirs[name_index(options_datasets, o->dataset)];
    if (!o->init) o->init = strcmp(o->model, "lenet") == 0 ? "xavier" : "normal";
    return 0;
}

static int check_list(const char *opt, int n, char *err, size_t errlen) {
    if (n < 1) return errmsg(2, err, errlen, "--%s: empty list", opt);
    if (n > OPT_LIST_MAX) return errmsg(2, err, errlen, "--%s: more than %d values", opt, OPT_LIST_MAX);
    return 0;
}

/* n_devices < 0 skips the device-count check (used where devices are not queried, e.g. host tests). */
int options_validate(const options_t *o, const char *const *strategies, const char *const *reducing, int n_devices,
                     char *err, size_t errlen) {
    if (err && errlen) err[0] = '\0';
    if (!o->strategy || !o->model || !o->dataset || !o->init || !o->data_dir || !o->out)
        return errmsg(2, err, errlen, "options not filled in (call options_parse first)");
    if (o->retry_failed && !o->resume)
        return errmsg(2, err, errlen, "--retry-failed: only with --resume (it picks which runs of --out to repeat)");
    if (strategies && check_choice("strategy", "strategy", strategies, o->strategy, err, errlen)) return 2;
    if (check_choice("model", "model", options_models, o->model, err, errlen)) return 2;
    if (check_choice("dataset", "dataset", options_datasets, o->dataset, err, errlen)) return 2;
    if (check_choice("init", "init", options_inits, o->init, err, errlen)) return 2;
    if (check_list("gpus", o->n_gpus, err, errlen) || check_list("batch", o->n_batch, err, errlen) ||
        check_list("lr", o->n_lr, err, errlen) || check_list("seed", o->n_seeds, err, errlen) ||
        check_list("micro-batches", o->n_micro, err, errlen) || check_list("math", o->n_math, err, errlen) ||
        check_list("grad-dtype", o->n_grad_dtype, err, errlen))
        return 2;
    for (int i = 0; i < o->n_math; i++)
        if (check_choice("math", "math mode", options_maths, o->math[i] ? o->math[i] : "", err, errlen)) return 2;
    int bf16_grads = 0;
    for (int i = 0; i < o->n_grad_dtype; i++) {
        if (o->grad_dtype[i] != DTYPE_FP32 && o->grad_dtype[i] != DTYPE_BF16)
            return errmsg(2, err, errlen, "--grad-dtype: unknown gradient dtype %d", (int)o->grad_dtype[i]);
        bf16_grads |= o->grad_dtype[i] == DTYPE_BF16;
    }
    /* Only a gradient reduction has a wire to narrow; the all-reduce benchmark measures every dtype itself. */
    if (bf16_grads && reducing && !o->bench && name_index(reducing, o->strategy) < 0) {
        char valid[256];
        join_names(valid, sizeof valid, reducing);
        return errmsg(2, err, errlen, "--grad-dtype bf16: strategy %s has no gradient reduction (bf16 gradients apply "
                      "to: %s)", o->strategy, valid);
    }
    /* Micro-batches and splits are the pipeline's: for another strategy a list would repeat identical runs. */
    if (strcmp(o->strategy, "pipeline") != 0 && (o->n_micro != 1 || o->micro[0] != 1))
        return errmsg(2, err, errlen, "--micro-batches applies to --strategy pipeline only (strategy is %s)", o->strategy);
    if (strcmp(o->strategy, "pipeline") != 0 && o->n_split)
        return errmsg(2, err, errlen, "--split applies to --strategy pipeline only (strategy is %s)", o->strategy);
    for (int i = 0; o->n_split && i < o->n_gpus; i++)   /* one hand split fits one stage count */
        if (o->gpus[i] != o->n_split + 1)
            return errmsg(2, err, errlen, "--split gives %d stage start%s (%d stages) but --gpus has %d", o->n_split,
                        o->n_split == 1 ? "" : "s", o->n_split + 1, o->gpus[i]);
    if (o->epochs < 1) return errmsg(2, err, errlen, "--epochs: \"%d\" is not a positive integer", o->epochs);
    int max_gpus = 0;
    for (int i = 0; i < o->n_gpus; i++) {
        if (o->gpus[i] < 1) return errmsg(2, err, errlen, "--gpus: \"%d\" is not a positive integer", o->gpus[i]);
        if (o->gpus[i] > max_gpus) max_gpus = o->gpus[i];
    }
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
    if (!o->gpus_given) {
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

/* Prints text indented by `indent` after its first line, so continuation lines align with the first. */
static void print_wrapped(FILE *f, const char *text, int indent) {
    for (const char *p = text; *p; p++) {
        fputc(*p, f);
        if (*p == '\n') fprintf(f, "%*s", indent, "");
    }
}

void options_usage(FILE *f, const char *prog) {
    enum { COL = 28 };
    fprintf(f, "Usage: %s [options]\n"
               "Trains every combination of --gpus x --batch x --lr x --seed x --math x --grad-dtype\n"
               "x --micro-batches (in that order, the last innermost: the precisions of one configuration\n"
               "run back to back) with one strategy, printing a table per run and appending one CSV row\n"
               "per epoch to --out.\n\nOptions:\n", prog);
    for (int i = 0; long_opts[i].name; i++) {
        const opt_help_t *h = &opt_help[i];
        char head[64];
        const char *shortopt = long_opts[i].val < 256 ? "-h, " : "    ";
        snprintf(head, sizeof head, "  %s--%s%s%s", shortopt, long_opts[i].name, h->arg ? " " : "",
                 h->arg ? h->arg : "");
        fprintf(f, "%-*s", COL, head);
        if ((int)strlen(head) >= COL) fprintf(f, "\n%*s", COL, "");
        print_wrapped(f, h->help, COL);
        if (h->choices) {
            char valid[256];
            join_names(valid, sizeof valid, h->choices);
            fprintf(f, "\n%*sone of: %s", COL, "", valid);
        }
        if (h->def) fprintf(f, "\n%*s(default: %s)", COL, "", h->def);
        fputc('\n', f);
    }
    fprintf(f, "\nWeak scaling: global batch = batch x gpus, lr = lr x gpus. Strong scaling: global batch = batch\n"
               "(must divide by every GPU count), lr unchanged.\n");
}
