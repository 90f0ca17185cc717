/* pipe_balance.c — where the pipeline's stages start: each layer's forward and backward time measured on one GPU
 * at the micro-batch size, then the valid cuts that minimise the slowest stage (partition.c), or a hand split. */
#include "pipeline.h"
#include "partition.h"
#include "../engine/split.h"
#include "../engine/check.h"
#include "../engine/nvtx.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BALANCE_WARMUP 2
#define BALANCE_REPS 5

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void pipe_measure_layers(gpu_t *g, const char *model, model_input_t in, int batch, double *cost_ms, int n_layers) {
    model_t *m = calloc(1, sizeof *m);
    cudaEvent_t *ev = calloc(2 * (size_t)n_layers + 2, sizeof *ev);
    double *t = calloc((size_t)n_layers * BALANCE_REPS, sizeof *t);
    if (!m || !ev || !t) check_fail(__FILE__, __LINE__, "calloc", "out of host memory");
    CHECK_CUDA(cudaSetDevice(g->device));
    nvtx_push("pipeline balance: layer times gpu%d", g->device);
    if (model_build_input(m, model, batch, in) != 0 || m->n_layers != n_layers)
        check_fail(__FILE__, __LINE__, "model_build", "the model to measure differs from the one to split");
    if (model_alloc(m, g) != 0)
        check_fail(__FILE__, __LINE__, "model_alloc", "out of memory measuring layer times at the micro-batch size");
    /* Activations and gradients hold model_alloc's uniform fill: kernels run at their real cost on non-zero data. */
    for (int i = 0; i < 2 * n_layers + 2; i++) CHECK_CUDA(cudaEventCreate(&ev[i]));
    for (int r = 0; r < BALANCE_WARMUP + BALANCE_REPS; r++) {
        /* ev[i]: before layer i's forward (ev[n]: after the last); ev[n + 1 + i]: after layer i's backward, which
         * runs from the last layer down, so layer i's backward lies between ev[n + 2 + i] (or ev[n]) and it. */
        for (int i = 0; i < n_layers; i++) {
            CHECK_CUDA(cudaEventRecord(ev[i], g->stream));
            m->layers[i].ops->forward(&m->layers[i], g, 1);
        }
        CHECK_CUDA(cudaEventRecord(ev[n_layers], g->stream));
        for (int i = n_layers - 1; i >= 0; i--) {
            m->layers[i].ops->backward(&m->layers[i], g, 0.0f);
            CHECK_CUDA(cudaEventRecord(ev[n_layers + 1 + i], g->stream));
        }
        CHECK_CUDA(cudaStreamSynchronize(g->stream));
        if (r < BALANCE_WARMUP) continue;
        for (int i = 0; i < n_layers; i++) {
            float f = 0, b = 0;
            CHECK_CUDA(cudaEventElapsedTime(&f, ev[i], ev[i + 1]));
            cudaEvent_t before = i == n_layers - 1 ? ev[n_layers] : ev[n_layers + 2 + i];
            CHECK_CUDA(cudaEventElapsedTime(&b, before, ev[n_layers + 1 + i]));
            t[(size_t)i * BALANCE_REPS + (r - BALANCE_WARMUP)] = (double)f + (double)b;
        }
    }
    for (int i = 0; i < n_layers; i++) {
        qsort(t + (size_t)i * BALANCE_REPS, BALANCE_REPS, sizeof *t, cmp_double);
        cost_ms[i] = t[(size_t)i * BALANCE_REPS + BALANCE_REPS / 2];
    }
    for (int i = 0; i < 2 * n_layers + 2; i++) CHECK_CUDA(cudaEventDestroy(ev[i]));
    model_free(m);
    nvtx_pop();
    free(m);
    free(ev);
    free(t);
}

int pipe_check_split(pipe_t *pp, const run_cfg_t *cfg, const model_t *m, char *err, size_t errlen) {
    int cuts[MODEL_MAX_LAYERS];
    int n_cuts = model_cut_points(m, cuts);
    const char *labels[MODEL_MAX_LAYERS];
    for (int i = 0; i < m->n_layers; i++) labels[i] = m->layers[i].label;
    pp->starts[0] = 0;
    pp->starts[pp->p] = m->n_layers;
    if (cfg->split)
        return split_check(cfg->split, cfg->n_split, m->n_layers, cuts, n_cuts, pp->p, labels, pp->starts, err, errlen);
    return split_feasible(pp->p, m->n_layers, n_cuts, err, errlen);
}

void pipe_choose_split(pipe_t *pp, const run_cfg_t *cfg, const model_t *m) {
    double cost[MODEL_MAX_LAYERS];
    int measured = !cfg->split && pp->p > 1;
    if (measured) {
        int cuts[MODEL_MAX_LAYERS];
        int n_cuts = model_cut_points(m, cuts);
        char err[256];
        pipe_measure_layers(&pp->st[0].gpu, cfg->model, model_input_of(cfg->data), pp->micro_batch, cost, m->n_layers);
        /* Feasibility was checked before any GPU was touched: balancing cannot fail here. */
        if (partition_balance(cost, m->n_layers, cuts, n_cuts, pp->p, pp->starts, err, sizeof err) != 0)
            check_fail(__FILE__, __LINE__, "partition_balance", err);
    }
    pp->starts[pp->p] = m->n_layers;
    partition_format(pp->starts, pp->p, pp->split, sizeof pp->split);
    fprintf(stderr, "pipeline: split %s (%s) of %s at micro-batch %d:", pp->split,
            cfg->split ? "--split" : measured ? "balanced by measured layer times" : "one stage", m->name,
            pp->micro_batch);
    for (int s = 0; s < pp->p; s++) {
        int a = pp->starts[s], b = pp->starts[s + 1];
        fprintf(stderr, "%s stage %d on GPU %d: layers %d-%d (%s..%s)", s ? ";" : "", s, cfg->devices[s], a, b - 1,
                m->layers[a].label, m->layers[b - 1].label);
        if (measured) fprintf(stderr, " %.3f ms", partition_stage_cost(cost, m->n_layers, pp->starts, pp->p, s));
    }
    fprintf(stderr, "\n");
}
