/* pipe_run.c — running the pipeline: one step's plan (forward, backward and copies of every micro-batch on every
 * stage's streams, ordered by events), the updates, evaluation through the stages, and the copies between GPUs. */
#include "pipeline.h"
#include "../../engine/trace.h"
#include "../../engine/check.h"
#include "../../engine/nvtx.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- links: peer copies, or staged through pinned host memory ---- */


static int link_open_(pipe_t *pp, int from, int to, size_t bytes, int naive_path, char *err, size_t errlen) {
    pipe_link_t *l = &pp->link[from][to];
    int a = pp->st[from].gpu.device, b = pp->st[to].gpu.device, ab = 0, ba = 0;
    CHECK_CUDA(cudaDeviceCanAccessPeer(&ab, a, b));
    CHECK_CUDA(cudaDeviceCanAccessPeer(&ba, b, a));
    if (naive_path == NAIVE_PATH_P2P && !(ab && ba) && a != b) {
        snprintf(err, errlen, "--naive-path p2p: GPU %d and GPU %d have no peer access (use auto or host)", a, b);
        return -1;
    }
    l->used = 1;
    l->bytes = bytes > l->bytes ? bytes : l->bytes;
    if (a == b) {   /* two stages on one GPU (a test's): a copy within it */
        l->peer = 1;
        return 0;
    }
    l->peer = naive_path != NAIVE_PATH_HOST && ab && ba;
    if (l->peer) {   /* once per pair of GPUs in the process (gpu_enable_peer), whichever link asks first */
        gpu_enable_peer(a, b);
        gpu_enable_peer(b, a);
    }
    return 0;
}

int pipe_links_init(pipe_t *pp, int naive_path, char *err, size_t errlen) {
    for (int s = 1; s < pp->p; s++) {
        size_t act = 0;   /* the largest tensor crossing: a staged link copies them one after the other */
        if (pp->lm) act = pipe_lm_act_bytes(pp);
        for (int i = 0; !pp->lm && i < pp->st[s].n_in; i++) {
            const model_t *m = &pp->st[s].slot[0];
            if (model_tensor_bytes(m, pp->st[s].in_t[i]) > act) act = model_tensor_bytes(m, pp->st[s].in_t[i]);
        }
        if (link_open_(pp, s - 1, s, act, naive_path, err, errlen) ||
            link_open_(pp, s, s - 1, act, naive_path, err, errlen))
            return -1;
    }
    /* The labels go from stage 0, which gathers the batch, straight to the last stage, which needs them. */
    size_t labels = pp->lm ? pipe_lm_tgt_bytes(pp) : (size_t)pp->micro_batch * sizeof(int);
    if (pp->p > 1 && link_open_(pp, 0, pp->p - 1, labels, naive_path, err, errlen))
        return -1;
    int staged = 0;
    for (int a = 0; a < pp->p; a++)
        for (int b = 0; b < pp->p; b++) {
            pipe_link_t *l = &pp->link[a][b];
            if (!l->used) continue;
            CHECK_CUDA(cudaSetDevice(pp->st[a].gpu.device));
            CHECK_CUDA(cudaEventCreateWithFlags(&l->staged, cudaEventDisableTiming));
            if (!l->peer) CHECK_CUDA(cudaStreamCreateWithFlags(&l->stream, cudaStreamNonBlocking));
            CHECK_CUDA(cudaSetDevice(pp->st[b].gpu.device));
            CHECK_CUDA(cudaEventCreateWithFlags(&l->done, cudaEventDisableTiming));
            if (!l->peer) {
                /* Portable: written by one GPU's context and read by another's. */
                CHECK_CUDA(cudaHostAlloc((void **)&l->pinned, l->bytes, cudaHostAllocPortable));
                staged++;
            }
        }
    if (staged) fprintf(stderr, "pipeline: %d link(s) staged through pinned host memory (%s)\n", staged,
                        naive_path == NAIVE_PATH_HOST ? "--naive-path host" : "no peer access");
    return 0;
}

void pipe_links_free(pipe_t *pp) {
    for (int a = 0; a < pp->p; a++)
        for (int b = 0; b < pp->p; b++) {
            pipe_link_t *l = &pp->link[a][b];
            if (!l->used) continue;
            if (l->stream) {
                CHECK_CUDA(cudaSetDevice(pp->st[a].gpu.device));
                CHECK_CUDA(cudaStreamSynchronize(l->stream));
                CHECK_CUDA(cudaStreamDestroy(l->stream));
            }
            if (l->pinned) CHECK_CUDA(cudaFreeHost(l->pinned));
            if (l->staged) CHECK_CUDA(cudaEventDestroy(l->staged));
            if (l->done) CHECK_CUDA(cudaEventDestroy(l->done));
            memset(l, 0, sizeof *l);
        }
}

/* --trace: a range on `device`'s `stream` named "<what> mb<mb> from gpu<src_dev>" ("... to host" for src_dev < 0,
 * the sender's half of a staged copy), or -1 outside traced steps. */
static int copy_trace_begin(const pipe_t *pp, int device, int lane, cudaStream_t stream, const char *what, int mb,
                            int src_dev) {
    if (!pp->trace || !pp->trace->active) return -1;
    char name[TRACE_NAME];
    if (src_dev < 0) snprintf(name, sizeof name, "%s mb%d to host", what, mb);
    else snprintf(name, sizeof name, "%s mb%d from gpu%d", what, mb, src_dev);
    return trace_begin(pp->trace, device, lane, stream, name);
}

/* Staged: device-to-host on the link's stream once the waits and the link's previous copy are done (the pinned
 * buffer is free again), then host-to-device on `on`. */
void pipe_xfer(pipe_t *pp, int from, int to, void *dst, const void *src, size_t bytes, cudaStream_t on, int lane,
               const cudaEvent_t *wait, int n_wait, const char *what, int mb) {
    pipe_link_t *l = &pp->link[from][to];
    int a = pp->st[from].gpu.device, b = pp->st[to].gpu.device;
    if (l->peer) {
        CHECK_CUDA(cudaSetDevice(b));
        for (int w = 0; w < n_wait; w++) CHECK_CUDA(cudaStreamWaitEvent(on, wait[w], 0));
        int tr = copy_trace_begin(pp, b, lane, on, what, mb, a);
        CHECK_CUDA(cudaMemcpyPeerAsync(dst, b, src, a, bytes, on));
        trace_end(pp->trace, tr, on);
        return;
    }
    cudaStream_t out = l->stream;
    CHECK_CUDA(cudaSetDevice(a));
    for (int w = 0; w < n_wait; w++) CHECK_CUDA(cudaStreamWaitEvent(out, wait[w], 0));
    CHECK_CUDA(cudaStreamWaitEvent(out, l->done, 0));
    int tr = copy_trace_begin(pp, a, TRACE_COMM, out, what, mb, -1);
    CHECK_CUDA(cudaMemcpyAsync(l->pinned, src, bytes, cudaMemcpyDeviceToHost, out));
    trace_end(pp->trace, tr, out);
    CHECK_CUDA(cudaEventRecord(l->staged, out));
    CHECK_CUDA(cudaSetDevice(b));
    CHECK_CUDA(cudaStreamWaitEvent(on, l->staged, 0));
    tr = copy_trace_begin(pp, b, lane, on, what, mb, a);
    CHECK_CUDA(cudaMemcpyAsync(dst, l->pinned, bytes, cudaMemcpyHostToDevice, on));
    trace_end(pp->trace, tr, on);
    CHECK_CUDA(cudaEventRecord(l->done, on));
}

/* ---- one step ---- */

static cudaEvent_t event_of(const pipe_t *pp, sched_ref_t r) { return pp->st[r.stage].ev[r.kind][r.mb]; }

static void wait_ops(const pipe_t *pp, const sched_op_t *o, cudaStream_t s) {
    for (int w = 0; w < o->n_wait; w++) CHECK_CUDA(cudaStreamWaitEvent(s, event_of(pp, o->wait[w]), 0));
}

/* The work of one forward, backward or (zero bubble) weight-gradient op: the same launches at every step (the gather
 * reads the step from d_step), so it can be captured once. */
static void body(void *ctx, const void *arg) {
    pipe_t *pp = ctx;
    const sched_op_t *o = arg;
    if (pp->lm) {
        pipe_lm_body(pp, o);
        return;
    }
    int s = o->op.stage;
    pipe_stage_t *S = &pp->st[s];
    model_t *m = &S->slot[o->slot];
    gpu_t *g = &S->gpu;
    float dw_beta = o->first ? 0.0f : 1.0f;   /* the step's first overwrites the gradients, the others add */
    if (o->op.kind == SCHED_FWD) {
        if (s == 0)
            dataset_gather_train_at(&S->data, pp->d_step, pp->global_batch, o->op.mb * pp->micro_batch,
                                    pp->micro_batch, m->tensors[m->input].val, m->act_dtype, m->labels, g->stream);
        model_forward_range(m, g, S->first, S->end, 1);
        return;
    }
    if (o->op.kind == SCHED_WGT) {
        model_backward_weight_range(m, g, S->first, S->end, dw_beta);
        return;
    }
    /* The loss is taken at the backward, not the forward: logits gradients live in the stage's activation gradients,
     * which only the micro-batch in backward may use. 1/global batch: the micro-batches' accumulated gradients are
     * the whole batch's gradient. */
    if (s == pp->p - 1) model_loss(m, g, pp->micro_batch, 1.0f / (float)pp->global_batch, 1);
    if (pp->sched.order == SCHED_ZB) model_backward_data_range(m, g, S->first, S->end, dw_beta);
    else model_backward_range(m, g, S->first, S->end, dw_beta);
}

/* Runs body(o) on its stage's compute stream, replayed from a CUDA graph with --cuda-graph (engine/graph.h). The
 * waits and timing events stay outside the graph, on the stream. */
static void run_body(pipe_t *pp, const sched_op_t *o) {
    pipe_stage_t *S = &pp->st[o->op.stage];
    graph_seg_t *gr = o->op.kind == SCHED_FWD ? &S->fwd_graph[o->op.stage == 0 ? o->op.mb : o->slot]
                    : o->op.kind == SCHED_WGT ? &S->wgt_graph[o->slot * 2 + o->first]
                                              : &S->bwd_graph[o->slot * 2 + o->first];
    graph_seg_run(gr, S->gpu.stream, pp->use_graphs, body, pp, o);
}

/* A forward, backward or weight-gradient op of the schedule: its waits, then its graph, bracketed by the busy-time
 * events. */
static void run_compute_op(pipe_t *pp, const sched_op_t *o, int timed, int k) {
    int s = o->op.stage, mb = o->op.mb, kind = o->op.kind;
    pipe_stage_t *S = &pp->st[s];
    gpu_t *g = &S->gpu;
    CHECK_CUDA(cudaSetDevice(g->device));
    wait_ops(pp, o, g->stream);
    static const char *const short_name[] = {"fwd", "bwd", "wgt"}, *const long_name[] = {"forward", "backward",
                                                                                          "weight gradients"};
    nvtx_push("%s s%d mb%d gpu%d", short_name[kind], s, mb, g->device);
    pipe_mark_busy(pp, s, timed, k, 0);
    int tr = -1;
    if (pp->trace && pp->trace->active) {
        char name[TRACE_NAME];
        snprintf(name, sizeof name, "%s mb%d", long_name[kind], mb);
        tr = trace_begin(pp->trace, g->device, TRACE_COMPUTE, g->stream, name);
    }
    run_body(pp, o);
    trace_end(pp->trace, tr, g->stream);
    pipe_mark_busy(pp, s, timed, k, 1);
    CHECK_CUDA(cudaEventRecord(S->ev[kind][mb], g->stream));
    nvtx_pop();
}

/* The image classifiers' crossing tensors of micro-batch mb into stage s (with the labels into the last). */
static void act_model(pipe_t *pp, const sched_op_t *o, const cudaEvent_t *wait) {
    int s = o->op.stage, mb = o->op.mb;
    pipe_stage_t *S = &pp->st[s], *F = &pp->st[s - 1];
    model_t *dst = &S->slot[o->slot], *src = &F->slot[o->src_slot];
    for (int i = 0; i < S->n_in; i++) {
        int t = S->in_t[i];
        pipe_xfer(pp, s - 1, s, dst->tensors[t].val, src->tensors[t].val, model_tensor_bytes(dst, t),
                  S->gpu.comm_stream, TRACE_COMM, wait, o->n_wait, "activations", mb);
    }
    if (s == pp->p - 1) {
        /* Stage 0 gathered them before its forward, which the previous stage's forward (waited on) follows. */
        const model_t *first = &pp->st[0].slot[mb % pp->st[0].n_slots];
        pipe_xfer(pp, 0, s, dst->labels, first->labels, (size_t)pp->micro_batch * sizeof(int), S->gpu.comm_stream,
                  TRACE_COMM, wait, o->n_wait, "labels", mb);
    }
}

static void run_act(pipe_t *pp, const sched_op_t *o, int timed) {
    int s = o->op.stage, mb = o->op.mb;
    pipe_stage_t *S = &pp->st[s];
    cudaEvent_t wait[2];
    for (int w = 0; w < o->n_wait; w++) wait[w] = event_of(pp, o->wait[w]);
    nvtx_push("p2p act s%d->s%d mb%d", s - 1, s, mb);
    pipe_mark_copy(pp, o, timed, 0, wait, o->n_wait);
    if (pp->lm) pipe_lm_act(pp, o, wait);
    else act_model(pp, o, wait);
    pipe_mark_copy(pp, o, timed, 1, NULL, 0);
    CHECK_CUDA(cudaEventRecord(S->ev[SCHED_ACT][mb], S->gpu.comm_stream));
    nvtx_pop();
}

static void run_grad(pipe_t *pp, const sched_op_t *o, int timed) {
    int s = o->op.stage, mb = o->op.mb;
    pipe_stage_t *S = &pp->st[s], *N = &pp->st[s + 1];
    cudaEvent_t wait[2];
    for (int w = 0; w < o->n_wait; w++) wait[w] = event_of(pp, o->wait[w]);
    nvtx_push("p2p grad s%d->s%d mb%d", s + 1, s, mb);
    pipe_mark_copy(pp, o, timed, 0, wait, o->n_wait);
    /* The micro-batch's slots' gradient buffers: the stage's one set (every slot's points to slot 0's), or under zero
     * bubble each slot's own. */
    if (pp->lm) pipe_lm_grad(pp, o, wait);
    for (int i = 0; !pp->lm && i < S->n_out; i++) {
        const model_t *from = &N->slot[mb % N->n_slots];
        int t = S->out_t[i];
        pipe_xfer(pp, s + 1, s, S->slot[o->slot].tensors[t].grad, from->tensors[t].grad, model_tensor_bytes(from, t),
                  S->grad_stream, TRACE_COMM_IN2, wait, o->n_wait, "gradients", mb);
    }
    pipe_mark_copy(pp, o, timed, 1, NULL, 0);
    CHECK_CUDA(cudaEventRecord(S->ev[SCHED_GRAD][mb], S->grad_stream));
    nvtx_pop();
}

void pipe_step(pipe_t *pp, int step) {
    int timed = pipe_timed(pp, step);
    int k[SCHED_MAX_STAGES] = {0};   /* compute ops so far on each stage: the busy events' index */
    for (int s = 0; s < pp->p; s++) {   /* --trace: every GPU's time zero, back to back (no-op outside traced steps) */
        trace_origin(pp->trace, pp->st[s].gpu.device, pp->st[s].gpu.stream);
        pipe_mark_window(pp, s, timed, 0);
    }
    for (int i = 0; i < pp->sched.n_ops; i++) {
        const sched_op_t *o = &pp->sched.ops[i];
        switch (o->op.kind) {
        case SCHED_FWD:
        case SCHED_BWD:
        case SCHED_WGT: run_compute_op(pp, o, timed, k[o->op.stage]++); break;
        case SCHED_ACT: run_act(pp, o, timed); break;
        default:        run_grad(pp, o, timed); break;
        }
    }
    pipe_scale_check(pp);
    if (pp->lm) pipe_lm_exchange(pp);
    for (int s = 0; s < pp->p; s++) {
        pipe_stage_t *S = &pp->st[s];
        CHECK_CUDA(cudaSetDevice(S->gpu.device));
        nvtx_push("optimizer s%d gpu%d", s, S->gpu.device);
        int tr = trace_begin(pp->trace, S->gpu.device, TRACE_COMPUTE, S->gpu.stream, "update");
        pipe_mark_busy(pp, s, timed, pp->ops_per_stage, 0);
        if (pp->lm) {
            pipe_lm_update(pp, s);
        } else {
            model_t *m = &S->slot[0];
            optim_begin_step(&S->opt, S->gpu.stream);
            optim_update(&S->opt, m, 0, m->n_params, m->grads, DTYPE_FP32, NULL, S->ls, S->gpu.stream);
        }
        pipe_mark_busy(pp, s, timed, pp->ops_per_stage, 1);
        trace_end(pp->trace, tr, S->gpu.stream);
        CHECK_CUDA(cudaEventRecord(S->updated, S->gpu.stream));
        nvtx_pop();
    }
    /* The step ends when the last stage has updated: one timeline (stage 0's) for the step time. Stage 0 runs the
     * step's last backward anyway, so this wait costs nothing. Every other stage waits for every update too, so each
     * stage's step window ends at the step's end; none of them has work of the next step before stage 0 sends it. */
    pipe_stage_t *S0 = &pp->st[0];
    CHECK_CUDA(cudaSetDevice(S0->gpu.device));
    dataset_step_advance(pp->d_step, S0->gpu.stream);   /* after the step's gathers, all on this stream */
    for (int s = 0; s < pp->p; s++) {
        pipe_stage_t *S = &pp->st[s];
        CHECK_CUDA(cudaSetDevice(S->gpu.device));
        for (int q = 0; q < pp->p; q++)
            if (q != s) CHECK_CUDA(cudaStreamWaitEvent(S->gpu.stream, pp->st[q].updated, 0));
        pipe_scale_advance(pp, s);
        pipe_mark_window(pp, s, timed, 1);
    }
    CHECK_CUDA(cudaSetDevice(S0->gpu.device));
    CHECK_CUDA(cudaEventRecord(pp->step_events[step + 1], S0->gpu.stream));
}

/* ---- evaluation ---- */

double pipe_evaluate(pipe_t *pp) {
    if (pp->lm) return pipe_lm_evaluate(pp);
    int p = pp->p, chunk = pp->micro_batch, n = pp->st[0].data.n_test;
    pipe_stage_t *L = &pp->st[p - 1];
    nvtx_push("evaluate pipeline");
    CHECK_CUDA(cudaSetDevice(L->gpu.device));
    CHECK_CUDA(cudaMemsetAsync(L->slot[0].acc, 0, 2 * sizeof(double), L->gpu.stream));
    for (int first = 0; first < n; first += chunk) {
        int valid = n - first < chunk ? n - first : chunk;
        for (int s = 0; s < p; s++) {
            pipe_stage_t *S = &pp->st[s];
            model_t *m = &S->slot[0];
            gpu_t *g = &S->gpu;
            CHECK_CUDA(cudaSetDevice(g->device));
            /* What this chunk overwrites must have been taken by the previous chunk's readers: the next stage
             * (this stage's output) and, on stage 0, the last stage (the labels). */
            if (first > 0 && s + 1 < p) CHECK_CUDA(cudaStreamWaitEvent(g->stream, pp->st[s + 1].eval_in, 0));
            if (first > 0 && s == 0 && p > 2) CHECK_CUDA(cudaStreamWaitEvent(g->stream, L->eval_in, 0));
            if (s == 0) {
                dataset_gather_test(&S->data, first, chunk, m->tensors[m->input].val, m->act_dtype, m->labels,
                                    g->stream);
            } else {
                const model_t *prev = &pp->st[s - 1].slot[0];
                for (int i = 0; i < S->n_in; i++)
                    pipe_xfer(pp, s - 1, s, m->tensors[S->in_t[i]].val, prev->tensors[S->in_t[i]].val,
                              model_tensor_bytes(m, S->in_t[i]), g->stream, TRACE_COMM, &pp->st[s - 1].eval_fwd, 1,
                              "activations", 0);
                if (s == p - 1)
                    pipe_xfer(pp, 0, s, m->labels, pp->st[0].slot[0].labels, (size_t)chunk * sizeof(int),
                              g->stream, TRACE_COMM, &pp->st[0].eval_fwd, 1, "labels", 0);
                CHECK_CUDA(cudaSetDevice(g->device));
                CHECK_CUDA(cudaEventRecord(S->eval_in, g->stream));
            }
            model_forward_range(m, g, S->first, S->end, 0);
            if (s == p - 1) model_loss(m, g, valid, 1.0f, 0);
            CHECK_CUDA(cudaEventRecord(S->eval_fwd, g->stream));
        }
    }
    double h[2];
    CHECK_CUDA(cudaSetDevice(L->gpu.device));
    CHECK_CUDA(cudaMemcpyAsync(h, L->slot[0].acc, sizeof h, cudaMemcpyDeviceToHost, L->gpu.stream));
    CHECK_CUDA(cudaStreamSynchronize(L->gpu.stream));
    nvtx_pop();
    return h[1] / n;
}
