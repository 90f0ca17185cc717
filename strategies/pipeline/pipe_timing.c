/* pipe_timing.c — where a pipeline step goes on each stage's compute stream (strategies/breakdown.h): the events of
 * the timed steps (each forward, backward, weight-gradient op and update; the step's window; each incoming copy),
 * and the epoch's figures made from them: per-stage busy time and balance, the bubble beside the plan's ideal, and
 * the row's compute, exposed and idle time. */
#include "pipeline.h"
#include "../breakdown.h"
#include "../../engine/check.h"
#include "../../engine/timing.h"
#include <stdlib.h>

/* Per stage and timed step t: busy[(t * (ops + 1) + k) * 2 + {0 begin, 1 end}] around compute op k (k = ops: the
 * update), window[t * 2 + {0, 1}] from the previous step's end to this step's end, and copy[(t * 2 * micro +
 * {0 activations, 1 gradients} * micro + mb) * 2 + {0, 1}] around each incoming copy, on the stream it arrives on. */
static size_t busy_count(const pipe_t *pp) { return (size_t)pp->n_timed * (pp->ops_per_stage + 1) * 2; }
static size_t copy_count(const pipe_t *pp) { return (size_t)pp->n_timed * 2 * pp->micro * 2; }

static cudaEvent_t *events_new(size_t n) {
    cudaEvent_t *e = calloc(n ? n : 1, sizeof *e);
    if (!e) check_fail(__FILE__, __LINE__, "calloc", "out of host memory");
    for (size_t i = 0; i < n; i++) CHECK_CUDA(cudaEventCreate(&e[i]));
    return e;
}

static void events_free(cudaEvent_t *e, size_t n) {
    for (size_t i = 0; e && i < n; i++) CHECK_CUDA(cudaEventDestroy(e[i]));
    free(e);
}

void pipe_timing_init(pipe_t *pp, int s) {
    pipe_stage_t *S = &pp->st[s];
    CHECK_CUDA(cudaSetDevice(S->gpu.device));
    S->busy = events_new(busy_count(pp));
    S->window = events_new((size_t)pp->n_timed * 2);
    S->copy = events_new(copy_count(pp));
}

void pipe_timing_free(pipe_t *pp, int s) {
    pipe_stage_t *S = &pp->st[s];
    CHECK_CUDA(cudaSetDevice(S->gpu.device));
    events_free(S->busy, busy_count(pp));
    events_free(S->window, (size_t)pp->n_timed * 2);
    events_free(S->copy, copy_count(pp));
    S->busy = S->window = S->copy = NULL;
}

int pipe_timed(const pipe_t *pp, int step) {
    if (step % pp->stride) return -1;
    int t = step / pp->stride;
    return t < pp->n_timed ? t : -1;
}

static cudaEvent_t busy_ev(const pipe_stage_t *S, const pipe_t *pp, int t, int k, int end) {
    return S->busy[((size_t)t * (pp->ops_per_stage + 1) + k) * 2 + end];
}

static cudaEvent_t copy_ev(const pipe_stage_t *S, const pipe_t *pp, int t, int kind, int mb, int end) {
    return S->copy[(((size_t)t * 2 + (kind == SCHED_GRAD)) * pp->micro + mb) * 2 + end];
}

void pipe_mark_busy(pipe_t *pp, int s, int t, int k, int end) {
    pipe_stage_t *S = &pp->st[s];
    if (t < 0) return;
    CHECK_CUDA(cudaSetDevice(S->gpu.device));
    CHECK_CUDA(cudaEventRecord(busy_ev(S, pp, t, k, end), S->gpu.stream));
}

void pipe_mark_window(pipe_t *pp, int s, int t, int end) {
    pipe_stage_t *S = &pp->st[s];
    if (t < 0) return;
    CHECK_CUDA(cudaSetDevice(S->gpu.device));
    CHECK_CUDA(cudaEventRecord(S->window[(size_t)t * 2 + end], S->gpu.stream));
}

void pipe_mark_copy(pipe_t *pp, const sched_op_t *o, int t, int end, const cudaEvent_t *wait, int n_wait) {
    pipe_stage_t *S = &pp->st[o->op.stage];
    if (t < 0) return;
    cudaStream_t on = o->op.kind == SCHED_GRAD ? S->grad_stream : S->gpu.comm_stream;
    CHECK_CUDA(cudaSetDevice(S->gpu.device));
    /* The copy's stream waits for the sender's op (a staged copy only waits for its host half otherwise), so the
     * begin event is when the data could start to move: a staged copy's device-to-host half counts as in flight. */
    for (int w = 0; !end && w < n_wait; w++) CHECK_CUDA(cudaStreamWaitEvent(on, wait[w], 0));
    CHECK_CUDA(cudaEventRecord(copy_ev(S, pp, t, o->op.kind, o->op.mb, end), on));
}

/* Stage s over the epoch's first `timed` timed steps: the busy time per step of its forwards, backwards and (zero
 * bubble) weight-gradient ops (kind_ms[SCHED_FWD..SCHED_WGT]), and its breakdown. The exposed part of the gap
 * before a compute op is its overlap with the incoming copy the op waits on (the longest, where it waits on two);
 * the plan's host order gives each op's compute index k. */
static breakdown_t stage_breakdown_(const pipe_t *pp, int s, int timed, double *kind_ms) {
    const pipe_stage_t *S = &pp->st[s];
    breakdown_t sum = {0};
    for (int k = 0; k <= SCHED_WGT; k++) kind_ms[k] = 0;
    CHECK_CUDA(cudaSetDevice(S->gpu.device));
    for (int t = 0; t < timed; t++) {
        cudaEvent_t w0 = S->window[(size_t)t * 2];
        double busy = 0, exposed = 0, prev_end = 0;
        int k = 0;
        for (int i = 0; i < pp->sched.n_ops; i++) {
            const sched_op_t *o = &pp->sched.ops[i];
            if (o->op.stage != s || o->op.kind > SCHED_WGT) continue;
            double b = timing_ms(w0, busy_ev(S, pp, t, k, 0)), e = timing_ms(w0, busy_ev(S, pp, t, k, 1)), x = 0;
            for (int w = 0; w < o->n_wait; w++) {
                sched_ref_t r = o->wait[w];
                if (r.stage != s || (r.kind != SCHED_ACT && r.kind != SCHED_GRAD)) continue;
                double c = breakdown_overlap(prev_end, b, timing_ms(w0, copy_ev(S, pp, t, r.kind, r.mb, 0)),
                                             timing_ms(w0, copy_ev(S, pp, t, r.kind, r.mb, 1)));
                if (c > x) x = c;
            }
            busy += e - b;
            kind_ms[o->op.kind] += e - b;
            exposed += x;
            prev_end = e;
            k++;
        }
        busy += timing_ms(busy_ev(S, pp, t, k, 0), busy_ev(S, pp, t, k, 1));     /* the update */
        breakdown_add(&sum, timing_ms(w0, S->window[(size_t)t * 2 + 1]), busy, exposed);
    }
    for (int k = 0; k <= SCHED_WGT; k++) kind_ms[k] = timed ? kind_ms[k] / timed : 0;
    return breakdown_mean(sum);
}

double pipe_timing_epoch(pipe_t *pp, int steps, epoch_stats_t *out) {
    /* Busy: each stage's forward, backward and weight-gradient time per step; the bubble: the share of the step the
     * mean stage is not busy with them. Over the timed steps this epoch ran, the step on stage 0's timeline. */
    double step_sum = 0, busy_mean = 0, kind_mean[SCHED_WGT + 1] = {0}, busy_max = 0;
    int timed = 0;
    for (int t = 0; t < pp->n_timed && t * pp->stride < steps; t++, timed++)
        step_sum += timing_ms(pp->step_events[t * pp->stride], pp->step_events[t * pp->stride + 1]);
    breakdown_t b[SCHED_MAX_STAGES];
    size_t used = 0;
    out->stage_busy_ms[0] = '\0';
    for (int s = 0; s < pp->p; s++) {
        double kind_ms[SCHED_WGT + 1];
        b[s] = stage_breakdown_(pp, s, timed, kind_ms);
        double fb = kind_ms[SCHED_FWD] + kind_ms[SCHED_BWD] + kind_ms[SCHED_WGT];
        busy_mean += fb / pp->p;
        if (fb > busy_max) busy_max = fb;
        for (int k = 0; k <= SCHED_WGT; k++) kind_mean[k] += kind_ms[k] / pp->p;
        int n = snprintf(out->stage_busy_ms + used, sizeof out->stage_busy_ms - used, "%s%.3f", s ? ";" : "", fb);
        if (n > 0 && (size_t)n < sizeof out->stage_busy_ms - used) used += (size_t)n;
    }
    double step_mean = timed ? step_sum / timed : 0;
    out->bubble = step_mean > 0 ? 1.0 - busy_mean / step_mean : -1;
    out->stage_balance = busy_mean > 0 ? busy_max / busy_mean : -1;
    /* The plan's own ideal at the mean stage's forward, backward and weight-gradient times of a micro-batch (equal
     * thirds before any step was timed; GPipe's and 1F1B's do not depend on them). */
    double f = kind_mean[SCHED_FWD], bw = kind_mean[SCHED_BWD], w = kind_mean[SCHED_WGT];
    if (!(f + bw + w > 0)) f = bw = w = 1;
    out->bubble_ideal = sched_ideal_bubble(&pp->sched, f, bw, w);
    /* The row: the stage with the most compute (forward, backward and update), all its figures together. */
    int row = breakdown_pick(b, pp->p);
    out->compute_ms = b[row].compute_ms;
    out->exposed_comm_ms = b[row].exposed_ms;
    out->idle_ms = b[row].idle_ms;
    if (!pp->quiet) breakdown_print(stderr, "stage", b, pp->p, row);
    if (pp->sched.order == SCHED_ZB && !pp->quiet)
        fprintf(stderr, "pipeline: mean stage per step: forward %.3f ms, input gradients %.3f ms, weight gradients "
                "%.3f ms\n", f, bw, w);
    return step_mean;
}
