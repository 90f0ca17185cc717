/* test_options.c — the `scaling` command line: defaults, every option, every rejection with its exact message,
 * --help covering every option, and validation against strategies and devices. */
#define _POSIX_C_SOURCE 200809L
#include "bench/options.h"
#include "test.h"

#include <stdarg.h>
#include <string.h>

#define MAXARGS 32

/* The command's strategies, as strategies/registry.c lists them (their properties decide what applies where). */
static const strategy_info_t *const *registry(void) {
    static const strategy_info_t *infos[64];
    strategy_infos(infos, 64);
    return infos;
}

#include "host/parse_args.h"

static void test_defaults(void) {
    options_t o;
    char err[256] = "junk";
    EXPECT(parse(&o, err, sizeof err, (char *)NULL) == 0, "no arguments: %s", err);
    EXPECT(err[0] == '\0', "err cleared on success: %s", err);
    EXPECT(strcmp(o.strategy, "single") == 0, "strategy %s", o.strategy);
    EXPECT(o.n_gpus == 1 && o.gpus[0] == 1, "gpus");
    EXPECT(strcmp(o.model, "resnet18") == 0, "model %s", o.model);
    EXPECT(strcmp(o.dataset, "fashion-mnist") == 0, "dataset %s", o.dataset);
    EXPECT(strcmp(o.data_dir, "data/fashion-mnist") == 0, "data_dir %s", o.data_dir);
    EXPECT(o.n_batch == 1 && o.batch[0] == 256, "batch");
    EXPECT(o.n_lr == 1 && o.lr[0] == 0.1, "lr");
    EXPECT(o.weak == 1, "weak");
    EXPECT(o.epochs == 3, "epochs %d", o.epochs);
    EXPECT(o.n_seeds == 1 && o.seeds[0] == 1, "seeds");
    EXPECT(o.momentum == 0 && o.weight_decay == 0, "momentum/weight decay");
    EXPECT(o.n_math == 1 && o.math[0] == MATH_TF32, "math %s", math_name(o.math[0]));
    EXPECT(o.n_grad_dtype == 1 && o.grad_dtype[0] == DTYPE_FP32, "grad dtype");
    EXPECT(o.init == INIT_NORMAL, "init for resnet18 %s", init_name(o.init));
    EXPECT(strcmp(o.out, "results/scaling.csv") == 0, "out %s", o.out);

    EXPECT(PARSE(&o, err, "--model", "lenet") == 0, "%s", err);
    EXPECT(o.init == INIT_XAVIER, "init for lenet %s", init_name(o.init));
    /* The rate's scaling rule is the model's recipe: SGD's linear, GPT-2's AdamW the square root; a given one wins. */
    EXPECT(o.lr_scaling == LR_SCALE_LINEAR, "lr scaling for lenet %s", lr_scaling_names[o.lr_scaling]);
    EXPECT(PARSE(&o, err, "--model", "gpt2", "--dataset", "synthetic") == 0 && o.lr_scaling == LR_SCALE_SQRT &&
               o.optimizer == OPTIM_ADAMW,
           "gpt2: lr scaling %s (%s)", lr_scaling_names[o.lr_scaling], err);
    EXPECT(PARSE(&o, err, "--model", "gpt2", "--dataset", "synthetic", "--lr-scaling", "linear") == 0 &&
               o.lr_scaling == LR_SCALE_LINEAR,
           "gpt2 --lr-scaling linear: %s (%s)", lr_scaling_names[o.lr_scaling], err);
    EXPECT(PARSE(&o, err, "--dataset", "mnist") == 0, "%s", err);
    EXPECT(strcmp(o.data_dir, "data/mnist") == 0, "data_dir follows dataset: %s", o.data_dir);
    EXPECT(PARSE(&o, err, "--dataset", "synthetic") == 0 && strcmp(o.data_dir, "data/synthetic") == 0, "%s", err);
    /* Defaults are refilled on every parse: a previous list must not leak into the next. */
    EXPECT(PARSE(&o, err, "--gpus", "1,2,4") == 0 && o.n_gpus == 3, "%s", err);
    EXPECT(parse(&o, err, sizeof err, (char *)NULL) == 0 && o.n_gpus == 1 && o.gpus[0] == 1, "reparse resets");
}

static void test_each_option(void) {
    options_t o;
    char err[256];
    int rc = PARSE(&o, err, "--strategy", "nccl", "--gpus", "1,2,4,8", "--model", "lenet", "--dataset", "mnist",
                   "--data-dir", "/tmp/d", "--batch", "64,128", "--lr", "0.05,0.1,1e-3", "--scale", "strong",
                   "--epochs", "7", "--seed", "0,42,18446744073709551615", "--momentum", "0.9",
                   "--weight-decay", "5e-4", "--math", "fp32", "--init", "normal", "--out", "x/y.csv");
    EXPECT(rc == 0, "all options: rc %d: %s", rc, err);
    EXPECT(strcmp(o.strategy, "nccl") == 0, "strategy");
    EXPECT(o.n_gpus == 4 && o.gpus[0] == 1 && o.gpus[1] == 2 && o.gpus[2] == 4 && o.gpus[3] == 8, "gpus");
    EXPECT(strcmp(o.model, "lenet") == 0 && strcmp(o.dataset, "mnist") == 0, "model/dataset");
    EXPECT(strcmp(o.data_dir, "/tmp/d") == 0, "explicit data dir kept: %s", o.data_dir);
    EXPECT(o.n_batch == 2 && o.batch[0] == 64 && o.batch[1] == 128, "batch");
    EXPECT(o.n_lr == 3 && o.lr[0] == 0.05 && o.lr[1] == 0.1 && o.lr[2] == 1e-3, "lr");
    EXPECT(o.weak == 0, "strong");
    EXPECT(o.epochs == 7, "epochs");
    EXPECT(o.n_seeds == 3 && o.seeds[0] == 0 && o.seeds[1] == 42 && o.seeds[2] == 18446744073709551615ULL, "seeds");
    EXPECT(o.momentum == 0.9 && o.weight_decay == 5e-4, "momentum %g wd %g", o.momentum, o.weight_decay);
    EXPECT(o.n_math == 1 && o.math[0] == MATH_FP32, "math");
    EXPECT(o.init == INIT_NORMAL, "explicit init kept for lenet: %s", init_name(o.init));
    EXPECT(strcmp(o.out, "x/y.csv") == 0, "out");

    EXPECT(PARSE(&o, err, "--scale", "weak") == 0 && o.weak == 1, "scale weak");
    EXPECT(PARSE(&o, err, "--steps", "20") == 0 && o.steps == 20, "steps 20");
    EXPECT(PARSE(&o, err, "--steps", "0") == 0 && o.steps == 0, "steps 0 is the whole epoch");
    EXPECT(PARSE(&o, err, "--epochs", "2") == 0 && o.steps == 0, "steps default 0");
    EXPECT(PARSE(&o, err, "--steps", "-3") == 2 && strstr(err, "--steps: \"-3\"") != NULL, "steps -3: %s", err);
    EXPECT(PARSE(&o, err, "--steps", "9999999999") == 2 && strstr(err, "too large") != NULL, "steps huge: %s", err);
    EXPECT(PARSE(&o, err, "--gpus=2", "--lr=0.2") == 0 && o.gpus[0] == 2 && o.lr[0] == 0.2, "--opt=value form");
    EXPECT(PARSE(&o, err, "--batch", "8", "--batch", "16") == 0 && o.n_batch == 1 && o.batch[0] == 16, "last wins");
    EXPECT(PARSE(&o, err, "--math", "tf32", "--init", "xavier") == 0 && o.init == INIT_XAVIER, "%s", err);
    EXPECT(PARSE(&o, err, "--momentum", "0", "--weight-decay", "0") == 0, "zero momentum/wd allowed: %s", err);
    char list[4 * OPT_LIST_MAX];
    list[0] = '\0';
    for (int i = 1; i <= OPT_LIST_MAX; i++) sprintf(list + strlen(list), "%s%d", i > 1 ? "," : "", i);
    EXPECT(PARSE(&o, err, "--gpus", list) == 0 && o.n_gpus == OPT_LIST_MAX && o.gpus[OPT_LIST_MAX - 1] == OPT_LIST_MAX,
           "a list of exactly OPT_LIST_MAX: %s", err);
}

typedef struct {
    const char *args[4];
    const char *msg;        /* expected substring of the one-line error */
} reject_t;

static void test_rejections(void) {
    static const reject_t cases[] = {
        {{"--batch", "12x"}, "--batch: \"12x\" is not a positive integer"},
        {{"--batch", "0"}, "--batch: \"0\" is not a positive integer"},
        {{"--batch", "-4"}, "--batch: \"-4\" is not a positive integer"},
        {{"--batch", " 4"}, "--batch: \" 4\" is not a positive integer"},
        {{"--batch", "+4"}, "--batch: \"+4\" is not a positive integer"},
        {{"--batch", "99999999999"}, "--batch: \"99999999999\" is not a positive integer"},
        {{"--batch", "64,,128"}, "--batch: empty item in list \"64,,128\""},
        {{"--batch", "64,"}, "--batch: empty item in list \"64,\""},
        {{"--batch", ""}, "--batch: empty list"},
        {{"--gpus", "1,two"}, "--gpus: \"two\" is not a positive integer"},
        {{"--gpus", "0"}, "--gpus: \"0\" is not a positive integer"},
        {{"--gpus", ",1"}, "--gpus: empty item in list \",1\""},
        /* a value twice would run one configuration twice; compared as parsed */
        {{"--seed", "1,2,1"}, "--seed: \"1\" repeats an earlier value in \"1,2,1\""},
        {{"--lr", "0.1,1e-1"}, "--lr: \"1e-1\" repeats an earlier value in \"0.1,1e-1\""},
        {{"--math", "bf16,tf32,bf16"}, "--math: \"bf16\" repeats an earlier value"},
        {{"--micro-batches", "auto,4,auto"}, "--micro-batches: \"auto\" repeats an earlier value"},
        {{"--epochs", "0"}, "--epochs: \"0\" is not a positive integer"},
        {{"--epochs", "-1"}, "--epochs: \"-1\" is not a positive integer"},
        {{"--epochs", "2.5"}, "--epochs: \"2.5\" is not a positive integer"},
        {{"--lr", "-0.1"}, "--lr: \"-0.1\" must be a positive number"},
        {{"--lr", "0"}, "--lr: \"0\" must be a positive number"},
        {{"--lr", "abc"}, "--lr: \"abc\" is not a number"},
        {{"--lr", "0.1x"}, "--lr: \"0.1x\" is not a number"},
        {{"--lr", "inf"}, "--lr: \"inf\" is not a number"},
        {{"--lr", "nan"}, "--lr: \"nan\" is not a number"},
        {{"--lr", "1e999"}, "--lr: \"1e999\" is not a finite number"},
        {{"--lr", "0.1,,0.2"}, "--lr: empty item in list \"0.1,,0.2\""},
        {{"--seed", "-1"}, "--seed: \"-1\" is not an unsigned integer"},
        {{"--seed", "1,x"}, "--seed: \"x\" is not an unsigned integer"},
        {{"--seed", "18446744073709551616"}, "--seed: \"18446744073709551616\" is not an unsigned integer"},
        {{"--momentum", "-0.5"}, "--momentum: \"-0.5\" must be a non-negative number"},
        {{"--momentum", "x"}, "--momentum: \"x\" is not a number"},
        {{"--weight-decay", "-1e-4"}, "--weight-decay: \"-1e-4\" must be a non-negative number"},
        {{"--weight-decay", "1e400"}, "--weight-decay: \"1e400\" is not a finite number"},
        {{"--model", "vgg"}, "--model: unknown model \"vgg\" (valid: lenet, resnet18, resnet50, resnet101, gpt2)"},
        {{"--dataset", "cifar10"},
         "--dataset: unknown dataset \"cifar10\" (valid: fashion-mnist, mnist, sotu, synthetic)"},
        {{"--math", "fp8"}, "--math: unknown math mode \"fp8\" (valid: fp32, tf32, bf16, fp16)"},
        {{"--math", "tf32,half"}, "--math: unknown math mode \"half\" (valid: fp32, tf32, bf16, fp16)"},
        {{"--math", "TF32"}, "--math: unknown math mode \"TF32\""},
        {{"--math", "tf32,"}, "--math: empty item in list \"tf32,\""},
        {{"--math", ""}, "--math: empty list"},
        {{"--grad-dtype", "int8"}, "--grad-dtype: unknown gradient dtype \"int8\" (valid: fp32, bf16, fp16)"},
        {{"--grad-dtype", "fp32,fp8"}, "--grad-dtype: unknown gradient dtype \"fp8\" (valid: fp32, bf16, fp16)"},
        {{"--grad-dtype", ",bf16"}, "--grad-dtype: empty item in list \",bf16\""},
        {{"--grad-dtype"}, "--grad-dtype: missing argument"},
        {{"--init", "he"}, "--init: unknown init \"he\" (valid: normal, xavier, kaiming)"},
        {{"--scale", "linear"}, "--scale: unknown scale \"linear\" (valid: weak, strong)"},
        {{"--strategy", ""}, "--strategy: empty strategy name"},
        {{"--out", ""}, "--out: empty path"},
        {{"--data-dir", ""}, "--data-dir: empty directory"},
        {{"--frobnicate"}, "unknown option \"--frobnicate\" (see --help)"},
        {{"--frobnicate=3"}, "unknown option \"--frobnicate=3\" (see --help)"},
        {{"-x"}, "unknown option \"-x\""},
        {{"--help=yes"}, "--help: takes no argument"},
        {{"--batch"}, "--batch: missing argument"},
        {{"--lr"}, "--lr: missing argument"},
        {{"--gpus", "--batch", "4"}, "--gpus: missing argument (got option \"--batch\")"},
        {{"stray"}, "unexpected argument \"stray\""},
        {{"--gpus", "2", "stray"}, "unexpected argument \"stray\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const reject_t *c = &cases[i];
        options_t o;
        char err[256] = "";
        int rc = parse(&o, err, sizeof err, c->args[0], c->args[1], c->args[2], c->args[3], (char *)NULL);
        EXPECT(rc == 2, "%s %s: rc %d (%s)", c->args[0], c->args[1] ? c->args[1] : "", rc, err);
        EXPECT(strstr(err, c->msg) != NULL, "%s: got '%s', want '%s'", c->args[0], err, c->msg);
        EXPECT(strchr(err, '\n') == NULL && err[0], "one non-empty line: '%s'", err);
    }

    /* A list one longer than OPT_LIST_MAX. */
    char list[4 * (OPT_LIST_MAX + 1)];
    list[0] = '\0';
    for (int i = 1; i <= OPT_LIST_MAX + 1; i++) sprintf(list + strlen(list), "%s%d", i > 1 ? "," : "", i);
    options_t o;
    char err[512];
    EXPECT(PARSE(&o, err, "--batch", list) == 2, "too long a list");
    EXPECT(strstr(err, "--batch: more than 32 values") != NULL, "got '%s'", err);
    EXPECT(PARSE(&o, err, "--seed", list) == 2 && strstr(err, "--seed: more than") != NULL, "got '%s'", err);
    EXPECT(PARSE(&o, err, "--lr", list) == 2 && strstr(err, "--lr: more than") != NULL, "got '%s'", err);
    /* After a failure the next parse starts clean (optind reset). */
    EXPECT(PARSE(&o, err, "--gpus", "2") == 0 && o.gpus[0] == 2, "parse after failure: %s", err);
}

static void test_help(void) {
    options_t o;
    char err[256];
    EXPECT(PARSE(&o, err, "--help") == 1, "--help returns 1");
    EXPECT(PARSE(&o, err, "-h") == 1, "-h returns 1");
    EXPECT(PARSE(&o, err, "--gpus", "2", "--help") == 1, "--help after options returns 1");

    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    options_usage(f, "scaling");
    fclose(f);
    /* --help wraps its text to the terminal: the phrases are looked for with each line break and indent a blank */
    char *w = text;
    for (char *r = text; *r; r++) {
        char c = *r;
        *w++ = c == '\n' ? ' ' : c;
        while (c == '\n' && r[1] == ' ') r++;
    }
    *w = '\0';
    static const char *const longs[] = {"strategy", "gpus", "model", "dataset", "data-dir", "batch", "lr", "scale",
                                        "epochs", "seed", "momentum", "weight-decay", "math", "grad-dtype", "init",
                                        "out", "steps", "help"};
    for (size_t i = 0; i < sizeof longs / sizeof longs[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "--%s", longs[i]);
        EXPECT(strstr(text, name) != NULL, "usage names %s", name);
    }
    static const char *const must[] = {
        "Usage: scaling", "-h, --help", "(default: single)", "(default: resnet18)", "(default: fashion-mnist)",
        "(default: data/<dataset>)", "(default: the model's)", "(default: the model's recipe)",
        "recipe: sgd at 0.1, constant, warm-up 0 epochs, linear scaling, weight decay 0",
        "recipe: adamw at 0.0006, cosine, warm-up 0.1 epochs, sqrt scaling, weight decay 0.1",
        "(default: weak)", "(default: 3)",
        "(default: 1)", "(default: 0)", "(default: tf32)", "Models (--model", "resnet50   batch 256  image 224",
        "(default: results/scaling.csv)", "TF32 tensor cores in cuDNN convolutions, fp32 cuBLAS GEMMs",
        "strict IEEE fp32 everywhere", "one of: lenet, resnet18, resnet50, resnet101, gpt2",
        "one of: fashion-mnist, mnist, sotu, synthetic",
        "one of: fp32, tf32, bf16", "one of: normal, xavier", "one of: weak, strong", "one of: fp32, bf16",
        "(default: fp32)", "no loss scaling", "--gpus x --batch x --lr x --seed x --math x --grad-dtype",
    };
    for (size_t i = 0; i < sizeof must / sizeof must[0]; i++)
        EXPECT(strstr(text, must[i]) != NULL, "usage contains '%s'", must[i]);
    free(text);
}

static void test_validate(void) {
    {
        options_t t;
        char e[256] = "";
        const strategy_info_t *const *names = registry();
        EXPECT(PARSE(&t, e, "--trace", "x.json") == 0 && strcmp(t.trace, "x.json") == 0, "--trace parses: %s", e);
        EXPECT(options_validate(&t, names, 1, e, sizeof e) == 0, "--trace with single: %s", e);
        EXPECT(PARSE(&t, e, "--trace", "x.json", "--strategy", "pipeline") == 0, "parse: %s", e);
        EXPECT(options_validate(&t, names, 2, e, sizeof e) == 0, "--trace with pipeline: %s", e);
        EXPECT(PARSE(&t, e, "--trace", "", "--strategy", "pipeline") == 2 && strstr(e, "--trace") != NULL,
               "an empty --trace path is refused: %s", e);
    }
    const strategy_info_t *const *strategies = registry();
    options_t o;
    char err[256];
    EXPECT(PARSE(&o, err, "--timeout", "42.5", "--resume", "--retry-failed") == 0 && o.timeout_s == 42.5 &&
           o.retry_failed == 1 && o.resume == 1, "--timeout, --retry-failed: %s", err);
    EXPECT(options_validate(&o, strategies, 1, err, sizeof err) == 0, "--retry-failed with --resume: %s", err);
    EXPECT(PARSE(&o, err, "--retry-failed") == 0 && options_validate(&o, strategies, 1, err, sizeof err) == 2 &&
           strstr(err, "--retry-failed: only with --resume") != NULL, "--retry-failed alone: %s", err);
    EXPECT(PARSE(&o, err, "--timeout", "0") == 2 && strstr(err, "--timeout: \"0\" must be a positive number"),
           "--timeout 0: %s", err);
    EXPECT(PARSE(&o, err, "--strategy", "single") == 0 && o.timeout_s == 300 && o.retry_failed == 0,
           "--timeout defaults to 300 s");
    EXPECT(PARSE(&o, err, "--strategy", "nccl", "--gpus", "1,2") == 0, "%s", err);
    EXPECT(options_validate(&o, strategies, 2, err, sizeof err) == 0, "valid: %s", err);
    EXPECT(options_validate(&o, strategies, -1, err, sizeof err) == 0, "device check skipped: %s", err);

    EXPECT(PARSE(&o, err, "--strategy", "horovod") == 0, "strategy names are checked later: %s", err);
    EXPECT(options_validate(&o, strategies, 8, err, sizeof err) == 2, "unknown strategy");
    EXPECT(strstr(err, "--strategy: unknown strategy \"horovod\" (valid: single, naive, nccl, pipeline)") != NULL,
           "got '%s'", err);

    EXPECT(PARSE(&o, err, "--strategy", "nccl", "--gpus", "1,4") == 0, "%s", err);
    EXPECT(options_validate(&o, strategies, 2, err, sizeof err) == 2, "too many GPUs");
    EXPECT(strstr(err, "--gpus: 4 GPUs requested but only 2 CUDA devices present") != NULL, "got '%s'", err);
    EXPECT(PARSE(&o, err, "--strategy", "nccl", "--gpus", "2") == 0 &&
           options_validate(&o, strategies, 1, err, sizeof err) == 2, "1 dev");
    EXPECT(strstr(err, "--gpus: 2 GPUs requested but only 1 CUDA device present") != NULL, "got '%s'", err);
    EXPECT(parse(&o, err, sizeof err, (char *)NULL) == 0 && options_validate(&o, strategies, 0, err, sizeof err) == 2,
           "no device");
    EXPECT(strstr(err, "--gpus: 1 GPU requested but no CUDA device present") != NULL, "got '%s'", err);

    EXPECT(PARSE(&o, err, "--strategy", "naive", "--scale", "strong", "--gpus", "1,2,3", "--batch", "96,100") == 0, "%s", err);
    EXPECT(options_validate(&o, strategies, 4, err, sizeof err) == 2, "strong scaling divisibility");
    EXPECT(strstr(err, "--batch 100 is not divisible by 3 GPUs (strong scaling)") != NULL, "got '%s'", err);
    EXPECT(PARSE(&o, err, "--strategy", "naive", "--scale", "strong", "--gpus", "1,4", "--batch", "98") == 0, "%s", err);
    EXPECT(options_validate(&o, strategies, 4, err, sizeof err) == 2 &&
           strstr(err, "--batch 98 is not divisible by 4 GPUs (strong scaling)") != NULL, "got '%s'", err);
    EXPECT(PARSE(&o, err, "--strategy", "nccl", "--scale", "weak", "--gpus", "1,3", "--batch", "100") == 0 &&
           options_validate(&o, strategies, 4, err, sizeof err) == 0, "weak scaling has no divisibility rule: %s", err);
    EXPECT(PARSE(&o, err, "--strategy", "nccl", "--scale", "strong", "--gpus", "1,2,4", "--batch", "256") == 0 &&
           options_validate(&o, strategies, 4, err, sizeof err) == 0, "divisible strong sweep: %s", err);
    /* a bucket whose byte count would not fit the size_t it becomes; the bound itself is taken */
    EXPECT(PARSE(&o, err, "--bucket-mb", "1e20") == 0 && options_validate(&o, strategies, 1, err, sizeof err) == 2 &&
           strcmp(err, "--bucket-mb 1e+20 is larger than 1048576 (1 TiB)") == 0, "--bucket-mb 1e20: %s", err);
    EXPECT(PARSE(&o, err, "--bucket-mb", "1048576") == 0 && options_validate(&o, strategies, 1, err, sizeof err) == 0,
           "--bucket-mb 1048576: %s", err);

    /* Hand-built options (not from the parser) are checked too. */
    EXPECT(parse(&o, err, sizeof err, (char *)NULL) == 0, "%s", err);
    o.model = "alexnet";
    EXPECT(options_validate(&o, strategies, 1, err, sizeof err) == 2 &&
           strstr(err, "--model: unknown model \"alexnet\"") != NULL, "got '%s'", err);
}

/* --micro-batches is a sweep list for the pipeline; it and --split are rejected for other strategies. */
static void test_pipeline_options(void) {
    const strategy_info_t *const *strategies = registry();
    options_t o;
    char err[256];
    EXPECT(PARSE(&o, err, "--strategy", "pipeline") == 0 && o.n_micro == 1 && o.micro[0] == OPT_MICRO_AUTO,
           "default M {auto}");
    EXPECT(PARSE(&o, err, "--strategy", "pipeline", "--micro-batches", "auto,4,8") == 0 && o.n_micro == 3 &&
           o.micro[0] == OPT_MICRO_AUTO && o.micro[1] == 4 && o.micro[2] == 8, "auto in a list: %s", err);
    EXPECT(PARSE(&o, err, "--micro-batches", "4,automatic") == 2 &&
           strstr(err, "--micro-batches: \"automatic\" is neither auto nor a positive integer") != NULL, "got '%s'",
           err);
    EXPECT(PARSE(&o, err, "--strategy", "nccl") == 0 && options_validate(&o, strategies, 2, err, sizeof err) == 0,
           "nccl with the default micro-batches: %s", err);
    EXPECT(PARSE(&o, err, "--strategy", "nccl", "--micro-batches", "1") == 0 &&
           options_validate(&o, strategies, 2, err, sizeof err) == 0, "nccl with --micro-batches 1: %s", err);
    EXPECT(PARSE(&o, err, "--strategy", "pipeline", "--micro-batches", "1,2,4,8,16", "--split", "7") == 0, "%s", err);
    EXPECT(o.n_micro == 5 && o.micro[0] == 1 && o.micro[4] == 16 && o.n_split == 1 && o.split[0] == 7, "M list");
    EXPECT(options_validate(&o, strategies, 2, err, sizeof err) == 2 &&
           strstr(err, "--split gives 1 stage start (2 stages) but --gpus has 1") != NULL, "got '%s'", err);
    EXPECT(PARSE(&o, err, "--strategy", "pipeline", "--gpus", "2", "--micro-batches", "1,2,4,8,16", "--split",
                 "7") == 0, "%s", err);
    EXPECT(options_validate(&o, strategies, 2, err, sizeof err) == 0, "pipeline M list valid: %s", err);
    EXPECT(PARSE(&o, err, "--strategy", "pipeline", "--gpus", "2,4", "--split", "7") == 0, "%s", err);
    EXPECT(options_validate(&o, strategies, 4, err, sizeof err) == 2 &&
           strstr(err, "--split gives 1 stage start (2 stages) but --gpus has 4") != NULL, "got '%s'", err);
    EXPECT(PARSE(&o, err, "--micro-batches", "2,0") == 2 &&
           strstr(err, "--micro-batches: \"0\" is neither auto nor a positive integer") != NULL, "got '%s'", err);
    EXPECT(PARSE(&o, err, "--micro-batches", "2,,4") == 2 && strstr(err, "empty item") != NULL, "got '%s'", err);
    EXPECT(PARSE(&o, err, "--strategy", "nccl", "--micro-batches", "4") == 0, "%s", err);
    EXPECT(options_validate(&o, strategies, 2, err, sizeof err) == 2 &&
           strstr(err, "--micro-batches applies to --strategy pipeline only (strategy is nccl)") != NULL, "got '%s'",
           err);
    EXPECT(PARSE(&o, err, "--strategy", "single", "--split", "3") == 0, "%s", err);
    EXPECT(options_validate(&o, strategies, 2, err, sizeof err) == 2 &&
           strstr(err, "--split applies to --strategy pipeline only") != NULL, "got '%s'", err);
    EXPECT(PARSE(&o, err, "--strategy", "nccl", "--micro-batches", "1") == 0 &&
           options_validate(&o, strategies, 2, err, sizeof err) == 0, "M = 1 is every strategy's: %s", err);
}

/* --math and --grad-dtype are sweep lists; bf16 gradients need a strategy with a gradient reduction, anywhere in
 * the list, and the fp32 default never does (the rule must not refuse every strategy without a reduction). */
static void test_precision_options(void) {
    const strategy_info_t *const *strategies = registry();
    options_t o;
    char err[256];
    char arg[] = "bf16,tf32,fp32";     /* the parsed names must not point into argv, which the caller may reuse */
    EXPECT(PARSE(&o, err, "--math", arg, "--grad-dtype", "bf16,fp32", "--strategy", "nccl") == 0, "%s", err);
    EXPECT(o.n_math == 3 && o.math[0] == MATH_BF16 && o.math[1] == MATH_TF32 && o.math[2] == MATH_FP32,
           "math list in order");
    EXPECT(strcmp(math_name(o.math[0]), "bf16") == 0 && strcmp(init_name(INIT_KAIMING), "kaiming") == 0 &&
           strcmp(naive_path_name(NAIVE_PATH_HOST), "host") == 0, "each enum's name table names it back");
    EXPECT(o.n_grad_dtype == 2 && o.grad_dtype[0] == DTYPE_BF16 && o.grad_dtype[1] == DTYPE_FP32, "grad dtype list");
    EXPECT(options_validate(&o, strategies, 2, err, sizeof err) == 0, "bf16 grads with nccl: %s", err);
    EXPECT(PARSE(&o, err, "--grad-dtype", "bf16", "--strategy", "naive") == 0 &&
           options_validate(&o, strategies, 2, err, sizeof err) == 0, "bf16 grads with naive: %s", err);

    static const char *const no_reduction[] = {"single", "pipeline"};
    for (int i = 0; i < 2; i++) {
        const char *st = no_reduction[i];
        char want[160];
        snprintf(want, sizeof want, "--grad-dtype bf16: strategy %s has no gradient reduction (bf16 gradients apply "
                 "to: naive, nccl)", st);
        EXPECT(PARSE(&o, err, "--strategy", st, "--grad-dtype", "fp32,bf16") == 0, "%s", err);
        EXPECT(options_validate(&o, strategies, 2, err, sizeof err) == 2 && strcmp(err, want) == 0,
               "%s, bf16 last in the list: got '%s'", st, err);
        EXPECT(PARSE(&o, err, "--strategy", st, "--grad-dtype", "bf16") == 0 &&
               options_validate(&o, strategies, 2, err, sizeof err) == 2 && strcmp(err, want) == 0,
               "%s, bf16 alone: got '%s'", st, err);
        EXPECT(PARSE(&o, err, "--strategy", st, "--grad-dtype", "fp32", "--math", "tf32,bf16") == 0 &&
               options_validate(&o, strategies, 2, err, sizeof err) == 0,
               "%s with fp32 gradients and both maths is valid: %s", st, err);
    }
    /* The all-reduce benchmark runs every reducing strategy itself, whatever --strategy says (default single). */
    EXPECT(PARSE(&o, err, "--bench", "allreduce", "--grad-dtype", "bf16") == 0 &&
           options_validate(&o, strategies, 2, err, sizeof err) == 0, "--bench with bf16: %s", err);
    /* What it takes, and nothing else: a training option beside it would do nothing without a word. */
    EXPECT(PARSE(&o, err, "--bench", "allreduce", "--gpus", "2,4", "--strategy", "nccl", "--naive-path", "p2p",
                 "--out", "b.csv") == 0 && options_validate(&o, strategies, 4, err, sizeof err) == 0,
           "--bench with all it takes: %s", err);
    static const char *const not_bench[][2] = {{"--epochs", "3"}, {"--resume", NULL}, {"--model", "resnet18"},
                                               {"--timeout", "60"}, {"--math", "bf16"}, {"--trace", "t.json"}};
    for (int i = 0; i < 6; i++) {
        char want[160];
        snprintf(want, sizeof want, "%s: not with --bench (the benchmark takes --gpus, --strategy, --naive-path and "
                 "--out)", not_bench[i][0]);
        int parsed = not_bench[i][1] ? PARSE(&o, err, "--bench", "allreduce", not_bench[i][0], not_bench[i][1])
                                     : PARSE(&o, err, "--bench", "allreduce", not_bench[i][0]);
        EXPECT(parsed == 0 && options_validate(&o, strategies, 2, err, sizeof err) == 2 && strcmp(err, want) == 0,
               "--bench with %s: refused: '%s'", not_bench[i][0], err);
    }
    EXPECT(PARSE(&o, err, "--grad-dtype", "bf16") == 0 &&
           options_validate(&o, NULL, 2, err, sizeof err) == 0, "no strategies skip the rule: %s", err);

    /* fp16: a math with a loss scale, and a wire beside bf16; a name neither knows exits 2 naming it. */
    EXPECT(PARSE(&o, err, "--math", "fp16,bf16", "--grad-dtype", "fp16,bf16,fp32", "--strategy", "nccl") == 0, "%s",
           err);
    EXPECT(o.n_math == 2 && o.math[0] == MATH_FP16 && o.math[1] == MATH_BF16, "fp16 math parsed");
    EXPECT(o.n_grad_dtype == 3 && o.grad_dtype[0] == DTYPE_FP16 && o.grad_dtype[1] == DTYPE_BF16 &&
           o.grad_dtype[2] == DTYPE_FP32, "fp16 wire parsed");
    EXPECT(options_validate(&o, strategies, 2, err, sizeof err) == 0, "fp16 with nccl: %s", err);
    EXPECT(PARSE(&o, err, "--math", "fp16", "--strategy", "pipeline") == 0 &&
           options_validate(&o, strategies, 2, err, sizeof err) == 0, "fp16 math in the pipeline: %s", err);
    EXPECT(PARSE(&o, err, "--strategy", "single", "--grad-dtype", "fp16") == 0 &&
           options_validate(&o, strategies, 2, err, sizeof err) == 2 &&
           strcmp(err, "--grad-dtype fp16: strategy single has no gradient reduction (fp16 gradients apply to: naive, "
                  "nccl)") == 0, "fp16 wire without a reduction: got '%s'", err);
    EXPECT(PARSE(&o, err, "--math", "tf32,fp8") == 2 &&
           strcmp(err, "--math: unknown math mode \"fp8\" (valid: fp32, tf32, bf16, fp16)") == 0, "got '%s'", err);
    EXPECT(PARSE(&o, err, "--grad-dtype", "fp16,half") == 2 &&
           strcmp(err, "--grad-dtype: unknown gradient dtype \"half\" (valid: fp32, bf16, fp16)") == 0, "got '%s'",
           err);

    /* Hand-built options are checked too. */
    EXPECT(parse(&o, err, sizeof err, (char *)NULL) == 0, "%s", err);
    o.n_math = 0;
    EXPECT(options_validate(&o, strategies, 1, err, sizeof err) == 2 &&
           strstr(err, "--math: empty list") != NULL, "got '%s'", err);
    o.n_math = 1;
    o.grad_dtype[0] = (dtype_t)7;
    EXPECT(options_validate(&o, strategies, 1, err, sizeof err) == 2 &&
           strstr(err, "--grad-dtype: unknown gradient dtype 7") != NULL, "got '%s'", err);
    o.grad_dtype[0] = DTYPE_FP32;
    EXPECT(options_validate(&o, strategies, 1, err, sizeof err) == 0, "restored: %s", err);
}

/* The table's own rules: defaults parsed through each option's parser, "given" only for the command line, the
 * --bench output default derived after parsing, an over-long list item refused whole, properties deciding validity. */
static void test_table(void) {
    options_t o;
    char err[256];
    EXPECT(parse(&o, err, sizeof err, (char *)NULL) == 0 && !options_given(&o, "gpus") && !options_given(&o, "out"),
           "defaults are not given");
    EXPECT(o.overlap == 1 && o.cuda_graph == 1 && o.bucket_mb == 25 && o.steps == 0 && o.naive_path == NAIVE_PATH_AUTO
           && strcmp(o.schedule, "gpipe") == 0 && o.bench == NULL && o.trace == NULL && o.conv_cache == NULL &&
           o.resume == 0 && o.n_split == 0, "every default from the table");
    EXPECT(PARSE(&o, err, "--gpus", "2", "--resume") == 0 && options_given(&o, "gpus") && options_given(&o, "resume") &&
           !options_given(&o, "batch") && !options_given(&o, "no-such-option"), "given: %s", err);
    EXPECT(PARSE(&o, err, "--bench", "allreduce") == 0 && strcmp(o.out, "results/scaling_allreduce.csv") == 0,
           "--bench default out %s", o.out);
    EXPECT(PARSE(&o, err, "--bench", "allreduce", "--out", "x.csv") == 0 && strcmp(o.out, "x.csv") == 0,
           "--bench with --out %s", o.out);
    EXPECT(PARSE(&o, err, "--overlap", "off", "--cuda-graph", "off", "--scale", "strong") == 0 && o.overlap == 0 &&
           o.cuda_graph == 0 && o.weak == 0, "flags");
    char item[200], list[210];
    memset(item, '0', sizeof item - 1);
    item[0] = '1';
    item[sizeof item - 1] = '\0';
    snprintf(list, sizeof list, "0.1,%s", item);
    EXPECT(PARSE(&o, err, "--lr", list) == 2 && strstr(err, "--lr: item \"1000") &&
           strstr(err, "is longer than 127 characters"), "an over-long item is refused, not cut: %s", err);
    item[127] = '\0';  /* 127 characters: read whole */
    EXPECT(PARSE(&o, err, "--lr", item) == 0 && o.lr[0] == 1e126, "127 characters: %g (%s)", o.lr[0], err);
    /* A strategy known only by its properties: a staged one takes micro-batches, one that reduces takes bf16. */
    static const strategy_info_t stage = {.name = "stagey", .staged = 1}, red = {.name = "reducey", .reduces = 1};
    static const strategy_info_t *const mine[] = {&stage, &red, NULL};
    EXPECT(PARSE(&o, err, "--strategy", "stagey", "--micro-batches", "2,4") == 0 &&
           options_validate(&o, mine, 2, err, sizeof err) == 0, "staged by property: %s", err);
    EXPECT(PARSE(&o, err, "--strategy", "reducey", "--micro-batches", "2") == 0 &&
           options_validate(&o, mine, 2, err, sizeof err) == 2 &&
           strstr(err, "--micro-batches applies to --strategy stagey only (strategy is reducey)"), "got '%s'", err);
    EXPECT(PARSE(&o, err, "--strategy", "stagey", "--grad-dtype", "bf16") == 0 &&
           options_validate(&o, mine, 2, err, sizeof err) == 2 &&
           strstr(err, "strategy stagey has no gradient reduction (bf16 gradients apply to: reducey)"), "got '%s'", err);
}

int main(void) {
    test_table();
    test_defaults();
    test_precision_options();
    test_pipeline_options();
    test_each_option();
    test_rejections();
    test_help();
    test_validate();
    return test_summary();
}
