/* options.c — the `scaling` command line: one table, an entry per option holding its name, argument, default, help
 * and parser, from which getopt_long's table, the defaults and --help are all made; every error is one line naming
 * the option and the bad value. */
#include "options.h"
#include "../engine/errmsg.h"
#include "../engine/model_info.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

const char *const options_models[] = {"lenet", "resnet18", "resnet50", "resnet101", NULL};   /* model_infos' names */
const char *const options_datasets[] = {"fashion-mnist", "mnist", "synthetic", NULL};
const char *const options_maths[] = {"fp32", "tf32", "bf16", NULL};
/* dtype_name()'s spellings, so a parsed name maps back to its dtype_t. */
const char *const options_grad_dtypes[] = {"fp32", "bf16", NULL};
const char *const options_inits[] = {"normal", "xavier", "kaiming", NULL};
static const char *const scales[] = {"weak", "strong", NULL};
const char *const options_naive_paths[] = {"auto", "p2p", "host", NULL};
const char *const options_schedules[] = {"gpipe", "1f1b", NULL};
const char *const options_benches[] = {"allreduce", NULL};
static const char *const on_off[] = {"on", "off", NULL};
/* Parallel to options_datasets: the default --data-dir is a constant, so options_t needs no buffer. */
static const char *const dataset_dirs[] = {"data/fashion-mnist", "data/mnist", "data/synthetic", NULL};

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
        /* No valid item is this long; cutting it would change its value (1 and 200 zeros is not 1e126). */
        if (ilen >= sizeof item)
            return errmsg(2, err, errlen, "--%s: item \"%.24s...\" is longer than %d characters", opt, p,
                          (int)sizeof item - 1);
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


// ---- the option table

typedef struct opt opt_t;
/* Stores arg into o (the member at opt->field); 0, or 2 with the one-line message in err. */
typedef int (*opt_parse_t)(options_t *o, const opt_t *opt, const char *arg, char *err, size_t errlen);

struct opt {
    const char *name;               /* --name */
    const char *arg;                /* its argument as --help shows it; NULL: takes none */
    const char *def;                /* the default, as typed on the command line: parsed before argv is */
    const char *def_help;           /* the default as --help says it where not def (derived later), else NULL */
    opt_parse_t parse;              /* NULL: --help */
    size_t field, count;            /* offsetof the options_t member, and of a list's count */
    const char *what;               /* the value's name in messages: "unknown <what>", "empty <what>" */
    const char *const *choices;     /* the valid values: checked, and listed by --help */
    const char *help;               /* '\n' starts a continuation line */
};

#define FIELD(m) offsetof(options_t, m)
#define AT(o, opt, T) ((T *)((char *)(o) + (opt)->field))

static int p_str(options_t *o, const opt_t *opt, const char *arg, char *err, size_t errlen) {
    *AT(o, opt, const char *) = arg;
    return *arg ? 0 : errmsg(2, err, errlen, "--%s: empty %s", opt->name, opt->what);
}

/* The choice's own string is stored, so it outlives argv and any scratch copy. */
static int p_choice(options_t *o, const opt_t *opt, const char *arg, char *err, size_t errlen) {
    return parse_name(opt->name, opt->what, opt->choices, arg, AT(o, opt, const char *), err, errlen);
}

/* An on/off-like pair: the member is 1 for the first choice, 0 for the second. */
static int p_flag(options_t *o, const opt_t *opt, const char *arg, char *err, size_t errlen) {
    if (check_choice(opt->name, opt->what, opt->choices, arg, err, errlen)) return 2;
    *AT(o, opt, int) = strcmp(arg, opt->choices[0]) == 0;
    return 0;
}

static int p_set(options_t *o, const opt_t *opt, const char *arg, char *err, size_t errlen) {
    (void)arg, (void)err, (void)errlen;
    *AT(o, opt, int) = 1;
    return 0;
}

static int p_pos_int(options_t *o, const opt_t *opt, const char *arg, char *err, size_t errlen) {
    return parse_pos_int(opt->name, arg, AT(o, opt, int), err, errlen);
}

/* 0 allowed (--steps 0: the whole epoch), unlike p_pos_int. */
static int p_count(options_t *o, const opt_t *opt, const char *arg, char *err, size_t errlen) {
    unsigned long long v = 0;
    if (parse_u64(opt->name, arg, &v, err, errlen)) return 2;
    if (v > INT_MAX) return errmsg(2, err, errlen, "--%s: \"%s\" is too large", opt->name, arg);
    *AT(o, opt, int) = (int)v;
    return 0;
}

static int p_number(options_t *o, const opt_t *opt, const char *arg, char *err, size_t errlen) {
    return parse_number(opt->name, arg, 0, AT(o, opt, double), err, errlen);
}

static int p_pos_number(options_t *o, const opt_t *opt, const char *arg, char *err, size_t errlen) {
    return parse_number(opt->name, arg, 1, AT(o, opt, double), err, errlen);
}

#define LIST_PARSER(fn, kind) \
    static int fn(options_t *o, const opt_t *opt, const char *arg, char *err, size_t errlen) { \
        return parse_list(opt->name, arg, kind, AT(o, opt, void), (int *)((char *)o + opt->count), err, errlen); \
    }
LIST_PARSER(p_int_list, LIST_INT)
LIST_PARSER(p_double_list, LIST_DOUBLE)
LIST_PARSER(p_u64_list, LIST_U64)
LIST_PARSER(p_math_list, LIST_MATH)
LIST_PARSER(p_dtype_list, LIST_DTYPE)

#define LIST(m) FIELD(m), FIELD(n_##m)

static const opt_t opts[] = {
    {"strategy", "NAME", "single", NULL, p_str, FIELD(strategy), 0, "strategy name", NULL,
     "parallel strategy (an unknown name prints the valid ones)"},
    {"gpus", "LIST", "1", "1; under mpirun/srun the process count", p_int_list, LIST(gpus), NULL, NULL,
     "comma-separated GPU counts to sweep, e.g. 1,2,4"},
    {"model", "NAME", "resnet18", NULL, p_choice, FIELD(model), 0, "model", options_models,
     "network (the models, their default batch and image size: below)"},
    {"image-size", "N", NULL, "the model's", p_pos_int, FIELD(image_size), 0, NULL, NULL,
     "side of the square images the model trains on: MNIST and Fashion-MNIST are resized\n"
     "on the GPU (bilinear without antialiasing, as F.interpolate), synthetic data is generated at it"},
    {"dataset", "NAME", "fashion-mnist", NULL, p_choice, FIELD(dataset), 0, "dataset", options_datasets,
     "training data"},
    {"data-dir", "DIR", NULL, "data/<dataset>", p_str, FIELD(data_dir), 0, "directory", NULL,
     "directory of the IDX files"},
    {"batch", "LIST", NULL, "the model's", p_int_list, LIST(batch), NULL, NULL,
     "batch sizes on one GPU (weak scaling multiplies by the GPU count;\n"
     "strong scaling splits it across the GPUs)"},
    {"lr", "LIST", "0.1", NULL, p_double_list, LIST(lr), NULL, NULL,
     "learning rates on one GPU (weak scaling multiplies by the GPU count)"},
    {"scale", "MODE", "weak", NULL, p_flag, FIELD(weak), 0, "scale", scales,
     "weak: batch and lr grow with the GPUs; strong: fixed global batch"},
    {"epochs", "N", "3", NULL, p_pos_int, FIELD(epochs), 0, NULL, NULL,
     "epochs per run; epoch 1 is warmup, later epochs are steady"},
    {"seed", "LIST", "1", NULL, p_u64_list, FIELD(seeds), FIELD(n_seeds), NULL, NULL,
     "comma-separated unsigned RNG seeds (init and data order)"},
    {"momentum", "X", "0", NULL, p_number, FIELD(momentum), 0, NULL, NULL, "SGD momentum (0: plain SGD)"},
    {"weight-decay", "X", "0", NULL, p_number, FIELD(weight_decay), 0, NULL, NULL, "L2 weight decay"},
    {"math", "LIST", "tf32", NULL, p_math_list, LIST(math), NULL, options_maths,
     "arithmetic to sweep, e.g. tf32,bf16.\n"
     "tf32: TF32 tensor cores in cuDNN convolutions, fp32 cuBLAS GEMMs\n"
     "(PyTorch's defaults); fp32: strict IEEE fp32 everywhere; bf16: mixed\n"
     "precision as PyTorch's bf16 autocast (bf16 activations and tensor-core\n"
     "operands, fp32 accumulation, master weights and loss; no loss scaling)"},
    {"grad-dtype", "LIST", "fp32", NULL, p_dtype_list, LIST(grad_dtype), NULL, options_grad_dtypes,
     "naive, nccl: the gradients' type on the wire, a list to sweep, e.g.\n"
     "fp32,bf16; bf16 is DDP's bf16 compression hook (cast, all-reduce in\n"
     "bf16, cast back into the fp32 gradients)"},
    {"init", "NAME", NULL, "the model's", p_choice, FIELD(init), 0, "init", options_inits,
     "weight initialisation (kaiming: torchvision's ResNet initialisation)"},
    {"out", "PATH", "results/scaling.csv", NULL, p_str, FIELD(out), 0, "path", NULL,
     "CSV file to append one row per epoch to (directories are created);\n"
     "--bench allreduce writes results/allreduce.csv unless given one"},
    {"steps", "N", "0", NULL, p_count, FIELD(steps), 0, NULL, NULL,
     "cap on optimizer steps per epoch, for smoke tests and profiling (0: whole epoch)"},
    {"naive-path", "PATH", "auto", NULL, p_choice, FIELD(naive_path), 0, "path", options_naive_paths,
     "naive: how gradients reach GPU 0; pipeline: how activations and gradients cross\n"
     "between stages (auto: peer copies where peer access exists)"},
    {"bucket-mb", "X", "25", NULL, p_pos_number, FIELD(bucket_mb), 0, NULL, NULL,
     "nccl: gradient bucket size in MiB for the all-reduce"},
    {"overlap", "MODE", "on", NULL, p_flag, FIELD(overlap), 0, "overlap", on_off,
     "nccl: overlap the all-reduce of each bucket with the rest of backward"},
    {"micro-batches", "LIST", "1", NULL, p_int_list, FIELD(micro), FIELD(n_micro), NULL, NULL,
     "pipeline: micro-batches per global batch to sweep, e.g. 1,2,4,8 (each must\n"
     "divide the global batch)"},
    {"schedule", "NAME", "gpipe", NULL, p_choice, FIELD(schedule), 0, "schedule", options_schedules,
     "pipeline: forward/backward order of the micro-batches"},
    {"split", "LIST", NULL, "auto, balanced by measured layer times", p_int_list, LIST(split), NULL, NULL,
     "pipeline: layer indices where stages 2..N start"},
    {"bench", "NAME", NULL, NULL, p_choice, FIELD(bench), 0, "benchmark", options_benches,
     "run a benchmark instead of training: allreduce sweeps 4 KB..256 MB per strategy"},
    {"resume", NULL, NULL, NULL, p_set, FIELD(resume), 0, NULL, NULL, "skip configurations already complete in --out"},
    {"trace", "PATH", NULL, NULL, p_str, FIELD(trace), 0, "path", NULL,
     "write a Chrome-trace/Perfetto JSON timeline of 5 steps of epoch 2 (1 with --epochs 1)\n"
     "per run, from CUDA events (compute, copies and update on every GPU)"},
    {"cuda-graph", "MODE", "on", NULL, p_flag, FIELD(cuda_graph), 0, "cuda-graph", on_off,
     "single/naive/nccl: replay each step's compute from CUDA graphs (a few launches per\n"
     "step); pipeline: each micro-batch's forward and backward (up to 64 micro-batches);\n"
     "off keeps per-step forward/backward NVTX ranges for Nsight timelines"},
    {"conv-cache", "PATH", NULL, "search in every run", p_str, FIELD(conv_cache), 0, "path", NULL,
     "convolution algorithms from this file, searched and appended where it has none:\n"
     "runs that share it run the same kernels (the search is timed, so two runs can\n"
     "pick differently, and in bf16 that changes rounding; scripts/study.sh shares one)"},
    {"timeout", "SECONDS", "300", NULL, p_pos_number, FIELD(timeout_s), 0, NULL, NULL,
     "deadline of every wait on another rank or GPU (collectives, synchronisations):\n"
     "past it the run ends with a timeout row (doc/faults.md)"},
    {"retry-failed", NULL, NULL, NULL, p_set, FIELD(retry_failed), 0, NULL, NULL,
     "with --resume, run again the configurations whose last run failed or timed out"},
    {"help", NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, "print this help and exit"},
};

#define N_OPTS ((int)(sizeof opts / sizeof opts[0]))
_Static_assert(sizeof opts / sizeof opts[0] <= 64, "options_t.given has one bit per option");
#define OPT_HELP 'h'
#define OPT_CODE(i) (256 + (i))     /* long-only options get codes above any char: optopt names them exactly */

static int opt_index(const char *name) {
    for (int i = 0; i < N_OPTS; i++)
        if (strcmp(opts[i].name, name) == 0) return i;
    return -1;
}

static int code_index(int c) {
    if (c == OPT_HELP) return opt_index("help");
    return c >= 256 && c < 256 + N_OPTS ? c - 256 : -1;
}

int options_given(const options_t *o, const char *name) {
    int i = opt_index(name);
    return i >= 0 && (o->given >> i & 1);
}

static void set_defaults(options_t *o) {
    memset(o, 0, sizeof *o);
    char err[256];
    for (int i = 0; i < N_OPTS; i++)
        if (opts[i].def && opts[i].parse(o, &opts[i], opts[i].def, err, sizeof err) != 0) {
            fprintf(stderr, "scaling: internal error: default of --%s: %s\n", opts[i].name, err);
            abort();
        }
}

/* getopt reports '?' for unknown, ambiguous and argument-taking-no-argument options alike; the offending
 * word is argv[optind - 1] for long options, optopt for short ones. */
static int unknown_option(int argc, char **argv, char *err, size_t errlen) {
    const char *word = optind >= 1 && optind <= argc ? argv[optind - 1] : NULL;
    if (word && strncmp(word, "--", 2) == 0) {
        const char *eq = strchr(word, '=');
        if (eq) {
            for (int i = 0; i < N_OPTS; i++)
                if (!opts[i].arg && strlen(opts[i].name) == (size_t)(eq - word - 2)
                    && strncmp(opts[i].name, word + 2, (size_t)(eq - word - 2)) == 0)
                    return errmsg(2, err, errlen, "--%s: takes no argument (got \"%s\")", opts[i].name, word);
        }
        return errmsg(2, err, errlen, "unknown or ambiguous option \"%s\" (see --help)", word);
    }
    if (optopt > 0 && optopt < 256) return errmsg(2, err, errlen, "unknown option \"-%c\" (see --help)", optopt);
    return errmsg(2, err, errlen, "unknown option \"%s\" (see --help)", word ? word : "?");
}

int options_parse(options_t *o, int argc, char **argv, char *err, size_t errlen) {
    if (err && errlen) err[0] = '\0';
    set_defaults(o);
    struct option long_opts[N_OPTS + 1];
    for (int i = 0; i < N_OPTS; i++)
        long_opts[i] = (struct option){opts[i].name, opts[i].arg ? required_argument : no_argument, NULL,
                                       opts[i].parse ? OPT_CODE(i) : OPT_HELP};
    long_opts[N_OPTS] = (struct option){NULL, 0, NULL, 0};
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
            int i = code_index(optopt);
            if (optopt == OPT_HELP || i < 0) return errmsg(2, err, errlen, "missing argument");
            return errmsg(2, err, errlen, "--%s: missing argument", opts[i].name);
        }
        if (c == '?') return unknown_option(argc, argv, err, errlen);
        const opt_t *opt = &opts[code_index(c)];
        /* "--gpus --batch 4" would otherwise parse "--batch" as the GPU list and report a confusing value. */
        if (optarg && strncmp(optarg, "--", 2) == 0 && optarg[2])
            return errmsg(2, err, errlen, "--%s: missing argument (got option \"%s\")", opt->name, optarg);
        int rc = opt->parse(o, opt, optarg ? optarg : "", err, errlen);
        if (rc) return rc;
        o->given |= 1ull << (opt - opts);
    }
    if (optind < argc)
        return errmsg(2, err, errlen, "unexpected argument \"%s\" (options take the form --name VALUE)", argv[optind]);
    /* Defaults that follow from other options. */
    if (!o->data_dir) o->data_dir = dataset_dirs[name_index(options_datasets, o->dataset)];
    const model_info_t *mi = model_info(o->model);   /* the parser checked the name */
    if (!o->init) o->init = mi->init;
    if (!options_given(o, "batch")) o->batch[0] = mi->batch, o->n_batch = 1;
    if (!options_given(o, "image-size")) o->image_size = mi->image;
    if (o->bench && !options_given(o, "out")) o->out = "results/allreduce.csv";   /* the training CSV's schema differs */
    return 0;
}

static int check_list(const char *opt, int n, char *err, size_t errlen) {
    if (n < 1) return errmsg(2, err, errlen, "--%s: empty list", opt);
    if (n > OPT_LIST_MAX) return errmsg(2, err, errlen, "--%s: more than %d values", opt, OPT_LIST_MAX);
    return 0;
}

/* The names of the strategies that reduce gradients (reducing) or are staged (!reducing), as "a, b". */
static void names_where(char *buf, size_t len, const strategy_info_t *const *strategies, int reducing) {
    const char *names[64];
    int n = 0;
    for (int i = 0; strategies[i] && n < 63; i++)
        if (reducing ? strategies[i]->reduces : strategies[i]->staged) names[n++] = strategies[i]->name;
    names[n] = NULL;
    join_names(buf, len, names);
}

/* n_devices < 0 skips the device-count check (used where devices are not queried, e.g. host tests). */
int options_validate(const options_t *o, const strategy_info_t *const *strategies, int n_devices, char *err,
                     size_t errlen) {
    if (err && errlen) err[0] = '\0';
    if (!o->strategy || !o->model || !o->dataset || !o->init || !o->data_dir || !o->out)
        return errmsg(2, err, errlen, "options not filled in (call options_parse first)");
    if (o->retry_failed && !o->resume)
        return errmsg(2, err, errlen, "--retry-failed: only with --resume (it picks which runs of --out to repeat)");
    const strategy_info_t *st = strategy_info_find(strategies, o->strategy);
    if (strategies && !st) {
        const char *names[64];
        int n = 0;
        for (int i = 0; strategies[i] && n < 63; i++) names[n++] = strategies[i]->name;
        names[n] = NULL;
        return check_choice("strategy", "strategy", names, o->strategy, err, errlen);
    }
    if (check_choice("model", "model", options_models, o->model, err, errlen)) return 2;
    const model_info_t *mi = model_info(o->model);
    if (!mi) return errmsg(2, err, errlen, "--model: %s is not in the model table", o->model);
    if (options_given(o, "image-size") && !mi->resizable && o->image_size != mi->image)
        return errmsg(2, err, errlen, "--image-size %d: model %s has a fixed %dx%d input (its dense layers are sized "
                      "for it)", o->image_size, o->model, mi->image, mi->image);
    if (o->image_size < mi->stride)
        return errmsg(2, err, errlen, "--image-size %d is too small for %s: it down-samples %d-fold, so its last "
                      "feature map would be smaller than 1x1 (at least %d)", o->image_size, o->model, mi->stride,
                      mi->stride);
    if (o->image_size > OPT_IMAGE_MAX)
        return errmsg(2, err, errlen, "--image-size %d is larger than %d", o->image_size, OPT_IMAGE_MAX);
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
    if (bf16_grads && st && !o->bench && !st->reduces) {
        char valid[256];
        names_where(valid, sizeof valid, strategies, 1);
        return errmsg(2, err, errlen, "--grad-dtype bf16: strategy %s has no gradient reduction (bf16 gradients apply "
                      "to: %s)", o->strategy, valid);
    }
    /* Micro-batches and splits are a staged strategy's: for another a list would repeat identical runs. */
    if (st && !st->staged && (o->n_micro != 1 || o->micro[0] != 1 || o->n_split)) {
        char valid[256];
        names_where(valid, sizeof valid, strategies, 0);
        return errmsg(2, err, errlen, "--%s applies to --strategy %s only (strategy is %s)",
                      o->n_micro != 1 || o->micro[0] != 1 ? "micro-batches" : "split", valid, o->strategy);
    }
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
    for (int i = 0; i < N_OPTS; i++) {
        const opt_t *h = &opts[i];
        char head[64];
        snprintf(head, sizeof head, "  %s--%s%s%s", h->parse ? "    " : "-h, ", h->name, h->arg ? " " : "",
                 h->arg ? h->arg : "");
        fprintf(f, "%-*s", COL, head);
        if ((int)strlen(head) >= COL) fprintf(f, "\n%*s", COL, "");
        print_wrapped(f, h->help, COL);
        if (h->choices) {
            char valid[256];
            join_names(valid, sizeof valid, h->choices);
            fprintf(f, "\n%*sone of: %s", COL, "", valid);
        }
        const char *def = h->def_help ? h->def_help : h->def;
        if (def) fprintf(f, "\n%*s(default: %s)", COL, "", def);
        fputc('\n', f);
    }
    fprintf(f, "\nWeak scaling: global batch = batch x gpus, lr = lr x gpus. Strong scaling: global batch = batch\n"
               "(must divide by every GPU count), lr unchanged.\n");    fprintf(f, "\nModels (--model; batch and image size are the defaults of --batch and --image-size):\n");
    for (int i = 0; model_infos[i].name; i++) {
        const model_info_t *mi = &model_infos[i];
        char img[48];
        snprintf(img, sizeof img, mi->resizable ? "%d (>= %d)" : "%d (fixed)", mi->image, mi->stride);
        fprintf(f, "  %-10s batch %-4d image %-11s %s; synthetic: %dx%d, %d classes\n", mi->name, mi->batch, img,
                mi->summary, mi->synth_channels, mi->image, mi->synth_classes);
    }
}
