/* scaling.c — the `scaling` command: options (with none, the default study's plan) -> sweeps -> one run per
 * configuration (bench/run.h: in a child process, or under a watchdog per rank) -> one CSV row per epoch (flushed),
 * a table on stdout, progress with ETA. The process that drives the sweep never initialises CUDA itself. */
#include "options.h"
#include "sweep.h"
#include "../study/writer.h"
#include "../study/runs.h"
#include "table.h"
#include "env.h"
#include "allreduce_bench.h"
#include "progress.h"
#include "default/default_study.h"
#include "run.h"
#include "dry_run.h"
#include "front.h"
#include "faults/isolate.h"
#include "faults/rank_watch.h"
#include "../study/paths.h"
#include "trace_json.h"
#include "tsv.h"
#include "../engine/idx.h"
#include "../engine/check.h"
#include "../engine/errmsg.h"
#include "../engine/knob.h"
#include "../engine/conv_cache.h"
#include "../engine/model_info.h"
#include "../engine/tokens.h"
#include "../engine/gpt2/gpt2_shape.h"
#include "../engine/gpu_arch.h"
#include "../engine/gpu.h"
#include "../strategies/strategy.h"
#include "../strategies/dist.h"
#include "../report/report.h"
#include <cuda_runtime.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fail(const char *msg) {
    errmsg_line(stderr, "scaling: error: ", "%s", msg);
    return 2;
}

/* A step that may fail (rc != 0, message in err). With one process per GPU every rank takes part: all learn the
 * first rank's failure (dist_agree), rank 0 prints it once, and all exit 2 together. 0: go on; 2: exit with it. */
static int failed(const dist_t *dist, int rc, char *err, size_t errlen) {
    if (dist_agree(dist, rc, err, errlen) == 0) return 0;
    return !dist || dist->is_root ? fail(err) : 2;
}

/* One sweep: every point of o's lists (pts) through o's strategy, rows into res (NULL on ranks other than 0). With
 * --resume the configurations already complete (or faulted) in o->out are skipped. 0, or 2 after a message; a
 * signal stops the sweep after the run it interrupted (sd->outcomes[RUN_INTERRUPTED]). */
static int run_sweep(const options_t *o, const sweep_point_t *pts, int n_points, const idx_dataset_t *data,
                     study_csv_t *res, const study_env_t *env, run_tally_t *sd, profile_t *prof, const dist_t *dist) {
    rank_watch_phase(sd->watch, "the agreement between runs", 0);
    char err[512] = "";
    const strategy_t *st = strategy_find(o->strategy);
    study_scan_t done = {0};
    if (o->resume) {
        if (failed(dist, res ? study_scan(o->out, &done, err, sizeof err) : 0, err, sizeof err)) return 2;
        printf("# resume: %d run(s) already in %s%s\n", done.n, o->out,
               done.bad_rows ? " (lines cut short by a kill are ignored)" : "");
    }
    isolate_defer(1);       /* from here a signal stops the sweep between runs, or its run at a step boundary */
    for (int i = 0; i < n_points && !sd->outcomes[RUN_INTERRUPTED] && !sd->gpu_held; i++) {
        /* A signal between two runs stops the sweep; under mpirun/srun every rank agrees on it (collective). */
        if (dist ? dist_max(dist, (double)isolate_signal()) > 0 : isolate_signal() != 0) {
            sd->outcomes[RUN_INTERRUPTED]++;
            break;
        }
        table_stdout_check(o->out);
        sd->outcomes[run_point(o, st, &pts[i], data, res, env, sd, o->resume ? &done : NULL, prof, dist)]++;
    }
    study_scan_free(&done);
    isolate_defer(0);
    return 0;
}

static void print_env(const study_env_t *env) {
    printf("# %s, driver %s, CUDA %s, cuDNN %s, NCCL %s, host %s, commit %s\n", env->gpu_name, env->driver, env->cuda,
           env->cudnn, env->nccl, env->host, env->git_commit);
}

/* The size and arithmetic per image of the model for this data, counted from its layer shapes (a host-only build),
 * for benchmarks: parameters as torchvision counts them, forward multiply-adds as its GFLOPS column. */
static void print_flops(const options_t *o, const idx_dataset_t *data) {
    const char *model = o->model;
    const gpt2_shape_t *sh = model_info_lm(model_info(model)) ? gpt2_shape(o->model_size) : NULL;
    if (sh && data->corpus) {   /* a language model: its parameters and FLOPs a token as tools/gpt2_bench counts them */
        gpt2_shape_t s = gpt2_shape_for_vocab(sh, (int)data->corpus->train.vocab);
        printf("# model %s: %.0f parameters (tied head), %.4f GFLOP per token, forward + backward (6 N + 12 L T d, N "
               "without the position embedding); sequences of %d tokens, vocabulary %d; %d training windows, %d "
               "held-out\n", options_model_cell(o), (double)gpt2_shape_params(&s),
               gpt2_shape_flops_per_token(&s, data->corpus->T) / 1e9, data->corpus->T, s.vocab, data->train.n,
               data->test.n);
        return;
    }
    model_t *shape = malloc(sizeof *shape);
    model_input_t in = model_input_of(data);
    if (shape && model_build_input(shape, model, 2, in) == 0)   /* 2: batch norm needs 2 values on a 1x1 map */
        printf("# model %s: %.4f GFLOP per image, forward + backward (convolutions and dense layers, from the layer "
               "shapes); %.4f GMAC forward; %zu parameters, %d layers, input %dx%dx%d, %d classes\n", model,
               model_flops_per_image(shape) / 1e9, model_macs_per_image(shape) / 1e9, model_param_count(shape),
               shape->n_layers, in.channels, in.image, in.image, in.classes);
    free(shape);
}

static void print_outcomes(const run_tally_t *sd, const char *out) {
    table_stdout_check(out);
    const int *n = sd->outcomes;
    printf("# %d run(s): %d ok, %d skipped, %d diverged, %d oom, %d failed, %d timeout, %d interrupted; rows in %s\n",
           sd->prog.runs, n[RUN_OK], n[RUN_SKIPPED], n[RUN_DIVERGED], n[RUN_OOM], n[RUN_FAILED], n[RUN_TIMEOUT],
           n[RUN_INTERRUPTED], out);
}

/* The exit status of a command: 128 + signal where a signal stopped the sweep, 1 where a run failed or timed out. */
static int outcome_status(const run_tally_t *sd) {
    if (sd->outcomes[RUN_INTERRUPTED]) return isolate_exit_status(isolate_signal() ? isolate_signal() : SIGTERM);
    return sd->outcomes[RUN_FAILED] || sd->outcomes[RUN_TIMEOUT] || sd->gpu_held ? 1 : 0;
}

/* The device count and the environment of the rows, from a child process: the parent of the runs never
 * initialises CUDA (a CUDA context does not survive fork), so each run's child starts on a clean slate. */
typedef struct {
    int n_dev;
    char nodev[512];    /* why no GPU runs this build: the whole message */
    study_env_t *env;
} probe_t;

static char *env_field(study_env_t *e, int i, size_t *len) {
    char *f[] = {e->gpu_name, e->driver, e->cuda, e->cudnn, e->nccl, e->host, e->git_commit, e->nccl_transport,
                 e->nccl_env};
    size_t n[] = {sizeof e->gpu_name, sizeof e->driver, sizeof e->cuda, sizeof e->cudnn, sizeof e->nccl,
                  sizeof e->host, sizeof e->git_commit, sizeof e->nccl_transport, sizeof e->nccl_env};
    if (i < 0 || i >= (int)(sizeof f / sizeof f[0])) return NULL;
    *len = n[i];
    return f[i];
}

static int probe_child(void *arg) {
    (void)arg;
    char line[600];
    int n = 0;
    char why[512];
    if (gpu_count(&n, why, sizeof why)) snprintf(line, sizeof line, "nodevice %s\n", why);
    else snprintf(line, sizeof line, "devices %d\n", n);
    check_report(line);
    for (int d = 0; d < n; d++) {   /* a GPU too old, or one this build has no code for */
        struct cudaDeviceProp prop;
        if (cudaGetDeviceProperties(&prop, d) != cudaSuccess ||
            !gpu_arch_check(SCALING_CUDA_ARCHS, d, prop.name, prop.major, prop.minor, why, sizeof why))
            continue;
        snprintf(line, sizeof line, "nodevice %s\n", why);
        check_report(line);
        break;
    }
    study_env_t env;
    env_collect(&env, NULL);
    size_t len;
    for (int i = 0; env_field(&env, i, &len); i++) {
        snprintf(line, sizeof line, "env %d %s", i, env_field(&env, i, &len));
        for (char *c = line; *c; c++)   /* a value is data: a newline in it must not start another line */
            if ((unsigned char)*c < ' ') *c = '_';
        snprintf(line + strlen(line), sizeof line - strlen(line), "\n");
        check_report(line);
    }
    return 0;
}

static void probe_line(const char *line, void *ctx) {
    probe_t *p = ctx;
    int i, at = 0;
    size_t len;
    if (sscanf(line, "devices %d", &p->n_dev) == 1) return;
    if (strncmp(line, "nodevice ", 9) == 0) snprintf(p->nodev, sizeof p->nodev, "%.*s", (int)strcspn(line + 9, "\n"),
                                                     line + 9);
    else if (sscanf(line, "env %d %n", &i, &at) == 1 && at > 0) {
        char *f = env_field(p->env, i, &len);
        if (f) snprintf(f, len, "%s", line + at);
    }
}

/* 0 with *n_dev devices and env filled, or 2 after the one-line message. need_gpu 0 (a strategy that does no CUDA
 * work): no device is no error (*n_dev -1). */
static int probe_devices(int *n_dev, study_env_t *env, int need_gpu) {
    probe_t p = {.n_dev = 0, .env = env};
    isolate_result_t ir;
    char err[512];
    memset(env, 0, sizeof *env);
    if (isolate_run(probe_child, NULL, 120, probe_line, &p, &ir, err, sizeof err)) return fail(err);
    if (p.n_dev <= 0 && !need_gpu) p.n_dev = -1;
    else if (p.n_dev <= 0 || (need_gpu && p.nodev[0])) {     /* no GPU, or one that cannot run this build */
        if (p.nodev[0]) return fail(p.nodev);
        char why[600];
        isolate_describe(&ir, 120, why, sizeof why);
        snprintf(err, sizeof err, "no CUDA device (%.400s); %s", why, GPU_ARCH_WITHOUT_GPU);
        return fail(err);
    }
    *n_dev = p.n_dev;
    return 0;
}


static int bench_child(void *arg) { return allreduce_bench_main(arg); }

/* The default study's all-reduce benchmark (on 2 or more GPUs), in a child process as every run is: the parent never
 * initialises CUDA. Its table goes to stdout, its rows beside the study's CSV where the report finds them. 0, or 1
 * after a line saying why the report will have no cost model. */
static int default_bench(const default_study_t *ds, double timeout_s) {
    const default_plan_t *p = &ds->plan;
    char cmd[1024], err[512], why[600];
    default_plan_bench_command(p, cmd, sizeof cmd);
    printf("# all-reduce benchmark (for the report's cost model and projection): %s\n", cmd);
    fflush(stdout);
    allreduce_bench_t b = {p->bench_gpus, p->n_bench_gpus, "", p->bench_csv, NAIVE_PATH_AUTO};
    isolate_result_t ir;
    /* silence: the benchmark says it is alive after every size it times */
    if (isolate_run(bench_child, &b, timeout_s, NULL, NULL, &ir, err, sizeof err) != 0) snprintf(why, sizeof why, "%s", err);
    else if (ir.exit_code == 0) return 0;
    else isolate_describe(&ir, timeout_s, why, sizeof why);
    fprintf(stderr, "scaling: the all-reduce benchmark did not complete (%s); REPORT.md has no cost model: run %s\n",
            ir.exit_code == 1 ? "wrong sums, or a reduction could not be set up: see its table" : why, cmd);
    return 1;
}

/* ./scaling with no options (and no launcher): the default study (bench/default/default_study.h), one sweep per strategy
 * into one CSV of a fresh folder, then its report and the answer. Exit 1 where a run failed or the report did. */
static int default_main(void) {
    default_study_t ds;
    char err[512] = "";
    study_env_t env;
    int n_dev = 0;
    paths_use_t dump;      /* as a sweep's checks do: before anything runs */
    if (front_check_env(err, sizeof err) || (front_dump_use(&dump) && paths_check(&dump, 1, err, sizeof err)))
        return fail(err);
    if (probe_devices(&n_dev, &env, 1)) return 2;
    if (default_study_begin(&ds, n_dev, err, sizeof err)) return fail(err);
    print_env(&env);
    run_tally_t sd = {0};
    progress_init(&sd.prog, ds.runs, ds.epochs);
    profile_t prof;
    profile_init(&prof);
    for (int i = 0; i < ds.plan.n_sweeps && !sd.outcomes[RUN_INTERRUPTED] && !sd.gpu_held; i++) {
        default_study_announce(&ds, i, stdout);
        table_header(stdout);
        fflush(stdout);
        run_sweep(&ds.plan.sweep[i], ds.pts[i], ds.n_pts[i], &ds.data, &ds.res, &env, &sd, &prof, NULL);
    }
    print_outcomes(&sd, ds.plan.csv);
    if (sd.outcomes[RUN_INTERRUPTED] || sd.gpu_held) return outcome_status(&sd);   /* no report of half a study */
    int bench_rc = ds.plan.n_bench_gpus ? default_bench(&ds, ds.plan.sweep[0].timeout_s) : 0;
    if (isolate_signal()) return isolate_exit_status(isolate_signal());
    int rc = default_study_end(&ds);
    return outcome_status(&sd) || rc || bench_rc ? 1 : 0;
}

/* Parses the options and checks everything that needs no GPU (--help and --version answered here), so a typo or a
 * missing file is reported as such even on a machine without one; nothing is written before every check has passed.
 * -1: go on; otherwise the exit status. infos: room for 64 strategies' properties, filled. */
static int scaling_options(options_t *o, const strategy_info_t **infos, int argc, char **argv, const dist_t *dist,
                           rank_watch_t *watch) {
    char err[512] = "";
    int rc = options_parse(o, argc, argv, err, sizeof err);
    if (rc == 0) rank_watch_timeout(watch, o->timeout_s);     /* under mpirun/srun: every wait from here on */
    rank_watch_phase(watch, "the option agreement", 0);
    strategy_infos(infos, 64);
    if (rc == 1) {   /* --help: the option table printed it; the strategies come from the registry */
        front_help(stdout, infos);
        return 0;
    }
    if (failed(dist, rc, err, sizeof err)) return 2;
    if (o->version) {    /* before any check: a machine without a GPU or data answers it */
        if (!dist || dist->is_root) env_print_version(stdout);
        return 0;
    }

    if (failed(dist, options_validate(o, infos, -1, err, sizeof err), err, sizeof err)) return 2;
    /* A hand split must cut the layer graph where a stage boundary can carry what crosses (a residual block at most
     * once, the shortcut beside the branch). */
    if (failed(dist, o->n_split ? model_split_check(o->model, o->split, o->n_split, err, sizeof err) : 0, err,
               sizeof err))
        return 2;
    const strategy_t *st = strategy_find(o->strategy);
    if (dist) {     /* one process per GPU: strategies made for it only, and --gpus is the number of processes */
        rc = 0;
        if (o->bench)
            rc = 2, snprintf(err, sizeof err, "--bench %s runs in one process; launch it without mpirun/srun",
                             o->bench);
        else if (o->dry_run)
            rc = 2, snprintf(err, sizeof err, "--dry-run runs in one process; launch it without mpirun/srun");
        else if (!st->info->multi_process) {
            char which[256] = "";
            for (int i = 0; infos[i]; i++)
                if (infos[i]->multi_process)
                    snprintf(which + strlen(which), sizeof which - strlen(which), "%s--strategy %s", *which ? ", " : "",
                             infos[i]->name);
            rc = 2, snprintf(err, sizeof err, "strategy %s runs in one process; launch it without mpirun (one process "
                             "per GPU is %s)", o->strategy, which);
        }
        else
            rc = options_for_world(o, dist->size, err, sizeof err);
        if (failed(dist, rc, err, sizeof err)) return 2;
    }
    if (failed(dist, front_check_env(err, sizeof err), err, sizeof err)) return 2;
    return -1;
}

/* The sweep's points (*pts, n_points returned) and the checks of every file it will write or read, still before
 * anything is opened for writing. -1 after a message. */
static int scaling_points(const options_t *o, sweep_point_t **pts, const dist_t *dist) {
    char err[512] = "";
    int n_points = sweep_expand(o, pts, err, sizeof err);
    if (failed(dist, n_points < 0, err, sizeof err)) return -1;
    if ((!dist || dist->is_root) && sweep_lr_warning(o, *pts, n_points, err, sizeof err))
        errmsg_line(stderr, "scaling: warning: ", "%s", err);
    /* No output may name another or a FIFO, directory or device, or lie where nothing can be written: checked with
     * stat before anything is opened (a FIFO would block), so a mistake costs nothing. */
    if (failed(dist, front_check_outputs(o, n_points, err, sizeof err), err, sizeof err)) return -1;
    /* A CSV of another layout is refused now, read-only, rather than after minutes of data loading. */
    if (failed(dist, (!dist || dist->is_root) ? study_check(o->out, err, sizeof err) : 0, err, sizeof err)) return -1;
    if (failed(dist, o->conv_cache ? conv_cache_check(o->conv_cache, err, sizeof err) : 0, err, sizeof err)) return -1;
    return n_points;
}

/* The data set of --dataset into data. 0, or 2 after a message. */
static int scaling_load_data(const options_t *o, idx_dataset_t *data, const dist_t *dist, rank_watch_t *watch) {
    char err[512] = "";
    int rc = 0;     /* under dist every node reads its own copy: a file missing on one node stops every rank */
    rank_watch_phase(watch, "data loading", 1);
    rc = front_load_data(o, data, err, sizeof err);
    rank_watch_phase(watch, "the data agreement", 0);
    return failed(dist, rc, err, sizeof err) ? 2 : 0;
}

/* This process's GPU (one per process under dist) or the devices it may use (probed in a child, which fills env),
 * then the checks that need their count. 0, or 2 after a message. */
static int scaling_devices(options_t *o, const strategy_info_t **infos, const strategy_t *st, idx_dataset_t *data,
                           study_env_t *env, dist_t *dist, rank_watch_t *watch) {
    char err[512] = "";
    int n_dev = 0;
    if (dist) {     /* this process's GPU from its node-local rank; the world may span nodes */
        rank_watch_phase(watch, "device selection", 1);
        if (failed(dist, dist_select_device(dist, err, sizeof err), err, sizeof err)) return 2;
        rank_watch_phase(watch, "the option agreement", 0);
        n_dev = -1;
    } else if (probe_devices(&n_dev, env, !st->info->no_gpu)) {   /* no_gpu: there may be no device at all */
        idx_free(data);
        return 2;
    }
    if (failed(dist, options_validate(o, infos, n_dev, err, sizeof err), err, sizeof err)) return 2;
    return 0;
}

/* Rank 0 opens the CSV; every rank learns the others' environment; the header lines and the table's head on
 * stdout. 0, or 2 after a message. */
static int scaling_open(const options_t *o, const strategy_t *st, int n_points, const idx_dataset_t *data,
                        study_csv_t *res, study_env_t *env, const dist_t *dist, rank_watch_t *watch) {
    char err[512] = "";
    int is_root = !dist || dist->is_root;
    rank_watch_phase(watch, "opening the CSV", is_root);     /* rank 0 opens it; the others wait for it */
    if (failed(dist, is_root ? study_open(res, o->out, err, sizeof err) : 0, err, sizeof err)) return 2;
    rank_watch_phase(watch, "gathering the ranks' environment", 0);
    if (dist) {
        env_collect(env, dist);
        /* Rank 0's transport settings (dist_nccl_transport fills rank 0's): a row another rank writes for a fault
         * carries the same configuration key. */
        dist_bcast(dist, env->nccl_transport, sizeof env->nccl_transport);
        dist_bcast(dist, env->nccl_env, sizeof env->nccl_env);
    }
    char maths[64] = "";
    for (int i = 0; i < o->n_math; i++)
        snprintf(maths + strlen(maths), sizeof maths - strlen(maths), "%s%s", i ? "," : "", math_name(o->math[i]));
    printf("# scaling: strategy %s, model %s, dataset %s, math %s, init %s, %d run(s) x %d epoch(s) -> %s\n",
           st->info->name, options_model_cell(o), o->dataset, maths, init_name(o->init), n_points, o->epochs, o->out);
    print_env(env);
    print_flops(o, data);
    dist_report(dist, stdout);
    table_header(stdout);
    fflush(stdout);
    return 0;
}

/* The command in one process, or in every process of an mpirun/srun job (dist, strategies/dist.h): there every
 * rank runs all of it, every check that may fail on some ranks only is agreed (failed()), and rank 0 alone
 * writes the CSV, the table (other ranks' stdout is /dev/null) and the progress lines. */
static int scaling_main(int argc, char **argv, dist_t *dist, rank_watch_t *watch) {
    options_t o;
    const strategy_info_t *infos[64];
    int rc = scaling_options(&o, infos, argc, argv, dist, watch);
    if (rc >= 0) return rc;
    if (o.bench) {      /* --bench allreduce: no training, no data set */
        char err[512] = "";
        paths_use_t out = {"--out", o.out, 0};
        if (paths_check(&out, 1, err, sizeof err) || allreduce_bench_check(o.out, err, sizeof err)) return fail(err);
        allreduce_bench_t b = {o.gpus, o.n_gpus, o.strategy, o.out, o.naive_path};
        return allreduce_bench_main(&b);
    }
    sweep_point_t *pts = NULL;
    int n_points = scaling_points(&o, &pts, dist);
    if (n_points < 0) return 2;
    idx_dataset_t data;
    if (scaling_load_data(&o, &data, dist, watch)) return 2;
    const strategy_t *st = strategy_find(o.strategy);
    study_env_t env;
    if (o.dry_run) {    /* no device probe, nothing opened for writing: the rows' configuration cells alone */
        memset(&env, 0, sizeof env);
        dist_nccl_transport(NULL, env.nccl_transport, sizeof env.nccl_transport);
        rc = dry_run_print(&o, st->info, pts, n_points, &data, &env, stdout);
        idx_free(&data);
        free(pts);
        return rc;
    }
    if (scaling_devices(&o, infos, st, &data, &env, dist, watch)) return 2;
    study_csv_t res = {0};
    int is_root = !dist || dist->is_root;
    if (scaling_open(&o, st, n_points, &data, &res, &env, dist, watch)) return 2;
    profile_t prof;
    profile_init(&prof);
    if (prof.steps > 0 && o.epochs < 2 && is_root)
        fprintf(stderr, "scaling: SCALING_PROFILE_STEPS captures from epoch 2 on: --epochs %d captures nothing\n",
                o.epochs);
    run_tally_t sd = {.watch = watch};
    progress_init(&sd.prog, n_points, (long)n_points * o.epochs);
    rc = run_sweep(&o, pts, n_points, &data, is_root ? &res : NULL, &env, &sd, &prof, dist);
    if (is_root) study_close(&res);
    idx_free(&data);
    free(pts);
    if (rc) return rc;
    print_outcomes(&sd, o.out);
    return outcome_status(&sd);
}

/* mpirun/srun with several processes (strategies/dist.h): MPI is initialised here, before CUDA, and finalised on
 * every way out of scaling_main, so every rank exits with the same status. A plain ./scaling never touches MPI. */
int main(int argc, char **argv) {
    /* Only a run's child process reports on a pipe, and isolate_run sets it there: one inherited from the user's
     * environment would send this process's check lines into whatever that descriptor is (the study CSV, say). */
    unsetenv("SCALING_REPORT_FD");
    /* before MPI or CUDA: the report runs where there is neither */
    if (argc >= 2 && strcmp(argv[1], "report") == 0) {
        const strategy_info_t *infos[64];
        strategy_infos(infos, 64);
        return report_main(argc - 1, argv + 1, SCALING_SOURCE_DIR, argv[0], infos);
    }
    if (argc >= 2 && strcmp(argv[1], "tsv") == 0) return tsv_main(argc, argv);
    char err[512] = "";
    dist_t d;
    int mode = dist_init(&d, err, sizeof err);
    if (mode < 0) return d.is_root ? fail(err) : 2;
    dist_t *dist = mode == 1 ? &d : NULL;
    rank_watch_t watch;     /* under mpirun/srun: the deadline of every wait outside a run, until the final barrier */
    if (rank_watch_start(&watch, dist) != 0) dist_abort(dist, 1);
    isolate_signals_install();
    /* A closed stdout (`| head`) is no fault of a configuration: a write fails with EPIPE instead of killing the run's
     * process, and the sweep goes on without its table (table_stdout_check). Inherited by the runs' processes. */
    signal(SIGPIPE, SIG_IGN);
    if (dist && !dist->is_root && !freopen("/dev/null", "w", stdout)) {
        fprintf(stderr, "scaling: error: rank %d: cannot redirect stdout to /dev/null: %s\n", dist->rank,
                strerror(errno));
        return 1;
    }
    int rc = argc == 1 && !dist ? default_main() : scaling_main(argc, argv, dist, &watch);
    fflush(stdout);
    rank_watch_phase(&watch, "the final barrier", 0);
    dist_finalize(dist);
    rank_watch_stop(&watch);
    return rc;
}
