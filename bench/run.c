/* run.c — one sweep point run to its rows (run.h): the run itself on the GPUs (setup, epochs, teardown), in a child
 * process when one process drives the GPUs, under a watchdog with one process per GPU; the row of each fault. */
#include "run.h"
#include "run_record.h"
#include "run_state.h"
#include "table.h"
#include "faults/isolate.h"
#include "faults/watchdog.h"
#include "../engine/nvtx.h"
#include "../engine/trace.h"
#include "../engine/check.h"
#include "../engine/tokens.h"
#include <cuda_runtime.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *signal_name(int sig) { return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal"; }

static int run_health(void *ctx, char *why, size_t len) {
    run_ctx_t *r = ctx;
    /* Under mpirun/srun a signal stops the ranks together a few steps later (the vote, dist_vote_step); a launcher
     * that signals because a rank died leaves the others waiting for it, so the signal starts a deadline of its own:
     * --timeout from it, then every rank ends (rank 0's row was written by its handler). */
    if (r->dist && isolate_signal()) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        double now = (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
        if (r->signal_at == 0) r->signal_at = now;
        else if (now - r->signal_at > r->o->timeout_s) {
            fprintf(stderr, "scaling: rank %d on %s: %s %.0f s ago and the ranks did not stop together; ending every "
                    "rank\n", r->dist->rank, r->dist->host, isolate_signal() == SIGINT ? "SIGINT" : "SIGTERM",
                    now - r->signal_at);
            fflush(stderr);
            dist_abort(r->dist, isolate_exit_status(isolate_signal()));
        }
    }
    pthread_mutex_lock(&r->state_lock);     /* teardown waits for the poll: it never frees what the poll reads */
    int broken = r->state && r->st->health ? r->st->health(r->state, why, len) : 0;
    pthread_mutex_unlock(&r->state_lock);
    return broken;
}

/* The strategy's state away from the watchdog thread (which then polls nothing), for its teardown. */
static void *run_release(run_ctx_t *r) {
    pthread_mutex_lock(&r->state_lock);
    void *state = r->state;
    r->state = NULL;
    pthread_mutex_unlock(&r->state_lock);
    return state;
}

/* The watchdog's tick, every PROGRESS_EVERY_S: where the setup or the epoch stands (bench/progress.h), from what the
 * run already keeps: the layers set up and searches run, counted by the engine (r->setup), the GPUs' finished steps
 * read from the step events (never a wait). Rank 0 alone speaks; a line at a time where stderr is not a terminal (a
 * Slurm log), rewritten in place where it is. */
static void run_progress(void *ctx) {
    run_ctx_t *r = ctx;
    if (!r->is_root) return;
    char line[256];
    pthread_mutex_lock(&r->state_lock);
    int epoch = __atomic_load_n(&r->epoch, __ATOMIC_RELAXED);
    if (!r->state && epoch == 0) {
        setup_count_now_t now = setup_count_read(&r->setup);
        progress_setup_line(line, sizeof line, r->k, r->n_points, wall_now() - r->t0, r->cfg.n_gpus, &now);
    } else if (r->state && r->epoch_steps > 0) {
        progress_step_t p = {.run = r->k, .runs = r->n_points, .epoch = epoch, .epochs = r->o->epochs,
                             .launched = __atomic_load_n(&r->returned, __ATOMIC_ACQUIRE), .done = -1,
                             .steps = r->epoch_steps, .host_s = wall_now() - r->epoch_t0,
                             .global_batch = r->pt->global_batch};
        /* this thread's device is the run's first GPU, whose stream records the step events: no context is made
         * on another device */
        if (r->st->steps_done && !r->st->info->no_gpu && cudaSetDevice(r->devices[0]) != cudaSuccess) p.done = -1;
        else if (r->st->steps_done) p.done = r->st->steps_done(r->state, p.launched, &p.gpu_ms);
        progress_step_line(line, sizeof line, &r->prog_at_epoch, &p);
    } else line[0] = '\0';
    pthread_mutex_unlock(&r->state_lock);
    if (!line[0]) return;
    if (isatty(STDERR_FILENO)) {
        fprintf(stderr, "\r%s\033[K", line);
        __atomic_store_n(&r->line_open, 1, __ATOMIC_RELEASE);
    } else fprintf(stderr, "%s\n", line);
    fflush(stderr);
}

/* The watchdog's end of a run (bench/faults/watchdog.h), on its thread: the line, the row, then under mpirun/srun every
 * rank ends (MPI_Abort); in a child process the child ends, its outcome told, and the sweep goes on. */
static void run_expire(void *ctx, const char *why, int timed_out) {
    run_ctx_t *r = ctx;
    int epoch = __atomic_load_n(&r->epoch, __ATOMIC_RELAXED), step = __atomic_load_n(&r->step, __ATOMIC_RELAXED);
    char reason[760], line[32];
    /* A signal came first (the user, a time limit) and the step it should have stopped before never ended: no
     * verdict on the configuration either, --resume runs it again. */
    int sig = isolate_signal();
    const char *first = sig && timed_out ? signal_name(sig) : "", *then = sig && timed_out ? ", then " : "";
    if (r->dist)
        snprintf(reason, sizeof reason, "%s%srank %d on %s, epoch %d step %d: %s", first, then, r->dist->rank,
                 r->dist->host, epoch, step, why);
    else snprintf(reason, sizeof reason, "%s%sepoch %d step %d: %s", first, then, epoch, step, why);
    run_say_begin(r);
    fprintf(stderr, "scaling: %s; ending %s\n", reason, r->dist ? "every rank" : "the run");
    fflush(stderr);
    isolate_last_words(-1, NULL, 0);
    study_status_t status = sig && timed_out ? RUN_INTERRUPTED : timed_out ? RUN_TIMEOUT : RUN_FAILED;
    if (r->is_root) run_write_fault_row(r, status, reason, epoch, -1, -1);
    else {
        /* A deadline passes on every waiting rank at about the same time: rank 0, which writes the row, is given 5 s
         * to end the job first. Only then (rank 0 stopped or dead) does this rank write the row itself. */
        if (timed_out) {
            struct timespec t = {.tv_sec = 5, .tv_nsec = 0};
            while (nanosleep(&t, &t) != 0) {}
        }
        run_dist_row_from_rank(r, status, reason);
    }
    int code = sig && timed_out ? isolate_exit_status(sig) : timed_out ? 124 : 1;
    if (r->dist) dist_abort(r->dist, code);
    snprintf(line, sizeof line, "outcome %d\n", status);
    check_report(line);
    _exit(code);     /* the main thread is stuck: nothing of this process is worth running on */
}

/* Under mpirun/srun, on every rank at the same point (r->reason says where): a line naming the rank, then rank 0's
 * interrupted row at `epoch` unless its signal handler wrote the prepared one already. */
static void dist_stop(run_ctx_t *r, int epoch) {
    fprintf(stderr, "scaling: rank %d on %s: %s\n", r->dist->rank, r->dist->host, r->reason);
    isolate_last_words(-1, NULL, 0);
    if (!isolate_last_words_spoken()) run_write_fault_row(r, RUN_INTERRUPTED, r->reason, epoch, -1, -1);
}

/* The run's setup: the fault injection armed for it, its trace, the strategy's setup. -1 with *state set up, else the
 * outcome of a run that ended there (its row written). */
static int run_setup(run_ctx_t *r, trace_t *tr, void **state) {
    const options_t *o = r->o;
    const strategy_t *st = r->st;
    const sweep_point_t *pt = r->pt;
    char err[512] = "", line[64];
    if (fault_begin_run(r->dist ? r->dist->rank : 0, pt->index + 1, err, sizeof err)) {
        run_write_fault_row(r, RUN_FAILED, err, 0, -1, -1);
        return RUN_FAILED;
    }
    if (o->trace) {
        /* Per GPU and step: forward, update and a backward plus a communication range (and a bf16 cast) per bucket
         * (at most one bucket per layer); the pipeline's forward, backward and up to three copies (each in two
         * halves where staged) per micro-batch. */
        int m = pt->micro_batches > 0 ? pt->micro_batches : PIPE_AUTO_MAX_MICRO;
        int per_step = 3 * MODEL_MAX_LAYERS + 8 + 8 * m;
        trace_init(tr, per_step * TRACE_STEPS * (pt->gpus > 0 ? pt->gpus : 1));
        r->cfg.trace = tr;
    }
    run_prepare_last_words(r, 0);
    nvtx_push("setup %s gpus=%d batch=%d", st->info->name, pt->gpus, pt->global_batch);
    int rc = st->setup(state, &r->cfg, err, sizeof err);
    nvtx_pop();
    if (rc != 0) {
        isolate_last_words(-1, NULL, 0);
        if (o->trace) trace_free(tr);
        int oom = strstr(err, "out of memory") != NULL;
        double free_mb = -1, total_mb = -1;
        /* no device memory to report without a GPU */
        if (oom && !st->info->no_gpu) run_mem_now(r, &free_mb, &total_mb);
        /* under dist, every rank holds the first failing rank's message (dist_agree) */
        run_write_fault_row(r, oom ? RUN_OOM : RUN_FAILED, err, 0, free_mb, total_mb);
        progress_drop(&r->sd->prog, o->epochs, 1);
        return oom ? RUN_OOM : RUN_FAILED;
    }
    pthread_mutex_lock(&r->state_lock);
    r->state = *state;
    pthread_mutex_unlock(&r->state_lock);
    isolate_defer(1);       /* its steps are checkpoints now: a signal stops the run before the next one */
    double setup_s = wall_now() - r->t0;
    progress_setup_done(&r->sd->prog, setup_s);
    snprintf(line, sizeof line, "setup %.6f\n", setup_s);
    check_report(line);
    return -1;
}

/* The first step of epoch e that --trace records (TRACE_STEPS from there, in the middle of epoch 2, or of epoch 1
 * alone), or -1 for an epoch it does not record. */
static int trace_first_step(const options_t *o, int e, int steps) {
    return e == (o->epochs >= 2 ? 2 : 1) ? (steps > 2 * TRACE_STEPS ? steps / 2 : 0) : -1;
}

/* How an epoch's steps ended: all run; stopped by a signal under mpirun/srun (every rank at the same step, rank 0's
 * row written: the run ends after the epoch's bookkeeping); ended by a signal in one process (its row written: the
 * run ends at once). */
enum { STEPS_DONE, STEPS_STOPPED, STEPS_ENDED };

/* Epoch e's `steps` steps, each at a boundary where SIGINT/SIGTERM can end the run, beating the deadlines. */
static int epoch_steps(run_ctx_t *r, void *state, trace_t *tr, int e, int steps, double *beat) {
    const strategy_t *st = r->st;
    int trace_first = trace_first_step(r->o, e, steps), how = STEPS_DONE;
    dist_vote_t vote;
    dist_vote_begin(&vote, r->dist);
    for (int i = 0; i < steps; i++) {
        /* SIGINT/SIGTERM end the run here, at a step boundary: with one process at once; under mpirun/srun, where
         * every rank must stop at the same step, when the vote that tells them all comes back. */
        int sig = r->dist ? dist_vote_step(&vote, i, isolate_signal()) : 0;
        if (sig) {
            snprintf(r->reason, sizeof r->reason, "%s: stopped before step %d of epoch %d", signal_name(sig), i, e);
            dist_vote_drain(&vote);
            dist_stop(r, e);
            how = STEPS_STOPPED;
            break;
        }
        if (!r->dist && isolate_signal()) {
            snprintf(r->reason, sizeof r->reason, "%s: stopped before step %d of epoch %d",
                     signal_name(isolate_signal()), i, e);
            run_write_fault_row(r, RUN_INTERRUPTED, r->reason, e, -1, -1);
            check_report("interrupted\n");
            return STEPS_ENDED;
        }
        if (fault_inject(FAULT_STALL)) fault_stall();      /* test-only (engine/fault.h) */
        __atomic_store_n(&r->step, i, __ATOMIC_RELAXED);
        profile_before_step(r->prof, e, i);
        tr->active = r->o->trace && trace_first >= 0 && i >= trace_first && i < trace_first + TRACE_STEPS;
        nvtx_push("step %d", i);
        st->train_step(state, i);
        __atomic_store_n(&r->returned, i + 1, __ATOMIC_RELEASE);
        nvtx_pop();
        int was_profiling = r->prof->state == 1;
        profile_after_step(r->prof, i, i + 1 == steps, &r->cfg);
        if (was_profiling && r->prof->state == 2) check_report("profiled\n");
        /* Alive, for the parent's deadline (one clock read per step, one line a second at most); under
         * mpirun/srun the watchdog thread's. */
        double now = wall_now();
        if (now - *beat >= 1) {
            check_report("alive\n");
            *beat = now;
        }
        if (r->wd) watchdog_beat(r->wd);
    }
    tr->active = 0;
    if (how == STEPS_DONE) dist_vote_drain(&vote);     /* a signal in the last steps: the agreement after the epoch */
    return how;
}

/* The end of epoch e (its steps run): the strategy's measurements and the test accuracy into row, its status (ok,
 * diverged, replicas-differ; *outcome follows), the row written and told, the ETA. 1 when the run diverged. */
static int epoch_row(run_ctx_t *r, void *state, trace_t *tr, study_row_t *row, int e, int steps, double w0,
                     double *first_loss, int *outcome) {
    const options_t *o = r->o;
    const strategy_t *st = r->st;
    epoch_stats_t *s = &row->stats;     /* the strategy writes its measurements into the row */
    st->epoch_end(state, steps, s);
    if (r->wd) watchdog_beat(r->wd);
    if (o->trace && trace_first_step(o, e, steps) >= 0)
        trace_after_epoch(tr, o, r->pt, r->n_points, st->info->name, r->is_root);
    /* Random labels have no accuracy to measure: synthetic rows leave both accuracy cells empty. A language model's
     * evaluation is its held-out loss (random tokens have none either), its train_acc empty. */
    const struct tokens_corpus *lm = r->data->corpus;
    double e0 = wall_now(), acc = r->data->synthetic ? -1 : st->evaluate(state);
    row->eval_s = r->data->synthetic ? -1 : wall_now() - e0;
    nvtx_pop();
    row->epoch = e;
    row->phase = study_phase(e);
    row->images_per_s = (double)s->steps * r->pt->global_batch / s->epoch_s;
    if (lm) row->tokens_per_s = row->images_per_s * lm->T;
    if (r->data->synthetic) s->train_acc = -1;   /* a language model's stays -1: it never writes one */
    row->test_acc = lm ? -1 : acc;
    row->test_loss = lm ? acc : -1;
    /* Diverged: a NaN/inf loss, or one exploding past 1000x the first epoch's. A replica that missed an
     * update is a failed run, not a mysteriously lower accuracy. */
    if (e == 1) *first_loss = s->train_loss;
    int diverged = !isfinite(s->train_loss) || (e > 1 && *first_loss > 0 && s->train_loss > 1e3 * *first_loss);
    /* Replicas that differ are a failed run whatever else happened, in this epoch or a later one. */
    study_status_t status = s->replicas_identical == 0 ? RUN_REPLICAS_DIFFER : diverged ? RUN_DIVERGED : RUN_OK;
    row->status = study_status_name(status);
    row->reason = s->replicas_identical == 0 ? "the replicas' parameters differ after the epoch"
                : diverged ? (isfinite(s->train_loss) ? "the loss exploded past 1000x the first epoch's"
                                                       : "the loss is not finite")
                           : NULL;
    if (s->replicas_identical == 0) *outcome = RUN_FAILED;
    else if (diverged && *outcome != RUN_FAILED) *outcome = RUN_DIVERGED;
    study_stamp(row);
    run_write_row(r->res, row, state, st);
    /* ETA over the whole study: mean wall time per epoch (evaluation included) and per setup so far. */
    double wall = wall_now() - w0;
    progress_epoch_done(&r->sd->prog, wall);
    if (diverged) progress_drop(&r->sd->prog, o->epochs - e, 0);
    char line[256], eta[32];
    snprintf(line, sizeof line, "epoch %d %s %s %.9g %.6f %.9g %.9g\n", e, row->status, row->phase, s->epoch_s,
             wall, row->images_per_s, row->test_acc);
    check_report(line);
    progress_duration(eta, sizeof eta, progress_eta(&r->sd->prog));
    if (r->is_root) run_say_begin(r);
    if (r->is_root)
        fprintf(stderr, "[run %d/%d  epoch %d/%d] %.3f s/epoch  loss %.4f  %s %.4f  ETA %s\n", r->k,
                r->n_points, e, o->epochs, s->epoch_s, s->train_loss, lm ? "held-out loss" : "test acc", acc, eta);
    return diverged;
}

/* The run itself, on the GPUs: setup, epochs, teardown. In the run's child process (one process drives the GPUs)
 * or in each rank (mpirun/srun). Its progress goes to the parent as lines (check_report; nothing without one).
 * Returns a RUN_* outcome; every outcome has left its rows. */
static int run_body(run_ctx_t *r) {
    const options_t *o = r->o;
    const strategy_t *st = r->st;
    void *state = NULL;
    trace_t tr = {0};
    int rc = run_setup(r, &tr, &state);
    if (rc >= 0) return rc;
    study_row_t rows[256], row = r->row;
    int n_rows = 0, outcome = RUN_OK;
    double first_loss = NAN, beat = wall_now();
    for (int e = 1; e <= o->epochs; e++) {
        double w0 = wall_now();
        epoch_stats_init(&row.stats);
        __atomic_store_n(&r->epoch, e, __ATOMIC_RELAXED);
        run_prepare_last_words(r, e);
        nvtx_push("epoch %d", e);
        int steps = st->steps_per_epoch(state);
        if (o->steps > 0 && o->steps < steps) steps = o->steps;
        pthread_mutex_lock(&r->state_lock);      /* what the progress lines read: nothing while events are reset */
        r->epoch_steps = 0;
        pthread_mutex_unlock(&r->state_lock);
        st->epoch_begin(state, e);
        pthread_mutex_lock(&r->state_lock);
        r->epoch_steps = steps;
        r->returned = 0;
        r->epoch_t0 = wall_now();
        r->prog_at_epoch = r->sd->prog;
        pthread_mutex_unlock(&r->state_lock);
        int how = epoch_steps(r, state, &tr, e, steps, &beat);
        if (how == STEPS_ENDED) {
            st->teardown(run_release(r));
            if (o->trace) trace_free(&tr);
            return RUN_INTERRUPTED;
        }
        if (how == STEPS_STOPPED) {
            nvtx_pop();
            outcome = RUN_INTERRUPTED;
            break;
        }
        int diverged = epoch_row(r, state, &tr, &row, e, steps, w0, &first_loss, &outcome);
        if (n_rows < (int)(sizeof rows / sizeof rows[0])) rows[n_rows++] = row;
        if (diverged) break;   /* later epochs would only repeat it */
        /* Under mpirun/srun: a signal on any rank that the votes could not tell in time (the epoch's last steps, or
         * its evaluation) stops every rank here, together. */
        int sig = r->dist ? (int)dist_max(r->dist, (double)isolate_signal()) : 0;
        if (sig && e < o->epochs) {
            snprintf(r->reason, sizeof r->reason, "%s: stopped after epoch %d", signal_name(sig), e);
            dist_stop(r, e + 1);
            outcome = RUN_INTERRUPTED;
            break;
        }
    }
    isolate_last_words(-1, NULL, 0);
    table_summary(stdout, rows, n_rows);
    fflush(stdout);
    dump_params(st, state, r->dist);
    st->teardown(run_release(r));
    if (o->trace) trace_free(&tr);
    return outcome;
}

/* The run's child process: the run, then its outcome for the parent. Exit 0 unless a signal ended it (128 + sig). */
static int run_child(void *arg) {
    run_ctx_t *r = arg;
    /* The child's own watchdog names the epoch, the step and an NCCL asynchronous error; the parent's deadline on
     * the child's silence (10 s later) stays the backstop for a child that cannot run even that thread. */
    watchdog_t wd;
    if (watchdog_start(&wd, r->o->timeout_s, run_health, run_expire, r) == 0) {
        r->wd = &wd;
        watchdog_every(&wd, PROGRESS_EVERY_S, run_progress);    /* never silent: setup, and inside an epoch */
    }
    int outcome = run_body(r);
    if (r->wd) watchdog_stop(&wd);
    r->wd = NULL;
    char line[32];
    snprintf(line, sizeof line, "outcome %d\n", outcome);
    check_report(line);
    return outcome == RUN_INTERRUPTED ? isolate_exit_status(isolate_signal()) : 0;
}

/* The parent's copy of the study follows the child's lines: the ETA. */
static void run_line(const char *line, void *ctx) {
    run_ctx_t *r = ctx;
    run_tally_t *sd = r->sd;
    double x, wall, ips, acc;
    int e;
    char status[32], phase[16];
    if (sscanf(line, "setup %lf", &x) == 1) progress_setup_done(&sd->prog, x);
    else if (strcmp(line, "profiled") == 0) r->prof->state = 2;
    else if (strcmp(line, "interrupted") == 0) r->wrote_interrupted = 1;
    else if (sscanf(line, "epoch %d %31s %15s %lf %lf %lf %lf", &e, status, phase, &x, &wall, &ips, &acc) == 7) {
        progress_epoch_done(&sd->prog, wall);
        if (study_status_parse(status) == RUN_DIVERGED) progress_drop(&sd->prog, r->o->epochs - e, 0);
    }
}

/* One process drives the GPUs: the run in a child process. A child that died (a CUDA, cuDNN or NCCL error, a
 * crash, the deadline) costs its configuration only: the parent writes its row, and the sweep goes on. */
static int run_isolated(run_ctx_t *r) {
    isolate_result_t ir;
    char err[512];
    if (isolate_run(run_child, r, r->o->timeout_s + 10, run_line, r, &ir, err, sizeof err)) {
        run_write_fault_row(r, RUN_FAILED, err, 0, -1, -1);
        return RUN_FAILED;
    }
    if (ir.unkillable) {    /* stuck in the kernel (a GPU driver call): the next run would find its GPU taken */
        r->sd->gpu_held = 1;
        run_say_begin(r);
        fprintf(stderr, "scaling: run %d/%d: its process (pid %d) did not end %g s after SIGKILL and may still hold "
                "the GPU; the sweep stops here (see nvidia-smi; --resume goes on once the GPU is free)\n", r->k,
                r->n_points, ir.pid, ir.grace_s);
    }
    if (r->wrote_interrupted) return RUN_INTERRUPTED;     /* killed by a second signal after its row: no other */
    if (ir.outcome >= 0) {     /* it told its outcome after its last row: whatever came after wrote nothing */
        /* The epochs (and the setup) it will not spend; a diverged run's were dropped at its line. */
        if (ir.outcome != RUN_DIVERGED) progress_drop(&r->sd->prog, r->o->epochs - ir.epochs, !ir.setup_done);
        return ir.outcome;
    }
    /* The child left no outcome: it died. Its rows up to ir.epochs are in the CSV; this is the next one. */
    char why[600];
    isolate_describe(&ir, r->o->timeout_s + 10, why, sizeof why);
    int epoch = ir.setup_done ? ir.epochs + 1 : 0;
    study_status_t status = isolate_status(&ir);
    run_write_fault_row(r, status, why, epoch, ir.mem_free_mb, ir.mem_total_mb);
    progress_drop(&r->sd->prog, r->o->epochs - ir.epochs, !ir.setup_done);
    return status;
}

/* The --schedule name's order (options_schedules lists them in sched_order_t's order). */
static int schedule_order(const char *name) {
    for (int i = 0; options_schedules[i]; i++)
        if (strcmp(options_schedules[i], name) == 0) return i;
    return 0;
}

/* Runs one sweep point (run.h); writes one row per epoch, or the row of a run that ended early (oom, failed, timeout,
 * interrupted). With --resume (done != NULL) a configuration already complete in the CSV is skipped. Returns a
 * RUN_* outcome. */
int run_point(const options_t *o, const strategy_t *st, const sweep_point_t *pt, const idx_dataset_t *data,
              study_csv_t *res, const study_env_t *env, run_tally_t *sd, const study_scan_t *done, profile_t *prof,
              const dist_t *dist) {
    run_ctx_t *r = calloc(1, sizeof *r);
    if (!r) { fprintf(stderr, "scaling: error: out of host memory\n"); exit(1); }
    pthread_mutex_init(&r->state_lock, NULL);
    r->o = o, r->st = st, r->pt = pt, r->data = data, r->res = res, r->sd = sd, r->prof = prof, r->dist = dist;
    r->t0 = wall_now();
    r->k = progress_next_run(&sd->prog), r->n_points = sd->prog.runs;   /* this run's number in the whole study */
    int k = r->k, n_points = r->n_points;
    for (int i = 0; i < pt->gpus && i < OPT_LIST_MAX; i++) r->devices[i] = i;   /* under dist pt->gpus is the world */
    int is_root = r->is_root = !dist || dist->is_root;
    r->cfg = (run_cfg_t){
        .model = o->model, .model_size = o->model_size, .n_gpus = pt->gpus, .devices = r->devices,
        .global_batch = pt->global_batch,
        .lr = pt->lr, .momentum = o->momentum, .weight_decay = o->weight_decay,
        .optim = {.kind = o->optimizer, .gns_every = o->gns_every,
                  .sched = {.kind = o->lr_schedule, .warmup_epochs = o->warmup_epochs, .epochs = o->epochs}},
        .math = pt->math, .grad_dtype = pt->grad_dtype, .init = o->init,
        .seed = pt->seed, .data = data, .cuda_graph = o->cuda_graph, .conv_cache = o->conv_cache, .steps_cap = o->steps,
        .naive_path = o->naive_path,
        .bucket_bytes = (size_t)(o->bucket_mb * 1024 * 1024), .overlap = o->overlap,
        .micro_batches = pt->micro_batches, .schedule = schedule_order(o->schedule),
        .split = o->n_split ? o->split : NULL, .n_split = o->n_split, .setup_count = &r->setup,
    };
    if (dist) {     /* one process per GPU: this process drives its node-local GPU, shard `rank` of pt->gpus */
        r->devices[0] = dist->device;
        r->cfg.n_gpus = 1;
        r->cfg.dist = dist;
    }
    study_row_t *row = &r->row;
    run_row_of(o, st->info, pt, env, dist, row);
    char stamp[32];
    utc_stamp(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ");
    snprintf(row->run_id, sizeof row->run_id, "%s-%d-%d", stamp, pt->index, (int)getpid());
    dist_bcast(dist, row->run_id, sizeof row->run_id);     /* one run id for every rank's rows (rank 0's) */

    if (done) {
        study_key_t key;
        run_key_of(o, st->info, pt, data, row, &key);
        int best = 0;
        /* Rank 0 alone read the CSV: its decision is every rank's. */
        int skip = is_root && study_scan_done(done, &key, o->epochs, o->retry_failed, &best);
        /* complete (or a result: diverged, oom) whatever --retry-failed says, else skipped for its fault */
        int complete = skip && study_scan_done(done, &key, o->epochs, 1, NULL);
        dist_bcast(dist, &skip, sizeof skip);
        if (skip) {
            printf("# run %d/%d (%s, %d GPUs, batch %d, lr %.4g, seed %llu, math %s%s%s): skipped, %s in %s "
                   "(--resume%s)\n", k, n_points, st->info->name, pt->gpus, pt->global_batch, pt->lr, pt->seed,
                   row->math, *row->grad_dtype ? ", grads " : "", row->grad_dtype,
                   complete ? "complete" : "its last run faulted", o->out,
                   complete ? "" : "; --retry-failed runs it again");
            fflush(stdout);
            progress_drop(&sd->prog, o->epochs, 1);
            pthread_mutex_destroy(&r->state_lock);
            free(r);
            return RUN_SKIPPED;
        }
        if (best > 0 && is_root)
            fprintf(stderr, "scaling: run %d/%d: an earlier run stopped after epoch %d of %d; running it again from "
                    "epoch 1 as %s\n", k, n_points, best, o->epochs, row->run_id);
    }

    int outcome;
    if (!dist) outcome = run_isolated(r);
    else {
        watchdog_t wd;
        check_on_fail(run_dist_fail_hook, r);
        rank_watch_phase(sd->watch, NULL, 0);      /* the run's own deadline holds from here */
        if (watchdog_start(&wd, o->timeout_s, run_health, run_expire, r) != 0) {
            fprintf(stderr, "scaling: error: rank %d: cannot start the watchdog thread\n", dist->rank);
            dist_abort(dist, 1);
        }
        watchdog_every(&wd, PROGRESS_EVERY_S, run_progress);
        r->wd = &wd;
        outcome = run_body(r);
        watchdog_stop(&wd);
        rank_watch_phase(sd->watch, "the agreement between runs", 0);
        check_on_fail(NULL, NULL);
    }
    pthread_mutex_destroy(&r->state_lock);
    free(r);
    return outcome;
}
