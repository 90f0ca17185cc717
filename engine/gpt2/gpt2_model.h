/* gpt2_model.h — one GPT-2 on one GPU at a batch of B sequences of T tokens: its device buffers (gpt2_plan.h), the
 * forward pass to the mean loss, the backward pass to every parameter's gradient, and the AdamW update. */
#pragma once
#include <stddef.h>
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include "gpt2_shape.h"
#include "gpt2_plan.h"
#include "gpt2_linear.h"
#include "gpt2_adamw.h"
#include "gpt2_sdpa.h"
#include "../dtype.h"
#include "../optim.h"

#ifdef __cplusplus
extern "C" {
#endif
/* AdamW's constants; GPT-2 recipes (nanoGPT, llm.c): 0.9, 0.95, 1e-8, weight decay 0.1, clipping at norm 1. */
typedef struct {
    float beta1, beta2, eps, weight_decay, max_norm;
} gpt2_adamw_cfg_t;
/* GPT-2's recipe at weight decay wd. */
#define GPT2_ADAMW_RECIPE(wd) ((gpt2_adamw_cfg_t){0.9f, 0.95f, 1e-8f, (wd), 1.0f})

/* Which attention the model runs. AUTO: cuDNN's fused attention under bf16 where its plans build on this GPU and
 * cuDNN, else (fp32, or the plans refused, said in one line on stderr) the plain one; PLAIN: always the plain one. */
typedef enum { GPT2_ATTN_AUTO = 0, GPT2_ATTN_PLAIN } gpt2_attn_kind_t;

/* A step is forward (with grad), backward, update: launches on one stream, with no host sync, no allocation and the
 * same sequence every step, so a CUDA graph can capture it (engine/graph.h). */
typedef struct gpt2_model {
    gpt2_shape_t shape;     /* a copy */
    int B, T;
    int grad_B;             /* the sequences the loss's gradient is the mean over: B, or in data parallelism the
                             * global batch, so the replicas' summed gradients are the global batch's mean's */
    dtype_t t;              /* the activations' type, fp32 or bf16; parameters fp32 with a bf16 copy under bf16 */
    int tf32;               /* fp32 GEMMs on TF32 tensor cores (else strict, as the cuBLAS handle's math mode allows) */
    gpt2_plan_t plan;
    gpt2_slice_t *slices;   /* host: gpt2_layout_stage's of the plan's units, n_slices of them */
    int n_slices;
    size_t n_params;        /* elements of each flat buffer (gpt2_layout_stage's total, padding included) */
    void *arena[GPT2_ARENAS]; /* the plan's allocations: flat buffers, activations, backward's scratch; a slot
                             * (gpt2_model_init_slot) owns only its activations */
    const struct gpt2_model *slot_of;   /* a slot: the stage model whose flat buffers and scratch it shares; NULL */
    float *params, *grads, *adam_m, *adam_v;
    void *params_lp;        /* the bf16 copy (NULL under fp32) */
    void *scratch;          /* LayerNorm's and the embedding's backward scratch, used one after the other */
    size_t scratch_bytes;
    double *loss_acc;       /* device: the cross-entropy's sum and count of the last forward */
    float *loss;            /* device: the mean loss of the last forward */
    double *sumsq;          /* device: the squared global gradient norm the clipping reads */
    gpt2_lt_t lt;           /* cuBLASLt's handle, with the GPU's workspace and ones (B * T of them) */
    cublasHandle_t blas;    /* borrowed (gpu_t's): the attention's batched GEMMs; its stream is set per call */
    gpt2_adamw_t adamw;
    int fused;              /* the attention is cuDNN's fused one (sdpa, its workspace sdpa_ws), else the plain one */
    gpt2_sdpa_t sdpa;
    void *sdpa_ws;
} gpt2_model_t;

/* Allocates m for shape s (copied) at B x T with activations of type t on g's device, gradients and moments zero,
 * parameters unset (gpt2_model_init_params or gpt2_model_set_params). It borrows g's cuBLAS handle and workspace (a
 * captured step needs the same workspace as the eager one), cuDNN handle and ones (under bf16 activations, g's math
 * must be bf16: its ones are fp32 and the math's type); g must outlive m. 0, or -1 with the reason in err (a bad
 * shape or batch, or out of memory: nothing is left allocated). */
int gpt2_model_init(gpt2_model_t *m, const gpt2_shape_t *s, int B, int T, dtype_t t, int tf32, gpu_t *g,
                    const gpt2_adamw_cfg_t *opt, char *err, size_t errlen);
/* A pipeline stage: the units [lo, hi) of GPT-2 (gpt2_plan_stage) with the attention chosen by attn. Its forward
 * starts from its input's residual stream (gpt2_model_stage_io) where lo > 0 and ends there where it holds no head;
 * its backward starts from its output's gradient there. lo 0, hi GPT2_UNITS(layers) with GPT2_ATTN_AUTO is
 * gpt2_model_init. */
int gpt2_model_init_stage(gpt2_model_t *m, const gpt2_shape_t *s, int B, int T, dtype_t t, int tf32, gpu_t *g,
                          const gpt2_adamw_cfg_t *opt, gpt2_attn_kind_t attn, int lo, int hi, char *err,
                          size_t errlen);
/* Another activation slot of stage `owner` (a micro-batch in flight): its own activations, the owner's flat buffers,
 * backward's scratch, handles and optimizer. 0, or -1 with the reason in err (out of memory). Freed before the
 * owner. */
int gpt2_model_init_slot(gpt2_model_t *m, const gpt2_model_t *owner, char *err, size_t errlen);
void gpt2_model_free(gpt2_model_t *m);
/* The tensors a stage exchanges with its neighbours, (B T, C) each of the activations' type: in, the input's residual
 * stream (a stage after the first: the previous stage's out); out, the output's (a stage without the head); dout,
 * the output's gradient (from the next stage's din), read by backward; din, the input's gradient after backward (a
 * stage after the first). NULL where the stage has none. */
void gpt2_model_stage_io(const gpt2_model_t *m, void **in, void **out, void **dout, void **din);
/* Whether m holds the embeddings (unit 0) and the head (the last unit). */
int gpt2_model_has_embed(const gpt2_model_t *m);
int gpt2_model_has_head(const gpt2_model_t *m);
/* Device bytes m holds: the plan's three allocations (a slot: its activations alone), the scratch and the fused attention's workspace (the GPU's
 * cuBLAS workspace and ones, which it borrows, not counted). */
size_t gpt2_model_bytes(const gpt2_model_t *m);

/* The parameters from host (n_params fp32 in m's layout: gpt2_layout_stage's), the bf16 copy made from them, AdamW's
 * moments zeroed (a fresh start). Setup, not a step: returns with `stream` synchronised. */
void gpt2_model_set_params(gpt2_model_t *m, const float *host, cudaStream_t stream);
/* gpt2_layout_init's GPT-2 initialisation from seed (the whole model's, so a stage's slices hold what the whole
 * model's do), then gpt2_model_set_params. */
void gpt2_model_init_params(gpt2_model_t *m, unsigned long long seed, cudaStream_t stream);
/* m's parameters into their places of the whole model's flat layout `full` (gpt2_layout's total), which a stage
 * fills only in part. Synchronises its GPU's stream. */
void gpt2_model_params_full(const gpt2_model_t *m, float *full);

/* Forward of tokens tok (device, B * T ints in [0, vocab), sequence after sequence) to *m->loss, the mean
 * cross-entropy over the counted targets (device, B * T ints: the next token, or -1 for none). grad: the logits are
 * overwritten by the loss's gradient for gpt2_model_backward, scaled by 1 / (grad_B * T): the mean's gradient when
 * every target counts, as in a language model's batch. */
void gpt2_model_forward(gpt2_model_t *m, const int *tok, const int *tgt, int grad, cudaStream_t stream);
/* *m->loss on the host, after the work queued on `stream` (it synchronises: for tests and tools, not a step). */
float gpt2_model_loss(const gpt2_model_t *m, cudaStream_t stream);
/* After gpt2_model_forward with grad, of the same tokens: every parameter's gradient into m->grads (fp32,
 * overwritten). The head is the token embedding: its gradient is the head's product plus the embedding's
 * scatter-add. */
void gpt2_model_backward(gpt2_model_t *m, const int *tok, cudaStream_t stream);
/* The part of gpt2_model_backward over units [lo, hi) (gpt2_shape.h's GPT2_UNITS), from unit hi - 1 down to lo: calls
 * over ranges that tile [0, GPT2_UNITS(layers)) from the top down launch exactly gpt2_model_backward's work. Unit
 * j's gradients are final once its range has run; the token embedding's (unit 0) take the head's part, written by
 * unit L + 1, and its own. */
void gpt2_model_backward_units(gpt2_model_t *m, const int *tok, int lo, int hi, cudaStream_t stream);
/* Backward of a stage (or the whole model) over all its units, the weight gradients overwritten (dw_beta 0: a step's
 * first micro-batch) or added to (dw_beta 1). On a stage without the head it starts from dout (gpt2_model_stage_io);
 * on one after the first it leaves its input's gradient in din. */
void gpt2_model_backward_stage(gpt2_model_t *m, const int *tok, float dw_beta, cudaStream_t stream);
/* One AdamW step of every parameter from m->grads (gpt2_adamw.h), clipped to the global norm opt.max_norm, at o's
 * rate and step count (optim_begin_step is called here: o is this model's optimizer state), the bf16 copy rewritten. */
void gpt2_model_update(gpt2_model_t *m, optim_t *o, cudaStream_t stream);
/* The update in its two parts, for a pipeline whose clipping norm is every stage's: the squared norm of m's gradients
 * added to *acc (device), the token embedding's left out where skip_wte (a tied copy another stage counts); then
 * AdamW reading m->sumsq, which must hold the whole model's squared norm. */
void gpt2_model_grad_sumsq(const gpt2_model_t *m, int skip_wte, double *acc, cudaStream_t stream);
void gpt2_model_adamw(gpt2_model_t *m, optim_t *o, cudaStream_t stream);
/* m->sumsq = the sum of parts[0 .. n) (device): the stages' squared norms. */
void gpt2_model_set_sumsq(gpt2_model_t *m, const double *parts, int n, cudaStream_t stream);
/* The last forward's cross-entropy sum and target count added to acc[0..1] (device). */
void gpt2_model_loss_add(const gpt2_model_t *m, double *acc, cudaStream_t stream);
/* One training step: forward with grad, backward and the update, of the batch tok / tgt (what a graph captures). */
void gpt2_model_step(gpt2_model_t *m, const int *tok, const int *tgt, optim_t *o, cudaStream_t stream);
#ifdef __cplusplus
}
#endif
