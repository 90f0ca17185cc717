/* test_default_plan.c — the default study's plan without a GPU: its sweeps on 0, 1, 2, 3, 4, 8 and 16 GPUs, the data
 * set it falls back to (MNIST, then synthetic) when Fashion-MNIST is missing or broken, the printed commands, and the
 * fresh folder (never an older study's). */
#define _POSIX_C_SOURCE 200809L   /* mkdtemp */
#include "bench/default/default_plan.h"
#include "bench/sweep.h"
#include "test.h"
#include "engine/model_info.h"

/* The command's strategies, as strategies/registry.c lists them. */
static const strategy_info_t *const *registry(void) {
    static const strategy_info_t *infos[64];
    strategy_infos(infos, 64);
    return infos;
}

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const time_t when = 1795362819;     /* 2026-11-22T15:53:39Z */
#define DIR_NAME "results/default-20261122T155339Z"

static int is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* "2,4,8" from a GPU-count list. */
static void list_text(char *buf, size_t len, const int *v, int n) {
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && used < len; i++) used += (size_t)snprintf(buf + used, len - used, "%s%d", i ? "," : "", v[i]);
}

/* Sweep i: its strategy, GPU counts, batches, scaling and micro-batches. */
static void expect_sweep(const default_plan_t *p, int i, const char *strategy, const char *gpus, const char *batch,
                         int weak, int micro) {
    if (i >= p->n_sweeps) {
        EXPECT(0, "%d GPUs: no sweep %d (%s)", p->n_gpus, i, strategy);
        return;
    }
    const options_t *o = &p->sweep[i];
    char g[128], b[128];
    list_text(g, sizeof g, o->gpus, o->n_gpus);
    list_text(b, sizeof b, o->batch, o->n_batch);
    EXPECT(strcmp(o->strategy, strategy) == 0, "%d GPUs, sweep %d: strategy %s, want %s", p->n_gpus, i, o->strategy,
           strategy);
    EXPECT(strcmp(g, gpus) == 0, "%d GPUs, %s: gpus %s, want %s", p->n_gpus, strategy, g, gpus);
    EXPECT(strcmp(b, batch) == 0, "%d GPUs, %s: batch %s, want %s", p->n_gpus, strategy, b, batch);
    EXPECT(o->weak == weak, "%d GPUs, %s: weak %d", p->n_gpus, strategy, o->weak);
    EXPECT(o->n_micro == 1 && o->micro[0] == micro, "%d GPUs, %s: micro-batches %d", p->n_gpus, strategy, o->micro[0]);
    int pipe = i == 3;   /* the staged strategy's sweep: zero bubble, M picked by a probe; the defaults elsewhere */
    EXPECT(strcmp(o->schedule, pipe ? "zb" : "gpipe") == 0, "%s: schedule %s", strategy, o->schedule);
    EXPECT(o->epochs == 6 && o->n_lr == 1 && o->lr[0] == 0.1 && o->n_seeds == 1, "%s: epochs %d, lr %g", strategy,
           o->epochs, o->lr[0]);
    /* the time to a trained model: the rate from the per-GPU batch, warm-up, cosine, the model's target; the
     * reference and the data-parallel sweeps measure the noise scale */
    int base = strcmp(p->model, "lenet") ? 256 : 64;   /* the per-GPU batch, whatever the sweep's global one */
    EXPECT(o->lr_base_batch == base && o->lr_scaling == LR_SCALE_LINEAR && o->lr_schedule == LR_COSINE &&
               o->warmup_epochs == 1 && o->target_acc == model_info_target(model_info(p->model), p->dataset),
           "%s: base %d, rule %d, schedule %d, warm-up %g, target %g", strategy, o->lr_base_batch, o->lr_scaling,
           o->lr_schedule, o->warmup_epochs, o->target_acc);
    const strategy_info_t *st = strategy_info_find(registry(), strategy);
    int gns = st && st->noise_scale != STRATEGY_GNS_NONE;   /* the reference and the replicas measure it */
    EXPECT(o->gns_every == (gns ? 100 : 0), "%s: --gns-every %d", strategy, o->gns_every);
    EXPECT(strcmp(o->model, p->model) == 0 && strcmp(o->dataset, p->dataset) == 0, "%s: %s on %s", strategy, o->model,
           o->dataset);
    EXPECT(o->out == p->csv, "%s: --out is the plan's CSV", strategy);
    EXPECT(o->conv_cache == p->conv_cache, "%s: --conv-cache is the plan's", strategy);
}

/* The number of runs the plan's sweeps expand to. */
static int count_runs(const default_plan_t *p) {
    int runs = 0;
    for (int i = 0; i < p->n_sweeps; i++) {
        sweep_point_t *pts;
        char err[256];
        int n = sweep_expand(&p->sweep[i], &pts, err, sizeof err);
        EXPECT(n > 0, "sweep %d expands: %s", i, err);
        free(pts);
        runs += n > 0 ? n : 0;
    }
    return runs;
}

/* The plan on n GPUs: every strategy's GPU counts ("" where it does not run), the pipeline's micro-batches, the runs. */
typedef struct {
    int n;
    const char *single_batch, *dp_gpus, *pipe_gpus;
    int micro, runs;
} gpu_case_t;

static const gpu_case_t gpu_cases[] = {
    {1,  "256,1024,4096,60000", "", "", OPT_MICRO_AUTO, 8},  /* single alone: the batch ladder x tf32, bf16 */
    {2,  "256,1024", "2",        "2",     OPT_MICRO_AUTO, 5},
    {3,  "256,1024", "2,3",      "2",     OPT_MICRO_AUTO, 7},    /* 1024 does not split into 3 stages' strong scaling */
    {4,  "256,1024", "2,4",      "2,4",   OPT_MICRO_AUTO, 8},
    {8,  "256,1024", "2,4,8",    "2,4,8", OPT_MICRO_AUTO, 11},
    {16, "256,1024", "2,4,8,16", "2,4,8", OPT_MICRO_AUTO, 13},   /* the pipeline stops at 8 stages */
};

static void test_gpu_counts(void) {
    default_plan_t p;
    idx_dataset_t d;
    char err[256];

    /* 0 GPUs: the one-line error; nothing loaded, nothing named */
    EXPECT(default_plan_make(&p, registry(), 0, DATA_ROOT, when, &d, err, sizeof err) == 2, "0 GPUs refused");
    EXPECT(strstr(err, "no CUDA device") && !strchr(err, '\n'), "0 GPUs: one line: %s", err);
    EXPECT(d.train.images == NULL && p.n_sweeps == 0 && p.dir[0] == '\0', "0 GPUs: nothing loaded or planned");

    for (size_t c = 0; c < sizeof gpu_cases / sizeof gpu_cases[0]; c++) {
        const gpu_case_t *g = &gpu_cases[c];
        EXPECT(default_plan_make(&p, registry(), g->n, DATA_ROOT, when, &d, err, sizeof err) == 0, "%d GPUs: %s", g->n, err);
        EXPECT(p.n_sweeps == (g->n > 1 ? 4 : 1), "%d GPUs: %d sweeps", g->n, p.n_sweeps);
        expect_sweep(&p, 0, "single", "1", g->single_batch, 1, OPT_MICRO_AUTO);
        if (g->n > 1) {
            expect_sweep(&p, 1, "naive", g->dp_gpus, "256", 1, OPT_MICRO_AUTO);
            expect_sweep(&p, 2, "nccl", g->dp_gpus, "256", 1, OPT_MICRO_AUTO);
            expect_sweep(&p, 3, "pipeline", g->pipe_gpus, "1024", 0, g->micro);
        }
        /* One math on 2 and more GPUs (the option's default); both fast maths on one */
        const options_t *o = &p.sweep[0];
        if (g->n == 1)
            EXPECT(o->n_math == 2 && o->math[0] == MATH_TF32 && o->math[1] == MATH_BF16,
                   "1 GPU: math tf32,bf16 (%d maths)", o->n_math);
        else
            EXPECT(o->n_math == 1 && o->math[0] == MATH_TF32, "%d GPUs: math tf32 alone", g->n);
        EXPECT(count_runs(&p) == g->runs, "%d GPUs: %d runs", g->n, g->runs);
        /* the all-reduce benchmark on the replicas' GPU counts, beside the CSV where the report looks; none on one */
        char bench[128];
        list_text(bench, sizeof bench, p.bench_gpus, p.n_bench_gpus);
        EXPECT(strcmp(bench, g->dp_gpus) == 0, "%d GPUs: benchmark on %s, want %s", g->n, bench, g->dp_gpus);
        EXPECT(strcmp(p.bench_csv, DIR_NAME "/study_allreduce.csv") == 0, "benchmark CSV %s", p.bench_csv);
        if (g->n == 4) {
            char cmd[512];
            default_plan_bench_command(&p, cmd, sizeof cmd);
            EXPECT(strcmp(cmd, "./scaling --bench allreduce --gpus 2,4 --out " DIR_NAME "/study_allreduce.csv") == 0,
                   "benchmark command: %s", cmd);
        }
        if (g->n == 1) {    /* the one-GPU answer says which sweeps a second GPU would add */
            char more[512];
            default_plan_second_gpu(&p, registry(), more, sizeof more);
            EXPECT(strcmp(more, "naive and nccl on 2 GPUs at 256 per GPU (weak scaling); pipeline on 2 stages at a "
                                "global batch of 1024; each against the reference on 1 GPU at the same batch and "
                                "math") == 0, "second GPU: %s", more);
        }
        EXPECT(strcmp(p.model, "resnet18") == 0 && strcmp(p.dataset, "fashion-mnist") == 0 && p.note[0] == '\0',
               "Fashion-MNIST installed: ResNet-18 on it, no note (%s)", p.note);
        EXPECT(d.train.n == 60000 && d.test.n == 10000, "the data set is loaded: %d/%d", d.train.n, d.test.n);
        EXPECT(strcmp(p.dir, DIR_NAME) == 0 && strcmp(p.csv, DIR_NAME "/study.csv") == 0, "folder %s, csv %s", p.dir,
               p.csv);
        idx_free(&d);
    }
}

static void test_data_fallback(const char *tmp) {
    default_plan_t p;
    idx_dataset_t d;
    char err[256], root[512], path[600];

    /* Only MNIST: LeNet on it, with its batches, and a note saying why */
    snprintf(root, sizeof root, "%s/only-mnist", tmp);
    mkdir(root, 0777);
    snprintf(path, sizeof path, "%s/mnist", root);
    EXPECT(symlink(DATA_ROOT "/mnist", path) == 0, "symlink %s", path);
    EXPECT(default_plan_make(&p, registry(), 2, root, when, &d, err, sizeof err) == 0, "only MNIST: %s", err);
    EXPECT(strcmp(p.model, "lenet") == 0 && strcmp(p.dataset, "mnist") == 0, "only MNIST: %s on %s", p.model,
           p.dataset);
    expect_sweep(&p, 0, "single", "1", "64,256", 1, OPT_MICRO_AUTO);
    expect_sweep(&p, 1, "naive", "2", "64", 1, OPT_MICRO_AUTO);
    expect_sweep(&p, 3, "pipeline", "2", "256", 0, OPT_MICRO_AUTO);
    EXPECT(strcmp(p.sweep[0].data_dir, path) == 0, "data dir %s", p.sweep[0].data_dir);
    EXPECT(strstr(p.note, "LeNet on MNIST") && strstr(p.note, "Fashion-MNIST") && !strchr(p.note, '\n'),
           "note: %s", p.note);
    EXPECT(d.train.n == 60000, "MNIST loaded");
    idx_free(&d);
    /* and on one GPU: LeNet through the same batch ladder (its largest batch is the whole training set) */
    EXPECT(default_plan_make(&p, registry(), 1, root, when, &d, err, sizeof err) == 0, "only MNIST, 1 GPU: %s", err);
    EXPECT(strcmp(p.model, "lenet") == 0 && p.n_sweeps == 1, "only MNIST, 1 GPU: %s, %d sweeps", p.model, p.n_sweeps);
    expect_sweep(&p, 0, "single", "1", "256,1024,4096,60000", 1, OPT_MICRO_AUTO);
    idx_free(&d);

    /* Fashion-MNIST present but broken (empty files) counts as missing, and the note names the file */
    snprintf(path, sizeof path, "%s/fashion-mnist", root);
    mkdir(path, 0777);
    const char *files[] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                           "t10k-labels-idx1-ubyte"};
    for (int i = 0; i < 4; i++) {
        char f[700];
        snprintf(f, sizeof f, "%s/%s", path, files[i]);
        FILE *fp = fopen(f, "w");
        if (fp) fclose(fp);
    }
    EXPECT(default_plan_make(&p, registry(), 2, root, when, &d, err, sizeof err) == 0, "broken Fashion-MNIST: %s", err);
    EXPECT(strcmp(p.dataset, "mnist") == 0 && strstr(p.note, "train-images-idx3-ubyte"), "broken: %s: %s", p.dataset,
           p.note);
    idx_free(&d);

    /* Neither: ResNet-18 on synthetic data */
    snprintf(root, sizeof root, "%s/none", tmp);
    EXPECT(default_plan_make(&p, registry(), 2, root, when, &d, err, sizeof err) == 0, "no data: %s", err);
    EXPECT(strcmp(p.model, "resnet18") == 0 && strcmp(p.dataset, "synthetic") == 0, "no data: %s on %s", p.model,
           p.dataset);
    expect_sweep(&p, 3, "pipeline", "2", "1024", 0, OPT_MICRO_AUTO);
    EXPECT(strstr(p.note, "synthetic") && strstr(p.note, "MNIST"), "note: %s", p.note);
    EXPECT(d.train.n == 60000 && d.test.n == 10000, "synthetic data: %d/%d", d.train.n, d.test.n);
    idx_free(&d);
}

static void test_command(const char *tmp) {
    default_plan_t p;
    idx_dataset_t d;
    char err[256], cmd[1024];
    /* Where the data is data/<dataset> (the repository root), the command needs no --data-dir. */
    char cwd[512], here[600];
    EXPECT(getcwd(cwd, sizeof cwd) != NULL, "getcwd");
    snprintf(here, sizeof here, "%s/repo", tmp);
    mkdir(here, 0777);
    EXPECT(chdir(here) == 0 && symlink(DATA_ROOT, "data") == 0, "a checkout with data/ in %s", here);
    EXPECT(default_plan_make(&p, registry(), 2, "data", when, &d, err, sizeof err) == 0, "%s", err);
    default_plan_command(&p, 3, cmd, sizeof cmd);
    EXPECT(strcmp(cmd, "./scaling --strategy pipeline --gpus 2 --model resnet18 --dataset fashion-mnist --epochs 6 "
                       "--lr 0.1 --lr-base-batch 256 --lr-schedule cosine --warmup-epochs 1 --scale strong --batch 1024 "
                       "--micro-batches auto --schedule zb --out " DIR_NAME
                       "/study.csv --conv-cache " DIR_NAME "/conv_algos.tsv") == 0, "command: %s", cmd);
    idx_free(&d);
    EXPECT(chdir(cwd) == 0, "chdir back");

    /* Another data root is spelled out, quoted for the shell where it must be */
    char root[512], link[600];
    snprintf(root, sizeof root, "%s/it's here", tmp);
    mkdir(root, 0777);
    snprintf(link, sizeof link, "%s/fashion-mnist", root);
    EXPECT(symlink(DATA_ROOT "/fashion-mnist", link) == 0, "symlink");
    EXPECT(default_plan_make(&p, registry(), 1, root, when, &d, err, sizeof err) == 0, "%s", err);
    default_plan_command(&p, 0, cmd, sizeof cmd);
    char want[1200];
    snprintf(want, sizeof want, "./scaling --strategy single --gpus 1 --model resnet18 --dataset fashion-mnist "
             "--data-dir '%s/it'\\''s here/fashion-mnist' --epochs 6 --lr 0.1 --lr-base-batch 256 --lr-schedule "
             "cosine --warmup-epochs 1 --batch 256,1024,4096,60000 --math tf32,bf16 --gns-every 100 --out " DIR_NAME
             "/study.csv --conv-cache " DIR_NAME "/conv_algos.tsv",
             tmp);
    EXPECT(strcmp(cmd, want) == 0, "quoted command:\n  %s\nwant\n  %s", cmd, want);
    idx_free(&d);
}

/* The folder is created only on request, and an existing one (an older study) is never reused. */
static void test_folder(const char *tmp) {
    default_plan_t p, q;
    idx_dataset_t d;
    char err[256], cwd[512], dir[600];
    EXPECT(getcwd(cwd, sizeof cwd) != NULL, "getcwd");
    snprintf(dir, sizeof dir, "%s/work", tmp);
    mkdir(dir, 0777);
    EXPECT(chdir(dir) == 0, "chdir %s", dir);

    EXPECT(default_plan_make(&p, registry(), 0, DATA_ROOT, when, &d, err, sizeof err) == 2, "0 GPUs");
    EXPECT(default_plan_make(&p, registry(), 2, DATA_ROOT, when, &d, err, sizeof err) == 0, "%s", err);
    idx_free(&d);
    EXPECT(!is_dir("results"), "planning creates nothing");
    EXPECT(default_plan_create_dir(&p, err, sizeof err) == 0 && is_dir(DIR_NAME), "created %s: %s", p.dir, err);
    EXPECT(strcmp(p.csv, DIR_NAME "/study.csv") == 0, "csv %s", p.csv);

    /* The same second again: a fresh name, and every sweep's --out follows it */
    EXPECT(default_plan_make(&q, registry(), 2, DATA_ROOT, when, &d, err, sizeof err) == 0, "%s", err);
    idx_free(&d);
    EXPECT(default_plan_create_dir(&q, err, sizeof err) == 0, "%s", err);
    EXPECT(strcmp(q.dir, DIR_NAME "-2") == 0 && is_dir(DIR_NAME "-2"), "second study in %s", q.dir);
    EXPECT(strcmp(q.sweep[2].out, DIR_NAME "-2/study.csv") == 0, "its sweeps write %s", q.sweep[2].out);
    EXPECT(strcmp(q.sweep[2].conv_cache, DIR_NAME "-2/conv_algos.tsv") == 0, "and share %s", q.sweep[2].conv_cache);

    /* "results" that is not a directory: one line, exit status 2 */
    EXPECT(chdir("..") == 0, "chdir ..");
    snprintf(dir, sizeof dir, "%s/file", tmp);
    mkdir(dir, 0777);
    EXPECT(chdir(dir) == 0, "chdir %s", dir);
    FILE *f = fopen("results", "w");
    if (f) fclose(f);
    EXPECT(default_plan_create_dir(&p, err, sizeof err) == 2 && !strchr(err, '\n') && strstr(err, "results"),
           "results is a file: %s", err);
    EXPECT(chdir(cwd) == 0, "chdir back");
}

/* The plan chooses strategies by property, not by name: the reference first, every strategy of replicas, every staged
 * one, in registry order; a strategy that needs no GPU (a test's) is never in it; no reference is an error. */
static void test_by_property(void) {
    static const strategy_info_t fake = {.name = "fake", .no_gpu = 1}, ref = {.name = "base", .reference = 1},
                                 rep = {.name = "ddp", .reduces = 1}, rep2 = {.name = "zero", .reduces = 1},
                                 stg = {.name = "stages", .staged = 1, .t1_global_batch = 1};
    static const strategy_info_t *const mine[] = {&fake, &rep, &stg, &ref, &rep2, NULL}, *const none[] = {&rep, NULL};
    default_plan_t p;
    idx_dataset_t d;
    char err[256];
    int rc = default_plan_make(&p, mine, 2, DATA_ROOT, when, &d, err, sizeof err);
    EXPECT(rc == 0, "plan by property: %s", err);
    if (rc == 0) {
        EXPECT(p.n_sweeps == 4, "4 sweeps: %d", p.n_sweeps);
        expect_sweep(&p, 0, "base", "1", "256,1024", 1, OPT_MICRO_AUTO);
        expect_sweep(&p, 1, "ddp", "2", "256", 1, OPT_MICRO_AUTO);
        expect_sweep(&p, 2, "zero", "2", "256", 1, OPT_MICRO_AUTO);
        expect_sweep(&p, 3, "stages", "2", "1024", 0, OPT_MICRO_AUTO);
        idx_free(&d);
    }
    EXPECT(default_plan_make(&p, none, 2, DATA_ROOT, when, &d, err, sizeof err) == 2 &&
           strstr(err, "no reference strategy"), "no reference: %s", err);
}

int main(void) {
    char tmp[] = "/tmp/test_default_plan.XXXXXX";
    if (!mkdtemp(tmp)) { perror("mkdtemp"); return 1; }
    test_gpu_counts();
    test_by_property();
    test_data_fallback(tmp);
    test_command(tmp);
    test_folder(tmp);
    test_scratch_remove(tmp);
    return test_summary();
}
