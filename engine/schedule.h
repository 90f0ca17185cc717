/* schedule.h — the learning rate as a function of the step (--lr-schedule, --warmup-epochs), the rule that grows it
 * with the batch (--lr-scaling) and the optimizers' names (--optimizer). Host-only: the device reads its table. */
#pragma once
#include <stddef.h>

/* constant: the peak rate throughout. step: the peak, times 0.1 at half of the steps after warm-up and 0.01 at three
 * quarters. cosine: peak * (1 + cos(pi t / T)) / 2 over the T steps after warm-up (Loshchilov and Hutter). linear:
 * peak * (1 - t / T). Every kind starts with the warm-up, when there is one. */
typedef enum { LR_CONSTANT = 0, LR_STEP = 1, LR_COSINE = 2, LR_LINEAR = 3, LR_KIND_COUNT } lr_kind_t;
static const char *const lr_kind_names[LR_KIND_COUNT + 1] = {"constant", "step", "cosine", "linear", 0};

/* How the rate given at the base batch grows with the global batch B: linear, lr * B / base (Goyal et al. 2017);
 * sqrt, lr * sqrt(B / base) (Krizhevsky 2014; Hoffer et al. 2017); none, lr whatever B. */
typedef enum { LR_SCALE_LINEAR = 0, LR_SCALE_SQRT = 1, LR_SCALE_NONE = 2, LR_SCALE_COUNT } lr_scaling_t;
static const char *const lr_scaling_names[LR_SCALE_COUNT + 1] = {"linear", "sqrt", "none", 0};

/* sgd: momentum SGD as torch.optim.SGD. lars: layer-wise adaptive rate scaling (You et al. 2017): each layer's weights
 * and its biases (batch norm: its scale and shift together, one tensor of 2C in the flat buffer) step at the rate times
 * their trust ratio, as in the paper and apex's LARC. Leaving batch norm and biases at the plain rate (the MLPerf recipes' choice, with their own rates)
 * trained ResNet-18 at batch 4096 to 88 % training accuracy but left the running statistics behind shifts moved at a
 * rate of 2 to 20: 10 % test accuracy. */
/* adamw: AdamW (Loshchilov and Hutter) as GPT-2 is trained (nanoGPT, llm.c): betas 0.9 and 0.95, eps 1e-8, the weight
 * decay decoupled and on the matrices only (the embeddings too, not the biases or LayerNorms), the gradient clipped to
 * a global norm of 1 first (engine/gpt2/gpt2_adamw.h); a language model's optimizer, as SGD and LARS are the image
 * classifiers' (the options refuse the other pairings). */
typedef enum { OPTIM_SGD = 0, OPTIM_LARS = 1, OPTIM_ADAMW = 2, OPTIM_COUNT } optim_kind_t;
static const char *const optim_names[OPTIM_COUNT + 1] = {"sgd", "lars", "adamw", 0};
/* Which model kind (engine/model_info.h's model_kind_t) each optimizer steps, in optim_kind_t order. */
static const int optim_for_tokens[OPTIM_COUNT] = {0, 0, 1};
/* LARS's trust coefficient eta (You et al. use 0.001; the MLPerf references the same). */
#define OPTIM_LARS_ETA 0.001

/* One run's schedule. The zero value is a constant rate of 0: every field is set from the options. */
typedef struct {
    lr_kind_t kind;
    double peak;            /* the rate after warm-up: --lr under the scaling rule (lr_scale) */
    double warmup_epochs;   /* gradual warm-up from peak / W to the peak over its W steps (Goyal et al.) */
    int epochs;             /* the run's epochs: the span of the decay */
} lr_schedule_t;

#ifdef __cplusplus
extern "C" {
#endif
/* The rate lr (given at base_batch) at the global batch `batch` under `rule`. */
double lr_scale(double lr, lr_scaling_t rule, double batch, double base_batch);
/* Warm-up steps of s at steps_per_epoch: W = round(warmup_epochs * steps_per_epoch), at most the run's steps. */
long lr_warmup_steps(const lr_schedule_t *s, long steps_per_epoch);
/* The rate at optimizer step `step` (0-based, counted over the whole run) with steps_per_epoch steps an epoch; past
 * the run's last step, the rate of its last step. */
double lr_schedule_at(const lr_schedule_t *s, long step, long steps_per_epoch);
/* The rate of every step of the run, rounded to float once: out[0..n), n = epochs * steps_per_epoch, what the device
 * reads (engine/optim.h). */
void lr_schedule_table(const lr_schedule_t *s, long steps_per_epoch, float *out, long n);

#ifdef __cplusplus
}
#endif
/* What a run's optimizer is told (run_cfg_t.optim): its kind, its schedule and how often it measures the gradient noise
 * scale. The zero value is SGD at a constant rate of sched.peak, no noise scale. */
typedef struct {
    optim_kind_t kind;
    lr_schedule_t sched;    /* epochs 0: the constant rate sched.peak */
    int steps_cap;          /* steps an epoch the harness runs (--steps), 0: whole epochs: the table's epoch length */
    int gns_every;          /* measure the noise scale every this many steps (0: never) */
} optim_cfg_t;
