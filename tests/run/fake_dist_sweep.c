/* fake_dist_sweep.c — a two-configuration sweep (lr 0.01 then 0.02, 2 epochs of 40 steps) through bench/run.c under
 * `mpirun -np N`, with a fake strategy that touches no GPU but does one MPI all-reduce per step, as a collective
 * that a stopped or dead rank leaves waiting: tests/cli/faults_mpi_host.sh drives it to time the fault paths of one
 * process per GPU (watchdog, MPI_Abort, the rows, the stop on a signal) without a GPU. FAKE_CHECK_RANK=R: that rank
 * fails a CHECK at step 5 of the first configuration; FAKE_STEP_MS: a step's time (5); FAKE_RAISE=E:S[:R]: SIGTERM
 * to itself during step S of epoch E of the first configuration, on rank R (every rank without it), a signal at a
 * known step; FAKE_NO_COLLECTIVE=1: steps without their all-reduce, as NCCL's make no MPI call (a stalled rank then
 * leaves the others waiting in the stop vote); FAKE_HANG=WHERE:R: rank R stops for good before the first run (WHERE
 * start) or between the two runs (between), where only the ranks' deadline outside a run (bench/faults/rank_watch.h)
 * can end the job. Each rank writes "PID STARTTIME" (its /proc start time, so a test never takes a reused pid for
 * it) to $FAKE_PIDS.R and says its exit status and the wall-clock time on
 * stderr. Arguments: scaling's options. */
#define _POSIX_C_SOURCE 200809L
#include "bench/run.h"
#include "bench/faults/isolate.h"
#include "bench/faults/rank_watch.h"
#include "engine/check.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    const dist_t *dist;
    int check_here, no_collective;
    int raise_epoch, raise_step;    /* FAKE_RAISE on this rank; 0, -1 without */
    int epoch;
} fake_t;

static int fake_setup(void **state, const run_cfg_t *cfg, char *err, size_t errlen) {
    (void)err, (void)errlen;
    fake_t *f = calloc(1, sizeof *f);
    const char *r = getenv("FAKE_CHECK_RANK");
    f->dist = cfg->dist;
    f->check_here = r && cfg->dist && atoi(r) == cfg->dist->rank && cfg->lr < 0.015;
    f->no_collective = getenv("FAKE_NO_COLLECTIVE") != NULL;
    const char *sig = getenv("FAKE_RAISE");
    int e, s, rank = -1;
    f->raise_step = -1;
    if (sig && sscanf(sig, "%d:%d:%d", &e, &s, &rank) >= 2 && cfg->lr < 0.015 &&
        (rank < 0 || (cfg->dist && rank == cfg->dist->rank)))
        f->raise_epoch = e, f->raise_step = s;
    *state = f;
    return 0;
}
static int fake_steps(void *state) { (void)state; return 40; }
static void fake_epoch_begin(void *state, int epoch) { ((fake_t *)state)->epoch = epoch; }
static void fake_train_step(void *state, int step) {
    fake_t *f = state;
    const char *ms = getenv("FAKE_STEP_MS");
    struct timespec t = {0, (ms ? atoi(ms) : 5) * 1000000L};
    nanosleep(&t, NULL);
    if (f->check_here && step == 5)
        check_fail("strategies/nccl.c", 124, "ncclAllReduce(b, b, count, type, ncclSum, comm, stream)",
                   "unhandled system error");
    if (f->epoch == f->raise_epoch && step == f->raise_step) raise(SIGTERM);
    if (!f->no_collective) dist_max(f->dist, (double)step);    /* the step's collective */
}
static void fake_epoch_end(void *state, int steps, epoch_stats_t *out) {
    (void)state;
    out->steps = steps;
    out->epoch_s = 0.2;
    out->step_ms = 5;
    out->train_loss = 0.5;
    out->train_acc = 0.8;
}
static double fake_evaluate(void *state) { (void)state; return 0.75; }
static void fake_teardown(void *state) { free(state); }

static const strategy_info_t fake_info = {.name = "fake", .summary = "test double", .multi_process = 1, .no_gpu = 1};

static const strategy_t fake = {
    .info = &fake_info,
    .setup = fake_setup, .steps_per_epoch = fake_steps, .epoch_begin = fake_epoch_begin,
    .train_step = fake_train_step, .epoch_end = fake_epoch_end, .evaluate = fake_evaluate, .teardown = fake_teardown,
};

int main(int argc, char **argv) {
    char err[512] = "";
    dist_t d;
    if (dist_init(&d, err, sizeof err) != 1) {
        fprintf(stderr, "fake_dist_sweep: needs mpirun -np 2 or more: %s\n", err);
        return 2;
    }
    rank_watch_t watch;     /* as scaling.c's main: every wait outside a run has the deadline */
    if (rank_watch_start(&watch, &d) != 0) dist_abort(&d, 1);
    isolate_signals_install();
    if (!d.is_root && !freopen("/dev/null", "w", stdout)) return 1;   /* rank 0 alone prints the table */
    const char *pids = getenv("FAKE_PIDS");
    if (pids) {
        char path[600];
        snprintf(path, sizeof path, "%s.%d", pids, d.rank);
        unsigned long long start = 0;     /* field 22 of /proc/self/stat, counted after the command's ')' */
        char stat[1024] = "";
        FILE *ps = fopen("/proc/self/stat", "r");
        if (ps && fgets(stat, sizeof stat, ps)) {
            char *p = strrchr(stat, ')');
            for (int field = 2; p && *p && field < 22; p++) field += *p == ' ';
            if (p) start = strtoull(p, NULL, 10);
        }
        if (ps) fclose(ps);
        FILE *f = fopen(path, "w");
        if (f) fprintf(f, "%d %llu\n", (int)getpid(), start), fclose(f);
    }
    options_t o;
    if (options_parse(&o, argc, argv, err, sizeof err) != 0) {
        fprintf(stderr, "fake_dist_sweep: %s\n", err);
        return 2;
    }
    rank_watch_phase(&watch, "opening the CSV", d.is_root);
    const char *hang = getenv("FAKE_HANG");
    int hang_rank = -1;
    char hang_where[16] = "";
    if (hang && sscanf(hang, "%15[a-z]:%d", hang_where, &hang_rank) != 2) hang_rank = -1;
    d.device = 0;
    idx_dataset_t data;
    idx_synthetic(&data, 1);
    study_csv_t res = {0};
    if (d.is_root && study_open(&res, o.out, err, sizeof err) != 0) {
        fprintf(stderr, "fake_dist_sweep: %s\n", err);
        dist_abort(&d, 2);
    }
    study_env_t env = {.gpu_name = "none", .host = "test", .nccl_transport = "default"};
    run_tally_t sd = {.watch = &watch};
    progress_init(&sd.prog, 2, 4);
    profile_t prof;
    profile_init(&prof);
    study_scan_t done = {0};
    if (o.resume && d.is_root && study_scan(o.out, &done, err, sizeof err) != 0) dist_abort(&d, 2);
    int rc = 0;
    /* --timeout from here: the tests give it 3 s, and the set-up above (55 MB of random images) may take longer on a
     * busy machine; the real command's set-up phases have the deadline too (scaling.c), tested with a longer one */
    rank_watch_timeout(&watch, o.timeout_s);
    rank_watch_phase(&watch, "the agreement between runs", 0);
    isolate_defer(1);       /* as scaling.c's sweep */
    for (int i = 0; i < 2; i++) {
        if (d.rank == hang_rank && strcmp(hang_where, i == 0 ? "start" : "between") == 0) {
            fprintf(stderr, "fake_dist_sweep: rank %d stops for good before run %d\n", d.rank, i + 1);
            for (;;) pause();
        }
        if (dist_max(&d, (double)isolate_signal()) > 0) {     /* as scaling.c's sweep: a signal between two runs */
            rc = isolate_exit_status(isolate_signal() ? isolate_signal() : 15);
            break;
        }
        sweep_point_t pt = {.index = i, .gpus = d.size, .global_batch = 64 * d.size, .per_gpu_batch = 64,
                            .lr = 0.01 * (i + 1), .seed = 1, .math = MATH_TF32, .grad_dtype = DTYPE_FP32,
                            .micro_batches = 1};
        int got = run_point(&o, &fake, &pt, &data, d.is_root ? &res : NULL, &env, &sd, o.resume ? &done : NULL,
                            &prof, &d);
        if (got == RUN_FAILED || got == RUN_TIMEOUT) rc = 1;
        if (got == RUN_INTERRUPTED) { rc = isolate_exit_status(isolate_signal() ? isolate_signal() : 15); break; }
    }
    study_scan_free(&done);
    if (d.is_root) study_close(&res);
    idx_free(&data);
    /* Said before MPI_Finalize: once one rank exits with a signal's status, the launcher ends the others. */
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    fprintf(stderr, "fake_dist_sweep: rank %d exits %d at %.3f\n", d.rank, rc, (double)now.tv_sec + 1e-9 * now.tv_nsec);
    rank_watch_phase(&watch, "the final barrier", 0);
    dist_finalize(&d);
    rank_watch_stop(&watch);
    return rc;
}
