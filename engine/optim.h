/* optim.h — one GPU's optimizer state on the device: the learning rate of every step (the schedule's table), the step
 * counter that indexes it, and LARS's per-layer norms, so a captured step follows the schedule with no host sync. */
#pragma once
#include <stddef.h>
#include <cuda_runtime.h>
#include "dtype.h"
#include "loss_scale.h"
#include "schedule.h"

#ifdef __cplusplus
extern "C" {
#endif
struct model;

/* A part of the flat buffers that LARS treats as one tensor: [at, at + len), adapted (its trust ratio applies) or
 * not (the plain rate: a test's control). */
typedef struct {
    size_t at, len;
    int adapt;
} optim_seg_t;

typedef struct {
    optim_kind_t kind;
    float momentum, weight_decay, eta;
    int device;
    float *table;           /* device: the rate of each of the run's n_steps steps (lr_schedule_table) */
    long n_steps;
    long long *step;        /* device: the steps begun since setup, never reset: the table's index */
    float *lr;              /* device: the rate of the step in progress, which the updates read */
    /* LARS: the flat buffers cut into chunks of one segment each; per segment |w|^2 and |g|^2 (norms). */
    int n_seg, n_chunks;
    int *seg_adapt;         /* device, n_seg */
    float *norms;           /* device, 2 per segment */
    int *chunk_seg;         /* device, n_chunks each */
    size_t *chunk_at;
    int *chunk_len;
} optim_t;

/* Sets up o on the current device for a run of sched (its epochs at steps_per_epoch steps; 0 epochs: the constant
 * sched->peak) with `kind`; LARS cuts model m's flat buffers into its layers' segments (optim_segments; m NULL:
 * optim_set_segments gives them). 0, or -1 with an out-of-memory line in err. */
int optim_init(optim_t *o, optim_kind_t kind, float momentum, float weight_decay, const lr_schedule_t *sched,
               long steps_per_epoch, const struct model *m, char *err, size_t errlen);
/* LARS's segments of model m (a whole model or a stage: offsets in its own flat buffers): per layer with parameters,
 * its weights and its biases, each adapted. Writes at most max; returns the count. */
int optim_segments(const struct model *m, optim_seg_t *seg, int max);
/* LARS over explicit segments (what optim_init does with optim_segments; tests give their own). 0, or -1. */
int optim_set_segments(optim_t *o, const optim_seg_t *seg, int n, char *err, size_t errlen);
/* The step's rate into o->lr (the table's entry at the step counter, the last past its end), then the counter up:
 * once per optimizer step, before any update of it, on the stream the updates follow. */
void optim_begin_step(optim_t *o, cudaStream_t stream);
/* The update of elements [first, first + count) of m's flat buffers from gradients g (count of type gt, element 0 at
 * first) and g2 (NULL, or m's 2-byte filter gradients, at first), at the step's rate: sgd_step's arithmetic for sgd;
 * LARS steps the whole buffer only (first 0, count m->n_params). ls: fp16's loss scale, or NULL. Launches only. */
void optim_update(const optim_t *o, struct model *m, size_t first, size_t count, const void *g, dtype_t gt,
                  const void *g2, const loss_scale_t *ls, cudaStream_t stream);
/* acc[0] += sum over n elements of (g_i + g2_i)^2 / scale^2 (g of type gt; g2 NULL or of type g2t; scale: ls's, or 1
 * without ls): a squared gradient norm, accumulated on the device (the gradient noise scale's input). */
void optim_sumsq(const void *g, dtype_t gt, const void *g2, dtype_t g2t, size_t n, const loss_scale_t *ls,
                 double *acc, cudaStream_t stream);
/* The rate of the last step begun (synchronises stream): the row's lr_now at an epoch's end. */
double optim_lr_read(const optim_t *o, cudaStream_t stream);
void optim_free(optim_t *o);
#ifdef __cplusplus
}
#endif
