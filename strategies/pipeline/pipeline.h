/* pipeline.h — the pipeline strategy's state: consecutive layer ranges (stages) on consecutive GPUs, each with
 * activation slots for its micro-batches in flight, the events of one step's plan and the links between GPUs.
 * Shared by pipeline.c (the strategy), pipe_run.c (a step, evaluation, copies), pipe_balance.c and the GPU tests. */
#pragma once
#include "../strategy.h"
#include "pipe_schedule.h"
#include "../../engine/graph.h"
#include "../../engine/loss_scale.h"
#include "../../engine/optim.h"

#define PIPE_TIMED_MAX 32       /* steps per epoch that carry timing events (evenly spaced) */
#define PIPE_TIMED_EVENTS 4096  /* at most this many timed ops per stage per epoch (many micro-batches: fewer steps) */
#define PIPE_GRAPH_MAX_MICRO 64 /* more micro-batches run eagerly: a graph per micro-batch would cost more than it saves */

typedef struct {
    gpu_t gpu;                      /* stream: forward, backward, update; comm_stream: incoming activations */
    int first, end;                 /* layers [first, end) */
    int n_in, in_t[MODEL_MAX_CROSS];    /* the tensors crossing into the stage (stage 0: the images) */
    int n_out, out_t[MODEL_MAX_CROSS];  /* those crossing out to the next stage (none on the last): stage s + 1's
                                         * in_t, with a shortcut beside the branch where a cut is inside a block */
    int n_slots;
    model_t *slot;                  /* slot[0] owns the parameters, gradients, momentum, running statistics and
                                     * activation gradients; slot[k] adds its own activations (model_alloc_slot),
                                     * and under zero bubble the gradients its deferred W and the copies use */
    cudaStream_t grad_stream;       /* incoming gradients */
    cudaEvent_t *ev[SCHED_KINDS];   /* [mb]: the op (kind, this stage, mb) is done */
    cudaEvent_t updated;            /* this step's SGD is done */
    cudaEvent_t eval_fwd, eval_in;  /* evaluation: this chunk's forward is done / its input has been taken */
    cudaEvent_t *busy, *window, *copy;  /* timing events of the timed steps (pipe_timing.c) */
    graph_seg_t *fwd_graph;         /* [slot], or on stage 0 [micro-batch] (the gather's offset differs) */
    graph_seg_t *bwd_graph;         /* [slot * 2 + first backward of the step] */
    graph_seg_t *wgt_graph;         /* zero bubble: [slot * 2 + first weight-gradient op of the step] */
    size_t mem_base;                /* device memory in use before the run */
    dataset_t data;                 /* stage 0 only: images and labels */
    int has_data;
    /* A loss-scaled math (fp16): this stage's copy of the loss scale (every stage's evolves alike: each decides
     * from the flags of all), the other stages' found_inf copied in (p ints, this stage's own entry unused), and
     * the event after this stage's check of its gradients; NULL otherwise (pipe_scale.c). */
    loss_scale_t *ls;
    int *ls_flags;
    cudaEvent_t checked;
    optim_t opt;                    /* this stage's rate (every stage steps the one schedule) and update */
    struct pipe_lm_stage *lm;       /* a language model's stage (pipe_lm_run.c) in place of slot, or NULL */
} pipe_stage_t;

typedef struct {
    int used, peer;                 /* peer: direct copies; else staged through `pinned` */
    float *pinned;                  /* portable pinned buffer of `bytes` */
    cudaStream_t stream;            /* on the sender: the device-to-host halves, in the order the receiver takes them
                                     * (one stream per link: a shared one would add waits the plan does not have) */
    size_t bytes;
    cudaEvent_t staged;             /* on the sender: the device-to-host half is done */
    cudaEvent_t done;               /* on the receiver: the host-to-device half is done, `pinned` is free again */
} pipe_link_t;

typedef struct pipe {
    int p, micro, micro_batch, global_batch, steps_per_epoch;
    int run_steps;                      /* the steps an epoch runs: steps_per_epoch, or --steps where that caps it */
    unsigned long long seed;
    sched_t sched;
    int starts[SCHED_MAX_STAGES + 1];   /* stage s runs layers starts[s] .. starts[s+1]-1 */
    char split[64];                     /* "0,23,41": the row's split */
    double predicted_ms[SCHED_MAX_STAGES];  /* automatic split: each stage's measured segments, ms per micro-batch */
    double predicted_balance, block_balance;/* its slowest stage over the mean, and the best block cuts' (-1: none) */
    pipe_stage_t st[SCHED_MAX_STAGES];
    pipe_link_t link[SCHED_MAX_STAGES][SCHED_MAX_STAGES];   /* [from stage][to stage] */
    cudaEvent_t *step_events;           /* steps_per_epoch + 1 on stage 0: a step ends when every stage updated */
    int stride, n_timed, ops_per_stage; /* steps stride*k (k < n_timed) carry timing events; each has ops_per_stage
                                         * compute ops per stage (2 or, zero bubble, 3 per micro-batch) */
    double bytes_per_step;              /* activations, gradients and labels copied between GPUs per step */
    int use_graphs;                     /* forwards and backwards replayed from CUDA graphs (--cuda-graph) */
    int quiet;                          /* --micro-batches auto's probe: no per-epoch lines on stderr */
    struct trace *trace;                /* --trace recorder (ranges while trace->active), or NULL */
    int *d_step;                        /* stage 0: the step within the epoch, read by the captured gathers */
    loss_scale_cfg_t ls_cfg;            /* the loss scale's schedule (loss-scaled maths) */
    int ls_skipped;                     /* skipped steps as of the last epoch's end */
    int lm;                             /* a language model (GPT-2): its stages are units, its slots pipe_lm_run.c's */
} pipe_t;

/* ---- pipe_balance.c ---- */
/* Forward + backward milliseconds of each segment [pos[k], pos[k + 1]) (k < n_seg) of `model` at `batch` images on
 * g, run as a stage runs its layers: each segment's forward and backward captured into a CUDA graph and replayed, the
 * segments back to back on the stream, one graph launch's own stream time (calibrated) taken off each; the median of
 * a few repetitions after warm-up. split: the backward as the zero-bubble schedule runs it, every data part, then
 * every weight part. Allocates and frees a whole model on g: 0, or -1 when it does not fit. */
int pipe_measure_segments(gpu_t *g, const char *model, model_input_t in, int batch, const int *pos, int n_seg,
                          int split, double *seg_ms);
/* Host only, before any GPU is touched: checks the hand split in cfg (filling pp->starts) or, without one, that
 * pp->p valid stages fit the model's cut points. m: the model built at the micro-batch. 0, or -1 with a message. */
int pipe_check_split(pipe_t *pp, const run_cfg_t *cfg, const model_t *m, char *err, size_t errlen);
/* Without a hand split, balances the stages by segment times measured on stage 0's GPU and copy times between the
 * first two; prints the split with each stage's predicted time. 0, or -1 with a message (out of memory). */
int pipe_choose_split(pipe_t *pp, const run_cfg_t *cfg, const model_t *m, char *err, size_t errlen);

/* ---- pipe_run.c ---- */
/* One optimizer step: the plan's ops, the loss scale's check (pipe_scale_check), every stage's SGD, then every
 * stage waits for every update (and steps its loss scale's schedule) and stage 0 records the step's event. Launches
 * only: no host synchronisation. */
void pipe_step(pipe_t *pp, int step);
/* Test accuracy: the test set in micro-batch chunks through the stages (running BN statistics). Synchronises. */
double pipe_evaluate(pipe_t *pp);
/* Sets up the links between the stages that exchange data (peer access where both ways exist, unless
 * naive_path forces host staging). 0, or -1 with a message (NAIVE_PATH_P2P without peer access). */
int pipe_links_init(pipe_t *pp, int naive_path, char *err, size_t errlen);
void pipe_links_free(pipe_t *pp);

/* dst (on stage `to`) = src (on stage `from`), ordered on `on` (a stream of `to`'s GPU, timeline row `lane`) after
 * the events `wait`: a peer copy, or staged through the link's pinned buffer. what/mb name it in --trace. */
void pipe_xfer(pipe_t *pp, int from, int to, void *dst, const void *src, size_t bytes, cudaStream_t on, int lane,
               const cudaEvent_t *wait, int n_wait, const char *what, int mb);

/* ---- pipe_lm_run.c: a language model's stages (GPT-2 units, strategies/pipeline/pipe_lm.h), where pp->lm ---- */
/* The checks that need no GPU: the model's size and corpus, the math, the schedule (zero bubble needs backward's
 * data and weight parts apart, which GPT-2's layers do not offer), the split (pipe_lm_split: hand or by FLOPs) into
 * pp->starts and pp->split, the steps of an epoch. 0, or -1 with a message. */
int pipe_lm_check(pipe_t *pp, const run_cfg_t *cfg, char *err, size_t errlen);
/* Stage s on its GPU: its model and slots, its batch buffers, the corpus on stage 0, its optimizer. 0, or -1 with a
 * message (out of memory). */
int pipe_lm_alloc(pipe_t *pp, int s, const run_cfg_t *cfg, char *err, size_t errlen);
void pipe_lm_free(pipe_t *pp, int s);
/* The bytes of a micro-batch's residual stream (what crosses a cut) and of its targets (stage 0 to the last). */
size_t pipe_lm_act_bytes(const pipe_t *pp);
size_t pipe_lm_tgt_bytes(const pipe_t *pp);
/* The bytes of the tied token embedding's gradient, which the two ends exchange each step (p > 1). */
size_t pipe_lm_wte_bytes(const pipe_t *pp);
/* Op o's work on its stage's stream (what a graph captures): forward (stage 0 gathers the micro-batch first, the
 * last adds its loss to the epoch's) or backward. */
void pipe_lm_body(pipe_t *pp, const sched_op_t *o);
/* Copy ops: a micro-batch's activations (with its targets into the last stage), its gradient back. */
void pipe_lm_act(pipe_t *pp, const sched_op_t *o, const cudaEvent_t *wait);
void pipe_lm_grad(pipe_t *pp, const sched_op_t *o, const cudaEvent_t *wait);
/* After the step's ops, before any update: the tied token embedding's two parts summed on both ends, each stage's
 * squared gradient norm (the token embedding's once), and every stage's norm copied to every other. Then stage s's
 * update: the norms summed for the clipping, AdamW. Launches only. */
void pipe_lm_exchange(pipe_t *pp);
void pipe_lm_update(pipe_t *pp, int s);
/* The held-out loss: the held-out windows in micro-batch chunks through the stages. Synchronises. */
double pipe_lm_evaluate(pipe_t *pp);
/* The epoch's order on stage 0 and the loss sum zeroed; at its end the mean training loss. */
void pipe_lm_epoch_begin(pipe_t *pp, int epoch);
double pipe_lm_epoch_loss(pipe_t *pp);
/* The whole model's flat parameters (gpt2_layout's), assembled from the stages. Synchronises. */
void pipe_lm_params(pipe_t *pp, float *host);
size_t pipe_lm_n_params(const pipe_t *pp);
size_t pipe_lm_stage_act_bytes(const pipe_t *pp, int s);

/* ---- pipe_scale.c: fp16's loss scale over the stages (nothing where the math has none) ---- */
/* Stage s's loss scale at the schedule's start, bound to every slot's loss (after the slots are allocated). */
void pipe_scale_init(pipe_t *pp, int s, math_t math);
void pipe_scale_free(pipe_t *pp, int s);
/* After a step's backwards, before the updates: every stage checks its gradients, then takes every other stage's
 * found_inf (a 4-byte copy each) and combines them into its own, so every stage skips or steps alike. Launches
 * only. */
void pipe_scale_check(pipe_t *pp);
/* Stage s's schedule step, once every stage has updated (the stages' updates read the flags that it clears). */
void pipe_scale_advance(pipe_t *pp, int s);
/* At the epoch's end (after its synchronisation): stage 0's scale and the steps skipped since the last call into
 * out (left at -1 without a loss scale). */
void pipe_scale_epoch(pipe_t *pp, epoch_stats_t *out);

/* ---- pipe_timing.c: where a step goes on each stage (strategies/breakdown.h) ---- */
/* Creates / frees stage s's timing events (busy time, step window, incoming copies) for n_timed steps. */
void pipe_timing_init(pipe_t *pp, int s);
void pipe_timing_free(pipe_t *pp, int s);
/* The timed-step index of `step`, or -1: the pipe_mark_* calls below do nothing for -1. */
int pipe_timed(const pipe_t *pp, int step);
/* On stage s's compute stream: the begin (end = 0) or end of its compute op k of timed step t (k = ops_per_stage:
 * the update), or of the step's window (from the previous step's end, after every stage's update, to this one's). */
void pipe_mark_busy(pipe_t *pp, int s, int t, int k, int end);
void pipe_mark_window(pipe_t *pp, int s, int t, int end);
/* Around copy op o (activations or gradients into o's stage) of timed step t, on the stream it arrives on; the
 * begin waits for the sender's events `wait` first, so it marks when the data could start to move. */
void pipe_mark_copy(pipe_t *pp, const sched_op_t *o, int t, int end, const cudaEvent_t *wait, int n_wait);
/* After the epoch's synchronisation: stage_busy_ms (forward + backward per stage), bubble and bubble_ideal, and
 * compute / exposed / idle of the stage with the most compute (every stage's on stderr). Returns the mean step. */
double pipe_timing_epoch(pipe_t *pp, int steps, epoch_stats_t *out);

/* ---- pipeline.c: for tests ---- */
/* The whole flat parameter buffer (n_params_all floats) assembled from the stages' slices. Synchronises. */
void pipeline_download_params(pipe_t *pp, float *host);
/* Device memory stage s's GPU holds for this run, in MiB, and the bytes of its activation slots. */
double pipeline_stage_mem_mb(const pipe_t *pp, int s);
size_t pipeline_act_bytes(const pipe_t *pp, int s);
