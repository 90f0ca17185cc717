/* gpt2_train.cu — one GPU training GPT-2 on a token corpus (gpt2_train.h): the windows gathered on the GPU at a
 * device step counter, so the step (whole, or in its pieces) is a launch sequence CUDA graphs capture and replay. */
#include "gpt2_train.h"
#include "../check.h"
#include "../launch.h"
#include "../timing.h"
#include "../convert.h"
#include "../reduce.h"
#include "../trace.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---- kernels

/* After a training step: its mean loss into the epoch's sum, and the step counter on. */
__global__ void step_done_kernel(const float *loss, double *sum, int *step) {
    *sum += (double)*loss;
    *step += 1;
}


// ---- launchers

/* The pieces' launches, each the same every step (the windows come from d_step): what the graphs capture. */
static void forward_seg(void *ctx, const void *arg) {
    (void)arg;
    gpt2_train_t *g = (gpt2_train_t *)ctx;
    gpt2_data_train(&g->data, g->d_step, g->m.grad_B, g->first, g->m.B, g->d_tok, g->d_tgt, g->gpu.stream);
    gpt2_model_forward(&g->m, g->d_tok, g->d_tgt, 1, g->gpu.stream);
}

static void backward_seg(void *ctx, const void *arg) {
    gpt2_train_t *g = (gpt2_train_t *)ctx;
    const int *units = (const int *)arg;
    gpt2_model_backward_units(&g->m, g->d_tok, units[0], units[1], g->gpu.stream);
}

static void update_seg(void *ctx, const void *arg) {
    (void)arg;
    gpt2_train_t *g = (gpt2_train_t *)ctx;
    cudaStream_t s = g->gpu.stream;
    if (g->update_wire) {
        if (g->wire_round) reduce_cast((void *)g->update_wire, g->wire_t, g->m.grads, g->m.n_params, s);
        convert_acc_f32(g->m.grads, g->update_wire, g->wire_t, g->m.n_params, 0.0f, s);
    }
    gpt2_model_update(&g->m, &g->opt, s);
    step_done_kernel<<<1, 1, 0, s>>>(g->m.loss, g->d_loss, g->d_step);
    CHECK_LAUNCH();
}

static void train_step_seg(void *ctx, const void *arg) {
    gpt2_train_t *g = (gpt2_train_t *)ctx;
    int units[2] = {0, GPT2_UNITS(g->m.shape.layers)};
    forward_seg(ctx, arg);
    backward_seg(ctx, units);
    update_seg(ctx, arg);
}

int gpt2_train_init(gpt2_train_t *g, int device, const char *size, int B, int global_B, int first, math_t math,
                    const optim_cfg_t *o, float weight_decay, const tokens_corpus_t *corpus, unsigned long long seed,
                    char *err, size_t errlen) {
    memset(g, 0, sizeof *g);
    const gpt2_shape_t *sh = gpt2_shape(size);
    if (!sh) { snprintf(err, errlen, "GPT-2 has no size \"%s\"", size ? size : "(none)"); return -1; }
    if (math_loss_scaled(math)) { snprintf(err, errlen, "GPT-2 trains in fp32, tf32 or bf16, not fp16"); return -1; }
    if (corpus->T < 1 || corpus->T > sh->context) {
        snprintf(err, errlen, "sequences of %d tokens: GPT-2 %s's context is %d", corpus->T, size, sh->context);
        return -1;
    }
    if (B < 1 || first < 0 || first + B > global_B) {
        snprintf(err, errlen, "rows [%d, %d) are not a shard of a global batch of %d", first, first + B, global_B);
        return -1;
    }
    g->mem_base = gpu_mem_baseline(device);
    const int T = corpus->T;
    g->first = first;
    g->seed = seed;
    int windows = tokens_corpus_windows(&corpus->train, T);
    g->steps_per_epoch = windows / global_B;
    if (g->steps_per_epoch < 1) {
        snprintf(err, errlen, "batch %d is larger than the %d training windows of %d tokens", global_B, windows, T);
        return -1;
    }
    /* The corpus's vocabulary where it is larger than the shape's: a model's head must have a row per token. */
    gpt2_shape_t s = gpt2_shape_for_vocab(sh, (int)corpus->train.vocab);
    gpu_init(&g->gpu, device, math);
    const gpt2_adamw_cfg_t adamw = GPT2_ADAMW_RECIPE(weight_decay);
    dtype_t t = math_act_dtype(math);
    if (gpt2_model_init(&g->m, &s, B, T, t, t == DTYPE_FP32 && !MATH_INFO[math].strict, &g->gpu, &adamw, err,
                        errlen) != 0)
        return -1;
    g->m.grad_B = global_B;
    gpt2_model_init_params(&g->m, seed, g->gpu.stream);
    /* The schedule's epoch is the steps the harness runs of one (--steps caps it). */
    long spe = o->steps_cap > 0 && o->steps_cap < g->steps_per_epoch ? o->steps_cap : g->steps_per_epoch;
    if (optim_init(&g->opt, OPTIM_ADAMW, 0.0f, weight_decay, &o->sched, spe, NULL, err, errlen) != 0) return -1;
    if (gpt2_data_init(&g->data, device, corpus, err, errlen)) return -1;
    g->step_events = (cudaEvent_t *)calloc((size_t)g->steps_per_epoch + 1, sizeof(cudaEvent_t));
    g->n_pieces = 2 + GPT2_UNITS(s.layers);
    g->pieces = (graph_seg_t *)calloc((size_t)g->n_pieces, sizeof(graph_seg_t));
    g->piece_units = (int *)malloc(2 * (size_t)GPT2_UNITS(s.layers) * sizeof(int));   /* a backward piece's two */
    if (!g->step_events || !g->pieces || !g->piece_units) { snprintf(err, errlen, "out of host memory"); return -1; }
    for (int k = 0; k < 2 * GPT2_UNITS(s.layers); k++) g->piece_units[k] = -1;
    size_t tok_bytes = (size_t)B * T * sizeof(int);
    if (gpu_try_malloc((void **)&g->d_tok, tok_bytes) || gpu_try_malloc((void **)&g->d_tgt, tok_bytes) ||
        gpu_try_malloc((void **)&g->d_step, sizeof(int)) || gpu_try_malloc((void **)&g->d_loss, 2 * sizeof(double))) {
        snprintf(err, errlen, "out of memory: the batch's %zu bytes of tokens", 2 * tok_bytes);
        return -1;
    }
    for (int i = 0; i <= g->steps_per_epoch; i++) CHECK_CUDA(cudaEventCreate(&g->step_events[i]));
    CHECK_CUDA(cudaDeviceSynchronize());
    return 0;
}

void gpt2_train_epoch_begin(gpt2_train_t *g, int epoch) {
    CHECK_CUDA(cudaSetDevice(g->gpu.device));
    gpt2_data_epoch(&g->data, g->seed, epoch, g->gpu.stream);
    CHECK_CUDA(cudaMemsetAsync(g->d_step, 0, sizeof(int), g->gpu.stream));
    CHECK_CUDA(cudaMemsetAsync(g->d_loss, 0, 2 * sizeof(double), g->gpu.stream));
    CHECK_CUDA(cudaEventRecord(g->step_events[0], g->gpu.stream));
}

void gpt2_train_step(gpt2_train_t *g, int step) {
    CHECK_CUDA(cudaSetDevice(g->gpu.device));
    if (g->trace && g->trace->active) {   /* the few traced steps: the same launches, in ranges */
        trace_origin(g->trace, g->gpu.device, g->gpu.stream);
        gpt2_train_forward(g);
        gpt2_train_backward(g, 0, 0, GPT2_UNITS(g->m.shape.layers));
        gpt2_train_update(g);
    } else {
        graph_seg_run(&g->seg, g->gpu.stream, g->use_graph, train_step_seg, g, NULL);
    }
    gpt2_train_mark_step(g, step);
}

void gpt2_train_set_update_grads(gpt2_train_t *g, const void *wire, dtype_t t, int round) {
    g->update_wire = wire;
    g->wire_t = t;
    g->wire_round = round;
}

/* Piece k of the pieces (its graph), inside a --trace range named `name` while the trace is active. */
static void run_piece(gpt2_train_t *g, int k, const char *name, void (*fn)(void *, const void *), const void *arg) {
    CHECK_CUDA(cudaSetDevice(g->gpu.device));
    int tr = trace_begin(g->trace, g->gpu.device, TRACE_COMPUTE, g->gpu.stream, name);
    graph_seg_run(&g->pieces[k], g->gpu.stream, g->use_graph, fn, g, arg);
    trace_end(g->trace, tr, g->gpu.stream);
}

void gpt2_train_forward(gpt2_train_t *g) { run_piece(g, 0, "forward", forward_seg, NULL); }

void gpt2_train_backward(gpt2_train_t *g, int k, int lo, int hi) {
    if (k < 0 || 2 + k >= g->n_pieces) check_fail(__FILE__, __LINE__, "gpt2_train_backward", "no such piece");
    int *units = &g->piece_units[2 * k];
    if (units[0] < 0) units[0] = lo, units[1] = hi;
    if (units[0] != lo || units[1] != hi)
        check_fail(__FILE__, __LINE__, "gpt2_train_backward", "a piece asked for other units than it first ran");
    char name[32] = "";   /* a range's name, only while tracing: not a format call per piece per step */
    if (g->trace && g->trace->active) snprintf(name, sizeof name, "backward %d", k);
    run_piece(g, 2 + k, name, backward_seg, units);
}

void gpt2_train_update(gpt2_train_t *g) { run_piece(g, 1, "update", update_seg, NULL); }

void gpt2_train_mark_step(gpt2_train_t *g, int step) {
    CHECK_CUDA(cudaSetDevice(g->gpu.device));
    CHECK_CUDA(cudaEventRecord(g->step_events[step + 1], g->gpu.stream));
}

void gpt2_train_epoch_end(gpt2_train_t *g, int steps, double *epoch_s, double *step_ms, double *loss) {
    CHECK_CUDA(cudaSetDevice(g->gpu.device));
    CHECK_CUDA(cudaEventSynchronize(g->step_events[steps]));
    *epoch_s = timing_ms(g->step_events[0], g->step_events[steps]) / 1000.0;
    *step_ms = timing_median_step_ms(g->step_events, steps);
    double sum;
    CHECK_CUDA(cudaMemcpy(&sum, g->d_loss, sizeof sum, cudaMemcpyDeviceToHost));
    *loss = steps > 0 ? sum / steps : -1;
}

double gpt2_train_evaluate(gpt2_train_t *g) {
    CHECK_CUDA(cudaSetDevice(g->gpu.device));
    cudaStream_t s = g->gpu.stream;
    CHECK_CUDA(cudaMemsetAsync(g->d_loss, 0, 2 * sizeof(double), s));
    for (long long first = 0; first < g->data.n_val; first += g->m.B) {
        gpt2_data_val(&g->data, first, g->m.B, g->d_tok, g->d_tgt, s);
        gpt2_model_forward(&g->m, g->d_tok, g->d_tgt, 0, s);
        gpt2_model_loss_add(&g->m, g->d_loss, s);
    }
    double h[2];
    CHECK_CUDA(cudaMemcpyAsync(h, g->d_loss, sizeof h, cudaMemcpyDeviceToHost, s));
    CHECK_CUDA(cudaStreamSynchronize(s));
    return h[1] > 0 ? h[0] / h[1] : -1;
}

double gpt2_train_lr_now(gpt2_train_t *g) {
    CHECK_CUDA(cudaSetDevice(g->gpu.device));
    return optim_lr_read(&g->opt, g->gpu.stream);
}

double gpt2_train_mem_mb(const gpt2_train_t *g) {
    return (double)(gpu_mem_used(&g->gpu) - g->mem_base) / (1024.0 * 1024.0);
}

size_t gpt2_train_params(gpt2_train_t *g, float *host, size_t max) {
    return gpu_params_download(&g->gpu, g->m.params, g->m.n_params, host, max);
}

void gpt2_train_free(gpt2_train_t *g) {
    if (!g->gpu.stream) {   /* gpu_init never ran: nothing on a device */
        gpt2_data_free(&g->data);
        return;
    }
    CHECK_CUDA(cudaSetDevice(g->gpu.device));
    CHECK_CUDA(cudaStreamSynchronize(g->gpu.stream));
    graph_seg_free(&g->seg);
    for (int k = 0; g->pieces && k < g->n_pieces; k++) graph_seg_free(&g->pieces[k]);
    free(g->pieces);
    free(g->piece_units);
    for (int i = 0; g->step_events && i <= g->steps_per_epoch; i++)
        if (g->step_events[i]) CHECK_CUDA(cudaEventDestroy(g->step_events[i]));
    free(g->step_events);
    gpt2_data_free(&g->data);
    void *bufs[] = {g->d_tok, g->d_tgt, g->d_step, g->d_loss};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i]) CHECK_CUDA(cudaFree(bufs[i]));
    if (g->opt.table) optim_free(&g->opt);
    if (g->m.slices) gpt2_model_free(&g->m);
    gpu_free(&g->gpu);
    memset(g, 0, sizeof *g);
}
