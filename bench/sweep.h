/* sweep.h — the cross product of the option lists, with weak or strong scaling of batch and learning rate.
 * Host-only. */
#pragma once
#include "options.h"

typedef struct {
    int index;                  /* 0-based position in the sweep */
    int gpus;
    int global_batch;           /* weak: batch * gpus; strong: batch */
    int per_gpu_batch;          /* global_batch / gpus */
    double lr;                  /* the peak rate: --lr grown from lr_base_batch to global_batch (lr_scale) */
    int lr_base_batch;          /* the global batch --lr is given at: --lr-base-batch, else the --batch value */
    unsigned long long seed;
    math_t math;
    dtype_t grad_dtype;         /* naive, nccl: the gradients on the wire */
    int micro_batches;          /* pipeline: micro-batches per global batch, OPT_MICRO_AUTO: the pipeline picks
                                 * (other strategies ignore it) */
} sweep_point_t;

/* Expands o into *points (malloc'd; caller frees) in the order gpus x batch x lr x seed x math x grad dtype x
 * micro-batches: a configuration's precisions run back to back, so a sweep cut short leaves whole pairs.
 * Returns the count, or -1 with a message in err (e.g. a batch not divisible by a GPU count, or a micro-batch
 * count that does not divide a global batch). */
int sweep_expand(const options_t *o, sweep_point_t **points, char *err, size_t errlen);

/* A scaled rate past this many times its --lr gets a warning: Goyal et al.'s linear rule held to 8k images (32x
 * ResNet-50's 256) only with a gradual warm-up, and without one a rate ten times the tuned one mostly diverges. */
#define SWEEP_LR_WARN_RATIO 10.0
/* 1 with a one-line warning in msg where a point's rate grew past SWEEP_LR_WARN_RATIO x its --lr (the largest such
 * point named); else 0. A warning, not an error: a study may mean to find where training breaks. */
int sweep_lr_warning(const options_t *o, const sweep_point_t *p, int n, char *msg, size_t len);
