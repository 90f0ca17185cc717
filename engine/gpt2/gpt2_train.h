/* gpt2_train.h — one GPU training GPT-2 on a token corpus (engine/tokens.h), the unit single and each data-parallel
 * replica drive for a language model as replica.h is for the image classifiers: the corpus on the GPU, each step's
 * windows gathered there at a device step counter, forward, backward and AdamW replayed from CUDA graphs. */
#pragma once
#include <stdint.h>
#include "gpt2_data.h"
#include "gpt2_model.h"
#include "../gpu.h"
#include "../graph.h"
#include "../math_mode.h"
#include "../optim.h"
#include "../tokens.h"

typedef struct gpt2_train {
    gpu_t gpu;
    gpt2_model_t m;
    optim_t opt;                /* the schedule's rate and the step count AdamW reads (gpt2_model_update) */
    int first;                  /* this GPU's rows [first, first + m.B) of every global batch of m.grad_B sequences
                                 * (of m.T tokens) */
    int steps_per_epoch;        /* the training windows / m.grad_B: the last partial batch is dropped, as for images */
    gpt2_data_t data;           /* the corpus on the GPU, the epoch's order */
    unsigned long long seed;    /* the parameters' initialisation and every epoch's order (tokens_sampler_shuffle) */
    int *d_tok, *d_tgt;         /* device: a batch's inputs and targets, (B, T) each */
    int *d_step;                /* device: the step of the epoch, which the gather reads (reset each epoch) */
    double *d_loss;             /* device: the epoch's summed training loss; then the evaluation's sum and count */
    cudaEvent_t *step_events;   /* steps_per_epoch + 1 on the stream */
    int use_graph;              /* 1: the step is captured once and replayed (--cuda-graph) */
    struct trace *trace;        /* --trace (engine/trace.h), or NULL: while it is active, a step runs in its pieces,
                                 * each a range (forward, backward k, update) on the GPU's compute row */
    graph_seg_t seg;            /* the whole step (gpt2_train_step) */
    /* The step in pieces, for data parallelism: [0] forward, [1] update, [2 + k] backward piece k, which runs the
     * units piece_units[2 k], [2 k + 1] it first ran (a graph replays what it captured). */
    graph_seg_t *pieces;
    int n_pieces;
    int *piece_units;
    /* The gradients the update reads: the model's fp32 ones, or with update_wire (set by
     * gpt2_train_set_update_grads) that buffer of type wire_t widened into them first, rounded from them before where
     * wire_round. */
    const void *update_wire;
    dtype_t wire_t;
    int wire_round;
    size_t mem_base;            /* device memory in use before anything of this run was allocated */
} gpt2_train_t;

#ifdef __cplusplus
extern "C" {
#endif
/* GPT-2 of size `size` (gpt2_shape.h) on `device` at B sequences of the corpus's T tokens, rows [first, first + B)
 * of every global batch of global_B (B, 0: the whole batch), in math (fp32, tf32, bf16: bf16 activations with fp32
 * master weights), its vocabulary the corpus's where that is larger (the tiny shape's 512 would not hold GPT-2's
 * tokens); parameters from seed; AdamW (betas 0.9 and 0.95, eps 1e-8, clipping at norm 1) at weight_decay with o's
 * schedule, whose epoch is o->steps_cap steps where that caps it. The loss's gradient is the global batch's mean's
 * share (gpt2_model_t.grad_B), so the sum over the shards' gradients is the global batch's. The corpus must outlive
 * g. 0, or -1 with the reason in err (out of memory, a global batch larger than the training windows, fp16). */
int gpt2_train_init(gpt2_train_t *g, int device, const char *size, int B, int global_B, int first, math_t math,
                    const optim_cfg_t *o, float weight_decay, const tokens_corpus_t *corpus, unsigned long long seed,
                    char *err, size_t errlen);
/* The update reads the n_params gradients of type t in `wire` (a 2-byte all-reduce's sum), widened into the fp32
 * ones; round: the fp32 gradients are first rounded into it (a lone replica, whose numerics then do not depend on its
 * GPU count). Before the first step: the update piece may be captured with these. */
void gpt2_train_set_update_grads(gpt2_train_t *g, const void *wire, dtype_t t, int round);
/* The epoch's order of the training windows (seed, epoch), the step counter and the loss sum zeroed, the start
 * event. */
void gpt2_train_epoch_begin(gpt2_train_t *g, int epoch);
/* Step `step` of the epoch (steps in order from 0): its windows gathered, forward, backward, AdamW; then its event.
 * No host synchronisation. While g->trace is active, in its pieces, each a range, from the GPU's time zero. */
void gpt2_train_step(gpt2_train_t *g, int step);
/* The step in pieces (data parallelism, strategies/dp.c), each a CUDA-graph segment of its own under use_graph, in
 * this order: forward gathers this GPU's rows of step *d_step's windows and runs the forward with its gradient;
 * backward runs units [lo, hi) (gpt2_model_backward_units) as piece k, pieces from the top unit down, piece k always
 * over the same units (another range stops the run with a message); update reads
 * the gradients (gpt2_train_set_update_grads), takes the AdamW step and the step counter on. Then mark_step. */
void gpt2_train_forward(gpt2_train_t *g);
void gpt2_train_backward(gpt2_train_t *g, int k, int lo, int hi);
void gpt2_train_update(gpt2_train_t *g);
/* Records step `step`'s end event on the stream. */
void gpt2_train_mark_step(gpt2_train_t *g, int step);
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
