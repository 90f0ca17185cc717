/* replica.h — one GPU's full copy of a model with its data set, events and optimizer settings: the unit that
 * the single-GPU and data-parallel strategies drive. A step is a fixed sequence of launches on known streams. */
#pragma once
#include "gpu.h"
#include "model.h"
#include "dataset.h"
#include "dtype.h"
#include "graph.h"
#include "loss_scale.h"
#include "optim.h"

/* A piece of a step that is the same launch sequence at every step (it reads the step from d_step), so it can be
 * captured into a CUDA graph once and replayed: one launch instead of dozens, each with cuDNN's host overhead. */
#define REPLICA_MAX_SEGMENTS (MODEL_MAX_LAYERS + 4)   /* a backward segment per bucket, at most one per layer */
enum {
    REPLICA_SEG_STEP = 0, REPLICA_SEG_FORWARD = 1, REPLICA_SEG_UPDATE = 2, REPLICA_SEG_GNS = 3, REPLICA_SEG_BACKWARD = 4
};

typedef struct replica {
    gpu_t gpu;
    model_t model;
    dataset_t data;
    int shard_batch;            /* images this replica processes per step */
    int global_batch;           /* images per optimizer step over all replicas */
    int steps_per_epoch;        /* n_train / global_batch: the last partial batch is dropped, as the reference */
    optim_t opt;                /* the schedule's rate on the device, the update (SGD or LARS) */
    unsigned long long seed;
    /* The gradient noise scale (engine/gns.h), every gns_every steps (0: never): two squared gradient norms, at a
     * small and a large batch, summed over the epoch in d_gns[0..1], gns_n such steps this epoch. Training alone
     * (replica_step_graphed) they are of the first half of the shard and of the whole (d_gns[2..3]: the half's loss
     * sums, kept out of the epoch's); in data parallel (strategies/dp.h) of this replica's shard and of the
     * all-reduced batch. steps: optimizer steps so far. */
    int gns_every, gns_n;
    double *d_gns;
    long long steps;
    cudaEvent_t *step_events;   /* steps_per_epoch + 1 timing events on the compute stream */
    size_t mem_base;            /* device memory in use before this replica allocated anything */
    int *d_step;                /* device step counter read by the segments' gather (reset each epoch) */
    int use_graphs;             /* 1: segments are captured once and replayed; 0: run eagerly every step */
    struct trace *trace;        /* --trace recorder (engine/trace.h), or NULL */
    /* The gradients the update segment reads: the model's fp32 grads, or the buffer a strategy set with
     * replica_set_update_grads (a bf16 or fp16 all-reduce's sum). */
    const void *update_grads;
    dtype_t update_grad_dtype;
    /* replica_bind_lp_grads: the convolutions' filter gradients in the math's 2-byte type, which the update reads
     * beside update_grads (zero where those hold the gradient); NULL otherwise. */
    void *grads_lp;
    /* The elements [update_first, update_first + update_count) of the flat buffers that the update segment steps: all
     * of them, unless a strategy steps the rest itself (replica_sgd_slice, per gradient bucket) and set this slice
     * with replica_set_update_slice. */
    size_t update_first, update_count;
    /* A math whose gradients need a loss scale (math_loss_scaled: fp16): its state on this GPU, which the loss's
     * gradient is multiplied by (model.loss_scale points at ls->scale), the update checks and divides by and the
     * schedule advances, all on the device; NULL otherwise. ls_skipped: skipped steps as of the last
     * replica_loss_scale_read. */
    loss_scale_t *ls;
    loss_scale_cfg_t ls_cfg;
    int ls_skipped;
    graph_seg_t seg[REPLICA_MAX_SEGMENTS];
} replica_t;

/* Builds the model for shard_batch images on `device`, uploads the data set, searches algorithms (or takes them
 * from setup.conv_cache, NULL for none; counted in setup.count, NULL for none) and initialises parameters from seed
 * (identical on every replica). Returns 0, or -1 with a reason in err. */
int replica_init(replica_t *r, int device, const char *model, int shard_batch, int global_batch, math_t math,
                 gpu_setup_t setup, init_t init, unsigned long long seed, const optim_cfg_t *optim, float momentum,
                 float weight_decay, const idx_dataset_t *data, char *err, size_t errlen);
/* The update reads n_params gradients of type t from grads instead of the model's fp32 buffer: a bf16 or fp16
 * all-reduce leaves the summed gradient in a 2-byte buffer, which the SGD kernel widens as it reads. Call before the
 * first step (the update segment is captured into a CUDA graph with the pointer it had then). */
void replica_set_update_grads(replica_t *r, const void *grads, dtype_t t);
/* SCALING_WGRAD: direct (the default) or widen. Where a 2-byte math leaves cuDNN's filter gradients in its type:
 * direct, they are written straight where the update reads them (one replica: replica_bind_lp_grads; data parallel
 * with a 2-byte wire: into the wire); widen, backward widens each into the fp32 gradients. Read once per setup; a
 * bad value, or the old name SCALING_DP_WGRAD set, stops the process with one line (exit 2). */
int replica_wgrad_direct(void);
/* Under a 2-byte math, with the model's fp32 gradients as the update's: binds cuDNN's filter gradients to a buffer of
 * the math's type that the update (and the loss scale's check) reads beside the fp32 one, which saves a widening
 * pass per convolution. Call before the first step; under fp32 or tf32 it does nothing. 0, or -1 with an out-of-memory
 * message in err. */
int replica_bind_lp_grads(replica_t *r, char *err, size_t errlen);
/* The update segment steps only elements [first, first + count) of the flat buffers; the strategy steps the others
 * with replica_sgd_slice. Call before the first step (the segment may be captured with the slice it had then). A
 * loss-scaled replica steps the whole buffer in its update segment: whether a step is skipped is known only once
 * every gradient has been checked (a slice of it stops the run with a message). */
void replica_set_update_slice(replica_t *r, size_t first, size_t count);
/* SGD over elements [first, first + count) of the flat parameter, momentum and 2-byte parameter buffers, reading the
 * update's gradients (replica_set_update_grads), on `stream` of r's device: per element the arithmetic of the whole
 * update, so slices that tile the buffer step it exactly as one update does. With a loss scale, the update divides
 * by it and writes nothing where this step's check found an inf or a NaN. Launches only. */
void replica_sgd_slice(replica_t *r, size_t first, size_t count, cudaStream_t stream);
/* Shuffles (same order on every replica), zeroes the loss/accuracy accumulators, records the start event. */
void replica_epoch_begin(replica_t *r, int epoch);
/* Runs fn(r, arg) on r's compute stream as segment `slot`: with use_graphs, eagerly at the first call (library
 * warm-up), captured at the second, replayed from the graph afterwards; otherwise eagerly every time. fn must
 * launch the same work every time given the same arg (step-dependent data comes from d_step). */
void replica_run_segment(replica_t *r, int slot, void (*fn)(replica_t *r, const void *arg), const void *arg);
/* Segment bodies. forward: gather shard `*(const int *)arg` of global batch *d_step, forward, loss. update: with a
 * loss scale, the check of the update's gradients (every one of them: in data parallel the reduced ones, so every
 * replica decides alike), then SGD over the update slice, the schedule's step, and d_step++. backward:
 * model_backward_range over ((const int *)arg)[0..1] = [lo, hi), overwriting grads. */
void replica_seg_forward(replica_t *r, const void *shard);
void replica_seg_backward(replica_t *r, const void *range);
void replica_seg_update(replica_t *r, const void *unused);
/* A whole step of a replica that trains alone (segment 0: forward, loss, backward, SGD), then the step's event; every
 * gns_every-th step instead the noise scale's step (segment REPLICA_SEG_GNS: the same, with the first half's backward
 * and both squared norms before the update, which reads the whole shard's gradient as any step's).
 * Steps must come in order from 0 within an epoch, as the harness calls them. */
void replica_step_graphed(replica_t *r, int step);
/* 1 if the optimizer step r is about to take (r->steps so far) measures the gradient noise scale. */
int replica_gns_due(const replica_t *r);
/* As replica_step_graphed, but in three segments (forward, backward, update) each in a --trace range, on GPU
 * clocks aligned at the step's start: used for the few traced steps. */
void replica_step_traced(replica_t *r, int step);
/* Runs segment `slot` inside a --trace range named `name` on the compute stream (no range when not tracing). */
void replica_run_traced(replica_t *r, const char *name, int slot, void (*fn)(replica_t *r, const void *arg),
                        const void *arg);
/* Records the step's timing event (after the update segment of data-parallel strategies). */
void replica_mark_step(replica_t *r, int step);
/* Waits for the epoch, returns its seconds (CUDA events), median step milliseconds, and mean loss/accuracy
 * over the images this replica trained on. */
void replica_epoch_end(replica_t *r, int steps, double *epoch_s, double *median_step_ms, double *loss, double *acc);
/* The rate of the last step begun (synchronises r's stream): the row's lr_now. */
double replica_lr_now(replica_t *r);
/* The epoch's noise-scale sums d_gns[0..1] into sums; returns its noise-scale steps (0: none measured). */
int replica_gns_sums(replica_t *r, double sums[2]);
/* After replica_epoch_end, training alone: the noise scale's means at half the shard and the whole (epoch_stats_t's
 * fields, < 0 where not measured). */
void replica_epoch_gns_halves(replica_t *r, double *small_sq, double *big_sq, int *b_small, int *b_big);
/* Adds |g|^2 of the gradients the update reads (both buffers where split, unscaled by the loss scale) into *acc on
 * r's stream. */
void replica_update_sumsq(replica_t *r, double *acc);
/* The loss scale after the work queued so far (synchronises r's stream) and the steps skipped since the previous
 * call (since the start, at the first): the CSV's loss_scale and skipped_steps at an epoch's end. -1 and -1 without
 * a loss scale. */
void replica_loss_scale_read(replica_t *r, double *scale, int *skipped);
/* Test accuracy with running BN statistics, in chunks of shard_batch; padding rows are not counted. */
double replica_evaluate(replica_t *r);
/* Device memory in use now minus what was in use before the replica existed, in MiB. */
double replica_mem_mb(const replica_t *r);
void replica_free(replica_t *r);
