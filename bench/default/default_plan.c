/* default_plan.c — the default study's sweeps, written as the command lines that would run each alone and parsed by
 * the one option parser, so what runs is exactly what is printed; and its fresh output folder. */
#include "default_plan.h"
#include "../../study/paths.h"
#include "../../engine/errmsg.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PLAN_EPOCHS "6"
/* The rate at the per-GPU batch, grown linearly with every run's global batch (so 0.4 at 1024 whichever strategy runs
 * it), warmed up over an epoch and decayed by a cosine over the run: time to target judges the strategies, not a
 * constant rate that large batches cannot take (default_plan.h). */
#define PLAN_LR "0.1"
#define PLAN_WARMUP "1"
#define PLAN_SCHEDULE_LR "cosine"
/* The reference and the data-parallel sweeps measure the gradient noise scale every this many steps: about 0.5 % of
 * the reference's step time (one H200), where a measured step runs a second backward; data parallel adds two sums of
 * squares to a measured step. */
#define PLAN_GNS_EVERY "100"
/* the pipeline's micro-batches: its fastest short timed probe (strategies/pipeline/pipeline.c) */
#define PLAN_MICRO "auto"
#define PLAN_SCHEDULE "zb"
/* One GPU: the batch ladder (x4 from 256, then the whole training set, past any one GPU's memory), both fast maths,
 * one learning rate, 4 epochs (default_plan.h says why). */
#define ONE_GPU_BATCHES "256,1024,4096,60000"
#define ONE_GPU_MATHS "tf32,bf16"
#define ONE_GPU_EPOCHS "6"

/* In order of preference: the first data set that loads sets the model and batches. */
typedef struct {
    const char *dataset, *model;
    const char *batch, *pipe_batch;     /* per GPU (weak scaling); the pipeline's global batch (strong) */
} plan_choice_t;

static const plan_choice_t choices[] = {
    {"fashion-mnist", "resnet18", "256", "1024"},
    {"mnist",         "lenet",    "64",  "256"},
    {"synthetic",     "resnet18", "256", "1024"},
};

/* Appends one word to sweep i's command line (i < 0: a sweep that could not start; fails). */
static int add_word(default_plan_t *p, int i, const char *fmt, ...) {
    if (i < 0) return -1;
    char *buf = p->words[i];
    size_t used = 0;
    for (int k = 1; k < p->argc[i]; k++) used += strlen(p->argv[i][k]) + 1;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + used, sizeof p->words[i] - used, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof p->words[i] - used || p->argc[i] + 1 >= PLAN_MAX_ARGS) return -1;
    p->argv[i][p->argc[i]++] = buf + used;
    p->argv[i][p->argc[i]] = NULL;
    return 0;
}

/* Appends "--name value" pairs, NULL-terminated. */
static int add_options(default_plan_t *p, int i, ...) {
    va_list ap;
    va_start(ap, i);
    int rc = 0;
    for (const char *name; !rc && (name = va_arg(ap, const char *));) {
        const char *value = va_arg(ap, const char *);
        rc = add_word(p, i, "--%s", name) || add_word(p, i, "%s", value);
    }
    va_end(ap);
    return rc;
}

/* GPU counts 1, 2, 4, ... and n itself, those from `from` to `to` that divide `divides` (0: any), as a comma list;
 * returns the largest (0: none). */
static int gpu_list(char *buf, size_t len, int n, int from, int to, int divides) {
    int largest = 0;
    size_t used = 0;
    buf[0] = '\0';
    for (long g = 1; g <= n; g = g * 2 > n && g < n ? n : g * 2) {
        if (g >= from && g <= to && (!divides || divides % g == 0)) {
            int k = snprintf(buf + used, len - used, "%s%ld", largest ? "," : "", g);
            if (k < 0 || (size_t)k >= len - used) break;
            used += (size_t)k;
            largest = (int)g;
        }
        if (g == n) break;
    }
    return largest;
}

/* Starts sweep i of strategy s on GPU counts gpus for `epochs` epochs; the model, data and lr are every sweep's. */
static int begin_sweep(default_plan_t *p, const plan_choice_t *c, const char *s, const char *gpus, const char *epochs) {
    if (p->n_sweeps == PLAN_MAX_SWEEPS) return -1;
    int i = p->n_sweeps++;
    p->argc[i] = 1;
    p->argv[i][0] = "scaling";
    int rc = add_options(p, i, "strategy", s, "gpus", gpus, "model", c->model, "dataset", c->dataset, NULL);
    /* The default --data-dir is data/<dataset> in the current directory; another root is spelled out. */
    char def[64];
    snprintf(def, sizeof def, "data/%s", c->dataset);
    if (!rc && strcmp(c->dataset, "synthetic") != 0 && strcmp(p->data_dir, def) != 0)
        rc = add_options(p, i, "data-dir", p->data_dir, NULL);
    return rc || add_options(p, i, "epochs", epochs, "lr", PLAN_LR, "lr-base-batch", c->batch, "lr-schedule",
                             PLAN_SCHEDULE_LR, "warmup-epochs", PLAN_WARMUP, NULL) ? -1 : i;
}

/* Picks the data set (the first of choices that loads) and says in p->note why where it is not the first. */
static const plan_choice_t *pick_data(default_plan_t *p, const char *data_root, idx_dataset_t *data) {
    char why[2][300];
    for (int k = 0; k < 2; k++) {
        if (snprintf(p->data_dir, sizeof p->data_dir, "%s/%s", data_root, choices[k].dataset) >=
            (int)sizeof p->data_dir) {
            snprintf(why[k], sizeof why[k], "%s: path longer than %zu characters", data_root, sizeof p->data_dir - 1);
            continue;
        }
        if (idx_load_dataset(p->data_dir, data, why[k], sizeof why[k]) == 0) {
            if (k > 0)
                snprintf(p->note, sizeof p->note, "default study: LeNet on MNIST, because Fashion-MNIST did not load "
                         "(%s; scripts/setup.sh installs it)", why[0]);
            return &choices[k];
        }
    }
    p->data_dir[0] = '\0';
    idx_synthetic(data, 1);
    snprintf(p->note, sizeof p->note, "default study: ResNet-18 on synthetic data (timings only), because neither "
             "Fashion-MNIST (%s) nor MNIST (%s) loaded; scripts/setup.sh installs both", why[0], why[1]);
    return &choices[2];
}

/* The study's files in p->dir (the sweeps point at these buffers, so a renamed folder renames them). */
static void plan_paths(default_plan_t *p) {
    snprintf(p->csv, sizeof p->csv, "%s/study.csv", p->dir);
    snprintf(p->conv_cache, sizeof p->conv_cache, "%s/conv_algos.tsv", p->dir);
    paths_sibling(p->bench_csv, sizeof p->bench_csv, p->csv, PATHS_ALLREDUCE_SUFFIX);   /* fits: dir is 256 */
}

/* The strategies the study runs, by property: the reference first, then every strategy of replicas, then every
 * staged one, in registry order; a strategy that needs no GPU is a test's, not a study's. */
static int plan_pick(int pass, const strategy_info_t *s) {
    if (s->no_gpu) return 0;
    return pass == 0 ? s->reference : pass == 1 ? !s->reference && !s->staged : !s->reference && s->staged;
}

int default_plan_make(default_plan_t *p, const strategy_info_t *const *infos, int n_gpus, const char *data_root,
                      time_t now, idx_dataset_t *data, char *err, size_t errlen) {
    memset(p, 0, sizeof *p);
    memset(data, 0, sizeof *data);
    if (err && errlen) err[0] = '\0';
    if (n_gpus < 1) return errmsg(2, err, errlen, "no CUDA device: the default study needs at least one GPU");
    p->n_gpus = n_gpus;

    struct tm tm;
    gmtime_r(&now, &tm);
    if (!strftime(p->dir, sizeof p->dir, "results/default-%Y%m%dT%H%M%SZ", &tm))
        return errmsg(2, err, errlen, "default study: cannot name the output folder");
    plan_paths(p);

    const plan_choice_t *c = pick_data(p, data_root, data);
    p->model = c->model;
    p->dataset = c->dataset;

    char multi[160], pipe[160], single_batch[32];
    int largest = gpu_list(multi, sizeof multi, n_gpus, 2, n_gpus, 0);
    /* Strong scaling wants the global batch to divide by the stage count (3 GPUs: the pipeline runs on 2). */
    int stages = gpu_list(pipe, sizeof pipe, n_gpus, 2, PLAN_MAX_STAGES, atoi(c->pipe_batch));
    snprintf(single_batch, sizeof single_batch, stages ? "%s,%s" : "%s", c->batch, c->pipe_batch);

    int rc = 0, refs = 0, bench = 0;
    for (int pass = 0; pass < 3; pass++)
        for (int i = 0; infos && infos[i]; i++) {
            const strategy_info_t *s = infos[i];
            if (!plan_pick(pass, s)) continue;
            if (pass == 0 && refs++) continue;      /* one reference */
            if (pass == 0 && n_gpus == 1)
                rc = rc || add_options(p, begin_sweep(p, c, s->name, "1", ONE_GPU_EPOCHS), "batch", ONE_GPU_BATCHES,
                                       "math", ONE_GPU_MATHS, s->noise_scale ? "gns-every" : NULL, PLAN_GNS_EVERY,
                                       NULL);
            else if (pass == 0)
                rc = rc || add_options(p, begin_sweep(p, c, s->name, "1", PLAN_EPOCHS), "batch", single_batch,
                                       s->noise_scale ? "gns-every" : NULL, PLAN_GNS_EVERY, NULL);
            else if (pass == 1 && largest) {
                rc = rc || add_options(p, begin_sweep(p, c, s->name, multi, PLAN_EPOCHS), "batch", c->batch,
                                       s->noise_scale == STRATEGY_GNS_REPLICAS ? "gns-every" : NULL, PLAN_GNS_EVERY,
                                       NULL);
                if (s->reduces) bench = 1;
            }
            else if (pass == 2 && stages)
                rc = rc || add_options(p, begin_sweep(p, c, s->name, pipe, PLAN_EPOCHS), "scale", "strong", "batch",
                                       c->pipe_batch, "micro-batches", PLAN_MICRO, "schedule", PLAN_SCHEDULE, NULL);
        }
    if (!refs) {
        idx_free(data);
        return errmsg(2, err, errlen, "default study: no reference strategy (one GPU, no communication) is registered");
    }
    if (rc) {
        idx_free(data);
        return errmsg(2, err, errlen, "default study: a command line does not fit (data directory %s too long?)",
                      p->data_dir);
    }
    for (int i = 0; i < p->n_sweeps; i++) {
        options_t *o = &p->sweep[i];
        if (options_parse(o, p->argc[i], p->argv[i], err, errlen) ||
            options_validate(o, infos, n_gpus, err, errlen)) {
            idx_free(data);
            return 2;
        }
        o->out = p->csv;
        o->conv_cache = p->conv_cache;
        /* the benchmark's GPU counts: those of the strategies that reduce gradients */
        const strategy_info_t *si = strategy_info_find(infos, o->strategy);
        for (int g = 0; bench && si && si->reduces && g < o->n_gpus; g++) {
            int seen = 0;
            for (int k = 0; k < p->n_bench_gpus; k++) seen |= p->bench_gpus[k] == o->gpus[g];
            if (!seen && p->n_bench_gpus < OPT_LIST_MAX) p->bench_gpus[p->n_bench_gpus++] = o->gpus[g];
        }
    }
    return 0;
}

int default_plan_create_dir(default_plan_t *p, char *err, size_t errlen) {
    if (mkdir("results", 0777) != 0 && errno != EEXIST)
        return errmsg(2, err, errlen, "results: cannot create directory: %s", strerror(errno));
    char base[sizeof p->dir];
    snprintf(base, sizeof base, "%s", p->dir);
    for (int k = 1; k < 100; k++) {
        if (k > 1 && snprintf(p->dir, sizeof p->dir, "%s-%d", base, k) >= (int)sizeof p->dir)
            return errmsg(2, err, errlen, "%s: path too long", base);
        /* mkdir, not a stat first: two studies started in the same second cannot both take one name. */
        if (mkdir(p->dir, 0777) == 0) {
            plan_paths(p);
            return 0;
        }
        if (errno != EEXIST) return errmsg(2, err, errlen, "%s: cannot create directory: %s", p->dir, strerror(errno));
    }
    return errmsg(2, err, errlen, "%s: it and 98 numbered variants exist already", base);
}

/* A word as the shell reads it: bare when it is plainly safe, else single-quoted. */
static size_t put_word(char *buf, size_t len, const char *w) {
    int bare = *w != '\0';
    for (const char *c = w; *c; c++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,/=:+", *c)) bare = 0;
    size_t used = 0;
    int n = snprintf(buf, len, bare ? " %s" : " '", w);
    used += n > 0 ? (size_t)n : 0;
    for (const char *c = w; !bare && *c && used + 5 < len; c++)
        used += (size_t)snprintf(buf + used, len - used, *c == '\'' ? "'\\''" : "%c", *c);
    if (!bare && used + 1 < len) used += (size_t)snprintf(buf + used, len - used, "'");
    return used < len ? used : len - 1;
}

void default_plan_command(const default_plan_t *p, int i, char *buf, size_t len) {
    size_t used = (size_t)snprintf(buf, len, "./scaling");
    for (int k = 1; k < p->argc[i] && used < len; k++) used += put_word(buf + used, len - used, p->argv[i][k]);
    if (used < len) used += put_word(buf + used, len - used, "--out");
    if (used < len) used += put_word(buf + used, len - used, p->csv);
    if (used < len) used += put_word(buf + used, len - used, "--conv-cache");
    if (used < len) put_word(buf + used, len - used, p->conv_cache);
}

void default_plan_bench_command(const default_plan_t *p, char *buf, size_t len) {
    size_t used = (size_t)snprintf(buf, len, "./scaling --bench allreduce --gpus ");
    for (int k = 0; k < p->n_bench_gpus && used < len; k++)
        used += (size_t)snprintf(buf + used, len - used, "%s%d", k ? "," : "", p->bench_gpus[k]);
    if (used < len) put_word(buf + used, len - used, "--out");
    used = strlen(buf);
    if (used < len) put_word(buf + used, len - used, p->bench_csv);
}

/* Appends the names of the strategies plan_pick takes in `pass`, as "a, b and c"; returns how many. */
static int names_of(char *buf, size_t len, const strategy_info_t *const *infos, int pass) {
    int n = 0, total = 0;
    for (int i = 0; infos && infos[i]; i++) total += plan_pick(pass, infos[i]);
    for (int i = 0; infos && infos[i]; i++) {
        if (!plan_pick(pass, infos[i])) continue;
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", n == 0 ? "" : n + 1 == total ? " and " : ", ", infos[i]->name);
        n++;
    }
    return n;
}

void default_plan_second_gpu(const default_plan_t *p, const strategy_info_t *const *infos, char *buf, size_t len) {
    const plan_choice_t *c = &choices[0];
    for (size_t k = 0; k < sizeof choices / sizeof *choices; k++)
        if (p->dataset && strcmp(p->dataset, choices[k].dataset) == 0) c = &choices[k];
    buf[0] = '\0';
    if (names_of(buf, len, infos, 1)) {
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, " on 2 GPUs at %s per GPU (weak scaling)", c->batch);
    }
    size_t mark = strlen(buf);
    if (mark) snprintf(buf + mark, len - mark, "; ");
    if (names_of(buf, len, infos, 2)) {
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, " on 2 stages at a global batch of %s", c->pipe_batch);
    } else
        buf[mark] = '\0';
    size_t used = strlen(buf);
    snprintf(buf + used, len - used, "%seach against the reference on 1 GPU at the same batch and math",
             used ? "; " : "");
}

void default_plan_usage(FILE *f, const strategy_info_t *const *infos) {
    char what[3][160];
    snprintf(what[0], sizeof what[0], "on 1 GPU at batch %s, and %s where a staged strategy runs (its reference)",
             choices[0].batch, choices[0].pipe_batch);
    snprintf(what[1], sizeof what[1], "on 2, 4, ... GPUs and all of them, batch %s per GPU (weak scaling)",
             choices[0].batch);
    snprintf(what[2], sizeof what[2], "on those GPU counts up to %d that divide its global batch %s (strong "
             "scaling), schedule %s, micro-batches %s (each run's fastest short probe)", PLAN_MAX_STAGES,
             choices[0].pipe_batch, PLAN_SCHEDULE, PLAN_MICRO);
    fputc('\n', f);
    opt_wrap(f, "With no options at all (and not under mpirun/srun), scaling runs the default study on the GPUs "
             "present and writes it into a new folder results/default-<UTC time>/ in the current directory:", 0, 0);
    fputc('\n', f);
    for (int pass = 0, refs = 0; pass < 3; pass++)
        for (int i = 0, n = 0; infos && infos[i]; i++) {
            if (!plan_pick(pass, infos[i]) || (pass == 0 && refs++)) continue;
            fprintf(f, "  %-9s ", infos[i]->name);
            opt_wrap(f, n++ ? "the same" : what[pass], 12, 12);
            fputc('\n', f);
        }
    char text[4096];
    snprintf(text, sizeof text,
             "ResNet-18 on Fashion-MNIST from data/ (LeNet on MNIST at batch %s and %s where only MNIST\n"
               "loads; synthetic data where neither does), %s epochs per run (epoch 1 is warm-up for the timings),\n"
               "lr %s at the per-GPU batch grown linearly with each run's global batch, %s epoch of warm-up and\n"
               "a %s decay; the model's target accuracy (--target-acc), so the answer is the time to a trained\n"
               "model. Then the all-reduce benchmark (--bench allreduce) runs on naive's and nccl's GPU counts into\n"
               "study_allreduce.csv (the report's cost model and projection); study.csv, REPORT.md and the\n"
               "figures (scaling report; figures need gnuplot) are in the folder, and the answer is printed\n"
               "(REPORT.md's first section): per strategy and GPU count the images/s, speedup and efficiency\n"
               "against the reference at the same batch, the change of test accuracy and the time to target, then\n"
               "the soonest to the target per GPU count. It is sized to take about a minute on 2 H200s.\n\n"
               "On one GPU nothing scales: the reference runs alone at batches %s\n"
               "in %s, %s epochs each, measuring the gradient noise scale every %s steps, and the answer gives\n"
               "per batch and math the throughput, test accuracy and time to target, the soonest to the target,\n"
               "the largest batch that fits (one that does not is an oom row) and how far the batch scales;\n"
               "about two minutes.\n\n"
               "Each sweep is printed as the command that runs it alone.",
            choices[1].batch, choices[1].pipe_batch, PLAN_EPOCHS, PLAN_LR, PLAN_WARMUP, PLAN_SCHEDULE_LR,
            ONE_GPU_BATCHES, ONE_GPU_MATHS, ONE_GPU_EPOCHS, PLAN_GNS_EVERY);
    opt_wrap(f, text, 0, 0);    /* fits --help's width whatever the plan's values */
    fputc('\n', f);
}
