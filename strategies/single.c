/* single.c — the one-GPU strategy: one replica, no communication. It is the reference every other strategy
 * is checked against, and the T1 of every speedup. */
#include "strategy.h"
#include "../engine/replica.h"
#include "../engine/trace.h"
#include "../engine/check.h"
#include "../engine/timing.h"
#include <stdio.h>
#include <stdlib.h>

static int single_setup(void **state, const run_cfg_t *cfg, char *err, size_t errlen) {
    if (cfg->n_gpus != strategy_info_single.max_gpus) {    /* options_validate refuses it first; a caller may not */
        snprintf(err, errlen, "strategy single runs on exactly %d GPU (asked for %d)", strategy_info_single.max_gpus,
                 cfg->n_gpus);
        return -1;
    }
    replica_t *r = calloc(1, sizeof *r);
    if (!r) { snprintf(err, errlen, "out of host memory"); return -1; }
    optim_cfg_t oc = run_cfg_optim(cfg);
    if (oc.gns_every > 0 && cfg->global_batch < 2) {   /* two halves of the step's batch */
        snprintf(err, errlen, "the gradient noise scale needs a batch of at least 2 images (has %d)",
                 cfg->global_batch);
        free(r);
        return -1;
    }
    if (replica_init(r, cfg->devices[0], cfg->model, cfg->global_batch, cfg->global_batch, cfg->math,
                     run_cfg_gpu_setup(cfg), cfg->init, cfg->seed, &oc, (float)cfg->momentum,
                     (float)cfg->weight_decay, cfg->data, err, errlen) != 0) {
        replica_free(r);
        free(r);
        return -1;
    }
    if (replica_wgrad_direct() && replica_bind_lp_grads(r, err, errlen) != 0) {
        replica_free(r);
        free(r);
        return -1;
    }
    r->use_graphs = cfg->cuda_graph;
    r->trace = cfg->trace;
    *state = r;
    return 0;
}

static int single_steps(void *state) { return ((replica_t *)state)->steps_per_epoch; }

static void single_epoch_begin(void *state, int epoch) { replica_epoch_begin(state, epoch); }

static void single_train_step(void *state, int step) {
    replica_t *r = state;
    if (r->trace && r->trace->active) replica_step_traced(r, step);   /* forward, backward, update apart */
    else replica_step_graphed(r, step);   /* eager when --cuda-graph off: the same segment, not captured */
}

static void single_epoch_end(void *state, int steps, epoch_stats_t *out) {
    replica_t *r = state;
    out->steps = steps;
    dataset_shuffle_ahead(&r->data);   /* before the wait: the draw overlaps the epoch's last steps */
    replica_epoch_end(r, out->steps, &out->epoch_s, &out->step_ms, &out->train_loss, &out->train_acc);
    out->peak_mem_mb = replica_mem_mb(r);
    replica_loss_scale_read(r, &out->loss_scale, &out->skipped_steps);
    out->lr_now = replica_lr_now(r);
    replica_epoch_gns_halves(r, &out->gns_small_sq, &out->gns_big_sq, &out->gns_b_small, &out->gns_b_big);
    char who[32];
    snprintf(who, sizeof who, "gpu %d", r->gpu.device);
    timing_print_steps(who, r->step_events, steps);
}

static double single_evaluate(void *state) { return replica_evaluate(state); }

static void single_teardown(void *state) {
    replica_free(state);
    free(state);
}

/* SCALING_DUMP_PARAMS: the flat parameter buffer, to compare strategies parameter by parameter. */
static size_t single_params(void *state, float *host, size_t max) {
    const replica_t *r = state;
    if (!host) return r->model.n_params;   /* the size query */
    size_t n = r->model.n_params < max ? r->model.n_params : max;
    CHECK_CUDA(cudaSetDevice(r->gpu.device));
    CHECK_CUDA(cudaStreamSynchronize(r->gpu.stream));
    CHECK_CUDA(cudaMemcpy(host, r->model.params, n * sizeof(float), cudaMemcpyDeviceToHost));
    return r->model.n_params;
}

static int single_steps_done(void *state, int launched, double *ms) {
    return timing_steps_done(((const replica_t *)state)->step_events, launched, ms);
}

const strategy_t strategy_single = {
    .info = &strategy_info_single,
    .setup = single_setup,
    .steps_per_epoch = single_steps,
    .epoch_begin = single_epoch_begin,
    .train_step = single_train_step,
    .epoch_end = single_epoch_end,
    .evaluate = single_evaluate,
    .teardown = single_teardown,
    .params = single_params,
    .steps_done = single_steps_done,
};
