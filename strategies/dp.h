/* dp.h — what the data-parallel strategies (naive, nccl) share: N replicas with one shard each (an image classifier's
 * replica_t, or a language model's trainer), per-step CUDA-event timing read once per epoch, the bit-exact replica
 * check, and the exact-sum check of a gradient reduction. */
#pragma once
#include "strategy.h"
#include "../engine/replica.h"
#include "../engine/reduce.h"

#define DP_MAX_GPUS REDUCE_MAX_SRC  /* GPU 0 sums every other replica's gradients in one launch */
#define DP_TIMED_MAX 256            /* steps per epoch that carry timing events (evenly spaced) */

/* Every data-parallel strategy's state begins with a dp_t, so tests reach the replicas through (dp_t *)state. */
typedef struct {
    int n;
    /* n replicas on cfg->devices[i], shard i of every global batch: an image classifier's in reps (lms NULL), a
     * language model's (engine/gpt2/gpt2_train.h) in lms (reps NULL). */
    replica_t *reps;
    struct gpt2_train *lms;
    int stride;                     /* steps stride*k carry timing events */
    int n_slots;                    /* timed steps per epoch */
    int comm_per_step;              /* timed communication intervals per step, on GPU 0's comm stream */
    cudaEvent_t *comm;              /* [(slot * comm_per_step + k) * 2 + {0 begin, 1 end}] on GPU 0 */
    int n_segs;                     /* compute segments per step: forward, the backward segments, update */
    cudaEvent_t *busy;              /* [((i * n_slots + slot) * n_segs + seg) * 2 + {0 begin, 1 end}] on GPU i */
    /* 1: backward segments 1.. can run beside an all-reduce (nccl, overlapped), so step 0 of every epoch runs its
     * reductions after backward and its segments' busy times are the solo times that bound the other steps'
     * compute (breakdown_stall). */
    int solo;
    int step;                       /* the step being enqueued: dp_epoch_begin sets 0, dp_update advances it */
    unsigned long long *checksum[DP_MAX_GPUS];  /* device scratch of the replica check, one per GPU */
    char algo[64];                  /* nccl_algo of the rows; "" where not applicable */
    /* One process per GPU (cfg->dist, strategies/dist.h): this process's replicas are shards shard0.. of the
     * world's; statistics, the replica check and evaluation then span every process. */
    const struct dist *dist;        /* NULL: this process drives every replica */
    int world;                      /* replicas over all processes (n without dist) */
    int shard0;                     /* shard of reps[0] in every global batch (0 without dist) */
    /* --grad-dtype: the gradients' type on the wire. bf16 or fp16: wire_grads[i] (n_params of that type on replica
     * i's GPU, the flat fp32 buffer's offsets) receives replica i's cast gradients, is all-reduced in place, and is
     * what its update reads (replica_set_update_grads); fp32: NULL, the flat gradient buffer is reduced in place. */
    dtype_t wire;
    void *wire_grads[DP_MAX_GPUS];
} dp_t;

/* Where a step measuring the gradient noise scale adds each replica's |g_i|^2, of the gradient its shard gives
 * before the reduction: acc[i] on replica i's GPU, unscaled by ls[i] (NULL: no loss scale). */
typedef struct {
    double *acc[DP_MAX_GPUS];
    const loss_scale_t *ls[DP_MAX_GPUS];
} dp_gns_local_t;

/* Builds cfg->n_gpus replicas (shard arithmetic of shard.h). 0, or -1 with a message (state freed). */
int dp_setup(dp_t *dp, const run_cfg_t *cfg, char *err, size_t errlen);
/* Replica i's GPU (device and streams). */
gpu_t *dp_gpu(dp_t *dp, int i);
/* Elements of each replica's flat parameter and gradient buffers. */
size_t dp_n_params(const dp_t *dp);
/* Optimizer steps in an epoch. */
int dp_steps_per_epoch(const dp_t *dp);
/* The pieces backward runs in (an image classifier's layers, GPT-2's units: gpt2_shape.h), last to first, and where
 * each one's slice of the flat buffers begins into first (room for MODEL_MAX_LAYERS), for buckets.h. Returns their
 * count. */
int dp_layers(const dp_t *dp, size_t *first);
/* The strategy's steps_done (strategy.h): replica 0's step events. */
int dp_steps_done(dp_t *dp, int launched, double *ms);
/* What a step's reduction runs on (reduce_ops_t.run's src and bufs; src: DP_MAX_GPUS entries of storage): returns
 * NULL for an fp32 wire, with bufs[i] the flat gradient buffer of replica i, and for a 2-byte wire src, with src[i]
 * that buffer and bufs[i] wire_grads[i]. */
const float *const *dp_grad_buffers(dp_t *dp, const float **src, void **bufs);
/* Creates the events of comm_per_step timed communication intervals per timed step (once, after setup). */
void dp_comm_timing(dp_t *dp, int comm_per_step);
/* Creates the events around each of a timed step's compute segments (forward, backward_segments backward segments,
 * update) on every GPU: the busy time of strategies/breakdown.h. Once, after setup. */
void dp_busy_timing(dp_t *dp, int backward_segments);
/* Asks for a solo step per epoch (dp_t.solo): for a strategy whose communication runs beside backward. */
void dp_solo_timing(dp_t *dp);
/* 1 if `step` is the epoch's solo step: the strategy runs its reductions after the whole backward. */
int dp_solo_step(const dp_t *dp, int step);
/* The GPUs of the replicas, in replica order (out: DP_MAX_GPUS entries). */
void dp_gpus(dp_t *dp, gpu_t **out);
void dp_epoch_begin(dp_t *dp, int epoch);
/* Event k of the step's communication on GPU 0 (end = 0 begin, 1 end), or NULL on untimed steps. */
cudaEvent_t dp_comm_event(const dp_t *dp, int step, int k, int end);
/* Replica i's gather of its shard of the step's batch, forward and loss (a CUDA-graph segment with --cuda-graph). */
void dp_forward(dp_t *dp, int i);
/* Replica i's backward over layers [lo, hi) (a language model's units: dp_layers) as graph segment `segment` (0 for
 * a whole backward, b for bucket b). */
void dp_backward(dp_t *dp, int i, int segment, int lo, int hi);
/* The step being enqueued measures the noise scale: where its reduction adds each replica's local |g_i|^2 (fills
 * store), or NULL on the other steps. On such a step dp_update adds |g|^2 of the reduced gradient, so an epoch's row
 * gives the mean |G|^2 at the shard's batch (over replicas and steps) and at the global batch. */
const dp_gns_local_t *dp_gns_local(const dp_t *dp, dp_gns_local_t *store);
/* The update on every replica (SGD; a language model's AdamW, clipped by the reduced gradients' norm), each waiting
 * only for its own stream's work, then the step's timing event. With a loss scale (fp16), each replica first checks
 * its reduced gradients: an inf or a NaN of any replica survives the sum, so every replica skips the step together
 * and their scales stay equal. */
void dp_update(dp_t *dp, int step);
/* Synchronises every GPU once and fills out: mean loss/accuracy over the replicas, the loss scale and skipped steps,
 * slowest epoch and step time, compute / exposed / idle time per step (strategies/breakdown.h: the GPU with the most
 * compute, over every process's GPUs), communication time, gradient bytes, algbw / busbw, replica check, peak
 * memory. */
void dp_epoch_end(dp_t *dp, int steps, epoch_stats_t *out);
/* 1 if every replica's parameters are bit-identical to replica 0's (checksums on each GPU), else 0. Synchronises.
 * With dist: over every process's replicas (collective), the same answer on every rank. */
int dp_replicas_identical(dp_t *dp);
/* Test accuracy of replica 0 (its own running BatchNorm statistics), or a language model's held-out loss. With dist:
 * rank 0 evaluates, every rank gets its figure (collective). */
double dp_evaluate(dp_t *dp);
/* Copies replica 0's flat parameters to host (max floats at most) and returns the parameter count (host NULL:
 * only the count). Synchronises. The strategies' `params` hook. */
size_t dp_params(dp_t *dp, float *host, size_t max);
void dp_teardown(dp_t *dp);

/* The cast of a reduction's fp32 gradients into its wire buffer of 2-byte type t on `stream` of `device` (the
 * current device), inside a --trace range (trace NULL: none) and an NVTX range, both named after `name`: elements
 * [0, count) of wire and src, or with ranges (device memory) the n_ranges (offset, count) parts of them, the longest
 * `count` (reduce_cast_ranges). */
void dp_cast_wire(struct trace *trace, int device, void *wire, dtype_t t, const float *src, size_t count,
                  const size_t *ranges, int n_ranges, cudaStream_t stream, const char *name);
/* An image classifier's (a language model's gradients are all fp32) 2-byte wire of the math's own activation type
 * (--grad-dtype bf16 under --math bf16, fp16 under fp16): binds every replica's 2-byte weight gradients to be written
 * straight into its wire buffer by backward (model_bind_grads_lp), so they are neither widened to fp32 nor cast back,
 * and writes the parts of the flat buffer still written in fp32, which the cast must still carry over, to ranges
 * (room for max pairs); returns their count (the whole buffer, one part, where nothing was bound). Setup only. */
int dp_bind_wire(dp_t *dp, size_t *ranges, int max);
/* Fills the inputs with reduce_fill_pattern(rank i, base) (src[i], count fp32, where src is given; else bufs[i],
 * count elements of type wire), runs ops once, and returns how many elements of bufs over all GPUs differ from the
 * exact sum. Synchronises; allocates (not for use inside a step). */
unsigned long long dp_check_reduce(const reduce_ops_t *ops, void *ctx, gpu_t *const *gpus, int n, dtype_t wire,
                                   const float *const *src, void *const *bufs, size_t count, int base);
