/* pipe_lm_run.c — the pipeline's stages of a language model: GPT-2's units [lo, hi) on each GPU (the engine's stage
 * model), the corpus gathered on stage 0, the targets carried to the last stage, the tied token embedding summed
 * between the two ends and the clipping's norm over every stage at each step. */
#include "pipeline.h"
#include "pipe_lm.h"
#include "partition.h"
#include "../../engine/check.h"
#include "../../engine/convert.h"
#include "../../engine/trace.h"
#include "../../engine/gpt2/gpt2_data.h"
#include "../../engine/gpt2/gpt2_model.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pipe_lm_stage {
    gpt2_model_t *slot;         /* n_slots: slot[0] owns the stage's parameters, gradients and scratch */
    int **tok, **tgt;           /* [slot], device, (micro_batch, T) each: stage 0's inputs; its and the last's
                                 * targets */
    gpt2_data_t data;           /* stage 0: the corpus */
    double *loss;               /* last stage: the epoch's cross-entropy sum and targets, then an evaluation's */
    double *norms;              /* p: every stage's squared gradient norm this step, gathered here */
    float *wte_in;              /* stage 0 (p > 1): the last stage's token-embedding gradient */
    size_t wte;                 /* the token embedding's elements (first in the layouts of both ends) */
    cudaEvent_t bwd_done, tied, normed;
} pipe_lm_stage_t;

static const gpt2_shape_t *shape_of(const run_cfg_t *cfg) { return gpt2_shape(cfg->model_size); }

int pipe_lm_check(pipe_t *pp, const run_cfg_t *cfg, char *err, size_t errlen) {
    const tokens_corpus_t *c = cfg->data->corpus;
    const gpt2_shape_t *sh = shape_of(cfg);
    if (!c) return snprintf(err, errlen, "model %s learns from tokens, and the data set holds none", cfg->model), -1;
    if (!sh) return snprintf(err, errlen, "GPT-2 has no size \"%s\"", cfg->model_size ? cfg->model_size : ""), -1;
    if (math_loss_scaled(cfg->math))
        return snprintf(err, errlen, "GPT-2 trains in fp32, tf32 or bf16, not %s", math_name(cfg->math)), -1;
    if (cfg->schedule == SCHED_ZB)
        return snprintf(err, errlen, "pipeline: --schedule zb: %s", PIPE_LM_ZB_WHY), -1;
    pp->steps_per_epoch = tokens_corpus_windows(&c->train, c->T) / cfg->global_batch;
    if (pp->steps_per_epoch < 1)
        return snprintf(err, errlen, "global batch %d is larger than the %d training windows", cfg->global_batch,
                        tokens_corpus_windows(&c->train, c->T)), -1;
    gpt2_shape_t v = gpt2_shape_for_vocab(sh, (int)c->train.vocab);   /* the head the stages will hold */
    if (pipe_lm_split(&v, c->T, pp->p, cfg->split, cfg->split ? cfg->n_split : 0, pp->starts, err, errlen)) return -1;
    partition_format(pp->starts, pp->p, pp->split, sizeof pp->split);
    return 0;
}

size_t pipe_lm_act_bytes(const pipe_t *pp) {
    const gpt2_model_t *m = &pp->st[0].lm->slot[0];
    return (size_t)m->B * m->T * m->shape.width * dtype_size(m->t);
}

size_t pipe_lm_tgt_bytes(const pipe_t *pp) {
    const gpt2_model_t *m = &pp->st[0].lm->slot[0];
    return (size_t)m->B * m->T * sizeof(int);
}

size_t pipe_lm_wte_bytes(const pipe_t *pp) { return pp->st[0].lm->wte * sizeof(float); }

int pipe_lm_alloc(pipe_t *pp, int s, const run_cfg_t *cfg, char *err, size_t errlen) {
    pipe_stage_t *S = &pp->st[s];
    gpu_t *g = &S->gpu;
    const tokens_corpus_t *c = cfg->data->corpus;
    int first = s == 0, last = s == pp->p - 1;
    pipe_lm_stage_t *L = S->lm = calloc(1, sizeof *L);
    if (!L || !(L->slot = calloc((size_t)S->n_slots, sizeof *L->slot)) ||
        !(L->tok = calloc((size_t)S->n_slots, sizeof *L->tok)) ||
        !(L->tgt = calloc((size_t)S->n_slots, sizeof *L->tgt)))
        check_fail(__FILE__, __LINE__, "calloc", "out of host memory");
    /* The corpus's vocabulary where it is larger than the shape's (gpt2_train_init's rule). */
    gpt2_shape_t sh = gpt2_shape_for_vocab(shape_of(cfg), (int)c->train.vocab);
    const gpt2_adamw_cfg_t adamw = GPT2_ADAMW_RECIPE((float)cfg->weight_decay);
    dtype_t t = math_act_dtype(cfg->math);
    int tf32 = t == DTYPE_FP32 && !MATH_INFO[cfg->math].strict;
    if (gpt2_model_init_stage(&L->slot[0], &sh, pp->micro_batch, c->T, t, tf32, g, &adamw, GPT2_ATTN_AUTO, S->first,
                              S->end, err, errlen))
        return -1;
    L->slot[0].grad_B = pp->global_batch;   /* the micro-batches' gradients sum to the batch mean's */
    for (int k = 1; k < S->n_slots; k++)
        if (gpt2_model_init_slot(&L->slot[k], &L->slot[0], err, errlen)) return -1;
    gpt2_model_init_params(&L->slot[0], cfg->seed, g->stream);
    size_t rows = (size_t)pp->micro_batch * c->T;
    for (int k = 0; k < S->n_slots; k++) {
        if (first && gpu_try_malloc((void **)&L->tok[k], rows * sizeof(int))) goto oom;
        if ((first || last) && gpu_try_malloc((void **)&L->tgt[k], rows * sizeof(int))) goto oom;
    }
    if (first && gpt2_data_init(&L->data, g->device, c, err, errlen)) return -1;
    if (last && gpu_try_malloc((void **)&L->loss, 2 * sizeof(double))) goto oom;
    if (gpu_try_malloc((void **)&L->norms, (size_t)pp->p * sizeof(double))) goto oom;
    const gpt2_slice_t *w = gpt2_layout_find(L->slot[0].slices, L->slot[0].n_slices, GPT2_WTE, -1);
    L->wte = w ? w->len : 0;
    if (first && pp->p > 1 && gpu_try_malloc((void **)&L->wte_in, L->wte * sizeof(float))) goto oom;
    CHECK_CUDA(cudaEventCreateWithFlags(&L->bwd_done, cudaEventDisableTiming));
    CHECK_CUDA(cudaEventCreateWithFlags(&L->tied, cudaEventDisableTiming));
    CHECK_CUDA(cudaEventCreateWithFlags(&L->normed, cudaEventDisableTiming));
    optim_cfg_t oc = run_cfg_optim(cfg);
    if (optim_init(&S->opt, OPTIM_ADAMW, 0.0f, (float)cfg->weight_decay, &oc.sched, pp->run_steps, NULL, err, errlen))
        return -1;
    CHECK_CUDA(cudaDeviceSynchronize());
    return 0;
oom:
    snprintf(err, errlen, "out of memory: stage %d's batch buffers on GPU %d", s, g->device);
    return -1;
}

void pipe_lm_free(pipe_t *pp, int s) {
    pipe_lm_stage_t *L = pp->st[s].lm;
    if (!L) return;
    CHECK_CUDA(cudaSetDevice(pp->st[s].gpu.device));
    for (int k = 0; L->tok && k < pp->st[s].n_slots; k++) {
        if (L->tok[k]) CHECK_CUDA(cudaFree(L->tok[k]));
        if (L->tgt[k]) CHECK_CUDA(cudaFree(L->tgt[k]));
    }
    for (int k = pp->st[s].n_slots - 1; L->slot && k >= 0; k--) gpt2_model_free(&L->slot[k]);   /* slots first */
    gpt2_data_free(&L->data);
    void *bufs[] = {L->loss, L->norms, L->wte_in};
    for (int i = 0; i < 3; i++)
        if (bufs[i]) CHECK_CUDA(cudaFree(bufs[i]));
    cudaEvent_t evs[] = {L->bwd_done, L->tied, L->normed};
    for (int i = 0; i < 3; i++)
        if (evs[i]) CHECK_CUDA(cudaEventDestroy(evs[i]));
    free(L->slot);
    free(L->tok);
    free(L->tgt);
    free(L);
    pp->st[s].lm = NULL;
}

void pipe_lm_body(pipe_t *pp, const sched_op_t *o) {
    int s = o->op.stage, last = s == pp->p - 1;
    pipe_stage_t *S = &pp->st[s];
    pipe_lm_stage_t *L = S->lm;
    gpt2_model_t *m = &L->slot[o->slot];
    cudaStream_t st = S->gpu.stream;
    int *tok = s == 0 ? L->tok[o->slot] : NULL;
    if (o->op.kind == SCHED_FWD) {
        if (s == 0)
            gpt2_data_train(&L->data, pp->d_step, pp->global_batch, (long long)o->op.mb * pp->micro_batch,
                            pp->micro_batch, tok, L->tgt[o->slot], st);
        gpt2_model_forward(m, tok, last ? L->tgt[o->slot] : NULL, 1, st);
        if (last) gpt2_model_loss_add(m, L->loss, st);
        return;
    }
    gpt2_model_backward_stage(m, tok, o->first ? 0.0f : 1.0f, st);
}

void pipe_lm_act(pipe_t *pp, const sched_op_t *o, const cudaEvent_t *wait) {
    int s = o->op.stage, mb = o->op.mb;
    pipe_stage_t *S = &pp->st[s];
    void *in, *out;
    gpt2_model_stage_io(&S->lm->slot[o->slot], &in, NULL, NULL, NULL);
    gpt2_model_stage_io(&pp->st[s - 1].lm->slot[o->src_slot], NULL, &out, NULL, NULL);
    pipe_xfer(pp, s - 1, s, in, out, pipe_lm_act_bytes(pp), S->gpu.comm_stream, TRACE_COMM, wait, o->n_wait,
              "activations", mb);
    if (s == pp->p - 1) {   /* stage 0 gathered them before its forward, which the previous stage's follows */
        const pipe_stage_t *F = &pp->st[0];
        pipe_xfer(pp, 0, s, S->lm->tgt[o->slot], F->lm->tgt[mb % F->n_slots], pipe_lm_tgt_bytes(pp),
                  S->gpu.comm_stream, TRACE_COMM, wait, o->n_wait, "targets", mb);
    }
}

void pipe_lm_grad(pipe_t *pp, const sched_op_t *o, const cudaEvent_t *wait) {
    int s = o->op.stage, mb = o->op.mb;
    pipe_stage_t *S = &pp->st[s], *N = &pp->st[s + 1];
    void *dout, *din;   /* one of each a stage (its backward's scratch), whichever slot */
    gpt2_model_stage_io(&S->lm->slot[o->slot], NULL, NULL, &dout, NULL);
    gpt2_model_stage_io(&N->lm->slot[mb % N->n_slots], NULL, NULL, NULL, &din);
    pipe_xfer(pp, s + 1, s, dout, din, pipe_lm_act_bytes(pp), S->grad_stream, TRACE_COMM_IN2, wait, o->n_wait,
              "gradients", mb);
}

void pipe_lm_exchange(pipe_t *pp) {
    int p = pp->p;
    for (int s = 0; s < p; s++) {
        pipe_stage_t *S = &pp->st[s];
        pipe_lm_stage_t *L = S->lm;
        gpt2_model_t *m = &L->slot[0];
        if (s == 0 && p > 1) {   /* the tie: the last stage's part of the token embedding's gradient added to ours */
            pipe_stage_t *E = &pp->st[p - 1];
            CHECK_CUDA(cudaSetDevice(E->gpu.device));
            CHECK_CUDA(cudaEventRecord(E->lm->bwd_done, E->gpu.stream));   /* after its step's backwards */
            CHECK_CUDA(cudaSetDevice(S->gpu.device));
            CHECK_CUDA(cudaStreamWaitEvent(S->gpu.stream, E->lm->bwd_done, 0));
            CHECK_CUDA(cudaMemcpyPeerAsync(L->wte_in, S->gpu.device, E->lm->slot[0].grads, E->gpu.device,
                                           L->wte * sizeof(float), S->gpu.stream));
            convert_acc_f32(m->grads, L->wte_in, DTYPE_FP32, L->wte, 1.0f, S->gpu.stream);
            CHECK_CUDA(cudaEventRecord(L->tied, S->gpu.stream));
        }
        CHECK_CUDA(cudaSetDevice(S->gpu.device));
        if (s == p - 1 && p > 1) {   /* and the sum back into ours */
            pipe_stage_t *F = &pp->st[0];
            CHECK_CUDA(cudaStreamWaitEvent(S->gpu.stream, F->lm->tied, 0));
            CHECK_CUDA(cudaMemcpyPeerAsync(m->grads, S->gpu.device, F->lm->slot[0].grads, F->gpu.device,
                                           L->wte * sizeof(float), S->gpu.stream));
        }
        /* this stage's squared norm, the token embedding counted once (on stage 0), into its own entry */
        CHECK_CUDA(cudaMemsetAsync(L->norms + s, 0, sizeof(double), S->gpu.stream));
        gpt2_model_grad_sumsq(m, p > 1 && s == p - 1, L->norms + s, S->gpu.stream);
        CHECK_CUDA(cudaEventRecord(L->normed, S->gpu.stream));
    }
    /* Every other stage's norm into each stage's table, once all are enqueued: the waits stay outside the update's
     * busy window (pipe_step), as the image classifiers' update has none. */
    for (int s = 0; s < p; s++) {
        pipe_stage_t *S = &pp->st[s];
        CHECK_CUDA(cudaSetDevice(S->gpu.device));
        for (int q = 0; q < p; q++) {
            if (q == s) continue;
            CHECK_CUDA(cudaStreamWaitEvent(S->gpu.stream, pp->st[q].lm->normed, 0));
            CHECK_CUDA(cudaMemcpyPeerAsync(S->lm->norms + q, S->gpu.device, pp->st[q].lm->norms + q,
                                           pp->st[q].gpu.device, sizeof(double), S->gpu.stream));
        }
    }
}

void pipe_lm_update(pipe_t *pp, int s) {
    pipe_stage_t *S = &pp->st[s];   /* the stages' norms summed in stage order: the same on every stage */
    gpt2_model_set_sumsq(&S->lm->slot[0], S->lm->norms, pp->p, S->gpu.stream);
    gpt2_model_adamw(&S->lm->slot[0], &S->opt, S->gpu.stream);
}

/* The last stage's loss sum over its target count (after the work on its stream), -1 where none counted. */
static double loss_mean(pipe_t *pp) {
    double h[2];
    pipe_stage_t *E = &pp->st[pp->p - 1];
    CHECK_CUDA(cudaSetDevice(E->gpu.device));
    CHECK_CUDA(cudaMemcpyAsync(h, E->lm->loss, sizeof h, cudaMemcpyDeviceToHost, E->gpu.stream));
    CHECK_CUDA(cudaStreamSynchronize(E->gpu.stream));
    return h[1] > 0 ? h[0] / h[1] : -1;
}

double pipe_lm_evaluate(pipe_t *pp) {
    int p = pp->p, chunk = pp->micro_batch;
    pipe_stage_t *E = &pp->st[p - 1];
    int n = pp->st[0].lm->data.n_val;
    CHECK_CUDA(cudaSetDevice(E->gpu.device));
    CHECK_CUDA(cudaMemsetAsync(E->lm->loss, 0, 2 * sizeof(double), E->gpu.stream));
    for (int first = 0; first < n; first += chunk) {
        for (int s = 0; s < p; s++) {
            pipe_stage_t *S = &pp->st[s];
            pipe_lm_stage_t *L = S->lm;
            gpt2_model_t *m = &L->slot[0];
            CHECK_CUDA(cudaSetDevice(S->gpu.device));
            /* What this chunk overwrites must have been taken by the previous chunk's readers (pipe_evaluate's
             * rule): the next stage, and on stage 0 the last (the targets). */
            if (first > 0 && s + 1 < p) CHECK_CUDA(cudaStreamWaitEvent(S->gpu.stream, pp->st[s + 1].eval_in, 0));
            if (first > 0 && s == 0 && p > 2) CHECK_CUDA(cudaStreamWaitEvent(S->gpu.stream, E->eval_in, 0));
            if (s == 0) {
                gpt2_data_val(&L->data, first, chunk, L->tok[0], L->tgt[0], S->gpu.stream);
            } else {
                void *in, *out;
                gpt2_model_stage_io(m, &in, NULL, NULL, NULL);
                gpt2_model_stage_io(&pp->st[s - 1].lm->slot[0], NULL, &out, NULL, NULL);
                pipe_xfer(pp, s - 1, s, in, out, pipe_lm_act_bytes(pp), S->gpu.stream, TRACE_COMM,
                          &pp->st[s - 1].eval_fwd, 1, "activations", 0);
                if (s == p - 1)
                    pipe_xfer(pp, 0, s, L->tgt[0], pp->st[0].lm->tgt[0], pipe_lm_tgt_bytes(pp), S->gpu.stream,
                              TRACE_COMM, &pp->st[0].eval_fwd, 1, "targets", 0);
                CHECK_CUDA(cudaSetDevice(S->gpu.device));
                CHECK_CUDA(cudaEventRecord(S->eval_in, S->gpu.stream));
            }
            gpt2_model_forward(m, s == 0 ? L->tok[0] : NULL, s == p - 1 ? L->tgt[0] : NULL, 0, S->gpu.stream);
            if (s == p - 1) gpt2_model_loss_add(m, L->loss, S->gpu.stream);
            CHECK_CUDA(cudaEventRecord(S->eval_fwd, S->gpu.stream));
        }
    }
    return loss_mean(pp);
}

void pipe_lm_epoch_begin(pipe_t *pp, int epoch) {
    pipe_stage_t *S0 = &pp->st[0], *E = &pp->st[pp->p - 1];
    CHECK_CUDA(cudaSetDevice(S0->gpu.device));
    gpt2_data_epoch(&S0->lm->data, pp->seed, epoch, S0->gpu.stream);
    CHECK_CUDA(cudaSetDevice(E->gpu.device));
    CHECK_CUDA(cudaMemsetAsync(E->lm->loss, 0, 2 * sizeof(double), E->gpu.stream));
}

double pipe_lm_epoch_loss(pipe_t *pp) { return loss_mean(pp); }

size_t pipe_lm_n_params(const pipe_t *pp) { return gpt2_layout(&pp->st[0].lm->slot[0].shape, NULL, 0); }

void pipe_lm_params(pipe_t *pp, float *host) {
    for (int s = pp->p - 1; s >= 0; s--) {   /* stage 0's token embedding last: the copies are equal anyway */
        CHECK_CUDA(cudaSetDevice(pp->st[s].gpu.device));
        gpt2_model_params_full(&pp->st[s].lm->slot[0], host);
    }
}

size_t pipe_lm_stage_act_bytes(const pipe_t *pp, int s) {
    const pipe_stage_t *S = &pp->st[s];
    return (size_t)S->n_slots * S->lm->slot[0].plan.arena_bytes[1];
}
