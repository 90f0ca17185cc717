/* replica.c — a model replica on one GPU: data gather, forward, loss, backward, SGD, evaluation and timing.
 * Loss and accuracy stay on the GPU until epoch end, so the only host synchronisation is once per epoch. */
#include "replica.h"
#include "check.h"
#include "nvtx.h"
#include "sgd.h"
#include "loss_scale_gpu.h"
#include "trace.h"
#include "timing.h"
#include "knob.h"
#include "layers/softmax_xent.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int replica_init(replica_t *r, int device, const char *model, int shard_batch, int global_batch, math_t math,
                 gpu_setup_t setup, init_t init, unsigned long long seed, const optim_cfg_t *optim, float momentum,
                 float weight_decay, const idx_dataset_t *data, char *err, size_t errlen) {
    memset(r, 0, sizeof *r);
    r->mem_base = gpu_mem_baseline(device);
    r->shard_batch = shard_batch;
    r->global_batch = global_batch;
    r->steps_per_epoch = data->train.n / global_batch;
    if (r->steps_per_epoch < 1) {
        snprintf(err, errlen, "global batch %d is larger than the %d training images", global_batch, data->train.n);
        return -1;
    }
    r->seed = seed;
    gpu_init(&r->gpu, device, math);
    r->gpu.setup = setup;
    if (model_build_input(&r->model, model, shard_batch, model_input_of(data)) != 0) {
        snprintf(err, errlen, "unknown model \"%s\"", model);
        return -1;
    }
    dataset_upload(&r->data, data);
    if (model_alloc(&r->model, &r->gpu) != 0) {
        if (r->model.mem_need)
            snprintf(err, errlen, "out of memory: %s at %d images per GPU needs at least %.0f MiB on GPU %d "
                     "(%.0f MiB of activations), %.0f MiB free", model, shard_batch, r->model.mem_need / 1048576.0,
                     device, (double)r->model.act_bytes / 1048576.0, r->model.mem_free / 1048576.0);
        else
            snprintf(err, errlen, "out of memory: %s at %d images per GPU needs %.0f MiB of activations on GPU %d",
                     model, shard_batch, (double)r->model.act_bytes / (1024.0 * 1024.0), device);
        return -1;
    }
    model_init_params(&r->model, init, seed);
    /* The schedule's epoch is the steps the harness runs of one (--steps caps it). */
    long spe = optim->steps_cap > 0 && optim->steps_cap < r->steps_per_epoch ? optim->steps_cap : r->steps_per_epoch;
    if (optim_init(&r->opt, optim->kind, momentum, weight_decay, &optim->sched, spe, &r->model, err, errlen) != 0)
        return -1;
    r->gns_every = optim->gns_every;
    if (r->gns_every > 0 && gpu_try_malloc((void **)&r->d_gns, 4 * sizeof(double)) != 0) {
        snprintf(err, errlen, "out of memory: the noise scale's sums");
        return -1;
    }
    if (math_loss_scaled(math)) {
        r->ls_cfg = loss_scale_torch();
        r->ls = loss_scale_alloc(r->ls_cfg, r->gpu.stream);
        r->model.loss_scale = &r->ls->scale;
    }
    replica_set_update_grads(r, r->model.grads, DTYPE_FP32);
    replica_set_update_slice(r, 0, r->model.n_params);
    r->step_events = calloc((size_t)r->steps_per_epoch + 1, sizeof(cudaEvent_t));
    if (!r->step_events) { snprintf(err, errlen, "out of host memory"); return -1; }
    for (int i = 0; i <= r->steps_per_epoch; i++) CHECK_CUDA(cudaEventCreate(&r->step_events[i]));
    CHECK_ALLOC(cudaMalloc((void **)&r->d_step, sizeof(int)));
    CHECK_CUDA(cudaMemset(r->d_step, 0, sizeof(int)));
    CHECK_CUDA(cudaDeviceSynchronize());
    return 0;
}

void replica_set_update_grads(replica_t *r, const void *grads, dtype_t t) {
    r->update_grads = grads;
    r->update_grad_dtype = t;
}

int replica_wgrad_direct(void) {
    return knob_get(KNOB_WGRAD) == 0;   /* direct */
}

int replica_bind_lp_grads(replica_t *r, char *err, size_t errlen) {
    model_t *m = &r->model;
    if (!dtype_is_low(m->act_dtype) || r->grads_lp) return 0;
    if (r->update_grads != m->grads)
        check_fail(__FILE__, __LINE__, "replica_bind_lp_grads", "the update reads another buffer than the model's");
    size_t ranges[2 * (MODEL_MAX_LAYERS + 1)], lp_bytes = m->n_params * dtype_size(m->act_dtype);
    CHECK_CUDA(cudaSetDevice(r->gpu.device));
    if (gpu_try_malloc(&r->grads_lp, lp_bytes) != 0) {
        snprintf(err, errlen, "out of memory: the 2-byte filter gradients of %s need %.0f MiB more on GPU %d "
                 "(SCALING_WGRAD=widen does without)", m->name, lp_bytes / 1048576.0, r->gpu.device);
        return -1;
    }
    /* Each gradient is written in one of the two buffers only: the other's element stays the zero set here. */
    CHECK_CUDA(cudaMemsetAsync(r->grads_lp, 0, lp_bytes, r->gpu.stream));
    CHECK_CUDA(cudaMemsetAsync(m->grads, 0, m->n_params * sizeof(float), r->gpu.stream));
    if (model_bind_grads_lp(m, r->grads_lp, ranges, MODEL_MAX_LAYERS + 1) < 0)
        check_fail(__FILE__, __LINE__, "replica_bind_lp_grads", "more fp32 parts than room for them");
    return 0;
}

void replica_set_update_slice(replica_t *r, size_t first, size_t count) {
    if (first > r->model.n_params || count > r->model.n_params - first)
        check_fail(__FILE__, __LINE__, "replica_set_update_slice", "slice outside the flat buffers");
    if (r->ls && (first != 0 || count != r->model.n_params))
        check_fail(__FILE__, __LINE__, "replica_set_update_slice", "a loss-scaled update stepped in slices");
    r->update_first = first;
    r->update_count = count;
}

void replica_sgd_slice(replica_t *r, size_t first, size_t count, cudaStream_t stream) {
    model_t *m = &r->model;
    if (first > m->n_params || count > m->n_params - first)
        check_fail(__FILE__, __LINE__, "replica_sgd_slice", "slice outside the flat buffers");
    const void *g = (const char *)r->update_grads + first * dtype_size(r->update_grad_dtype);
    const void *g2 = r->grads_lp ? (const char *)r->grads_lp + first * dtype_size(m->act_dtype) : NULL;
    optim_update(&r->opt, m, first, count, g, r->update_grad_dtype, g2, r->ls, stream);
}

void replica_epoch_begin(replica_t *r, int epoch) {
    CHECK_CUDA(cudaSetDevice(r->gpu.device));
    CHECK_CUDA(cudaEventRecord(r->step_events[0], r->gpu.stream));
    dataset_shuffle(&r->data, r->seed, epoch, r->gpu.stream);
    CHECK_CUDA(cudaMemsetAsync(r->model.acc, 0, 2 * sizeof(double), r->gpu.stream));
    CHECK_CUDA(cudaMemsetAsync(r->d_step, 0, sizeof(int), r->gpu.stream));
    if (r->d_gns) CHECK_CUDA(cudaMemsetAsync(r->d_gns, 0, 4 * sizeof(double), r->gpu.stream));
    r->gns_n = 0;
}

/* The step's rate first: every update of the step, on any stream, comes after its forward. */
static void seg_gather_forward(replica_t *r, const void *shard) {
    model_t *m = &r->model;
    int offset = *(const int *)shard * r->shard_batch;
    optim_begin_step(&r->opt, r->gpu.stream);
    dataset_gather_train_at(&r->data, r->d_step, r->global_batch, offset, r->shard_batch, m->tensors[m->input].val,
                            m->act_dtype, m->labels, r->gpu.stream);
    model_forward(m, &r->gpu, 1);
}

void replica_seg_forward(replica_t *r, const void *shard) {
    seg_gather_forward(r, shard);
    model_loss(&r->model, &r->gpu, r->shard_batch, 1.0f / (float)r->global_batch, 1);
}

void replica_seg_backward(replica_t *r, const void *range) {
    const int *lh = range;
    nvtx_push("backward gpu%d", r->gpu.device);
    model_backward_range(&r->model, &r->gpu, lh[0], lh[1], 0.0f);
    nvtx_pop();
}

void replica_seg_update(replica_t *r, const void *unused) {
    (void)unused;
    nvtx_push("optimizer gpu%d", r->gpu.device);
    if (r->ls) loss_scale_check(r->ls, r->update_grads, r->update_grad_dtype, r->model.n_params, r->gpu.stream);
    if (r->ls && r->grads_lp)   /* the convolutions' gradients, read beside the others (replica_bind_lp_grads) */
        loss_scale_check(r->ls, r->grads_lp, r->model.act_dtype, r->model.n_params, r->gpu.stream);
    replica_sgd_slice(r, r->update_first, r->update_count, r->gpu.stream);
    if (r->ls) loss_scale_advance(r->ls, r->ls_cfg, r->gpu.stream);
    nvtx_pop();
    dataset_step_advance(r->d_step, r->gpu.stream);
}

/* graph_seg_run's callback shape for a segment body. */
typedef struct {
    replica_t *r;
    void (*fn)(replica_t *r, const void *arg);
} seg_call_t;

static void seg_call_(void *ctx, const void *arg) {
    const seg_call_t *c = ctx;
    c->fn(c->r, arg);
}

void replica_run_segment(replica_t *r, int slot, void (*fn)(replica_t *r, const void *arg), const void *arg) {
    if (slot < 0 || slot >= REPLICA_MAX_SEGMENTS) check_fail(__FILE__, __LINE__, "replica_run_segment", "bad slot");
    CHECK_CUDA(cudaSetDevice(r->gpu.device));
    seg_call_t c = {r, fn};
    graph_seg_run(&r->seg[slot], r->gpu.stream, r->use_graphs, seg_call_, &c, arg);
}

static void seg_whole_step(replica_t *r, const void *unused) {
    static const int shard0 = 0;
    int range[2] = {0, r->model.n_layers};
    (void)unused;
    replica_seg_forward(r, &shard0);
    replica_seg_backward(r, range);
    replica_seg_update(r, NULL);
}

void replica_update_sumsq(replica_t *r, double *acc) {
    optim_sumsq(r->update_grads, r->update_grad_dtype, r->grads_lp, r->model.act_dtype, r->model.n_params, r->ls, acc,
                r->gpu.stream);
}

/* The noise scale's step. Backward is linear in the loss's gradient, so the first half's gradient is backward of a
 * loss gradient zero on the second half's rows (softmax_xent's padding rows), scaled as the mean over the half; its
 * loss sums go to the scratch d_gns[2..3], not the epoch's. Batch norm still normalises over the whole shard: the
 * half's gradient is of the same network the step trains, which is what the estimate compares. */
static void seg_gns_step(replica_t *r, const void *unused) {
    static const int shard0 = 0;
    int range[2] = {0, r->model.n_layers}, half = r->shard_batch / 2;
    model_t *m = &r->model;
    (void)unused;
    seg_gather_forward(r, &shard0);
    tensor_t *t = &m->tensors[m->logits];
    softmax_xent(t->val, m->labels, t->grad, m->act_dtype, m->batch, half, m->classes, 1.0f / (float)half,
                 m->loss_scale, r->d_gns + 2, r->gpu.stream);
    replica_seg_backward(r, range);
    replica_update_sumsq(r, r->d_gns);
    model_loss(m, &r->gpu, r->shard_batch, 1.0f / (float)r->global_batch, 1);
    replica_seg_backward(r, range);
    replica_update_sumsq(r, r->d_gns + 1);
    replica_seg_update(r, NULL);
}

int replica_gns_due(const replica_t *r) { return r->gns_every > 0 && r->steps % r->gns_every == 0; }

void replica_step_graphed(replica_t *r, int step) {
    if (replica_gns_due(r)) {
        replica_run_segment(r, REPLICA_SEG_GNS, seg_gns_step, NULL);
        r->gns_n++;
    } else replica_run_segment(r, REPLICA_SEG_STEP, seg_whole_step, NULL);
    r->steps++;
    replica_mark_step(r, step);
}

void replica_run_traced(replica_t *r, const char *name, int slot, void (*fn)(replica_t *r, const void *arg),
                        const void *arg) {
    int k = trace_begin(r->trace, r->gpu.device, TRACE_COMPUTE, r->gpu.stream, name);
    replica_run_segment(r, slot, fn, arg);
    trace_end(r->trace, k, r->gpu.stream);
}

void replica_step_traced(replica_t *r, int step) {
    static const int shard0 = 0;
    r->steps++;
    int range[2] = {0, r->model.n_layers};
    trace_origin(r->trace, r->gpu.device, r->gpu.stream);
    replica_run_traced(r, "forward", REPLICA_SEG_FORWARD, replica_seg_forward, &shard0);
    replica_run_traced(r, "backward", REPLICA_SEG_BACKWARD, replica_seg_backward, range);
    replica_run_traced(r, "update", REPLICA_SEG_UPDATE, replica_seg_update, NULL);
    replica_mark_step(r, step);
}

void replica_mark_step(replica_t *r, int step) {
    CHECK_CUDA(cudaSetDevice(r->gpu.device));
    CHECK_CUDA(cudaEventRecord(r->step_events[step + 1], r->gpu.stream));
}

void replica_epoch_end(replica_t *r, int steps, double *epoch_s, double *median_step_ms, double *loss, double *acc) {
    CHECK_CUDA(cudaSetDevice(r->gpu.device));
    CHECK_CUDA(cudaEventSynchronize(r->step_events[steps]));
    *epoch_s = timing_ms(r->step_events[0], r->step_events[steps]) / 1000.0;
    *median_step_ms = timing_median_step_ms(r->step_events, steps);
    double h[2];
    CHECK_CUDA(cudaMemcpy(h, r->model.acc, sizeof h, cudaMemcpyDeviceToHost));
    double images = (double)steps * r->shard_batch;
    *loss = h[0] / images;
    *acc = h[1] / images;
}

double replica_lr_now(replica_t *r) {
    CHECK_CUDA(cudaSetDevice(r->gpu.device));
    return optim_lr_read(&r->opt, r->gpu.stream);
}

int replica_gns_sums(replica_t *r, double sums[2]) {
    sums[0] = sums[1] = 0;
    if (!r->d_gns || !r->gns_n) return 0;
    CHECK_CUDA(cudaSetDevice(r->gpu.device));
    CHECK_CUDA(cudaMemcpy(sums, r->d_gns, 2 * sizeof(double), cudaMemcpyDeviceToHost));
    return r->gns_n;
}

void replica_epoch_gns_halves(replica_t *r, double *small_sq, double *big_sq, int *b_small, int *b_big) {
    double h[2];
    int n = replica_gns_sums(r, h);
    *small_sq = *big_sq = -1;
    *b_small = *b_big = -1;
    if (!n) return;
    *small_sq = h[0] / n;
    *big_sq = h[1] / n;
    *b_small = r->shard_batch / 2;
    *b_big = r->shard_batch;
}

void replica_loss_scale_read(replica_t *r, double *scale, int *skipped) {
    *scale = -1;
    *skipped = -1;
    if (!r->ls) return;
    CHECK_CUDA(cudaSetDevice(r->gpu.device));
    loss_scale_t h = loss_scale_read(r->ls, r->gpu.stream);
    *scale = h.scale;
    *skipped = h.skipped - r->ls_skipped;
    r->ls_skipped = h.skipped;
}

double replica_evaluate(replica_t *r) {
    model_t *m = &r->model;
    CHECK_CUDA(cudaSetDevice(r->gpu.device));
    nvtx_push("evaluate gpu%d", r->gpu.device);
    CHECK_CUDA(cudaMemsetAsync(m->acc, 0, 2 * sizeof(double), r->gpu.stream));
    int n = r->data.n_test;
    for (int first = 0; first < n; first += m->batch) {
        int valid = n - first < m->batch ? n - first : m->batch;
        dataset_gather_test(&r->data, first, m->batch, m->tensors[m->input].val, m->act_dtype, m->labels,
                            r->gpu.stream);
        model_forward(m, &r->gpu, 0);
        model_loss(m, &r->gpu, valid, 1.0f, 0);
    }
    double h[2];
    CHECK_CUDA(cudaMemcpyAsync(h, m->acc, sizeof h, cudaMemcpyDeviceToHost, r->gpu.stream));
    CHECK_CUDA(cudaStreamSynchronize(r->gpu.stream));
    nvtx_pop();
    return h[1] / n;
}

double replica_mem_mb(const replica_t *r) {
    return (double)(gpu_mem_used(&r->gpu) - r->mem_base) / (1024.0 * 1024.0);
}

void replica_free(replica_t *r) {
    if (!r->gpu.stream) return;
    CHECK_CUDA(cudaSetDevice(r->gpu.device));
    CHECK_CUDA(cudaDeviceSynchronize());
    for (int i = 0; r->step_events && i <= r->steps_per_epoch; i++) CHECK_CUDA(cudaEventDestroy(r->step_events[i]));
    free(r->step_events);
    for (int i = 0; i < REPLICA_MAX_SEGMENTS; i++) graph_seg_free(&r->seg[i]);
    if (r->d_step) CHECK_CUDA(cudaFree(r->d_step));
    if (r->d_gns) CHECK_CUDA(cudaFree(r->d_gns));
    optim_free(&r->opt);
    loss_scale_free(r->ls);
    if (r->grads_lp) CHECK_CUDA(cudaFree(r->grads_lp));
    model_free(&r->model);
    dataset_free(&r->data);
    gpu_free(&r->gpu);
    memset(r, 0, sizeof *r);
}
