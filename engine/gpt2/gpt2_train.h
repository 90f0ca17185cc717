/* gpt2_train.h — one GPU training GPT-2 on a token corpus (engine/tokens.h), the unit the single strategy drives for
 * a language model as replica.h is for the image classifiers: the corpus on the GPU, each step's windows gathered
 * there at a device step counter, forward, backward and AdamW (its schedule) in one segment a CUDA graph replays. */
#pragma once
#include <stdint.h>
#include "gpt2_model.h"
#include "../gpu.h"
#include "../graph.h"
#include "../math_mode.h"
#include "../optim.h"
#include "../tokens.h"

typedef struct {
    gpu_t gpu;
    gpt2_model_t m;
    optim_t opt;                /* the schedule's rate and the step count AdamW reads (gpt2_model_update) */
    int B, T;
    int steps_per_epoch;        /* the training windows / B: the last partial batch is dropped, as for images */
    tokens_sampler_t order;     /* the training windows (n_windows) and this epoch's order of them */
    int n_val;                  /* held-out windows */
    unsigned long long seed;    /* the parameters' initialisation and every epoch's order (tokens_sampler_shuffle) */
    uint16_t *d_train, *d_val;  /* device: the splits' tokens */
    int *d_order;               /* device: order.order, uploaded each epoch */
    int *d_tok, *d_tgt;         /* device: a batch's inputs and targets, (B, T) each */
    int *d_step;                /* device: the step of the epoch, which the gather reads (reset each epoch) */
    double *d_loss;             /* device: the epoch's summed training loss; then the evaluation's sum and count */
    cudaEvent_t *step_events;   /* steps_per_epoch + 1 on the stream */
    int use_graph;              /* 1: the step is captured once and replayed (--cuda-graph) */
    graph_seg_t seg;
    size_t mem_base;            /* device memory in use before anything of this run was allocated */
} gpt2_train_t;

#ifdef __cplusplus
extern "C" {
#endif
/* GPT-2 of size `size` (gpt2_shape.h) on `device` at B sequences of the corpus's T tokens, in math (fp32, tf32, bf16:
 * bf16 activations with fp32 master weights), its vocabulary the corpus's where that is larger (the tiny shape's 512
 * would not hold GPT-2's tokens); parameters from seed; AdamW (betas 0.9 and 0.95, eps 1e-8, clipping at norm 1) at
 * weight_decay with o's schedule, whose epoch is o->steps_cap steps where that caps it. The corpus must outlive g.
 * 0, or -1 with the reason in err (out of memory, a batch larger than the training windows, fp16). */
int gpt2_train_init(gpt2_train_t *g, int device, const char *size, int B, math_t math, const optim_cfg_t *o,
                    float weight_decay, const tokens_corpus_t *corpus, unsigned long long seed, char *err,
                    size_t errlen);
/* The epoch's order of the training windows (seed, epoch), the step counter and the loss sum zeroed, the start
 * event. */
void gpt2_train_epoch_begin(gpt2_train_t *g, int epoch);
/* Step `step` of the epoch (steps in order from 0): its windows gathered, forward, backward, AdamW; then its event.
 * No host synchronisation. */
void gpt2_train_step(gpt2_train_t *g, int step);
/* Waits for the epoch's `steps` steps: their seconds (CUDA events), the median step and the mean training loss. */
void gpt2_train_epoch_end(gpt2_train_t *g, int steps, double *epoch_s, double *step_ms, double *loss);
/* The held-out loss: the mean cross-entropy over every target of the held-out split's windows, in file order, in
 * batches of B (the last one's missing rows count no target). Synchronises. */
double gpt2_train_evaluate(gpt2_train_t *g);
/* The rate of the last step begun (synchronises): the row's lr_now. */
double gpt2_train_lr_now(gpt2_train_t *g);
/* Device memory in use now beyond what was before g, in MiB. */
double gpt2_train_mem_mb(const gpt2_train_t *g);
/* The flat fp32 parameters to host, at most max of them; returns their count (host NULL: the count only). */
size_t gpt2_train_params(gpt2_train_t *g, float *host, size_t max);
void gpt2_train_free(gpt2_train_t *g);
#ifdef __cplusplus
}
#endif
